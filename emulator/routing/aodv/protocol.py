"""AODV at every node (RFC 3561): the one class that sends, receives and owns the timers.

What runs, by the RFC's sections:

- **Route discovery** (§6.3–6.7): a source with no valid route holds the packet (a bounded
  queue, :mod:`.rqueue`) and floods a RREQ with its own sequence number and a new RREQ
  ID, by an expanding ring search (TTL_START, + TTL_INCREMENT up to TTL_THRESHOLD, then
  NET_DIAMETER, each waited for RING_TRAVERSAL_TIME; then RREQ_RETRIES more at
  NET_DIAMETER with a binary exponential backoff of NET_TRAVERSAL_TIME); a node
  processes a RREQ once (its (originator, RREQ ID) is remembered for
  PATH_DISCOVERY_TIME), sets up the reverse route and rebroadcasts it while its TTL
  lasts; the destination, or a node with a fresh enough route, unicasts a RREP back
  along the reverse route, which sets up the forward route and the precursor lists. A
  discovery that fails drops the held packets as ``no_route``; a full queue drops the
  new packet as ``queue_full``.
- **Route maintenance** (§6.2, §6.9–6.12): a route used is kept for ACTIVE_ROUTE_TIMEOUT;
  a broken link (a HELLO missed ALLOWED_HELLO_LOSS times, or the MAC's failure to
  deliver with ``link_layer_feedback``) invalidates the routes through it, raises their
  sequence numbers and sends a RERR to the precursors, which pass it on; a node that
  must forward a packet it has no route for drops it and sends a RERR. A node that sent
  no broadcast within HELLO_INTERVAL sends a HELLO (a RREP to itself, TTL 1).
- **Rate limits** (§6.3, §6.11): a node originates at most RREQ_RATELIMIT RREQs and
  sends at most RERR_RATELIMIT RERRs a second, counted over seconds from the start (as
  ns-3's timers count them); a RREQ over the limit waits for the next second, a RERR
  over it is not sent (ns-3 does both so).

- **Optional replies** (off unless set; ns-3 has both on): with ``gratuitous_reply``
  a source's RREQs carry the G flag, and an intermediate node that answers one also
  unicasts to the RREQ's destination a RREP for the route to the originator (§6.6.3:
  its hop count, sequence number and remaining lifetime), so the destination can
  answer the originator's packets; with ``rrep_ack`` an intermediate node that answers
  for a neighbour of its own (a route of one hop, where ns-3 suspects a unidirectional
  link) sets the A flag, and the node the RREP reaches first answers with a RREP-ACK
  (§6.7, §5.4).

Left out: local repair, the blacklist of unidirectional links a missing RREP-ACK would
fill (the ack is sent, never waited for), and a RERR is always broadcast (the RFC
unicasts it to a single precursor). Routes count hops, as the RFC's do; the oracle's
count link costs, so the two may choose different paths.
"""
from __future__ import annotations

import math

import numpy as np

from emulator.routing.aodv.flood import FIRST, NEW_NEIGHBOUR, OFFER, hear_broadcast
from emulator.routing.aodv.packets import Rerr, Rrep, RrepAck, Rreq
from emulator.routing.aodv.rqueue import RequestQueue
from emulator.routing.aodv.rtable import RouteTable
from emulator.routing.base import BROADCAST, Control, Protocol
from emulator.routing.seen import new_purge_at, new_seen, remember, seen_key

_HELLO = "hello"
# A RREQ the rate limit held back: its timer's tag (with the destination), and the
# discovery's RREQ ID meanwhile (no RREQ of it is out, so no timeout of one acts)
_RREQ_LATER = "rreq later"


class _Node:
    """What one node knows: its position, sequence number and RREQ ID, routes, held
    packets, discoveries in progress, neighbours heard (the RREQs it has seen are the
    protocol's, :attr:`Aodv.seen`)."""

    __slots__ = ("at", "seq", "rreq_id", "table", "queue", "discovery", "heard",
                 "heard_at", "last_broadcast", "rreqs", "rerrs")

    def __init__(self, at: int, queue_length: int, table: RouteTable, heard_at):
        self.at = at
        self.seq, self.rreq_id = 0, 0
        self.table = table
        self.queue = RequestQueue(queue_length)
        self.discovery: dict[int, list] = {}   # dst -> [ttl, retries, current RREQ ID]
        # the neighbours heard, in the order first heard (a HELLO tick finds those gone
        # in this order), each -> its column in heard_at (when each was last heard)
        self.heard: dict[int, int] = {}
        self.heard_at = heard_at
        self.last_broadcast = -float("inf")
        # [end of the rate limit's second, RREQs originated / RERRs sent within it]
        self.rreqs, self.rerrs = [0.0, 0], [0.0, 0]


class Aodv(Protocol):
    """AODV's state at every node (see the module docstring); ``params`` as
    :data:`emulator.routing.params.AODV`, in time units."""

    name = "aodv"

    def __init__(self, host, nodes, params: dict, seed: int):
        super().__init__(host, nodes, params, seed)
        p = params
        self.active_route_timeout = p["active_route_timeout"]
        self.hello_interval = p["hello_interval"]
        self.hello_on = p["hello"]
        self.hello_lifetime = p["allowed_hello_loss"] * p["hello_interval"]
        self.net_traversal_time = 2 * p["node_traversal_time"] * p["net_diameter"]
        self.path_discovery_time = 2 * self.net_traversal_time
        self.my_route_timeout = 2 * p["active_route_timeout"]
        self.delete_period = 5 * max(p["active_route_timeout"], p["hello_interval"])
        # every node's routes' lifetimes and one-hop flags, and when it last heard each
        # neighbour, by node position (row) and the other node's (column), shared with
        # the compiled walk of a broadcast's receivers (flood.hear_broadcast); the RREQs
        # every node has seen
        n = len(self.nodes)
        self._lifetimes = np.zeros((n, n))
        self._one_hop = np.zeros((n, n), np.bool_)
        self._heard_at = np.full((n, n), -math.inf)
        self._latest = np.full((2, n, n), -1.0)
        #: The RREQs each node has processed (:mod:`emulator.routing.seen`).
        self.seen, self._seen_purge_at = new_seen(), new_purge_at()
        self._todo = np.zeros((2, n), np.int64)   # what hear_broadcast leaves to Python
        self._state = {
            u: _Node(i, p["queue_length"],
                     RouteTable(memoryview(self._lifetimes[i]),
                                memoryview(self._one_hop[i]), self.position),
                     memoryview(self._heard_at[i]))
            for i, u in enumerate(self.nodes)}

    # -- timers -------------------------------------------------------------------------
    def start(self, t: float) -> None:
        if self.params["hello"]:   # a random phase per node: HELLOs do not all collide
            for u in self.nodes:
                self.host.set_timer(t + self.uniform() * self.hello_interval, u, _HELLO)

    def on_timer(self, t: float, node: int, tag) -> None:
        if tag == _HELLO:
            self._hello(t, node)
        elif tag[0] == _RREQ_LATER:
            discovery = self._state[node].discovery.get(tag[1])
            if discovery is not None and discovery[2] is _RREQ_LATER:   # still held
                discovery[2] = None   # held again if this second is full already
                self._send_rreq(t, node, tag[1])
        else:
            self._rreq_timeout(t, node, tag[1], tag[2])

    def _hello(self, t: float, u: int) -> None:
        """Every HELLO_INTERVAL: neighbours not heard for ALLOWED_HELLO_LOSS intervals are
        gone (§6.11); a HELLO if no broadcast went out in the last interval (§6.9)."""
        node = self._state[u]
        heard_at, lifetime = node.heard_at, self.hello_lifetime
        gone = [v for v, at in node.heard.items() if t - heard_at[at] > lifetime]
        for v in gone:
            heard_at[node.heard.pop(v)] = -math.inf
            self._link_broken(t, u, v)
        if t - node.last_broadcast >= self.hello_interval:
            hello = Rrep(u, node.seq, u, 0, self.hello_lifetime)
            self._broadcast(t, u, "HELLO", hello)
        self.host.set_timer(t + self.hello_interval, u, _HELLO)

    # -- forwarding ---------------------------------------------------------------------
    def next_hop(self, t: float, u: int, msg) -> int | None:
        node = self._state[u]
        dst = msg.dst
        route = node.table.valid(dst, t)
        if route is not None:
            until = t + self.active_route_timeout   # routes in use stay active (§6.2)
            route.lifetime = max(route.lifetime, until)
            node.table.refresh(route.next_hop, until)
            node.table.refresh(msg.src, until)
            return route.next_hop
        if msg.kind == "routing":   # a notice never waits for a route
            self.host.drop(t, u, msg, "no_route")
        elif u == msg.src:
            if not node.queue.push(msg, dst):
                self.host.drop(t, u, msg, "queue_full")
            elif dst not in node.discovery:
                node.discovery[dst] = [self.params["ttl_start"], 0, None]
                self._send_rreq(t, u, dst)
        else:   # §6.11 (ii): a packet to forward and no route
            self.host.drop(t, u, msg, "no_route")
            self._send_rerr(t, u, Rerr(((dst, node.table.known_seq(dst) or 0),)))
        return None

    def route(self, t: float, node: int, dst: int) -> int | None:
        route = self._state[node].table.routes.get(dst)
        return route.next_hop if route is not None and route.valid \
            and route.lifetime > t else None

    def on_link_failure(self, t: float, node: int, neighbour: int) -> None:
        if self.params["link_layer_feedback"]:
            state = self._state[node]
            at = state.heard.pop(neighbour, None)
            if at is not None:
                state.heard_at[at] = -math.inf
            self._link_broken(t, node, neighbour)

    # -- route discovery ----------------------------------------------------------------
    def _send_rreq(self, t: float, u: int, dst: int) -> None:
        node = self._state[u]
        if not self._within_limit(t, node.rreqs, self.params["rreq_ratelimit"]):
            # §6.3: not more than RREQ_RATELIMIT a second; sent in the next one
            discovery = node.discovery[dst]
            if discovery[2] is not _RREQ_LATER:   # one timer per held discovery
                discovery[2] = _RREQ_LATER
                self.host.set_timer(node.rreqs[0], u, (_RREQ_LATER, dst))
            return
        ttl, retries, _ = node.discovery[dst]
        node.seq += 1
        node.rreq_id += 1
        node.discovery[dst][2] = node.rreq_id
        remember(self.seen, seen_key(node.at, node.at, node.rreq_id, len(self.nodes)),
                 t + self.path_discovery_time)
        self._broadcast(t, u, "RREQ", Rreq(u, node.seq, node.rreq_id, dst,
                                           node.table.known_seq(dst), 0, ttl,
                                           self.params["gratuitous_reply"]))
        if ttl < self.params["net_diameter"]:
            wait = 2 * self.params["node_traversal_time"] * (ttl + self.params["timeout_buffer"])
        else:
            wait = self.net_traversal_time * 2 ** retries
        self.host.set_timer(t + wait, u, ("rreq", dst, node.rreq_id))

    def _rreq_timeout(self, t: float, u: int, dst: int, rreq_id: int) -> None:
        node = self._state[u]
        discovery = node.discovery.get(dst)
        if discovery is None or discovery[2] != rreq_id:
            return   # answered, or a later RREQ is out
        p = self.params
        ttl, retries, _ = discovery
        if ttl < p["net_diameter"]:
            ttl += p["ttl_increment"]
            discovery[0] = ttl if ttl <= p["ttl_threshold"] else p["net_diameter"]
        elif retries < p["rreq_retries"]:
            discovery[1] = retries + 1
        else:   # the destination cannot be reached: the held packets are dropped
            del node.discovery[dst]
            for msg in node.queue.take(dst):
                self.host.drop(t, u, msg, "no_route")
            return
        self._send_rreq(t, u, dst)

    # -- packets heard ------------------------------------------------------------------
    def on_receive(self, t: float, u: int, msg) -> None:
        node, sender, (kind, body) = self._state[u], msg.src, msg.payload
        if kind == "RREQ" or kind == "RERR":   # as when a broadcast's receivers are
            self.on_receive_all(t, (u,), msg)    # handed over together
            return
        if self.hello_on:
            self._hear(node, sender, t)
        if kind == "HELLO":
            node.table.offer(sender, sender, 1, body.dst_seq, t + self.hello_lifetime)
            return
        # any packet: a route to the previous hop, without a sequence number (§6.5)
        node.table.offer_neighbour(sender, t + self.active_route_timeout)
        if kind == "RREP":
            self._on_rrep(t, u, sender, body)
        # a RREP_ACK: no blacklist waits for it, the route to the sender is all it gives

    def on_receive_all(self, t: float, nodes, msg) -> None:
        """:meth:`on_receive` at each of ``nodes`` in turn: one broadcast heard by all
        of them at ``t`` (the host hands a flood's receptions over so). A RREQ is
        handled here, for one receiver too: most of a run's events are receptions of
        RREQs already received, which the compiled walk over the receivers handles
        whole (:func:`~emulator.routing.aodv.flood.hear_broadcast`); the receptions
        that need more it leaves to this loop, in order. A RERR's receivers are walked
        so too, then each looks at its routes through the sender."""
        sender, (kind, body) = msg.src, msg.payload
        if kind != "RREQ" and kind != "RERR":
            for u in nodes:
                self.on_receive(t, u, msg)
            return
        column, state, todo = self.position, self._state, self._todo
        lifetime = t + self.active_route_timeout
        rreq = kind == "RREQ"
        count = hear_broadcast(
            t, column[sender], column[body.orig] if rreq else -1,
            body.rreq_id if rreq else -1, self.positions(nodes), self.hello_on, lifetime,
            t + self.path_discovery_time, self._heard_at, self._one_hop, self._lifetimes,
            self._latest, self.seen, self._seen_purge_at, todo)
        if rreq:
            for k, needs in zip(todo[0, :count].tolist(), todo[1, :count].tolist()):
                u = nodes[k]
                node = state[u]
                self._settle(node, sender, t, lifetime, needs)
                if needs & FIRST:
                    self._on_rreq(t, u, node, sender, body)
            return
        needs_of = dict(zip(todo[0, :count].tolist(), todo[1, :count].tolist()))
        lost, delete_at = body.unreachable, t + self.delete_period
        for k, u in enumerate(nodes):
            node = state[u]
            needs = needs_of.get(k)
            if needs:
                self._settle(node, sender, t, lifetime, needs)
            told = node.table.unreachable(sender, lost, delete_at)
            if told:
                self._send_rerr(t, u, Rerr(tuple(told)))

    def _settle(self, node: _Node, sender: int, t: float, lifetime: float,
                needs: int) -> None:
        """What :func:`~.flood.hear_broadcast` left of ``node``'s hearing ``sender``:
        a neighbour new to it, a route to the sender to make or change (§6.5: any
        packet heard gives a route to the previous hop)."""
        if needs & NEW_NEIGHBOUR:
            self._hear(node, sender, t)
        if needs & OFFER:
            node.table.offer_neighbour(sender, lifetime)

    def _hear(self, node: _Node, sender: int, t: float) -> None:
        """``node`` heard ``sender`` at ``t`` (HELLO's link sensing, §6.9)."""
        at = node.heard.get(sender)
        if at is None:
            at = node.heard[sender] = self.position[sender]
        node.heard_at[at] = t

    def _on_rreq(self, t: float, u: int, node: _Node, sender: int, rreq: Rreq) -> None:
        """A RREQ heard for the first time, not this node's own (:meth:`on_receive`
        and :meth:`on_receive_all` discard the others and remember this one)."""
        hops = rreq.hops + 1
        lifetime = t + max(2 * self.net_traversal_time
                           - 2 * hops * self.params["node_traversal_time"],
                           self.params["node_traversal_time"])
        node.table.offer(rreq.orig, sender, hops, rreq.orig_seq, lifetime)   # reverse route
        reverse = node.table.valid(rreq.orig, t)
        if u == rreq.dst:   # §6.6.1: the destination answers with a fresh sequence number
            node.seq = max(node.seq, rreq.dst_seq or 0)
            self._unicast(t, u, sender, "RREP",
                          Rrep(u, node.seq, rreq.orig, 0, self.my_route_timeout))
            return
        route = node.table.valid(rreq.dst, t)
        if route is not None and route.seq is not None and \
                (rreq.dst_seq is None or route.seq >= rreq.dst_seq):
            # §6.6.2: an intermediate node with a fresh enough route answers
            route.precursors.add(sender)
            if reverse is not None:
                reverse.precursors.add(route.next_hop)
            # a destination that is a neighbour may hear us but not be heard: ask the
            # node the RREP goes to for an acknowledgement (ns-3's rule)
            ack = self.params["rrep_ack"] and route.hops == 1
            self._unicast(t, u, sender, "RREP", Rrep(rreq.dst, route.seq, rreq.orig,
                                                     route.hops, route.lifetime - t, ack))
            if rreq.gratuitous and reverse is not None:
                # §6.6.3: the destination learns the route back to the originator, which
                # will send it packets it would otherwise have to discover a route for
                self._unicast(t, u, route.next_hop, "RREP",
                              Rrep(rreq.orig, reverse.seq, rreq.dst, reverse.hops,
                                   reverse.lifetime - t))
            return
        if rreq.ttl > 1:
            known = node.table.known_seq(rreq.dst)
            dst_seq = rreq.dst_seq if known is None else max(known, rreq.dst_seq or 0)
            # rreq._replace(dst_seq=dst_seq, hops=hops, ttl=rreq.ttl - 1) in a third of
            # the time: a run rebroadcasts a RREQ, or relays a RREP, a million times
            self._broadcast(t, u, "RREQ", Rreq(rreq.orig, rreq.orig_seq, rreq.rreq_id,
                                               rreq.dst, dst_seq, hops, rreq.ttl - 1,
                                               rreq.gratuitous))

    def _on_rrep(self, t: float, u: int, sender: int, rrep: Rrep) -> None:
        node = self._state[u]
        if rrep.ack:   # §6.7: acknowledged at once, and not asked of the next hop again
            self._unicast(t, u, sender, "RREP_ACK", RrepAck())
            rrep = rrep._replace(ack=False)
        hops = rrep.hops + 1
        node.table.offer(rrep.dst, sender, hops, rrep.dst_seq, t + rrep.lifetime)
        forward = node.table.valid(rrep.dst, t)
        if u == rrep.orig:
            if forward is not None:
                node.discovery.pop(rrep.dst, None)
                for msg in node.queue.take(rrep.dst):
                    self.host.release(t, u, msg)
            return
        reverse = node.table.valid(rrep.orig, t)
        if reverse is None or forward is None:
            return   # the reverse route is gone: the reply goes no further
        forward.precursors.add(reverse.next_hop)
        reverse.precursors.add(forward.next_hop)
        reverse.lifetime = max(reverse.lifetime, t + self.active_route_timeout)
        self._unicast(t, u, reverse.next_hop, "RREP",   # rrep._replace(hops=hops)
                      Rrep(rrep.dst, rrep.dst_seq, rrep.orig, hops, rrep.lifetime,
                           rrep.ack))

    # -- sending ------------------------------------------------------------------------
    def _link_broken(self, t: float, u: int, v: int) -> None:
        told = self._state[u].table.break_link(v, t + self.delete_period)
        if told:
            self._send_rerr(t, u, Rerr(tuple(told)))

    def _send_rerr(self, t: float, u: int, rerr: Rerr) -> None:
        """Broadcast ``rerr`` unless ``u`` sent RERR_RATELIMIT this second (§6.11)."""
        if self._within_limit(t, self._state[u].rerrs, self.params["rerr_ratelimit"]):
            self._broadcast(t, u, "RERR", rerr)

    def _within_limit(self, t: float, count: list, limit: int) -> bool:
        """Count one more at ``t`` in ``count`` (``[end of its second, so far]``, the
        second starting over at every RATELIMIT_INTERVAL from 0); False, counting
        nothing, once ``limit`` are in."""
        if t >= count[0]:   # a new second
            interval = self.params["ratelimit_interval"]
            count[0] = (math.floor(t / interval) + 1) * interval
            if count[0] <= t:   # rounding: the next second ends after t
                count[0] += interval
            count[1] = 0
        if count[1] >= limit:
            return False
        count[1] += 1
        return True

    def _broadcast(self, t: float, u: int, kind: str, packet) -> None:
        self._state[u].last_broadcast = t
        self.host.send_control(t, u, BROADCAST, Control(kind, packet), packet.bytes())

    def _unicast(self, t: float, u: int, v: int, kind: str, packet) -> None:
        self.host.send_control(t, u, v, Control(kind, packet), packet.bytes())
