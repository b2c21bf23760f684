"""Babel at every node (RFC 8966): the one class that sends, receives and owns the timers.

What runs, by the RFC's sections:

- **Neighbours** (§3.4, §A.2.1): every HELLO_INTERVAL a node broadcasts a Hello, with an
  IHU per neighbour every third (IHU_INTERVAL = 3 × HELLO_INTERVAL) and whenever a
  neighbour's rxcost changed (an implementation's choice: the RFC leaves unscheduled
  IHUs open), carrying the cost at which it hears that neighbour (``rxcost``, nominal
  while two of the last three hellos arrived); a link's cost is the txcost its
  neighbour reported, held IHU_HOLD_TIME (3.5 IHU intervals).
- **Routes** (§3.5, §3.6, §3.7): every UPDATE_INTERVAL a node broadcasts its own
  destination (its seqno, metric 0) and every route it selected; a route's metric is the
  advertised one plus the link's cost; a node selects, per destination, the feasible
  route of least metric (§3.5.1: a newer seqno, or the same seqno and a smaller metric
  than its feasibility distance), and sends a triggered update when it acquires, changes
  or loses (a retraction, metric infinity) a selected route. A route not refreshed for
  3.5 update intervals expires.
- **Starvation** (§3.8): a node left without a feasible route while unfeasible ones
  exist sends a seqno request, forwarded along selected routes towards the destination
  (duplicates suppressed, a hop count of 64; repeated after three hello intervals
  unanswered); the destination raises its seqno and announces it, which makes the
  other routes feasible again.

Left out: the multicast/unicast distinction of TLVs (all broadcast but requests
forwarded), ETX and other cost functions (2-out-of-3 only), route acknowledgements, the
hysteresis of route selection and the smoothed metric, sub-TLVs, and the update
suppression of babeld (a triggered update only on acquisition, change of next hop or
seqno, and retraction). babeld's differences beside it: docs/RUNNING.md.
"""
from __future__ import annotations

from emulator.routing.babel.packets import INFINITY, BabelPacket
from emulator.routing.babel.tables import BabelNode, Neighbour, feasible
from emulator.routing.base import BROADCAST, Control, Protocol

_HELLO, _UPDATE = "hello", "update"
_REQUEST_HOPS = 64


class Babel(Protocol):
    """Babel's state at every node (see the module docstring); ``params`` as
    :data:`emulator.routing.params.BABEL`, in time units."""

    name = "babel"
    #: Under a MAC, each broadcast waits U(0, this) seconds before its frame is queued:
    #: babeld buffers its messages and flushes an urgent buffer after roughly(10 ms),
    #: 7.5-12.5 ms (``jitter()`` in its interface.c); without it the neighbours that
    #: answer one update do so in the same slot and collide.
    mac_broadcast_jitter_s = 0.0125

    def __init__(self, host, nodes, params: dict, seed: int):
        super().__init__(host, nodes, params, seed)
        self.hello_interval = params["hello_interval"]
        self.ihu_hold = 3.5 * 3 * params["hello_interval"]
        self.route_expiry = 3.5 * params["update_interval"]
        self.nominal = params["rxcost"]
        self._state = {u: BabelNode() for u in self.nodes}

    # -- timers -------------------------------------------------------------------------
    def start(self, t: float) -> None:
        for u in self.nodes:   # random phases, as babeld's jitter gives
            self.host.set_timer(t + self.uniform() * self.hello_interval, u, _HELLO)
            self.host.set_timer(t + self.uniform() * self.params["update_interval"], u,
                                _UPDATE)

    def on_timer(self, t: float, u: int, tag) -> None:
        if tag == _HELLO:
            self._hello(t, u)
        else:
            self._full_dump(t, u)

    def _hello(self, t: float, u: int) -> None:
        node = self._state[u]
        node.hello_seqno += 1
        node.ticks += 1
        rxcosts = {v: n.rxcost(t, self.hello_interval, self.nominal)
                   for v, n in sorted(node.neighbours.items())}
        ihus = ()
        # IHU_INTERVAL = 3 x HELLO_INTERVAL, and at once when a neighbour's rxcost changed
        if node.ticks % 3 == 1 or rxcosts != node.advertised_rxcosts:
            ihus = tuple(rxcosts.items())
            node.advertised_rxcosts = rxcosts
        self._send(t, u, BabelPacket(hello=node.hello_seqno, ihus=ihus))
        self._links_changed(t, u)
        self.host.set_timer(t + self.hello_interval, u, _HELLO)

    def _full_dump(self, t: float, u: int) -> None:
        node = self._state[u]
        for dst in [d for d, routes in node.routes.items()
                    if any(until <= t for _, _, until in routes.values())]:
            node.routes[dst] = {v: r for v, r in node.routes[dst].items() if r[2] > t}
            self._select(t, u, dst)
        updates = ((u, node.seqno, 0),) + tuple(
            (dst, seqno, metric) for dst, (_, seqno, metric) in sorted(node.selected.items()))
        for dst, _, metric in updates[1:]:
            self._note_distance(node, dst, node.selected[dst][1], metric)
        self._send(t, u, BabelPacket(updates=updates))
        self.host.set_timer(t + self.params["update_interval"], u, _UPDATE)

    # -- packets heard ------------------------------------------------------------------
    def on_receive(self, t: float, u: int, msg) -> None:
        node, v, packet = self._state[u], msg.src, msg.payload.body
        neighbour = node.neighbours.setdefault(v, Neighbour())
        if packet.hello is not None:
            neighbour.heard_hello(t)
        for about, rxcost in packet.ihus:
            if about == u:   # v hears u at this cost: u's txcost towards v
                neighbour.txcost, neighbour.txcost_until = rxcost, t + self.ihu_hold
        if packet.ihus or packet.hello is not None:
            self._links_changed(t, u)
        for dst, seqno, metric in packet.updates:
            if dst != u:
                node.routes.setdefault(dst, {})[v] = [seqno, metric,
                                                      t + self.route_expiry]
                self._select(t, u, dst)
        for dst, seqno, hops in packet.requests:
            self._on_request(t, u, dst, seqno, hops)

    def _links_changed(self, t: float, u: int) -> None:
        """Reselect the routes through each neighbour whose link cost changed."""
        node = self._state[u]
        for v, neighbour in node.neighbours.items():
            cost = neighbour.cost(t, self.hello_interval, self.nominal)
            if node.last_costs.get(v, INFINITY) != cost:
                node.last_costs[v] = cost
                for dst in [d for d, routes in node.routes.items() if v in routes]:
                    self._select(t, u, dst)

    def _on_request(self, t: float, u: int, dst: int, seqno: int, hops: int) -> None:
        """§3.8.1.2: the destination raises its seqno; a node with a route as new
        answers; others forward it along their selected route."""
        node = self._state[u]
        if dst == u:
            if node.seqno < seqno:
                node.seqno = seqno
                self._send(t, u, BabelPacket(updates=((u, node.seqno, 0),)))
            return
        if node.requested.get((dst, seqno), -1.0) > t:
            return
        node.requested[(dst, seqno)] = t + 3 * self.hello_interval
        chosen = node.selected.get(dst)
        if chosen is not None and chosen[1] >= seqno:
            self._send(t, u, BabelPacket(updates=((dst,) + chosen[1:],)))
        elif chosen is not None and hops > 1:
            forwarded = BabelPacket(requests=((dst, seqno, hops - 1),))
            self.host.send_control(t, u, chosen[0], self._control(forwarded),
                                   forwarded.bytes())

    # -- route selection ----------------------------------------------------------------
    def _select(self, t: float, u: int, dst: int) -> None:
        node = self._state[u]
        distance = node.distance.get(dst)
        best, starving = None, False
        for v, (seqno, advertised, until) in sorted(node.routes.get(dst, {}).items()):
            if until <= t or advertised >= INFINITY:
                continue
            cost = node.neighbours[v].cost(t, self.hello_interval, self.nominal) \
                if v in node.neighbours else INFINITY
            metric = min(advertised + cost, INFINITY)
            if metric >= INFINITY:
                continue
            chosen = node.selected.get(dst)
            kept = chosen is not None and chosen[0] == v and chosen[1] == seqno
            if not (feasible(seqno, metric, distance) or kept and metric <= chosen[2]):
                starving = True
                continue
            if best is None or metric < best[2]:
                best = (v, seqno, metric)
        old = node.selected.get(dst)
        if best is None:
            if old is not None:
                del node.selected[dst]
                self._send(t, u, BabelPacket(updates=((dst, old[1], INFINITY),)))
            want = (distance[0] if distance else 0) + 1
            if starving and node.requested.get((dst, want), -1.0) <= t:
                # asked again only after three hello intervals without an answer
                node.requested[(dst, want)] = t + 3 * self.hello_interval
                self._send(t, u, BabelPacket(requests=((dst, want, _REQUEST_HOPS),)))
            return
        node.selected[dst] = best
        if old is None or old[0] != best[0] or old[1] != best[1]:
            self._note_distance(node, dst, best[1], best[2])
            self._send(t, u, BabelPacket(updates=((dst,) + best[1:],)))

    @staticmethod
    def _note_distance(node: BabelNode, dst: int, seqno: int, metric: int) -> None:
        """§3.7.3: advertising (seqno, metric) lowers the feasibility distance."""
        distance = node.distance.get(dst)
        if distance is None or seqno > distance[0] or \
                (seqno == distance[0] and metric < distance[1]):
            node.distance[dst] = (seqno, metric)

    # -- forwarding ---------------------------------------------------------------------
    def next_hop(self, t: float, u: int, msg) -> int | None:
        v = self.route(t, u, msg.dst)
        if v is None:
            self.host.drop(t, u, msg, "no_route")
        return v

    def route(self, t: float, u: int, dst: int) -> int | None:
        chosen = self._state[u].selected.get(dst)
        return None if chosen is None else chosen[0]

    def on_link_failure(self, t: float, node: int, neighbour: int) -> None:
        if self.params["link_layer_feedback"]:
            state = self._state[node]
            if neighbour in state.neighbours:
                state.neighbours[neighbour].hellos = []
                self._links_changed(t, node)

    # -- sending ------------------------------------------------------------------------
    @staticmethod
    def _control(packet: BabelPacket) -> Control:
        return Control(packet.type, packet)

    def _send(self, t: float, u: int, packet: BabelPacket) -> None:
        self.host.send_control(t, u, BROADCAST, self._control(packet), packet.bytes())
