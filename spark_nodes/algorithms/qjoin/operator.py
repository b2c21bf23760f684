"""The symmetric join core of QJoin: two buffers, probe on every arrival, purge, evict.

Semantics (``docs/ALGORITHMS.md#symmetric-join``), for streams ``0`` (R) and ``1`` (S):

1. An arriving tuple ``t`` updates its stream's largest timestamp; ``delay(t)`` is that
   largest timestamp before ``t`` minus ``t.ts``, never below 0.
2. ``T = min(maxTs_R, maxTs_S)``; each buffer's purge horizon becomes
   ``max(previous horizon, T - (w + d))`` with the buffer's delay allowance ``d``
   (``purge="window"``, **[recon]**) or ``T - d`` (``purge="literal"``, the source's
   literal ``x.ts <= T - d``). Tuples at or below the horizon leave the buffer. The
   horizon never moves back, like a watermark: what was purged stays purged even when
   the allowance grows. An allowance of ``None`` means "the largest delay seen so far on
   that stream".
3. ``t`` probes the other buffer: partners are the buffered tuples with
   ``|u.ts - t.ts| <= w`` (these are the *comparisons*) and the predicate (equal keys,
   or ``hypot(dx, dy) <= theta`` as the oracle). Results are reported at once, partners in their
   arrival order.
4. ``t`` is stored if it is above its buffer's horizon; if the buffer then holds more
   than its capacity, the oldest tuples (smallest ``ts``, then earliest arrival) leave.

:class:`SymmetricJoin` applies this tuple by tuple (numpy over a buffer).
:func:`join_arrivals` computes exactly the same results for a whole arrival sequence
at once (vectorized over tuples; capacities are not supported there).

Examples
--------
>>> from spark_nodes.workload.tuples import StreamTuple
>>> j = SymmetricJoin(w=2.0)
>>> r = StreamTuple("R", 0, 1.0, 7, None, None, 0)
>>> s = StreamTuple("S", 0, 2.5, 7, None, None, 1)
>>> j.arrive(0, r)
([], 0, 0.0)
>>> partners, comparisons, delay = j.arrive(1, s)
>>> [p.seq for p in partners], comparisons, j.memory()
([0], 1, (2, 2.0))
"""
from __future__ import annotations

import bisect
import math

import numpy as np

from contract.state import StateMap

PREDICATES = ("equality", "distance")
PURGE_RULES = ("window", "literal")


def _check(w, predicate, theta, purge):
    if not (w >= 0 and math.isfinite(w)):
        raise ValueError(f"join window w must be a finite number >= 0, got {w!r}")
    if predicate not in PREDICATES:
        raise ValueError(f"predicate: expected one of {PREDICATES}, got {predicate!r}")
    if predicate == "distance" and (theta is None or not theta >= 0):
        raise ValueError(f"distance predicate needs theta >= 0, got {theta!r}")
    if purge not in PURGE_RULES:
        raise ValueError(f"purge: expected one of {PURGE_RULES}, got {purge!r}")


class _Buffer:
    """One stream's buffer: growable numpy columns in arrival order plus a live mask.

    The live tuples are also kept by arrival number in a :class:`~contract.state.StateMap`
    (one state row a tuple on a runtime with a state store); the columns are derived
    from it and not pickled.
    """

    def __init__(self, capacity: int = 64):
        self.ts = np.empty(capacity)
        self.key = np.empty(capacity, dtype=np.int64)
        self.x = np.empty(capacity)
        self.y = np.empty(capacity)
        self.size = np.empty(capacity)
        self.order = np.empty(capacity, dtype=np.int64)
        self.alive = np.zeros(capacity, dtype=bool)
        self.tuples: list = []
        self.n = 0
        self.live = 0
        self.live_size = 0.0
        self.stored = StateMap()     # arrival number -> live tuple

    def __getstate__(self):
        return {"stored": self.stored, "live_size": self.live_size}

    def __setstate__(self, state) -> None:
        stored = state["stored"]
        self.__init__(max(64, 2 * len(stored)))
        for order, tup in stored.items():   # arrival order: dead tuples compacted away
            self._put(tup, order)
        self.stored = stored
        self.live_size = state["live_size"]  # kept, not re-summed: the same float

    def append(self, tup, order: int) -> None:
        self._put(tup, order)
        self.stored[order] = tup

    def _put(self, tup, order: int) -> None:
        if self.n == self.ts.size:
            self._make_room()
        i = self.n
        self.ts[i] = tup.ts
        self.key[i] = 0 if tup.key is None else tup.key
        self.x[i] = np.nan if tup.x is None else tup.x
        self.y[i] = np.nan if tup.y is None else tup.y
        self.size[i] = tup.size
        self.order[i] = order
        self.alive[i] = True
        self.tuples.append(tup)
        self.n += 1
        self.live += 1
        self.live_size += tup.size

    def kill(self, mask_or_idx) -> np.ndarray:
        """Drop the given live tuples; returns their timestamps."""
        idx = np.flatnonzero(mask_or_idx) if getattr(mask_or_idx, "dtype", None) == bool \
            else np.asarray(mask_or_idx)
        if idx.size:
            for order in self.order[idx].tolist():
                del self.stored[order]
            self.alive[idx] = False
            self.live -= int(idx.size)
            self.live_size -= float(self.size[idx].sum())
        return self.ts[idx]

    def purge(self, horizon: float) -> np.ndarray:
        n = self.n
        return self.kill(self.alive[:n] & (self.ts[:n] <= horizon))

    def evict_to(self, cap: float) -> np.ndarray:
        if self.live <= cap:
            return self.ts[:0]
        idx = np.flatnonzero(self.alive[:self.n])
        oldest = idx[np.lexsort((self.order[idx], self.ts[idx]))]
        return self.kill(oldest[:self.live - int(cap)])

    def _make_room(self) -> None:
        keep = np.flatnonzero(self.alive[:self.n])
        if keep.size * 2 > self.ts.size:   # mostly live: grow instead of compacting
            cap = self.ts.size * 2
        else:
            cap = self.ts.size
        for name in ("ts", "key", "x", "y", "size", "order", "alive"):
            old = getattr(self, name)
            new = np.zeros(cap, dtype=old.dtype) if name == "alive" \
                else np.empty(cap, dtype=old.dtype)
            new[:keep.size] = old[keep]
            setattr(self, name, new)
        self.tuples = [self.tuples[i] for i in keep]
        self.n = keep.size


class _Gone:
    """Timestamps of one stream's tuples that arrived but are no longer buffered.

    Purged, evicted or never stored (at or below the horizon on arrival): what a later
    partner cannot find. Kept sorted; timestamps below a floor that no later probe's
    window reaches are dropped (:meth:`forget_below`).

    >>> g = _Gone()
    >>> g.add([3.0, 1.0]); g.add([2.0])
    >>> g.count_within(2.5, 0.5), g.count_within(2.0, 1.0)
    (2, 3)
    >>> g.forget_below(1.5); g.count_within(2.0, 1.0)
    2
    """

    def __init__(self):
        self.ts: list[float] = []

    def add(self, stamps) -> None:
        for t in np.asarray(stamps, dtype=float).tolist():
            bisect.insort(self.ts, t)

    def count_within(self, ts: float, w: float) -> int:
        """Gone tuples with ``|u.ts - ts| <= w``."""
        return bisect.bisect_right(self.ts, ts + w) - bisect.bisect_left(self.ts, ts - w)

    def forget_below(self, floor: float) -> None:
        del self.ts[:bisect.bisect_left(self.ts, floor)]


class SymmetricJoin:
    """Tuple-at-a-time symmetric window join of streams 0 and 1 (see the module text).

    Parameters
    ----------
    w : float
        Window: partners satisfy ``|r.ts - s.ts| <= w``.
    predicate : {"equality", "distance"}
        Equal ``key``, or ``hypot(dx, dy) <= theta`` on ``(x, y)``.
    theta : float, optional
        Distance threshold.
    purge : {"window", "literal"}
        Horizon ``T - (w + d)`` or the source's literal ``T - d``.
    count_missed : bool
        Also keep the timestamps of the tuples no longer buffered, so that
        :meth:`missed` can count the partners-in-window an arrival could not find.
    """

    def __init__(self, w: float, predicate: str = "equality", theta: float | None = None,
                 purge: str = "window", count_missed: bool = False):
        _check(w, predicate, theta, purge)
        self.w = float(w)
        self.predicate = predicate
        self.theta = None if theta is None else float(theta)
        self.purge = purge
        self.allowance: list = [0.0, 0.0]
        self.capacity = [math.inf, math.inf]
        self.max_ts = [-math.inf, -math.inf]
        self.max_delay = [0.0, 0.0]
        self.horizon = [-math.inf, -math.inf]
        self._buf = (_Buffer(), _Buffer())
        self._gone = (_Gone(), _Gone()) if count_missed else None
        self._arrivals = 0

    def set_allowance(self, side: int, d: float | None) -> None:
        """Delay allowance of buffer ``side`` from the next arrival on (``None``: max)."""
        self.allowance[side] = None if d is None else float(d)

    def set_capacity(self, side: int, cap: float) -> None:
        """Most tuples buffer ``side`` may hold (``inf``: no limit); evicts at once."""
        self.capacity[side] = float(cap)
        self._left(side, self._buf[side].evict_to(cap))

    def advance(self) -> None:
        """Move the purge horizons to the current ``T`` and allowances."""
        T = min(self.max_ts)
        if T == -math.inf:
            return
        for side in (0, 1):
            d = self.allowance[side]
            d = self.max_delay[side] if d is None else d
            h = T - d if self.purge == "literal" else T - (self.w + d)
            if h > self.horizon[side]:
                self.horizon[side] = h
                self._left(side, self._buf[side].purge(h))
        if self._gone is not None:
            # a later probe reaches back to its own ts - w, and its ts is at least
            # T - (largest delay seen): a tuple later than any yet may undercount
            floor = T - max(self.max_delay) - self.w
            for gone in self._gone:
                gone.forget_below(floor)

    def _left(self, side: int, stamps) -> None:
        if self._gone is not None and len(stamps):
            self._gone[side].add(stamps)

    def missed(self, side: int, ts: float) -> int:
        """Tuples of buffer ``side`` inside the window of ``ts`` that have left it (or
        were never stored): the comparisons an arrival at ``ts`` probing ``side`` now
        cannot make. Needs ``count_missed``.

        >>> from spark_nodes.workload.tuples import StreamTuple
        >>> j = SymmetricJoin(w=1.0, count_missed=True)
        >>> for side, ts in ((0, 0.0), (1, 3.0), (1, 0.5), (0, 5.0)):
        ...     _ = j.arrive(side, StreamTuple("RS"[side], 0, ts, 1, None, None, 0))
        >>> j.horizon[0], j.missed(0, 0.5)   # R@0 left when T reached 3
        (2.0, 1)
        """
        return self._gone[side].count_within(ts, self.w)

    def arrive(self, side: int, tup) -> tuple[list, int, float]:
        """Process one arrival on ``side``.

        Returns
        -------
        tuple
            ``(partners, comparisons, delay)``: the buffered tuples of the other stream
            it joins with (in their arrival order), how many buffered tuples of the other
            stream were inside its window, and its delay.
        """
        delay = 0.0 if self.max_ts[side] == -math.inf else max(0.0,
                                                                 self.max_ts[side] - tup.ts)
        self.max_ts[side] = max(self.max_ts[side], tup.ts)
        self.max_delay[side] = max(self.max_delay[side], delay)
        self.advance()
        partners, comparisons = self.probe(1 - side, tup)
        if tup.ts > self.horizon[side]:
            buf = self._buf[side]
            buf.append(tup, self._arrivals)
            self._left(side, buf.evict_to(self.capacity[side]))
        else:
            self._left(side, [tup.ts])
        self._arrivals += 1
        return partners, comparisons, delay

    def probe(self, side: int, tup) -> tuple[list, int]:
        """Partners of ``tup`` in buffer ``side`` and the window-qualified count."""
        buf = self._buf[side]
        n = buf.n
        if buf.live == 0:
            return [], 0
        inwin = buf.alive[:n] & (np.abs(buf.ts[:n] - tup.ts) <= self.w)
        if self.predicate == "equality":
            if tup.key is None:
                raise ValueError(f"equality join: tuple {tup.stream}:{tup.seq} has no key")
            hit = inwin & (buf.key[:n] == tup.key)
        else:
            if tup.x is None or tup.y is None:
                raise ValueError(f"distance join: tuple {tup.stream}:{tup.seq} has no x/y")
            hit = inwin & (np.hypot(buf.x[:n] - tup.x, buf.y[:n] - tup.y) <= self.theta)
        tuples = buf.tuples
        return [tuples[i] for i in np.flatnonzero(hit)], int(inwin.sum())

    def memory(self) -> tuple[int, float]:
        """``(tuples, size units)`` buffered now."""
        a, b = self._buf
        return a.live + b.live, a.live_size + b.live_size


def horizons(side, ts, w: float, allowance_r=0.0, allowance_s=0.0,
             purge: str = "window") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-arrival delays and purge horizons of an arrival sequence.

    ``allowance_*`` are scalars or per-arrival arrays (the allowance in effect at each
    arrival), or ``None`` for the largest delay seen so far. Returns
    ``(delay, horizon_r, horizon_s)``: horizon ``k`` at arrival ``i`` is the one the
    arrival's probe sees.

    Examples
    --------
    >>> d, hr, hs = horizons([0, 1, 0, 1], [1.0, 2.0, 0.5, 3.0], w=1.0)
    >>> d.tolist(), hr.tolist(), hs.tolist()
    ([0.0, 0.0, 0.5, 0.0], [-inf, 0.0, 0.0, 0.0], [-inf, 0.0, 0.0, 0.0])
    """
    side = np.asarray(side)
    ts = np.asarray(ts, dtype=float)
    delays = np.zeros(ts.size)
    if ts.size == 0:
        return delays, delays.copy(), delays.copy()
    maxes = []
    for k in (0, 1):
        own = side == k
        tk = ts[own]
        if tk.size:
            prev = np.concatenate([[-np.inf], np.maximum.accumulate(tk)[:-1]])
            delays[own] = np.maximum(0.0, prev - tk)        # -inf - t: first tuple, 0
        maxes.append(np.maximum.accumulate(np.where(own, ts, -np.inf)))
    T = np.minimum(maxes[0], maxes[1])
    out = []
    for k, allow in ((0, allowance_r), (1, allowance_s)):
        if allow is None:
            allow = np.maximum.accumulate(np.where(side == k, delays, 0.0))
        back = allow if purge == "literal" else np.add(w, allow)
        # T is -inf until both streams have a tuple, and -inf minus anything finite or
        # +inf stays -inf: no horizon yet
        out.append(np.maximum.accumulate(np.broadcast_to(T - back, ts.shape)))
    return delays, out[0], out[1]


def _expand(starts, stops):
    # all (query, position) pairs with start <= position < stop, grouped by query
    counts = stops - starts
    total = int(counts.sum())
    query = np.repeat(np.arange(starts.size), counts)
    first = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
    return query, first + np.arange(total)


def _buckets(predicate, side, key, x, y, theta):
    """Bucket of every tuple and the buckets each probe must search.

    Equality: the key. Distance: the grid cell of side ``theta`` (as the oracle's), and a
    probe searches its cell and the 8 around it, which hold every tuple within ``theta``.
    """
    if predicate == "equality":
        if key is None:
            raise ValueError("equality join needs key")
        keys = np.asarray(key, dtype=np.int64)
        return keys, [keys]
    if x is None or y is None:
        raise ValueError("distance join needs x and y")
    from spark_nodes.algorithms.oracle import cell_size

    size = cell_size(float(theta))
    cx = np.floor(np.asarray(x, dtype=float) / size).astype(np.int64)
    cy = np.floor(np.asarray(y, dtype=float) / size).astype(np.int64)
    ny = int(cy.max() - cy.min()) + 3          # room for the -1..+1 shifts
    cy0 = cy - cy.min() + 1
    cell = cx * ny + cy0
    return cell, [(cx + i) * ny + (cy0 + j) for i in (-1, 0, 1) for j in (-1, 0, 1)]


def join_arrivals(side, ts, w: float, predicate: str = "equality", key=None, x=None, y=None,
                  theta: float | None = None, allowance_r=0.0, allowance_s=0.0,
                  purge: str = "window", chunk: int = 1 << 16) -> tuple[np.ndarray,
                                                                        np.ndarray]:
    """All results :class:`SymmetricJoin` reports on an arrival sequence, at once.

    Candidates are found by sorting the other stream by (bucket, ts) — bucket = key, or
    grid cell for the distance join — and bisecting each probe's window; every candidate
    is then checked with exactly the per-tuple operator's tests (arrived earlier, above
    the horizon, ``|u.ts - t.ts| <= w``, ``hypot <= theta``; equal keys hold by
    construction: buckets lie further apart in the sort key than any window reaches), so
    the results are the same, not approximately.

    Parameters
    ----------
    side, ts, key, x, y : array_like
        The arrivals in arrival order: stream (0/1), event time and join attributes.
    w, predicate, theta, purge
        As for :class:`SymmetricJoin`.
    allowance_r, allowance_s : float, array_like or None
        Allowance in effect at each arrival (see :func:`horizons`).
    chunk : int
        Probes handled at once (bounds the memory of the candidate lists).

    Returns
    -------
    later, earlier : numpy.ndarray
        Arrival indices of each result's probing tuple and of its partner, ordered as
        the per-tuple operator reports them (by ``later``, then ``earlier``).

    Examples
    --------
    >>> later, earlier = join_arrivals([0, 1, 1, 0], [1.0, 2.5, 9.0, 8.0], 2.0,
    ...                                key=[7, 7, 7, 7])
    >>> later.tolist(), earlier.tolist()
    ([1, 3], [0, 2])
    """
    _check(w, predicate, theta, purge)
    side = np.asarray(side, dtype=np.int8)
    ts = np.asarray(ts, dtype=float)
    if ts.size == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    _, h_r, h_s = horizons(side, ts, w, allowance_r, allowance_s, purge)
    h_other = np.where(side == 0, h_s, h_r)      # horizon of the buffer each arrival probes
    bucket, searched = _buckets(predicate, side, key, x, y, theta)
    points = None
    if predicate == "distance":
        points = np.asarray(x, dtype=float), np.asarray(y, dtype=float), float(theta)
    t0 = float(ts.min())
    # buckets lie span apart in the sort key: a window (+-w) never reaches a neighbour
    span = float(ts.max()) - t0 + 2 * w + 1.0
    idx = np.arange(ts.size)
    parts = []
    for k in (0, 1):
        probes = idx[side == k]
        cands = idx[side != k]
        if probes.size == 0 or cands.size == 0:
            continue
        parts += _probe_stream(probes, cands, ts, w, h_other, bucket, searched, points,
                               t0, span, chunk)
    # one int64 per result (later, earlier): a single sort gives the operator's order
    if not parts:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    pairs = np.sort(np.concatenate(parts))
    return pairs // ts.size, pairs % ts.size


def _probe_stream(probes, cands, ts, w, h_other, bucket, searched, points, t0, span,
                  chunk) -> list:
    """The results of the arrivals ``probes`` (of one stream) against the earlier
    arrivals ``cands`` (of the other), as ``later * ts.size + earlier``, chunk by chunk
    (see :func:`join_arrivals`; ``points``: ``(x, y, theta)`` of a distance join, else
    None)."""
    rank_of = _ranker(bucket[cands])
    comp = rank_of(bucket[cands]).astype(float) * span + (ts[cands] - t0)
    order = np.argsort(comp)
    comp_sorted = comp[order]
    cand_sorted = cands[order]
    ts_sorted = ts[cand_sorted]
    slack = 8 * np.finfo(float).eps * (float(np.abs(comp).max()) + span)
    parts = []
    for lo in range(0, probes.size, chunk):
        pr = probes[lo:lo + chunk]
        for wanted in searched:
            rank = rank_of(wanted[pr])
            exists = rank >= 0
            c = rank[exists].astype(float) * span + (ts[pr[exists]] - t0)
            # sorted queries bisect with far fewer cache misses; the arrival order
            # is restored by the final sort
            o = np.argsort(c)
            c = c[o]
            p2 = pr[exists][o]
            start = np.searchsorted(comp_sorted, c - w - slack, side="left")
            stop = np.searchsorted(comp_sorted, c + w + slack, side="right")
            q, at = _expand(start, stop)
            i = p2[q]
            u = cand_sorted[at]
            tu = ts_sorted[at]
            keep = (u < i) & (tu > h_other[p2][q]) & (np.abs(tu - ts[p2][q]) <= w)
            if points is not None:
                px, py, theta = points
                keep &= np.hypot(px[u] - px[i], py[u] - py[i]) <= theta
            parts.append(i[keep] * ts.size + u[keep])
    return parts


def _ranker(values):
    """``f(v)`` = rank of ``v`` among the distinct ``values`` (-1 if absent).

    A dense table when the values span a small range, else bisection.

    >>> f = _ranker(np.array([7, 3, 7, 10]))
    >>> f(np.array([3, 7, 10, 4, 99])).tolist()
    [0, 1, 2, -1, -1]
    """
    uniq = np.unique(values)
    low, high = int(uniq[0]), int(uniq[-1])
    if high - low < 4 * uniq.size + 1024:
        table = np.full(high - low + 1, -1, dtype=np.int64)
        table[uniq - low] = np.arange(uniq.size)

        def dense(v):
            v = np.asarray(v, dtype=np.int64)
            inside = (v >= low) & (v <= high)
            out = np.full(v.shape, -1, dtype=np.int64)
            out[inside] = table[v[inside] - low]
            return out
        return dense

    def bisect(v):
        pos = np.searchsorted(uniq, v)
        found = (pos < uniq.size) & (uniq[np.minimum(pos, uniq.size - 1)] == v)
        return np.where(found, pos, -1)
    return bisect
