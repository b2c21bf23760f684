"""Events filed in bulk (a run's tuples), kept sorted beside the calendar's heap.

The simpy backend files the run's own events (every tuple, ``start``, ``finish``) all at
once, before the clock moves. Kept in a heap, 10^5 of them would make every push and pop
of the run pay for a heap that size; kept sorted here, a window takes its share with one
bisection and one slice, not one comparison and one pop per event. Entries are the
calendar's own ``(key, filing order, node, event)``; their event times are kept apart,
sorted, for the calendar's "when is the next event" (:meth:`FiledEvents.first_time`).

Example
-------
>>> filed = FiledEvents()
>>> filed.add([(0.5, 1, 7, "a"), (0.2, 2, 3, "b")], [0.5, 0.2])
>>> filed.first_time()
0.2
>>> filed.take_before(0.3)
[(0.2, 2, 3, 'b')]
>>> pending = [0.25]                 # a time the heap holds
>>> filed.drop_times(1, pending)     # one event fired: the earliest time goes
>>> filed.first_time(), pending
(0.5, [0.25])
"""
from __future__ import annotations

import bisect
import heapq
import math


class FiledEvents:
    """Calendar entries filed at once, sorted by ``(key, order)``, taken from the front."""

    __slots__ = ("_entries", "_keys", "_at", "_times", "_times_at")

    def __init__(self):
        self._entries: list = []     # (key, order, node, event), sorted
        self._keys: list = []        # their keys, for bisection
        self._at = 0                 # entries before it are taken
        self._times: list = []       # the events' times, sorted
        self._times_at = 0

    def add(self, entries: list, times: list) -> None:
        """File ``entries`` (calendar entries) and their events' ``times``, in any
        order: sorted in among those not yet taken."""
        entries = sorted(entries)   # (key, order) is unique: nodes, events never compared
        times = sorted(times)
        if self._at < len(self._entries):
            entries = list(heapq.merge(self._entries[self._at:], entries))
        if self._times_at < len(self._times):
            times = list(heapq.merge(self._times[self._times_at:], times))
        self._entries, self._keys, self._at = entries, [e[0] for e in entries], 0
        self._times, self._times_at = times, 0

    def first_time(self) -> float:
        """The earliest time of the events not yet fired (inf if none)."""
        return self._times[self._times_at] if self._times_at < len(self._times) else math.inf

    def take_before(self, stop: float) -> list:
        """The entries keyed before ``stop``, in order (taken: they are not returned
        again)."""
        at = self._at
        end = bisect.bisect_left(self._keys, stop, at)
        taken = self._entries[at:end]
        if end > 4096 and 2 * end > len(self._entries):   # let the taken ones go
            del self._entries[:end], self._keys[:end]
            end = 0
        self._at = end
        return taken

    def drop_times(self, fired: int, pending: list) -> None:
        """``fired`` events have fired: take the ``fired`` earliest times from those kept
        here and the heap ``pending`` together (the calendar's times of events not yet
        fired), the ones kept here first on a tie, as one pop per event would."""
        times, at, end = self._times, self._times_at, len(self._times)
        while fired:
            if at < end and not (pending and pending[0] < times[at]):
                # a run of times kept here up to the heap's earliest (ties here first)
                last = min(end, at + fired)
                run_end = last if not pending else bisect.bisect_right(times, pending[0],
                                                                       at, last)
                fired -= run_end - at
                at = run_end
            else:
                heapq.heappop(pending)
                fired -= 1
        if at > 4096 and 2 * at > end:
            del times[:at]
            at = 0
        self._times_at = at
