"""Speed of the join cores: the exact-answer oracle, its count-only path, and the
incremental multi-way join, on the SMJ paper's workload and on a soccer distance join.

Run: ``python benchmarks/bench_join.py [--tuples 100000]``
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from spark_nodes.algorithms.multiway import MultiwayJoin
from spark_nodes.algorithms.oracle import count_groups, exact_groups
from spark_nodes.workload.soccer import soccer_streams
from spark_nodes.workload.sources import generate_streams


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tuples", type=int, default=100_000)
    args = ap.parse_args()

    cfg = {"count": 3, "rate": 5.0, "key_domain": 20}
    data = generate_streams(cfg, {"R1": 0, "R2": 1, "R3": 2}, args.tuples / 15, seed=1)
    n = sum(map(len, data.values()))
    windows = {s: 3.0 for s in data}
    groups, t_oracle = timed(lambda: exact_groups(data, windows, "equality"))
    _, t_count = timed(lambda: count_groups(data, windows, "equality"))
    arrivals = sorted((t for stream in data.values() for t in stream), key=lambda t: t.ts)
    join = MultiwayJoin(list(data), windows, "equality", retention=0.0)
    found, t_inc = timed(lambda: sum(len(join.insert(t)) for t in arrivals))
    print(f"equality join, {n} tuples, 3 streams, window 3, keys 1..20: {len(groups)} groups")
    print(f"  oracle                 {t_oracle:6.2f} s  ({n / t_oracle:10,.0f} tuples/s)")
    print(f"  oracle, count only     {t_count:6.2f} s  ({n / t_count:10,.0f} tuples/s)")
    print(f"  MultiwayJoin in order  {t_inc:6.2f} s  ({n / t_inc:10,.0f} tuples/s, {found} groups)")

    soccer = soccer_streams(np.random.default_rng(1), duration=60.0, players=8, ball_hz=200.0,
                            player_hz=25.0)
    n = sum(map(len, soccer.values()))
    count, t_dist = timed(lambda: count_groups(soccer, {"R": 2.0, "S": 2.0}, "distance", 5.0))
    print(f"distance join (soccer, 60 s, {n} tuples, 5 m, 2 s): {count} groups, "
          f"count only {t_dist:.2f} s")


if __name__ == "__main__":
    main()
