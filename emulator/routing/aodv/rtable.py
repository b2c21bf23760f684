"""AODV's routes (RFC 3561 §6.1–6.2) as arrays: next hop, hop count, destination sequence
number, validity, precursors and lifetime of every node's route to every destination.

A route is *valid* until its lifetime ends or a broken link invalidates it; an invalid
route keeps its sequence number, so a later request asks for a fresher one. A route is
replaced by fresher news only (§6.2): a greater sequence number, or the same one with
fewer hops or over an invalid route, or any news where no sequence number was known.

Every node's routes are cells of two arrays of its protocol's, by node position (row)
and destination position (column): ``lifetimes`` (``n x n`` floats) and ``routes``
(``n x n x FIELDS`` ints, a route's fields side by side: :data:`NEXT`, the next hop's
position, -1 where no route was ever known; :data:`HOPS`; :data:`SEQ`, -1 for no
sequence number known; :data:`VALID`; :data:`PRECURSORS`, whether any neighbour routes
through this node to the destination: a RERR is broadcast here, so who they are is never
read). The rules are compiled functions over those arrays, so the compiled walks of
what a node hears (:mod:`.receive`) and the protocol's Python change a table by the same
code (compiled into the walks, ``inline``, and without numba's reference counting: a
rule called apart had its arrays counted in and out at every call). Memory: 48 bytes × n² (1.9 MB at 200 nodes, 48 MB at 1,000).

:class:`RouteTable` is one node's table by node ids, for the protocol's Python and for
reading:

>>> table = RouteTable()
>>> table.offer(3, next_hop=1, hops=2, seq=5, lifetime=10.0)
True
>>> table.offer(3, next_hop=2, hops=4, seq=5, lifetime=10.0)    # same seq, longer
False
>>> table.valid(3, 9.0).next_hop, table.valid(3, 10.0)
(1, None)
>>> table.offer(4, next_hop=1, hops=3, seq=2, lifetime=10.0)
True
>>> table.add_precursor(4)     # a neighbour routes to 4 through this node
>>> table.break_link(1, 2.0)   # (dst, seq) for the precursors: 4 unreachable, seq raised
[(4, 3)]
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

#: The fields of ``routes`` (its first index).
NEXT, HOPS, SEQ, VALID, PRECURSORS = range(5)
FIELDS = 5


def new_routes(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(lifetimes, routes)`` of ``n`` nodes with no route known."""
    routes = np.zeros((n, n, FIELDS), np.int64)
    routes[..., NEXT] = -1
    routes[..., SEQ] = -1
    return np.zeros((n, n)), routes


@njit(cache=True, inline="always", _nrt=False)
def offer(routes, lifetimes, i, c, next_hop, hops, seq, lifetime):
    """Node ``i`` takes the news of a route to ``c`` through ``next_hop`` (positions) if
    it is fresher (§6.2; ``seq`` -1: none); returns whether the route changed. A route
    kept has its lifetime extended to ``lifetime``."""
    known = routes[i, c, SEQ]
    if routes[i, c, NEXT] < 0:   # no route was ever known
        fresher = True
    elif seq < 0 or seq == known:   # no fresher number: a shorter way, or a valid one
        fresher = routes[i, c, VALID] == 0 or hops < routes[i, c, HOPS]
    else:
        fresher = known < 0 or seq > known
    if fresher:
        routes[i, c, NEXT] = next_hop
        routes[i, c, HOPS] = hops
        routes[i, c, VALID] = 1
        lifetimes[i, c] = lifetime
        if seq >= 0:
            routes[i, c, SEQ] = seq
        return True
    if routes[i, c, VALID] != 0 and routes[i, c, NEXT] == next_hop \
            and lifetime > lifetimes[i, c]:
        lifetimes[i, c] = lifetime
    return False


@njit(cache=True, inline="always", _nrt=False)
def offer_neighbour(routes, lifetimes, i, c, lifetime):
    """``offer(routes, lifetimes, i, c, c, 1, -1, lifetime)``: the route to a neighbour
    just heard, without a sequence number (§6.5). Every packet heard makes one, so it
    is written out for this case: with no number and one hop, the news is fresher only
    than no route, an invalid one or a longer one."""
    if routes[i, c, NEXT] < 0 or routes[i, c, VALID] == 0 or routes[i, c, HOPS] > 1:
        routes[i, c, NEXT] = c
        routes[i, c, HOPS] = 1
        routes[i, c, VALID] = 1
        lifetimes[i, c] = lifetime
    elif routes[i, c, NEXT] == c and lifetime > lifetimes[i, c]:
        lifetimes[i, c] = lifetime


@njit(cache=True, inline="always", _nrt=False)
def valid(routes, lifetimes, i, c, t):
    """Whether node ``i``'s route to ``c`` is valid at ``t``; one whose lifetime is
    over is made invalid (§6.11: an expired route is invalid)."""
    if routes[i, c, VALID] == 0:
        return False
    if lifetimes[i, c] <= t:
        routes[i, c, VALID] = 0
        return False
    return True


@njit(cache=True, inline="always", _nrt=False)
def refresh(routes, lifetimes, i, c, until):
    """Extend node ``i``'s valid route to ``c`` to at least ``until`` (it was used,
    §6.2)."""
    if routes[i, c, VALID] != 0 and until > lifetimes[i, c]:
        lifetimes[i, c] = until


@njit(cache=True, inline="always", _nrt=False)
def use(routes, lifetimes, i, dst, src, t, until):
    """A packet from ``src`` to ``dst`` at node ``i``: the next hop of ``i``'s route to
    ``dst`` if it is valid at ``t`` (-1: none), the route and those to the next hop and
    to ``src`` kept active until ``until`` (§6.2)."""
    if not valid(routes, lifetimes, i, dst, t):
        return -1
    nxt = routes[i, dst, NEXT]
    refresh(routes, lifetimes, i, dst, until)
    refresh(routes, lifetimes, i, nxt, until)
    refresh(routes, lifetimes, i, src, until)
    return nxt


@njit(cache=True, inline="always", _nrt=False)
def invalidate(routes, lifetimes, i, c, delete_at):
    """Make node ``i``'s route to ``c`` invalid, kept until ``delete_at`` (§6.11; its
    sequence number is the caller's to set)."""
    routes[i, c, VALID] = 0
    lifetimes[i, c] = delete_at


@njit(cache=True, inline="always", _nrt=False)
def break_link(routes, lifetimes, i, neighbour, delete_at, raise_seq, told):
    """Invalidate every valid route of node ``i`` through ``neighbour`` (§6.11), kept
    until ``delete_at``, their sequence numbers raised by one if ``raise_seq`` (the RFC;
    ns-3 keeps them). Writes the destinations that have precursors to tell into
    ``told``, in column order, and returns how many."""
    count = 0
    for c in range(routes.shape[1]):
        if routes[i, c, VALID] != 0 and routes[i, c, NEXT] == neighbour:
            invalidate(routes, lifetimes, i, c, delete_at)
            if raise_seq:
                routes[i, c, SEQ] = max(routes[i, c, SEQ], 0) + 1
            if routes[i, c, PRECURSORS] != 0:
                told[count] = c
                count += 1
    return count


@njit(cache=True, inline="always", _nrt=False)
def unreachable(routes, lifetimes, i, sender, lost, delete_at, told):
    """A RERR from ``sender`` at node ``i``: invalidate the valid routes to ``lost``'s
    destinations (``lost[0]`` their positions, ``lost[1]`` their sequence numbers) that
    go through it. Writes the indices in ``lost`` of those with precursors to tell into
    ``told`` and returns how many."""
    count = 0
    for k in range(lost.shape[1]):
        c = lost[0, k]
        if routes[i, c, VALID] != 0 and routes[i, c, NEXT] == sender:
            invalidate(routes, lifetimes, i, c, delete_at)
            routes[i, c, SEQ] = lost[1, k]
            if routes[i, c, PRECURSORS] != 0:
                told[count] = k
                count += 1
    return count


def lost_cells(lost: tuple, column) -> np.ndarray:
    """A RERR's ``((dst, seq), ...)`` as :func:`unreachable` reads it: the destinations'
    positions (``column``: by id) over their sequence numbers.

    >>> lost_cells(((7, 2), (5, 4)), {5: 0, 7: 1}).tolist()
    [[1, 0], [2, 4]]
    """
    return np.array([[column[dst] for dst, _ in lost], [seq for _, seq in lost]],
                    np.int64)


class Route(NamedTuple):
    """What a node's route to a destination holds, read at once (``seq`` None: no
    sequence number known; ``precursors``: whether any neighbour routes through it)."""

    next_hop: int
    hops: int
    seq: int | None
    lifetime: float
    valid: bool
    precursors: bool


class RouteTable:
    """Node ``row``'s routes by node ids (see the module docstring): ``ids`` gives a
    position's id, ``column`` an id's position. A table of its own (the default) has
    rows for the destinations 0 to 255, a destination's id its column."""

    def __init__(self, lifetimes=None, routes=None, row: int = 0, column=None,
                 ids=None):
        if lifetimes is None:
            (lifetimes, routes), row = new_routes(256), 0
            column = ids = range(256)
        self.lifetimes, self.routes, self.row = lifetimes, routes, row
        self.column, self.ids = column, ids

    def offer(self, dst: int, next_hop: int, hops: int, seq: int | None,
              lifetime: float) -> bool:
        """Take the news of a route to ``dst`` if it is fresher (:func:`offer`)."""
        return offer(self.routes, self.lifetimes, self.row, self.column[dst],
                     self.column[next_hop], hops, -1 if seq is None else seq, lifetime)

    def offer_neighbour(self, neighbour: int, lifetime: float) -> None:
        """The route to a neighbour just heard (:func:`offer_neighbour`)."""
        offer_neighbour(self.routes, self.lifetimes, self.row, self.column[neighbour],
                        lifetime)

    def valid(self, dst: int, t: float) -> Route | None:
        """The route to ``dst`` if it is valid at ``t``."""
        if not valid(self.routes, self.lifetimes, self.row, self.column[dst], t):
            return None
        return self.entry(dst)

    def entry(self, dst: int) -> Route | None:
        """The route to ``dst``, valid or not; None if none was ever known."""
        i, c = self.row, self.column[dst]
        nxt, hops, seq, is_valid, precursors = self.routes[i, c].tolist()
        if nxt < 0:
            return None
        return Route(self.ids[nxt], hops, None if seq < 0 else seq,
                     float(self.lifetimes[i, c]), bool(is_valid), bool(precursors))

    def refresh(self, dst: int, until: float) -> None:
        """Extend a valid route's lifetime to at least ``until`` (:func:`refresh`)."""
        refresh(self.routes, self.lifetimes, self.row, self.column[dst], until)

    def known_seq(self, dst: int) -> int | None:
        """The last sequence number known for ``dst`` (valid route or not)."""
        seq = int(self.routes[self.row, self.column[dst], SEQ])
        return None if seq < 0 else seq

    def add_precursor(self, dst: int) -> None:
        """A neighbour routes to ``dst`` through this node (§6.2)."""
        self.routes[self.row, self.column[dst], PRECURSORS] = 1

    def invalidate(self, dst: int, delete_at: float) -> None:
        """Make the route to ``dst`` invalid, kept until ``delete_at``
        (:func:`invalidate`)."""
        invalidate(self.routes, self.lifetimes, self.row, self.column[dst], delete_at)

    def break_link(self, neighbour: int, delete_at: float,
                   raise_seq: bool = True) -> list[tuple[int, int]]:
        """Invalidate every valid route through ``neighbour`` (:func:`break_link`);
        returns ``(dst, seq)`` of those that have precursors to tell."""
        told = np.empty(self.routes.shape[1], np.int64)
        count = break_link(self.routes, self.lifetimes, self.row, self.column[neighbour],
                           delete_at, raise_seq, told)
        seqs = self.routes[self.row, :, SEQ]
        return [(self.ids[c], max(int(seqs[c]), 0)) for c in told[:count].tolist()]

    def unreachable(self, sender: int, lost: tuple, delete_at: float) -> list[tuple[int, int]]:
        """A RERR from ``sender`` (:func:`unreachable`); returns those with precursors
        to tell."""
        told = np.empty(len(lost), np.int64)
        count = unreachable(self.routes, self.lifetimes, self.row, self.column[sender],
                            lost_cells(lost, self.column), delete_at, told)
        return [lost[k] for k in told[:count].tolist()]
