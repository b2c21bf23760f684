"""Flooded messages a node has processed, remembered for a while: a flood's duplicate
check, compiled.

A node processes a flooded message once: it remembers the message's key until the key
expires (AODV's RREQ for PATH_DISCOVERY_TIME, RFC 3561 §6.3; OLSR's messages for
DUP_HOLD_TIME, RFC 3626 §3.4) and turns away the copies heard meanwhile. Every node's
keys are in one compiled dict, ``seen_key(node, originator, number) -> until`` (node
positions), so the compiled loops that hear a flood check it themselves
(:mod:`emulator.routing.aodv.receive`, :mod:`emulator.routing.olsr.receive`): most
receptions of a flood are copies.

A read compares a key's expiry with the time, so when the expired keys are dropped
changes nothing but memory: they go once the dict has doubled since the last purge
(``purge_at``). A dict made or written from Python compiles its methods again in every
process (0.7 s); made and written by compiled functions, they come from numba's cache.

>>> seen, purge_at = new_seen(), new_purge_at()
>>> key = seen_key(0, 7, 1, 10)                 # node 0 of 10, RREQ 1 of node 7
>>> first_time(seen, purge_at, key, 4.0, 5.0), first_time(seen, purge_at, key, 4.5, 9.0)
(True, False)
>>> first_time(seen, purge_at, key, 5.0, 9.0)   # expired at 5.0: new again
True
>>> remember(seen, seen_key(0, 0, 2, 10), 6.0)  # its own, as it sends it
>>> first_time(seen, purge_at, seen_key(0, 0, 2, 10), 5.5, 9.0)
False
"""
from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.typed import Dict


@njit(cache=True)
def new_seen():
    """An empty dict of keys seen, ``key -> until``."""
    return Dict.empty(key_type=types.int64, value_type=types.float64)


def new_purge_at() -> np.ndarray:
    """The size beyond which :func:`first_time` purges a new dict of what expired."""
    return np.array([64], np.int64)


@njit(cache=True)
def seen_key(i, orig, number, n):
    """The key of the message ``number`` of ``orig`` as node ``i`` remembers it
    (positions among ``n`` nodes; a number below 2^32)."""
    return (i * n + orig) * 4294967296 + number


@njit(cache=True)
def remember(seen, key, until):
    """Hold ``key`` until ``until``."""
    seen[key] = until


@njit(cache=True)
def first_time(seen, purge_at, key, t, until):
    """Whether ``key`` is new at ``t`` (not held, or expired); if so it is held until
    ``until``."""
    if seen.get(key, -np.inf) > t:
        return False
    seen[key] = until
    if len(seen) > purge_at[0]:
        forget(seen, t, purge_at)
    return True


@njit(cache=True)
def forget(seen, t, purge_at):
    """Drop the keys expired at ``t``; the next purge when ``seen`` has doubled."""
    gone = [key for key, until in seen.items() if until <= t]
    for key in gone:
        del seen[key]
    purge_at[0] = max(64, 2 * len(seen))
