"""A RREQ or a RERR heard by the receivers of one transmission, compiled (RFC 3561 §6.5).

A flood is most of an AODV run: at 200 nodes and 10^5 messages 742 k RREQ broadcasts
are heard about 16 M times, and nearly every reception is of a RREQ its receiver has
processed already. Such a reception notes its sender as heard (HELLO's link sensing),
extends the receiver's valid one-hop route to the sender (any packet heard makes or
refreshes the route to the previous hop) and is turned away. :func:`hear_broadcast`
does this for every receiver of one transmission, over the protocol's arrays, and
lists the receivers whose reception needs more, for Python to handle in order (a
RERR, broadcast too, is heard the same way but for the duplicate check: Python then
looks at each receiver's routes through the sender):

- ``NEW_NEIGHBOUR``: a neighbour heard for the first time since it was last lost; its
  place in the order of the node's neighbours (the order a HELLO tick finds them
  gone in) is kept in Python, which notes the time too;
- ``OFFER``: the receiver holds no valid one-hop route to the sender through it, so one
  is made or changed (:meth:`~.rtable.RouteTable.offer_neighbour`);
- ``FIRST``: the RREQ is new to the receiver (not its own, not held; it is held from
  now on): it is processed (reverse route, a reply or a rebroadcast).

Each receiver's state is its own and what a first reception sends is queued, not
heard at once, so handling the listed receivers after the walk, in order, is the same
as handling each reception whole in turn.

Arrays by node position, row for the receiver, column for the other node:
``heard_at`` (when last heard; -inf: not a neighbour now), ``one_hop`` (the route to
that node is valid, of one hop and through it: kept by
:class:`~.rtable.RouteTable`), ``lifetimes`` (every route's lifetime), ``latest`` (the
id of the last RREQ of that originator heard first, and until when it is held; -1:
none), and ``seen`` (:mod:`emulator.routing.seen`).

>>> import numpy as np
>>> from emulator.routing.seen import new_purge_at, new_seen
>>> n = 4
>>> heard_at, one_hop = np.full((n, n), -np.inf), np.zeros((n, n), np.bool_)
>>> lifetimes = np.zeros((n, n))
>>> heard_at[1, 0], one_hop[1, 0], lifetimes[1, 0] = 2.0, True, 5.0   # 1 knows 0
>>> latest = np.full((2, n, n), -1.0)
>>> seen, purge_at, todo = new_seen(), new_purge_at(), np.zeros((2, n), np.int64)
>>> count = hear_broadcast(3.0, 0, 0, 1, np.array([1, 2]), True, 6.0, 8.0, heard_at,
...                        one_hop, lifetimes, latest, seen, purge_at, todo)
>>> todo[:, :count].tolist()    # both hear RREQ 1 first; 2 does not know 0 yet
[[0, 1], [4, 7]]
>>> float(heard_at[1, 0]), float(lifetimes[1, 0])
(3.0, 6.0)
>>> hear_broadcast(3.5, 3, 0, 1, np.array([1]), True, 6.5, 8.5, heard_at, one_hop,
...                lifetimes, latest, seen, purge_at, todo)   # a copy from 3, new to 1
1
>>> todo[:, :1].tolist()
[[0], [3]]
"""
from __future__ import annotations

import numpy as np
from numba import njit

from emulator.routing.seen import first_time, seen_key

#: What a listed receiver needs (bits of ``todo[1]``; see the module docstring).
NEW_NEIGHBOUR, OFFER, FIRST = 1, 2, 4


@njit(cache=True)
def hear_broadcast(t, sender, orig, rreq_id, receivers, hello_on, lifetime, until,
                   heard_at, one_hop, lifetimes, latest, seen, purge_at, todo):
    """``receivers`` (positions, in order) hear at ``t`` the RREQ ``rreq_id`` of
    ``orig`` from ``sender`` (positions; ``rreq_id`` -1: a RERR, no duplicate check);
    a route to the sender lasts until ``lifetime``, the RREQ is held until ``until``.
    Writes ``(index in receivers, what it needs)`` of each receiver left to Python into
    ``todo``'s columns and returns how many."""
    n = heard_at.shape[0]
    count = 0
    for k in range(len(receivers)):
        u = receivers[k]
        needs = 0
        if hello_on:
            if heard_at[u, sender] == -np.inf:
                needs |= NEW_NEIGHBOUR
            else:
                heard_at[u, sender] = t
        if one_hop[u, sender]:
            if lifetime > lifetimes[u, sender]:
                lifetimes[u, sender] = lifetime
        else:
            needs |= OFFER
        if rreq_id >= 0 and u != orig and _first(t, u, orig, rreq_id, until, latest,
                                                 seen, purge_at, n):
            needs |= FIRST
        if needs:
            todo[0, count] = k
            todo[1, count] = needs
            count += 1
    return count


@njit(cache=True, inline="always")
def _first(t, u, orig, rreq_id, until, latest, seen, purge_at, n):
    """Whether ``u`` hears the RREQ ``(orig, rreq_id)`` first (:func:`first_time`),
    asking ``seen`` only if it is not the latest RREQ of ``orig`` that ``u`` heard
    first: ``latest[0, u, orig]`` its id, ``latest[1, u, orig]`` until when it is held
    (as in ``seen``). The copies of a flood are mostly of that one; a look-up in a
    dict of 10^5 keys misses the caches (about 90 ns)."""
    if latest[0, u, orig] == rreq_id and latest[1, u, orig] > t:
        return False
    if not first_time(seen, purge_at, seen_key(u, orig, rreq_id, n), t, until):
        return False
    latest[0, u, orig] = rreq_id
    latest[1, u, orig] = until
    return True
