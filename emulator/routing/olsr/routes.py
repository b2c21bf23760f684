"""The routing table from what a node has learnt (RFC 3626 §10): fewest hops first.

The symmetric neighbours at one hop, their two-hop neighbours at two, then breadth first
over the topology set's (last hop → destination) links from the nodes two or more hops
away (§10 step 3 starts at h = 2: a TC's link from a one-hop neighbour is not used, so
the two-hop set, refreshed by every HELLO, decides the routes through neighbours). A
destination takes the next hop of the node it was reached through, and among equally
short ways the one met first, in increasing id order, wins.

>>> compute_routes(0, neighbours={1, 2}, two_hop={1: {3}, 2: {3}}, topology={3: {4}})
{1: 1, 2: 2, 3: 1, 4: 1}
>>> compute_routes(0, neighbours={1}, two_hop={}, topology={1: {5}})   # not from h = 1
{1: 1}
"""
from __future__ import annotations


def compute_routes(me: int, neighbours, two_hop: dict, topology: dict) -> dict:
    """``{destination: next hop}`` of ``me``."""
    # Only the order of the nodes of a level decides between equally short ways: the
    # nodes one of them reaches all take its next hop, in whatever order they are met
    # (they are sorted with their level), so the sets are read as they are.
    neighbours = sorted(neighbours)
    next_hop = {n: n for n in neighbours}
    mine = me in next_hop
    next_hop[me] = me   # never a destination: marked as reached, removed at the end
    level = []
    for n in neighbours:
        for w in two_hop.get(n, ()):
            if w not in next_hop:
                next_hop[w] = n
                level.append(w)
    while level:
        reached = []
        level.sort()
        for x in level:
            via = next_hop[x]
            for y in topology.get(x, ()):
                if y not in next_hop:
                    next_hop[y] = via
                    reached.append(y)
        level = reached
    if not mine:
        del next_hop[me]
    return next_hop
