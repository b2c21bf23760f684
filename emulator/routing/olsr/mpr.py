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
    flags by position. Neighbours are taken in position (id) order, so ties go to the
    smaller id; a neighbour's strict two-hop nodes are a bit set, so what it covers of
    those left is a count of bits."""
    n, words = sym_until.shape[1], bits.shape[1]
    neighbour = sym_until[i] > t
    outside = bitset.of_flags(neighbour, words)   # i and its neighbours: not strict
    bitset.add(outside, i)                        # two-hop nodes
    strict = np.zeros((n, words), np.uint64)   # by neighbour, its strict two-hop nodes
    covers = np.zeros(n, np.int64)     # how many neighbours reach a strict two-hop node
    reach = np.zeros(n, np.int64)      # how many strict two-hop nodes a neighbour reaches
    for v in range(n):
        if neighbour[v] and two_hop_until[i, v] > t:
            listed = bits[two_hop_list[i, v]]
            for w in range(words):
                word = listed[w] & ~outside[w]
                strict[v, w] = word
                reach[v] += bitset.count(word)
                while word:
                    j, word = bitset.lowest(word)
                    covers[(w << 6) + j] += 1
    uncovered = bitset.of_flags(covers > 0, words)
    only = bitset.of_flags(covers == 1, words)
    mpr = np.zeros(n, np.bool_)
    for v in range(n):   # the only way to some two-hop node
        if reach[v] and bitset.common(strict[v], only) > 0:
            mpr[v] = True
    for v in range(n):
        if mpr[v]:
            uncovered &= ~strict[v]
    while uncovered.any():
        best, best_new = -1, -1
        for v in range(n):   # most uncovered, then greatest reach, then smallest id
            if neighbour[v] and not mpr[v]:
                new = bitset.common(strict[v], uncovered) if reach[v] else 0
                if new > best_new or (new == best_new and reach[v] > reach[best]):
                    best, best_new = v, new
        mpr[best] = True
        uncovered &= ~strict[best]
    return mpr
