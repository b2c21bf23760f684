"""What an RPL node knows (RFC 6550): the DODAG version it is in, its rank and
preferred parent, its neighbours' advertised ranks with the ETX of the link to each,
the downward routes its children's DAOs gave it (storing mode: target -> next hop, path
sequence, expiry), its own path sequence and its DIO Trickle timer.

A node never takes as parent a node it routes to downwards (a descendant: that would
close a loop); :meth:`RplNode.descendant` says which. The routes are the current DODAG
version's: a new version flushes them.

>>> node = RplNode(trickle=None)
>>> node.offer_route(7, via=3, seq=2, until=10.0), node.offer_route(7, via=4, seq=1, until=10.0)
(True, False)
>>> node.next_hop_down(7, t=5.0), node.next_hop_down(7, t=11.0), node.descendant(7)
(3, None, True)
>>> node.routes_via(3)
[7]
"""
from __future__ import annotations

from emulator.routing.rpl.packets import INFINITE_RANK


class RplNode:
    """One node's tables (see the module docstring)."""

    __slots__ = ("version", "rank", "parent", "neighbours", "routes", "path_seq",
                 "trickle", "dao_pending", "dis_pending", "joined_at", "detached_from",
                 "dao_sequence", "awaiting", "listed", "advertised", "probing", "lowest",
                 "reprobe")

    def __init__(self, trickle):
        self.version: int | None = None
        self.rank = INFINITE_RANK
        self.parent: int | None = None
        #: neighbour -> (advertised rank, the link's ETX from the link model; under a MAC
        #: the ETX guessed when first heard, the learnt one being the node's LinkStats')
        self.neighbours: dict[int, tuple[int, float]] = {}
        #: target -> [next hop, path sequence, until]
        self.routes: dict[int, list] = {}
        self.path_seq = 0
        self.trickle = trickle
        self.dao_pending = False   # a DAO timer is set
        self.dis_pending = False   # a DIS timer is set
        self.joined_at: float | None = None
        #: the parent it had when it last detached (told with a No-Path on rejoining)
        self.detached_from: int | None = None
        #: the last DAOSequence sent, and the DAO waiting for its DAO-ACK: ``[sequence,
        #: parent, the DAO's pieces, sends to that parent unanswered before this one]`` (None:
        #: none waits); with pieces, the first DAOSequence and the pieces unanswered
        self.dao_sequence = 0
        self.awaiting: list | None = None
        #: child -> (its part 0's DAOSequence, parts heard, targets, parts in all or
        #: None until the last is heard) of a DAO whose pieces are still arriving
        self.listed: dict[int, tuple] = {}
        #: the rank of its last DIO (a learnt ETX's Trickle rule, Rpl._reselect)
        self.advertised = INFINITE_RANK
        #: the neighbour a probe (unicast DIO) went to and when, until its outcome
        self.probing: tuple | None = None
        #: the lowest rank it held since it last joined (MaxRankIncrease's base)
        self.lowest = INFINITE_RANK
        #: the wait before a detached node's next probe (None: no series runs)
        self.reprobe: float | None = None

    def offer_route(self, target: int, via: int, seq: int, until: float) -> bool:
        """A DAO's target through the child ``via``: taken if no route is known, it
        comes from the same child, or its path sequence is not older (§7.2, §9.8;
        on a tie the latest DAO wins, as in Contiki-NG: a subtree that moved keeps its
        path sequences, and its new DAOs must take over the old routes); whether the
        next hop changed."""
        route = self.routes.get(target)
        if route is None or route[0] == via or seq >= route[1]:
            changed = route is None or route[0] != via
            self.routes[target] = [via, seq, until]
            return changed
        return False

    def next_hop_down(self, target: int, t: float) -> int | None:
        route = self.routes.get(target)
        return route[0] if route is not None and route[2] > t else None

    def descendant(self, node: int) -> bool:
        return node in self.routes

    def routes_via(self, neighbour: int) -> list[int]:
        """The targets routed through ``neighbour``."""
        return [target for target, route in self.routes.items() if route[0] == neighbour]

    def expire(self, t: float) -> bool:
        """Drop the routes past their lifetime; whether any was."""
        gone = [target for target, route in self.routes.items() if route[2] <= t]
        for target in gone:
            del self.routes[target]
        return bool(gone)
