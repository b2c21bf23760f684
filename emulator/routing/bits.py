"""Sets of node positions as bits, compiled: what OLSR's lists and the shared channel's
zones are read as.

A set of positions of ``n`` nodes is ``words(n)`` uint64 words, position ``p`` the bit
``p % 64`` of word ``p // 64``. OLSR's table search, a packet heard and the MPR
selection (:mod:`~emulator.routing.olsr.routes`, :mod:`~emulator.routing.olsr.receive`,
:mod:`~emulator.routing.olsr.mpr`) take a list's nodes a word at a time, and the shared
channel's grant (:mod:`~emulator.routing.channel`) a transmission's zone: an AND, an
XOR or a count of bits instead of a walk over the members. The helpers are inlined
into the kernels that call them.

>>> s = np.zeros(words(70), np.uint64)
>>> for p in (3, 64, 69):
...     add(s, p)
>>> has(s, 64), has(s, 65), count(s[1]), common(s, s)
(True, False, 2, 3)
>>> j, rest = lowest(s[1])           # 64 is bit 0 of word 1, taken out first
>>> j, count(rest)
(0, 1)
>>> remove(s, 69)
>>> has(s, 69), count(s[1])
(False, 1)
"""
from __future__ import annotations

import numpy as np
from numba import njit

_ONE = np.uint64(1)

#: ``_LOWEST[(b * _DE_BRUIJN) >> 58]`` is the index of ``b``'s bit, for ``b`` a single
#: set bit of a word (the 64 products' top six bits are all different): a multiplication
#: and a read, where a loop of halvings branches unpredictably (the table search takes
#: a set bit out of a word for every node reached: 6.6 -> 5.8 us a table).
_DE_BRUIJN = 0x03F79D71B4CB0A89
_LOWEST = np.argsort([((1 << i) * _DE_BRUIJN % 2 ** 64) >> 58 for i in range(64)])


def words(n: int) -> int:
    """The words of a set of ``n`` node positions."""
    return max(1, (n + 63) // 64)


@njit(cache=True, inline="always")
def add(s, p):
    """Put position ``p`` into the set ``s``."""
    s[p >> 6] |= _ONE << np.uint64(p & 63)


@njit(cache=True, inline="always")
def remove(s, p):
    """Take position ``p`` out of the set ``s``."""
    s[p >> 6] &= ~(_ONE << np.uint64(p & 63))


@njit(cache=True, inline="always")
def has(s, p):
    """Whether the set ``s`` holds position ``p``."""
    return (s[p >> 6] >> np.uint64(p & 63)) & _ONE != 0


@njit(cache=True, inline="always")
def lowest(word):
    """``(index, rest)``: the index in ``word`` (non-zero) of its lowest set bit, and
    the word without it."""
    bit = word & (~word + _ONE)
    return _LOWEST[(bit * np.uint64(_DE_BRUIJN)) >> np.uint64(58)], word ^ bit


@njit(cache=True, inline="always")
def count(word):
    """The set bits of the uint64 ``word`` (summed in parallel within the word)."""
    x = word - ((word >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2))
                                               & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(cache=True, inline="always")
def common(a, b):
    """How many positions the sets ``a`` and ``b`` share."""
    shared = 0
    for w in range(len(a)):
        shared += count(a[w] & b[w])
    return shared


@njit(cache=True, _nrt=False)
def fill(s, positions):
    """Put every one of ``positions`` into the set ``s``."""
    for p in positions:
        add(s, p)


@njit(cache=True, inline="always")
def of_flags(flags, size):
    """The set of ``size`` words of the positions flagged in ``flags``."""
    s = np.zeros(size, np.uint64)
    for p in range(len(flags)):
        if flags[p]:
            add(s, p)
    return s
