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
def select_mprs_compiled(i, t, sym_until, two_hop_until, two_hop_list, starts, members):
    """:func:`select_mprs` of node position ``i`` at ``t`` over the repositories' arrays
    (:class:`~emulator.routing.olsr.state.Repositories`): its symmetric neighbours,
    and the list each one's valid HELLO gave; returns the MPRs as flags by position.
    Neighbours are taken in position (id) order, so ties go to the smaller id."""
    n = sym_until.shape[1]
    neighbour = sym_until[i] > t
    mpr = np.zeros(n, np.bool_)
    covers = np.zeros(n, np.int64)     # how many neighbours reach a strict two-hop node
    reach = np.zeros(n, np.int64)      # how many strict two-hop nodes a neighbour reaches
    for v in range(n):
        if neighbour[v] and two_hop_until[i, v] > t:
            k = two_hop_list[i, v]
            for j in range(starts[k], starts[k + 1]):
                w = members[j]
                if w != i and not neighbour[w]:
                    covers[w] += 1
                    reach[v] += 1
    uncovered, only = covers > 0, covers == 1
    for v in range(n):   # the only way to some two-hop node
        if reach[v] and _reaches(i, v, neighbour, only, two_hop_list, starts, members):
            mpr[v] = True
    for v in range(n):
        if mpr[v]:
            _cover(i, v, neighbour, uncovered, two_hop_list, starts, members)
    while uncovered.any():
        best, best_new = -1, -1
        for v in range(n):   # most uncovered, then greatest reach, then smallest id
            if neighbour[v] and not mpr[v]:
                new = 0
                if reach[v]:
                    k = two_hop_list[i, v]
                    for j in range(starts[k], starts[k + 1]):
                        if uncovered[members[j]]:
                            new += 1
                if new > best_new or (new == best_new and reach[v] > reach[best]):
                    best, best_new = v, new
        mpr[best] = True
        _cover(i, best, neighbour, uncovered, two_hop_list, starts, members)
    return mpr


@njit(cache=True)
def _reaches(i, v, neighbour, wanted, two_hop_list, starts, members):
    """Whether neighbour ``v`` of ``i`` reaches a strict two-hop node flagged ``wanted``."""
    k = two_hop_list[i, v]
    for j in range(starts[k], starts[k + 1]):
        w = members[j]
        if w != i and not neighbour[w] and wanted[w]:
            return True
    return False


@njit(cache=True)
def _cover(i, v, neighbour, uncovered, two_hop_list, starts, members):
    """The strict two-hop nodes neighbour ``v`` of ``i`` reaches are covered."""
    k = two_hop_list[i, v]
    for j in range(starts[k], starts[k + 1]):
        w = members[j]
        if w != i and not neighbour[w]:
            uncovered[w] = False
