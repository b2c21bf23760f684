"""MP-K-slack (Mutschler and Philippsen), exactly as the QJoin source describes it.

``K`` starts at 0 and ``tcurr`` is the largest timestamp seen. Every arrival is inserted.
An arrival that does not advance ``tcurr`` has delay ``D(x) = tcurr - x.ts`` measured
against the current ``tcurr`` (the one set at the previous advance). When an arrival
advances ``tcurr``: first ``K = max(K, D)`` over those delays, then every buffered tuple
with ``x.ts + K <= tcurr`` is released in timestamp order (ties: arrival order).

Examples
--------
The worked case of ``docs/ALGORITHMS.md#mp-k-slack``:

>>> mp = MPKSlack()
>>> out = [x for ts in (1, 2, 5, 3, 4, 6, 8, 7, 9) for x in mp.insert(ts, ts)]
>>> out, mp.flush(), mp.k
([1, 2, 5, 3, 4, 6, 7], [8, 9], 2.0)
"""
from __future__ import annotations

import math

from spark_nodes.algorithms.qjoin.kslack import ReorderBuffer


class MPKSlack(ReorderBuffer):
    """Reorder buffer whose slack ``K`` grows to the largest delay observed."""

    def __init__(self):
        super().__init__()
        self.k = 0.0
        self.t_curr = -math.inf
        self._pending_delay = 0.0

    def insert(self, ts: float, item) -> list:
        """Buffer ``item``; return the items released by this arrival, in order."""
        self._push(ts, item)
        if ts <= self.t_curr:
            self._pending_delay = max(self._pending_delay, self.t_curr - ts)
            return []
        self.t_curr = ts
        self.k = float(max(self.k, self._pending_delay))
        self._pending_delay = 0.0
        return self._release(self.t_curr - self.k)
