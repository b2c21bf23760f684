"""What hearing a packet does to AODV's routes, compiled: a RREQ or a RERR heard by the
receivers of one transmission, a RREP by its next hop (RFC 3561 §6.5–6.7, §6.11).

A flood is most of an AODV run: at 200 nodes and 10^5 messages 742 k RREQ broadcasts
are heard about 16 M times, and nearly every reception is of a RREQ its receiver has
processed already. Every reception notes its sender as heard (HELLO's link sensing)
and makes or extends the receiver's route to the sender (any packet heard gives a
route to the previous hop). :func:`hear_rreq` does this for every receiver of one
transmission, over the protocol's arrays, turns the copies already processed away and
does a first reception's work on the routes (the reverse route; a reply is due, or a
rebroadcast, or nothing); :func:`hear_rerr` invalidates each receiver's routes through
the sender to the destinations it lists. A neighbour heard for the first time since it
was last lost takes the next place in the order of the receiver's neighbours (the order
a HELLO tick finds them gone in: ``heard_rank``, ``heard_next``). Both walks list the
receivers whose reception needs Python, for it to handle in order (``todo``: index in
the receivers, what it needs, a value):

- ``DEST``: the RREQ is for the receiver, which answers with a RREP;
- ``ANSWER``: the receiver holds a fresh enough route to the RREQ's destination and
  answers for it (``REVERSE`` too if its route back to the originator is valid: a
  gratuitous RREP can go);
- ``REBROADCAST``: the RREQ goes on, with the value as its destination sequence number
  (-1: unknown);
- ``TOLD`` (a RERR): the receiver invalidated routes with precursors; the value is
  how many of ``told``'s next entries are its.

Each receiver's state is its own and what Python sends is queued, not heard at once,
so handling the listed receivers after the walk, in order, is the same as handling
each reception whole in turn. A RREP (:func:`hear_rrep`, 753 k of them relayed at
10⁵ messages) makes the route to its destination and says whether it goes on, and to
whom.

Arrays by node position, row for the receiver, column for the other node:
``heard_at`` (when last heard; -inf: not a neighbour now), ``heard_rank`` (its place
among the receiver's neighbours, ``heard_next[receiver]`` the next one's), ``lifetimes``
and ``routes``
(:mod:`.rtable`), ``latest`` (the id of the last RREQ of that originator heard first,
and until when it is held; -1: none), and ``seen`` (:mod:`emulator.routing.seen`).

>>> import numpy as np
>>> from emulator.routing.aodv.rtable import new_routes
>>> from emulator.routing.seen import Seen, new_latest
>>> n = 4
>>> heard_at, (lifetimes, routes) = np.full((n, n), -np.inf), new_routes(n)
>>> heard_rank, heard_next = np.zeros((n, n), np.int64), np.zeros(n, np.int64)
>>> heard_at[1, 0], heard_next[1] = 2.0, 1                    # 1 has heard 0
>>> latest = new_latest(n)
>>> seen, todo = Seen(), np.zeros((3, n), np.int64)
>>> seen.reserve(3.0, 4)
>>> rreq = (0, 7, 1, 3, -1, 1, 2, 9.0)   # orig, its seq, id, dst, seq, hops, TTL, reverse
>>> hear_rreq(3.0, 0, np.array([1, 2]), True, 6.0, 8.0, heard_at, heard_rank,
...           heard_next, lifetimes, routes, latest, *seen.arrays(), todo, *rreq)
2
>>> todo[:, :2].tolist()    # both go on with the RREQ
[[0, 1], [16, 16], [-1, -1]]
>>> float(heard_at[1, 0]), float(lifetimes[1, 0]), routes[2, 0].tolist()
(3.0, 9.0, [0, 1, 7, 1, 0])
>>> hear_rreq(3.5, 3, np.array([1]), True, 6.5, 8.5, heard_at, heard_rank, heard_next,
...           lifetimes, routes, latest, *seen.arrays(), todo, *rreq)   # not new to 1
0
>>> heard_rank[1, [0, 3]].tolist(), int(heard_rank[2, 0]), heard_next.tolist()  # 3 2nd
([0, 1], 0, [0, 2, 1, 0])
"""
from __future__ import annotations

import numpy as np
from numba import njit

from emulator.routing.aodv.rtable import (NEXT, PRECURSORS, SEQ, offer, offer_neighbour,
                                          refresh, unreachable, valid)
from emulator.routing.seen import first_time, is_latest, note_latest, seen_key

#: What a listed receiver needs (bits of ``todo[1]``; see the module docstring).
DEST, ANSWER, REVERSE, REBROADCAST, TOLD = 2, 4, 8, 16, 32
# a receiver the RREQ may be new to (between hear_rreq's passes)
_ASK_SEEN = 64


@njit(cache=True, _nrt=False)
def hear_rreq(t, sender, receivers, hello_on, lifetime, until, heard_at, heard_rank,
              heard_next, lifetimes, routes, latest, seen_keys, seen_untils, seen_count, todo, orig, orig_seq,
              rreq_id, dst, dst_seq, hops, ttl, reverse_lifetime):
    """``receivers`` (positions, in order) hear at ``t`` from ``sender`` the RREQ
    ``rreq_id`` of ``orig`` for ``dst`` (positions; sequence numbers -1: unknown),
    ``hops`` from ``orig`` once heard, with ``ttl`` left; a route to the sender lasts
    until ``lifetime``, the reverse route until ``reverse_lifetime``, the RREQ is held
    until ``until`` (``seen_*``: :class:`~emulator.routing.seen.Seen`'s arrays, room
    made for a key a receiver). Writes each receiver left to Python into ``todo``'s
    columns and returns how many (the module docstring).

    Two passes: every receiver hears the sender, and those the RREQ may be new to are
    listed; then those listed are asked of ``seen`` and given a first reception's work,
    in order (each receiver's state is its own). A loop whose body may look a key up
    in ``seen`` cost 60–80 ns a pass even when it did not (the walk replayed alone,
    typed dict or arrays alike), against about 19 ns for the first pass."""
    count = 0
    for k in range(len(receivers)):
        u = receivers[k]
        needs = _hear(t, u, sender, hello_on, lifetime, heard_at, heard_rank, heard_next,
                      lifetimes, routes)
        # the copies of a flood are mostly of the latest RREQ of orig that u heard
        # first, held in ``latest``: a look-up in a table of 10^5 keys misses the
        # caches
        if u != orig and not is_latest(latest, u, orig, rreq_id, t):
            needs |= _ASK_SEEN
        count = _list(todo, count, k, needs, 0)
    n, listed = heard_at.shape[0], 0
    for j in range(count):
        k, needs, value = todo[0, j], todo[1, j], 0
        if needs & _ASK_SEEN:
            needs ^= _ASK_SEEN
            u = receivers[k]
            if first_time(seen_keys, seen_untils, seen_count,
                          seen_key(u, orig, rreq_id, n), t, until):
                note_latest(latest, u, orig, rreq_id, until)
                first, value = _first_reception(t, u, sender, lifetimes, routes, orig,
                                                orig_seq, dst, dst_seq, hops, ttl,
                                                reverse_lifetime)
                needs |= first
        listed = _list(todo, listed, k, needs, value)
    return listed


@njit(cache=True, inline="always")
def _first_reception(t, u, sender, lifetimes, routes, orig, orig_seq, dst, dst_seq, hops,
                     ttl, reverse_lifetime):
    """What ``u``'s first reception of a RREQ does to its routes (§6.5–6.6): the reverse
    route offered, then ``(what u needs, the destination sequence number of a
    rebroadcast)``."""
    offer(routes, lifetimes, u, orig, sender, hops, orig_seq, reverse_lifetime)
    reverse = valid(routes, lifetimes, u, orig, t)
    known = routes[u, dst, SEQ]
    if u == dst:   # §6.6.1: the destination answers
        return DEST, 0
    if valid(routes, lifetimes, u, dst, t) and known >= 0 and known >= dst_seq:
        # §6.6.2: an intermediate node with a fresh enough route answers; the RREQ's
        # sender, and the route's next hop, become precursors
        routes[u, dst, PRECURSORS] = 1
        if reverse:
            routes[u, orig, PRECURSORS] = 1
            return ANSWER | REVERSE, 0
        return ANSWER, 0
    if ttl > 1:
        return REBROADCAST, (dst_seq if known < 0 else max(known, dst_seq, 0))
    return 0, 0


@njit(cache=True, _nrt=False)
def hear_rerr(t, sender, receivers, hello_on, lifetime, heard_at, heard_rank,
              heard_next, lifetimes, routes, todo, lost, delete_at, told):
    """``receivers`` (positions, in order) hear at ``t`` from ``sender`` a RERR listing
    ``lost`` (``lost[0]`` destinations' positions, ``lost[1]`` their sequence numbers):
    each invalidates its routes to them through the sender, kept until ``delete_at``
    (:func:`~.rtable.unreachable`). Writes each receiver left to Python into ``todo``'s
    columns and the indices in ``lost`` each must tell on into ``told``, in turn;
    returns how many receivers."""
    count, written = 0, 0
    for k in range(len(receivers)):
        u = receivers[k]
        needs = _hear(t, u, sender, hello_on, lifetime, heard_at, heard_rank, heard_next,
                      lifetimes, routes)
        value = unreachable(routes, lifetimes, u, sender, lost, delete_at,
                            told[written:])
        if value:
            needs |= TOLD
            written += value
        count = _list(todo, count, k, needs, value)
    return count


@njit(cache=True, inline="always")
def _list(todo, count, k, needs, value):
    """Write receiver ``k`` into ``todo``'s column ``count`` if it ``needs`` Python;
    returns how many are listed then."""
    if needs:
        todo[0, count] = k
        todo[1, count] = needs
        todo[2, count] = value
        count += 1
    return count


#: What :func:`hear_rrep` returns when the RREP goes no further, or has reached the
#: originator with a valid route (any other value: the position it is relayed to).
STOP, ARRIVED = -1, -2


@njit(cache=True, _nrt=False)
def hear_rrep(t, u, sender, hello_on, lifetime, orig, dst, dst_seq, hops, rrep_lifetime,
              until, heard_at, heard_rank, heard_next, lifetimes, routes):
    """Node ``u`` hears from ``sender`` a RREP of the route to ``dst`` for ``orig``
    (positions), ``hops`` away once heard, its route lasting until ``rrep_lifetime``
    (§6.7): the route to the sender made or extended until ``lifetime`` (§6.5), the
    forward route offered. At the originator: :data:`ARRIVED` if the forward route is
    valid, else :data:`STOP`. Elsewhere, with the forward and reverse routes valid,
    each route's next hop becomes a precursor of the other, the reverse route is kept
    until ``until`` (at least), and the next hop back to ``orig`` is returned, else
    :data:`STOP`. The sender is heard as any packet's is (:func:`hear_neighbour`)."""
    if hello_on:
        hear_neighbour(heard_at, heard_rank, heard_next, u, sender, t)
    offer_neighbour(routes, lifetimes, u, sender, lifetime)
    offer(routes, lifetimes, u, dst, sender, hops, dst_seq, rrep_lifetime)
    forward = valid(routes, lifetimes, u, dst, t)
    if u == orig:
        return ARRIVED if forward else STOP
    if not valid(routes, lifetimes, u, orig, t) or not forward:
        return STOP   # the reverse route is gone: the reply goes no further
    routes[u, dst, PRECURSORS] = 1
    routes[u, orig, PRECURSORS] = 1
    refresh(routes, lifetimes, u, orig, until)
    return routes[u, orig, NEXT]


@njit(cache=True, inline="always")
def _hear(t, u, sender, hello_on, lifetime, heard_at, heard_rank, heard_next, lifetimes,
          routes):
    """``u`` hears ``sender`` at ``t``: noted as heard (a new neighbour takes the next
    place in ``u``'s order), and its route to the sender made or extended until
    ``lifetime`` (§6.5). Returns what ``u`` needs of Python for it: nothing."""
    if hello_on:
        hear_neighbour(heard_at, heard_rank, heard_next, u, sender, t)
    offer_neighbour(routes, lifetimes, u, sender, lifetime)
    return 0


@njit(cache=True, inline="always")
def hear_neighbour(heard_at, heard_rank, heard_next, u, sender, t):
    """``u`` hears its neighbour ``sender`` at ``t`` (HELLO's link sensing, §6.9): one
    not heard since it was last lost (or ever) goes last in ``u``'s order."""
    if heard_at[u, sender] == -np.inf:
        heard_rank[u, sender] = heard_next[u]
        heard_next[u] += 1
    heard_at[u, sender] = t


@njit(cache=True, _nrt=False)
def gone_neighbours(heard_at, heard_rank, u, t, lifetime, gone):
    """The neighbours of ``u`` not heard within ``lifetime`` before ``t``, written into
    ``gone`` in the order ``u`` first heard them; returns how many (§6.11's HELLO
    tick). They are lost: their ``heard_at`` is -inf again.

    >>> import numpy as np
    >>> heard_at = np.array([[-np.inf, 1.0, 5.0, 0.5]])
    >>> heard_rank, gone = np.array([[0, 2, 0, 1]]), np.zeros(4, np.int64)
    >>> gone_neighbours(heard_at, heard_rank, 0, 6.0, 2.0, gone), gone[:2].tolist()
    (2, [3, 1])
    >>> heard_at[0].tolist()
    [-inf, -inf, 5.0, -inf]
    """
    count = 0
    row, ranks = heard_at[u], heard_rank[u]
    for v in range(len(row)):
        if row[v] != -np.inf and t - row[v] > lifetime:
            # insertion by rank: a tick finds few gone
            k = count
            while k > 0 and ranks[gone[k - 1]] > ranks[v]:
                gone[k] = gone[k - 1]
                k -= 1
            gone[k] = v
            count += 1
    for k in range(count):
        row[gone[k]] = -np.inf
    return count
