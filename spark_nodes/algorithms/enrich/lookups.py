"""Lookups of remote items over the emulated network: messages, the node cache, the table.

A node that needs an item it does not hold (a row of a reference table kept at another
node) sends a :class:`LookupRequest` to the holder, which answers with a
:class:`LookupReply` addressed to whoever is to use the item (``reply_to``): the asker
itself for an on-demand lookup, or another node for a fetch started ahead of need
elsewhere (docs/ALGORITHMS.md#lookups). Both are ordinary messages, so they appear in the ledger
with their hops and cost (kinds ``lookup`` and ``prefetch``).

The :class:`Cache` keeps fetched items until they expire (``ttl`` time units after they
arrived) and remembers, for each, whether it came from a prefetch and whether anything
used it: what prefetch precision and wasted bytes are computed from.

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
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple


class LookupRequest(NamedTuple):
    """Ask the holder of ``key`` to send it to ``reply_to``."""

    key: int
    reply_to: int
    prefetch: bool
    sent_at: float


class LookupReply(NamedTuple):
    """An item on its way to the node that will use it."""

    key: int
    item: Any
    prefetch: bool
    requested_at: float


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


class Cache:
    """Fetched items with expiry, keyed by lookup key (see the module docstring)."""

    def __init__(self, ttl: float):
        self.ttl = float(ttl)
        self._entries: dict[int, CacheEntry] = {}
        #: prefetched entries that expired or were replaced unused (for wasted bytes)
        self.expired_unused: list[CacheEntry] = []

    def put(self, key: int, item, now: float, prefetched: bool) -> None:
        """Store ``item``; an unused prefetched entry it replaces counts as wasted."""
        old = self._entries.get(key)
        if old is not None and old.prefetched and not old.used:
            self.expired_unused.append(old)
        self._entries[key] = CacheEntry(key, item, now + self.ttl, prefetched)

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
        return e.item

    def unused_prefetches(self) -> list[CacheEntry]:
        """Prefetched entries never used, expired or still cached."""
        return self.expired_unused + [e for e in self._entries.values()
                                      if e.prefetched and not e.used]

    def __len__(self) -> int:
        return len(self._entries)
