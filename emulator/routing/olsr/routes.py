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

A node asks its table for one destination at a time, and a table is computed again after
most changes (every HELLO that changes a two-hop set, every TC that changes the topology
set), so :class:`RouteSearch` runs the same search only as far as the destinations asked
for: what it answers is what :func:`compute_routes` holds, since the search's steps and
their order are the same, only paused.

>>> search = RouteSearch(0, neighbours={1, 2}, two_hop={1: {3}, 2: {3}}, topology={3: {4}})
>>> search.get(3), search.get(4), search.get(9)
(1, 1, None)
"""
from __future__ import annotations


def compute_routes(me: int, neighbours, two_hop: dict, topology: dict) -> dict:
    """``{destination: next hop}`` of ``me``: the whole table (:class:`RouteSearch` run
    to its end)."""
    return RouteSearch(me, neighbours, two_hop, topology).table()


class RouteSearch:
    """The routing table of a node, searched breadth first only as far as :meth:`get`
    needs: a search that stops at the level of the destination asked for and goes on
    from there for the next one. The inputs are read at construction (``topology``
    copied: the caller's set changes with every TC, while the table must stay what it
    was when computed)."""

    __slots__ = ("me", "mine", "next_hop", "topology", "level", "at", "reached")

    def __init__(self, me: int, neighbours, two_hop: dict, topology: dict):
        # Only the order of the nodes of a level decides between equally short ways:
        # the nodes one of them reaches all take its next hop, in whatever order they
        # are met (they are sorted with their level), so the sets are read as they are.
        neighbours = sorted(neighbours)
        next_hop = {n: n for n in neighbours}
        self.me, self.mine = me, me in next_hop
        next_hop[me] = me   # never a destination: marked as reached
        level = []
        for n in neighbours:
            for w in two_hop.get(n, ()):
                if w not in next_hop:
                    next_hop[w] = n
                    level.append(w)
        level.sort()
        self.next_hop, self.topology = next_hop, dict(topology)
        # the level being searched, the next of its nodes, the nodes it reached so far
        self.level, self.at, self.reached = level, 0, []

    def get(self, dst: int) -> int | None:
        """The next hop towards ``dst``, None if there is no route."""
        if dst == self.me:
            return self.me if self.mine else None
        hop = self.next_hop.get(dst)
        if hop is None and self.level:
            self._search(dst)
            hop = self.next_hop.get(dst)
        return hop

    def table(self) -> dict:
        """Every destination's next hop."""
        self._search(None)
        table = dict(self.next_hop)
        if not self.mine:
            del table[self.me]
        return table

    def _search(self, dst) -> None:
        """Go on with the search until ``dst`` is reached (None: to the end)."""
        next_hop, topology = self.next_hop, self.topology
        level, at, reached = self.level, self.at, self.reached
        while True:
            while at < len(level):
                x = level[at]
                at += 1
                via = next_hop[x]
                for y in topology.get(x, ()):
                    if y not in next_hop:
                        next_hop[y] = via
                        reached.append(y)
                if dst in next_hop:   # the rest of the level waits for the next question
                    self.level, self.at, self.reached = level, at, reached
                    return
            if not reached:
                self.level, self.at, self.reached = [], 0, []
                return
            level, at, reached = reached, 0, []
            level.sort()
