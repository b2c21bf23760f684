"""MPR selection (RFC 3626 §8.3.1): the fewest symmetric neighbours through which every
strict two-hop neighbour is reached, by the RFC's heuristic.

First every neighbour that is the only way to some two-hop neighbour; then, while a
two-hop neighbour is uncovered, the neighbour covering most of those left (ties: the
greater degree, then the smaller id). Every node has the default willingness.

>>> two_hop = {1: {4, 5}, 2: {5, 6}, 3: {6}}
>>> sorted(select_mprs(0, {1, 2, 3}, two_hop))
[1, 2]
"""
from __future__ import annotations


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
