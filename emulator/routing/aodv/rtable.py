"""A node's AODV routes (RFC 3561 §6.1–6.2): next hop, hop count, destination sequence
number, lifetime and precursors.

A route is *valid* until its lifetime ends or a broken link invalidates it; an invalid
route keeps its sequence number, so a later request asks for a fresher one. A route is
replaced by fresher news only (§6.2): a greater sequence number, or the same one with
fewer hops or over an invalid route, or any news where no sequence number was known.

>>> table = RouteTable()
>>> table.offer(3, next_hop=1, hops=2, seq=5, lifetime=10.0)
True
>>> table.offer(3, next_hop=2, hops=4, seq=5, lifetime=10.0)    # same seq, longer
False
>>> table.valid(3, 9.0).next_hop, table.valid(3, 10.0)
(1, None)
>>> table.offer(4, next_hop=1, hops=3, seq=2, lifetime=10.0)
True
>>> table.routes[4].precursors.add(0)       # node 0 routes to 4 through this node
>>> table.break_link(1, 2.0)    # (dst, seq) to tell node 0: 4 unreachable, seq raised
[(4, 3)]
"""
from __future__ import annotations


class Route:
    """One destination's entry (``seq`` None: no valid sequence number known)."""

    __slots__ = ("next_hop", "hops", "seq", "lifetime", "valid", "precursors")

    def __init__(self, next_hop: int, hops: int, seq: int | None, lifetime: float):
        self.next_hop, self.hops, self.seq, self.lifetime = next_hop, hops, seq, lifetime
        self.valid = True
        self.precursors: set[int] = set()


class RouteTable:
    """A node's routes by destination."""

    def __init__(self):
        self.routes: dict[int, Route] = {}

    def valid(self, dst: int, t: float) -> Route | None:
        """The route to ``dst`` if it is valid at ``t``."""
        route = self.routes.get(dst)
        if route is None or not route.valid:
            return None
        if route.lifetime <= t:
            route.valid = False     # expired (§6.11: an expired route is invalid)
            return None
        return route

    def known_seq(self, dst: int) -> int | None:
        """The last sequence number known for ``dst`` (valid route or not)."""
        route = self.routes.get(dst)
        return None if route is None else route.seq

    def offer(self, dst: int, next_hop: int, hops: int, seq: int | None,
              lifetime: float) -> bool:
        """Take the news of a route to ``dst`` if it is fresher (§6.2); returns whether the
        route changed. A route kept has its lifetime extended to ``lifetime``."""
        route = self.routes.get(dst)
        if route is None:
            self.routes[dst] = Route(next_hop, hops, seq, lifetime)
            return True
        if seq is None or seq == route.seq:   # no fresher number: a shorter or valid way
            fresher = not route.valid or hops < route.hops
        else:
            fresher = route.seq is None or seq > route.seq
        if fresher:
            route.next_hop, route.hops, route.lifetime, route.valid = \
                next_hop, hops, lifetime, True
            if seq is not None:
                route.seq = seq
            return True
        if route.valid and route.next_hop == next_hop and lifetime > route.lifetime:
            route.lifetime = lifetime
        return False

    def offer_neighbour(self, neighbour: int, lifetime: float) -> None:
        """``offer(neighbour, neighbour, 1, None, lifetime)``: the route to a neighbour
        just heard, without a sequence number (§6.5). Every packet heard makes one, so
        it is written out for this case: with no number and one hop, the news is
        fresher only than an invalid route or a longer one."""
        route = self.routes.get(neighbour)
        if route is None:
            self.routes[neighbour] = Route(neighbour, 1, None, lifetime)
        elif not route.valid or route.hops > 1:
            route.next_hop, route.hops, route.lifetime, route.valid = \
                neighbour, 1, lifetime, True
        elif route.next_hop == neighbour and lifetime > route.lifetime:
            route.lifetime = lifetime

    def refresh(self, dst: int, until: float) -> None:
        """Extend a valid route's lifetime to at least ``until`` (it was used, §6.2)."""
        route = self.routes.get(dst)
        if route is not None and route.valid and until > route.lifetime:
            route.lifetime = until

    def break_link(self, neighbour: int, delete_at: float) -> list[tuple[int, int]]:
        """Invalidate every valid route through ``neighbour`` (§6.11): their sequence
        numbers go up by one, they are kept until ``delete_at``. Returns ``(dst, seq)``
        of those that have precursors to tell."""
        told = []
        for dst, route in self.routes.items():
            if route.valid and route.next_hop == neighbour:
                route.valid = False
                route.seq = (route.seq or 0) + 1
                route.lifetime = delete_at
                if route.precursors:
                    told.append((dst, route.seq))
        return told

    def unreachable(self, sender: int, lost: tuple, delete_at: float) -> list[tuple[int, int]]:
        """A RERR from ``sender``: invalidate the valid routes to ``lost``'s
        destinations that go through it; returns those with precursors to tell."""
        told = []
        for dst, seq in lost:
            route = self.routes.get(dst)
            if route is not None and route.valid and route.next_hop == sender:
                route.valid = False
                route.seq = seq
                route.lifetime = delete_at
                if route.precursors:
                    told.append((dst, seq))
        return told
