"""``benchmarks/bench_emulator.py``'s per-event floor does the run's own work: the same
deliveries and hops as the driver, on a small network (its figure is only a floor if
it leaves nothing out)."""
import argparse

import numpy as np
import pytest

from benchmarks import bench_emulator as bench
from emulator.driver import execute
from experiments.planning import make_plan
from spark_nodes.runtimes.inproc import InprocRuntime
from spark_nodes.workload.tuples import StreamTuple


def test_the_per_event_floor_delivers_and_hops_as_the_driver_does():
    args = argparse.Namespace(nodes=200, duration=5.0, seed=1, medium="links")
    _, dynamics = bench.build_network(args, jitter=0.002)
    rng = np.random.default_rng(1)
    sink, origins = 0, [5, 90, 170]
    tuples = {f"R{i}": [StreamTuple(f"R{i}", k, float(t), 0, None, None, origin, 1.0,
                                    float(t))
                        for k, t in enumerate(np.sort(rng.uniform(0, 5.0, 300)))]
              for i, origin in enumerate(origins)}

    def programs():
        made = {o: bench.Source(sink) for o in origins}
        made[sink] = bench.Sink()
        return made

    driven = programs()
    plan = make_plan(dynamics=dynamics, seed=1, duration=5.0, step=0.01, name="bench",
                     algorithm="bench", spec={"network": {"medium": "links"}})
    info = execute(plan, driven, tuples, InprocRuntime()).info
    lean = programs()
    rate, delivered = bench.per_event_floor(plan, tuples, lean, sink)
    assert delivered == driven[sink].received > 800
    assert rate > 0 and info["hops"] > delivered


def test_the_run_to_floor_ratio_is_end_to_end_over_the_floor():
    args = argparse.Namespace(nodes=200, sources=3, rate=50.0, duration=2.0, seed=1,
                              medium="links", floor=True)
    _, dynamics = bench.build_network(args, jitter=0.002)
    rng = np.random.default_rng(1)
    origins = rng.choice(np.arange(1, 200), size=args.sources, replace=False)
    tuples = bench.source_tuples(args, origins, rng)
    figures = bench.timed_run(args, dynamics, tuples, 0, origins)
    assert figures["run_to_floor_ratio"] == pytest.approx(
        figures["end_to_end_ratio"] / figures["floor_ratio"])
    assert 0 < figures["run_to_floor_ratio"] < 10
