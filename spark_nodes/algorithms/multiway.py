"""Incremental multi-way windowed join (the centralized join of docs/ALGORITHMS.md#multi-way-join).

:class:`MultiwayJoin` keeps one buffer per stream, sorted by ``ts``. On every arrival it
probes the other streams' buffers and returns the groups this arrival completes: a group
is emitted when its *last member arrives*, whatever the arrival order, provided its
other members are still buffered. So with unbounded retention every result of
:mod:`spark_nodes.algorithms.oracle` is emitted exactly once, in order or not; with a finite
``retention`` (allowed lateness in event time) tuples that no group with a tuple at least
``max_ts_seen - retention`` can use are dropped, which is exact on in-order input even
with ``retention=0``.

Window test: a group is valid iff ``a.ts - b.ts <= W_b`` for every pair of members, the
pairwise form of ``max_ts(group) - b.ts <= W_b`` (same semantics as the oracle).

Probe order [source: lowest selectivity first, greedily]: the engine records, per pair of
streams, how many buffered tuples in time range an arrival compared against and how many
matched its predicate; the selectivity of a pair is matches / comparisons over both
directions. From the arriving stream ``i`` it probes first the stream of lowest
selectivity with ``i``, then repeatedly the remaining stream with the lowest selectivity
to any stream already in the partial group [recon: "greedily the next lowest"].
Unobserved pairs count as selectivity 1; ties go to stream order. The order only changes
the work, never the groups.

Examples
--------
>>> from spark_nodes.workload.tuples import StreamTuple as T
>>> j = MultiwayJoin(["A", "B"], {"A": 2.0, "B": 2.0}, "equality")
>>> j.insert(T("A", 0, 1.0, 7, None, None, 0))
[]
>>> [tuple(m.seq for m in g) for g in j.insert(T("B", 0, 0.5, 7, None, None, 1))]
[(0, 0)]
>>> j.buffered()
(2, 64)
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Mapping, Sequence

from contract.state import StateList
from spark_nodes.algorithms.oracle import (INF, cell_of, cell_size, check_query, joinable,
                                           neighbour_cells, window_slice, within)
from spark_nodes.workload.tuples import StreamTuple


class _Buffer:
    """Tuples sorted by ``ts`` (parallel lists, so ``bisect`` works on ``ts``).

    A ``stored`` buffer keeps its tuples in a :class:`~contract.state.StateList` (one
    state row a tuple on a runtime with a state store); ``ts`` is derived from them and
    not pickled.
    """

    __slots__ = ("ts", "tups")

    def __init__(self, stored: bool = False):
        self.ts: list[float] = []
        self.tups = StateList(rows="tuple") if stored else []

    def __getstate__(self):
        return (self.tups,)     # a tuple: pickle skips __setstate__ for a falsy state

    def __setstate__(self, state) -> None:
        (self.tups,) = state
        self.ts = [t.ts for t in self.tups]

    def add(self, t: StreamTuple) -> None:
        i = bisect_right(self.ts, t.ts)
        self.ts.insert(i, t.ts)
        self.tups.insert(i, t)

    def drop_before(self, horizon: float, window: float) -> list[StreamTuple]:
        """Remove and return the prefix of tuples with ``horizon - ts > window``."""
        i, _ = window_slice(self.ts, horizon, window, INF)
        gone = self.tups[:i]
        del self.ts[:i], self.tups[:i]
        return gone


class MultiwayJoin:
    """Incremental multi-way windowed join over buffered streams.

    Parameters
    ----------
    streams : sequence of str
        Stream names; groups list their members in this order.
    windows : mapping of str to float or None
        Window of each stream (``None`` = unbounded).
    predicate : {"equality", "distance"}
    theta : float, optional
        Distance threshold (distance predicate).
    retention : float, optional
        Allowed lateness in event time. After each insert the engine calls
        ``expire(max_ts_seen - retention)``. ``None``: nothing is dropped automatically.
    bytes_per_unit : int
        Bytes of one data unit, for :meth:`buffered`.

    Notes
    -----
    Tuples that cannot join (equality without a key, distance without a position) are
    not buffered. The object holds only lists and dicts, so it pickles.
    """

    def __init__(self, streams: Sequence[str], windows: Mapping, predicate: str,
                 theta: float | None = None, retention: float | None = None,
                 bytes_per_unit: int = 32):
        self.streams = tuple(streams)
        if not self.streams:
            raise ValueError("MultiwayJoin needs at least one stream")
        self.windows = check_query(self.streams, windows, predicate, theta)
        if retention is not None and not retention >= 0:
            raise ValueError(f"retention must be >= 0 or None, got {retention!r}")
        self.predicate = predicate
        self.theta = theta
        self.retention = retention
        self.bytes_per_unit = bytes_per_unit
        self._pos = {s: i for i, s in enumerate(self.streams)}
        self._cell = cell_size(theta) if predicate == "distance" else None
        # The join buffers are _all; _index (by key or grid cell) is derived from them
        # and rebuilt when the join is unpickled.
        self._all = {s: _Buffer(stored=True) for s in self.streams}
        self._index: dict[str, dict] = {s: {} for s in self.streams}
        # (probing stream, probed stream) -> [comparisons, matches]
        self._stats: dict[tuple[str, str], list[int]] = {}
        self._units = 0.0
        self.max_ts = -INF

    def __getstate__(self):
        state = dict(self.__dict__)
        del state["_index"]
        return state

    def __setstate__(self, state) -> None:
        self.__dict__.update(state)
        self._index = {s: {} for s in self.streams}
        for s, everything in self._all.items():
            index = self._index[s]
            for t in everything.tups:       # ts order, ties in arrival order: as built
                bucket = self._bucket_of(t)
                buf = index.get(bucket)
                if buf is None:
                    buf = index[bucket] = _Buffer()
                buf.add(t)

    # -- public API ---------------------------------------------------------------------
    def insert(self, tup: StreamTuple) -> list[tuple[StreamTuple, ...]]:
        """Buffer ``tup`` and return the groups its arrival completes.

        Raises
        ------
        ValueError
            If ``tup.stream`` is not one of the join's streams.
        """
        if tup.stream not in self._pos:
            raise ValueError(f"tuple {tup.stream}:{tup.seq}: stream not in join {list(self.streams)}")
        if not joinable(tup, self.predicate):
            self._advance(tup.ts)
            return []
        bucket = self._bucket_of(tup)
        cands = {}
        for s in self.streams:
            if s != tup.stream:
                cands[s] = self._candidates(tup, s, bucket)
        groups = []
        if all(cands.values()):
            groups = self._expand(tup, cands)
        self._add(tup, bucket)
        self._advance(tup.ts)
        return groups

    def expire(self, horizon_ts: float) -> int:
        """Drop tuples that no group with a member at ``ts >= horizon_ts`` can use.

        A buffered ``s`` of stream ``k`` is dropped when ``horizon_ts - s.ts > W_k``.
        Returns the number of tuples dropped.
        """
        dropped = 0
        for s in self.streams:
            w = self.windows[s]
            everything = self._all[s]
            if w == INF or not everything.ts or horizon_ts - everything.ts[0] <= w:
                continue                    # nothing old enough (the usual case)
            gone = everything.drop_before(horizon_ts, w)
            if not gone:
                continue
            dropped += len(gone)
            self._units -= sum(t.size for t in gone)
            index = self._index[s]
            for b in {self._bucket_of(t) for t in gone}:
                buf = index[b]
                buf.drop_before(horizon_ts, w)
                if not buf.ts:
                    del index[b]
        return dropped

    def buffered(self) -> tuple[int, int]:
        """``(tuples, bytes)`` buffered now; bytes = data units x ``bytes_per_unit``."""
        n = sum(len(b.ts) for b in self._all.values())
        return n, int(round(self._units * self.bytes_per_unit))

    def selectivity(self, a: str, b: str) -> float:
        """Observed match rate between streams ``a`` and ``b`` (1.0 if never observed)."""
        c1, m1 = self._stats.get((a, b), (0, 0))
        c2, m2 = self._stats.get((b, a), (0, 0))
        c, m = c1 + c2, m1 + m2
        return m / c if c else 1.0

    def probe_order(self, stream: str) -> list[str]:
        """Order in which an arrival on ``stream`` probes the other streams."""
        chosen = [stream]
        rest = [s for s in self.streams if s != stream]
        while rest:
            nxt = min(rest, key=lambda k: (min(self.selectivity(j, k) for j in chosen),
                                           self._pos[k]))
            chosen.append(nxt)
            rest.remove(nxt)
        return chosen[1:]

    # -- internals ----------------------------------------------------------------------
    def _bucket_of(self, t: StreamTuple):
        return t.key if self._cell is None else cell_of(t, self._cell)

    def _add(self, t: StreamTuple, bucket) -> None:
        self._all[t.stream].add(t)
        index = self._index[t.stream]
        buf = index.get(bucket)
        if buf is None:
            buf = index[bucket] = _Buffer()
        buf.add(t)
        self._units += t.size

    def _advance(self, ts: float) -> None:
        if ts > self.max_ts:
            self.max_ts = ts
        if self.retention is not None:
            self.expire(self.max_ts - self.retention)

    def _candidates(self, t: StreamTuple, s: str, bucket) -> list[StreamTuple]:
        """Buffered tuples of ``s`` that are in window with ``t`` and match it."""
        back, ahead = self.windows[s], self.windows[t.stream]
        everything = self._all[s]
        lo, hi = window_slice(everything.ts, t.ts, back, ahead)
        index = self._index[s]
        found: list[StreamTuple] = []
        if self._cell is None:
            buf = index.get(bucket)
            if buf is not None:
                i, j = window_slice(buf.ts, t.ts, back, ahead)
                found = buf.tups[i:j]
        else:
            for c in neighbour_cells(bucket):
                buf = index.get(c)
                if buf is not None:
                    i, j = window_slice(buf.ts, t.ts, back, ahead)
                    found.extend(u for u in buf.tups[i:j] if within(t, u, self.theta))
        stat = self._stats.setdefault((t.stream, s), [0, 0])
        stat[0] += hi - lo
        stat[1] += len(found)
        return found

    def _expand(self, t: StreamTuple, cands: dict) -> list[tuple[StreamTuple, ...]]:
        order = self.probe_order(t.stream)
        w = self.windows
        dist = self.predicate == "distance"
        members = [None] * len(self.streams)
        members[self._pos[t.stream]] = t
        chosen: list[StreamTuple] = []
        out = []

        def rec(d):
            if d == len(order):
                out.append(tuple(members))
                return
            s = order[d]
            ws = w[s]
            for u in cands[s]:
                # candidates already match t; check the members chosen after t
                if all(a.ts - u.ts <= ws and u.ts - a.ts <= w[a.stream]
                       and (not dist or within(a, u, self.theta)) for a in chosen):
                    members[self._pos[s]] = u
                    chosen.append(u)
                    rec(d + 1)
                    chosen.pop()
            members[self._pos[s]] = None

        rec(0)
        return out
