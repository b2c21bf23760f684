"""K-slack: a reorder buffer that releases tuples in timestamp order after a fixed slack.

A tuple is held until ``t.ts + K <= T`` (``T`` the largest timestamp seen), then
released; releases come out in timestamp order (ties: arrival order). A tuple that
arrives when its release point has already passed is released at once. The join runs on
released tuples (see :mod:`spark_nodes.algorithms.qjoin.programs`).

Examples
--------
>>> ks = KSlack(2.0)
>>> [ks.insert(ts, ts) for ts in (1.0, 4.0, 2.0, 5.0)]
[[], [1.0], [2.0], []]
>>> ks.flush(), len(ks)
([4.0, 5.0], 0)
"""
from __future__ import annotations

import heapq
import math


class ReorderBuffer:
    """Items held by timestamp until released, in timestamp order (ties: arrival order).

    The slack policies (:class:`KSlack`,
    :class:`~spark_nodes.algorithms.qjoin.mpkslack.MPKSlack`) decide when; this class
    keeps the heap.
    """

    def __init__(self):
        self._heap: list = []
        self._n = 0

    def __len__(self) -> int:
        return len(self._heap)

    def _push(self, ts: float, item) -> None:
        heapq.heappush(self._heap, (ts, self._n, item))
        self._n += 1

    def _release(self, bound: float) -> list:
        """Pop every item with ``ts <= bound``, in order."""
        out = []
        heap = self._heap
        while heap and heap[0][0] <= bound:
            out.append(heapq.heappop(heap)[2])
        return out

    def flush(self) -> list:
        """Release everything still buffered, in timestamp order."""
        return self._release(math.inf)

    def buffered(self) -> list:
        """The items held now (any order)."""
        return [e[2] for e in self._heap]


class KSlack(ReorderBuffer):
    """Fixed-slack reorder buffer of arbitrary items keyed by timestamp."""

    def __init__(self, k: float):
        if not (k >= 0 and math.isfinite(k)):
            raise ValueError(f"K-slack: K must be a finite number >= 0, got {k!r}")
        super().__init__()
        self.k = float(k)
        self.t_max = -math.inf

    def insert(self, ts: float, item) -> list:
        """Buffer ``item`` (timestamp ``ts``); return the items released now, in order."""
        self._push(ts, item)
        self.t_max = max(self.t_max, ts)
        return self._release(self.t_max - self.k)
