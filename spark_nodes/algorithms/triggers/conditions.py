"""Conditions that fire a window (docs/ALGORITHMS.md#conditions, source 001): counts, elapsed time,
input rates, deviation from a historical rate, exceptions, and their combinations.

A condition looks at an :class:`Observations` record (what the operator has seen since
the run began and since its current window opened) and says whether it holds *now*.
Counts and elapsed time hold from their threshold on (the window initiator resets them
when a window fires); rates, deviations and exceptions above a threshold are
*edge-triggered*: they fire when they become true and must become false again before
they fire again, so a rate that stays above its threshold fires one window, not one per
tuple. Exceptions *below* a threshold are judged once per window (:class:`Exceptions`).

Each leaf has a ``kind`` (``count``, ``time``, ``rate``, ``deviation``, ``exception``):
what a fired window is attributed to (``windows_fired_by_<kind>``).

Example: the source's "a 1,000-tuple window fires after 500 tuples when the rate drops
below 10 tuples/s":

>>> obs = Observations()
>>> cond = AnyOf([Count(above=1000), Rate(below=10.0, interval=1.0)])
>>> for i in range(495):                   # 100 tuples/s for 4.95 s
...     obs.tuple("in", 0.01 * (i + 1))
>>> fired = None
>>> for k in range(10):                    # then 5 tuples/s
...     t = 5.15 + 0.2 * k
...     obs.tuple("in", t)
...     fired = fired or (cond.fires(obs, t) and (obs.window_count, round(t, 2)))
>>> fired
(500, 5.95)
"""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field

KINDS = ("count", "time", "rate", "deviation", "exception")


@dataclass
class Observations:
    """Arrival and exception times an operator has seen (kept for the longest interval
    a condition measures; older ones are dropped by :meth:`forget_before`)."""

    arrivals: dict = field(default_factory=dict)     # input -> sorted times
    everything: list = field(default_factory=list)   # every input's arrivals, sorted
    exceptions: dict = field(default_factory=dict)   # (type, origin) -> sorted times
    window_start: float = 0.0
    window_count: int = 0

    def tuple(self, source: str, t: float) -> None:
        self.arrivals.setdefault(source, []).append(t)
        self.everything.append(t)
        self.window_count += 1

    def exception(self, kind: str, t: float, origin=None) -> None:
        """An exception of type ``kind`` at ``t``, raised by (or concerning) the
        operator on node ``origin`` (None: not attributed to one)."""
        self.exceptions.setdefault((kind, origin), []).append(t)

    def opened(self, t: float) -> None:
        """A new window starts at ``t``."""
        self.window_start, self.window_count = t, 0

    def rate(self, source: str | None, t: float, interval: float) -> float:
        """Tuples per time unit over ``(t - interval, t]`` (all inputs when None)."""
        times = self.everything if source is None else self.arrivals.get(source, [])
        return _count_in(times, t - interval, t) / interval

    def exception_count(self, kind: str | None, since: float, t: float, origin=None) -> int:
        """Exceptions in ``(since, t]`` of type ``kind`` from ``origin`` (None: any)."""
        return sum(_count_in(times, since, t) for (k, o), times in self.exceptions.items()
                   if (kind is None or k == kind) and (origin is None or o == origin))

    def forget_before(self, t: float) -> None:
        for table in (self.arrivals, self.exceptions):
            for key, times in table.items():
                table[key] = times[bisect.bisect_right(times, t):]
        self.everything = self.everything[bisect.bisect_right(self.everything, t):]


def _count_in(times: list, lo: float, hi: float) -> int:
    """Times in ``(lo, hi]``."""
    return bisect.bisect_right(times, hi) - bisect.bisect_right(times, lo)


class Condition:
    """A condition on :class:`Observations` (see the module docstring)."""

    kind = ""
    #: Longest look-back this condition needs (observations older than that can go).
    horizon = 0.0

    @property
    def rises_on_arrival(self) -> bool:
        """Whether a tuple's arrival can make this condition true (a count or rate
        reaching a threshold from below); the others are judged when polled and when an
        exception is told, which keeps the cost per tuple low."""
        return True

    def holds(self, obs: Observations, t: float) -> bool:
        raise NotImplementedError

    def fires(self, obs: Observations, t: float, arrival: bool = False) -> bool:
        """Whether the condition fires a window now. ``arrival``: judged for a tuple,
        by a caller that asks only conditions that :attr:`rises_on_arrival`."""
        return self.holds(obs, t)

    def fired_kind(self, obs: Observations, t: float) -> str:
        """The kind a window fired now is attributed to."""
        return self.kind

    def reset(self) -> None:
        """A window fired: level conditions start over (edges keep their state)."""


def _between(value: float, above, below) -> bool:
    return (above is None or value >= above) and (below is None or value < below)


@dataclass
class Count(Condition):
    """Tuples in the current window reached ``above`` (or are still fewer than ``below``)."""

    above: float | None = None
    below: float | None = None
    kind = "count"

    @property
    def rises_on_arrival(self):
        return self.above is not None

    def holds(self, obs, t):
        return _between(obs.window_count, self.above, self.below)


@dataclass
class Elapsed(Condition):
    """The current window has been open for ``above`` time units (the fixed clock)."""

    above: float = 1.0
    kind = "time"
    rises_on_arrival = False

    def holds(self, obs, t):
        return t - obs.window_start >= self.above - 1e-12


class _Edge(Condition):
    """Fires when ``holds`` turns true; re-arms once it is false again."""

    _armed = True

    def fires(self, obs, t, arrival=False):
        now = self.holds(obs, t)
        if not now:
            self._armed = True
            return False
        if self._armed:
            self._armed = False
            return True
        return False


@dataclass
class Rate(_Edge):
    """The tuple rate of ``input`` (all inputs when None) over the last ``interval``
    crosses ``above`` or falls below ``below``. Measured only once the window has been
    open a whole interval (an empty interval at the start is no rate)."""

    above: float | None = None
    below: float | None = None
    interval: float = 1.0
    input: str | None = None
    kind = "rate"

    @property
    def horizon(self):
        return self.interval

    @property
    def rises_on_arrival(self):
        return self.above is not None

    def holds(self, obs, t):
        if t - obs.window_start < self.interval:
            return False
        return _between(obs.rate(self.input, t, self.interval), self.above, self.below)


@dataclass
class Deviation(_Edge):
    """The current rate deviates from the historical rate by ``above`` percent or more
    (``direction``: ``up``, ``down`` or ``both``). History: a running average of the rate
    measured every ``interval`` after ``warmup`` time units, or a saved ``profile`` of
    ``[(time, rate), ...]`` (the rate in force at ``t`` is the last entry at or before it).

    ``of = "exceptions"``: the rate of exceptions (of ``type``, from the operator on node
    ``upstream``; None: all) against their history, the source's claims 4 and 11. A
    history of no exceptions at all makes any exception a deviation (an increase without
    bound), where a tuple rate with no history is not judged.

    >>> obs, dev = Observations(), Deviation(above=200.0, warmup=2.0, of="exceptions",
    ...                                      upstream=7)
    >>> for k in range(10):                    # one exception of node 7 per unit
    ...     obs.exception("link_loss", k + 0.5, origin=7)
    >>> [dev.fires(obs, t) for t in (5.0, 9.9)]
    [False, False]
    >>> for k in range(4):                     # then four in half a unit, and two of node 3
    ...     obs.exception("dead_node", 10.1 + 0.1 * k, origin=7)
    >>> obs.exception("dead_node", 10.5, origin=3); obs.exception("dead_node", 10.6, origin=3)
    >>> dev.fires(obs, 10.6), dev.history(10.6)      # 4 in the last unit vs 1 per unit
    (True, 1.0)
    """

    above: float = 50.0
    interval: float = 1.0
    warmup: float = 5.0
    direction: str = "both"
    input: str | None = None
    profile: tuple = ()
    of: str = "tuples"
    type: str | None = None
    upstream: int | None = None
    kind = "deviation"
    _sum: float = 0.0          # of the history's samples
    _n: int = 0
    _next_sample: float = 0.0

    @property
    def horizon(self):
        return self.interval

    @property
    def rises_on_arrival(self):
        return self.direction != "down"

    def history(self, t: float) -> float | None:
        if self.profile:
            k = bisect.bisect_right(self.profile, (t, math.inf)) - 1
            return float(self.profile[max(k, 0)][1])
        return self._sum / self._n if self._n else None

    def rate(self, obs: Observations, t: float) -> float:
        """What is measured, per time unit over ``(t - interval, t]``."""
        if self.of == "exceptions":
            return obs.exception_count(self.type, t - self.interval, t,
                                       self.upstream) / self.interval
        return obs.rate(self.input, t, self.interval)

    def holds(self, obs, t):
        current = self.rate(obs, t)
        if not self.profile:
            while t >= self._next_sample + self.interval:   # sample the history on a grid
                self._next_sample += self.interval
                if self._next_sample >= self.warmup:
                    self._sum += self.rate(obs, self._next_sample)
                    self._n += 1
            if t < self.warmup or self._n < 2:
                return False
        past = self.history(t)
        if past is None or (past <= 0 and self.of == "tuples"):
            return False
        change = 100.0 * (current - past) / past if past > 0 else \
            (math.inf if current > 0 else 0.0)
        return {"up": change >= self.above, "down": -change >= self.above,
                "both": abs(change) >= self.above}[self.direction]


@dataclass
class Exceptions(_Edge):
    """Exceptions of ``type`` (all types when None) — their ``count`` in the current
    window, or their ``rate`` over the last ``interval`` — reach ``above`` (or are
    below ``below``).

    ``above`` alone is edge-triggered like a rate. A ``below`` is *judged per window*:
    once every ``interval`` after the window opened (or after its last judgment) the
    exceptions of that interval are counted, and the condition fires if they are below
    ``below``. So a quiet stretch fires a window every ``interval`` for as long as it
    stays quiet (the source's "fewer than a threshold at a given time"), not once at
    the first poll and never again:

    >>> obs, quiet = Observations(), Exceptions(below=2, interval=1.0)
    >>> fired = []
    >>> for k in range(1, 41):                 # polled every 0.1
    ...     t = round(0.1 * k, 1)
    ...     if t == 2.5:
    ...         obs.exception("link_loss", 2.5); obs.exception("link_loss", 2.6)
    ...     if quiet.fires(obs, t):
    ...         fired.append(t); obs.opened(t)
    >>> fired                                  # 2 in (2.0, 3.0]: no window at 3.0
    [1.0, 2.0, 4.0]

    ``upstream``: the operators (nodes) whose exceptions are counted, each on its own
    (claims 5 and 12); the condition holds when at least ``need`` of them (default: one)
    reach the thresholds — k of n. Empty: every exception counted together.

    >>> obs, two_of_three = Observations(), Exceptions(above=2, upstream=(3, 5, 7), need=2)
    >>> for t, node in [(0.1, 3), (0.2, 3), (0.3, 5), (0.4, 7), (0.5, 9), (0.6, 9)]:
    ...     obs.exception("no_route", t, origin=node)
    >>> two_of_three.holds(obs, 0.6)           # only node 3 has two (node 9 is not watched)
    False
    >>> obs.exception("no_route", 0.7, origin=7); two_of_three.holds(obs, 0.7)
    True
    """

    above: float | None = None
    below: float | None = None
    type: str | None = None
    measure: str = "count"
    interval: float = 1.0
    upstream: tuple = ()
    need: int = 1
    kind = "exception"
    rises_on_arrival = False
    _judged: float = 0.0       # the last per-window judgment (``below`` only)

    @property
    def horizon(self):
        return self.interval

    @property
    def per_window(self) -> bool:
        """A ``below`` is judged once per window, not on its edge."""
        return self.below is not None

    def value(self, obs: Observations, t: float, origin=None) -> float:
        """What the thresholds compare, for the exceptions of ``origin`` (None: all):
        over the last ``interval`` when ``measure`` is a rate or the condition is judged
        per window, else since the window opened."""
        since = t - self.interval if self.measure == "rate" or self.per_window \
            else obs.window_start
        n = obs.exception_count(self.type, since, t, origin)
        return n / self.interval if self.measure == "rate" else n

    def holds(self, obs, t):
        if not self.upstream:
            return _between(self.value(obs, t), self.above, self.below)
        met = sum(_between(self.value(obs, t, u), self.above, self.below)
                  for u in self.upstream)
        return met >= self.need

    def fires(self, obs, t, arrival=False):
        if not self.per_window:
            return super().fires(obs, t, arrival)
        if t - max(obs.window_start, self._judged) < self.interval - 1e-12:
            return False
        self._judged = t
        return self.holds(obs, t)


class _Combination(Condition):
    _fired = None    # the first part that fired at the last `fires` (its kind is the window's)

    def __init__(self, parts: list[Condition], need: int):
        self.parts, self.need = list(parts), need
        # the parts an arrival can make true, found once (judged per tuple)
        self._on_arrival = [p for p in self.parts if p.rises_on_arrival]

    @property
    def horizon(self):
        return max((p.horizon for p in self.parts), default=0.0)

    @property
    def rises_on_arrival(self):
        return bool(self._on_arrival)

    def fires(self, obs, t, arrival=False):
        # every part judged now is evaluated (edges must see each instant), then counted
        fired, self._fired = 0, None
        for p in (self._on_arrival if arrival else self.parts):
            if p.fires(obs, t, arrival):
                fired += 1
                self._fired = self._fired or p
        return fired >= self.need

    def holds(self, obs, t):
        return sum(p.holds(obs, t) for p in self.parts) >= self.need

    def fired_kind(self, obs, t):
        # the part that fired, not merely one that holds: an exception judged per
        # window holds most of the time
        if self._fired is not None:
            return self._fired.fired_kind(obs, t)
        for p in self.parts:
            if p.holds(obs, t):
                return p.fired_kind(obs, t)
        return self.parts[0].fired_kind(obs, t)

    def reset(self):
        self._fired = None
        for p in self.parts:
            p.reset()


class AnyOf(_Combination):
    """Fires when any part fires."""

    def __init__(self, parts):
        super().__init__(parts, 1)


class AllOf(_Combination):
    """Fires when every part fires at once (e.g. one input above while another is
    below: ``AllOf([Rate(above=..., input="R1"), Rate(below=..., input="R2")])``)."""

    def __init__(self, parts):
        super().__init__(parts, len(parts))

    def fires(self, obs, t, arrival=False):
        # level semantics across parts; fire on the rising edge of the conjunction
        now = all(p.holds(obs, t) for p in self.parts)
        was = getattr(self, "_was", False)
        self._was = now
        return now and not was


class KOfN(_Combination):
    """Fires when at least ``k`` parts hold (rising edge)."""

    def __init__(self, k: int, parts):
        if not 1 <= k <= len(parts):
            raise ValueError(f"k of n: expected 1 <= k <= {len(parts)}, got {k}")
        super().__init__(parts, k)

    def fires(self, obs, t, arrival=False):
        now = self.holds(obs, t)
        was = getattr(self, "_was", False)
        self._was = now
        return now and not was


def finite_or_none(value) -> float | None:
    """A threshold from a spec: a number, or None (absent / ``"none"``)."""
    if value is None or value == "none":
        return None
    value = float(value)
    return value if math.isfinite(value) else None
