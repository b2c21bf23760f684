"""The transport as the host of a routing protocol: hops, control packets and notices.

:class:`RoutedTransport` is :class:`emulator.transport.Transport` with the next hop of a
data packet asked of a :class:`~emulator.routing.base.Protocol` at the node that holds
it, instead of read from the epoch's least-cost tree. What the protocol knows comes
only from its own packets, which are messages like any other here (``kind =
"routing"``): they wait for their link or the shared channel, take airtime, can be lost,
and are ledger rows. A broadcast is one transmission heard by every neighbour in range
(one ledger row, ``hop_v = dst = -1``, costed at the dearest of its links: the
transmitter must reach the farthest).

The physical layer is the transport's: a unicast to a neighbour out of range (no link
in the current epoch) or dead at the arrival fails at the sender's MAC, which tells the
protocol (link-layer feedback) at once for a missing link, at the arrival for a dead
receiver (when the acknowledgement would have come). A data packet dropped at a node,
for any reason, is reported to its source by a :class:`~emulator.routing.base.Notice`
routed back like data; the source learns of the loss only when the notice arrives (at
once when it dropped the packet itself), and never if the notice is lost. What this
leaves out: MAC retries take no time, a frame lost on the air (``loss``) is not taken as
a broken link (ns-3's AODV with link-layer feedback would), and a node's queue and
tables survive its death.

Example
-------
Four nodes in a line, links of 0.01, AODV: the first packet waits for a route
discovery — a RREQ of TTL 1 reaches node 1 only; after RING_TRAVERSAL_TIME (2 x 0.04 x
(1 + 2) = 0.24) one of TTL 3 reaches node 2, which knows its neighbour 3 from a HELLO
and answers; the RREP is back at 0.28 — and arrives at 0.31; the second finds the route
and takes its three hops.

>>> import networkx as nx
>>> from contract.messages import Message
>>> from emulator.network import Network
>>> from emulator.routing.params import resolve
>>> g = nx.path_graph(4)
>>> for e in g.edges: g.edges[e].update(cost=1.0, delay=0.01)
>>> class OneEpoch:
...     epochs = [0.0]
...     def snapshot(self, t): return g
>>> tr = RoutedTransport(Network(OneEpoch()), None, seed=1, routing="aodv",
...                      routing_params=resolve("aodv"))
>>> tr.send(Message(0, "data", 0, 3, 0.0, 1.0, 50, None))
>>> tr.send(Message(1, "data", 0, 3, 1.0, 1.0, 50, None))
>>> tr.advance()
>>> [round(t, 3) for t, _ in tr.arrivals]
[0.31, 1.03]
>>> sorted(tr.control_sent)
['HELLO', 'RREP', 'RREQ']
"""
from __future__ import annotations

import math
from collections import Counter
from typing import NamedTuple

from contract.messages import Message
from emulator.routing import PROTOCOLS
from emulator.routing.base import BROADCAST, NOTICE_BYTES, Control, Notice
from emulator.transport import _END, _READY, _TIMER, Transport, _binned

#: The kind of every message a routing protocol sends (control packets, notices).
ROUTING = "routing"


class _MacFailure(NamedTuple):
    """A timer of the host's own: the sender's MAC learns that ``msg`` did not reach
    ``neighbour`` (no acknowledgement after its retries)."""

    msg: object
    neighbour: int
    reason: str


class RoutedTransport(Transport):
    """A :class:`~emulator.transport.Transport` whose next hops a routing protocol
    chooses (see the module docstring); it is the protocol's
    :class:`~emulator.routing.base.Host`.

    ``routing`` names the protocol (:data:`emulator.routing.PROTOCOLS`),
    ``routing_params`` its parameters in time units (:func:`emulator.routing.params.resolve`),
    ``bytes_per_unit`` sizes its packets in data units (their communication cost);
    periodic timers stop at ``horizon`` (None: once no data message is in flight or
    waiting, as :func:`emulator.deliver` wants).
    """

    def __init__(self, network, ledger, seed: int, medium: str = "links",
                 interference_radius: float | None = None, positions=None, *,
                 reorder: bool = False, routing: str, routing_params: dict,
                 horizon: float | None = None, bytes_per_unit: int = 32):
        super().__init__(network, ledger, seed, medium, interference_radius, positions,
                         reorder=reorder)
        self.routing = routing
        self.horizon = horizon
        self.bytes_per_unit = bytes_per_unit
        self.ip_ttl = routing_params["ip_ttl"]
        self.drops = []            # every data drop; self.losses: what sources learn
        self._taken: dict[int, int] = {}     # hops taken so far, by message id
        self._first: dict[tuple[int, int], int] = {}   # first message of each flow
        #: The first data packet of each flow (src, dst): its wait for a route.
        self.first_waits: dict[tuple[int, int], float] = {}
        #: Control packets transmitted, by type (a notice's hops as ``"NOTICE"``), and
        #: their bytes.
        self.control_sent: Counter = Counter()
        self.control_bytes: Counter = Counter()
        #: Control packets and notices not received, by reason.
        self.control_lost: Counter = Counter()
        #: ``(time, node, type, size_bytes)`` of every control transmission.
        self.control_log: list[tuple[float, int, str, int]] = []
        self._next_control_id = -1
        self._v_start, self._v_end, self._view = math.inf, -math.inf, None
        nodes = network.build_view(0).nodes
        self.protocol = PROTOCOLS.get(routing)(self, nodes, routing_params, seed)
        self._started = False   # at the first advance, when the messages to route are in

    # -- the Host contract ------------------------------------------------------------
    def send_control(self, t: float, node: int, dst: int, control: Control,
                     size_bytes: int) -> None:
        """Send ``control`` one hop from ``node`` at ``t`` (to ``dst`` or everyone)."""
        msg = Message(self._next_control_id, ROUTING, node, dst, t,
                      size_bytes / self.bytes_per_unit, size_bytes, control)
        self._next_control_id -= 1
        self._push(t, _READY, msg, node)

    def set_timer(self, t: float, node: int, tag) -> None:
        """Fire ``on_timer(t, node, tag)`` at ``t``, unless the run is over by then."""
        if (self._unresolved > 0) if self.horizon is None else (t < self.horizon):
            self._push(t, _TIMER, tag, node)

    def release(self, t: float, node: int, msg) -> None:
        """Forward ``msg`` from ``node`` again at ``t`` (it waited for a route)."""
        self._push(t, _READY, msg, node)

    def drop(self, t: float, node: int, msg, reason: str) -> None:
        """Drop ``msg`` at ``node``: counted, and its source told (a notice, or at once
        if it is the source; a dead node tells no one). A notice dropped is only
        counted."""
        if msg.kind == ROUTING:
            self.control_lost[reason] += 1
            return
        self.lost[reason] += 1
        self._unresolved -= 1
        self.drops.append((t, msg, reason, node))
        self._taken.pop(msg.msg_id, None)
        if node == msg.src:
            self.losses.append((t, msg, reason, node))
        elif self._view_at(t).alive(node):   # a dead node tells no one
            notice = Message(self._next_control_id, ROUTING, node, msg.src, t,
                             NOTICE_BYTES / self.bytes_per_unit, NOTICE_BYTES,
                             Notice(node, msg.src, msg, reason))
            self._next_control_id -= 1
            self._push(t, _READY, notice, node)

    # -- the hop loop -----------------------------------------------------------------
    def advance(self, until: float = math.inf) -> None:
        """Process every event before ``until``: hops ready, transmissions ending,
        the protocol's timers; on the shared medium the channel is granted after each
        instant's events (as :meth:`Transport._advance_shared` does)."""
        if not self._started:
            self._started = True
            self.protocol.start(0.0)
        for t, rank, seq, a, node in self._events(until):
            if rank == _END:
                self._end(a)
            elif rank == _TIMER:
                self._timer(t, node, a)
            else:
                self._ready(t, seq, a, node)

    def _view_at(self, t: float):
        if not self._v_start <= t < self._v_end:
            self._view, self._v_start, self._v_end = self.network.view_span(t)
        return self._view

    def _ready(self, t: float, seq: int, msg, u: int) -> None:
        """``msg`` is at ``u`` at ``t``: a control packet to send or heard, or a data
        packet (or notice) to deliver or forward."""
        view = self._view_at(t)
        if msg.kind == ROUTING and type(msg.payload) is Control:
            if u != msg.src:
                if view.alive(u):
                    self.protocol.on_receive(t, u, msg)
            elif view.alive(u):   # a dead node sends nothing
                self._send_hop(t, seq, msg, u, msg.dst, view)
            return
        if u == msg.dst:   # sent to itself (others arrive at their last hop's start)
            self.arrivals.append((t, msg))
            return
        if not view.alive(u):
            self.drop(t, u, msg, "dead_node")
            return
        taken = self._taken.get(msg.msg_id, 0)
        if taken >= self.ip_ttl:
            self.drop(t, u, msg, "ttl")
            return
        v = self.protocol.next_hop(t, u, msg)
        if v is None:
            return
        if u == msg.src and msg.kind != ROUTING:
            flow = (u, msg.dst)
            if self._first.setdefault(flow, msg.msg_id) == msg.msg_id:
                self.first_waits.setdefault(flow, t - msg.sent_at)
        self._taken[msg.msg_id] = taken + 1
        self._send_hop(t, seq, msg, u, v, view)

    def _send_hop(self, t: float, seq: int, msg, u: int, v: int, view) -> None:
        """Put ``msg`` on its way from ``u`` to the neighbour ``v`` (or everyone): on
        the link when it is free, or in the shared channel's queue."""
        if v == BROADCAST:
            hop = (msg, u, v, view.out_links(u), view)
            channels = [(u, w) for w in view.neighbors(u)]
        else:
            k = view._link_index(u, v)
            if k < 0:   # out of range: the MAC gives up (its retries take no time here)
                self._timer(t, u, _MacFailure(msg, v, "link_break"))
                return
            hop, channels = (msg, u, v, k, view), [(u, v)]
        if self.medium == "shared":
            self._waiting.append((t, seq, hop))
            return
        free = self._link_free
        start = max([t] + [free.get(c, t) for c in channels])
        done = self._transmit(start, hop)
        for channel in channels:
            free[channel] = done

    def _transmit(self, start: float, hop) -> float:
        msg = hop[0]
        if msg.kind == ROUTING:
            kind = msg.payload.type if type(msg.payload) is Control else "NOTICE"
            self.control_sent[kind] += 1
            self.control_bytes[kind] += msg.size_bytes
            self.control_log.append((start, hop[1], kind, msg.size_bytes))
        if hop[2] == BROADCAST:
            return self._broadcast(start, hop)
        return super()._transmit(start, hop)

    def _broadcast(self, start: float, hop) -> float:
        """One transmission from ``u`` heard by each neighbour with its own link's delay,
        jitter and loss; serialized at the slowest of those links."""
        msg, u, _, links, view = hop
        heads, costs, delays, jitters, bandwidths, losses = view.hop_lists()
        bandwidth = min((bandwidths[k] for k in links), default=math.inf)
        done = start + (msg.size_bytes / bandwidth if bandwidth > 0 else 0.0)
        if self.ledger is not None:
            self.ledger.add(start, msg.msg_id, msg.kind, u, BROADCAST, u, BROADCAST,
                            msg.size_units, msg.size_bytes,
                            max((costs[k] for k in links), default=0.0), False)
        self.hops += 1
        for k in links:
            v = heads[k]
            arrive = self._in_order(u, v, done + delays[k] + (
                self._uniform() * jitters[k] if jitters[k] > 0 else 0.0))
            if losses[k] > 0 and self._uniform() < losses[k]:
                self.control_lost["link_loss"] += 1
            elif not self.network.view(arrive).alive(v):
                self.control_lost["dead_node"] += 1
            else:
                self._push(arrive, _READY, msg, v)
        return done

    def _after_hop(self, arrive: float, msg, u: int, v: int, dropped: bool,
                   reached: bool) -> None:
        if dropped or not reached:
            # the sender's MAC finds out when the acknowledgement does not come
            self._push(arrive, _TIMER, _MacFailure(msg, v, "link_loss" if dropped
                                                   else "link_break"), u)
        elif v == msg.dst and type(msg.payload) is Notice:
            notice = msg.payload
            self._taken.pop(msg.msg_id, None)
            self.losses.append((arrive, notice.packet, notice.reason, notice.src))
        elif v == msg.dst and msg.kind != ROUTING:
            self._taken.pop(msg.msg_id, None)
            self._unresolved -= 1
            self.arrivals.append((arrive, msg))
        else:
            self._push(arrive, _READY, msg, v)

    def _timer(self, t: float, node: int, tag) -> None:
        if type(tag) is not _MacFailure:
            if self.horizon is not None or self._unresolved > 0:
                # deliver's rule: once every message is delivered or dropped, the
                # protocol's clock stops (its neighbours would time out one another)
                self.protocol.on_timer(t, node, tag)
            return
        if tag.reason == "link_break":
            self.protocol.on_link_failure(t, node, tag.neighbour)
        self.drop(t, node, tag.msg, tag.reason)

    # -- what the run reports ---------------------------------------------------------
    def stats(self) -> dict:
        """The protocol's figures for ``meta.json`` and the summary."""
        waits = list(self.first_waits.values())
        return {"routing": self.routing,
                "control_sent": dict(self.control_sent),
                "control_bytes": dict(self.control_bytes),
                "control_lost": dict(self.control_lost),
                "drops_by_reason": dict(self.lost),
                "route_discovery_latency_mean": (sum(waits) / len(waits) if waits
                                                 else math.nan),
                **self._delivery()}


    def series(self, interval: float) -> list[tuple]:
        """Beside the drops: control packets and bytes each node sent per ``interval``
        (``routing_control_messages``, ``routing_control_bytes``)."""
        control = [(t, node, metric, amount) for t, node, _, size in self.control_log
                   for metric, amount in (("routing_control_messages", 1),
                                          ("routing_control_bytes", size))]
        return super().series(interval) + _binned(control, interval)


def open_transport(network, ledger, seed: int, medium: str = "links",
                   interference_radius: float | None = None, positions=None, *,
                   reorder: bool = False, routing: str = "oracle",
                   routing_params: dict | None = None, horizon: float | None = None,
                   bytes_per_unit: int = 32) -> Transport:
    """The transport for ``routing``: the oracle's own, or one that hosts a protocol."""
    if routing == "oracle":
        return Transport(network, ledger, seed, medium, interference_radius, positions,
                         reorder=reorder)
    return RoutedTransport(network, ledger, seed, medium, interference_radius, positions,
                           reorder=reorder, routing=routing,
                           routing_params=routing_params, horizon=horizon,
                           bytes_per_unit=bytes_per_unit)
