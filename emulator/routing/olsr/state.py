"""What an OLSR node has learnt (RFC 3626 §4): its link set, two-hop neighbours, MPR
selectors and topology set, each entry with the time it expires.

Entries are read only while valid (``until > t``); :meth:`OlsrNode.purge` drops the
expired ones and says whether the routing table must be computed again.

>>> node = OlsrNode()
>>> node.links[1] = [4.0, 4.0]          # heard and symmetric until 4.0
>>> node.links[2] = [4.0, 0.0]          # heard, not symmetric
>>> sorted(node.symmetric(3.0)), sorted(node.heard(3.0)), sorted(node.symmetric(4.0))
([1], [1, 2], [])
"""
from __future__ import annotations

from emulator.routing.cache import IdCache


class OlsrNode:
    """One node's repositories."""

    __slots__ = ("links", "two_hop", "selectors", "topology", "seen", "mprs", "msg_seq",
                 "ansn", "advertised", "routes", "dirty", "last_symmetric")

    def __init__(self):
        #: neighbour -> [heard until, symmetric until] (L_ASYM_time, L_SYM_time)
        self.links: dict[int, list] = {}
        #: symmetric neighbour -> (its symmetric neighbours, until)
        self.two_hop: dict[int, tuple] = {}
        #: neighbour that chose this node as an MPR -> until
        self.selectors: dict[int, float] = {}
        #: TC originator -> (ANSN, the selectors it advertised, until)
        self.topology: dict[int, tuple] = {}
        self.seen = IdCache()            # messages processed (orig, seq)
        self.mprs: frozenset = frozenset()
        self.msg_seq, self.ansn = 0, 0
        self.advertised: frozenset = frozenset()   # the selectors of the last TC
        self.routes: dict[int, int] = {}
        self.dirty = True                # the routes are to be computed again
        self.last_symmetric: frozenset = frozenset()

    def symmetric(self, t: float) -> set:
        """Neighbours with a symmetric link at ``t``."""
        return {v for v, (_, sym) in self.links.items() if sym > t}

    def heard(self, t: float) -> set:
        """Neighbours heard (asymmetric or symmetric link) at ``t``."""
        return {v for v, (heard, sym) in self.links.items() if heard > t or sym > t}

    def valid_two_hop(self, t: float) -> dict:
        """``{symmetric neighbour: its symmetric neighbours}`` at ``t``."""
        sym = self.symmetric(t)
        return {v: nodes for v, (nodes, until) in self.two_hop.items()
                if until > t and v in sym}

    def valid_topology(self, t: float) -> dict:
        """``{TC originator: its advertised selectors}`` at ``t``."""
        return {orig: dests for orig, (_, dests, until) in self.topology.items()
                if until > t}

    def purge(self, t: float) -> bool:
        """Drop expired entries; True if the routing table must be computed again."""
        changed = False
        self.links = {v: link for v, link in self.links.items() if max(link) > t}
        symmetric = frozenset(self.symmetric(t))
        if symmetric != self.last_symmetric:
            self.last_symmetric, changed = symmetric, True
        for table in (self.two_hop, self.topology):
            gone = [k for k, entry in table.items() if entry[-1] <= t]
            for k in gone:
                del table[k]
            changed = changed or bool(gone)
        self.selectors = {v: until for v, until in self.selectors.items() if until > t}
        self.dirty = self.dirty or changed
        return changed
