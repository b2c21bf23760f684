"""Segment arithmetic shared by ATR and CTR.

Segments are half-open event-time intervals ``[start, end)``. CTR cuts every stream on
one grid of length ``T`` (segment ``g`` is ``[g*T, (g+1)*T)``); ATR's master segments
have a length that may change at segment ends.

Window semantics are the oracle's (:mod:`spark_nodes.algorithms.oracle`): members ``a``,
``b`` of a group satisfy ``a.ts - b.ts <= W_b``. Range computations here are
*conservative*: they widen bounds by :data:`EPS` relative so that a float rounding can
only add a candidate (which the exact pairwise test then rejects), never lose one.

Examples
--------
>>> segment_index(2.5, 1.0), segment_bounds(2, 1.0)
(2, (2.0, 3.0))
>>> [round(v, 6) for v in atr_slave_range(5.0, 10.0, w_slave=2.0, w_master=3.0)]
[3.0, 13.0]
"""
from __future__ import annotations

import math
from bisect import bisect_right

#: Relative widening of computed range bounds (see the module docstring).
EPS = 1e-9


def widen(x: float) -> float:
    """A margin for bound ``x``: :data:`EPS` relative, at least :data:`EPS` absolute.

    >>> widen(0.0) == EPS
    True
    """
    return EPS * max(1.0, abs(x)) if math.isfinite(x) else 0.0


def segment_index(ts: float, length: float) -> int:
    """Index ``g`` of the grid segment ``[g*length, (g+1)*length)`` holding ``ts``.

    >>> segment_index(-0.5, 1.0)
    -1
    """
    return math.floor(ts / length)


def segment_bounds(g: int, length: float) -> tuple[float, float]:
    """``(start, end)`` of grid segment ``g``."""
    return g * length, (g + 1) * length


def atr_slave_range(start: float, end: float, w_slave: float, w_master: float,
                    min_ts: float = -math.inf) -> tuple[float, float]:
    """Event-time range ``[lo, hi)`` of a slave stream aligned to master segment
    ``[start, end)``: ``[start - W_i, end + W_A)`` [source], not below ``min_ts``
    (tuples before a master switch belong to the previous master's segments).

    A slave tuple ``s`` joins some master tuple ``a`` in the segment only if
    ``a.ts - s.ts <= W_i`` and ``s.ts - a.ts <= W_A``, hence the range.

    >>> atr_slave_range(0.0, 5.0, 2.0, 2.0, min_ts=-1.0)[0]
    -1.0
    """
    lo = start - w_slave
    lo = lo - widen(lo)
    hi = end + w_master
    hi = hi + widen(hi)
    return max(lo, min_ts), hi


class Grid:
    """CTR's segment boundaries, one grid for every stream: segments of length ``T``
    that restart where a window trigger cut one (:meth:`cut`).

    Segment ``g`` is ``[start(g), end(g))``. Without cuts the grid is
    :func:`segment_index` / :func:`segment_bounds` exactly. A cut at ``c`` inside segment
    ``g`` ends it at ``c`` and starts segment ``g + 1`` at ``c``; later segments are
    ``T`` long again. Every stream's segment ``g`` covers the same interval, so CTR's
    rank order ``(g, stream)`` and its owner rule are unchanged; the caller cuts only
    beyond what it has routed, so the bounds of a routed segment never change.

    >>> grid = Grid(1.0)
    >>> grid.index(2.5), grid.bounds(2)
    (2, (2.0, 3.0))
    >>> grid.cut(2.25)
    2
    >>> grid.bounds(2), grid.bounds(3), grid.index(2.5), grid.index(3.3)
    ((2.0, 2.25), (2.25, 3.25), 3, 4)
    >>> grid.cut(2.25) is None       # a boundary already
    True
    """

    def __init__(self, length: float):
        if not length > 0:
            raise ValueError(f"segment length must be > 0, got {length!r}")
        self.length = float(length)
        # (first index, its start): segment g >= g0 starts at t0 + (g - g0) * T
        self._first = [0]
        self._start = [0.0]

    @property
    def cuts(self) -> int:
        """Cuts made so far."""
        return len(self._first) - 1

    def _anchor(self, g: int) -> int:
        return max(bisect_right(self._first, g) - 1, 0)

    def index(self, ts: float) -> int:
        """Index of the segment holding ``ts``."""
        k = max(bisect_right(self._start, ts) - 1, 0)
        g0, t0 = self._first[k], self._start[k]
        g = g0 + math.floor((ts - t0) / self.length) if k else \
            segment_index(ts, self.length)
        if k + 1 < len(self._first):       # never past the next cut (rounding)
            g = min(g, self._first[k + 1] - 1)
        return g

    def start(self, g: int) -> float:
        k = self._anchor(g)
        if k == 0:
            return segment_bounds(g, self.length)[0]
        return self._start[k] + (g - self._first[k]) * self.length

    def end(self, g: int) -> float:
        k = self._anchor(g)
        if k + 1 < len(self._first) and g + 1 == self._first[k + 1]:
            return self._start[k + 1]
        return self.start(g) + self.length if k else segment_bounds(g, self.length)[1]

    def bounds(self, g: int) -> tuple[float, float]:
        return self.start(g), self.end(g)

    def floor(self, t: float) -> float:
        """The last boundary at or before ``t`` (``t`` itself when infinite)."""
        return self.start(self.index(t)) if math.isfinite(t) else t

    def cut(self, at: float) -> int | None:
        """End the segment holding ``at`` there; the next starts at ``at``. Returns the
        index of the segment cut, or None when ``at`` is already a boundary."""
        if at < self._start[-1] and self.cuts:
            raise ValueError(f"segment grid: a cut at {at} before the last one at "
                             f"{self._start[-1]}")
        g = self.index(at)
        if not self.start(g) < at < self.end(g):
            return None
        self._first.append(g + 1)
        self._start.append(float(at))
        return g
