"""MP-K-slack (Mutschler and Philippsen), exactly as the QJoin source describes it.

``K`` starts at 0 and ``tcurr`` is the largest timestamp seen. Every arrival is inserted.
An arrival that does not advance ``tcurr`` has delay ``D(x) = tcurr - x.ts`` measured
against the current ``tcurr`` (the one set at the previous advance). When an arrival
advances ``tcurr``: first ``K = max(K, D)`` over those delays, then every buffered tuple
with ``x.ts + K <= tcurr`` is released in timestamp order (ties: arrival order).

Examples
--------
The worked case of ``ALGORITHMS.md`` §2:

>>> mp = MPKSlack()
>>> out = [x for ts in (1, 2, 5, 3, 4, 6, 8, 7, 9) for x in mp.insert(ts, ts)]
>>> out, mp.flush(), mp.k
([1, 2, 5, 3, 4, 6, 7], [8, 9], 2.0)
"""
from __future__ import annotations

import heapq
import math


class MPKSlack:
    """Reorder buffer whose slack ``K`` grows to the largest delay observed."""

    def __init__(self):
        self.k = 0.0
        self.t_curr = -math.inf
        self._pending_delay = 0.0
        self._heap: list = []
        self._n = 0

    def __len__(self) -> int:
        return len(self._heap)

    def insert(self, ts: float, item) -> list:
        """Buffer ``item``; return the items released by this arrival, in order."""
        heapq.heappush(self._heap, (ts, self._n, item))
        self._n += 1
        if ts <= self.t_curr:
            self._pending_delay = max(self._pending_delay, self.t_curr - ts)
            return []
        self.t_curr = ts
        self.k = float(max(self.k, self._pending_delay))
        self._pending_delay = 0.0
        out = []
        heap = self._heap
        while heap and heap[0][0] + self.k <= self.t_curr:
            out.append(heapq.heappop(heap)[2])
        return out

    def flush(self) -> list:
        """Release everything still buffered, in timestamp order."""
        out = [e[2] for e in sorted(self._heap)]
        self._heap = []
        return out

    def buffered(self) -> list:
        """The items held now (any order)."""
        return [e[2] for e in self._heap]
