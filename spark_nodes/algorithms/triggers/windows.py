"""Windows and their initiator (docs/ALGORITHMS.md#window-initiator, source 001, Fig. 4).

A :class:`WindowInitiator` owns a window buffer and a :class:`~.conditions.Condition`.
Every tuple and every exception is told to it, and it is polled at the instants an
operator chooses (e.g. a timer every ``poll`` time units, for time-based conditions);
when the condition fires it hands back a :class:`Fired` window.

- **tumbling**: the window holds every tuple since the previous window and is discarded
  after evaluation.
- **sliding**: the first window fires by the condition; after it, the condition is
  judged again at every slide — every ``slide`` tuples (``slide_by = "count"``) or time
  units (``"time"``) — and a window holding the last ``size`` tuples (bounded history)
  fires at that slide only if the condition holds then (its level: an edge condition
  such as a rate fires at every slide while it stays true). A sliding window never
  empties, so a count or time condition keeps holding once reached (Fig. 4).

The source's table (Fig. 4): T1..T8 arrive at times 2..9; windows of four tuples.

>>> from spark_nodes.algorithms.triggers.conditions import Count
>>> arrivals = [(k + 1, f"T{k}") for k in range(1, 9)]
>>> def run(initiator):
...     fired = []
...     for t, name in arrivals:
...         for w in initiator.tuple("in", name, t) + initiator.poll(t):
...             fired.append((w.time, w.tuples))
...     return fired
>>> run(WindowInitiator(Count(above=4)))                       # tumbling
[(5, ('T1', 'T2', 'T3', 'T4')), (9, ('T5', 'T6', 'T7', 'T8'))]
>>> run(WindowInitiator(Count(above=4), mode="sliding", size=4, slide=1))[:3]
[(5, ('T1', 'T2', 'T3', 'T4')), (6, ('T2', 'T3', 'T4', 'T5')), (7, ('T3', 'T4', 'T5', 'T6'))]
>>> run(WindowInitiator(Count(above=4), mode="sliding", size=4, slide=2,
...                     slide_by="time"))[:2]
[(5, ('T1', 'T2', 'T3', 'T4')), (7, ('T3', 'T4', 'T5', 'T6'))]

A sliding window on a rate slides only while the rate holds: four tuples a time unit
until 6, then one, judged every two time units:

>>> from spark_nodes.algorithms.triggers.conditions import Rate
>>> ini = WindowInitiator(Rate(above=3.0, interval=1.0), mode="sliding", size=8,
...                       slide=2, slide_by="time", keep=False)
>>> times = [0.25 * k for k in range(1, 25)] + [7.0, 8.0, 9.0, 10.0, 11.0]
>>> [(w.time, w.kind) for t in times for w in ini.tuple("in", None, t) + ini.poll(t)]
[(1.0, 'rate'), (3.0, 'rate'), (5.0, 'rate')]
"""
from __future__ import annotations

from dataclasses import dataclass

from spark_nodes.algorithms.triggers.conditions import Condition, Observations

MODES = ("tumbling", "sliding")
SLIDE_BY = ("count", "time")


@dataclass(frozen=True)
class Fired:
    """A window that fired: when, why (the condition's kind, or ``slide``), its tuples."""

    time: float
    kind: str
    tuples: tuple


class WindowInitiator:
    """Decides when an operator's window fires (see the module docstring).

    Parameters
    ----------
    condition : Condition
        What fires a (first) window.
    mode : {"tumbling", "sliding"}
    size : int, optional
        Sliding windows: tuples kept (the bounded history).
    slide : float
        Sliding windows: tuples or time units between two windows after the first.
    slide_by : {"count", "time"}
    keep : bool
        Keep the tuples themselves (False: only count them, for operators that hold
        their own buffers and only need to know when to act).
    """

    def __init__(self, condition: Condition, mode: str = "tumbling", size: int | None = None,
                 slide: float = 1.0, slide_by: str = "count", keep: bool = True):
        if mode not in MODES:
            raise ValueError(f"mode: expected one of {', '.join(MODES)}, got {mode!r}")
        if slide_by not in SLIDE_BY:
            raise ValueError(f"slide_by: expected one of {', '.join(SLIDE_BY)}, "
                             f"got {slide_by!r}")
        if mode == "sliding" and (size is None or size < 1):
            raise ValueError(f"size: a sliding window needs a size >= 1, got {size!r}")
        self.condition = condition
        self.rises_on_arrival = condition.rises_on_arrival
        self.mode, self.size, self.slide, self.slide_by = mode, size, slide, slide_by
        self.keep = keep
        self.obs = Observations()
        self.buffer: list = []
        self.first_fired = False
        self.since_fire = 0          # tuples since the last slide (sliding by count)
        self.last_fire = 0.0         # time of the last slide (sliding by time)
        #: windows fired so far, by kind
        self.fired_by: dict[str, int] = {}

    # -- what the operator tells -----------------------------------------------------------
    def tuple(self, source: str, item, t: float) -> list[Fired]:
        """A tuple arrived from input ``source``; returns the windows that fire now."""
        self.obs.tuple(source, t)
        if self.keep:
            self.buffer.append(item)
            if self.mode == "sliding" and len(self.buffer) > self.size:
                del self.buffer[: len(self.buffer) - self.size]
        self.since_fire += 1
        return self._check(t, arrived=True)

    def exception(self, kind: str, t: float, origin=None) -> list[Fired]:
        """An exception of ``kind`` was observed (a lost message, a late tuple, an
        operator's own error...), raised by or concerning the operator on node
        ``origin`` (None: not attributed)."""
        self.obs.exception(kind, t, origin)
        return self._check(t)

    def poll(self, t: float) -> list[Fired]:
        """Check time-based conditions at ``t``."""
        return self._check(t)

    # -- internals -------------------------------------------------------------------------
    def _check(self, t: float, arrived: bool = False) -> list[Fired]:
        if self.mode == "sliding" and self.first_fired:
            return self._slide(t, arrived)
        if arrived and not self.rises_on_arrival:
            return []
        if self.condition.fires(self.obs, t, arrived):
            return [self._fire(t, self.condition.fired_kind(self.obs, t))]
        return []

    def _slide(self, t: float, arrived: bool) -> list[Fired]:
        """After the first sliding window: at every slide that is due, a window if the
        condition holds now (a slide without a window still counts as a step)."""
        due = (self.since_fire >= self.slide and arrived) if self.slide_by == "count" \
            else (t - self.last_fire >= self.slide - 1e-12)
        if not due:
            return []
        if self.condition.holds(self.obs, t):
            return [self._fire(t, self.condition.fired_kind(self.obs, t))]
        self._stepped(t)
        return []

    def _fire(self, t: float, kind: str) -> Fired:
        window = Fired(t, kind, tuple(self.buffer))
        self.fired_by[kind] = self.fired_by.get(kind, 0) + 1
        self.restart(t)
        return window

    def restart(self, t: float) -> None:
        """The window ended at ``t`` for another cause (e.g. a condition measured at
        another node fired it): the next one opens now, as after a window of its own."""
        if self.mode == "tumbling":
            self.buffer = []
            self.obs.opened(t)     # a sliding window never empties: it stays open
        self.first_fired = True
        self._stepped(t)
        self.condition.reset()
        self.obs.forget_before(t - max(self.condition.horizon, 1e-9) - 1.0)

    def _stepped(self, t: float) -> None:
        """The next slide is counted from ``t``."""
        self.since_fire = 0
        self.last_fire = t
