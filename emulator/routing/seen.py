"""Flooded messages a node has processed, remembered for a while: a flood's duplicate
check, compiled.

A node processes a flooded message once: it remembers the message's key until the key
expires (AODV's RREQ for PATH_DISCOVERY_TIME, RFC 3561 §6.3; OLSR's messages for
DUP_HOLD_TIME, RFC 3626 §3.4) and turns away the copies heard meanwhile. Every node's
keys are in one hash table of flat arrays, ``seen_key(node, originator, number) ->
until`` (node positions; open addressing, linear probing), so the compiled loops that
hear a flood check it themselves (:mod:`emulator.routing.aodv.receive`,
:mod:`emulator.routing.olsr.receive`): most receptions of a flood are copies.

Why arrays and not numba's typed dict, which held these keys before: a typed dict's
type is found by Python code at every call, an array's in C (a call of one argument:
1.9 µs against 0.2 µs; AODV's RREQ walk with no receivers, 22 arguments: 1.88 µs
with the dict, 1.59 µs with these arrays, 0.71 µs since the walks are compiled without
numba's reference counting, which these functions are inlined into).

A read compares a key's expiry with the time, so an expired key is as good as absent
and when it is dropped changes nothing but memory: :meth:`Seen.reserve`, called before
each compiled call with the most keys the call may add, keeps the table at most half
full, dropping the keys expired by then and doubling it if that is not enough (the
loops never grow it, so they never run out of room).

>>> seen = Seen()
>>> key = seen_key(0, 7, 1, 10)                 # node 0 of 10, RREQ 1 of node 7
>>> seen.reserve(4.0, 2)
>>> first_time(*seen.arrays(), key, 4.0, 5.0), first_time(*seen.arrays(), key, 4.5, 9.0)
(True, False)
>>> first_time(*seen.arrays(), key, 5.0, 9.0)   # expired at 5.0: new again
True
>>> remember(*seen.arrays(), seen_key(0, 0, 2, 10), 6.0)  # its own, as it sends it
>>> first_time(*seen.arrays(), seen_key(0, 0, 2, 10), 5.5, 9.0)
False
>>> len(seen), sorted(seen.held(5.5).items())
(2, [(2, 6.0), (30064771073, 9.0)])
"""
from __future__ import annotations

import numpy as np
from numba import njit

#: A slot with no key (keys are never negative).
EMPTY = -1
#: The smallest table (slots): 16 kB of keys and expiries.
SMALLEST = 1024
_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)   # Fibonacci hashing: 2^64 / golden ratio


class Seen:
    """The keys seen: ``keys`` and ``untils`` by slot (``capacity`` of them, a power of
    two), and ``count`` (``[slots taken]``), passed to the compiled functions as
    :meth:`arrays`."""

    def __init__(self, capacity: int = SMALLEST):
        self.keys = np.full(capacity, EMPTY, np.int64)
        self.untils = np.zeros(capacity)
        self.count = np.zeros(1, np.int64)

    def arrays(self) -> tuple:
        """``(keys, untils, count)``, what the compiled functions take."""
        return self.keys, self.untils, self.count

    def __len__(self) -> int:
        return int(self.count[0])

    def reserve(self, t: float, more: int) -> None:
        """Make room for ``more`` keys at ``t``: if the table would be over half full,
        it is made again without the keys expired at ``t`` (later calls are no earlier),
        twice as large or more if it would still be over a quarter full."""
        if self.count.item(0) + more <= len(self.keys) // 2:
            return
        live = int(np.count_nonzero((self.keys != EMPTY) & (self.untils > t)))
        capacity = len(self.keys)
        while 4 * (live + more) > capacity:
            capacity *= 2
        keys, untils = np.full(capacity, EMPTY, np.int64), np.zeros(capacity)
        self.count[0] = _rehash(self.keys, self.untils, t, keys, untils)
        self.keys, self.untils = keys, untils

    def held(self, t: float) -> dict:
        """The keys held at ``t``, ``key -> until`` (for reading)."""
        taken = (self.keys != EMPTY) & (self.untils > t)
        return dict(zip(self.keys[taken].tolist(), self.untils[taken].tolist()))


def new_latest(n: int) -> np.ndarray:
    """What turns most copies of a flood away before the table's look-up (which misses
    the caches with 10^5 keys): ``latest[i, j]`` holds the number of the last message
    of node ``j`` that node ``i`` processed and until when it is held, side by side (one
    cache line; -1: none), for ``n`` node positions (:func:`is_latest`,
    :func:`note_latest`).

    >>> latest = new_latest(3)
    >>> note_latest(latest, 0, 2, 7, 5.0)
    >>> is_latest(latest, 0, 2, 7, 4.0), is_latest(latest, 0, 2, 7, 5.0)
    (True, False)
    """
    return np.full((n, n, 2), -1.0)


@njit(cache=True, inline="always", _nrt=False)
def is_latest(latest, i, orig, number, t):
    """Whether message ``number`` of ``orig`` is the last one node ``i`` processed of
    it, still held at ``t``: a copy, turned away without a look-up."""
    return latest[i, orig, 0] == number and latest[i, orig, 1] > t


@njit(cache=True, inline="always", _nrt=False)
def note_latest(latest, i, orig, number, until):
    """Node ``i`` processed message ``number`` of ``orig``, held until ``until``."""
    latest[i, orig, 0] = number
    latest[i, orig, 1] = until


@njit(cache=True, inline="always")
def seen_key(i, orig, number, n):
    """The key of the message ``number`` of ``orig`` as node ``i`` remembers it
    (positions among ``n`` nodes; a number below 2^32)."""
    return (i * n + orig) * 4294967296 + number


@njit(cache=True, inline="always")
def _slot(keys, key):
    """The slot holding ``key``, or the empty one where it goes."""
    mask = len(keys) - 1
    i = np.int64((np.uint64(key) * _MULTIPLIER) >> np.uint64(32)) & mask
    while keys[i] != key and keys[i] != EMPTY:
        i = (i + 1) & mask
    return i


@njit(cache=True, inline="always")
def remember(keys, untils, count, key, until):
    """Hold ``key`` until ``until`` (room made by :meth:`Seen.reserve`)."""
    i = _slot(keys, key)
    if keys[i] == EMPTY:
        keys[i] = key
        count[0] += 1
    untils[i] = until


@njit(cache=True, inline="always")
def first_time(keys, untils, count, key, t, until):
    """Whether ``key`` is new at ``t`` (not held, or expired); if so it is held until
    ``until`` (room made by :meth:`Seen.reserve`)."""
    i = _slot(keys, key)
    if keys[i] == key and untils[i] > t:
        return False
    if keys[i] == EMPTY:
        keys[i] = key
        count[0] += 1
    untils[i] = until
    return True


@njit(cache=True, _nrt=False)
def _rehash(keys, untils, t, new_keys, new_untils):
    """Put the keys of ``keys`` held after ``t`` into the empty table ``new_keys``;
    returns how many."""
    count = 0
    for i in range(len(keys)):
        if keys[i] != EMPTY and untils[i] > t:
            j = _slot(new_keys, keys[i])
            new_keys[j] = keys[i]
            new_untils[j] = untils[i]
            count += 1
    return count
