"""A set of keys that forget themselves: duplicate detection for flooded packets.

AODV remembers each RREQ's ``(originator, RREQ ID)`` for PATH_DISCOVERY_TIME (RFC 3561
§6.3), OLSR each message's ``(originator, sequence number)`` for DUP_HOLD_TIME (RFC 3626
§3.4); a packet seen again within that time is not processed (or forwarded) twice.

>>> seen = IdCache()
>>> seen.add((7, 1), until=5.0)
>>> (7, 1) in seen.at(4.0), (7, 1) in seen.at(5.0)
(True, False)
"""
from __future__ import annotations


class IdCache:
    """Keys with an expiry time; expired keys are purged as the cache is read."""

    def __init__(self):
        self._until: dict = {}
        self._now = 0.0

    def at(self, t: float) -> "IdCache":
        """The cache as of ``t`` (expired keys no longer count)."""
        self._now = t
        if len(self._until) > 64:   # purge now and then, not at every read
            self._until = {k: u for k, u in self._until.items() if u > t}
        return self

    def __contains__(self, key) -> bool:
        until = self._until.get(key)
        return until is not None and until > self._now

    def add(self, key, until: float) -> None:
        """Remember ``key`` until ``until``."""
        self._until[key] = until
