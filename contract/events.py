"""Events due at a node: the unit the calendar files and the runtimes process.

>>> e = Event(1.5, 3, TIMER, "tick")
>>> sorted([e, Event(1.5, 9, DELIVER, None)], key=Event.sort_key)[0].kind
'deliver'
"""
from __future__ import annotations

from typing import Any, NamedTuple

#: Event kinds. When several share a time they run in this order. ``LOST`` tells a
#: sender that the network lost one of its messages (payload ``(message, reason)``).
START, TUPLE, DELIVER, TIMER, FINISH = "start", "tuple", "deliver", "timer", "finish"
LOST = "lost"
#: A marker the driver files for itself (``emulator.lookahead``): the step of a run-ahead
#: node that was computed earlier is due in this window. Programs never see it.
RELEASE = "release"
#: Rank of each kind in the processing order (:meth:`Event.sort_key`).
KIND_RANK = {START: 0, DELIVER: 1, LOST: 2, TUPLE: 3, TIMER: 4, FINISH: 5}


class Event(NamedTuple):
    """Something due at a node at virtual ``time``.

    ``order`` breaks ties deterministically (the calendar numbers events as it files
    them); ``payload`` is a StreamTuple (TUPLE), a Message (DELIVER), a tag (TIMER) or None.
    """

    time: float
    order: int
    kind: str
    payload: Any

    def sort_key(self):
        """(time, kind rank, order): the processing order."""
        return (self.time, KIND_RANK[self.kind], self.order)


def window_of(t: float, step: float) -> tuple[float, float]:
    """The window ``[k * step, (k + 1) * step)`` of the grid of ``step`` that holds ``t``,
    both ends computed as ``k * step`` (so every user of the grid agrees to the last
    bit, where ``floor(t / step)`` alone can be one off).

    >>> window_of(0.7, 0.1)          # 7 * 0.1 is 0.7000000000000001, after 0.7
    (0.6000000000000001, 0.7000000000000001)
    >>> window_of(0.7000000000000001, 0.1) == window_of(0.75, 0.1)
    True
    """
    import math

    k = math.floor(t / step)
    if k * step > t:
        k -= 1
    elif (k + 1) * step <= t:
        k += 1
    return k * step, (k + 1) * step
