"""Statistics QJoin collects while it joins: the last interval ``L`` and the period ``P``.

:class:`IntervalStats` gathers, per stream, each arriving tuple's delay, the results it
produced and the window-qualified tuples it was compared with; at the end of an
interval it becomes two :class:`~spark_nodes.algorithms.qjoin.estimator.StreamStats`.
:class:`PeriodCounts` keeps the produced and (estimated) true result counts of the last
``P / L - 1`` intervals, the ``P - L`` part of ``Q_L*``.

Examples
--------
>>> st = IntervalStats()
>>> st.add(0, 0.0, 3, 1); st.add(0, 0.5, 2, 0); st.add(1, 0.1, 4, 1)
>>> r, s = st.stream_stats(L=1.0, max_delays=(0.5, 0.1))
>>> r.rate, r.delays.tolist(), s.comparisons.tolist()
(2.0, [0.0, 0.5], [4.0])
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

    def add(self, side: int, delay: float, comparisons: int, results: int) -> None:
        """Record one arrival on stream ``side``."""
        self._rows[side].append((delay, comparisons, results))

    def count(self, side: int) -> int:
        """Arrivals on ``side`` in this interval."""
        return len(self._rows[side])

    def stream_stats(self, L: float, max_delays: tuple[float, float]) -> tuple[StreamStats,
                                                                               StreamStats]:
        """The interval's statistics of R and S (rates are arrivals per time unit)."""
        out = []
        for side in (0, 1):
            rows = np.asarray(self._rows[side], dtype=float).reshape(-1, 3)
            out.append(StreamStats(rate=rows.shape[0] / L, delays=rows[:, 0],
                                   comparisons=rows[:, 1], results=rows[:, 2],
                                   max_delay=float(max_delays[side])))
        return out[0], out[1]


class PeriodCounts:
    """Produced and true result counts of the latest ``slots`` intervals (``P - L``)."""

    def __init__(self, slots: int):
        if slots < 0:
            raise ValueError(f"PeriodCounts: slots must be >= 0, got {slots}")
        self._slots: deque = deque(maxlen=slots)

    def push(self, produced: float, true: float) -> None:
        """Close one interval with its counts (the oldest drops out)."""
        self._slots.append((float(produced), float(true)))

    def totals(self) -> tuple[float, float]:
        """``(N_prod(P-L), N_true(P-L))``."""
        if not self._slots:
            return 0.0, 0.0
        a = np.asarray(self._slots)
        return float(a[:, 0].sum()), float(a[:, 1].sum())
