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
    next_hop = {n: n for n in sorted(neighbours)}
    level = []
    for n in sorted(neighbours):
        for w in sorted(two_hop.get(n, ())):
            if w != me and w not in next_hop:
                next_hop[w] = n
                level.append(w)
    while level:
        reached = []
        for x in sorted(level):
            for y in sorted(topology.get(x, ())):
                if y != me and y not in next_hop:
                    next_hop[y] = next_hop[x]
                    reached.append(y)
        level = reached
    return next_hop
