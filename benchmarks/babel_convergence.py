"""Babel on Mininet: convergence and control traffic of real babeld on the smoke topology.

Needs root, Mininet and Debian's babeld. The network is the 5-node smoke topology
(``experiments/specs/mininet_smoke_topology.json``, the spec's per-hop delay), every
link up, one babeld per host (:mod:`emulator.mininet.babel`, interfaces of type
wireless). For each hello interval, ``--repeats`` fresh networks measure:

(a) initial convergence: the first daemon started -> every pair has a working route
    (each host's kernel routes followed hop by hop, polled every 50 ms), and -> every
    route is a fewest-hop one (Babel's best on loss-free links; route selection compares
    metrics smoothed over babeld's half-life, so the first routes found stay a while);
(b) after a link break, once the routes have settled and (c) was counted: the link
    (``--break``, default 0-1, which Babel's routes use) goes down in both directions
    (every frame dropped) -> that pair has a working route around it in both directions,
    -> every pair has one again, -> every route is a fewest-hop one again;
(c) control traffic with no data on the network, over ``--window`` seconds starting
    ``--settle`` seconds after the routes settled: bytes and packets babeld sends (UDP
    port 6696, Ethernet headers included) counted on the wire by a packet socket in
    every host, beside the veths' kernel counters. The settling time lets the MLD reports
    of the daemons' multicast joins pass, which are the rest of the traffic at first.

Prints the median and range over the repeats; ``--json`` ends with one JSON line.

Run: ``sudo .venv/bin/python -m benchmarks.babel_convergence [--hello 0.5 1 4]
[--half-life S] [--repeats 5] [--settle 5] [--window 10] [--break 0 1] [--json]``
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import networkx as nx

from emulator.mininet.babel import BABEL_PORT, POLL, BabelDaemons, working_path
from emulator.mininet.emulation import Emulation, LinkSetting

SPECS = Path(__file__).resolve().parents[1] / "experiments" / "specs"

#: Runs in each host: counts the frames it sends on its veths for N seconds, split into
#: Babel's (IPv6, UDP, port 6696) and the rest; says "ready" once listening.
SNIFFER = """
import json, socket, sys, time
port, seconds = int(sys.argv[1]), float(sys.argv[2])
sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))   # ETH_P_ALL
sock.settimeout(0.05)
counts = {"babel_bytes": 0, "babel_packets": 0, "other_bytes": 0, "other_packets": 0}
print("ready", flush=True)
end = time.monotonic() + seconds
while time.monotonic() < end:
    try:
        frame, (dev, _, pkttype, _, _) = sock.recvfrom(65535)
    except TimeoutError:
        continue
    if pkttype != socket.PACKET_OUTGOING or not dev.startswith("to"):
        continue
    babel = (frame[12:14] == b"\\x86\\xdd" and frame[20] == 17
             and port in (int.from_bytes(frame[54:56], "big"),
                          int.from_bytes(frame[56:58], "big")))
    kind = "babel" if babel else "other"
    counts[kind + "_bytes"] += len(frame)
    counts[kind + "_packets"] += 1
print(json.dumps(counts), flush=True)
"""


def smoke_network() -> tuple[list[int], list[tuple[int, int]], float]:
    """Nodes, links and per-hop delay (time units) of the mininet smoke spec."""
    spec = tomllib.loads((SPECS / "mininet_smoke.toml").read_text())
    graph = json.loads((SPECS / spec["topology"]["file"]).read_text())
    nodes = sorted(n["id"] for n in graph["nodes"])
    edges = sorted(tuple(sorted((l["source"], l["target"]))) for l in graph["links"])
    return nodes, edges, float(spec["topology"]["delay"])


def both_ways(edges, setting) -> dict:
    return {(a, b): setting for u, v in edges for a, b in ((u, v), (v, u))}


def control_traffic(em: Emulation, window: float) -> dict:
    """What the hosts send on their veths during ``window`` seconds (module docstring, c)."""
    procs = {n: em.hosts[n].popen([sys.executable, "-c", SNIFFER, str(BABEL_PORT),
                                   str(window)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for n in em.nodes}
    try:
        for n, proc in procs.items():
            if proc.stdout.readline().strip() != "ready":
                raise RuntimeError(f"packet counter of node {n} did not start: "
                                   f"{proc.stderr.read()}")
        before = em.tx_counters()
        counts = {n: json.loads(proc.stdout.readline()) for n, proc in procs.items()}
        after = em.tx_counters()
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait()
    total = {k: sum(c[k] for c in counts.values()) for k in next(iter(counts.values()))}
    total["counter_bytes"] = sum(after[k][0] - before[k][0] for k in after)
    total["counter_packets"] = sum(after[k][1] - before[k][1] for k in after)
    return {k: v / window for k, v in total.items()}


def fewest_hops(nodes, up) -> dict:
    """``{(s, d): hops}`` of the shortest paths over links up in both directions: on
    loss-free links Babel's metric is 256 per hop, so its best routes have these lengths."""
    g = nx.Graph()
    g.add_nodes_from(nodes)
    g.add_edges_from((u, v) for u, v in up if (v, u) in up)
    return {(s, d): n for s, lengths in nx.all_pairs_shortest_path_length(g)
            for d, n in lengths.items() if s != d}


def watch(babel: BabelDaemons, up: set, t0: float, pair=None, limit: float = 300.0) -> dict:
    """Poll the kernel routes from ``t0`` on: seconds until ``pair`` (both directions) has
    a working route, until every reachable pair has one (``routed_s``), and until every
    route is a fewest-hop one (``settled_s``)."""
    best = fewest_hops(babel.em.nodes, up)
    found = {}
    while True:
        babel.check_alive()
        hops = babel.hops()
        now = time.monotonic() - t0
        paths = {k: working_path(hops, up, *k) for k in best}
        if pair is not None and "pair_s" not in found and paths[pair] and \
                paths[pair[::-1]]:
            found["pair_s"] = now
        if "routed_s" not in found and all(paths.values()):
            found["routed_s"] = now
        if "routed_s" in found and all(len(paths[k]) - 1 == n for k, n in best.items()):
            found["settled_s"] = now
            return {**found, "paths": paths}
        if now > limit:
            raise RuntimeError(f"routes not settled after {limit:g} s: {paths}")
        time.sleep(POLL)


def one_run(nodes, edges, delay, hello, half_life, settle, window, link, seed) -> dict:
    em = Emulation(nodes, edges, time_scale=1.0, seed=seed, routes="daemons")
    up = both_ways(edges, LinkSetting(delay=delay))
    down = {k: s for k, s in up.items() if set(k) != set(link)}
    try:
        em.start()
        em.apply(up, {})
        with BabelDaemons(em, hello_interval=hello, half_life=half_life) as babel:
            first = watch(babel, set(up), babel.started_at)
            time.sleep(settle)
            traffic = control_traffic(em, window)
            before = watch(babel, set(up), time.monotonic())["paths"]
            t0 = time.monotonic()
            em.apply(down, {})
            after = watch(babel, set(down), t0, pair=link)
        crossed = [any({(a, b), (b, a)} & {link} for a, b in zip(p, p[1:]))
                   for p in (before[link], before[link[::-1]])]
        return {"initial_s": first["routed_s"], "initial_settled_s": first["settled_s"],
                "pair_s": after["pair_s"], "all_pairs_s": after["routed_s"],
                "settled_s": after["settled_s"], "used_link": any(crossed),
                "paths_before": [before[link], before[link[::-1]]],
                "paths_after": [after["paths"][link], after["paths"][link[::-1]]], **traffic}
    finally:
        em.stop()


def spread(values) -> str:
    return f"{statistics.median(values):.2f} s ({min(values):.2f}-{max(values):.2f})"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hello", type=float, nargs="+", default=[0.5],
                    help="hello intervals to measure, wall seconds (babeld's default for "
                         "wireless interfaces: 4)")
    ap.add_argument("--half-life", type=float, default=None,
                    help="babeld's smoothing-half-life in seconds (default: babeld's, 4)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--settle", type=float, default=5.0,
                    help="seconds between settled routes and counting control traffic")
    ap.add_argument("--window", type=float, default=10.0,
                    help="seconds of idle network over which control traffic is counted")
    ap.add_argument("--break", dest="link", type=int, nargs=2, default=[0, 1],
                    metavar=("U", "V"), help="the link that goes down")
    ap.add_argument("--json", action="store_true", help="end with one JSON line of figures")
    args = ap.parse_args(argv)
    nodes, edges, delay = smoke_network()
    link = tuple(args.link)
    if tuple(sorted(link)) not in edges:
        raise SystemExit(f"--break {link[0]} {link[1]}: not a link of the smoke topology "
                         f"{edges}")
    version = subprocess.run(["babeld", "-V"], capture_output=True, text=True)
    version = (version.stdout + version.stderr).strip()
    half = "babeld's default, 4" if args.half_life is None else f"{args.half_life:g}"
    print(f"smoke topology: {len(nodes)} nodes, {len(edges)} links, {delay * 1000:g} ms per "
          f"hop; {version}, interfaces of type wireless, smoothing half-life {half} s; "
          f"{args.repeats} fresh networks per hello interval")
    figures = {"babeld": version, "half_life_s": args.half_life, "link": list(link),
               "settle_s": args.settle, "window_s": args.window, "hello": {}}
    for hello in args.hello:
        runs = [one_run(nodes, edges, delay, hello, args.half_life, args.settle, args.window,
                        link, seed=i + 1) for i in range(args.repeats)]
        babel_bps = statistics.median(r["babel_bytes"] for r in runs)
        print(f"hello {hello:g} s (full updates every {4 * hello:g} s):")
        print(f"  (a) started -> all {len(nodes) * (len(nodes) - 1)} pairs routed: "
              f"{spread([r['initial_s'] for r in runs])}; -> every route a fewest-hop one: "
              f"{spread([r['initial_settled_s'] for r in runs])}")
        print(f"  (b) link {link[0]}-{link[1]} down -> pair routed around it: "
              f"{spread([r['pair_s'] for r in runs])}; all pairs: "
              f"{spread([r['all_pairs_s'] for r in runs])}; every route a fewest-hop one: "
              f"{spread([r['settled_s'] for r in runs])}")
        print(f"      the pair's routes crossed the link before in "
              f"{sum(r['used_link'] for r in runs)}/{len(runs)} runs; last run's routes "
              f"before {runs[-1]['paths_before']}, after {runs[-1]['paths_after']}")
        print(f"  (c) babeld sends {babel_bps:,.0f} B/s "
              f"({statistics.median(r['babel_packets'] for r in runs):.1f} packets/s) on "
              f"{2 * len(edges)} directed links = {babel_bps / (2 * len(edges)):,.0f} B/s per "
              f"link, {babel_bps / len(nodes):,.0f} B/s per node; everything else "
              f"{statistics.median(r['other_bytes'] for r in runs):,.0f} B/s; veth "
              f"counters {statistics.median(r['counter_bytes'] for r in runs):,.0f} B/s")
        rounded = {k: [round(r[k], 3) for r in runs] for k in
                   ("initial_s", "initial_settled_s", "pair_s", "all_pairs_s", "settled_s")}
        figures["hello"][f"{hello:g}"] = {
            **rounded, "used_link": [r["used_link"] for r in runs],
            "paths_before": [r["paths_before"] for r in runs],
            "babel_bytes_per_s": round(babel_bps, 1),
            "babel_packets_per_s": round(statistics.median(r["babel_packets"] for r in runs), 2),
            "other_bytes_per_s": round(statistics.median(r["other_bytes"] for r in runs), 1),
            "counter_bytes_per_s": round(statistics.median(r["counter_bytes"] for r in runs), 1)}
    if args.json:
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
