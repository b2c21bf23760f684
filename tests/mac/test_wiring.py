"""The MAC under the shared medium: deliver(mac=...), the [mac] spec table, the routed host."""
import math

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from emulator import deliver
from experiments.inert import inert_settings
from experiments.spec import SpecError, expand, for_run, resolve, run_id
from topologies.schema import FieldError

#: A queue that never drops (saturation: every node always has a frame to send).
SATURATED = {"queue_limit": 100_000, "lifetime": 1e6}


def _star(n, bandwidth=1e6):
    """Hub 0 and ``n`` leaves, every leaf within range of every other."""
    g = nx.star_graph(n)
    for e in g.edges:
        g.edges[e].update(cost=1.0, delay=1e-6, bandwidth=bandwidth)
    return g


def _to_hub(n, per_node, size=1500):
    """Every leaf sends ``per_node`` messages to the hub at t = 0."""
    rows = [(i * per_node + k, i, 0) for i in range(1, n + 1) for k in range(per_node)]
    ids, src, dst = zip(*rows)
    return pd.DataFrame({"msg_id": ids, "src": src, "dst": dst, "sent_at": 0.0,
                         "size_bytes": size})


def _line(n, bandwidth):
    """A path of ``n`` nodes one apart (positions on the x axis), links of radius 1."""
    g = nx.path_graph(n)
    for e in g.edges:
        g.edges[e].update(cost=1.0, delay=1e-6, bandwidth=bandwidth)
    for u in g.nodes:
        g.nodes[u]["pos"] = (float(u), 0.0)
    return g


def _delivered_by(out, t):
    return int((out["arrived_at"] <= t).sum())


def test_ideal_is_todays_rule_bit_for_bit():
    g = _star(4)
    msgs = _to_hub(4, 5)
    today = deliver(g, msgs, medium="shared")
    pd.testing.assert_frame_equal(deliver(g, msgs, medium="shared", mac={"model": "ideal"}),
                                  today)
    assert "mac" not in today.attrs


def test_an_ideal_mac_table_leaves_the_run_id_alone():
    raw = {"run": {"name": "m"}, "network": {"medium": "shared"}}
    plain = run_id(for_run(resolve(raw)))
    assert run_id(for_run(resolve({**raw, "mac": {"model": "ideal"}}))) == plain
    assert run_id(for_run(resolve({**raw, "mac": {"model": "802.11"}}))) != plain
    # under ideal, the keys of the standards do nothing (and a sweep keeps them for
    # its other points)
    idle = resolve({**raw, "mac": {"model": "ideal", "cw_min": 15}})
    assert [(f.table, f.keys) for f in inert_settings(idle)] == [("mac", ("cw_min",))]
    radius = resolve({"network": {"medium": "shared", "interference_radius": 0.3,
                                  "reorder": True}, "mac": {"model": "802.11"}})
    assert [(f.table, f.keys) for f in inert_settings(radius)] == [
        ("network", ("interference_radius", "reorder"))]
    assert run_id(for_run(idle)) == plain
    sweep = resolve({**raw, "mac": {"model": "ideal", "cw_min": 15},
                     "sweep": {"grid": {"mac.model": ["ideal", "802.11"]}}})
    points = [(point["mac.model"], s.get("mac"), run_id(s)) for s, point in expand(sweep)]
    assert points[0][2] == plain
    assert points[1][1] == {"model": "802.11", "cw_min": 15} and points[1][2] != plain


def test_802_11_throughput_falls_with_contenders_where_ideal_stays_flat():
    """Saturated leaves of a star, 1,500 B to the hub: frames delivered in 0.5 s."""
    mac = {"model": "802.11", **SATURATED}
    got, ideal = {}, {}
    for n in (2, 20):
        msgs = _to_hub(n, 600 // n + 10)
        got[n] = _delivered_by(deliver(_star(n), msgs, medium="shared", mac=mac, seed=1),
                               0.5)
        ideal[n] = _delivered_by(deliver(_star(n), msgs, medium="shared", seed=1), 0.5)
    # 1,500 B at 1e6 B/s: 1.5 ms a frame, whoever sends it
    assert ideal[2] == ideal[20] == 333
    # 802.11b at 11 Mbit/s: Bianchi's 6.7 Mbit/s at 2 stations, ~5.6 at 20 (279, 233)
    assert 265 <= got[2] <= 290, got
    assert got[20] < 0.9 * got[2], got


def _hidden(cs_radius, seed=2, **options):
    """0 -> 1 <- 2 on a line one apart (links of radius 1), both saturated."""
    g = _line(3, 1e6)
    rows = [(k, 0 if k % 2 == 0 else 2, 1) for k in range(600)]
    ids, src, dst = zip(*rows)
    msgs = pd.DataFrame({"msg_id": ids, "src": src, "dst": dst, "sent_at": 0.0,
                         "size_bytes": 1500})
    return deliver(g, msgs, medium="shared", seed=seed, **options,
                   mac={"model": "802.11", "carrier_sense_radius": cs_radius, **SATURATED})


def test_hidden_terminals_collide_and_hit_the_retry_limit():
    hidden, sensed = _hidden(1.5), _hidden(2.5)
    assert sensed.attrs["mac"]["mac_drops_by_reason"]["retry_limit"] == 0
    assert (sensed["loss_reason"] == "retry_limit").sum() == 0
    lost = int((hidden["loss_reason"] == "retry_limit").sum())
    assert lost == hidden.attrs["mac"]["mac_drops_by_reason"]["retry_limit"] > 20
    assert hidden.attrs["mac"]["mac_collisions"] > 5 * sensed.attrs["mac"]["mac_collisions"]
    assert _delivered_by(hidden, 0.5) < 0.7 * _delivered_by(sensed, 0.5)


def test_energy_is_charged_per_attempt():
    """Every attempt costs the sender a frame's transmission; only receptions cost the
    receiver (first-order model: 50 nJ/bit each way plus the amplifier over 1 unit)."""
    one = deliver(_line(2, 1e6), pd.DataFrame({"msg_id": [0], "src": [0], "dst": [1],
                                                "sent_at": [0.0], "size_bytes": [1500]}),
                  medium="shared", energy={"model": "first_order"}, mac={"model": "802.11"})
    per_attempt = one.attrs["energy"]["by_kind_j"]["tx"]
    out = _hidden(1.5, energy={"model": "first_order"})
    attempts = 600 + out.attrs["mac"]["mac_retries"]
    assert out.attrs["mac"]["mac_retries"] > 100
    assert math.isclose(out.attrs["energy"]["by_kind_j"]["tx"], attempts * per_attempt,
                        rel_tol=1e-9)
    assert math.isclose(out.attrs["energy"]["by_kind_j"]["rx"],
                        (~out["lost"]).sum() * one.attrs["energy"]["by_kind_j"]["rx"],
                        rel_tol=1e-9)


def _line_with_aodv(mac, seed=1):
    """AODV on a line of 5 (hidden terminals two apart), flows both ways."""
    g = _line(5, 1e7)
    rows = [(2 * k + d, 0 if d == 0 else 4, 4 if d == 0 else 0, 0.004 * k)
            for k in range(500) for d in (0, 1)]
    ids, src, dst, at = zip(*rows)
    msgs = pd.DataFrame({"msg_id": ids, "src": src, "dst": dst, "sent_at": at,
                         "size_bytes": 1000})
    return deliver(g, msgs, medium="shared", routing="aodv", seed=seed, mac=mac)


def test_retry_limit_losses_break_aodv_routes():
    ideal = _line_with_aodv(None)
    wifi = _line_with_aodv({"model": "802.11", "carrier_sense_radius": 1.5})
    assert ideal.attrs["routing"]["control_sent"].get("RERR", 0) == 0
    assert wifi.attrs["mac"]["mac_drops_by_reason"]["retry_limit"] > 0
    assert wifi.attrs["routing"]["control_sent"].get("RERR", 0) > 0
    assert (ideal["loss_reason"] == "retry_limit").sum() == 0


def test_same_seed_same_fates():
    a, b = _hidden(1.5, seed=4), _hidden(1.5, seed=4)
    pd.testing.assert_frame_equal(a, b)
    assert a.attrs["mac"] == b.attrs["mac"]
    c = _hidden(1.5, seed=5)
    assert not a["arrived_at"].equals(c["arrived_at"])


def test_a_frame_longer_than_802_15_4_carries_is_lost_as_frame_too_long():
    msgs = pd.DataFrame({"msg_id": [0, 1], "src": [1, 1], "dst": [0, 0],
                         "sent_at": [0.0, 0.0], "size_bytes": [100, 200]})
    out = deliver(_star(2), msgs, medium="shared",
                  mac={"model": "802.15.4", "fragmentation": False})
    assert out["loss_reason"].tolist() == ["", "frame_too_long"]
    # 11 + 100 bytes + SHR/PHR at 250 kbit/s, after a backoff of at most 7 units + CCA
    assert 0.0037 < out["arrived_at"][0] < 0.0037 + 7 * 320e-6 + 128e-6 + 192e-6 + 1e-5


@pytest.mark.parametrize("mac, message", [
    ({"model": "802.11x"}, "mac.model: expected one of"),
    ({"model": "802.11", "min_be": 2}, 'mac.min_be: a key of model "802.15.4"'),
    ({"model": "802.11", "cw_min": 64, "cw_max": 31}, "mac.cw_min: expected cw_min <= cw_max"),
    ({"model": "802.11", "retry_limit": -1}, "mac.retry_limit: expected an integer >= 0"),
    ({"model": "802.15.4", "lifetime": -0.5}, "mac.lifetime: expected a number >= 0"),
    ({"model": "802.11", "bogus": 1}, "mac.bogus: unknown key"),
    ({"model": "ideal", "cw_min": 3}, 'mac.cw_min: a key of model "802.11", not of "ideal"'),
])
def test_bad_mac_tables_are_one_line_errors(mac, message):
    msgs = _to_hub(2, 1)
    with pytest.raises(FieldError) as err:
        deliver(_star(2), msgs, medium="shared", mac=mac)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_a_mac_needs_the_shared_medium():
    with pytest.raises(FieldError, match='^medium: mac.model = "802.11" needs medium = '
                                         '"shared", got "links"$'):
        deliver(_star(2), _to_hub(2, 1), mac={"model": "802.11"})
    with pytest.raises(SpecError, match=r'^s.toml: mac.model: "802.11" needs network.medium'):
        resolve({"mac": {"model": "802.11"}}, "s.toml")
    with pytest.raises(SpecError, match=r'^s.toml: mac.model: "802.11" runs on the simpy '
                                        r"backend only \(run.backend = 'mininet'"):
        resolve({"run": {"backend": "mininet"}, "network": {"medium": "shared"},
                 "mac": {"model": "802.11"}}, "s.toml")
    with pytest.raises(SpecError, match=r"^s.toml: mac.cw_max: expected an integer >= 0"):
        resolve({"network": {"medium": "shared"}, "mac": {"model": "802.11", "cw_max": -3}},
                "s.toml")


def test_a_mac_of_the_other_standard_and_too_long_packets_are_warned_of():
    from experiments.spec import spec_warnings

    spec = resolve({"network": {"medium": "shared"},
                    "mac": {"model": "802.15.4", "fragmentation": False},
                    "radio": {"model": "log_distance"}, "run": {"bytes_per_unit": 100}})
    found = dict(spec_warnings(spec))
    assert found["mac.model"].startswith('"802.15.4" under radio.modulation = "dsss_1mbps"')
    assert found["run.bytes_per_unit"].startswith("a data packet of 124 bytes")
    fragmented = resolve({"network": {"medium": "shared"}, "mac": {"model": "802.15.4"},
                          "run": {"bytes_per_unit": 100}})
    assert "run.bytes_per_unit" not in dict(spec_warnings(fragmented))
    above_mtu = resolve({"network": {"medium": "shared"}, "mac": {"model": "802.15.4"},
                         "run": {"bytes_per_unit": 1300}})
    assert dict(spec_warnings(above_mtu))["run.bytes_per_unit"].startswith(
        "a data packet of 1324 bytes (with run.header_bytes) is longer than 6LoWPAN")
    # the radio's links reach 195 m at 1 Mbit/s DBPSK, the MAC decodes to 51 m (-82 dBm)
    assert found["mac.detect_dbm"].startswith("the radio links nodes up to 195 m, the MAC "
                                              "decodes a frame up to 51 m")
    small = resolve({"network": {"medium": "shared"}, "mac": {"model": "802.15.4"},
                     "radio": {"model": "log_distance", "modulation": "oqpsk_250kbps",
                               "sensitivity_dbm": -82.0},
                     "run": {"bytes_per_unit": 60, "header_bytes": 28}})
    assert spec_warnings(small) == []


def test_queue_max_wait_sets_the_mac_queue_lifetime():
    """Saturated hub: frames older than queue_max_wait are dropped as queue_expired."""
    msgs = _to_hub(4, 200)
    short = deliver(_star(4), msgs, medium="shared", mac={"model": "802.11"},
                    queue_max_wait=0.05)
    expired = int((short["loss_reason"] == "queue_expired").sum())
    assert expired > 500
    # 0.05 s of backlog at ~1.9 ms a frame: about 26 frames get through
    assert 15 <= (~short["lost"]).sum() <= 40
    own = deliver(_star(4), msgs, medium="shared", queue_max_wait=0.05,
                  mac={"model": "802.11", **SATURATED})
    assert (own["loss_reason"] == "queue_expired").sum() == 0
    assert math.isclose(own["arrived_at"].max(), 800 * 0.0019, rel_tol=0.1)


def _manet(routing, mac):
    """manet_routing.toml cut to 6 s of still nodes at 16 packets/s per source."""
    import tomllib
    from pathlib import Path

    spec = Path(__file__).resolve().parents[2] / "experiments" / "specs" / "manet_routing.toml"
    raw = tomllib.loads(spec.read_text())
    raw.pop("sweep")
    raw["run"].update(duration=6.0, warmup=1.0, drain=1.0)
    raw["mobility"]["speed"] = [1e-9, 1e-9]
    raw["network"]["routing"] = routing
    raw["streams"]["rate"] = 16.0
    if mac is not None:
        raw["mac"] = mac
    return for_run(resolve(raw))


def test_a_spec_run_reports_the_mac_in_its_summary_and_metrics(tmp_path):
    import json

    from experiments.runner import run_spec

    folder = run_spec(_manet("aodv", {"model": "802.11", "data_rate": 1e6}), tmp_path)
    summary = json.loads((folder / "summary.json").read_text())
    metrics = pd.read_parquet(folder / "metrics.parquet")
    per_node = metrics[metrics["metric"].isin(["mac_retries", "mac_collisions",
                                               "channel_busy_fraction"])]
    assert len(per_node) == 3 * 30                 # every node, each figure once
    retries = per_node[per_node["metric"] == "mac_retries"]["value"].sum()
    assert summary["mac_retries"] == retries > 0
    busy = per_node[per_node["metric"] == "channel_busy_fraction"]["value"]
    assert math.isclose(summary["channel_busy_fraction"], busy.mean(), rel_tol=1e-9)
    assert 0 < summary["channel_busy_fraction"] < 1
    drops = json.loads(summary["mac_drops_by_reason"])
    assert set(drops) >= {"retry_limit", "queue_full", "queue_expired", "collision"}
    ledger = pd.read_parquet(folder / "ledger.parquet")
    unicast = ledger[ledger["hop_v"] >= 0]
    assert unicast["attempts"].min() == 1 and unicast["attempts"].max() <= 7
    # every retry is one more attempt of a hop (retry-limit failures: attempts 7)
    assert (unicast["attempts"] - 1).sum() == retries
    assert (ledger.loc[ledger["hop_v"] < 0, "attempts"] == 1).all()
    ideal = run_spec(_manet("aodv", {"model": "ideal"}), tmp_path)
    assert "mac_retries" not in json.loads((ideal / "summary.json").read_text())
    assert "attempts" not in pd.read_parquet(ideal / "ledger.parquet")
    assert ideal.name == run_spec(_manet("aodv", None), tmp_path).name


def test_802_15_4_contenders_fail_channel_access_more_often():
    """Saturated leaves of a star, 100 B to the hub under unslotted CSMA/CA: a frame that
    finds the channel busy at 5 CCAs in a row is dropped, more often with more leaves."""
    share = {}
    for n in (2, 10):
        out = deliver(_star(n), _to_hub(n, 50, size=100), medium="shared",
                      mac={"model": "802.15.4", **SATURATED})
        failed = int((out["loss_reason"] == "channel_access_failure").sum())
        assert failed == out.attrs["mac"]["mac_drops_by_reason"]["channel_access_failure"]
        assert set(out["loss_reason"]) <= {"", "channel_access_failure", "retry_limit"}
        share[n] = failed / len(out)
    assert share[2] < 0.15 and share[10] > 2 * share[2], share


def test_new_powers_keep_frames_on_air_and_decide_what_follows():
    """Node 1 leaves node 0's range at 10 ms (an epoch's new powers): the frame on air
    then still arrives (its receiver had locked onto it) but its ACK does not, so its
    sender gives it up too; every later one fails at the retry limit after 7 attempts."""
    from emulator.mac import kernel
    from emulator.mac.engine import REASONS, MacEngine, unit_disk_rx_dbm
    from emulator.mac.standards import Dcf80211

    pos = np.array([[0.0, 0.0], [1.0, 0.0]])
    engine = MacEngine(unit_disk_rx_dbm(pos, 1.5), Dcf80211(data_rate=1e6, lifetime=1e6),
                       seed=3)
    for h in range(10):
        engine.enqueue(0.0, 0, 1, 1000, h)          # 8.2 ms a frame at 1 Mbit/s
    before = engine.advance(0.010)
    assert [REASONS[r] for r in before.reason] == ["delivered"]
    assert engine._ni[0, kernel.TX_KIND] >= 0        # the second frame is on air
    engine.set_rx_dbm(unit_disk_rx_dbm(np.array([[0.0, 0.0], [9.0, 0.0]]), 1.5))
    after = engine.advance(10.0)
    reasons = [REASONS[r] for r in after.reason]
    assert reasons == ["delivered"] + ["retry_limit"] * 9
    assert after.handle.tolist() == [1] + list(range(1, 10))
    assert after.attempts.tolist() == [1] + [7] * 9


def test_sensing_no_farther_than_detection_makes_every_two_hop_pair_hidden():
    """With cs_threshold_dbm = detect_dbm (ns-3's CcaSensitivity) the unit disk has no
    ring of sensed nodes: 0 and 2, two links apart, are hidden from each other even
    with a wide carrier_sense_radius."""
    wide = {"carrier_sense_radius": 2.5}
    ns3 = _hidden(2.5, seed=2)
    assert ns3.attrs["mac"]["mac_drops_by_reason"]["retry_limit"] == 0
    g = _line(3, 1e6)
    msgs = pd.DataFrame({"msg_id": range(600), "src": [0, 2] * 300, "dst": 1,
                         "sent_at": 0.0, "size_bytes": 1500})
    out = deliver(g, msgs, medium="shared", seed=2,
                  mac={"model": "802.11", "cs_threshold_dbm": -82.0, **wide, **SATURATED})
    assert out.attrs["mac"]["mac_drops_by_reason"]["retry_limit"] > 20
