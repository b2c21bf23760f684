"""The exact answer of a multi-way windowed join, and the join semantics it defines.

Semantics (docs/ALGORITHMS.md#oracle): a group ``(s1..sn)``, one tuple per stream, is a result iff
the predicate holds and, for every ``k``, ``max_ts(group) - s_k.ts <= W_k`` (``W_k`` the
window of stream ``k``; ``None`` = unbounded). This equals the pairwise condition
``a.ts - b.ts <= W_b`` for every pair of members, which is what an incremental engine
checks (:mod:`spark_nodes.algorithms.multiway`). Predicates:

- ``equality``: all keys equal (a tuple whose key is ``None`` never joins);
- ``distance``: every pair within ``theta``, Euclidean on ``(x, y)``
  (``math.hypot(dx, dy) <= theta``; a tuple without a position never joins).

The oracle sweeps the tuples in ``(ts, stream, seq)`` order; each group is found once,
at its last member in that order, by probing per-key (equality) or per-grid-cell
(distance, cell size ``theta``) indexes of the tuples swept so far.

Examples
--------
>>> from spark_nodes.workload.tuples import StreamTuple as T
>>> data = {"R1": [T("R1", 0, 0.0, 1, None, None, 0), T("R1", 1, 2.0, 2, None, None, 0)],
...         "R2": [T("R2", 0, 1.0, 1, None, None, 1), T("R2", 1, 5.5, 2, None, None, 1)]}
>>> sorted(exact_groups(data, {"R1": 3.0, "R2": 3.0}, "equality"))
['R1:0|R2:0']
>>> sorted(exact_groups(data, {"R1": None, "R2": None}, "equality"))
['R1:0|R2:0', 'R1:1|R2:1']
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from typing import Iterator, Mapping, Sequence

import numpy as np

from spark_nodes.workload.tuples import StreamTuple, group_id

PREDICATES = ("equality", "distance")
INF = math.inf
_EDGE = float(2 ** 62)


def check_query(streams: Sequence[str], windows: Mapping, predicate: str,
                theta: float | None) -> dict[str, float]:
    """Validate a join query; return each stream's window as a float (``inf`` if unbounded).

    Raises
    ------
    ValueError
        Unknown predicate, missing or negative window, or a distance query without a
        ``theta >= 0``.

    Examples
    --------
    >>> check_query(["A", "B"], {"A": 2, "B": None}, "equality", None)
    {'A': 2.0, 'B': inf}
    """
    if predicate not in PREDICATES:
        raise ValueError(f"unknown predicate {predicate!r}; expected one of: {', '.join(PREDICATES)}")
    if predicate == "distance":
        if theta is None or not theta >= 0:
            raise ValueError(f"distance predicate needs theta >= 0, got {theta!r}")
    if len(set(streams)) != len(streams):
        raise ValueError(f"stream names must be distinct, got {list(streams)}")
    out = {}
    for s in streams:
        if s not in windows:
            raise ValueError(f"windows: no window for stream {s!r} (use None for unbounded)")
        w = windows[s]
        w = INF if w is None else float(w)
        if not w >= 0:
            raise ValueError(f"windows[{s!r}] must be >= 0 or None, got {windows[s]!r}")
        out[s] = w
    return out


def within(a: StreamTuple, b: StreamTuple, theta: float) -> bool:
    """True iff ``a`` and ``b`` are at most ``theta`` apart (Euclidean on ``x, y``).

    Examples
    --------
    >>> within(StreamTuple("A", 0, 0.0, None, 0.0, 0.0, 0),
    ...        StreamTuple("B", 0, 0.0, None, 3.0, 4.0, 0), 5.0)
    True
    """
    return math.hypot(a.x - b.x, a.y - b.y) <= theta


def has_position(t: StreamTuple) -> bool:
    """True iff ``t`` has finite ``x`` and ``y``."""
    return (t.x is not None and t.y is not None
            and math.isfinite(t.x) and math.isfinite(t.y))


def cell_size(theta: float) -> float:
    """Grid cell size for a distance join: a hair above ``theta``, at least ``1e-6``.

    Any cell size ``>= theta`` puts every pair within ``theta`` in the same or in
    neighbouring cells; the margin keeps that true after rounding ``x / size``, the floor
    keeps quotients finite for tiny ``theta``. ``theta = inf`` gives one cell for all
    finite positions.

    Examples
    --------
    >>> cell_size(5.0) > 5.0, cell_size(0.0)
    (True, 1e-06)
    """
    return max(theta * (1 + 1e-9), 1e-6)


def cell_of(t: StreamTuple, size: float) -> tuple[int, int]:
    """Grid cell of ``t``'s position (coordinates beyond ``2**62`` cells share the edge).

    Examples
    --------
    >>> cell_of(StreamTuple("A", 0, 0.0, None, 7.5, -0.5, 0), 5.0)
    (1, -1)
    """
    return (math.floor(min(max(t.x / size, -_EDGE), _EDGE)),
            math.floor(min(max(t.y / size, -_EDGE), _EDGE)))


def neighbour_cells(cell: tuple[int, int]) -> list[tuple[int, int]]:
    """The cell and its 8 neighbours."""
    cx, cy = cell
    return [(cx + i, cy + j) for i in (-1, 0, 1) for j in (-1, 0, 1)]


def window_slice(ts: Sequence[float], t: float, back: float, ahead: float,
                 lo: int = 0, hi: int | None = None) -> tuple[int, int]:
    """Slice ``[i, j)`` of the sorted list ``ts`` holding exactly the values ``s`` with
    ``t - s <= back`` and ``s - t <= ahead``.

    Bisection finds the bounds approximately and exact comparisons settle them, so the
    result agrees bit for bit with evaluating the two conditions on every element (a
    subtraction is monotone in each argument, so the matching values are contiguous).

    Examples
    --------
    >>> window_slice([0.0, 1.0, 2.0, 3.0, 4.0], 2.0, 1.0, 0.0)
    (1, 3)
    >>> window_slice([0.0, 1.0], 5.0, math.inf, math.inf)
    (0, 2)
    """
    hi = len(ts) if hi is None else hi
    if back == INF:
        i = lo
    else:
        i = bisect_left(ts, t - back, lo, hi)
        while i > lo and t - ts[i - 1] <= back:
            i -= 1
        while i < hi and t - ts[i] > back:
            i += 1
    if ahead == INF:
        j = hi
    else:
        j = bisect_right(ts, t + ahead, i, hi)
        while j < hi and ts[j] - t <= ahead:
            j += 1
        while j > i and ts[j - 1] - t > ahead:
            j -= 1
    return i, j


def joinable(t: StreamTuple, predicate: str) -> bool:
    """True iff ``t`` carries what the predicate needs (a key, or a finite position)."""
    return t.key is not None if predicate == "equality" else has_position(t)


class _Bucket:
    """Tuples of one stream and one key/cell, in sweep order (so also by ``ts``)."""

    __slots__ = ("ts", "tups")

    def __init__(self):
        self.ts: list[float] = []
        self.tups: list[StreamTuple] = []


def iter_groups(tuples_by_stream: Mapping[str, Sequence[StreamTuple]], windows: Mapping,
                predicate: str, theta: float | None = None,
                ) -> Iterator[tuple[StreamTuple, ...]]:
    """Yield every result group once, members in the order of ``tuples_by_stream``.

    Groups come in the order of their last member in ``(ts, stream, seq)`` order.

    Raises
    ------
    ValueError
        Invalid query (see :func:`check_query`), a tuple filed under the wrong stream, or
        a duplicate ``(stream, seq)``.
    """
    for members, cands in _sweep(tuples_by_stream, windows, predicate, theta):
        yield from _expand(members, cands, predicate, theta)


def exact_groups(tuples_by_stream: Mapping[str, Sequence[StreamTuple]], windows: Mapping,
                 predicate: str, theta: float | None = None) -> set[str]:
    """Return the ids (:func:`spark_nodes.workload.tuples.group_id`) of all result groups.

    Parameters
    ----------
    tuples_by_stream : mapping of str to sequence of StreamTuple
        All tuples of each stream (any order).
    windows : mapping of str to float or None
        Window of each stream (``None`` = unbounded).
    predicate : {"equality", "distance"}
    theta : float, optional
        Distance threshold (distance predicate).

    Examples
    --------
    >>> from spark_nodes.workload.tuples import StreamTuple as T
    >>> a = [T("A", 0, 0.0, None, 0.0, 0.0, 0), T("A", 1, 1.0, None, 9.0, 0.0, 0)]
    >>> b = [T("B", 0, 0.5, None, 4.0, 3.0, 1)]
    >>> sorted(exact_groups({"A": a, "B": b}, {"A": 1, "B": 1}, "distance", 5.0))
    ['A:0|B:0']
    """
    return {group_id(g) for g in iter_groups(tuples_by_stream, windows, predicate, theta)}


def count_groups(tuples_by_stream: Mapping[str, Sequence[StreamTuple]], windows: Mapping,
                 predicate: str, theta: float | None = None) -> int:
    """Return the number of result groups without building them.

    Equality joins are counted with vectorised searches per key (each tuple, as the last
    member in sweep order, contributes the product over the other streams of its
    same-key tuples in window); distance joins sweep as :func:`exact_groups` does and
    check the pairs among candidates only with three or more streams.

    Examples
    --------
    >>> from spark_nodes.workload.tuples import StreamTuple as T
    >>> data = {s: [T(s, i, float(i), 0, None, None, 0) for i in range(4)] for s in "AB"}
    >>> count_groups(data, {"A": 1.0, "B": 1.0}, "equality")
    10
    """
    if predicate == "equality":
        return _count_equality(tuples_by_stream, windows)
    total = 0
    for members, cands in _sweep(tuples_by_stream, windows, predicate, theta):
        if len(cands) <= 1:
            total += len(cands[0]) if cands else 1
        else:
            total += sum(1 for _ in _expand(members, cands, predicate, theta))
    return total


def _checked(tuples_by_stream):
    """Yield ``(stream index, tuple)``; a tuple under the wrong stream or a repeated
    ``(stream, seq)`` is an error."""
    seen = set()
    for i, s in enumerate(tuples_by_stream):
        for t in tuples_by_stream[s]:
            if t.stream != s:
                raise ValueError(f"tuple {t.stream}:{t.seq} listed under stream {s!r}")
            if (s, t.seq) in seen:
                raise ValueError(f"duplicate tuple {s}:{t.seq}")
            seen.add((s, t.seq))
            yield i, t


def _count_equality(tuples_by_stream, windows) -> int:
    streams = list(tuples_by_stream)
    w = check_query(streams, windows, "equality", None)
    cols = {"ts": [], "stream": [], "seq": [], "key": []}
    for i, t in _checked(tuples_by_stream):
        if t.key is not None:
            cols["ts"].append(t.ts)
            cols["stream"].append(i)
            cols["seq"].append(t.seq)
            cols["key"].append(t.key)
    ts = np.asarray(cols["ts"], dtype=float)
    sid = np.asarray(cols["stream"], dtype=np.int64)
    order = np.lexsort((np.asarray(cols["seq"]), sid, ts))     # sweep order
    ts, sid = ts[order], sid[order]
    keys = np.asarray(cols["key"], dtype=object)[order]
    rank = np.arange(len(ts))
    total = 0
    for key in set(keys.tolist()):
        mine = keys == key
        k_ts, k_sid, k_rank = ts[mine], sid[mine], rank[mine]
        counts = np.ones(len(k_ts), dtype=object)          # exact big-integer products
        for i, s in enumerate(streams):
            on = k_sid == i
            other = ~on
            if not other.any():
                continue
            s_ts, s_rank = k_ts[on], k_rank[on]
            t, t_rank = k_ts[other], k_rank[other]
            hi = np.searchsorted(s_rank, t_rank)            # swept before t
            lo = _first_in_window(s_ts, t, w[s])
            counts[other] *= np.maximum(hi - lo, 0)
        total += int(counts.sum())
    return total


def _first_in_window(s_ts: np.ndarray, t: np.ndarray, back: float) -> np.ndarray:
    """Per ``t``, the first index of the sorted ``s_ts`` with ``t - s <= back``, settled
    by exact comparisons (as :func:`window_slice`)."""
    if back == INF or len(s_ts) == 0:
        return np.zeros(len(t), dtype=np.int64)
    lo = np.searchsorted(s_ts, t - back)
    n = len(s_ts)
    while True:
        down = (lo > 0) & (t - s_ts[np.maximum(lo - 1, 0)] <= back)
        up = (lo < n) & (t - s_ts[np.minimum(lo, n - 1)] > back)
        if not (down.any() or up.any()):
            return lo
        lo = lo - down + up


def _sweep(tuples_by_stream, windows, predicate, theta):
    """Yield, for each tuple ``t`` in sweep order that has candidates on every other
    stream, ``(members, candidate_lists)``: ``members`` a list with ``t`` at its stream's
    position (``None`` elsewhere) and one candidate list per other stream (in stream
    order) of earlier-swept tuples that are in window of ``t`` and match ``t``."""
    streams = list(tuples_by_stream)
    w = check_query(streams, windows, predicate, theta)
    size = cell_size(theta) if predicate == "distance" else None
    order = [(t.ts, i, t.seq, t) for i, t in _checked(tuples_by_stream) if joinable(t, predicate)]
    order.sort(key=lambda e: e[:3])
    index: list[dict] = [dict() for _ in streams]
    for _, i, _, t in order:
        bucket_key = t.key if size is None else cell_of(t, size)
        cands = []
        ok = True
        for k, s in enumerate(streams):
            if k == i:
                continue
            found = []
            buckets = (index[k].get(bucket_key),) if size is None else \
                [index[k].get(c) for c in neighbour_cells(bucket_key)]
            for b in buckets:
                if b is None:
                    continue
                # swept tuples have ts <= t.ts: only the window on s bounds them
                lo, hi = window_slice(b.ts, t.ts, w[s], INF)
                if size is None:
                    found.extend(b.tups[lo:hi])
                else:
                    found.extend(u for u in b.tups[lo:hi] if within(t, u, theta))
            if not found:
                ok = False
                break
            cands.append(found)
        if ok:
            members = [None] * len(streams)
            members[i] = t
            yield members, cands
        b = index[i].get(bucket_key)
        if b is None:
            b = index[i][bucket_key] = _Bucket()
        b.ts.append(t.ts)
        b.tups.append(t)


def _expand(members, cands, predicate, theta):
    """Yield the full groups from one sweep step (every candidate already matches the
    swept tuple and is in window; distance still needs the pairs among candidates)."""
    slots = [i for i, m in enumerate(members) if m is None]
    chosen = list(members)

    def rec(d):
        if d == len(slots):
            yield tuple(chosen)
            return
        for u in cands[d]:
            if predicate == "distance" and not all(
                    within(chosen[slots[e]], u, theta) for e in range(d)):
                continue
            chosen[slots[d]] = u
            yield from rec(d + 1)
        chosen[slots[d]] = None

    yield from rec(0)
