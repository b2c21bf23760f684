"""Packet captures (emulator.pcap, ``testbed pcap``): a run kept with ``[run] capture``
is the run without it; Wireshark's tshark reads every transmission as one frame, counts
AODV's and OLSR's packets by type as the run's control log does, and dissects the
fields the run's packet objects held. Skipped only where tshark is not installed
(``make test`` installs it)."""
from __future__ import annotations

import shutil
import subprocess
from collections import Counter
from types import SimpleNamespace

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from emulator import deliver, write_pcap
from emulator.ledger import Ledger
from emulator.network import Network
from emulator.pcap.addresses import ip
from emulator.pcap.capture import Capture, capturable
from emulator.routing.host import RoutedTransport
from emulator.routing.params import resolve
from contract.messages import Message
from experiments.runner import run
from experiments.spec import resolve as resolve_spec
from experiments.spec import run_id
from testbed.cli import main

TSHARK = shutil.which("tshark")
needs_tshark = pytest.mark.skipif(TSHARK is None, reason="tshark is not installed "
                                  "(apt-get install tshark; make test installs it)")

SPEC = {"run": {"name": "capture", "duration": 4.0, "step": 0.02, "seed": 2,
                "capture": True},
        "topology": {"generator": "random_geometric", "nodes": 12, "radius": 0.45,
                     "delay": 0.02},
        "mobility": {"model": "random_waypoint", "speed": [0.05, 0.1],
                     "resolution": 0.25},
        "network": {"routing": "aodv"},
        "streams": {"count": 2, "rate": 4.0, "key_domain": 5},
        "query": {"node": 0, "window": 1.0}}
WITHOUT = {**SPEC, "run": {k: v for k, v in SPEC["run"].items() if k != "capture"}}


def tshark(path, *fields, display=None) -> list[list[str]]:
    """The frames of ``path`` as tshark dissects them: one list of ``fields`` each."""
    args = [TSHARK, "-r", str(path), "-T", "fields", "-E", "occurrence=a",
            "-E", "aggregator=,"]
    for field in fields:
        args += ["-e", field]
    if display:
        args += ["-Y", display]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return [line.split("\t") for line in out.splitlines()]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    return run(SPEC, out=out), run(WITHOUT, out=out)


def test_a_capture_changes_neither_the_run_nor_the_ids_of_runs_without_one(runs):
    kept, plain = runs
    pd.testing.assert_frame_equal(kept.ledger, plain.ledger)
    pd.testing.assert_frame_equal(kept.results, plain.results)
    assert plain.capture is None and len(kept.capture) > 0
    spec = resolve_spec(WITHOUT)
    off = {**spec, "run": {**spec["run"], "capture": False}}
    on = {**spec, "run": {**spec["run"], "capture": True}}
    assert run_id(off) == run_id({**spec, "run": {k: v for k, v in spec["run"].items()
                                                  if k != "capture"}})
    assert run_id(on) != run_id(off)


@needs_tshark
def test_tshark_reads_every_hop_of_a_stored_run_as_one_frame(runs, tmp_path, capsys):
    kept, _ = runs
    out = tmp_path / "run.pcapng"
    assert main(["pcap", str(kept.path), "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    ledger = kept.ledger
    frames = tshark(out, "frame.number", "ip.len", "wlan.sa", "udp.dstport")
    assert len(frames) == len(ledger)
    # every IPv4 packet as long as the ledger's hop, in the ledger's order
    assert [int(f[1]) for f in frames] == ledger["size_bytes"].tolist()
    assert ({f[3] for f in frames}, Counter(f[3] for f in frames)["654"]) == (
        {"654", "49000"}, int((ledger["kind"] == "routing").sum()))
    senders = [int(f[2].replace(":", ""), 16) - 0x020000000000 - 1 for f in frames]
    assert senders == ledger["hop_u"].tolist()


@needs_tshark
def test_aodv_packets_by_type_are_the_control_log_s(runs, tmp_path):
    kept, _ = runs
    out = write_pcap(kept, tmp_path / "run.pcapng")
    said = Counter()
    for kind, dst in tshark(out, "aodv.type", "ip.dst", display="aodv"):
        name = {"1": "RREQ", "3": "RERR", "4": "RREP_ACK"}.get(kind)
        said[name or ("HELLO" if dst == "255.255.255.255" else "RREP")] += 1
    sent = kept.meta["backend_info"]["network"]["control_sent"]
    assert said == Counter(sent) and said["RREQ"] > 0 and said["HELLO"] > 0


@needs_tshark
def test_data_frames_carry_their_message_id_and_the_tuple_s_key(runs, tmp_path):
    kept, _ = runs
    out = write_pcap(kept, tmp_path / "run.pcapng")
    payloads = [bytes.fromhex(f[0]) for f in tshark(out, "data.data",
                                                    display="udp.port == 49000")]
    data = kept.ledger[kept.ledger["kind"] != "routing"]
    assert [int.from_bytes(p[:8], "big", signed=True) for p in payloads] == \
        data["msg_id"].tolist()
    keys = [int.from_bytes(p[8:16], "big", signed=True) for p in payloads]
    assert set(keys) <= set(range(5)) and len(set(keys)) > 1   # key_domain 5


def _line_run(routing: str):
    """Four nodes in a line (the host's example), two messages 0 -> 3, a capture."""
    return routed_run(nx.path_graph(4), routing, resolve(routing), 12.0,
                      [Message(0, "data", 0, 3, 6.0, 1.0, 50, None),
                       Message(1, "data", 0, 3, 7.0, 1.0, 50, None)])


def routed_run(g, routing: str, params: dict, horizon: float, messages, **options):
    """``messages`` routed by ``routing`` over graph ``g`` (links of 10 ms) with a
    capture: ``(transport, capture, source for write_pcap)``; ``options`` go to the
    transport (a medium, a MAC)."""
    for e in g.edges:
        g.edges[e].update(cost=1.0, delay=0.01)

    class OneEpoch:
        epochs = [0.0]

        def snapshot(self, t):
            return g

    capture, ledger = Capture(routing, params, 1.0), Ledger()
    tr = RoutedTransport(Network(OneEpoch()), ledger, seed=1, routing=routing,
                         routing_params=params, horizon=horizon, capture=capture,
                         **options)
    for message in messages:
        tr.send(message)
    tr.advance()
    return tr, capture, SimpleNamespace(ledger=ledger.frame(), capture=capture.frame())


@needs_tshark
def test_tshark_dissects_the_aodv_fields_the_run_sent(tmp_path):
    tr, capture, source = _line_run("aodv")
    out = write_pcap(source, tmp_path / "aodv.pcapng")
    fields = ("aodv.type", "aodv.orig_ip", "aodv.dest_ip", "aodv.dest_seqno",
              "aodv.hopcount", "aodv.orig_seqno", "aodv.rreq_id", "aodv.lifetime", "ip.ttl")
    frames = tshark(out, *fields, display="aodv")
    sent = [c for _, _, c in capture.packets]
    assert len(frames) == len(sent) and Counter(c.type for c in sent) == tr.control_sent
    for frame, control in zip(frames, sent):
        p = control.body
        if control.type == "RREQ":
            assert frame == ["1", ip(p.orig), ip(p.dst), str(p.dst_seq or 0),
                             str(p.hops), str(p.orig_seq), str(p.rreq_id), "", str(p.ttl)]
        else:
            assert frame == ["2", ip(p.orig), ip(p.dst), str(p.dst_seq), str(p.hops), "",
                             "", str(round(p.lifetime * 1000)), "1"]
    assert {c.type for c in sent} == {"HELLO", "RREQ", "RREP"}
    # the expanding ring search: TTL 1, then 3 (the host's example)
    assert [c.body.ttl for c in sent if c.type == "RREQ"][:2] == [1, 3]


@needs_tshark
def test_tshark_dissects_the_olsr_messages_the_run_sent(tmp_path):
    tr, capture, source = _line_run("olsr")
    out = write_pcap(source, tmp_path / "olsr.pcapng")
    frames = tshark(out, "olsr.message_type", "olsr.origin_addr", "olsr.ansn",
                    "olsr.neighbor_addr", display="olsr")
    assert len(frames) == len(capture.packets)
    said = Counter(t for f in frames for t in f[0].split(","))
    assert said == Counter({"1": tr.control_messages["HELLO"],
                            "2": tr.control_messages["TC"]}) and said["2"] > 0
    tcs = [m for _, _, c in capture.packets for kind, m in c.body.messages if kind == "TC"]
    dissected = [(f[1].split(",")[i], f[2]) for f in frames
                 for i, t in enumerate(f[0].split(",")) if t == "2"]
    assert dissected == [(ip(tc.orig), str(tc.ansn)) for tc in tcs]
    # a packet's neighbours, message by message: a HELLO's by link code (MPRs, other
    # symmetric ones, heard ones), a TC's selectors
    listed = [",".join(ip(v) for kind, m in c.body.messages for v in (
        m.selectors if kind == "TC" else
        (*m.mprs, *(s for s in m.sym if s not in m.mprs), *m.asym)))
        for _, _, c in capture.packets]
    assert [f[3] for f in frames] == listed and any(listed)


@needs_tshark
@pytest.mark.parametrize("routing", ["olsr", "babel"])
def test_deliver_with_a_capture_is_the_same_run_and_every_frame_dissects(routing,
                                                                         tmp_path):
    g = nx.random_geometric_graph(16, 0.4, seed=3)
    for e in g.edges:
        g.edges[e].update(cost=1.0, delay=0.01, bandwidth=1e5)
    rng = np.random.default_rng(1)
    msgs = pd.DataFrame({"msg_id": range(40), "src": rng.integers(0, 16, 40),
                         "dst": rng.integers(0, 16, 40),
                         "sent_at": np.sort(rng.uniform(0, 6, 40)), "size_bytes": 100})
    msgs = msgs[msgs["src"] != msgs["dst"]]
    plain = deliver(g, msgs, routing=routing, seed=2, warmup=5.0)
    kept = deliver(g, msgs, routing=routing, seed=2, warmup=5.0, capture=True)
    pd.testing.assert_frame_equal(plain, kept)
    assert plain.attrs["routing"] == kept.attrs["routing"]
    out = write_pcap(kept, tmp_path / "run.pcapng")
    frames = tshark(out, "frame.protocols", "frame.time_epoch")
    assert len(frames) == len(kept.attrs["ledger"])
    assert not [f for f in frames if "malformed" in f[0]]
    assert sum(routing in f[0] for f in frames) == \
        int((kept.attrs["ledger"]["kind"] == "routing").sum())
    # the warm-up's negative times moved by it, in order
    times = np.array([float(f[1]) for f in frames])
    assert times.min() >= 0 and (np.diff(times) >= 0).all()


@pytest.mark.parametrize("args, said", [
    (["pcap", "{missing}", "-o", "{tmp}/a.pcapng"], "not a complete run folder"),
    (["pcap", "{run}", "-o", "{tmp}/a.pcapng", "--link", "token-ring"],
     "--link: expected one of 802.11, 802.15.4, got 'token-ring'"),
    (["pcap", "{run}", "-o", "{tmp}/a.pcapng", "--link", "802.15.4"],
     "--link: 802.15.4 frames carry IPv6 (6LoWPAN) and aodv's packets hold IPv4 "
     "addresses: write the run with --link 802.11"),
    (["pcap", "{plain}", "-o", "{tmp}/a.pcapng"],
     "capture: the aodv run kept no capture table"),
    (["pcap", "{noledger}", "-o", "{tmp}/a.pcapng"], "ledger: the run kept no ledger"),
])
def test_bad_input_is_one_line(runs, tmp_path, capsys, args, said):
    kept, plain = runs
    noledger = tmp_path / kept.path.name
    shutil.copytree(kept.path, noledger)
    (noledger / "ledger.parquet").unlink()
    argv = [a.format(missing=tmp_path / "nothing", tmp=tmp_path, run=kept.path,
                     plain=plain.path, noledger=noledger) for a in args]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and said in err and err.count("\n") == 1, err


@needs_tshark
def test_a_run_of_the_oracle_needs_no_capture_and_its_keys_are_then_unknown(tmp_path):
    g = nx.path_graph(3)
    for e in g.edges:
        g.edges[e].update(cost=1.0, delay=0.1, bandwidth=1e3)
    msgs = pd.DataFrame({"msg_id": [0, 1], "src": [0, 2], "dst": [2, 0],
                         "sent_at": [0.0, 0.5], "size_bytes": [60, 80], "key": [7, 9]})
    out = deliver(g, msgs, capture=True)
    stored = SimpleNamespace(ledger=out.attrs["ledger"], capture=None)
    for source, keys in ((out, [7, 7, 9, 9]), (stored, [-1] * 4)):
        path = write_pcap(source, tmp_path / "oracle.pcapng")
        frames = tshark(path, "ip.src", "ip.dst", "ip.ttl", "ip.len", "data.data")
        assert [f[:4] for f in frames] == [
            ["10.0.0.1", "10.0.0.3", "64", "60"], ["10.0.0.1", "10.0.0.3", "63", "60"],
            ["10.0.0.3", "10.0.0.1", "64", "80"], ["10.0.0.3", "10.0.0.1", "63", "80"]]
        assert [int(f[4][16:32], 16) if f[4][16] != "f" else -1 for f in frames] == keys


def test_a_capture_is_refused_on_the_mininet_backend_in_one_line():
    from experiments.spec import SpecError

    with pytest.raises(SpecError, match=r"^<spec>: run.capture: true runs on the simpy "
                                        r"backend only, got run.backend = 'mininet'"):
        resolve_spec({"run": {"capture": True, "backend": "mininet"}})


@needs_tshark
def test_under_a_mac_every_attempt_is_a_frame_and_every_arrival_acknowledged(tmp_path):
    """With the 802.11 MAC, a hop sent k times is k frames (the later with the Retry
    flag) and each unicast hop that arrived is followed by its receiver's ACK."""
    g = nx.star_graph(8)
    for e in g.edges:
        g.edges[e].update(cost=1.0, delay=0.001, bandwidth=125000.0)
    n = 1200
    msgs = pd.DataFrame({"msg_id": range(n), "src": [1 + i % 8 for i in range(n)],
                         "dst": 0, "sent_at": np.linspace(0.0, 0.3, n),
                         "size_bytes": 800})
    out = deliver(g, msgs, medium="shared", mac={"model": "802.11"}, capture=True, seed=1)
    ledger = out.attrs["ledger"]
    attempts = ledger["attempts"].to_numpy()
    assert attempts.max() > 1                      # the load made the MAC retry
    acks = int(((~ledger["lost"]) & (ledger["hop_v"] >= 0)).sum())
    path = write_pcap(out, tmp_path / "mac.pcapng")
    frames = tshark(path, "wlan.fc.type_subtype", "wlan.fc.retry", "wlan.ra", "wlan.ta")
    assert len(frames) == int(attempts.sum()) + acks
    subtypes = Counter(f[0] for f in frames)
    assert subtypes["0x001d"] == acks               # ACK
    assert sum(f[1] in ("1", "True") for f in frames) == int((attempts - 1).sum())


def test_every_routing_can_be_captured_now_rpl_too():
    from emulator.routing import ROUTINGS

    resolve_spec({**SPEC, "network": {"routing": "rpl"}})   # accepted
    assert [r for r in ROUTINGS if capturable(r) is not None] == []


@needs_tshark
def test_an_aodv_run_under_the_802154_mac_is_written_on_80211_with_a_warning(tmp_path):
    spec = {**SPEC, "network": {"routing": "aodv", "medium": "shared"},
            "mac": {"model": "802.15.4"}}
    folder = run(spec, out=tmp_path / "runs").path
    with pytest.warns(UserWarning, match=r"the run's MAC is 802.15.4, its frames are "
                                         r"written with 802.11 link headers \(aodv's "
                                         r"packets hold IPv4 addresses"):
        from analysis.pcap import pcap
        path = pcap(folder, tmp_path / "r.pcapng")
    assert len(tshark(path, "frame.number")) > 0
