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

:func:`compute_routes` states the rule; an OLSR run computes its tables with
:class:`RouteInputs`, which keeps what every node's table is computed from as arrays
(expiry times and the lists its HELLOs and TCs carried) and searches them compiled. A
table is computed again after most changes (every HELLO that changes a two-hop set,
every TC that changes the topology set): 140,000 times in a 200-node run of
``bench_scale`` (10^5 messages), for 286,000 queries. So :meth:`RouteInputs.route`
searches a table only as deep as the destinations asked for need, and goes on from
there when a farther one is asked for: 167,000 compiled calls of 5.7 us against
140,000 whole tables of 8.6 us (and 1.6 us to turn each into a list). The tables are
the same (``tests/test_routing.py`` holds them to :func:`compute_routes`, whole and
asked for one destination at a time).

>>> inputs = RouteInputs([0, 1, 2, 3, 4])
>>> inputs.link(0, 1, until=9.0); inputs.link(0, 2, until=9.0)
>>> inputs.two_hop(0, 1, listed=(0, 3), until=9.0); inputs.two_hop(0, 2, (3,), 9.0)
>>> inputs.topology(0, 3, selectors=(4,), until=9.0)
>>> row = inputs.table(1.0, 0)
>>> [inputs.next_hop(row, d) for d in (0, 1, 2, 3, 4, 7)]
[None, 1, 2, 1, 1, None]
>>> [inputs.next_hop(inputs.table(9.0, 0), d) for d in (1, 4)]   # all expired at 9
[None, None]
>>> inputs.stale[0] = True                    # a change: searched at the next query
>>> inputs.route(1.0, 0, 4), inputs.route(5.0, 0, 7)   # both from the search at 1.0
(1, None)
"""
from __future__ import annotations

import numpy as np
from numba import njit

from emulator.routing import bits

#: A next hop not known yet: the search of the node's table has not reached it.
UNKNOWN = -2


def compute_routes(me: int, neighbours, two_hop: dict, topology: dict) -> dict:
    """``{destination: next hop}`` of ``me`` from its symmetric ``neighbours``, its
    ``two_hop`` set (``{neighbour: what its HELLO listed}``) and its ``topology`` set
    (``{TC originator: its selectors}``), all valid now."""
    neighbours = sorted(neighbours)
    next_hop = {n: n for n in neighbours}
    mine = me in next_hop
    next_hop[me] = me   # never a destination: marked as reached
    level = []
    for n in neighbours:
        for w in two_hop.get(n, ()):
            if w not in next_hop:
                next_hop[w] = n
                level.append(w)
    while level:
        # only the order of a level's nodes decides between equally short ways: the
        # nodes one of them reaches all take its next hop, in whatever order met
        level.sort()
        reached = []
        for x in level:
            for y in topology.get(x, ()):
                if y not in next_hop:
                    next_hop[y] = next_hop[x]
                    reached.append(y)
        level = reached
    if not mine:
        del next_hop[me]
    return next_hop


class RouteInputs:
    """What every node's routing table is computed from, as arrays over node positions
    (``nodes`` sorted: position order is id order): the expiry of each node's symmetric
    links, of its two-hop entries and of its topology entries, and the lists the HELLO
    and TC behind each entry carried (kept once each, however many nodes heard them),
    as bit sets of positions, ``ceil(n / 64)`` words each.

    An entry is valid while its expiry is later than the time asked for; -1 marks no
    entry (a time no run reaches). An OLSR run's
    :class:`~emulator.routing.olsr.state.Repositories` write and purge these arrays as
    their own; :meth:`link`, :meth:`two_hop` and :meth:`topology` write one entry.
    Memory: three ``n x n`` float and three int arrays (the tables' next hops too; 48 MB
    at 1,000 nodes), 8 bytes per 64 nodes for each list and three such sets per node
    for the searches.
    """

    def __init__(self, nodes):
        self.ids = sorted(nodes)
        self.pos = {v: i for i, v in enumerate(self.ids)}
        n = len(self.ids)
        self.sym_until = np.zeros((n, n))
        self.two_hop_until = np.full((n, n), -1.0)
        self.two_hop_list = np.zeros((n, n), np.int64)
        self.topology_until = np.full((n, n), -1.0)
        self.topology_list = np.zeros((n, n), np.int64)
        # the lists by their members (ids), numbered; row k of _bits: list k's bit set
        self._lists: dict[tuple, int] = {}
        self._bits = np.zeros((1024, bits.words(n)), np.uint64)
        #: ``[lists numbered so far]``: a compiled loop numbers lists of its own too
        #: (:meth:`grow_lists` makes room)
        self.lists_used = np.zeros(1, np.int64)
        #: ``stale[i]``: ``i``'s table is to be searched again (from its next query)
        self.stale = np.ones(n, np.bool_)
        #: ``routes[i, j]``: ``i``'s next hop's position towards ``j``, -1 for none,
        #: UNKNOWN while ``i``'s search has not reached ``j`` yet
        self.routes = np.full((n, n), UNKNOWN, np.int64)
        # each node's search: the time it is made at, and its sets (reached, the level
        # to take next, the one after)
        self._search_t = np.zeros(n)
        self._search = np.zeros((n, 3, bits.words(n)), np.uint64)

    def link(self, u: int, v: int, until: float) -> None:
        """``u``'s link to ``v`` is symmetric until ``until``."""
        pos = self.pos
        self.sym_until[pos[u], pos[v]] = until

    def two_hop(self, u: int, v: int, listed: tuple, until: float) -> None:
        """``u``'s two-hop entry of ``v``: what ``v``'s HELLO ``listed``, until ``until``."""
        pos = self.pos
        i, j = pos[u], pos[v]
        self.two_hop_until[i, j] = until
        self.two_hop_list[i, j] = self.list_number(listed)

    def topology(self, u: int, orig: int, selectors: tuple, until: float) -> None:
        """``u``'s topology entry of ``orig``: its TC's ``selectors``, until ``until``."""
        pos = self.pos
        i, j = pos[u], pos[orig]
        self.topology_until[i, j] = until
        self.topology_list[i, j] = self.list_number(selectors)

    def route(self, t: float, u: int, dst: int) -> int | None:
        """``u``'s next hop towards ``dst`` (None: none), from the table computed at
        the first query after the last change (:attr:`stale`): its search goes only as
        many levels deep as the destinations asked for so far need, since a table is
        searched again before most of its destinations are asked for."""
        pos = self.pos
        i, j = pos[u], pos.get(dst)
        if j is None:
            return None
        k = UNKNOWN if self.stale.item(i) else self.routes.item(i, j)
        if k == UNKNOWN:
            k = _route(i, j, t, self.stale, self._search_t, self.sym_until,
                       self.two_hop_until, self.two_hop_list, self.topology_until,
                       self.topology_list, self._bits, self.routes, self._search)
        return None if k < 0 else self.ids[k]

    def table(self, t: float, u: int) -> list:
        """``u``'s whole routing table at ``t``, searched anew: the next hop's position
        by destination position, -1 for none (read with :meth:`next_hop`)."""
        i = self.pos[u]
        self.stale[i] = True
        _route(i, -1, t, self.stale, self._search_t, self.sym_until, self.two_hop_until,
               self.two_hop_list, self.topology_until, self.topology_list, self._bits,
               self.routes, self._search)
        return self.routes[i].tolist()

    def bit_sets(self) -> np.ndarray:
        """The lists as bit sets: row ``k`` holds list ``k``'s positions, ``p`` as bit
        ``p % 64`` of word ``p // 64`` (read it again after :meth:`list_number`, which
        may grow it)."""
        return self._bits

    def next_hop(self, table: list, dst: int) -> int | None:
        """The next hop towards ``dst`` in a :meth:`table`, None if there is none."""
        j = self.pos.get(dst)
        k = -1 if j is None else table[j]
        return None if k < 0 else self.ids[k]

    def grow_lists(self, count: int) -> None:
        """Room for ``count`` lists (:meth:`bit_sets` twice as large as needed)."""
        while count > len(self._bits):
            self._bits = np.concatenate([self._bits, np.zeros_like(self._bits)])

    def list_number(self, members: tuple) -> int:
        """The number of the list ``members`` (ids), kept as a bit set of positions in
        :meth:`bit_sets` (a list met again keeps its number)."""
        k = self._lists.get(members)
        if k is None:
            k = self._lists[members] = self.lists_used.item(0)
            self.lists_used[0] = k + 1
            self.grow_lists(k + 1)
            pos = self.pos
            bits.fill(self._bits[k], np.array([pos[v] for v in members], np.int64))
        return k


@njit(cache=True, _nrt=False)
def _route(me, dst, t, stale, search_t, sym_until, two_hop_until, two_hop_list,
           topology_until, topology_list, lists, routes, search):
    """:func:`compute_routes` over :class:`RouteInputs`' arrays, for ``me`` towards
    ``dst`` (-1: every destination): a search begun at ``t`` if ``me``'s table is
    stale, else the one begun at its first query since, taken as many levels further
    as ``dst`` needs; returns ``routes[me, dst]`` (-1 for none), or nothing of note
    for -1. ``lists``: the lists' bit sets.

    The nodes reached so far, a level and the next are bit sets, and a list's nodes not
    reached yet are its bit set less the reached one, a word at a time: a level's nodes
    are taken in position order, which is the sorted order, and the nodes one of them
    reaches first take its next hop: 12.3 -> 5.8 us a whole table on a real node's
    arrays (200 nodes) against a scan of flags per level. A level is taken whole, so a
    table searched in steps is the one searched at once."""
    row, reached, level, coming = routes[me], search[me, 0], search[me, 1], search[me, 2]
    if stale[me]:
        stale[me] = False
        search_t[me] = t
        _first_levels(me, t, sym_until[me], two_hop_until[me], two_hop_list[me], lists,
                      row, reached, level)
    t = search_t[me]
    top_until, top_list = topology_until[me], topology_list[me]
    while dst < 0 or row[dst] == UNKNOWN:
        found = False
        for w in range(len(level)):
            word = level[w]
            while word:
                j, word = bits.lowest(word)
                x = (w << 6) + j
                if top_until[x] > t:
                    found |= _take(lists[top_list[x]], reached, coming, row, row[x])
        for w in range(len(level)):   # a slice copy would need numba's runtime
            level[w] = coming[w]
            coming[w] = 0
        if not found:   # the search is over: who is not reached has no route
            for v in range(len(row)):
                if row[v] == UNKNOWN:
                    row[v] = -1
            break
    return row[dst] if dst >= 0 else -1


@njit(cache=True, inline="always")
def _first_levels(me, t, sym, two_until, two_list, lists, row, reached, level):
    """A search begun: ``me``'s symmetric neighbours (one hop) and their two-hop
    neighbours (two hops, the next level to take) reached, nothing else yet."""
    row[:] = UNKNOWN
    reached[:] = 0
    level[:] = 0
    for v in range(len(row)):   # the neighbours, in position (id) order
        if sym[v] > t:
            row[v] = v
            bits.add(reached, v)
    mine = row[me] == me
    row[me] = me if mine else -1
    bits.add(reached, me)
    for v in range(len(row)):
        if sym[v] > t and two_until[v] > t:
            _take(lists[two_list[v]], reached, level, row, v)


@njit(cache=True, inline="always")
def _take(listed, reached, into, row, hop):
    """The nodes of the bit set ``listed`` not in ``reached`` yet: into ``reached`` and
    ``into``, with ``hop`` as their next hop in ``row``; whether there was any."""
    any_new = False
    for w in range(len(listed)):
        new = listed[w] & ~reached[w]
        if new:
            any_new = True
            reached[w] |= new
            into[w] |= new
            while new:
                j, new = bits.lowest(new)
                row[(w << 6) + j] = hop
    return any_new
