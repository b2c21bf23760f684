"""What an OLSR node has learnt (RFC 3626 §4): its link set, two-hop neighbours, MPR
selectors and topology set, each entry with the time it expires.

Entries are read only while valid (``until > t``); :meth:`OlsrNode.purge` drops the
expired ones and says whether the routing table must be computed again. What the table
is computed from is written beside them into the protocol's
:class:`~emulator.routing.olsr.routes.RouteInputs` as it is learnt.

>>> node = OlsrNode()
>>> node.links[1] = [4.0, 4.0]          # heard and symmetric until 4.0
>>> node.links[2] = [4.0, 0.0]          # heard, not symmetric
>>> sorted(node.symmetric(3.0)), sorted(node.heard(3.0)), sorted(node.symmetric(4.0))
([1], [1, 2], [])
>>> node.learn_topology(5, ansn=1, selectors=(6, 7), until=10.0)    # a TC of node 5
True
>>> node.learn_topology(5, ansn=2, selectors=(7, 6), until=12.0)    # the same set
False
>>> node.purge(12.0), node.topology
(True, {})
"""
from __future__ import annotations

import math

from emulator.routing.cache import IdCache


class OlsrNode:
    """One node's repositories."""

    __slots__ = ("links", "two_hop", "selectors", "topology", "seen", "mprs", "msg_seq",
                 "ansn", "advertised", "routes", "dirty", "last_symmetric",
                 "topology_expiry")

    def __init__(self):
        #: neighbour -> [heard until, symmetric until] (L_ASYM_time, L_SYM_time)
        self.links: dict[int, list] = {}
        #: symmetric neighbour -> (its symmetric neighbours as a set, the same as its
        #: HELLO listed them, until)
        self.two_hop: dict[int, tuple] = {}
        #: neighbour that chose this node as an MPR -> until
        self.selectors: dict[int, float] = {}
        #: TC originator -> (ANSN, the selectors it advertised, until); written by
        #: :meth:`learn_topology`
        self.topology: dict[int, tuple] = {}
        #: no topology entry expires before this (a node purges at every HELLO, and
        #: TCs keep most entries fresh: the set is scanned only from then on)
        self.topology_expiry = math.inf
        self.seen = IdCache()            # messages processed (orig, seq)
        self.mprs: frozenset = frozenset()
        self.msg_seq, self.ansn = 0, 0
        self.advertised: frozenset = frozenset()   # the selectors of the last TC
        self.routes = None               # a routes.RouteInputs.table once computed
        self.dirty = True                # the routes are to be computed again
        self.last_symmetric: frozenset = frozenset()

    def symmetric(self, t: float) -> set:
        """Neighbours with a symmetric link at ``t``."""
        return {v for v, (_, sym) in self.links.items() if sym > t}

    def heard(self, t: float) -> set:
        """Neighbours heard (asymmetric or symmetric link) at ``t``."""
        return {v for v, (heard, sym) in self.links.items() if heard > t or sym > t}

    def valid_two_hop(self, t: float, symmetric: set | None = None) -> dict:
        """``{symmetric neighbour: its symmetric neighbours}`` at ``t``, as its HELLO
        listed them: this node among them (``symmetric``: :meth:`symmetric` at ``t``,
        when the caller has it). The HELLOs' own tuples, shared by every node that
        heard them, are read faster than a set per node: the routes are computed
        again after most changes."""
        sym = self.symmetric(t) if symmetric is None else symmetric
        return {v: listed for v, (_, listed, until) in self.two_hop.items()
                if until > t and v in sym}

    def learn_topology(self, orig: int, ansn: int, selectors: tuple, until: float) -> bool:
        """``orig`` advertises ``selectors`` with ``ansn``, valid until ``until``;
        returns whether the set it advertises changed."""
        entry = self.topology.get(orig)
        dests = frozenset(selectors)
        self.topology[orig] = (ansn, dests, until)
        if until < self.topology_expiry:
            self.topology_expiry = until
        return entry is None or entry[1] != dests

    def purge(self, t: float) -> bool:
        """Drop expired entries; True if the routing table must be computed again."""
        changed = False
        self.links = {v: link for v, link in self.links.items() if max(link) > t}
        symmetric = frozenset(self.symmetric(t))
        if symmetric != self.last_symmetric:
            self.last_symmetric, changed = symmetric, True
        gone = [v for v, entry in self.two_hop.items() if entry[-1] <= t]
        for v in gone:
            del self.two_hop[v]
        changed = changed or bool(gone)
        if t >= self.topology_expiry:
            topology = self.topology
            gone = [orig for orig, entry in topology.items() if entry[-1] <= t]
            for orig in gone:
                del topology[orig]
            changed = changed or bool(gone)
            self.topology_expiry = min((entry[-1] for entry in topology.values()),
                                       default=math.inf)
        self.selectors = {v: until for v, until in self.selectors.items() if until > t}
        self.dirty = self.dirty or changed
        return changed
