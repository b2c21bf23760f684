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

from emulator.routing.aodv.receive import (ANSWER, ARRIVED, DEST, REBROADCAST, REVERSE,
                                           gone_neighbours, hear_neighbour, hear_rerr,
                                           hear_rrep, hear_rreq)
from emulator.routing.aodv.discovery import HELLO as _HELLO
from emulator.routing.aodv.discovery import (D_RETRIES, D_RREQ, D_TTL, HELD_BACK, NONE_OUT,
                                             RREQ_LATER, RREQ_TIMEOUT, RouteDiscoveries,
                                             within_limit)
from emulator.routing.aodv.packets import Rerr, Rrep, RrepAck, Rreq
from emulator.routing.aodv.rqueue import RequestQueue
from emulator.routing.aodv.rtable import (NEXT, VALID, RouteTable, lost_cells, new_routes,
                                          use)
from emulator.routing.base import BROADCAST, Control, Protocol
from emulator.routing.seen import Seen, new_latest, remember, seen_key


class _Node:
    """What one node knows: its position, sequence number, routes, held packets (the
    neighbours it has heard, the RREQs it has seen, its last RREQ ID and its
    discoveries in progress are the protocol's arrays)."""

    __slots__ = ("at", "_seqs", "table", "queue")

    def __init__(self, at: int, queue_length: int, table: RouteTable, seqs: np.ndarray):
        self.at = at
        self._seqs = seqs   # every node's sequence number, by position
        self.table = table
        #: A :class:`~.rqueue.RequestQueue` (the compiled loop's rows with one).
        self.queue = RequestQueue(queue_length)

    @property
    def seq(self) -> int:
        """The node's own sequence number."""
        return int(self._seqs[self.at])

    @seq.setter
    def seq(self, value: int) -> None:
        self._seqs[self.at] = value


class Aodv(Protocol):
    """AODV's state at every node (see the module docstring); ``params`` as
    :data:`emulator.routing.params.AODV`, in time units."""

    name = "aodv"
    #: Under a MAC, each broadcast waits U(0, this) seconds before its frame is queued:
    #: ns-3's AODV jitters every RREQ, RERR and HELLO it sends by 0-10 ms, without which
    #: the neighbours that forward one flood do so in the same slot and collide.
    mac_broadcast_jitter_s = 0.01

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
        # every node's routes (rtable), when it last heard each neighbour and in what
        # order it first heard them (a HELLO tick finds those gone in this order), by
        # node position (row) and the other node's (column), shared with the compiled
        # walks of what a node hears (receive); the RREQs every node has seen
        n = len(self.nodes)
        self._lifetimes, self._routes = new_routes(n)
        self._heard_at = np.full((n, n), -math.inf)
        self._heard_rank = np.zeros((n, n), np.int64)
        self._heard_next = np.zeros(n, np.int64)
        self._gone = np.zeros(n, np.int64)   # what a HELLO tick finds gone
        self._last_broadcast = np.full(n, -math.inf)   # by position
        #: Whether a node has a discovery in progress for a destination (by positions):
        #: a RREP back at a node that has none changes nothing.
        self.discovering = np.zeros((n, n), np.bool_)
        #: Each node's discovery for each destination (discovery.D_TTL, ...).
        self.discoveries = np.zeros((n, n, 3), np.int64)
        self.seqs = np.zeros(n, np.int64)   # every node's own sequence number
        self.rreq_ids = np.zeros(n, np.int64)   # the last RREQ ID each node gave
        #: By position: the end of the rate limit's second and the RREQs originated,
        #: and the RERRs sent, within it (discovery.within_limit).
        self.rreq_limits, self.rerr_limits = np.zeros((n, 2)), np.zeros((n, 2))
        self._latest = new_latest(n)
        #: The RREQs each node has processed (:mod:`emulator.routing.seen`).
        self.seen = Seen()
        self._todo = np.zeros((3, n), np.int64)   # what the walks leave to Python
        self._state = {
            u: _Node(i, p["queue_length"],
                     RouteTable(self._lifetimes, self._routes, i, self.position,
                                self.nodes), self.seqs)
            for i, u in enumerate(self.nodes)}

    def compiled_loop(self, host):
        """Route discoveries and errors (RREQs, RREPs and RERRs), data hops and notices,
        the packets held for a route and the discoveries' timers and HELLO ticks in one
        compiled loop beside the host's calendar (:mod:`.discovery`), which reads the
        host's positions as its own."""
        if host._gids.tolist() != self.nodes:
            return None
        loop = RouteDiscoveries(host, self)
        for node in self._state.values():   # the packets held are the loop's rows
            node.queue = loop.request_queue(node.at)
        return loop

    # -- timers -------------------------------------------------------------------------
    def start(self, t: float) -> None:
        if self.params["hello"]:   # a random phase per node: HELLOs do not all collide
            for u in self.nodes:
                self.host.set_timer(t + self.uniform() * self.hello_interval, u, _HELLO)

    def on_timer(self, t: float, node: int, tag) -> None:
        if tag == _HELLO:
            self._hello(t, node)
        elif tag[0] == RREQ_LATER:
            i, j = self.position[node], self.position[tag[1]]
            if self.discovering[i, j] and self.discoveries[i, j, D_RREQ] == HELD_BACK:
                # still held: held again if this second is full already
                self.discoveries[i, j, D_RREQ] = NONE_OUT
                self._send_rreq(t, node, tag[1])
        else:
            self._rreq_timeout(t, node, tag[1], tag[2])

    def _hello(self, t: float, u: int) -> None:
        """Every HELLO_INTERVAL: neighbours not heard for ALLOWED_HELLO_LOSS intervals are
        gone (§6.11); a HELLO if no broadcast went out in the last interval (§6.9)."""
        node = self._state[u]
        count = gone_neighbours(self._heard_at, self._heard_rank, node.at, t,
                                self.hello_lifetime, self._gone)
        for v in self._gone[:count].tolist():
            self._link_broken(t, u, self.nodes[v])
        if t - self._last_broadcast.item(node.at) >= self.hello_interval:
            self.hello_due(t, u)
        else:
            self.host.set_timer(t + self.hello_interval, u, _HELLO)

    def hello_due(self, t: float, u: int) -> None:
        """``u`` sent no broadcast within the last HELLO_INTERVAL: a HELLO (a RREP to
        itself, TTL 1), and the next tick."""
        hello = Rrep(u, self._state[u].seq, u, 0, self.hello_lifetime)
        self._broadcast(t, u, "HELLO", hello)
        self.host.set_timer(t + self.hello_interval, u, _HELLO)

    # -- forwarding ---------------------------------------------------------------------
    def next_hop(self, t: float, u: int, msg) -> int | None:
        node = self._state[u]
        dst = msg.dst
        column = self.position
        # routes in use stay active (§6.2)
        nxt = use(self._routes, self._lifetimes, node.at, column[dst], column[msg.src], t,
                  t + self.active_route_timeout)
        if nxt >= 0:
            return self.nodes[nxt]
        if msg.kind == "routing":   # a notice never waits for a route
            self.host.drop(t, u, msg, "no_route")
        elif u == msg.src:
            if not node.queue.push(msg, dst):
                self.host.drop(t, u, msg, "queue_full")
            elif not self.discovering[node.at, column[dst]]:
                self.discovering[node.at, column[dst]] = True
                self.discoveries[node.at, column[dst]] = (self.params["ttl_start"], 0,
                                                          NONE_OUT)
                self._send_rreq(t, u, dst)
        else:   # §6.11 (ii): a packet to forward and no route
            self.host.drop(t, u, msg, "no_route")
            self._send_rerr(t, u, Rerr(((dst, node.table.known_seq(dst) or 0),)))
        return None

    def route(self, t: float, node: int, dst: int) -> int | None:
        i, c = self.position[node], self.position[dst]
        if self._routes.item(i, c, VALID) and self._lifetimes.item(i, c) > t:
            return self.nodes[self._routes.item(i, c, NEXT)]
        return None

    def on_link_failure(self, t: float, node: int, neighbour: int) -> None:
        if self.params["link_layer_feedback"]:
            # lost: heard again, it goes last in the node's order
            self._heard_at[self.position[node], self.position[neighbour]] = -math.inf
            self._link_broken(t, node, neighbour)

    # -- route discovery ----------------------------------------------------------------
    def _send_rreq(self, t: float, u: int, dst: int) -> None:
        node = self._state[u]
        discovery = self.discoveries[node.at, self.position[dst]]
        if not within_limit(t, self.rreq_limits, node.at, self.params["rreq_ratelimit"],
                            self.params["ratelimit_interval"]):
            # §6.3: not more than RREQ_RATELIMIT a second; sent in the next one
            if discovery[D_RREQ] != HELD_BACK:   # one timer per held discovery
                discovery[D_RREQ] = HELD_BACK
                self.host.set_timer(self.rreq_limits.item(node.at, 0), u,
                                    (RREQ_LATER, dst))
            return
        ttl, retries = discovery[D_TTL].item(), discovery[D_RETRIES].item()
        node.seq += 1
        rreq_id = self.rreq_ids[node.at] = self.rreq_ids.item(node.at) + 1
        discovery[D_RREQ] = rreq_id
        self.seen.reserve(t, 1)
        remember(*self.seen.arrays(), seen_key(node.at, node.at, rreq_id, len(self.nodes)),
                 t + self.path_discovery_time)
        self._broadcast(t, u, "RREQ", Rreq(u, node.seq, rreq_id, dst,
                                           node.table.known_seq(dst), 0, ttl,
                                           self.params["gratuitous_reply"]))
        if ttl < self.params["net_diameter"]:
            wait = 2 * self.params["node_traversal_time"] * (ttl + self.params["timeout_buffer"])
        else:
            wait = self.net_traversal_time * 2 ** retries
        self.host.set_timer(t + wait, u, (RREQ_TIMEOUT, dst, rreq_id))

    def _rreq_timeout(self, t: float, u: int, dst: int, rreq_id: int) -> None:
        node = self._state[u]
        i, j = node.at, self.position[dst]
        discovery = self.discoveries[i, j]
        if not self.discovering[i, j] or discovery[D_RREQ] != rreq_id:
            return   # answered, or a later RREQ is out
        p = self.params
        ttl, retries = discovery[D_TTL].item(), discovery[D_RETRIES].item()
        if ttl < p["net_diameter"]:
            ttl += p["ttl_increment"]
            discovery[D_TTL] = ttl if ttl <= p["ttl_threshold"] else p["net_diameter"]
        elif retries < p["rreq_retries"]:
            discovery[D_RETRIES] = retries + 1
        else:
            self.discovery_failed(t, u, dst)
            return
        self._send_rreq(t, u, dst)

    def discovery_failed(self, t: float, u: int, dst: int) -> None:
        """``u``'s last RREQ for ``dst`` went unanswered: the destination cannot be
        reached, the packets held for it are dropped (§6.3)."""
        node = self._state[u]
        self.discovering[node.at, self.position[dst]] = False
        for msg in node.queue.take(dst):
            self.host.drop(t, u, msg, "no_route")

    # -- packets heard ------------------------------------------------------------------
    def on_receive(self, t: float, u: int, msg) -> None:
        node, sender, (kind, body) = self._state[u], msg.src, msg.payload
        if kind == "RREQ" or kind == "RERR":   # as when a broadcast's receivers are
            self.on_receive_all(t, (u,), msg)    # handed over together
            return
        if kind == "RREP":   # its walk hears the sender too (753 k relays at 10^5)
            self._on_rrep(t, u, node, sender, body)
            return
        if self.hello_on:
            self._hear(node, sender, t)
        if kind == "HELLO":
            node.table.offer(sender, sender, 1, body.dst_seq, t + self.hello_lifetime)
        else:   # a RREP_ACK: no blacklist waits for it, the route to the sender is all
            # it gives (any packet heard gives one, without a sequence number: §6.5)
            node.table.offer_neighbour(sender, t + self.active_route_timeout)

    def on_receive_all(self, t: float, nodes, msg) -> None:
        """:meth:`on_receive` at each of ``nodes`` in turn: one broadcast heard by all
        of them at ``t`` (the host hands a flood's receptions over so). A RREQ or a
        RERR is handled here, for one receiver too: most of a run's events are
        receptions of RREQs already received, which the compiled walks over the
        receivers handle whole, with a first reception's work on the routes
        (:mod:`~emulator.routing.aodv.receive`); what they leave (a new neighbour, a
        packet to send) is done here, in order."""
        kind = msg.payload.type
        if kind == "RREQ":
            self._hear_rreq(t, nodes, msg.src, msg.payload.body)
        elif kind == "RERR":
            self._hear_rerr(t, nodes, msg.src, msg.payload.body)
        else:
            for u in nodes:
                self.on_receive(t, u, msg)

    def _hear_rreq(self, t: float, nodes, sender: int, rreq: Rreq) -> None:
        """``nodes`` hear ``rreq`` from ``sender`` (:func:`~.receive.hear_rreq`); each
        it is new to answers it, rebroadcasts it or lets it go (§6.5–6.6)."""
        column, todo = self.position, self._todo
        hops = rreq.hops + 1
        reverse_lifetime = t + max(2 * self.net_traversal_time
                                   - 2 * hops * self.params["node_traversal_time"],
                                   self.params["node_traversal_time"])
        self.seen.reserve(t, len(nodes))   # a key a receiver at most
        count = hear_rreq(
            t, column[sender], self.positions(nodes), self.hello_on,
            t + self.active_route_timeout, t + self.path_discovery_time, self._heard_at,
            self._heard_rank, self._heard_next, self._lifetimes, self._routes,
            self._latest, *self.seen.arrays(), todo,
            column[rreq.orig], rreq.orig_seq, rreq.rreq_id, column[rreq.dst],
            -1 if rreq.dst_seq is None else rreq.dst_seq, hops, rreq.ttl,
            reverse_lifetime)
        for k, needs, dst_seq in zip(*todo[:, :count].tolist()):
            u = nodes[k]
            if needs & REBROADCAST:
                # rreq._replace(dst_seq=..., hops=hops, ttl=rreq.ttl - 1) in a third of
                # the time: a run rebroadcasts a RREQ, or relays a RREP, a million times
                self._broadcast(t, u, "RREQ", Rreq(
                    rreq.orig, rreq.orig_seq, rreq.rreq_id, rreq.dst,
                    None if dst_seq < 0 else dst_seq, hops, rreq.ttl - 1, rreq.gratuitous))
            else:
                self.answer_rreq(t, u, sender, rreq, needs)

    def answer_rreq(self, t: float, u: int, sender: int, rreq: Rreq, needs: int) -> None:
        """``u`` answers ``rreq`` heard from ``sender`` as the walk decided (``needs``):
        as its destination (§6.6.1) or from its own route (§6.6.2)."""
        if needs & DEST:   # §6.6.1: with a fresh sequence number
            node = self._state[u]
            node.seq = max(node.seq, rreq.dst_seq or 0)
            self._unicast(t, u, sender, "RREP",
                          Rrep(u, node.seq, rreq.orig, 0, self.my_route_timeout))
        elif needs & ANSWER:
            self._answer(t, u, self._state[u], sender, rreq, bool(needs & REVERSE))

    def _answer(self, t: float, u: int, node: _Node, sender: int, rreq: Rreq,
                reverse: bool) -> None:
        """§6.6.2: ``u`` answers ``rreq`` from its own route to the destination (the
        walk made the precursors); with the G flag and a valid route back (``reverse``)
        it tells the destination the way to the originator too (§6.6.3)."""
        route = node.table.entry(rreq.dst)
        # a destination that is a neighbour may hear us but not be heard: ask the
        # node the RREP goes to for an acknowledgement (ns-3's rule)
        ack = self.params["rrep_ack"] and route.hops == 1
        self._unicast(t, u, sender, "RREP", Rrep(rreq.dst, route.seq, rreq.orig,
                                                 route.hops, route.lifetime - t, ack))
        if rreq.gratuitous and reverse:
            # the destination will send the originator packets it would otherwise have
            # to discover a route for
            back = node.table.entry(rreq.orig)
            self._unicast(t, u, route.next_hop, "RREP",
                          Rrep(rreq.orig, back.seq, rreq.dst, back.hops,
                               back.lifetime - t))

    def _hear_rerr(self, t: float, nodes, sender: int, rerr: Rerr) -> None:
        """``nodes`` hear ``rerr`` from ``sender`` (:func:`~.receive.hear_rerr`); those
        that invalidated routes with precursors pass the news on (§6.11)."""
        column, todo = self.position, self._todo
        lost = rerr.unreachable
        told = np.empty(len(nodes) * len(lost), np.int64)
        count = hear_rerr(t, column[sender], self.positions(nodes), self.hello_on,
                          t + self.active_route_timeout, self._heard_at,
                          self._heard_rank, self._heard_next, self._lifetimes,
                          self._routes, todo, lost_cells(lost, column),
                          t + self.delete_period, told)
        told, at = told.tolist(), 0
        for k, needs, many in zip(*todo[:, :count].tolist()):
            u = nodes[k]
            if many:
                self._send_rerr(t, u, Rerr(tuple(lost[j] for j in told[at:at + many])))
                at += many

    def _hear(self, node: _Node, sender: int, t: float) -> None:
        """``node`` heard ``sender`` at ``t`` (HELLO's link sensing, §6.9)."""
        hear_neighbour(self._heard_at, self._heard_rank, self._heard_next, node.at,
                       self.position[sender], t)

    def _on_rrep(self, t: float, u: int, node: _Node, sender: int, rrep: Rrep) -> None:
        """``u`` hears ``rrep`` from ``sender`` (§6.7; the routes' work is
        :func:`~.receive.hear_rrep`'s): the originator sends the packets it held for
        the destination, a node on the way relays it back."""
        if rrep.ack:   # §6.7: acknowledged at once, and not asked of the next hop again
            self._unicast(t, u, sender, "RREP_ACK", RrepAck())
        column, hops = self.position, rrep.hops + 1
        until = t + self.active_route_timeout
        to = hear_rrep(t, node.at, column[sender], self.hello_on, until,
                       column[rrep.orig], column[rrep.dst], rrep.dst_seq, hops,
                       t + rrep.lifetime, until, self._heard_at, self._heard_rank,
                       self._heard_next, self._lifetimes, self._routes)
        if to >= 0:
            self._unicast(t, u, self.nodes[to], "RREP",   # rrep._replace(hops=hops)
                          Rrep(rrep.dst, rrep.dst_seq, rrep.orig, hops, rrep.lifetime))
        elif to == ARRIVED:
            self.rrep_arrived(t, u, rrep.dst)

    def rrep_arrived(self, t: float, u: int, dst: int) -> None:
        """A RREP for ``dst`` is back at ``u``, its originator, with a valid route: the
        discovery is over and the packets ``u`` held for ``dst`` go."""
        node = self._state[u]
        self.discovering[node.at, self.position[dst]] = False
        for msg in node.queue.take(dst):
            self.host.release(t, u, msg)

    # -- sending ------------------------------------------------------------------------
    def _link_broken(self, t: float, u: int, v: int) -> None:
        told = self._state[u].table.break_link(v, t + self.delete_period)
        if told:
            self._send_rerr(t, u, Rerr(tuple(told)))

    def _send_rerr(self, t: float, u: int, rerr: Rerr) -> None:
        """Broadcast ``rerr`` unless ``u`` sent RERR_RATELIMIT this second (§6.11)."""
        if within_limit(t, self.rerr_limits, self.position[u],
                        self.params["rerr_ratelimit"], self.params["ratelimit_interval"]):
            self._broadcast(t, u, "RERR", rerr)

    def _broadcast(self, t: float, u: int, kind: str, packet) -> None:
        self._last_broadcast[self.position[u]] = t
        self.host.send_control(t, u, BROADCAST, Control(kind, packet), packet.bytes())

    def _unicast(self, t: float, u: int, v: int, kind: str, packet) -> None:
        self.host.send_control(t, u, v, Control(kind, packet), packet.bytes())
