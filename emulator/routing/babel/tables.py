"""What a Babel node knows (RFC 8966 §3.2): its neighbours (hello history, the cost
they report of their link to it), the routes its neighbours advertised, the route it
selected per destination, and its feasibility distances.

A neighbour's link is up while two of the last three hellos it announced arrived (the
"2-out-of-3" rule of RFC 8966 §A.2.1); its cost is then the txcost the neighbour reported
in its last IHU (infinite once IHU_HOLD_TIME has passed without one).

>>> n = Neighbour()
>>> for t in (0.0, 4.0): n.heard_hello(t)
>>> n.rxcost(8.5, interval=4.0, nominal=96), n.rxcost(20.0, interval=4.0, nominal=96)
(96, 65535)
>>> feasible(seqno=5, metric=300, distance=(5, 200)), feasible(6, 900, (5, 200))
(False, True)
"""
from __future__ import annotations

from emulator.routing.babel.packets import INFINITY


class Neighbour:
    """One neighbour's hellos heard and the txcost it last reported."""

    __slots__ = ("hellos", "txcost", "txcost_until")

    def __init__(self):
        self.hellos: list[float] = []
        self.txcost, self.txcost_until = INFINITY, -float("inf")

    def heard_hello(self, t: float) -> None:
        self.hellos = (self.hellos + [t])[-3:]

    def rxcost(self, t: float, interval: float, nominal: int) -> int:
        """2-out-of-3: the nominal cost if two of the hellos due in the last three
        intervals (and a half, for jitter) arrived, else infinity."""
        recent = sum(1 for h in self.hellos if h > t - 3.5 * interval)
        return nominal if recent >= 2 else INFINITY

    def cost(self, t: float, interval: float, nominal: int) -> int:
        """The link's cost (§A.2.1): the reported txcost while the link is up."""
        if self.rxcost(t, interval, nominal) >= INFINITY or self.txcost_until <= t:
            return INFINITY
        return self.txcost


def feasible(seqno: int, metric: int, distance: tuple | None) -> bool:
    """RFC 8966 §3.5.1: a route is feasible if it is a retraction, there is no
    feasibility distance, its seqno is newer, or the same seqno with a smaller metric."""
    if distance is None or metric >= INFINITY:
        return True
    seen_seqno, seen_metric = distance
    return seqno > seen_seqno or (seqno == seen_seqno and metric < seen_metric)


class BabelNode:
    """One node's tables."""

    __slots__ = ("seqno", "hello_seqno", "ticks", "neighbours", "routes", "selected",
                 "distance", "requested", "last_costs", "advertised_rxcosts")

    def __init__(self):
        self.seqno, self.hello_seqno, self.ticks = 0, 0, 0
        self.neighbours: dict[int, Neighbour] = {}
        #: destination -> {neighbour: [seqno, advertised metric, until]}
        self.routes: dict[int, dict[int, list]] = {}
        #: destination -> (neighbour, seqno, metric)
        self.selected: dict[int, tuple] = {}
        #: destination -> (seqno, metric): the feasibility distance
        self.distance: dict[int, tuple] = {}
        #: (destination, seqno) -> until: seqno requests seen (duplicate suppression)
        self.requested: dict[tuple, float] = {}
        self.last_costs: dict[int, int] = {}
        self.advertised_rxcosts: dict[int, int] = {}   # in the last IHUs sent
