"""Lookups of remote items over the emulated network: messages, the node cache, the table.

A node that needs an item it does not hold (a row of a reference table kept at another
node) sends a :class:`LookupRequest` to the holder, which answers with a
:class:`LookupReply` addressed to whoever is to use the item (``reply_to``): the asker
itself for an on-demand lookup, or another node for a fetch started ahead of need
elsewhere (docs/ALGORITHMS.md#lookups). Both are ordinary messages, so they appear in the ledger
with their hops and cost (kinds ``lookup`` and ``prefetch``).

The :class:`Cache` keeps fetched items until they expire (``ttl`` time units after they
arrived) and remembers, for each, whether it came from a prefetch and whether anything
used it: what prefetch precision and wasted bytes are computed from. With ``capacity``
it holds at most that many items and evicts the least recently used (a memory-bound
node cannot keep every row it was sent: a prefetch can push out a row still needed).

Examples
--------
>>> c = Cache(ttl=2.0)
>>> c.put(7, ("row", 7), now=1.0, prefetched=True)
>>> c.get(7, now=2.5), c.entry(7).used
(('row', 7), True)
>>> c.get(7, now=3.5) is None            # expired at 3.0
True
>>> [e.key for e in c.expired_unused]    # it was used: nothing wasted
[]
>>> lru = Cache(ttl=10.0, capacity=2)
>>> for k in (1, 2):
...     lru.put(k, ("row", k), now=0.0, prefetched=True)
>>> _ = lru.get(1, now=1.0)              # 1 is now more recent than 2
>>> lru.put(3, ("row", 3), now=2.0, prefetched=False)
>>> sorted(lru.keys()), lru.evictions, [e.key for e in lru.expired_unused]
([1, 3], 1, [2])
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple


class LookupRequest(NamedTuple):
    """Ask the holder of ``key`` to send it to ``reply_to``; ``hops``: the hops of the
    whole trip (asker to holder to ``reply_to``) when it left, for the trace."""

    key: int
    reply_to: int
    prefetch: bool
    sent_at: float
    hops: int = 0


class LookupReply(NamedTuple):
    """An item on its way to the node that will use it: ``queued`` is the time the
    request spent at the holder (waiting and served), ``version`` the item's version
    when it left, ``hops`` the request's."""

    key: int
    item: Any
    prefetch: bool
    requested_at: float
    queued: float = 0.0
    version: int = 0
    hops: int = 0


class RowUpdate(NamedTuple):
    """A newer version of ``key``'s item pushed by its holder to a node that may cache
    it (an invalidation carrying the new value)."""

    key: int
    item: Any
    version: int


def reference_row(key: int) -> tuple:
    """The row of the reference table for ``key`` (what an enriched tuple carries).

    >>> reference_row(3)
    ('item-3', 9)
    """
    return (f"item-{key}", key * key)


@dataclass
class CacheEntry:
    """One cached item and its bookkeeping."""

    key: int
    item: Any
    expires_at: float
    prefetched: bool
    used: bool = False
    version: int = 0


class Cache:
    """Fetched items with expiry, keyed by lookup key, at most ``capacity`` of them
    (None: no bound) evicting the least recently used (see the module docstring)."""

    def __init__(self, ttl: float, capacity: int | None = None):
        self.ttl = float(ttl)
        self.capacity = capacity
        # insertion order is recency order: a hit moves its entry to the end
        self._entries: dict[int, CacheEntry] = {}
        #: prefetched entries that expired, were replaced or evicted unused (wasted bytes)
        self.expired_unused: list[CacheEntry] = []
        #: entries pushed out to make room
        self.evictions = 0

    def put(self, key: int, item, now: float, prefetched: bool, version: int = 0) -> None:
        """Store ``item`` as the most recent entry, evicting the least recently used
        when full; an unused prefetched entry it replaces or evicts counts as wasted."""
        old = self._entries.pop(key, None)
        if old is not None and old.prefetched and not old.used:
            self.expired_unused.append(old)
        if self.capacity is not None:
            while len(self._entries) >= self.capacity:
                self._evict()
        self._entries[key] = CacheEntry(key, item, now + self.ttl, prefetched,
                                        version=version)

    def _evict(self) -> None:
        victim = self._entries.pop(next(iter(self._entries)))
        self.evictions += 1
        if victim.prefetched and not victim.used:
            self.expired_unused.append(victim)

    def update(self, key: int, item, version: int) -> bool:
        """Replace a cached ``key``'s item by a newer version in place (expiry and
        recency unchanged: the holder pushed it, nothing used it); False when ``key``
        is not cached or already as new."""
        e = self._entries.get(key)
        if e is None or e.version >= version:
            return False
        e.item, e.version = item, version
        return True

    def keys(self) -> list:
        """The cached keys, least recently used first (expired ones included until
        looked up)."""
        return list(self._entries)

    def entry(self, key: int) -> CacheEntry | None:
        """The entry of ``key`` as it stands (expired or not)."""
        return self._entries.get(key)

    def get(self, key: int, now: float):
        """The item of ``key`` if cached and not expired (marking it used), else None."""
        e = self._entries.get(key)
        if e is None:
            return None
        if now >= e.expires_at:
            del self._entries[key]
            if e.prefetched and not e.used:
                self.expired_unused.append(e)
            return None
        e.used = True
        self._entries[key] = self._entries.pop(key)      # the most recently used now
        return e.item

    def unused_prefetches(self) -> list[CacheEntry]:
        """Prefetched entries never used, expired or still cached."""
        return self.expired_unused + [e for e in self._entries.values()
                                      if e.prefetched and not e.used]

    def __len__(self) -> int:
        return len(self._entries)
