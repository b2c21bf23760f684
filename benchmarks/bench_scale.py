"""The network alone at scale: 1,000 mobile nodes, a million messages, both media; and
the routing protocols beside the oracle.

Scenario (issue "Network core"): a 1,000-node random geometric network (unit square) with
random-waypoint mobility, ``--messages`` messages between random pairs of nodes sent
uniformly over ``--duration`` time units, delivered by :func:`emulator.deliver` on the
``links`` and on the ``shared`` medium. Prints, per medium, one JSON line: wall time,
peak RSS of the process so far (``resource.getrusage``), hops and hops per second. Goals:
links under 10 s, shared under 15 s, under 1.5 GiB (issue "A compiled hop kernel").
Before the runs it prints what the oracle's trees alone cost here (:func:`tree_bound`):
at 10^6 messages every tree of every epoch is asked for, so no run is faster than that.

Routing (issue "Speed"): ``--routing aodv`` or ``olsr`` (or a list, ``all`` for the
oracle, AODV and OLSR in turn) runs ``deliver(..., routing=...)`` on the same network and
messages: each line adds the control messages (total, per simulated second, by type),
the delivery ratio and, after an oracle run on the same medium, the wall time's ratio
to the oracle's. Goal: AODV and OLSR each within 3x of the oracle's wall time at 200
nodes and 10^5 messages (``--nodes 200 --messages 100000 --routing all``).

Before any run is timed, the compiled kernels the routings and media ask for are
loaded, or compiled when numba's cache on disk is missing or stale: every line reports
how long that took (``kernel_ready_s``) and whether anything compiled
(``kernel_compiled``).

Time units: nodes move 0.002-0.01 of the square's side per unit and a hop takes 0.01
unit, so with a unit of one second on a square of 1 km (radio range ~165 m at 200 nodes)
they walk or cycle at 2-10 m/s and a hop takes 10 ms: the RFCs' timers in seconds fit
as they are, and ``--seconds-per-unit`` defaults to 1 (``routing_options``).

Run: ``python benchmarks/bench_scale.py [--nodes 1000] [--messages 1000000] [--duration 100]
[--media links,shared] [--bandwidth 1e5] [--prefetch auto|on|off]
[--routing oracle|aodv|olsr|all] [--seconds-per-unit 1] [--mac ideal|802.11|802.15.4]
[--repeat 1]``
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import time

import numpy as np
import pandas as pd

import topologies
from emulator import deliver, kernels
from emulator.network import Network, all_next_hops, prefetch_workers

#: What ``--routing`` may name; ``all`` is the three in turn, the oracle first.
ROUTINGS = ("oracle", "aodv", "olsr")


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


def routings(text: str) -> list[str]:
    """``--routing``'s names in order (``all``: the oracle, AODV, OLSR).

    >>> routings("all"), routings("aodv,olsr")
    (['oracle', 'aodv', 'olsr'], ['aodv', 'olsr'])
    """
    names = list(ROUTINGS) if text == "all" else text.split(",")
    for name in names:
        if name not in ROUTINGS:
            raise argparse.ArgumentTypeError(
                f"expected {', '.join(ROUTINGS)} or all (comma-separated), got {name!r}")
    return names


def tree_bound(dynamics, epochs: int = 3) -> dict:
    """What the oracle's trees alone cost on this network, timed before any run: the
    compiled search's microseconds a tree (all of an epoch's trees, the first ``epochs``
    epochs, best of them), the CPU seconds of every tree of every epoch, and that over
    :func:`~emulator.network.prefetch_workers` workers: the least wall time of a run that
    asks for most trees of most epochs (10^6 messages on 1,000 nodes does), however fast
    its hops. Assumes the epochs alike; a view that cannot be routed compiled is skipped,
    and with none that can (zero-cost links) there is no bound: ``{}``.

    >>> topo, dynamics = mobile_network(30, 3.0, seed=1)
    >>> bound = tree_bound(dynamics, epochs=1)
    >>> bound["trees"] == 30 * len(dynamics.epochs), bound["tree_us"] > 0
    (True, True)
    """
    network = Network(dynamics)
    best, nodes = float("inf"), 0
    for k in range(min(epochs, len(network.epochs))):
        links = network.build_view(k).routing_links()
        if links is None:
            continue
        nodes = len(links[0]) - 1
        start = time.perf_counter()
        all_next_hops(*links)
        best = min(best, (time.perf_counter() - start) / nodes)
    if not nodes:
        return {}
    trees = nodes * len(network.epochs)
    workers = prefetch_workers()
    return {"tree_us": round(best * 1e6, 1), "trees": trees,
            "trees_cpu_s": round(best * trees, 1), "tree_workers": workers,
            "trees_bound_s": round(best * trees / workers, 1)}


def control_figures(out: pd.DataFrame, seconds: float) -> dict:
    """A protocol's control traffic from :func:`deliver`'s attrs: messages by type, their
    total, per simulated second (``seconds``), and the data hops besides them."""
    sent = out.attrs["routing"]["control_sent"]
    total = sum(sent.values())
    return {"control_messages": total,
            "control_per_s": round(total / seconds, 1),
            "control_by_type": dict(sorted(sent.items())),
            "control_per_s_by_type": {kind: round(n / seconds, 1)
                                      for kind, n in sorted(sent.items())},
            "data_hops": out.attrs["hops"] - len(out.attrs["control"])}


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
    ap.add_argument("--routing", type=routings, default=["oracle"],
                    help="oracle (default), aodv, olsr, a comma-separated list, or all "
                         "(the three in turn)")
    ap.add_argument("--seconds-per-unit", type=float, default=1.0,
                    help="routing_options' seconds_per_unit: the RFC timers are scaled by "
                         "it (default 1: a time unit is a second)")
    ap.add_argument("--mac", choices=("ideal", "802.11", "802.15.4"), default="ideal",
                    help="[mac] model under the shared medium (default ideal: the perfect "
                         "scheduler); its figures join the shared medium's lines")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs of each routing and medium; wall time as min and median")
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
    options = {"seconds_per_unit": args.seconds_per_unit}
    ready = kernels.ready(args.routing, args.media.split(","))
    print(kernels.described(ready), flush=True)
    bound = tree_bound(dynamics) if "oracle" in args.routing else {}
    if bound:
        print(f"trees: {bound['trees']:,} at {bound['tree_us']:.0f} us each, "
              f"{bound['trees_cpu_s']:.1f} s of CPU, at least {bound['trees_bound_s']:.1f} s "
              f"on {bound['tree_workers']} worker(s) if a run asks for most of them",
              flush=True)
    for medium in args.media.split(","):
        oracle_wall = None
        for routing in args.routing:
            walls = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                out = deliver(topo.graph, messages, medium=medium, seed=args.seed,
                              dynamics=dynamics, prefetch_trees=prefetch, routing=routing,
                              routing_options=None if routing == "oracle" else options,
                              mac={"model": args.mac} if medium == "shared" else None)
                walls.append(time.perf_counter() - start)
            wall = statistics.median(walls)
            delivered = int(out["arrived_at"].notna().sum())
            figures = {"medium": medium, "routing": routing, "prefetch": args.prefetch,
                       "wall_s": round(wall, 2), "wall_min_s": round(min(walls), 2),
                       "runs": len(walls), "peak_rss_mib": round(peak_rss_mib(), 1),
                       "delivered": delivered,
                       "delivery_ratio": round(delivered / args.messages, 4),
                       "lost": out.loc[out["lost"], "loss_reason"].value_counts().to_dict(),
                       "hops": out.attrs["hops"], "hops_per_s": round(out.attrs["hops"] / wall),
                       "messages_per_s": round(args.messages / wall), **ready}
            if "mac" in out.attrs:
                figures.update(mac=args.mac, **out.attrs["mac"])
            if routing == "oracle":
                oracle_wall = wall
                figures.update(bound)
            else:
                figures.update(control_figures(out, args.duration * args.seconds_per_unit))
                if oracle_wall is not None:
                    figures["ratio_to_oracle"] = round(wall / oracle_wall, 2)
            print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()
