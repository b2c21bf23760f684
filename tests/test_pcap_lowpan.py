"""Packet captures of RPL and on 802.15.4 (emulator.pcap): tshark reads every
transmission (and, under the 802.15.4 MAC, every attempt and ACK) as a frame, down
``wpan:6lowpan:ipv6``; RPL's messages by ICMPv6 code are the run's control log by type,
and the fields tshark dissects are the packets' the run sent. Skipped only where tshark
is not installed (``make test`` installs it)."""
from __future__ import annotations

from collections import Counter

import networkx as nx
import pandas as pd
import pytest

from contract.messages import Message
from emulator import deliver, write_pcap
from emulator.mac.config import mac_from_table
from emulator.pcap.addresses import GLOBAL, LINK_LOCAL, ip6
from emulator.pcap.capture import capturable
from emulator.pcap.rpl_wire import INSTANCE
from emulator.routing.params import resolve
from experiments.spec import resolve as resolve_spec
from tests.test_pcap import SPEC, needs_tshark, routed_run, tshark

CODES = {"DIS": "0", "DIO": "1", "DAO": "2", "DAO-ACK": "3"}


def _rpl_run(mac: str | None):
    """RPL on a 3 x 3 grid (root 0) for 30 s: every node asks for DIOs before the first
    is heard (a DIS each), one target per DAO (so DAOs go in pieces), DAO-ACKs on, and
    six data packets up and down; under ``mac`` (None: the links medium)."""
    params = resolve("rpl", {"rpl": {"dao_ack": True, "dis_delay": 0.001,
                                     "max_dao_bytes": 74}})
    kw = {} if mac is None else {"medium": "shared", "mac": mac_from_table({"model": mac})}
    messages = [Message(i, "data", 8 - i % 3, i % 2 * 4, 10.0 + i, 1.0, 70, None)
                for i in range(6)]
    return routed_run(nx.convert_node_labels_to_integers(nx.grid_2d_graph(3, 3)), "rpl",
                      params, 30.0, messages, **kw)


def _expected(control, sender: int, receiver: int) -> list[str]:
    """The fields :data:`FIELDS` of the frame of ``control`` as tshark should print
    them."""
    p = control.body
    dst = "ff02::1a" if receiver < 0 else ip6(receiver, LINK_LOCAL)
    fields = dict.fromkeys(FIELDS, "")
    fields.update({"icmpv6.code": CODES[control.type], "ipv6.src": ip6(sender, LINK_LOCAL),
                   "ipv6.dst": dst})
    if control.type == "DIO":
        fields.update({INSTANCES: str(INSTANCE), "icmpv6.rpl.dio.version": str(p.version),
                       "icmpv6.rpl.dio.rank": str(p.rank),
                       "icmpv6.rpl.dio.dagid": ip6(0, GLOBAL), "icmpv6.reserved": "00"})
    elif control.type == "DAO":
        fields.update({INSTANCES: str(INSTANCE), SEQUENCES: str(p.sequence),
                       "icmpv6.rpl.dao.flag.k": "1" if p.ack else "0",
                       "icmpv6.rpl.dao.flag.rsv": "32" if p.more else "0",
                       "icmpv6.rpl.opt.target.prefix":
                           ",".join(ip6(t, GLOBAL) for t, _ in p.targets),
                       "icmpv6.rpl.opt.transit.pathseq": str(p.targets[0][1]),
                       "icmpv6.reserved": f"{p.part:02x}"})
    elif control.type == "DAO-ACK":
        fields.update({INSTANCES: str(INSTANCE), SEQUENCES: str(p.sequence),
                       "icmpv6.rpl.daoack.status": "0"})
    else:
        fields.update({"icmpv6.rpl.dis.flags": "0", "icmpv6.reserved": "00"})
    return list(fields.values())


INSTANCES = "icmpv6.rpl.dio.instance,icmpv6.rpl.dao.instance,icmpv6.rpl.daoack.instance"
SEQUENCES = "icmpv6.rpl.dao.sequence,icmpv6.rpl.daoack.sequence"
#: What tshark prints of each RPL frame (a group of fields joined: one of them is set).
FIELDS = ("icmpv6.code", "ipv6.src", "ipv6.dst", INSTANCES, "icmpv6.rpl.dio.version",
          "icmpv6.rpl.dio.rank", "icmpv6.rpl.dio.dagid", SEQUENCES,
          "icmpv6.rpl.dao.flag.k", "icmpv6.rpl.dao.flag.rsv",
          "icmpv6.rpl.opt.target.prefix", "icmpv6.rpl.opt.transit.pathseq",
          "icmpv6.rpl.daoack.status", "icmpv6.rpl.dis.flags", "icmpv6.reserved")


@needs_tshark
@pytest.mark.parametrize("mac, link", [(None, "802.11"), ("802.15.4", "802.15.4")])
def test_rpl_messages_by_code_are_the_control_log_s_with_the_fields_sent(mac, link,
                                                                         tmp_path):
    tr, capture, source = _rpl_run(mac)
    ledger = source.ledger
    out = write_pcap(source, tmp_path / "rpl.pcapng", link=link)
    attempts = (ledger["attempts"] if mac else pd.Series(1, ledger.index)).tolist()
    sent = {msg_id: (u, c) for msg_id, u, c in capture.packets}
    # each control transmission of the ledger, as often as the MAC sent it
    expected = [_expected(sent[m][1], u, v) for m, u, v, k in
                zip(ledger["msg_id"], ledger["hop_u"], ledger["hop_v"], attempts)
                if m in sent for _ in range(k)]
    assert Counter(sent[m][1].type for m in ledger["msg_id"] if m in sent) == \
        tr.control_sent and set(tr.control_sent) == set(CODES)
    frames = [_merge([_field(f) for f in frame]) for frame in
              tshark(out, *_expand(FIELDS), display="icmpv6.type == 155")]
    assert Counter(f[0] for f in frames) == Counter(e[0] for e in expected)
    assert frames == expected
    assert any(f[9] == "32" for f in frames)   # a DAO in pieces: "more" on all but one
    assert {f[0] for f in tshark(out, "icmpv6.checksum.status", display="icmpv6")} == {"1"}


def _expand(fields):
    return [f for group in fields for f in group.split(",")]


def _field(value: str) -> str:
    return {"True": "1", "False": "0"}.get(value, value)


def _merge(frame: list[str]) -> list[str]:
    """One column per :data:`FIELDS` entry: a group's fields joined (one is set)."""
    merged, at = [], 0
    for group in FIELDS:
        n = group.count(",") + 1
        merged.append("".join(frame[at:at + n]))
        at += n
    return merged


def _grid_messages(n: int = 30):
    """A 4 x 4 grid (10 ms links) and ``n`` messages of 70 bytes to node 0 and back."""
    g = nx.convert_node_labels_to_integers(nx.grid_2d_graph(4, 4))
    for e in g.edges:
        g.edges[e].update(cost=1.0, delay=0.01, bandwidth=1e5)
    msgs = pd.DataFrame({"msg_id": range(n), "src": [15 - i % 5 if i % 2 else 0
                                                     for i in range(n)],
                         "dst": [0 if i % 2 else 15 - i % 5 for i in range(n)],
                         "sent_at": [8.0 + 0.1 * i for i in range(n)], "size_bytes": 70,
                         "key": [i % 4 for i in range(n)]})
    return g, msgs


@needs_tshark
@pytest.mark.parametrize("routing", ["oracle", "rpl", "babel"])
def test_an_802154_capture_has_every_attempt_and_ack_down_to_ipv6(routing, tmp_path):
    """Under the 802.15.4 MAC, one frame per attempt and an ACK per unicast arrival,
    each data frame wpan:6lowpan:ipv6:udp with its FCS right, its IPv6 packet as long
    as the ledger's hop and addressed end to end, its payload its message id and key."""
    g, msgs = _grid_messages()
    out = deliver(g, msgs, routing=routing, medium="shared", mac={"model": "802.15.4"},
                  capture=True, seed=1, warmup=8.0 if routing == "babel" else 0.0)
    ledger = out.attrs["ledger"]
    path = write_pcap(out, tmp_path / "lowpan.pcapng", link="802.15.4")
    frames = tshark(path, "frame.protocols", "wpan.frame_type", "wpan.fcs_ok",
                    "wpan.src16", "wpan.dst16", "ipv6.plen", "ipv6.src", "ipv6.dst",
                    "data.data")
    acks = int(((~ledger["lost"]) & (ledger["hop_v"] >= 0)).sum())
    assert len(frames) == int(ledger["attempts"].sum()) + acks
    assert {f[2] for f in frames} == {"1"}                        # every FCS right
    assert sum(f[1] == "0x0002" for f in frames) == acks > 0
    sent = [f for f in frames if f[1] != "0x0002"]
    assert all(f[0].startswith("wpan:6lowpan:ipv6:") for f in sent)
    assert not [f for f in frames if "malformed" in f[0]]
    if routing != "oracle":
        assert sum(f[0].endswith(("icmpv6", "babel")) for f in sent) == int(
            ledger.loc[ledger["kind"] == "routing", "attempts"].sum())
    data = ledger[ledger["kind"] != "routing"]
    frames = [f for f in sent if f[0].endswith("udp:data")]
    hops = data.loc[data.index.repeat(data["attempts"])]
    assert [int(f[5]) + 40 for f in frames] == hops["size_bytes"].tolist()
    assert [(f[6], f[7]) for f in frames] == [(ip6(s, GLOBAL), ip6(d, GLOBAL))
                                              for s, d in zip(hops["src"], hops["dst"])]
    assert [(int(f[3], 16), int(f[4], 16)) for f in frames] == [
        (u + 1, v + 1) for u, v in zip(hops["hop_u"], hops["hop_v"])]
    payloads = [bytes.fromhex(f[8]) for f in frames]
    assert [int.from_bytes(p[:8], "big") for p in payloads] == hops["msg_id"].tolist()
    keys = dict(zip(msgs["msg_id"], msgs["key"]))
    assert [int.from_bytes(p[8:16], "big") for p in payloads] == \
        [keys[m] for m in hops["msg_id"]]


def test_ipv4_routings_and_nodes_without_short_addresses_are_refused_in_one_line(
        tmp_path):
    g, msgs = _grid_messages(4)
    out = deliver(g, msgs, routing="aodv", capture=True, seed=1)
    with pytest.raises(ValueError, match=r"^link: 802.15.4 frames carry IPv6 \(6LoWPAN\) "
                                         r"and aodv's packets hold IPv4 addresses: write "
                                         r"this run with link='802.11'$"):
        write_pcap(out, tmp_path / "a.pcapng", link="802.15.4")
    big = nx.relabel_nodes(g, {15: 70000})
    msgs = msgs.replace({15: 70000})
    out = deliver(big, msgs, capture=True, seed=1)
    with pytest.raises(ValueError, match=r"^link: 802.15.4 short addresses number nodes "
                                         r"0 .. 65532, the run has node 70000$"):
        write_pcap(out, tmp_path / "b.pcapng", link="802.15.4")
    assert write_pcap(out, tmp_path / "b.pcapng").exists()        # 802.11 numbers it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.pcapng"]
    assert capturable("rpl") is None and capturable("dsr").startswith(
        "dsr's packets have no wire format here yet (captured: oracle, aodv, olsr, "
        "babel, rpl)")


@needs_tshark
def test_a_stored_rpl_run_under_the_802154_mac_is_written_with_its_radio_s_headers(
        tmp_path, capsys):
    from experiments.runner import run
    from testbed.cli import main

    spec = {**SPEC, "network": {"routing": "rpl", "medium": "shared"},
            "mac": {"model": "802.15.4"}, "mobility": {"model": "none"}}
    kept = run(resolve_spec(spec), out=tmp_path / "runs")
    out = tmp_path / "run.pcapng"
    assert main(["pcap", str(kept.path), "-o", str(out)]) == 0
    frames = tshark(out, "frame.protocols", "icmpv6.code")
    ledger = kept.ledger
    acks = int(((~ledger["lost"]) & (ledger["hop_v"] >= 0)).sum())
    assert len(frames) == int(ledger["attempts"].sum()) + acks
    rpl = kept.capture[kept.capture["port"] == 0]
    types = dict(zip(rpl["msg_id"], rpl["type"]))
    control = ledger[(ledger["kind"] == "routing") & ledger["msg_id"].isin(types)]
    sent = kept.meta["backend_info"]["network"]["control_sent"]
    assert Counter(types[m] for m in control["msg_id"]) == Counter(sent)
    # by ICMPv6 code, each transmission as often as the MAC sent it
    by_code = Counter()
    for msg_id, attempts in zip(control["msg_id"], control["attempts"]):
        by_code[CODES[types[msg_id]]] += int(attempts)
    said = Counter(f[1] for f in frames if f[1])
    assert said == by_code and said[CODES["DIO"]] > 0 and said[CODES["DAO"]] > 0
    with pytest.warns(UserWarning, match=r"the run's MAC is 802.15.4, its frames are "
                                         r"written with 802.11 link headers$"):
        assert main(["pcap", str(kept.path), "-o", str(out), "--link", "802.11"]) == 0
    assert "ipv6:icmpv6" in tshark(out, "frame.protocols")[0][0]
