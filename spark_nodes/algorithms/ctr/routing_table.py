"""CTR's routing table: where each routed segment lives, until no future segment needs it.

[source] "Routing-table entries are deleted when no future segment can need them." A
segment ``z = S_j[s, e)`` can join a tuple ``a`` of a later segment only if
``a.ts - s.ts <= W_j``; every tuple of a segment routed from now on has ``a.ts >= t'``
(the start of the next segment to route), so ``z`` is dead once ``t' - e >= W_j``.

The table also counts, per (host, segment), the probe tasks that routes have assigned
to that copy; the diffusion node sends the count with the release so the host drops the
copy only after its last probe (messages may arrive in any order).

Examples
--------
>>> rt = RoutingTable(1.0)
>>> rt.add("R1", 0, hosts=(4, 7), tuples=3)
>>> rt.add("R1", 1, hosts=(7,), tuples=2)
>>> rt.lookup("R1", 0.5), rt.hosts(("R1", 1))
([('R1', 0), ('R1', 1)], (7,))
>>> rt.add_probes(7, ("R1", 0), 2)
>>> [(e.seg, counts) for e, counts in rt.expire(3.5, {"R1": 2.0})]
[(('R1', 0), {4: 0, 7: 2})]
>>> len(rt)
1
"""
from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Mapping
from typing import NamedTuple

from contract.state import StateMap
from spark_nodes.algorithms.ctr.segments import Grid, widen


class Entry(NamedTuple):
    """One routed segment: ``seg = (stream, g)``, its hosts and size."""

    seg: tuple
    start: float
    end: float
    hosts: tuple
    tuples: int


class RoutingTable:
    """Entries for the segments of a grid of length ``length`` (or a :class:`Grid`,
    whose cuts the table then follows)."""

    def __init__(self, length: float | Grid):
        self.grid = length if isinstance(length, Grid) else Grid(length)
        self.length = self.grid.length
        # the entries, a state row each (contract.state); an Entry never changes
        self._entries = StateMap()                      # segment -> Entry
        self._by_stream: dict[str, list[int]] = {}
        self._probes: dict[tuple, dict[int, int]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, stream: str, g: int, hosts, tuples: int) -> None:
        """Record that segment ``g`` of ``stream`` is stored on ``hosts``.

        Segments of one stream must be added in increasing ``g``.
        """
        gs = self._by_stream.setdefault(stream, [])
        if gs and g <= gs[-1]:
            raise ValueError(f"routing table: segment {stream}:{g} added after {stream}:{gs[-1]}")
        start, end = self.grid.bounds(g)
        seg = (stream, g)
        self._entries[seg] = Entry(seg, start, end, tuple(sorted(hosts)), int(tuples))
        gs.append(g)
        self._probes[seg] = {h: 0 for h in hosts}

    def hosts(self, seg) -> tuple:
        """Hosts storing ``seg``."""
        return self._entries[seg].hosts

    def lookup(self, stream: str, lo: float) -> list[tuple]:
        """Segments of ``stream`` in the table that hold some ``ts >= lo``, oldest first."""
        gs = self._by_stream.get(stream, [])
        i = bisect_left(gs, self.grid.index(lo)) if math.isfinite(lo) else 0
        return [(stream, g) for g in gs[i:] if self._entries[(stream, g)].end > lo]

    def add_probes(self, host: int, seg, count: int) -> None:
        """A route assigned ``count`` probe tasks on ``seg`` to ``host``."""
        self._probes[seg][host] += count

    def expire(self, t_next: float, windows: Mapping[str, float]) -> list[tuple[Entry, dict]]:
        """Remove and return the entries no segment starting at ``>= t_next`` can need,
        each with its probe counts per host."""
        gone = []
        for stream, gs in self._by_stream.items():
            w = windows[stream]
            k = 0
            while k < len(gs):
                e = self._entries[(stream, gs[k])]
                if not t_next - e.end >= w + widen(w):
                    break
                gone.append((self._entries.pop(e.seg), self._probes.pop(e.seg)))
                k += 1
            del gs[:k]
        return gone

    def drain(self) -> list[tuple[Entry, dict]]:
        """Remove and return every entry (end of the run)."""
        gone = [(e, self._probes.pop(seg)) for seg, e in self._entries.items()]
        self._entries.clear()
        self._by_stream.clear()
        return gone
