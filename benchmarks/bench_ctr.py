"""Speed of CTR routing and of join probing on one host.

Prints:

- CTR routing decisions per second (and ms per segment, mean and p99) with 64 hosts and
  5 streams: every segment of every stream is routed through the greedy set covers of
  its 4 hops over a routing table in steady state (windows of 10 segments), and the
  table is expired after each round. Target: under 1 ms per segment.
- Join probes per second on one host: the CTR hop probe
  (:func:`spark_nodes.algorithms.ctr.probe.extend`: partial groups probed against a stored
  segment per second, and the in-range candidates they screen through the key index) and
  the full multi-way join an ATR host runs
  (:class:`spark_nodes.algorithms.multiway.MultiwayJoin`: inserts per second, and tuples
  buffered at each insert, the host's "probes" load measure).

Usage: ``python benchmarks/bench_ctr.py [--rounds N] [--seed S]``
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from spark_nodes.algorithms.ctr.ctr import CtrRouter
from spark_nodes.algorithms.ctr.load import LoadBoard
from spark_nodes.algorithms.ctr.probe import StoredSegment, extend
from spark_nodes.algorithms.multiway import MultiwayJoin
from spark_nodes.workload.tuples import StreamTuple

STREAMS = ["R1", "R2", "R3", "R4", "R5"]


def bench_routing(rounds: int, seed: int, hosts: int = 64, store: str = "llf") -> dict:
    rng = np.random.default_rng(seed)
    board = LoadBoard(range(hosts), (0.4, 0.4, 0.2), (1e4, 1e3, 1e3), 1.0)
    T, W = 0.5, 5.0
    router = CtrRouter(STREAMS, {s: W for s in STREAMS}, T, board, store=store)
    seg = [StreamTuple("R1", 0, 0.0, 1, None, None, 0)] * 5    # sizes only matter
    times = []
    for g in range(rounds):
        for h in range(hosts):   # loads drift as reports would make them
            board.report(h, float(rng.uniform(0, 1e3)), float(rng.uniform(0, 500)),
                         float(rng.uniform(0, 100)))
        for s in STREAMS:
            t0 = time.perf_counter()
            router.route(s, g, seg)
            times.append(time.perf_counter() - t0)
        router.wm = (g + 1) * T
        router.expire()
    warm = np.array(times[len(STREAMS) * int(W / T) * 2:])   # table in steady state
    return {"decisions_per_s": 1.0 / warm.mean(), "ms_mean": 1e3 * warm.mean(),
            "ms_p99": 1e3 * float(np.quantile(warm, 0.99)), "table_entries": len(router.table)}


def bench_probe(seed: int, n_partials: int = 2000, seg_size: int = 2000) -> dict:
    rng = np.random.default_rng(seed)
    tuples = [StreamTuple("B", i, float(t), int(k), None, None, 0)
              for i, (t, k) in enumerate(zip(rng.uniform(0, 10, seg_size),
                                             rng.integers(0, 50, seg_size)))]
    seg = StoredSegment(tuples)
    partials = [(StreamTuple("A", i, float(t), int(k), None, None, 0),)
                for i, (t, k) in enumerate(zip(rng.uniform(0, 10, n_partials),
                                               rng.integers(0, 50, n_partials)))]
    stats: dict = {}
    t0 = time.perf_counter()
    extend(partials, seg, "B", {"A": 1.0, "B": 1.0}, "equality", None, stats)
    dt = time.perf_counter() - t0
    compared = sum(c for c, _ in stats.values())
    return {"probes_per_s": n_partials / dt, "candidates_per_s": compared / dt,
            "candidates": compared}


def bench_multiway(seed: int, n: int = 20000) -> dict:
    rng = np.random.default_rng(seed)
    join = MultiwayJoin(STREAMS, {s: 2.0 for s in STREAMS}, "equality", retention=0.0)
    ts = np.sort(rng.uniform(0, n / 50.0, n))   # 50 tuples per time unit over 5 streams
    names = rng.integers(0, len(STREAMS), n)
    keys = rng.integers(0, 100, n)
    probes = 0
    t0 = time.perf_counter()
    for i in range(n):
        probes += join.buffered()[0]
        join.insert(StreamTuple(STREAMS[names[i]], i, float(ts[i]), int(keys[i]), None, None, 0))
    dt = time.perf_counter() - t0
    return {"inserts_per_s": n / dt, "probes_per_s": probes / dt}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=200, help="segment rounds to route")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    for store in ("llf", "cover"):
        r = bench_routing(args.rounds, args.seed, store=store)
        print(f"CTR routing, 64 hosts, 5 streams, store={store}: "
              f"{r['decisions_per_s']:,.0f} decisions/s, {r['ms_mean']:.3f} ms/segment mean, "
              f"{r['ms_p99']:.3f} ms p99 (table {r['table_entries']} entries; target < 1 ms)")
    p = bench_probe(args.seed)
    print(f"CTR hop probe on one host (equality, key index): {p['probes_per_s']:,.0f} "
          f"partial-group probes/s, {p['candidates_per_s']:,.0f} in-range candidates/s "
          f"({p['candidates']:,} candidates)")
    m = bench_multiway(args.seed)
    print(f"multi-way join (ATR host), 5 streams: {m['inserts_per_s']:,.0f} inserts/s, "
          f"{m['probes_per_s']:,.0f} buffered-tuple probes/s")


if __name__ == "__main__":
    main()
