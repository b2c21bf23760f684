"""The compiled kernels made ready before anything is timed.

The hop kernel, the trees and a routing protocol's kernels are compiled by numba into
its cache on disk the first time they run, and loaded from it afterwards (under a
second). A benchmark that timed its first run would time that too: :func:`ready` runs
:func:`emulator.deliver` on a line of four nodes for each routing and medium asked,
once as it is and twice with a link breaking under a route (AODV's RERRs are compiled
apart from its RREQs: its HELLO ticks find one link gone, its MAC another, at a relay
that sends a notice), files into AODV's loop what the host's Python files there in a
large run (``aodv.discovery.warm_up``), grows a table of messages seen (only large runs
do), and with the oracle runs :func:`emulator.transport.warm_up` (a transport that keeps a
ledger, which ``deliver`` does not); it says how long it took and whether anything
compiled (the cache missing, or stale after the code changed).

>>> figures = ready(["oracle", "olsr"], ["links"])
>>> sorted(figures), figures["kernel_ready_s"] >= 0
(['kernel_compiled', 'kernel_ready_s'], True)
>>> ready(["oracle", "olsr"], ["links"])["kernel_compiled"]    # loaded now
False
"""
from __future__ import annotations

import sys
import time

import networkx as nx
import pandas as pd


def ready(routings=("oracle",), media=("links", "shared"), macs=()) -> dict:
    """Run each of ``routings`` on each of ``media`` once, on a line of four nodes, and
    the oracle on the shared medium under each of ``macs`` (``deliver``'s ``mac=``
    tables): ``{"kernel_ready_s": seconds, "kernel_compiled": whether numba compiled}``."""
    from emulator.deliver import deliver
    from emulator.transport import warm_up
    from emulator.routing.aodv.discovery import warm_up as aodv_warm_up
    from emulator.routing.seen import SMALLEST, Seen

    graph = nx.path_graph(4)
    nx.set_edge_attributes(graph, 1.0, "cost")
    nx.set_edge_attributes(graph, 0.01, "delay")
    nx.set_edge_attributes(graph, 1e5, "bandwidth")
    # the second message after a HELLO interval and more: every protocol has routes then
    messages = pd.DataFrame({"msg_id": [0, 1], "src": [0, 3], "dst": [3, 0],
                             "sent_at": [3.0, 4.0], "size_bytes": 56})
    before = compilations()
    start = time.perf_counter()
    for medium in media:
        for routing in routings:
            for dynamics in (None, _LinkBreak(graph, (2, 3), 3.5),
                             _LinkBreak(graph, (1, 2), 3.5)):
                deliver(graph, messages, medium=medium, routing=routing,
                        dynamics=dynamics)
    for mac in macs:   # a link breaking gives the MAC new powers mid-run
        for dynamics in (None, _LinkBreak(graph, (2, 3), 3.5)):
            deliver(graph, messages, medium="shared", mac=mac, dynamics=dynamics)
    if macs:
        _reuse_frame_rows()
    if set(routings) - {"oracle"}:
        Seen().reserve(0.0, SMALLEST)   # made again, larger
    if "aodv" in routings:   # what the host's Python files into AODV's loop
        aodv_warm_up()
    if "oracle" in routings:   # a run's ledger too (deliver keeps none)
        warm_up()
    return {"kernel_ready_s": round(time.perf_counter() - start, 2),
            "kernel_compiled": compilations() > before}


def _reuse_frame_rows() -> None:
    """Fill a MAC engine's frame table of one row twice: what a long run does when its
    table is full (the rows of finished frames are found and reused)."""
    import numpy as np

    from emulator.mac.engine import MacEngine, unit_disk_rx_dbm
    from emulator.mac.standards import Dcf80211

    engine = MacEngine(unit_disk_rx_dbm(np.array([[0.0, 0], [1, 0]]), 1.5), Dcf80211(),
                       seed=1, rows=1)
    for handle in range(3):
        engine.enqueue(handle * 0.01, 0, 1, 100, handle=handle)
        engine.advance(handle * 0.01 + 0.005)


class _LinkBreak:
    """``graph``, then from ``at`` on without the link ``edge``: the 4.0 message's route
    breaks (AODV tells the precursors by RERRs: its HELLO ticks find the link (2, 3)
    gone; the MAC fails on (1, 2), at a relay, which tells the source by a notice)."""

    def __init__(self, graph, edge: tuple, at: float):
        self.epochs = [0.0, at]
        self._graphs = (graph, nx.restricted_view(graph, [], [edge]))

    def snapshot(self, t: float):
        return self._graphs[t >= self.epochs[1]]


#: The MAC tables :func:`main` makes ready: each standard, 802.15.4 duty-cycled too.
MACS = ({"model": "802.11"}, {"model": "802.15.4"},
        {"model": "802.15.4", "duty_cycle": "contikimac"})


def main(argv=None) -> int:
    """``python -m emulator.kernels [ROUTING ...] [--mac]``: compile those routings'
    kernels (all of them when none is named) on both media, and the MAC's with
    ``--mac``, into numba's cache, printing :func:`described`'s line. ``make test``
    runs two at once beside its downloads, so that no test compiles them."""
    import argparse

    from emulator.routing import ROUTINGS

    parser = argparse.ArgumentParser(prog="python -m emulator.kernels",
                                     description="Compile the routings' kernels (every routing when "
                                     "none is named) and the MAC's into numba's cache.")
    parser.add_argument("routings", nargs="*", choices=sorted(ROUTINGS), metavar="ROUTING")
    parser.add_argument("--mac", action="store_true", help="the MAC's kernels too")
    args = parser.parse_args(argv)
    figures = ready(args.routings or sorted(ROUTINGS), macs=MACS if args.mac else ())
    print(described(figures))
    return 0


def described(figures: dict) -> str:
    """The line a benchmark prints for :func:`ready`'s figures.

    >>> described({"kernel_ready_s": 0.42, "kernel_compiled": False})
    'compiled kernels ready in 0.42 s (from the cache on disk)'
    """
    how = "compiled now" if figures["kernel_compiled"] else "from the cache on disk"
    return f"compiled kernels ready in {figures['kernel_ready_s']:.2f} s ({how})"


def compilations() -> int:
    """Compilations of the emulator's kernels in this process so far (numba's cache on
    disk missed), over the compiled functions of every ``emulator`` module loaded."""
    from numba.core.dispatcher import Dispatcher

    return sum(sum(f.stats.cache_misses.values())
               for name, module in list(sys.modules.items())
               if name.startswith("emulator") and module is not None
               for f in vars(module).values() if isinstance(f, Dispatcher))


if __name__ == "__main__":
    sys.exit(main())
