"""Statistics QJoin collects while it joins: the last interval ``L`` and the period ``P``.

:class:`IntervalStats` gathers, per stream, each arriving tuple's delay, the results it
produced, the window-qualified tuples it was compared with and those it could not be
(they had left the other buffer); at the end of an interval it becomes two
:class:`~spark_nodes.algorithms.qjoin.estimator.StreamStats`, and the results missed
(:meth:`IntervalStats.missed_results`) are what the interval's true count is booked from
with ``book_true = "observed"``.
:class:`PeriodCounts` keeps the produced and (booked) true result counts of the last
``P / L - 1`` intervals, the ``P - L`` part of ``Q_L*``, or (``spend = "period"``) of the
user's period so far.

Examples
--------
>>> st = IntervalStats()
>>> st.add(0, 0.0, 3, 1); st.add(0, 0.5, 2, 0, missed=6); st.add(1, 0.1, 4, 1)
>>> r, s = st.stream_stats(L=1.0, max_delays=(0.5, 0.1))
>>> r.rate, r.delays.tolist(), s.comparisons.tolist()
(2.0, [0.0, 0.5], [4.0])
>>> st.missed_results()          # 6 missed by a tuple that hit 0 of its 2 comparisons
0.0
>>> pc = PeriodCounts(slots=2)
>>> pc.push(10, 12); pc.push(8, 9); pc.push(5, 5)
>>> pc.totals()
(13.0, 14.0)
"""
from __future__ import annotations

from collections import deque

import numpy as np

from spark_nodes.algorithms.qjoin.estimator import StreamStats


class IntervalStats:
    """Per-tuple records of the current interval, for streams 0 (R) and 1 (S)."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        """Start a new interval."""
        self._rows: tuple[list, list] = ([], [])

    def add(self, side: int, delay: float, comparisons: int, results: int,
            missed: int = 0) -> None:
        """Record one arrival on stream ``side`` (``missed``: tuples in its window that
        had left the other buffer)."""
        self._rows[side].append((delay, comparisons, results, missed))

    def missed_results(self) -> float:
        """Results the interval's arrivals missed, estimated: each arrival's missed
        comparisons at its own selectivity (results over comparisons it made), or at the
        interval's when it made none. A tuple's partners cluster in time (a player near
        the ball stays near it for a while), so its own hit rate predicts the part of its
        window it could not see better than the interval's average does."""
        a = np.concatenate([np.asarray(r, dtype=float).reshape(-1, 4) for r in self._rows])
        compared = float(a[:, 1].sum())
        if compared <= 0:
            return 0.0
        own = np.where(a[:, 1] > 0, a[:, 2] / np.maximum(a[:, 1], 1.0),
                       float(a[:, 2].sum()) / compared)
        return float((own * a[:, 3]).sum())

    def count(self, side: int) -> int:
        """Arrivals on ``side`` in this interval."""
        return len(self._rows[side])

    def stream_stats(self, L: float, max_delays: tuple[float, float]) -> tuple[StreamStats,
                                                                               StreamStats]:
        """The interval's statistics of R and S (rates are arrivals per time unit)."""
        out = []
        for side in (0, 1):
            rows = np.asarray(self._rows[side], dtype=float).reshape(-1, 4)
            out.append(StreamStats(rate=rows.shape[0] / L, delays=rows[:, 0],
                                   comparisons=rows[:, 1], results=rows[:, 2],
                                   max_delay=float(max_delays[side])))
        return out[0], out[1]


class PeriodCounts:
    """Produced and true result counts of the latest ``slots`` intervals (``P - L``);
    ``slots=None``: every interval since the last :meth:`clear` (the user's period)."""

    def __init__(self, slots: int | None):
        if slots is not None and slots < 0:
            raise ValueError(f"PeriodCounts: slots must be >= 0, got {slots}")
        self._slots: deque = deque(maxlen=slots)

    def clear(self) -> None:
        """Forget every interval (a new period begins)."""
        self._slots.clear()

    def push(self, produced: float, true: float) -> None:
        """Close one interval with its counts (the oldest drops out)."""
        self._slots.append((float(produced), float(true)))

    def totals(self) -> tuple[float, float]:
        """``(N_prod(P-L), N_true(P-L))``."""
        if not self._slots:
            return 0.0, 0.0
        a = np.asarray(self._slots)
        return float(a[:, 0].sum()), float(a[:, 1].sum())
