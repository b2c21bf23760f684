"""The run's own cost, two checkouts against each other: `bench_emulator`'s run and floor,
in CPU seconds, alternated between two long-lived processes.

On a shared machine a figure moves ±30 % from one minute to the next (docs/NOTES.md, "The
run's own cost at the floor"); what holds is pairs taken seconds apart. Each checkout gets
one worker process (its own ``PYTHONPATH``, kernels loaded and the scenario built once);
the controller asks them in turn, A then B, then B then A, for one ``execute`` of the
benchmark's run and one :func:`bench_emulator.per_event_floor`, and prints each pair,
then the medians: the run's CPU seconds in each checkout, the floor's (pooled: both
checkouts run the same floor unless the change touched the transport), ``run_to_floor``
(the floor over the run, ``bench_emulator``'s ``run_to_floor_ratio`` in CPU time) and
the run's time in B over A's, pair by pair.

Run: ``python benchmarks/bench_floor_pairs.py OTHER_CHECKOUT [--pairs 8]`` from the
checkout to compare (B); OTHER_CHECKOUT (A) is the code before, e.g. the main checkout.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def serve(checkout: Path) -> None:
    """A worker on ``checkout`` (its modules, its benchmark): build the scenario, then
    answer ``run`` or ``floor`` with CPU seconds."""
    sys.path[0:1] = [str(checkout / "benchmarks"), str(checkout)]   # not this file's
    import numpy as np

    import bench_emulator as bench
    from emulator import kernels
    from emulator.driver import execute
    from experiments.planning import make_plan
    from spark_nodes.runtimes.inproc import InprocRuntime

    args = argparse.Namespace(nodes=200, sources=20, rate=50.0, duration=100.0, seed=1,
                              medium="links")
    kernels.ready(["oracle"], [args.medium])
    topo, dynamics = bench.build_network(args, jitter=0.002)
    rng = np.random.default_rng(args.seed)
    nodes = sorted(topo.graph.nodes)
    sink = nodes[0]
    origins = rng.choice(nodes[1:], size=args.sources, replace=False)
    tuples = bench.source_tuples(args, origins, rng)

    def programs():
        fresh = {int(o): bench.Source(sink) for o in origins}
        fresh[sink] = bench.Sink()
        return fresh

    def plan():
        return make_plan(dynamics=dynamics, seed=args.seed, duration=args.duration,
                         step=0.01, name="bench", algorithm="bench",
                         spec={"network": {"medium": args.medium}})

    print("ready", flush=True)
    for line in sys.stdin:
        started = time.process_time()
        if line.strip() == "run":
            out = execute(plan(), programs(), tuples, InprocRuntime())
            del out
        else:
            bench.per_event_floor(plan(), tuples, programs(), sink)
        print(f"{time.process_time() - started:.4f}", flush=True)


class Worker:
    """A worker process on one checkout."""

    def __init__(self, checkout: Path):
        env = dict(os.environ, PYTHONPATH=str(checkout))
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(checkout)], cwd=checkout, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        while (line := self.proc.stdout.readline()) and line.strip() != "ready":
            pass
        if not line:
            raise SystemExit(f"bench_floor_pairs: the worker on {checkout} did not start")

    def ask(self, what: str) -> float:
        self.proc.stdin.write(what + "\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("other", nargs="?", type=Path, help="the checkout to compare against (A)")
    ap.add_argument("--pairs", type=int, default=8)
    ap.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve is not None:
        serve(args.serve)
        return
    if args.other is None or not (args.other / "benchmarks").is_dir():
        ap.error(f"OTHER_CHECKOUT: expected a checkout of the testbed, got {args.other}")
    if args.pairs < 1:
        ap.error(f"--pairs: expected at least 1, got {args.pairs}")
    here = Path(__file__).resolve().parent.parent
    workers = {"A": Worker(args.other.resolve()), "B": Worker(here)}
    runs = {"A": [], "B": []}
    floors = []
    for i in range(args.pairs):
        turn = ("A", "B") if i % 2 == 0 else ("B", "A")
        for name in turn:
            runs[name].append(workers[name].ask("run"))
        for name in turn:
            floors.append(workers[name].ask("floor"))
        print(f"pair {i + 1}: run A {runs['A'][-1]:.3f} s, B {runs['B'][-1]:.3f} s; "
              f"floor {floors[-2]:.3f} / {floors[-1]:.3f} s", flush=True)
    for worker in workers.values():
        worker.close()
    floor = statistics.median(floors)
    print(f"A {args.other}: run {statistics.median(runs['A']):.3f} s, "
          f"run_to_floor {floor / statistics.median(runs['A']):.3f}")
    print(f"B {here}: run {statistics.median(runs['B']):.3f} s, "
          f"run_to_floor {floor / statistics.median(runs['B']):.3f}")
    per_pair = [b / a for a, b in zip(runs["A"], runs["B"])]
    print(f"floor {floor:.3f} s (pooled); B/A run time per pair: median "
          f"{statistics.median(per_pair):.3f} ({min(per_pair):.3f}-{max(per_pair):.3f})")


if __name__ == "__main__":
    main()
