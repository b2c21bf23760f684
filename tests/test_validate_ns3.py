"""The ns-3 cross-check (issue 27): one scenario description run in ns-3 and in the
testbed's network (``benchmarks/ns3_validation``), on a small scenario.

The ns-3 tests need the ``ns3`` extra (``pip install .[ns3]``, which ``make test``
installs) and are skipped without it; they share one worker (ns-3 imports in 8-25 s).
The full validation is ``python -m benchmarks.validate_ns3 --report``
(docs/VALIDATION.md).
"""
import dataclasses
import math

import pytest

from benchmarks import validate_ns3
from benchmarks.ns3_validation import ns3_side, testbed_side
from benchmarks.ns3_validation.scenario import check_ns3, make_scenario, messages
from topologies import loads_ns2_trace
from topologies.schema import FieldError

needs_ns3 = pytest.mark.skipif(not ns3_side.available(),
                               reason="ns-3 is not installed: pip install .[ns3]")


def _small(routing, speed=0.0, seed=1):
    """About 10 nodes, 20 simulated seconds, light load from 10 s on (OLSR has sent its
    first TCs by then in both)."""
    return make_scenario(speed=speed, load="light", routing=routing, seed=seed, nodes=10,
                         area=100.0, duration=20.0, warmup=10.0)


@pytest.mark.parametrize("change, field", [
    ({"routing": "babel"}, "scenario.routing"),
    ({"routing": "oracle"}, "scenario.routing"),
    ({"medium": "links"}, "scenario.medium"),
    ({"radio": {"model": "unit_disk"}}, "scenario.radio.model"),
    ({"radio": {"model": "log_distance", "modulation": "oqpsk_250kbps"}},
     "scenario.radio.modulation"),
    ({"radio": {"model": "log_distance", "shadowing_db": 4.0}}, "scenario.radio.shadowing_db"),
])
def test_a_scenario_ns3_cannot_express_is_refused_naming_the_field(change, field):
    with pytest.raises(FieldError) as err:
        check_ns3(dataclasses.replace(_small("aodv"), **change))
    assert err.value.field == field and "\n" not in str(err.value)


def test_without_ns3_the_validation_says_how_to_install_it(monkeypatch, capsys):
    monkeypatch.setattr(ns3_side, "available", lambda: False)
    assert validate_ns3.main(["--quick"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "pip install .[ns3]" in err


def test_flows_expand_to_the_packets_udpclient_sends():
    sc = _small("aodv")
    flow = sc.flows[0]
    times = flow.send_times()
    assert times[0] == flow.start and times[-1] < flow.stop <= times[-1] + 1 / flow.rate_pps
    assert len(messages(sc)) == sum(len(f.send_times()) for f in sc.flows)


@needs_ns3
@pytest.mark.slow
@pytest.mark.xdist_group("ns3")
def test_ns3_and_the_testbed_move_the_nodes_alike():
    ns = ns3_side.load()
    sc = _small("aodv", speed=20.0)
    trajectories = loads_ns2_trace(sc.trace)
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".ns_movements") as f:
        f.write(sc.trace)
        f.flush()
        nodes = ns.NodeContainer()
        nodes.Create(sc.nodes)
        ns.Ns2MobilityHelper(f.name).Install()
        worst = 0.0
        try:
            for t in (0.5, 3.7, 11.0, 19.9):
                ns.Simulator.Stop(ns.Seconds(t - ns.Simulator.Now().GetSeconds()))
                ns.Simulator.Run()
                for n in range(sc.nodes):
                    p = nodes.Get(n).GetObject[ns.MobilityModel]().GetPosition()
                    worst = max(worst, math.dist((p.x, p.y), trajectories.position(n, t)))
        finally:
            ns.Simulator.Destroy()
    assert worst < 1e-6


@needs_ns3
@pytest.mark.slow
@pytest.mark.xdist_group("ns3")
@pytest.mark.parametrize("routing", ["aodv", "olsr"])
def test_delivery_ratios_of_ns3_and_the_testbed_part_by_at_most_a_tenth(routing):
    sc = _small(routing)
    ns3, testbed = ns3_side.run(sc), testbed_side.run(sc)
    assert ns3["sent"] == testbed["sent"] > 0
    assert abs(ns3["delivery_ratio"] - testbed["delivery_ratio"]) <= 0.1, (ns3, testbed)
    assert ns3["control_pps"] > 0 and testbed["control_pps"] > 0


def test_the_scenario_modules_examples_run():
    import doctest

    from benchmarks.ns3_validation import scenario

    result = doctest.testmod(scenario)
    assert result.attempted >= 4 and result.failed == 0


def test_rerun_testbed_runs_the_testbeds_rows_again_and_keeps_ns3s(monkeypatch, tmp_path):
    import json

    monkeypatch.setattr(ns3_side, "available", lambda: True)
    ran = []

    def fake_run(sc, simulator):
        ran.append(simulator)
        return {"simulator": simulator, **sc.labels(), "duration": sc.duration,
                "delivery_ratio": 1.0, "delay_mean": 0.0, "control_pps": len(ran),
                "wall_s": 0.0}

    monkeypatch.setattr(validate_ns3, "run_one", fake_run)
    results = tmp_path / "rows.jsonl"
    assert validate_ns3.main(["--quick", "--results", str(results)]) == 0
    first = validate_ns3.load_results(results)
    assert ran.count("testbed") == 4 and len(ran) == len(first) == 4 + 3 * 4
    ran.clear()
    assert validate_ns3.main(["--quick", "--results", str(results)]) == 0
    assert ran == []                                   # nothing missing: nothing runs
    assert validate_ns3.main(["--quick", "--results", str(results), "--rerun",
                              "testbed"]) == 0
    assert ran == ["testbed"] * 4
    again = validate_ns3.load_results(results)
    assert len(again) == len(first)
    assert [r for r in again if r["simulator"] == "ns-3"] == \
        [r for r in first if r["simulator"] == "ns-3"]
    assert all(r["control_pps"] <= 4 for r in again if r["simulator"] == "testbed")
    assert json.loads(results.read_text().splitlines()[-1])["simulator"] == "testbed"
