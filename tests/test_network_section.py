"""The report's network section (analysis/network_section.py): routing protocols beside
the oracle, and link order. Runs and run folders are made here with known numbers; the
tests check the values the section computes from them, then run a CI-sized slice of
experiments/specs/manet_routing.toml end to end."""
from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import network_section as ns
from analysis.report import write_report
from experiments import spec as specs
from tests.test_analysis import make_run

SPEC = Path(__file__).resolve().parents[1] / "experiments" / "specs" / "manet_routing.toml"


def routed_run(root: Path, name: str, seed: int, *, routing: str = "aodv",
               speed: list | None = None, rate: float = 2.0, duration: float = 10.0,
               drain: float = 2.0, control: dict | None = None, control_bytes: int = 0,
               no_route: list[tuple[float, float]] = (), seconds_per_unit: float = 1.0,
               summary: dict | None = None) -> Path:
    """A run folder (``make_run``'s tables) with a network: its spec's routing, mobility
    and rate, ``control`` packets by type in meta.json, no-route drops ``(time, count)``
    in metrics.parquet and the routing summary keys."""
    extra = {"routing_control_messages": sum((control or {}).values()),
             "routing_control_bytes": control_bytes, "delivery_ratio": 1.0,
             "message_delay_mean": 0.1, "route_discovery_latency_mean": 0.0,
             "drops_by_reason": json.dumps({"no_route": int(sum(n for _, n in no_route))}
                                           if no_route else {})}
    extra.update(summary or {})
    path = make_run(root, name, "centralized", seed, duration=duration, extra_summary=extra)
    spec = json.loads((path / "spec.json").read_text())
    spec["run"]["drain"] = drain
    spec["network"] = {"medium": "shared", "routing": routing}
    spec["routing"] = {"seconds_per_unit": seconds_per_unit}
    spec["streams"]["rate"] = rate
    spec["mobility"] = ({"model": "none"} if speed is None else
                        {"model": "random_waypoint", "speed": speed})
    (path / "spec.json").write_text(json.dumps(spec))
    meta = json.loads((path / "meta.json").read_text())
    meta["backend_info"] = {"network": {"control_sent": control or {}}}
    (path / "meta.json").write_text(json.dumps(meta))
    metrics = pd.read_parquet(path / "metrics.parquet")
    rows = pd.DataFrame({"time": [t for t, _ in no_route], "node": 3, "source": "network",
                         "metric": "drops_no_route", "value": [n for _, n in no_route]})
    pd.concat([metrics, rows], ignore_index=True).to_parquet(path / "metrics.parquet")
    return path


def test_run_facts_reads_rates_by_type_speeds_and_start_up_drops(tmp_path):
    a = routed_run(tmp_path, "net-a", 1, speed=[0.01, 0.03], rate=6.0,
                   control={"HELLO": 24, "RREQ": 6, "NOTICE": 12}, control_bytes=1200,
                   no_route=[(1.0, 3.0), (12.0, 5.0)])
    b = routed_run(tmp_path, "net-b", 1, routing="oracle", no_route=[(1.0, 3.0), (12.0, 5.0)],
                   seconds_per_unit=0.5)
    runs = pd.DataFrame({"run_id": ["net-a", "net-b"], "algorithm": "centralized",
                         "seed": 1, "routing_control_messages": [42, 0],
                         "routing_control_bytes": [1200, 0],
                         "drops_by_reason": ['{"no_route": 8, "link_break": 2}', "{}"]})
    facts = ns.run_facts(runs, [a, b]).set_index("run_id")
    # horizon = duration 10 + drain 2; NOTICE is not one of the protocol's own packets
    assert facts.at["net-a", "horizon"] == 12.0
    assert facts.at["net-a", "routing_packets_per_time"] == pytest.approx(30 / 12)
    assert facts.at["net-a", "drop_notices_per_time"] == pytest.approx(1.0)
    assert facts.at["net-a", "HELLO_per_time"] == pytest.approx(2.0)
    assert facts.at["net-a", "routing_bytes_per_time"] == pytest.approx(100.0)
    assert facts.at["net-a", "node_speed"] == pytest.approx(0.02)
    assert facts.at["net-a", "offered_load"] == 6.0
    assert (facts.at["net-a", "drops_no_route"], facts.at["net-a", "drops_link_break"]) == (8, 2)
    # start-up: the first 10 s; with 0.5 s per time unit that is 20 time units
    assert facts.at["net-a", "startup_no_route"] == 3.0
    assert facts.at["net-b", "startup_no_route"] == 8.0
    assert (facts.at["net-b", "routing"], facts.at["net-b", "node_speed"]) == ("oracle", 0.0)
    assert facts.at["net-b", "routing_packets_per_time"] == 0.0


def test_swept_columns_win_over_spec_json_and_rows_without_folders_keep_them():
    runs = pd.DataFrame({"run_id": ["x", "y"], "algorithm": "a", "seed": [1, 1],
                         "network.routing": ["olsr", "oracle"],
                         "mobility.speed": ["[0.001, 0.005]", "[1e-09, 1e-09]"],
                         "streams.rate": [2.0, 16.0], "run.duration": [60.0, 60.0],
                         "routing_control_messages": [650, 0]})
    facts = ns.run_facts(runs, [])
    assert facts["routing"].tolist() == ["olsr", "oracle"]
    assert facts["node_speed"].tolist() == pytest.approx([0.003, 1e-9])
    assert facts["offered_load"].tolist() == [2.0, 16.0]
    # no drain given: one more duration; no folder: every routing row is a packet
    assert facts["routing_packets_per_time"].tolist() == pytest.approx([650 / 120, 0.0])


def facts_frame(values: dict) -> pd.DataFrame:
    """Two seeds per (routing, speed, load): ``values[(routing, speed, load)]`` is a dict of
    metric -> (seed 1 value, seed 2 value)."""
    rows = []
    for (routing, speed, load), metrics in values.items():
        for k, seed in enumerate((1, 2)):
            rows.append({"algorithm": "centralized", "routing": routing, "reorder": False,
                         "node_speed": speed, "offered_load": load, "seed": seed,
                         **{m: v[k] for m, v in metrics.items()}})
    return pd.DataFrame(rows)


def ns3_like(load: float = 2.0, oracle_delivery=(1.0, 1.0)) -> dict:
    """A sweep that behaves as ns-3's AODV and OLSR are known to."""
    v = {}
    for speed, aodv, olsr, delivery in ((0.0, 30.0, 40.0, (1.0, 0.9)),
                                        (0.02, 36.0, 41.0, (0.9, 0.5))):
        v[("oracle", speed, load)] = {"routing_packets_per_time": (0, 0),
                                      "delivery_ratio": oracle_delivery,
                                      "message_delay_mean": (0.05, 0.05),
                                      "route_discovery_latency_mean": (0, 0),
                                      "startup_no_route": (0, 0)}
        v[("aodv", speed, load)] = {"routing_packets_per_time": (aodv - 1, aodv + 1),
                                    "delivery_ratio": (delivery[0], delivery[0]),
                                    "message_delay_mean": (0.08, 0.1),
                                    "route_discovery_latency_mean": (0.1, 0.3),
                                    "startup_no_route": (0, 0)}
        v[("olsr", speed, load)] = {"routing_packets_per_time": (olsr, olsr),
                                    "delivery_ratio": (delivery[1], delivery[1]),
                                    "message_delay_mean": (0.05, 0.07),
                                    "route_discovery_latency_mean": (0, 0),
                                    "startup_no_route": (20, 30),
                                    "HELLO_per_time": (17, 17), "TC_per_time": (olsr - 17,) * 2}
    return v


def test_per_setting_means_cis_and_seeds():
    table = ns.per_setting(facts_frame(ns3_like()))
    row = table[(table["routing"] == "aodv") & (table["node_speed"] == 0.02)].iloc[0]
    assert row["seeds"] == 2
    assert row["routing_packets_per_time"] == 36.0
    # two values 35 and 37: t(0.975, 1) * 1.414 / 1.414 = 12.706
    assert row["routing_packets_per_time_ci95"] == pytest.approx(12.706, abs=1e-3)
    assert row["route_discovery_latency_mean"] == pytest.approx(0.2)
    olsr = table[(table["routing"] == "olsr") & (table["node_speed"] == 0.0)].iloc[0]
    assert (olsr["TC_per_time"], olsr["startup_no_route"]) == (23.0, 25.0)
    assert ns.setting_columns(facts_frame(ns3_like())) == ["routing", "node_speed"]


def test_trends_as_in_ns3_are_judged_so_with_their_numbers():
    trends = {t.trend.split(",")[0]: t for t in ns.trends(ns.per_setting(facts_frame(ns3_like())))}
    aodv = trends["AODV's routing packets per second"]
    assert aodv.agrees is True and "30 → 36 (+20%)" in aodv.measured
    olsr = trends["OLSR's routing packets per second"]
    assert olsr.agrees is True and "40 → 41 (+2.5%)" in olsr.measured
    assert "HELLO: 17 → 17 (+0%) — TC: 23 → 24 (+4.35%)" in olsr.measured
    assert trends["AODV's first packet of a flow"].agrees is True
    assert "0.2–0.2" in trends["AODV's first packet of a flow"].measured
    first = trends["OLSR's first packet of a flow"]
    assert first.agrees is True and "slowest speed: 25" in first.measured
    delivery = trends["Delivery ratio"]
    assert delivery.agrees is True
    assert "AODV 1 → 0.9 (-0.1)" in delivery.measured
    assert "OLSR 0.9 → 0.5 (-0.4)" in delivery.measured
    delay = trends["End-to-end delay at the lightest load"]
    assert delay.agrees is True and "AODV 0.09, 0.09; OLSR 0.06, 0.06" in delay.measured


def test_trends_that_differ_from_ns3_are_flagged():
    v = ns3_like()
    # OLSR's overhead falls by 25 % with speed, AODV's does not grow, AODV delivers less
    v[("olsr", 0.02, 2.0)]["routing_packets_per_time"] = (30.0, 30.0)
    v[("aodv", 0.02, 2.0)]["routing_packets_per_time"] = (28.0, 30.0)
    v[("aodv", 0.02, 2.0)]["delivery_ratio"] = (0.3, 0.3)
    trends = {t.trend.split(",")[0]: t.agrees for t in ns.trends(ns.per_setting(facts_frame(v)))}
    assert trends["OLSR's routing packets per second"] is False
    assert trends["AODV's routing packets per second"] is False
    assert trends["Delivery ratio"] is False


def test_a_saturated_load_is_marked_and_left_out_of_the_verdicts():
    v = ns3_like(2.0)
    overload = ns3_like(16.0, oracle_delivery=(0.5, 0.5))
    # beyond saturation OLSR's packets are starved behind the data: not a trend of OLSR
    overload[("olsr", 0.0, 16.0)]["routing_packets_per_time"] = (20.0, 20.0)
    v.update(overload)
    table = ns.per_setting(facts_frame(v))
    assert ns.saturated_loads(table) == {16.0}
    olsr = next(t for t in ns.trends(table) if t.trend.startswith("OLSR's routing"))
    assert olsr.agrees is True
    assert "load 16*: 20 → 41 (+105%)" in olsr.measured


def test_paired_changes_are_per_seed_against_the_baseline():
    rows = []
    for seed, (base_cost, cost, base_recall, recall) in enumerate(
            [(10.0, 12.0, 1.0, 0.9), (20.0, 22.0, 1.0, 0.8)], start=1):
        rows += [{"algorithm": "smj-h", "routing": "oracle", "reorder": False, "seed": seed,
                  "comm_cost_per_time": base_cost, "recall": base_recall},
                 {"algorithm": "smj-h", "routing": "aodv", "reorder": False, "seed": seed,
                  "comm_cost_per_time": cost, "recall": recall}]
    # a run of seed 3 without its oracle run is left out
    rows.append({"algorithm": "smj-h", "routing": "aodv", "reorder": False, "seed": 3,
                 "comm_cost_per_time": 99.0, "recall": 0.0})
    frame = ns.paired(pd.DataFrame(rows).assign(node_speed=0.0, offered_load=5.0),
                      "routing", "oracle").iloc[0]
    assert (frame["routing"], frame["seeds"]) == ("aodv", 2)
    assert frame["d_comm_cost_per_time"] == pytest.approx((20.0 + 10.0) / 2)
    assert frame["d_recall"] == pytest.approx(-0.15)
    assert (frame["base_comm_cost_per_time"], frame["comm_cost_per_time"]) == (15.0, 17.0)
    assert frame["d_recall_ci95"] == pytest.approx(12.706 * 0.05, abs=1e-3)


def test_paired_link_order_against_links_in_order():
    rows = [{"algorithm": a, "routing": "oracle", "reorder": reorder, "seed": 1,
             "latency_mean": latency}
            for a, reorder, latency in (("qjoin", False, 0.5), ("qjoin", True, 0.4),
                                        ("mp-k-slack", False, 1.0), ("mp-k-slack", True, 1.2))]
    frame = ns.paired(pd.DataFrame(rows).assign(node_speed=0.0, offered_load=1.0),
                      "reorder", False).set_index("algorithm")
    assert frame.at["qjoin", "d_latency_mean"] == pytest.approx(-20.0)
    assert frame.at["mp-k-slack", "d_latency_mean"] == pytest.approx(20.0)
    assert bool(frame.at["qjoin", "reorder"]) is True


def sweep_folders(root: Path) -> Path:
    root.mkdir()
    control = {"oracle": {}, "aodv": {"HELLO": 300, "RREQ": 10}, "olsr": {"HELLO": 200, "TC": 100}}
    for routing in ("oracle", "aodv", "olsr"):
        for speed in (None, [0.015, 0.025]):
            for seed in (1, 2):
                routed_run(root, f"n-{routing}{speed is not None:d}{seed}", seed,
                           routing=routing, speed=speed, control=control[routing],
                           summary={"route_discovery_latency_mean":
                                    0.2 if routing == "aodv" else 0.0})
    return root


# In the full suite (make test-full, CI): make test keeps the section drawn from a slice
# of manet_routing.toml (test_a_ci_slice_of_manet_routing_runs_and_reads_as_the_...).
@pytest.mark.slow
@pytest.mark.full_suite
def test_the_report_has_a_network_section_when_routing_is_swept(tmp_path):
    report = write_report(sweep_folders(tmp_path / "net"))
    text = report.read_text()
    assert '<section id="network"><h2>Network: routing and link order</h2>' in text
    for metric in ns.FIGURES:
        png = f"figures/network_{metric}.png"
        assert f'src="{png}"' in text and (report.parent / png).is_file()
    settings = pd.read_csv(report.parent / "tables" / "network_settings.csv")
    aodv = settings[settings["routing"] == "aodv"].set_index("node_speed")
    # 310 packets over 10 + 2 time units
    assert aodv["routing_packets_per_time"].tolist() == pytest.approx([310 / 12] * 2)
    assert "Beside ns-3's AODV and OLSR" in text
    paired = pd.read_csv(report.parent / "tables" / "network_paired_routing.csv")
    assert sorted(paired["routing"].unique()) == ["aodv", "olsr"]


def test_no_network_section_when_nothing_of_the_network_is_swept(tmp_path):
    root = tmp_path / "one"
    root.mkdir()
    for seed in (1, 2):
        routed_run(root, f"n-aodv{seed}", seed)
    assert 'id="network"' not in write_report(root).read_text()


def ci_slice(tmp_path: Path, routings=("oracle", "aodv", "olsr")) -> Path:
    """manet_routing.toml cut to a CI-sized slice: the fast speed and the light load, one
    seed, 8 time units measured after 2 (the spec's 10 would leave nothing)."""
    text = SPEC.read_text()
    text = re.sub(r"^duration = .*$", "duration = 8.0", text, flags=re.M)
    text = re.sub(r"^warmup = .*$", "warmup = 2.0", text, flags=re.M)
    text = re.sub(r"^seeds = .*$", "seeds = [1]", text, flags=re.M)
    text = re.sub(r'^"network.routing" = .*$',
                  '"network.routing" = ' + json.dumps(list(routings)), text, flags=re.M)
    text = re.sub(r'^"mobility.speed" = .*$', '"mobility.speed" = [[0.015, 0.025]]', text,
                  flags=re.M)
    text = re.sub(r'^"streams.rate" = .*$', '"streams.rate" = [2.0]', text, flags=re.M)
    text = re.sub(r'^"mac.model" = .*$', '"mac.model" = ["ideal"]', text, flags=re.M)
    path = tmp_path / "manet_ci.toml"
    path.write_text(text)
    return path


def test_the_spec_sweeps_routing_speed_load_and_mac_over_five_seeds():
    spec, _ = specs.load(SPEC)
    points = specs.expand(spec, str(SPEC))
    assert len(points) == 3 * 3 * 3 * 2 * 5
    # the ideal points are those of the spec before the MAC axis, run ids and all
    assert {p["mac.model"] for _, p in points} == {"ideal", "802.11"}
    ideal = next(s for s, p in points if p["mac.model"] == "ideal")
    assert specs.run_id(ideal) == "manet_routing-cd8aa98d3114"
    mac = next(s for s, p in points if p["mac.model"] == "802.11")
    assert mac["mac"]["data_rate"] == 1e6   # 540-byte packets: not 802.15.4 (116 bytes)
    assert spec["network"]["medium"] == "shared" and spec["algorithm"]["name"] == "centralized"
    # 1 distance unit = 1 km, 1 time unit = 1 s: slow 1-5 m/s, fast 20 m/s on average
    speeds = sorted({float(np.mean(p["mobility.speed"])) * 1000 for _, p in points})
    assert speeds == pytest.approx([1e-6, 3.0, 20.0])
    assert spec["routing"]["seconds_per_unit"] == 1.0


def test_a_ci_slice_of_manet_routing_runs_and_reads_as_the_protocols_behave(tmp_path):
    import experiments

    runs = experiments.sweep(ci_slice(tmp_path), out=tmp_path / "out", progress=False)
    facts = ns.run_facts(runs, [Path(p) for p in runs["run_dir"]]).set_index("routing")
    assert set(facts.index) == {"oracle", "aodv", "olsr"}
    assert facts.at["oracle", "routing_packets_per_time"] == 0
    assert facts.at["oracle", "route_discovery_latency_mean"] == 0
    # AODV floods RREQs and waits for them; OLSR sends HELLOs and TCs, waits for nothing
    assert facts.at["aodv", "RREQ_per_time"] > 0 and facts.at["aodv", "RREP_per_time"] > 0
    assert facts.at["aodv", "route_discovery_latency_mean"] > 0
    assert facts.at["olsr", "TC_per_time"] > 0 and facts.at["olsr", "HELLO_per_time"] > 0
    assert facts.at["olsr", "route_discovery_latency_mean"] == 0
    # OLSR's first packets find no route: they are its start-up drops
    assert facts.at["olsr", "startup_no_route"] > 0
    assert all(0 < facts[c].min() and facts[c].max() <= 1 for c in ["delivery_ratio"])
    html_text = ns.section(runs, [Path(p) for p in runs["run_dir"]], tmp_path / "report")
    assert "AODV's first packet of a flow" in html.unescape(html_text)
    assert math.isfinite(facts.at["aodv", "message_delay_mean"])


@pytest.mark.parametrize("mobility, speed", [
    ({"model": "random_waypoint", "speed": [0.01, 0.03]}, 0.02),
    ({"model": "random_walk", "speed": [0.02, 0.06], "mode": "time"}, 0.04),
    ({"model": "random_direction", "speed": [2.0, 4.0], "pause": 2.0}, 3.0),
    ({"model": "gauss_markov", "mean_velocity": 0.05, "alpha": 0.5}, 0.05),
    ({"model": "rpgm", "speed": [0.01, 0.05], "max_distance": 0.1}, 0.03),
    ({}, 0.0),
])
def test_node_speed_is_each_models_mean_speed(mobility, speed):
    assert ns.node_speed({"mobility": mobility}) == pytest.approx(speed)


def test_node_speed_is_nan_where_the_spec_gives_no_speed():
    assert math.isnan(ns.node_speed({"mobility": {"model": "ns2", "file": "a.tcl"}}))
    assert math.isnan(ns.node_speed({"mobility": {"model": "schedule", "file": "s.csv"}}))


def test_a_swept_mean_velocity_is_the_node_speed_and_no_other_axis():
    runs = pd.DataFrame({"run_id": ["x", "y"], "algorithm": "a", "seed": [1, 1],
                         "network.routing": ["aodv", "aodv"],
                         "mobility.model": ["gauss_markov", "gauss_markov"],
                         "mobility.mean_velocity": [0.01, 0.05],
                         "streams.rate": [2.0, 2.0], "run.duration": [60.0, 60.0],
                         "routing_control_messages": [10, 20]})
    facts = ns.run_facts(runs, [])
    assert facts["node_speed"].tolist() == pytest.approx([0.01, 0.05])
    assert "mobility.mean_velocity" not in ns.setting_columns(facts.assign(
        **{"mobility.mean_velocity": [0.01, 0.05]}))
