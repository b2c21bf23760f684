"""Speed of the spark runtime and of the spark sweep engine.

1. Per-step time of ``--runtime spark`` against ``--runtime inproc`` for steps of 10^2 to
   10^6 tuples: the source programs of the centralized join (each tuple forwarded to the
   query node) on 8 source nodes. The two runtimes take each step in turn (``--steps``
   timed steps after two warm-up ones); the ratio is the median of the step-by-step
   ratios. Goal: spark ÷ inproc <= 3 at 10^5 tuples per step.
2. Where a small (8-tuple) step's time goes: the driver's packing and unpacking, and
   Spark's offsets, write-ahead log, planning, Python node steps, state commit and the
   rest (:func:`spark_nodes.runtimes.spark.step_breakdown`), medians over steps.
3. The quickstart (``experiments/specs/quickstart.toml``, ``local[*]``) as a new user
   runs it: ``testbed run`` in a fresh process, JVM start included. Goal: <= 20 s wall.
   ``--stepped`` also runs it with ``run.run_ahead = false`` (one micro-batch per
   non-empty step), in turn with the default.
4. Sweep throughput: the same small runs as Spark tasks on ``local[1]`` and ``local[2]``.
   Goal: speed-up >= 1.7x from one core to two.
5. The codec alone (:mod:`spark_nodes.runtimes.codec`, no Spark): packing a step's events
   in the driver and unpacking them in a worker, packing the step outputs in the worker
   and unpacking them in the driver, for ``--codec`` tuples (median of five, ms).

Usage::

    python benchmarks/bench_spark_runtime.py                 # everything
    python benchmarks/bench_spark_runtime.py --sizes 100,100000 --sweep-runs 0 --quickstart 0 --codec 0
"""
from __future__ import annotations

import argparse
import copy
import os
import statistics
import subprocess
import sys
import tempfile
import time

from contract.program import TUPLE, Event
from experiments.planning import make_plan
from spark_nodes.algorithms.centralized import CentralizedNode
from spark_nodes.runtimes.inproc import InprocRuntime
from spark_nodes.workload.tuples import StreamTuple

SOURCES = 8


def bench_plan():
    """The plan the runtime is opened with: seed 1, the centralized algorithm."""
    return make_plan(seed=1, algorithm="centralized")


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


def time_steps(runtimes: list, tuples: int, steps: int, batch: int,
               warmup: int = 2) -> tuple[dict, dict]:
    """Each runtime's time of ``steps`` steps after ``warmup`` untimed ones (a new
    streaming query's first micro-batches pay for planning, code generation and the
    JIT), the runtimes taking each step in turn so that a machine whose speed drifts
    affects them alike. Returns ``({name: [seconds]}, {name: last step's outputs})``."""
    for runtime in runtimes:
        runtime.open(bench_plan(), programs(batch))
    times = {runtime.name: [] for runtime in runtimes}
    last = {}
    for step in range(warmup + steps):
        for runtime in runtimes:
            events = step_events(step, tuples)
            started = time.perf_counter()
            last[runtime.name] = runtime.run_step(float(step), step + 1.0, events, None)
            times[runtime.name].append(time.perf_counter() - started)
            del events
    for runtime in runtimes:
        runtime.close()
    return {name: t[warmup:] for name, t in times.items()}, last


def bench_steps(spark, sizes, master: str, batch: int, steps: int) -> None:
    from spark_nodes.runtimes.spark import SparkRuntime

    print(f"## per-step time, {SOURCES} source nodes, centralized sources (batch={batch}), "
          f"spark on {master} with {spark.conf.get('spark.sql.shuffle.partitions')} "
          f"state partitions; medians of {steps} steps after 2 (10^6: 2 after 1), "
          f"the runtimes in turn")
    print(f"{'tuples/step':>12} {'inproc s':>10} {'spark s':>10} {'ratio':>7}")
    for tuples in sizes:
        timed, warmup = (2, 1) if tuples >= 10**6 else (steps, 2)
        runtime = SparkRuntime(spark=spark)
        times, last = time_steps([InprocRuntime(), runtime], tuples, timed, batch, warmup)
        assert sum(len(o.messages) for o in last["spark"].values()) == \
            sum(len(o.messages) for o in last["inproc"].values())
        inproc, on_spark = (statistics.median(times[k]) for k in ("inproc", "spark"))
        # the median of the step-by-step ratios: each pair ran side by side
        ratio = statistics.median(s / i for s, i in zip(times["spark"], times["inproc"]))
        print(f"{tuples:>12} {inproc:>10.3f} {on_spark:>10.3f} {ratio:>7.2f}  "
              f"(spark {min(times['spark']):.2f}-{max(times['spark']):.2f} s, first timed "
              f"{times['spark'][0]:.2f} s; inproc {min(times['inproc']):.2f}-"
              f"{max(times['inproc']):.2f} s; spark step, ms: "
              f"{breakdown(runtime.step_times[warmup:])})", flush=True)


def breakdown(step_times) -> str:
    """Median milliseconds of each part of the steps' time (non-zero parts)."""
    from spark_nodes.runtimes.spark import STEP_PARTS

    medians = {k: 1000 * statistics.median(t[k] for t in step_times) for k in STEP_PARTS}
    return ", ".join(f"{k} {v:.0f}" for k, v in medians.items() if round(v))


def overhead(spark, steps: int = 12, warmup: int = 3) -> None:
    """Where the time of a small (8-tuple) step goes (medians over the steps after
    ``warmup``; the parts' medians need not add up to the median wall)."""
    from spark_nodes.runtimes.spark import STEP_PARTS, SparkRuntime

    runtime = SparkRuntime(spark=spark)
    runtime.open(bench_plan(), programs(1))
    for step in range(warmup + steps):
        runtime.run_step(float(step), step + 1.0, step_events(step, SOURCES), None)
    runtime.close()
    timed = runtime.step_times[warmup:]
    print(f"## where a small step's time goes ({SOURCES} tuples on {SOURCES} nodes; "
          f"median of {steps} steps, ms)")
    for part in STEP_PARTS + ("wall",):
        print(f"{part:>18} {1000 * statistics.median(t[part] for t in timed):8.1f}")


def bench_quickstart(spec: str, runs: int, stepped: bool = False) -> None:
    """Wall time of ``testbed run SPEC`` (on Spark) in a fresh process, JVM start
    included, as ``make run`` runs it; with ``stepped`` also with ``run.run_ahead =
    false`` (every non-empty step a micro-batch), the two run in turn."""
    print(f"## quickstart on Spark: testbed run {spec} (goal <= 20 s wall)")
    variants = {"run ahead": spec}
    with tempfile.TemporaryDirectory() as folder:
        if stepped:
            text = open(spec, encoding="utf-8").read()
            variants["stepped"] = os.path.join(folder, os.path.basename(spec))
            with open(variants["stepped"], "w", encoding="utf-8") as f:
                f.write(text.replace("[run]\n", "[run]\nrun_ahead = false\n", 1))
        walls = {name: [] for name in variants}
        for _ in range(runs):
            for name, path in variants.items():
                with tempfile.TemporaryDirectory() as out:
                    started = time.perf_counter()
                    subprocess.run([sys.executable, "-m", "testbed.cli", "run", path,
                                    "--out", out], check=True, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL,
                                   cwd=os.path.dirname(os.path.abspath(__file__)) + "/..")
                    walls[name].append(time.perf_counter() - started)
    for name, times in walls.items():
        print(f"{name}: wall median {statistics.median(times):.1f} s of {runs} "
              f"(min {min(times):.1f}, max {max(times):.1f})", flush=True)


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
    from spark_nodes.runtimes.session import build_session

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


def bench_codec(tuples: int, runs: int = 5) -> None:
    """Median milliseconds of each leg of the codec for a step of ``tuples`` tuples."""
    from contract.program import run_node_step
    from spark_nodes.runtimes import codec

    events = step_events(0, tuples)
    outputs = {node: run_node_step(program, node, events[node], 0.0, 1.0, None, seed=1,
                                   rng_state=None, algorithm="centralized", next_local_id=0)
               for node, program in programs(1).items()}
    legs: dict[str, list] = {}

    def timed(leg: str, work, items: dict) -> dict:
        """``work`` applied to every node's item, its time added to ``leg``."""
        started = time.perf_counter()
        done = {node: work(item) for node, item in items.items()}
        legs.setdefault(leg, []).append(time.perf_counter() - started)
        return done

    for _ in range(runs):
        blobs = timed("encode_events", codec.encode_events, events)
        back = timed("decode_events", codec.decode_events, blobs)
        packed = timed("encode_output", codec.encode_output, outputs)
        unpacked = timed("decode_output", codec.decode_output, packed)
        assert back == events and unpacked == outputs
        del back, unpacked
    print(f"## codec, {tuples} tuples on {SOURCES} nodes (median of {runs}, ms; "
          f"events {sum(map(len, blobs.values())) / 1e6:.2f} MB, "
          f"outputs {sum(map(len, packed.values())) / 1e6:.2f} MB)")
    for leg, times in legs.items():
        print(f"{leg:>18} {1000 * statistics.median(times):8.1f}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="100,1000,10000,100000,1000000",
                   help="tuples per step, comma-separated")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--partitions", type=int, default=None)
    p.add_argument("--batch", type=int, default=1, help="tuples per message of the sources")
    p.add_argument("--steps", type=int, default=10,
                   help="timed steps per size after two warm-up ones (10^6: 2 after 1)")
    p.add_argument("--sweep-runs", type=int, default=8, help="0 skips the sweep benchmark")
    p.add_argument("--small-steps", type=int, default=12,
                   help="timed small steps of the breakdown (0 skips it)")
    p.add_argument("--quickstart", type=int, default=1,
                   help="runs of the quickstart (0 skips it)")
    p.add_argument("--quickstart-spec", default="experiments/specs/quickstart.toml")
    p.add_argument("--codec", type=int, default=100_000,
                   help="tuples of the codec benchmark (0 skips it)")
    p.add_argument("--stepped", action="store_true",
                   help="also run the quickstart with run.run_ahead = false, in turn")
    args = p.parse_args(argv)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if sizes or args.small_steps:
        from spark_nodes.runtimes.session import build_session

        spark = build_session(args.master, partitions=args.partitions)
        if sizes:
            bench_steps(spark, sizes, args.master, args.batch, args.steps)
        if args.small_steps:
            overhead(spark, args.small_steps)
        spark.stop()
    if args.quickstart:
        bench_quickstart(args.quickstart_spec, args.quickstart, args.stepped)
    if args.sweep_runs:
        bench_sweep(args.sweep_runs)
    if args.codec:
        bench_codec(args.codec)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
