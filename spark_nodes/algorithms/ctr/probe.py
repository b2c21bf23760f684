"""Probing on a CTR host: stored segments, extension of partial groups, probe order.

A partial group is a tuple of StreamTuples, one per stream already joined. Extending it
with a stored segment of stream ``s`` keeps every tuple ``u`` of ``s`` that is in window
with every member (``a.ts - u.ts <= W_s`` and ``u.ts - a.ts <= W_a``, the oracle's
pairwise test) and satisfies the predicate with every member.

Selectivity statistics: per (stream of the previous probe step, probed stream) the host
counts *comparisons* (candidates in the partial's time range) and *matches* (those that
also satisfy the predicate); ``σ = matches / comparisons``, the quantity Theorem D
multiplies by ``r·W`` (the number of in-window candidates).

Examples
--------
>>> from spark_nodes.workload.tuples import StreamTuple as T
>>> seg = StoredSegment([T("B", 0, 1.0, 5, None, None, 0), T("B", 1, 2.0, 6, None, None, 0)])
>>> stats = {}
>>> out = extend([(T("A", 0, 2.5, 5, None, None, 0),)], seg, "B",
...              {"A": 1.0, "B": 2.0}, "equality", None, stats)
>>> [[m.seq for m in p] for p in out], stats
([[0, 0]], {('A', 'B'): [2, 1]})
>>> probe_sequence("A", ["A", "B", "C"], lambda a, b: {("A", "C"): 0.1}.get((a, b), 1.0))
['C', 'B']
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping, Sequence

from spark_nodes.algorithms.oracle import joinable, within


class StoredSegment:
    """The tuples of one segment, sorted by ``ts``, indexed by key for equality joins.

    Immutable once built; only the tuples are pickled (the indexes are derived).
    """

    __slots__ = ("by_key", "ts", "tups", "units")

    def __init__(self, tuples):
        self._index(sorted(tuples, key=lambda t: (t.ts, t.seq)))

    def __getstate__(self):
        return (self.tups,)

    def __setstate__(self, state) -> None:
        self._index(state[0])      # the same tuples in the same order: the same sums

    def _index(self, tups) -> None:
        self.tups = tups
        self.ts = [t.ts for t in self.tups]
        self.by_key: dict = {}
        for t in self.tups:
            ts, ls = self.by_key.setdefault(t.key, ([], []))
            ts.append(t.ts)
            ls.append(t)
        self.units = sum(t.size for t in self.tups)

    def __len__(self) -> int:
        return len(self.tups)


def _slice(ts: list, lo: float, hi: float) -> tuple[int, int]:
    # superset by bisection; the exact pairwise test filters afterwards
    return bisect_left(ts, lo), bisect_right(ts, hi)


def _in_window(p, u, w_u: float, windows) -> bool:
    return all(a.ts - u.ts <= w_u and u.ts - a.ts <= windows[a.stream] for a in p)


def extend(partials: Sequence[tuple], seg: StoredSegment, stream: str,
           windows: Mapping[str, float], predicate: str, theta: float | None,
           stats: dict) -> list[tuple]:
    """Partial groups extended by every matching tuple of ``seg`` (stream ``stream``).

    ``windows`` are floats (``inf`` for unbounded); ``stats`` is updated in place.
    """
    out = []
    w_s = windows[stream]
    dist = predicate == "distance"
    for p in partials:
        lo = max(a.ts for a in p) - w_s
        hi = min(a.ts + windows[a.stream] for a in p)
        if lo > hi:
            continue
        i, j = _slice(seg.ts, lo, hi)
        if dist:
            inwin = [u for u in seg.tups[i:j] if _in_window(p, u, w_s, windows)]
            compared = len(inwin)
            hits = [u for u in inwin if joinable(u, predicate)
                    and all(within(a, u, theta) for a in p)]
        else:
            # the key index gives the matches; the slice length counts the comparisons
            compared = j - i
            key = p[0].key
            bucket = seg.by_key.get(key) if key is not None else None
            hits = []
            if bucket is not None:
                k, m = _slice(bucket[0], lo, hi)
                hits = [u for u in bucket[1][k:m] if _in_window(p, u, w_s, windows)]
        st = stats.setdefault((p[-1].stream, stream), [0, 0])
        st[0] += compared
        st[1] += len(hits)
        out.extend(p + (u,) for u in hits)
    return out


def probe_sequence(stream: str, streams: Sequence[str],
                   selectivity: Callable[[str, str], float]) -> list[str]:
    """Order in which a segment of ``stream`` probes the others [source]: first the
    stream of lowest selectivity with ``stream``, then repeatedly the remaining stream
    of lowest selectivity with any stream already chosen (ties: spec order)."""
    pos = {s: i for i, s in enumerate(streams)}
    chosen = [stream]
    rest = [s for s in streams if s != stream]
    while rest:
        nxt = min(rest, key=lambda k: (min(selectivity(j, k) for j in chosen), pos[k]))
        chosen.append(nxt)
        rest.remove(nxt)
    return chosen[1:]
