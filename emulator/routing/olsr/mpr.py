"""MPR selection (RFC 3626 §8.3.1): the fewest symmetric neighbours through which every
strict two-hop neighbour is reached, by the RFC's heuristic.

First every neighbour that is the only way to some two-hop neighbour; then, while a
two-hop neighbour is uncovered, the neighbour covering most of those left (ties: the
greater degree, then the smaller id). Every node has the default willingness.

>>> two_hop = {1: {4, 5}, 2: {5, 6}, 3: {6}}
>>> sorted(select_mprs(0, {1, 2, 3}, two_hop))
[1, 2]

:func:`select_mprs` states the rule; an OLSR run selects with
:func:`select_mprs_compiled`, over the repositories' arrays, at every HELLO it sends
(``tests/test_routing.py`` holds the two equal).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from emulator.routing import bits as bitset


def select_mprs(me: int, neighbours: set, two_hop: dict) -> set:
    """The MPRs of ``me`` among its symmetric ``neighbours``; ``two_hop[n]`` holds
    ``n``'s symmetric neighbours (``me`` among them or not)."""
    reach = {n: set(two_hop.get(n, ())) - neighbours - {me} for n in neighbours}
    uncovered = set().union(*reach.values()) if reach else set()
    mprs = set()
    by = {}
    for n, nodes in reach.items():
        for w in nodes:
            by.setdefault(w, []).append(n)
    for w, via in by.items():
        if len(via) == 1:
            mprs.add(via[0])
    for n in mprs:
        uncovered -= reach[n]
    while uncovered:
        best = min(neighbours - mprs,
                   key=lambda n: (-len(reach[n] & uncovered), -len(reach[n]), n))
        mprs.add(best)
        uncovered -= reach[best]
    return mprs


@njit(cache=True)
def select_mprs_compiled(i, t, sym_until, two_hop_until, two_hop_list, bits):
    """:func:`select_mprs` of node position ``i`` at ``t`` over the repositories' arrays
    (:class:`~emulator.routing.olsr.state.Repositories`): its symmetric neighbours,
    and the list each one's valid HELLO gave (``bits``: the lists' bit sets,
    :meth:`~emulator.routing.olsr.routes.RouteInputs.bit_sets`); returns the MPRs as
    flags by position (:func:`select_into`, in arrays made here)."""
    n, words = sym_until.shape[1], bits.shape[1]
    mpr = np.zeros(n, np.bool_)
    select_into(i, t, sym_until, two_hop_until, two_hop_list, bits,
                np.zeros((n, words), np.uint64), np.zeros(n, np.int64),
                np.zeros(n, np.int64), np.zeros((3, words), np.uint64), mpr)
    return mpr


@njit(cache=True, inline="always")
def select_into(i, t, sym_until, two_hop_until, two_hop_list, bits, strict, covers,
                reach, sets, mpr):
    """:func:`select_mprs_compiled`, its MPRs written into the flags ``mpr``, in arrays
    given (a compiled loop allocates none): ``strict`` (by neighbour, its strict two-hop
    nodes as a bit set), ``covers`` (how many neighbours reach a strict two-hop node),
    ``reach`` (how many strict two-hop nodes a neighbour reaches), ``sets`` (three bit
    sets). Neighbours are taken in position (id) order, so ties go to the smaller id; a
    neighbour's strict two-hop nodes are a bit set, so what it covers of those left is
    a count of bits."""
    n, words = sym_until.shape[1], bits.shape[1]
    outside, uncovered, only = sets[0], sets[1], sets[2]
    for w in range(words):
        outside[w] = uncovered[w] = only[w] = 0
    for v in range(n):
        covers[v], reach[v], mpr[v] = 0, 0, False
        if sym_until[i, v] > t:   # i and its neighbours: not strict two-hop nodes
            bitset.add(outside, v)
    bitset.add(outside, i)
    for v in range(n):
        for w in range(words):
            strict[v, w] = 0
        if sym_until[i, v] > t and two_hop_until[i, v] > t:
            listed = bits[two_hop_list[i, v]]
            for w in range(words):
                word = listed[w] & ~outside[w]
                strict[v, w] = word
                reach[v] += bitset.count(word)
                while word:
                    j, word = bitset.lowest(word)
                    covers[(w << 6) + j] += 1
    for p in range(n):
        if covers[p] > 0:
            bitset.add(uncovered, p)
        if covers[p] == 1:
            bitset.add(only, p)
    for v in range(n):   # the only way to some two-hop node
        if reach[v] and bitset.common(strict[v], only) > 0:
            mpr[v] = True
    for v in range(n):
        if mpr[v]:
            for w in range(words):
                uncovered[w] &= ~strict[v, w]
    while _any(uncovered):
        best, best_new = -1, -1
        for v in range(n):   # most uncovered, then greatest reach, then smallest id
            if sym_until[i, v] > t and not mpr[v]:
                new = bitset.common(strict[v], uncovered) if reach[v] else 0
                if new > best_new or (new == best_new and reach[v] > reach[best]):
                    best, best_new = v, new
        mpr[best] = True
        for w in range(words):
            uncovered[w] &= ~strict[best, w]


@njit(cache=True, inline="always")
def _any(s):
    """Whether the bit set ``s`` holds any position."""
    for w in range(len(s)):
        if s[w]:
            return True
    return False
