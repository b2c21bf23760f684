"""Speed of the spark runtime and of the spark sweep engine.

1. Per-step time of ``--runtime spark`` against ``--runtime inproc`` for steps of 10^2 to
   10^6 tuples: the source programs of the centralized join (each tuple forwarded to the
   query node) on 8 source nodes; median of the timed steps after warm-up steps.
   Target: spark within 3x of inproc at >= 10^5 tuples per step.
2. Sweep throughput: the same small runs as Spark tasks on ``local[1]`` and ``local[2]``.
   Target: speed-up >= 1.7x from one core to two.

Also prints where a small step's time goes (Spark's own ``durationMs`` of the micro-batch).

Usage::

    python benchmarks/bench_spark_runtime.py                 # everything
    python benchmarks/bench_spark_runtime.py --sizes 100,100000 --sweep-runs 0
"""
from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import tempfile
import time

from spark_nodes.centralized import CentralizedNode
from emulator.program import TUPLE, Event
from spark_nodes.runtime_inproc import InprocRuntime
from spark_nodes.tuples import StreamTuple

SOURCES = 8


class BenchPlan:
    seed = 1
    algorithm = "centralized"


def programs(batch: int) -> dict:
    return {node: CentralizedNode(query_node=0, join=None, batch=batch)
            for node in range(1, SOURCES + 1)}


def step_events(step: int, tuples: int) -> dict:
    """``tuples`` tuple events spread over the source nodes, inside step ``[step, step+1)``."""
    per_node = tuples // SOURCES
    out = {}
    for node in range(1, SOURCES + 1):
        evs = []
        for i in range(per_node):
            ts = step + i / per_node
            evs.append(Event(ts, i, TUPLE, StreamTuple(f"R{node % 3 + 1}", step * per_node + i,
                                                       ts, i % 50, None, None, node,
                                                       entered_at=ts)))
        out[node] = evs
    return out


def time_steps(runtime, tuples: int, steps: int, batch: int,
               warmup: int = 2) -> tuple[float, object]:
    """Median time of ``steps`` steps after ``warmup`` untimed ones (a new streaming
    query's first micro-batches pay for planning, code generation and the JIT)."""
    runtime.open(BenchPlan(), programs(batch))
    times = []
    last = None
    for step in range(warmup + steps):
        events = step_events(step, tuples)
        started = time.perf_counter()
        last = runtime.run_step(float(step), step + 1.0, events, None)
        times.append(time.perf_counter() - started)
        del events
    runtime.close()
    return statistics.median(times[warmup:]), last


def bench_steps(sizes, master: str, batch: int, partitions: int | None) -> None:
    from spark_nodes.runtime_spark import SparkRuntime
    from spark_nodes.spark_session import build_session

    spark = build_session(master, partitions=partitions)
    print(f"## per-step time, {SOURCES} source nodes, centralized sources (batch={batch}), "
          f"spark on {master} with {spark.conf.get('spark.sql.shuffle.partitions')} "
          f"state partitions")
    print(f"{'tuples/step':>12} {'inproc s':>10} {'spark s':>10} {'ratio':>7}")
    for tuples in sizes:
        steps, warmup = (2, 1) if tuples >= 10**6 else (3, 2)
        inproc, ref = time_steps(InprocRuntime(), tuples, steps, batch, warmup)
        runtime = SparkRuntime(spark=spark)
        on_spark, got = time_steps(runtime, tuples, steps, batch, warmup)
        assert sum(len(o.messages) for o in got.values()) == \
            sum(len(o.messages) for o in ref.values())
        print(f"{tuples:>12} {inproc:>10.3f} {on_spark:>10.3f} {on_spark / inproc:>7.2f}",
              flush=True)
    overhead(spark)
    spark.stop()


def overhead(spark) -> None:
    """Where the time of a small (8-tuple) step goes, from Spark's progress reports."""
    from spark_nodes.runtime_spark import SparkRuntime

    runtime = SparkRuntime(spark=spark)
    runtime.open(BenchPlan(), programs(1))
    walls, parts = [], []
    for step in range(8):
        started = time.perf_counter()
        runtime.run_step(float(step), step + 1.0, step_events(step, SOURCES), None)
        walls.append(time.perf_counter() - started)
        parts.append(runtime._query.lastProgress["durationMs"])
    runtime.close()
    keys = sorted(parts[-1])
    median = {k: statistics.median(p.get(k, 0) for p in parts[2:]) for k in keys}
    print(f"## small-step overhead: median {statistics.median(walls[2:]):.3f} s per step; "
          f"Spark's breakdown (ms): " + ", ".join(f"{k} {v:.0f}" for k, v in median.items()))


SWEEP_BASE = {
    "run": {"name": "bench_sweep", "seed": 1, "duration": 200.0, "step": 0.05,
            "runtime": "inproc", "memory_interval": 1.0},
    "topology": {"generator": "random_geometric", "nodes": 20, "radius": 0.4, "delay": 0.05},
    "streams": {"count": 3, "rate": 20.0, "key_domain": 10},
    "query": {"node": 0, "window": 2.0},
    "algorithm": {"name": "centralized"},
}


def sweep_specs(runs: int) -> list[dict]:
    from experiments import spec as specs

    out = []
    for seed in range(1, runs + 1):
        raw = copy.deepcopy(SWEEP_BASE)
        raw["run"]["seed"] = seed
        out.append(specs.resolve(raw))
    return out


def bench_sweep(runs: int) -> None:
    from experiments.sweep_spark import run_on_spark
    from spark_nodes.spark_session import build_session

    print(f"## sweep throughput: {runs} centralized runs as Spark tasks")
    rates = {}
    for master in ("local[1]", "local[2]"):
        spark = build_session(master, app_name="bench-sweep")
        # Warm the Python workers so both measurements start from the same state.
        cores = spark.sparkContext.defaultParallelism
        spark.sparkContext.parallelize(range(cores), cores).map(
            lambda _: __import__("experiments.runner").__name__).collect()
        with tempfile.TemporaryDirectory() as out:
            started = time.perf_counter()
            paths = run_on_spark(sweep_specs(runs), out, spark=spark)
            wall = time.perf_counter() - started
        assert len(paths) == runs
        rates[master] = runs / wall
        print(f"{spark.sparkContext.master:>10}: {wall:7.2f} s, {rates[master]:.2f} runs/s "
              f"({spark.sparkContext.defaultParallelism} task slots)", flush=True)
        spark.stop()
    print(f"speed-up local[1] -> local[2]: {rates['local[2]'] / rates['local[1]']:.2f}x")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="100,1000,10000,100000,1000000",
                   help="tuples per step, comma-separated")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--partitions", type=int, default=None)
    p.add_argument("--batch", type=int, default=1, help="tuples per message of the sources")
    p.add_argument("--sweep-runs", type=int, default=8, help="0 skips the sweep benchmark")
    args = p.parse_args(argv)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if sizes:
        bench_steps(sizes, args.master, args.batch, args.partitions)
    if args.sweep_runs:
        bench_sweep(args.sweep_runs)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
