"""The Trickle timer (RFC 6206) that paces a node's DIOs (RFC 6550 §8.3).

An interval ``I`` starts at ``Imin``; within it the node picks ``t`` uniformly in
``[I/2, I)``, counts the consistent transmissions it hears (``c``) and transmits at ``t``
only if ``c < k``; at the interval's end ``I`` doubles, up to ``Imax = Imin x
2^doublings``. An inconsistency resets ``I`` to ``Imin`` (nothing happens if it is
``Imin`` already). Timers cannot be cancelled in the host, so each interval has a
generation number and a timer of an older one is ignored (:meth:`Trickle.current`).

>>> tr = Trickle(imin=1.0, doublings=2, k=1)   # Imax = 4
>>> tr.begin(0.0, 0.5)           # (transmit at, interval ends at)
(0.75, 1.0)
>>> tr.heard_consistent(); tr.may_send()
False
>>> tr.next_interval(1.0, 0.0), tr.next_interval(3.0, 0.0), tr.next_interval(7.0, 0.0)
((2.0, 3.0), (5.0, 7.0), (9.0, 11.0))
>>> tr.reset(), tr.interval      # an inconsistency: back to Imin
(True, 1.0)
>>> tr.reset()                   # at Imin already: nothing to do
False
"""
from __future__ import annotations


class Trickle:
    """One node's Trickle state: the interval ``interval``, the counter ``counter``,
    the generation ``generation`` of the interval running (0: none yet) and the times
    of the resets that began an interval at Imin (``resets``, kept by the caller: the
    figures' and the DIO bound's)."""

    __slots__ = ("imin", "imax", "k", "interval", "counter", "generation", "resets")

    def __init__(self, imin: float, doublings: int, k: int):
        self.imin, self.imax, self.k = imin, imin * 2 ** doublings, k
        self.interval, self.counter, self.generation = imin, 0, 0
        self.resets: list[float] = []

    def begin(self, t: float, u: float) -> tuple[float, float]:
        """Start an interval of the current length at ``t``, with ``u`` a draw from U(0,
        1): ``(when to transmit, when it ends)``."""
        self.counter = 0
        self.generation += 1
        half = self.interval / 2
        return t + half + u * half, t + self.interval

    def next_interval(self, t: float, u: float) -> tuple[float, float]:
        """The interval that ended at ``t`` doubles (up to Imax) and the next begins."""
        self.interval = min(2 * self.interval, self.imax)
        return self.begin(t, u)

    def current(self, generation: int) -> bool:
        """Whether a timer of ``generation`` belongs to the interval running."""
        return generation == self.generation

    def heard_consistent(self) -> None:
        self.counter += 1

    def may_send(self) -> bool:
        """RFC 6206 §4.2 step 4 (k = 0: RFC 6550's "infinity", never suppressed)."""
        return self.k == 0 or self.counter < self.k

    def reset(self) -> bool:
        """An inconsistency (RFC 6206 §4.2 step 6): whether a new interval must begin
        (the interval was longer than Imin, or none runs yet)."""
        if self.interval > self.imin or self.generation == 0:
            self.interval = self.imin
            return True
        return False
