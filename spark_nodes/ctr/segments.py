"""Segment arithmetic shared by ATR and CTR.

Segments are half-open event-time intervals ``[start, end)``. CTR cuts every stream on
one grid of length ``T`` (segment ``g`` is ``[g*T, (g+1)*T)``); ATR's master segments
have a length that may change at segment ends.

Window semantics are the oracle's (:mod:`spark_nodes.oracle`): members ``a``, ``b`` of a
group satisfy ``a.ts - b.ts <= W_b``. Range computations here are *conservative*: they
widen bounds by :data:`EPS` relative so that a float rounding can only add a candidate
(which the exact pairwise test then rejects), never lose one.

Examples
--------
>>> segment_index(2.5, 1.0), segment_bounds(2, 1.0)
(2, (2.0, 3.0))
>>> [round(v, 6) for v in atr_slave_range(5.0, 10.0, w_slave=2.0, w_master=3.0)]
[3.0, 13.0]
"""
from __future__ import annotations

import math

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
