"""The network alone at scale: 1,000 mobile nodes, a million messages, both media.

Scenario (issue "Network core"): a 1,000-node random geometric network (unit square) with
random-waypoint mobility, ``--messages`` messages between random pairs of nodes sent
uniformly over ``--duration`` time units, delivered by :func:`emulator.deliver` on the
``links`` and on the ``shared`` medium. Prints, per medium, one JSON line: wall time,
peak RSS of the process so far (``resource.getrusage``), hops and hops per second. Goal: under 60 s and
under 2 GiB per medium on a 2-core machine.

Run: ``python benchmarks/bench_scale.py [--nodes 1000] [--messages 1000000] [--duration 100]
[--media links,shared] [--bandwidth 1e5] [--prefetch auto|on|off]``
"""
from __future__ import annotations

import argparse
import json
import resource
import time

import numpy as np
import pandas as pd

import topologies
from emulator import deliver


def mobile_network(nodes: int, duration: float, seed: int, bandwidth: float = 1e5):
    """A connected random geometric topology of ``nodes`` nodes and its mobility epochs."""
    radius = 1.8 * np.sqrt(np.log(nodes) / (np.pi * nodes))   # connected with high probability
    topo = topologies.apply_link_cost(
        topologies.random_geometric(nodes, float(radius), seed=seed, max_attempts=1000),
        "distance")
    for u, v in topo.graph.edges:
        topo.graph.edges[u, v].update(delay=0.01, bandwidth=bandwidth)
    moves = topologies.random_waypoint(topo.nodes, duration, (0.002, 0.01), 1.0, seed=seed + 1,
                                       start=topo.positions)
    return topo, topologies.mobility_dynamics(topo, moves, duration=duration, resolution=1.0)


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far, MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--duration", type=float, default=100.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--media", default="links,shared")
    # At 10^4 messages per time unit and 1e5 bytes per unit, the offered airtime in a
    # two-hop neighbourhood is 2-3.5 units per unit: the shared channel saturates and the
    # backlog (and each instant's conflict check) grows without bound. That measures the
    # load, not the emulator: --bandwidth 1e6 keeps the shared channel below saturation.
    ap.add_argument("--bandwidth", type=float, default=1e5,
                    help="link bandwidth, bytes per time unit (default 1e5)")
    ap.add_argument("--prefetch", choices=("auto", "on", "off"), default="auto",
                    help="deliver's prefetch_trees: auto (its rule), on or off")
    args = ap.parse_args()
    prefetch = {"auto": None, "on": True, "off": False}[args.prefetch]

    t = time.perf_counter()
    topo, dynamics = mobile_network(args.nodes, args.duration, args.seed, args.bandwidth)
    rng = np.random.default_rng(args.seed)
    src = rng.integers(args.nodes, size=args.messages)
    dst = (src + rng.integers(1, args.nodes, size=args.messages)) % args.nodes
    messages = pd.DataFrame({"msg_id": np.arange(args.messages), "src": src, "dst": dst,
                             "sent_at": np.sort(rng.uniform(0, args.duration, args.messages)),
                             "size_bytes": 56})
    print(f"network: {args.nodes} nodes, {len(dynamics.epochs)} epochs, "
          f"{args.messages:,} messages (set-up {time.perf_counter() - t:.1f} s)")
    for medium in args.media.split(","):
        start = time.perf_counter()
        out = deliver(topo.graph, messages, medium=medium, seed=args.seed, dynamics=dynamics,
                      prefetch_trees=prefetch)
        wall = time.perf_counter() - start
        delivered = int(out["arrived_at"].notna().sum())
        figures = {"medium": medium, "prefetch": args.prefetch, "wall_s": round(wall, 2),
                   "peak_rss_mib": round(peak_rss_mib(), 1), "delivered": delivered,
                   "lost": out.loc[out["lost"], "loss_reason"].value_counts().to_dict(),
                   "hops": out.attrs["hops"], "hops_per_s": round(out.attrs["hops"] / wall),
                   "messages_per_s": round(args.messages / wall)}
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
