"""CTR — constrained tuple routing, the diffusion node's part (docs/ALGORITHMS.md#ctr).

[source] Every stream is cut into segments of length ``T``; each segment ``η = S_i[t,
t+T)`` gets a whole route (source routing) along its probe sequence ``S_i1 .. S_i(n-1)``:
hop 1 is a greedy weighted set cover of the segments of ``S_i1`` in window, found in the
routing table; hop ``k`` first reuses the hosts of hop ``k-1`` for the segments they hold
and covers the rest with a new greedy cover; each segment is probed by exactly one host
of its hop (duplicate avoidance). Intermediate results travel hop to hop and are not
stored; ``η`` is stored for later segments and recorded in the routing table.

How the testbed makes every group come out exactly once:

- **Owner of a group.** Segments are routed in *rank* order ``(g, stream position)``
  (grid index first). A group is produced by the route of its member segment of highest
  rank: that route's hops cover, in the table, every already-routed segment of the other
  streams in window with ``η``; segments routed later are not in the table yet and own
  the groups they share with ``η`` themselves.
- **Intermediates** are sent from every host of hop ``k`` to every host of hop ``k+1``
  (to itself locally), even when empty; a host of hop ``k+1`` gathers the parts from all
  hosts of hop ``k`` and then probes once. So each (host, hop) of a route is one probe
  task, the table counts the tasks per stored copy and the release of a dead segment
  carries the count (:mod:`.routing_table`): a host drops the copy after that many
  probes, whatever the arrival order.
- **Closing** as in ATR: a flush at watermark ``wm`` routes every segment that ends at
  or before ``wm``; a tuple arriving below the routed watermark is late (dropped,
  counted).
- **Cuts** (``[trigger.ctr]``): a window trigger ends the open segment early
  (:meth:`CtrRouter.cut`); the grid restarts there (:class:`~.segments.Grid`), for
  every stream at once, beyond everything routed, so the owner rule above still holds.
- **Storage** (option ``store``): ``"cover"`` [source] stores ``η`` on every host of its
  hop 1 (the least-loaded host when ``η`` has nothing to probe). Because a cover only
  uses hosts that already hold segments, this never spreads data to a new host;
  ``"llf"`` [recon] stores ``η`` on the least-loaded host instead (hop 1 still receives it
  to probe), which spreads storage and lets the covers use every host.

Examples
--------
>>> from spark_nodes.algorithms.ctr.load import LoadBoard
>>> from spark_nodes.workload.tuples import StreamTuple as T
>>> board = LoadBoard([1, 2], (0.0, 1.0, 0.0), (1.0, 100.0, 1.0), 1.0)
>>> r = CtrRouter(["A", "B"], {"A": 1.0, "B": 1.0}, 1.0, board, store="llf")
>>> for t in [T("A", 0, 0.2, 1, None, None, 0), T("B", 0, 0.5, 1, None, None, 0)]:
...     _ = r.add(t)
>>> [(rt.seg, rt.store, rt.hops) for rt, _ in r.flush(1.0)]
[(('A', 0), (1,), ()), (('B', 0), (2,), (((1, (('A', 0),)),),))]
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from spark_nodes.algorithms.ctr.probe import probe_sequence
from spark_nodes.algorithms.ctr.routing_table import RoutingTable
from spark_nodes.algorithms.ctr.segments import Grid, widen
from spark_nodes.algorithms.ctr.set_cover import assign_probers, greedy_cover

STORE_MODES = ("cover", "llf")


class Route(NamedTuple):
    """The route of segment ``seg = (stream, g)``.

    ``store``: hosts that keep the segment; ``hops[k]``: ``((host, (seg, ...)), ...)`` —
    the hosts of hop ``k+1`` and the segments each of them probes.
    """

    seg: tuple
    sequence: tuple
    store: tuple
    hops: tuple

    def receivers(self) -> tuple:
        """Hosts that get the segment itself: storage hosts and hop-1 hosts."""
        first = {h for h, _ in self.hops[0]} if self.hops else set()
        return tuple(sorted(first | set(self.store)))


class CtrRouter:
    """The CTR diffusion logic: buffer, cut, route segments, expire the table.

    Parameters
    ----------
    streams : sequence of str
    windows : mapping of str to float
        Windows (``inf`` = unbounded).
    length : float
        Segment length ``T``.
    board : LoadBoard
        Host loads (set-cover weights, LLF).
    store : {"cover", "llf"}
        Where a segment is stored (see the module docstring).
    """

    def __init__(self, streams: Sequence[str], windows: Mapping[str, float], length: float,
                 board, store: str = "cover"):
        if not length > 0:
            raise ValueError(f"segment length must be > 0, got {length!r}")
        if store not in STORE_MODES:
            raise ValueError(f"store: expected one of {', '.join(STORE_MODES)}, got {store!r}")
        self.streams = list(streams)
        self.windows = {s: float(windows[s]) for s in self.streams}
        self.length = float(length)
        self.board = board
        self.store = store
        self.grid = Grid(self.length)
        self.table = RoutingTable(self.grid)
        self.stats: dict[tuple, list] = {}
        self._pending: dict[tuple, list] = {}        # (g, stream position) -> tuples
        self._pos = {s: i for i, s in enumerate(self.streams)}
        self.wm = -math.inf
        self.late = 0
        self.closed = {s: 0 for s in self.streams}
        #: Grid segments that closed by reaching their length (not cut by a trigger).
        self.ended_by_length = 0
        self._next_window = 0                       # the next segment to count
        self._cut: set[int] = set()                 # segments a trigger ended

    # -- statistics ---------------------------------------------------------------------
    def observe(self, stats: Mapping[tuple, Sequence[int]]) -> None:
        """Add hosts' probe counts ``{(a, b): (comparisons, matches)}``."""
        for pair, (c, m) in stats.items():
            st = self.stats.setdefault(tuple(pair), [0, 0])
            st[0] += c
            st[1] += m

    def selectivity(self, a: str, b: str) -> float:
        """Observed match rate between ``a`` and ``b`` (1.0 if never observed)."""
        c1, m1 = self.stats.get((a, b), (0, 0))
        c2, m2 = self.stats.get((b, a), (0, 0))
        return (m1 + m2) / (c1 + c2) if c1 + c2 else 1.0

    # -- input --------------------------------------------------------------------------
    def add(self, tup) -> bool:
        """Buffer ``tup``; False (and counted as late) if its segment was already routed."""
        if tup.ts < self.wm:
            self.late += 1
            return False
        key = (self.grid.index(tup.ts), self._pos[tup.stream])
        self._pending.setdefault(key, []).append(tup)
        return True

    def buffered(self) -> int:
        """Tuples waiting for their segment to close."""
        return sum(len(v) for v in self._pending.values())

    def flush(self, wm: float) -> list[tuple[Route, list]]:
        """Route every buffered segment ending at or before ``wm``, in rank order."""
        if self.grid.cuts:
            # cuts moved the boundaries off the tick grid: a watermark inside a segment
            # would make that segment's later tuples late although it is still open
            wm = self.grid.floor(wm)
        if not wm > self.wm:
            return []
        self.wm = wm
        while math.isfinite(wm) and self.grid.end(self._next_window) <= wm:
            if self._next_window in self._cut:
                self._cut.discard(self._next_window)
            else:
                self.ended_by_length += 1
            self._next_window += 1
        ready = sorted(k for k in self._pending if self.grid.end(k[0]) <= wm)
        out = []
        for g, i in ready:
            tuples = sorted(self._pending.pop((g, i)), key=lambda t: (t.ts, t.seq))
            self.closed[self.streams[i]] += len(tuples)
            out.append((self.route(self.streams[i], g, tuples), tuples))
        return out

    def close(self) -> list[tuple[Route, list]]:
        """End of the run: route every buffered segment."""
        return self.flush(math.inf)

    def expire(self):
        """Remove and return the table entries no segment still to route can need.

        Segments still to route start at or after the watermark (later tuples are late)
        or at the start of a buffered segment, whichever is earlier.
        """
        t_next = min([self.wm] + [self.grid.start(g) for g, _ in self._pending])
        return self.table.expire(t_next, self.windows)

    def cut(self, at: float) -> float | None:
        """End the open segment holding event time ``at`` there (a window trigger
        fired); the next segment starts at ``at``, for every stream. Only beyond the
        routed watermark (``at > wm``: nothing at or after ``at`` has been routed), so
        routed segments keep their bounds and every group its one owner. Buffered
        tuples at or after ``at`` move to the new grid's segments. Returns how much
        shorter the segment got, or None when there was nothing to cut.

        >>> from spark_nodes.algorithms.ctr.load import LoadBoard
        >>> from spark_nodes.workload.tuples import StreamTuple as T
        >>> r = CtrRouter(["A"], {"A": 1.0}, 2.0, LoadBoard([1], (0, 1, 0), (1, 1, 1), 1.0))
        >>> _ = r.add(T("A", 0, 0.5, 0, None, None, 0)); _ = r.add(T("A", 1, 1.5, 0, None, None, 0))
        >>> r.cut(1.0), r.cut(1.0)
        (-1.0, None)
        >>> [(rt.seg, [t.seq for t in ts]) for rt, ts in r.flush(1.0)]
        [(('A', 0), [0])]
        >>> r.grid.bounds(1), sorted(r._pending)
        ((1.0, 3.0), [(1, 0)])
        """
        if not at > self.wm:
            return None
        g = self.grid.index(at)
        end = self.grid.end(g)
        if self.grid.cut(at) is None:
            return None
        self._cut.add(g)
        moved = [k for k in self._pending if k[0] >= g]
        tuples = [t for k in sorted(moved) for t in self._pending.pop(k)]
        for t in tuples:
            self._pending.setdefault((self.grid.index(t.ts), self._pos[t.stream]),
                                     []).append(t)
        return at - end

    # -- routing ------------------------------------------------------------------------
    def route(self, stream: str, g: int, tuples: Sequence) -> Route:
        """Route segment ``g`` of ``stream`` and record it in the table."""
        seg = (stream, g)
        start = self.grid.start(g)
        seq = probe_sequence(stream, self.streams, self.selectivity)
        hosts = self.board.hosts
        w = {h: self.board.load(h) for h in hosts}
        hops = []
        prev: set = set()
        for s in seq:
            lo = start - self.windows[s]
            segs = self.table.lookup(s, lo - widen(lo))
            if not segs:
                hops = []          # no group can have this segment as its owner
                break
            holders = {z: self.table.hosts(z) for z in segs}
            assign = {}
            rest = []
            for z in segs:
                common = [h for h in holders[z] if h in prev]
                if common:
                    assign[z] = min(common, key=lambda h: (w[h], h))
                else:
                    rest.append(z)
            if rest:
                assign.update(assign_probers(rest, holders, greedy_cover(rest, holders, w), w))
            by_host: dict[int, list] = {}
            for z, h in assign.items():
                by_host.setdefault(h, []).append(z)
            hops.append(tuple((h, tuple(sorted(by_host[h]))) for h in sorted(by_host)))
            prev = set(by_host)
        for hop in hops:                 # one probe task per (host, hop)
            for h, zs in hop:
                for z in zs:
                    self.table.add_probes(h, z, 1)
        if self.store == "cover" and hops:
            store = tuple(h for h, _ in hops[0])
        else:
            store = (min(hosts, key=lambda h: (w[h], h)),)
        route = Route(seg, tuple(seq), store, tuple(hops))
        units = sum(t.size for t in tuples)
        for h in route.receivers():
            self.board.sent(h, len(tuples), units)
        self.table.add(stream, g, store, len(tuples))
        return route
