"""The data traffic of a run after its warm-up: what ``[run] warmup`` leaves in.

Routing tables, neighbour sets and queues start empty at t = 0; a run with
``[run] warmup = W`` lets the protocols and the mobility run from 0 as always but
measures only the messages sent at or after ``W`` (docs/DESIGN.md, "Warm-up"). The
transport counts every message; :class:`MeasuredTraffic` counts the measured ones beside
it, from the messages the backend injects and the arrivals and drops the transport
reports, so the transport's own books (and a run without warm-up) stay as they are.

Example
-------
>>> from types import SimpleNamespace as M
>>> book = MeasuredTraffic(start=2.0)
>>> early, late, local = M(src=0, dst=1, sent_at=1.0), M(src=0, dst=1, sent_at=2.0), \\
...     M(src=1, dst=1, sent_at=3.0)
>>> for m in (early, late, local): book.injected(m, free=False)
>>> book.arrived(2.5, early); book.arrived(3.5, late)
>>> figures = book.figures(drops=[(4.0, M(src=0, dst=1, sent_at=3.0), "no_route", 0)],
...                        pending=[])
>>> figures["messages"], figures["sent"], figures["delivered"], figures["message_delay_mean"]
(2, 1, 1, 1.5)
>>> figures["drops_by_reason"]
{'no_route': 1}
>>> import pandas as pd
>>> log = pd.DataFrame({"time": [0.5, 2.0, 2.5], "type": ["HELLO", "HELLO", "TC"]})
>>> book.figures(drops=[], pending=[], control=log)["control_sent"]
{'HELLO': 1, 'TC': 1}
"""
from __future__ import annotations

import math
from collections import Counter


class MeasuredTraffic:
    """Data messages sent at or after ``start``: how many were injected (``messages``,
    local and free ones included, as the backend's ``messages``), sent across the
    network (``sent``), delivered with their mean delay, and dropped by reason."""

    def __init__(self, start: float):
        self.start = start
        self.messages = 0
        self.sent = 0
        self.delivered = 0
        self._delay_sum = 0.0

    def injected(self, msg, free: bool) -> None:
        """A message the programs sent (``free``: a signal delivered outside the
        network, which the transport never sees)."""
        if msg.sent_at >= self.start:
            self.messages += 1
            if not free and msg.src != msg.dst:
                self.sent += 1

    def arrived(self, t: float, msg) -> None:
        """A delivery the transport decided (the transport's own rule: one across the
        network counts)."""
        if msg.src != msg.dst and msg.sent_at >= self.start:
            self.delivered += 1
            self._delay_sum += t - msg.sent_at

    def figures(self, drops, pending, control=None) -> dict:
        """The measured figures, under the names of the transport's ``stats()``, at the
        end of the run: ``drops`` every data drop ``(time, message, reason, node)``,
        ``pending`` the deliveries decided but not yet taken ``(time, message)``,
        ``control`` a routing protocol's transmissions (its control log's frame:
        ``time``, ``type``), counted by type from ``start`` on (``control_sent``)."""
        delivered, delay_sum = self.delivered, self._delay_sum
        for t, msg in pending:
            if msg.src != msg.dst and msg.sent_at >= self.start:
                delivered += 1
                delay_sum += t - msg.sent_at
        lost = Counter(reason for _, msg, reason, _ in drops if msg.sent_at >= self.start)
        out = {"from": self.start, "messages": self.messages, "sent": self.sent,
               "delivered": delivered,
               "message_delay_mean": delay_sum / delivered if delivered else math.nan,
               "drops_by_reason": dict(sorted(lost.items()))}
        if control is not None:
            late = control.loc[control["time"] >= self.start, "type"]
            counts = late.value_counts(sort=False)
            out["control_sent"] = {str(k): int(n) for k, n in counts.items() if n}
        return out
