"""A set of keys that forget themselves: duplicate detection for flooded packets.

AODV remembers each RREQ's ``(originator, RREQ ID)`` for PATH_DISCOVERY_TIME (RFC 3561
§6.3); a packet seen again within that time is not processed (or forwarded) twice.
(OLSR keeps its messages seen by the same rule in a compiled dict,
:attr:`emulator.routing.olsr.state.Repositories.seen`.)

>>> seen = IdCache()
>>> seen.add((7, 1), until=5.0)
>>> (7, 1) in seen.at(4.0), (7, 1) in seen.at(5.0)
(True, False)
>>> seen.holds((7, 1), 4.0)
True
>>> seen.first((7, 2), 4.0, until=9.0), seen.first((7, 2), 8.0, until=12.0)
(True, False)
>>> seen.get((7, 2))           # a dict of expiries: a duplicate is found with one get
9.0
"""
from __future__ import annotations


class IdCache(dict):
    """Keys with an expiry time, as a dict ``{key: until}``; expired keys are purged as
    the cache grows.

    A read compares a key's expiry with the time, so when the expired keys are dropped
    changes nothing but memory: they go once the cache has doubled since the last purge
    (a purge at every read of a cache holding more than a few keys made a flood of RREQs
    quadratic: 60 % of an AODV run's time). Being a dict, it lets a flood's hot loop
    turn a duplicate away with one ``get`` (``held is not None and held > t``: what
    :meth:`first` answers for a key held), without a method call per reception.
    """

    __slots__ = ("_now", "_purge_at")

    def __init__(self):
        super().__init__()
        self._now = 0.0
        self._purge_at = 64

    def at(self, t: float) -> "IdCache":
        """The cache as of ``t`` (expired keys no longer count)."""
        self._now = t
        if len(self) > self._purge_at:
            self._purge(t)
        return self

    def holds(self, key, t: float) -> bool:
        """``key in self.at(t)`` in one call (a flood asks at every reception)."""
        self._now = t
        if len(self) > self._purge_at:
            self._purge(t)
        until = self.get(key)
        return until is not None and until > t

    def first(self, key, t: float, until: float) -> bool:
        """Whether ``key`` is new at ``t`` (not held); if so it is remembered until
        ``until``: :meth:`holds` and :meth:`add` in one call. A flood asks at every
        reception and most receptions are duplicates, which only read."""
        held = self.get(key)
        if held is not None and held > t:
            return False
        self._now = t
        self[key] = until
        if len(self) > self._purge_at:   # only an add makes the cache grow
            self._purge(t)
        return True

    def _purge(self, t: float) -> None:
        for key in [key for key, until in self.items() if until <= t]:
            del self[key]
        self._purge_at = max(64, 2 * len(self))

    def __contains__(self, key) -> bool:
        until = self.get(key)
        return until is not None and until > self._now

    def add(self, key, until: float) -> None:
        """Remember ``key`` until ``until``."""
        self[key] = until
