"""Cost of building a mobile topology's epochs and snapshots.

A 200-node random geometric graph with ETX link costs, random-waypoint mobility over 100
time units sampled every time unit (100 epochs). Prints the time to generate, to build
the epochs, to build every snapshot, and of a cached ``snapshot(t)`` look-up.

Run: ``python benchmarks/bench_dynamics.py``
"""
from __future__ import annotations

import time

import topologies


def main() -> None:
    t0 = time.perf_counter()
    topo = topologies.apply_link_cost(
        topologies.random_geometric(200, 0.15, seed=1, max_attempts=1000), "etx")
    t1 = time.perf_counter()
    moves = topologies.random_waypoint(topo.nodes, 100.0, (0.005, 0.02), 1.0, seed=2,
                                       start=topo.positions)
    t2 = time.perf_counter()
    dyn = topologies.mobility_dynamics(topo, moves, duration=100.0, resolution=1.0)
    t3 = time.perf_counter()
    for epoch in dyn.epochs:
        dyn.snapshot(epoch)
    t4 = time.perf_counter()
    lookups = 100_000
    for _ in range(lookups):
        dyn.snapshot(57.3)
    t5 = time.perf_counter()
    print(f"generate 200-node graph:     {t1 - t0:8.2f} s")
    print(f"random waypoint:             {t2 - t1:8.3f} s")
    print(f"build {len(dyn.epochs):3d} epochs:            {t3 - t2:8.2f} s")
    print(f"build every snapshot:        {t4 - t3:8.2f} s")
    print(f"cached snapshot(t) look-up:  {1e6 * (t5 - t4) / lookups:8.2f} us")


if __name__ == "__main__":
    main()
