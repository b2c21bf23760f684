"""RPL on a 50-node random field for a simulated hour: speed, control traffic, delivery,
and the tree's hop counts against the oracle's fewest hops.

The field is a connected random unit-disk graph (``--nodes``, ``--radius``, seed 3),
links of 10 ms and 250 kbit/s (802.15.4's rate), each with a fixed loss drawn from
``--losses`` (default 0: lossless). Node 0 is the root; every other node sends it a
50-byte packet every ``--every`` seconds (a collection tree's traffic) and the root
answers each tenth with a packet down to its sender (storing mode's downward routes),
for ``--hour`` seconds of virtual time, after the tree formed (no warm-up: the
first packets may find no parent yet). One time unit is one second.

Printed per objective function: wall seconds of the run (the transport, the protocol
and its timers, one core), DIO, DIS and DAO counts, delivery ratio up and down, and the
hop-count distribution of the final tree beside the oracle's (fewest hops over links
up).

With ``--algorithm NAME`` it also times a whole run of the testbed (the spec below: the
same 50-node field size, 4 streams at 0.2 tuples/s, a 30 s window at node 0, the hour
with a minute of warm-up) under the oracle and under RPL (``dao_delay = 0.1``: the
routes down are in before the sources' first messages, see NOTES.md), printing wall
seconds, recall, latency and control traffic.

Run: ``.venv/bin/python -m benchmarks.bench_rpl [--nodes 50] [--hour 3600]
[--every 10] [--losses 0 0.1 0.3] [--algorithm lottery] [--json]``
"""
from __future__ import annotations

import argparse
import json
import time
from collections import Counter

import networkx as nx
import numpy as np

from contract.messages import Message
from emulator.network import Network
from emulator.routing.host import RoutedTransport
from emulator.routing.params import resolve


class _Epochs:
    def __init__(self, graph):
        self.epochs, self.graph = [0.0], nx.freeze(graph)

    def snapshot(self, t):
        return self.graph


def field(nodes: int, radius: float, losses: list[float], seed: int = 3) -> nx.Graph:
    """A connected random unit-disk field with fixed link losses."""
    while True:
        g = nx.random_geometric_graph(nodes, radius, seed=seed)
        if nx.is_connected(g):
            break
        seed += 1000
    rng = np.random.default_rng(seed)
    for e in g.edges:
        g.edges[e].update(cost=1.0, delay=0.01, bandwidth=250_000 / 8,
                          loss=float(rng.choice(losses)))
    return g


def depths(tree: dict, root: int) -> dict:
    out = {}
    for u in tree:
        hops, v = 0, u
        while v != root and v is not None and hops <= len(tree):
            v, hops = tree[v], hops + 1
        out[u] = hops if v == root else None
    return out


def measure(graph: nx.Graph, objective: str, hour: float, every: float) -> dict:
    tr = RoutedTransport(Network(_Epochs(graph)), None, seed=1, routing="rpl",
                         routing_params=resolve("rpl", {"rpl": {"objective": objective}}),
                         horizon=hour)
    k, up, down = 0, set(), set()
    for i in range(int(hour / every)):
        for u in sorted(graph):
            if u == 0:
                continue
            t = i * every + 0.01 * u
            tr.send(Message(k, "data", u, 0, t, 1.0, 50, None))
            up.add(k)
            k += 1
            if i % 10 == 5:
                tr.send(Message(k, "data", 0, u, t + 0.5, 1.0, 50, None))
                down.add(k)
                k += 1
    start = time.perf_counter()
    tr.advance(hour + 60.0)
    wall = time.perf_counter() - start
    arrived = {m.msg_id for _, m in tr.arrivals}
    mine = depths(tr.protocol.tree(), 0)
    oracle = nx.single_source_shortest_path_length(graph, 0)
    sent = tr.control_sent
    return {"objective": objective, "wall_s": round(wall, 2),
            "dio": sent["DIO"], "dis": sent["DIS"], "dao": sent["DAO"],
            "delivery_up": round(len(up & arrived) / len(up), 4),
            "delivery_down": round(len(down & arrived) / len(down), 4),
            "drops": dict(tr.lost),
            "hops_rpl": dict(sorted(Counter(mine.values()).items(), key=str)),
            "hops_oracle": dict(sorted(Counter(oracle.values()).items())),
            "mean_hops_rpl": round(float(np.mean([h for h in mine.values()
                                                  if h is not None])), 3),
            "mean_hops_oracle": round(float(np.mean(list(oracle.values()))), 3)}


def spec_run(routing: str, algorithm: str, nodes: int, hour: float) -> dict:
    """A whole run of ``algorithm`` over ``routing`` (see the module docstring)."""
    import tempfile

    from experiments.runner import run

    spec = {"run": {"name": "bench-rpl", "duration": hour, "step": 1.0, "seed": 1,
                    "warmup": 60.0},
            "topology": {"generator": "random_geometric", "nodes": nodes, "radius": 0.25,
                         "delay": 0.01},
            "streams": {"count": 4, "rate": 0.2, "key_domain": 20},
            "query": {"node": 0, "window": 30.0},
            "algorithm": {"name": algorithm},
            "network": {"routing": routing},
            "routing": {"rpl": {"dao_delay": 0.1}} if routing == "rpl" else {}}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        summary = run(spec, out=folder).summary
    keys = ("recall", "results", "latency_mean", "messages", "routing_control_messages",
            "routing_control_bytes")
    return {"routing": routing, "algorithm": algorithm,
            "wall_s": round(time.perf_counter() - start, 2),
            **{k: summary.get(k) for k in keys}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=50)
    ap.add_argument("--radius", type=float, default=0.25)
    ap.add_argument("--hour", type=float, default=3600.0)
    ap.add_argument("--every", type=float, default=10.0)
    ap.add_argument("--losses", type=float, nargs="+", default=[0.0])
    ap.add_argument("--algorithm", help="also time a whole run of this algorithm")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    graph = field(args.nodes, args.radius, args.losses)
    rows = [measure(graph, objective, args.hour, args.every) for objective in ("of0", "mrhof")]
    runs = [] if args.algorithm is None else [
        spec_run(routing, args.algorithm, args.nodes, args.hour) for routing in ("oracle", "rpl")]
    if args.json:
        print(json.dumps(rows + runs, indent=1))
        return 0
    print(f"RPL, {args.nodes} nodes, {graph.number_of_edges()} links, losses {args.losses}, "
          f"{args.hour:g} s simulated, a packet up every {args.every:g} s per node")
    for r in rows:
        print(f"  {r['objective']:5s} wall {r['wall_s']:6.2f} s | DIO {r['dio']} DIS "
              f"{r['dis']} DAO {r['dao']} | delivered up {r['delivery_up']:.4f} down "
              f"{r['delivery_down']:.4f} | drops {r['drops']}")
        print(f"        hops rpl {r['hops_rpl']} (mean {r['mean_hops_rpl']}) | oracle "
              f"{r['hops_oracle']} (mean {r['mean_hops_oracle']})")
    for r in runs:
        print(f"  whole run, {r['algorithm']} over {r['routing']}: wall {r['wall_s']} s | "
              f"recall {r['recall']} ({r['results']} results) | latency "
              f"{r['latency_mean']:.3f} | {r['messages']} messages | control "
              f"{r['routing_control_messages']} packets, {r['routing_control_bytes']} B")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
