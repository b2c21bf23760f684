"""What a packet capture costs, and what its hook costs a run without one.

Scenario: a static random geometric network (``--nodes`` nodes in the unit square, links
of 0.01 time units and 10^5 bytes per unit), ``--messages`` messages of 100 bytes
between random pairs over ``--duration`` units, AODV. Prints one JSON line per case, the
least wall time of ``--repeat`` runs:

- ``links``: :func:`emulator.deliver` on the links medium (AODV's compiled loop);
- ``shared``: on the shared medium (the host's Python path, where the capture's hook
  sits: one test per control transmission), ``queue_max_wait`` 0.5;
- ``links+capture``: the links medium with ``capture=True`` (the Python path, the
  packets kept), and ``write_pcap``: the pcapng file written, frames per second.

The first two are the before/after figure: run the script with ``PYTHONPATH`` at a
checkout without packet captures (it then skips the capture cases) and at one with them.
``--routing`` names another protocol (``rpl``: its root is node 0). With ``--link
802.15.4`` the one case is ``802.15.4+capture``: the run under the 802.15.4 MAC (shared
medium) with a capture, written with 802.15.4 headers (6LoWPAN, IPv6; one frame per
attempt and per ACK).

Run: ``python benchmarks/bench_pcap.py [--nodes 60] [--messages 3000] [--duration 20]
[--repeat 3] [--routing aodv] [--link 802.11]``
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd

import emulator
from emulator import deliver


def scenario(nodes: int, messages: int, duration: float, seed: int = 1):
    """The network (its largest component, renumbered) and the messages."""
    g = nx.random_geometric_graph(nodes, 1.8 * np.sqrt(np.log(nodes) / (np.pi * nodes)),
                                  seed=seed)
    g = nx.convert_node_labels_to_integers(
        g.subgraph(max(nx.connected_components(g), key=len)).copy())
    for e in g.edges:
        g.edges[e].update(cost=1.0, delay=0.01, bandwidth=1e5)
    rng = np.random.default_rng(seed)
    n = g.number_of_nodes()
    src, dst = rng.integers(0, n, messages), rng.integers(0, n, messages)
    keep = src != dst
    msgs = pd.DataFrame({"msg_id": np.arange(keep.sum()), "src": src[keep],
                         "dst": dst[keep],
                         "sent_at": np.sort(rng.uniform(0, duration, keep.sum())),
                         "size_bytes": 100, "key": rng.integers(0, 100, keep.sum())})
    return g, msgs


def timed(repeat: int, fn):
    """``(least wall seconds, last result)`` of ``repeat`` calls."""
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=60)
    ap.add_argument("--messages", type=int, default=3000)
    ap.add_argument("--duration", type=float, default=20.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--routing", default="aodv")
    ap.add_argument("--link", default="802.11", choices=("802.11", "802.15.4"))
    args = ap.parse_args()
    g, msgs = scenario(args.nodes, args.messages, args.duration)
    deliver(g, msgs.head(50), routing=args.routing)   # the kernels loaded (or compiled)
    cases = {"links": {}, "shared": {"medium": "shared", "queue_max_wait": 0.5}}
    can_capture = "capture" in emulator.deliver.__code__.co_varnames
    if can_capture:
        cases["links+capture"] = {"capture": True}
    if args.link == "802.15.4":
        cases = {"802.15.4+capture": {"capture": True, "medium": "shared",
                                      "mac": {"model": "802.15.4"}}}
    kept = None
    for name, options in cases.items():
        wall, out = timed(args.repeat, lambda: deliver(g, msgs, routing=args.routing,
                                                       seed=1, **options))
        print(json.dumps({"case": name, "nodes": g.number_of_nodes(),
                          "messages": len(msgs), "wall_s": round(wall, 3),
                          "control": int(len(out.attrs["control"])),
                          "delivered": int((~out["lost"]).sum())}))
        if options.get("capture"):
            kept = out
    if kept is not None:
        path = Path(tempfile.mkdtemp()) / "run.pcapng"
        wall, _ = timed(args.repeat, lambda: emulator.write_pcap(kept, path,
                                                                 link=args.link))
        ledger = kept.attrs["ledger"]
        frames = len(ledger) if "attempts" not in ledger else int(
            ledger["attempts"].sum() + ((~ledger["lost"]) & (ledger["hop_v"] >= 0)).sum())
        print(json.dumps({"case": "write_pcap", "frames": frames, "wall_s": round(wall, 3),
                          "frames_per_s": round(frames / wall),
                          "mib": round(path.stat().st_size / 2 ** 20, 2)}))


if __name__ == "__main__":
    main()
