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

import numpy as np


class Route:
    """One destination's entry (``seq`` None: no valid sequence number known).

    Its lifetime is a cell of its table's ``lifetimes`` (the compiled flood extends it
    there, :mod:`.flood`). ``next_hop``, ``hops`` and ``valid`` are written by its
    :class:`RouteTable` only, which keeps its one-hop flag beside them.
    """

    __slots__ = ("next_hop", "hops", "seq", "valid", "precursors", "_lifetimes", "_at")

    def __init__(self, next_hop: int, hops: int, seq: int | None, lifetime: float,
                 lifetimes, at: int):
        self._lifetimes, self._at = lifetimes, at
        self.next_hop, self.hops, self.seq, self.lifetime = next_hop, hops, seq, lifetime
        self.valid = True
        self.precursors: set[int] = set()

    @property
    def lifetime(self) -> float:
        return self._lifetimes[self._at]

    @lifetime.setter
    def lifetime(self, value: float) -> None:
        self._lifetimes[self._at] = value


class RouteTable:
    """A node's routes by destination.

    ``lifetimes`` and ``one_hop`` are the node's rows of its protocol's arrays (buffers
    indexed by a destination's ``column``, :class:`~.protocol.Aodv`): every route's
    lifetime, and whether the route to that destination is valid, of one hop and
    through it (what a packet heard from it extends). Python reads a memoryview's item
    as fast as a list's; the compiled flood writes the same memory (:mod:`.flood`). A
    table of its own (the default) has rows for the destinations 0 to 255.
    """

    def __init__(self, lifetimes=None, one_hop=None, column=None):
        if lifetimes is None:
            lifetimes, one_hop = memoryview(np.zeros(256)), memoryview(np.zeros(256, bool))
            column = range(256)   # a destination's id is its column
        self.routes: dict[int, Route] = {}
        self._lifetimes, self._one_hop, self._column = lifetimes, one_hop, column

    def __deepcopy__(self, memo) -> "RouteTable":
        """A copy with rows of its own."""
        lifetimes, one_hop = memoryview(np.array(self._lifetimes)), \
            memoryview(np.array(self._one_hop))
        other = RouteTable(lifetimes, one_hop, self._column)
        for dst, route in self.routes.items():
            copied = Route(route.next_hop, route.hops, route.seq, route.lifetime,
                           lifetimes, route._at)
            copied.valid, copied.precursors = route.valid, set(route.precursors)
            other.routes[dst] = copied
        return other

    def _add(self, dst: int, next_hop: int, hops: int, seq: int | None,
             lifetime: float) -> None:
        at = self._column[dst]
        self.routes[dst] = Route(next_hop, hops, seq, lifetime, self._lifetimes, at)
        self._one_hop[at] = hops <= 1 and next_hop == dst

    def valid(self, dst: int, t: float) -> Route | None:
        """The route to ``dst`` if it is valid at ``t``."""
        route = self.routes.get(dst)
        if route is None or not route.valid:
            return None
        if route.lifetime <= t:
            route.valid = False     # expired (§6.11: an expired route is invalid)
            self._one_hop[route._at] = False
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
            self._add(dst, next_hop, hops, seq, lifetime)
            return True
        if seq is None or seq == route.seq:   # no fresher number: a shorter or valid way
            fresher = not route.valid or hops < route.hops
        else:
            fresher = route.seq is None or seq > route.seq
        if fresher:
            route.next_hop, route.hops, route.lifetime, route.valid = \
                next_hop, hops, lifetime, True
            self._one_hop[route._at] = hops <= 1 and next_hop == dst
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
            self._add(neighbour, neighbour, 1, None, lifetime)
        elif not route.valid or route.hops > 1:
            route.next_hop, route.hops, route.lifetime, route.valid = \
                neighbour, 1, lifetime, True
            self._one_hop[route._at] = True
        elif route.next_hop == neighbour and lifetime > route.lifetime:
            route.lifetime = lifetime

    def refresh(self, dst: int, until: float) -> None:
        """Extend a valid route's lifetime to at least ``until`` (it was used, §6.2)."""
        route = self.routes.get(dst)
        if route is not None and route.valid and until > route.lifetime:
            route.lifetime = until

    def invalidate(self, route: Route, delete_at: float) -> None:
        """Make ``route`` invalid, kept until ``delete_at`` (§6.11; its sequence number
        is the caller's to set)."""
        route.valid = False
        self._one_hop[route._at] = False
        route.lifetime = delete_at

    def break_link(self, neighbour: int, delete_at: float) -> list[tuple[int, int]]:
        """Invalidate every valid route through ``neighbour`` (§6.11): their sequence
        numbers go up by one, they are kept until ``delete_at``. Returns ``(dst, seq)``
        of those that have precursors to tell."""
        told = []
        for dst, route in self.routes.items():
            if route.valid and route.next_hop == neighbour:
                self.invalidate(route, delete_at)
                route.seq = (route.seq or 0) + 1
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
                self.invalidate(route, delete_at)
                route.seq = seq
                if route.precursors:
                    told.append((dst, seq))
        return told
