"""Overhead against Theorems B and D, master switch and segment adaptation."""
import numpy as np
import pytest
from .ctr_harness import make_plan, make_streams, run_plan

from spark_nodes.algorithms import registry
from spark_nodes.workload.tuples import StreamTuple
from topologies import grid

TOPO = grid(3, 3, defaults={"delay": 0.01, "jitter": 0.005})
NODES = [0, 4, 8]


def run(algorithm, params, rates, windows, horizon=40.0, seed=3, streams=None):
    tuples = streams or make_streams(np.random.default_rng(seed), ["R1", "R2", "R3"], NODES,
                                     rates, horizon, key_domain=10, disorder=0.05)
    plan = make_plan(algorithm, dict(params, slack=0.3), TOPO, NODES, windows,
                     duration=horizon + 2.0)
    out, expected, data = run_plan(plan, tuples)
    assert set(out.results["group"]) == expected and out.results["group"].is_unique
    return registry.ALGORITHMS.get(algorithm).summarize(plan, data)


def test_atr_overhead_follows_theorem_b_and_not_the_host_count():
    base = {"segment": 2.0, "master_switch": False}
    two = run("atr", dict(base, hosts=2), [4.0, 1.0, 1.0], [1.0, 1.0, 1.0])
    eight = run("atr", dict(base, hosts=8), [4.0, 1.0, 1.0], [1.0, 1.0, 1.0])
    # Theorem B: r2 (W2 + W1) + r3 (W3 + W1) over T = (2 + 2) / 2 = 2 extra tuples per time
    assert two["overhead_predicted"] == pytest.approx(2.0, rel=0.15)
    assert two["overhead_measured"] == pytest.approx(two["overhead_predicted"], rel=0.1)
    assert eight["overhead_measured"] == two["overhead_measured"]
    longer = run("atr", dict(base, hosts=2, segment=8.0), [4.0, 1.0, 1.0], [1.0, 1.0, 1.0])
    assert longer["overhead_measured"] < two["overhead_measured"] / 3


def test_ctr_overhead_matches_theorem_d_with_measured_parameters():
    s = run("ctr", {"hosts": 6, "store": "llf", "segment": 0.5}, [3.0, 3.0, 3.0],
            [2.0, 2.0, 2.0])
    assert s["overhead_intermediate_measured"] > 0
    assert s["overhead_intermediate_predicted"] == pytest.approx(
        s["overhead_intermediate_measured"], rel=0.3)
    assert s["overhead_base_predicted"] == pytest.approx(s["overhead_base_measured"])
    assert s["overhead_measured"] == pytest.approx(
        s["overhead_base_measured"] + s["overhead_intermediate_measured"])


def test_atr_master_switches_when_rates_change():
    rng = np.random.default_rng(4)
    horizon = 40.0
    streams = {}
    for name, node, fast_first in (("R1", 0, True), ("R2", 4, False), ("R3", 8, None)):
        ts = []
        for lo, hi in ((0.0, 20.0), (20.0, 40.0)):
            fast = fast_first if fast_first is None else (fast_first == (lo == 0.0))
            rate = 1.0 if fast is None else (5.0 if fast else 1.0)
            ts.extend(rng.uniform(lo, hi, rng.poisson(rate * (hi - lo))))
        streams[name] = [StreamTuple(name, i, float(t), int(rng.integers(6)), None, None,
                                     node, 1.0, float(t)) for i, t in enumerate(sorted(ts))]
    s = run("atr", {"hosts": 3, "segment": 1.0}, None, [1.0, 1.0, 1.0], horizon,
            streams=streams)
    assert s["atr_master_switches"] >= 1


def test_atr_adapts_segment_length():
    s = run("atr", {"hosts": 4, "segment": 1.0, "adapt": True, "delta_T": 0.5,
                    "adapt_every": 2, "master_switch": False}, [4.0, 1.0, 1.0],
            [1.0, 1.0, 1.0])
    # probes of T +- dT happened and moved T away from 1.0 on average
    assert s["atr_segment_mean"] != pytest.approx(1.0)
