"""The emulated routing protocols on the smoke topology: convergence and control traffic,
the figures ``benchmarks/babel_convergence.py`` measures of the real babeld on Mininet.

The network is the 5-node smoke topology (``experiments/specs/mininet_smoke_topology.json``,
the spec's 10 ms per hop, no loss, unlimited bandwidth), every link up, one protocol
instance per node (:class:`emulator.routing.host.RoutedTransport`, virtual time, one time
unit = one second). For each protocol and seed it measures, polling the nodes' tables
every 50 ms (``Protocol.route``: what each node believes, followed hop by hop over the
links that are up):

(a) initial convergence: start -> every pair has a working route, -> every route is a
    fewest-hop one;
(b) after ``--settle`` seconds, the link ``--break`` (default 0-1) goes down -> that pair
    has a working route around it in both directions, -> every pair has one again;
(c) control traffic with no data on the network over the ``--window`` seconds before the
    break: bytes (IP and UDP headers included, no link-layer header) and packets per
    second, in total and per directed link.

AODV is reactive: with no data it keeps no routes, so only its control traffic is
reported. ``--hello`` sets every protocol's hello interval (seconds); OLSR's TC interval
and Babel's update interval keep their RFC ratios to it (2.5 and 4).

Run: ``.venv/bin/python -m benchmarks.routing_convergence [--routing olsr babel aodv]
[--hello 0.5] [--repeats 5] [--settle 30] [--window 10] [--break 0 1] [--json]``
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import networkx as nx

from emulator.network import Network
from emulator.routing.host import RoutedTransport
from emulator.routing.params import resolve
from topologies.node_link import read_json

SPECS = Path(__file__).resolve().parents[1] / "experiments" / "specs"
POLL = 0.05


class _Epochs:
    def __init__(self, times, graphs):
        self.epochs, self.graphs = list(times), [nx.freeze(g) for g in graphs]

    def snapshot(self, t):
        return self.graphs[max(k for k, s in enumerate(self.epochs) if s <= t)]


def smoke_graph() -> nx.Graph:
    """The smoke topology with the smoke spec's link settings."""
    graph = read_json(SPECS / "mininet_smoke_topology.json").graph
    g = nx.Graph()
    g.add_nodes_from(graph.nodes)
    for u, v in graph.edges:
        g.add_edge(u, v, cost=1.0, delay=0.01, jitter=0.0, bandwidth=float("inf"), loss=0.0)
    return g


def working(protocol, graph, t: float, u: int, v: int) -> list | None:
    """The path ``u``'s tables give towards ``v`` over links up in ``graph``, or None."""
    path = [u]
    while path[-1] != v:
        hop = protocol.route(t, path[-1], v)
        if hop is None or not graph.has_edge(path[-1], hop) or len(path) > len(graph):
            return None
        path.append(hop)
    return path


def params(routing: str, hello: float) -> dict:
    table = {"aodv": {"hello_interval": hello},
             "olsr": {"hello_interval": hello, "tc_interval": 2.5 * hello,
                      "neighb_hold_time": 3 * hello, "top_hold_time": 7.5 * hello,
                      "maxjitter": hello / 4},
             "babel": {"hello_interval": hello, "update_interval": 4 * hello}}[routing]
    return resolve(routing, {routing: table})


def one_run(routing: str, hello: float, seed: int, settle: float, window: float,
            link: tuple) -> dict:
    g = smoke_graph()
    broken = g.copy()
    broken.remove_edge(*link)
    horizon = settle + 120.0
    transport = RoutedTransport(Network(_Epochs([0.0, settle], [g, broken])), None, seed,
                                routing=routing, routing_params=params(routing, hello),
                                horizon=horizon)
    protocol, nodes = transport.protocol, sorted(g.nodes)
    pairs = [(u, v) for u in nodes for v in nodes if u != v]
    hops = dict(nx.all_pairs_shortest_path_length(g))
    found: dict = {}
    started = time.perf_counter()
    t = 0.0
    while routing != "aodv" and t < horizon and len(found) < 4:
        t = round(t + POLL, 9)
        transport.advance(t)
        graph = g if t < settle else broken
        paths = {p: working(protocol, graph, t, *p) for p in pairs}
        if t < settle:
            if "all_routed" not in found and all(paths.values()):
                found["all_routed"] = t
            if "fewest_hop" not in found and all(
                    paths[p] and len(paths[p]) - 1 == hops[p[0]][p[1]] for p in pairs):
                found["fewest_hop"] = t
        else:
            if "pair_rerouted" not in found and paths[link] and paths[link[::-1]]:
                found["pair_rerouted"] = t - settle
            if "all_rerouted" not in found and all(paths.values()):
                found["all_rerouted"] = t - settle
    transport.advance(max(t, settle))   # the window's traffic is all in by the break
    log = [(at, size) for at, _, _, size in transport.control_log
           if settle - window <= at < settle]
    directed = 2 * g.number_of_edges()
    return {"routing": routing, "hello": hello, "seed": seed, **found,
            "control_bytes_per_s": sum(s for _, s in log) / window,
            "control_bytes_per_s_per_link": sum(s for _, s in log) / window / directed,
            "control_packets_per_s": len(log) / window,
            "wall_s": time.perf_counter() - started}


def spread(values) -> str:
    values = [v for v in values if v is not None]
    if not values:
        return "never"
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--routing", nargs="+", default=["olsr", "babel"],
                    choices=["aodv", "olsr", "babel"])
    ap.add_argument("--hello", type=float, nargs="+", default=[0.5],
                    help="hello intervals, seconds (babeld's on Mininet: 0.5)")
    ap.add_argument("--repeats", type=int, default=5, help="seeds 1..N")
    ap.add_argument("--settle", type=float, default=30.0, help="seconds before the break")
    ap.add_argument("--window", type=float, default=10.0,
                    help="seconds of control traffic counted before the break")
    ap.add_argument("--break", dest="link", type=int, nargs=2, default=[0, 1])
    ap.add_argument("--json", action="store_true", help="one JSON line per protocol")
    args = ap.parse_args(argv)
    for routing in args.routing:
        for hello in args.hello:
            runs = [one_run(routing, hello, seed, args.settle, args.window, tuple(args.link))
                    for seed in range(1, args.repeats + 1)]
            keys = {key for r in runs for key in r}
            figures = {key: [r.get(key) for r in runs] for key in keys}
            routes = "reactive: no routes without data" if routing == "aodv" else (
                f"all pairs routed {spread(figures['all_routed'])} s, fewest-hop "
                f"{spread(figures['fewest_hop'])} s; after the break of "
                f"{args.link[0]}-{args.link[1]}: pair rerouted "
                f"{spread(figures['pair_rerouted'])} s, all pairs "
                f"{spread(figures['all_rerouted'])} s")
            print(f"{routing}, hello {hello:g} s, {args.repeats} seeds: {routes}; control "
                  f"{statistics.median(figures['control_bytes_per_s']):,.0f} B/s "
                  f"({statistics.median(figures['control_bytes_per_s_per_link']):,.0f} per "
                  f"directed link, {statistics.median(figures['control_packets_per_s']):.1f}"
                  f" packets/s); wall {statistics.median(figures['wall_s']):.2f} s per run")
            if args.json:
                print(json.dumps({"routing": routing, "hello": hello, "runs": runs}))


if __name__ == "__main__":
    main()
