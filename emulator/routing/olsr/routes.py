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
``bench_scale``, which took half its time in Python. The tables are the same
(``tests/test_routing.py`` holds them to :func:`compute_routes`).

>>> inputs = RouteInputs([0, 1, 2, 3, 4])
>>> inputs.link(0, 1, until=9.0); inputs.link(0, 2, until=9.0)
>>> inputs.two_hop(0, 1, listed=(0, 3), until=9.0); inputs.two_hop(0, 2, (3,), 9.0)
>>> inputs.topology(0, 3, selectors=(4,), until=9.0)
>>> row = inputs.table(1.0, 0)
>>> [inputs.next_hop(row, d) for d in (0, 1, 2, 3, 4, 7)]
[None, 1, 2, 1, 1, None]
>>> [inputs.next_hop(inputs.table(9.0, 0), d) for d in (1, 4)]   # all expired at 9
[None, None]
"""
from __future__ import annotations

import numpy as np
from numba import njit


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
    and TC behind each entry carried (kept once each, however many nodes heard them).

    An entry is valid while its expiry is later than the time asked for; -1 marks no
    entry (a time no run reaches). An OLSR run's
    :class:`~emulator.routing.olsr.state.Repositories` write and purge these arrays as
    their own; :meth:`link`, :meth:`two_hop` and :meth:`topology` write one entry.
    Memory: three ``n x n`` float and two int arrays (40 MB at 1,000 nodes).
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
        # the lists, as positions: list k is members[starts[k]:starts[k + 1]]
        self._lists: dict[tuple, int] = {}
        self._starts = np.zeros(1024, np.int64)
        self._members = np.zeros(8192, np.int64)
        self._count, self._used = 0, 0
        self._row = np.empty(n, np.int64)
        self._level = np.empty(n, np.bool_)
        self._reached = np.empty(n, np.int64)

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

    def table(self, t: float, u: int) -> list:
        """``u``'s routing table at ``t``: the next hop's position by destination
        position, -1 for none (read with :meth:`next_hop`)."""
        row = self._row
        _table(self.pos[u], t, self.sym_until, self.two_hop_until, self.two_hop_list,
               self.topology_until, self.topology_list, self._starts, self._members,
               row, self._level, self._reached)
        return row.tolist()

    def lists(self) -> tuple[np.ndarray, np.ndarray]:
        """``(starts, members)``: list ``k`` is ``members[starts[k]:starts[k + 1]]``
        (read them again after :meth:`list_number`, which may grow them)."""
        return self._starts, self._members

    def next_hop(self, table: list, dst: int) -> int | None:
        """The next hop towards ``dst`` in a :meth:`table`, None if there is none."""
        j = self.pos.get(dst)
        k = -1 if j is None else table[j]
        return None if k < 0 else self.ids[k]

    def list_number(self, members: tuple) -> int:
        """The number of the list ``members`` (ids), kept as positions in
        :meth:`lists`."""
        k = self._lists.get(members)
        if k is None:
            k = self._lists[members] = self._count
            end = self._used + len(members)
            if end > len(self._members):
                self._members = np.resize(self._members, 2 * end)
            if k + 2 > len(self._starts):
                self._starts = np.resize(self._starts, 2 * (k + 2))
            pos = self.pos
            self._members[self._used:end] = [pos[v] for v in members]
            self._count, self._used = k + 1, end
            self._starts[k + 1] = end
        return k


@njit(cache=True)
def _table(me, t, sym_until, two_hop_until, two_hop_list, topology_until, topology_list,
           starts, members, row, level, reached):
    """:func:`compute_routes` over :class:`RouteInputs`' arrays, at ``t``, into ``row``
    (``level``, flags, and ``reached``: scratch as long). A level's nodes are flagged
    and taken in position order, which is the sorted order: 12 -> 7 us a table of 200
    nodes against sorting each level."""
    n = len(row)
    row[:] = -1
    for v in range(n):   # the neighbours, in position (id) order
        if sym_until[me, v] > t:
            row[v] = v
    mine = row[me] == me
    row[me] = me
    level[:] = False
    size = 0
    for v in range(n):
        if sym_until[me, v] > t and two_hop_until[me, v] > t:
            k = two_hop_list[me, v]
            for i in range(starts[k], starts[k + 1]):
                w = members[i]
                if row[w] < 0:
                    row[w] = v
                    level[w] = True
                    size += 1
    while size:
        found = 0
        for x in range(n):
            if not level[x]:
                continue
            level[x] = False
            if topology_until[me, x] > t:
                k = topology_list[me, x]
                for j in range(starts[k], starts[k + 1]):
                    y = members[j]
                    if row[y] < 0:
                        row[y] = row[x]
                        reached[found] = y
                        found += 1
        for i in range(found):
            level[reached[i]] = True
        size = found
    if not mine:
        row[me] = -1
