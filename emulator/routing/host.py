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

A protocol may run some of its packets in a compiled loop of its own beside the
calendar (:meth:`~emulator.routing.base.Protocol.compiled_loop`: AODV's RREQs, RREPs and
RERRs, :mod:`emulator.routing.aodv.discovery`, on the links medium without batteries).
:meth:`send_control` files those packets there, :meth:`RoutedTransport.advance` takes
the least of its own queues' heads and the loop's, and the loop numbers its events from
the same counter, so the run is event for event the one this module's Python makes.

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

import heapq
import logging
import math
from collections import Counter, deque
from typing import NamedTuple

import numpy as np

from contract.messages import Message
from emulator.routing import PROTOCOLS
from emulator.network import LINK_DEFAULTS
from emulator.routing.base import BROADCAST, NOTICE_BYTES, Control, Notice
from emulator.routing.channel import SharedChannel
from emulator.routing.oracle import OracleRoutes
from emulator.routing.control_log import ControlLog
from emulator.routing.fanout import (ATTRS, DONE, EXPIRED, NEED_VIEW, Fanout, hear,
                                     unicast)
from emulator.transport import (_END, _READY, _TIMER, Transport, _binned, _keep_few,
                                 _per_epoch)

#: The kind of every message a routing protocol sends (control packets, notices).
ROUTING = "routing"

#: Transmissions waiting for the shared channel at which a run says it is saturated:
#: without ``queue_max_wait`` a flood can queue faster than the channel serves, and the
#: run then goes on for as long as its protocol's timers do (AODV, 120 nodes, 1,200
#: messages in 30 s: 200,000 waiting at t = 100 and growing).
SATURATED = 100_000

log = logging.getLogger(__name__)


#: A MAC's fates of a broadcast at one of its receivers.
_RECEIVER_FATES = ("delivered", "collision", "reassembly_full")


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

    compiled_links = False   # the protocols' packets and timers are Python objects

    def __init__(self, network, ledger, seed: int, medium: str = "links",
                 interference_radius: float | None = None, positions=None, *,
                 reorder: bool = False, max_wait: float | None = None, routing: str,
                 routing_params: dict, horizon: float | None = None,
                 bytes_per_unit: int = 32, mac=None, radio=None,
                 seconds_per_unit: float = 1.0, capture=None):
        super().__init__(network, ledger, seed, medium, interference_radius, positions,
                         reorder=reorder, max_wait=max_wait)
        self.routing = routing
        self.horizon = horizon
        self.bytes_per_unit = bytes_per_unit
        self.ip_ttl = routing_params["ip_ttl"]
        self.drops = []            # every data drop; self.losses: what sources learn
        self._taken: dict[int, int] = {}     # hops taken so far, by message id
        #: The first data packet of each flow (src, dst): its wait for a route.
        self.first_waits: dict[tuple[int, int], float] = {}
        #: Control packets and notices not received, by reason.
        self.control_lost: Counter = Counter()
        #: ``(time, node, type, size_bytes)`` of every control transmission; what
        #: :attr:`control_sent`, :attr:`control_bytes` and :attr:`control_messages`
        #: count.
        self.control_log = ControlLog()
        #: An :class:`~emulator.pcap.capture.Capture` that keeps every control packet
        #: as sent, or None. With one, the protocol's compiled loop stays off: this
        #: module's Python makes the same run event for event and has the packets as
        #: objects (the loop has them as rows of numbers).
        self.capture = capture
        # the types of the messages a packet of several carried, by its row in the log
        self._packed: dict[int, tuple] = {}
        self._next_control_id = -1
        nodes = network.build_view(0).nodes
        # nodes by their global positions (the compiled fan-out's, :mod:`fanout`), and
        # per directed link (u, v) by them: its last arrival ([u, v, 0]), when it is
        # free ([u, v, 1]), side by side (a fan-out touches both of each link)
        self._gpos = {u: i for i, u in enumerate(nodes)}
        self._gids = np.array(nodes, dtype=np.int64)
        # whether a flow (src, dst), by positions, has sent its first packet on
        self.flow_started = np.zeros((len(nodes), len(nodes)), np.bool_)
        self._link_times = np.full((len(nodes), len(nodes), 2), -math.inf)
        self._heard = Fanout(len(nodes))   # what the fan-out of a broadcast writes
        # by epoch: a view's links as the fan-out reads them, and who is up
        self._link_arrays: dict = {}
        self._alive_arrays: dict = {}
        # shared medium: the transmissions waiting for the channel and in progress (their
        # channel slots by transmission number); the zones' epoch under a radius (their
        # rows follow it)
        self._channel = SharedChannel(len(nodes))
        self._row_bytes = 8 * len(self._channel.busy)
        self._active: dict[int, int] = {}
        self._zones_of = None
        # shared medium, by epoch: a node's zone, and a hop's zone and endpoints, as bit
        # sets (the latter by sender, and receiver) (_hop_sets)
        self._zones: dict = {}
        self._hop_zones: dict = {}
        #: The MAC under the shared medium (:class:`emulator.mac.adapter.MacChannel`;
        #: None: the shared channel's perfect scheduler, ``[mac] model = "ideal"``).
        self.mac = None
        if mac is not None and not mac.ideal:
            from emulator.mac.adapter import MacChannel

            if not math.isinf(self.max_wait):   # queue_max_wait: the queue's lifetime
                mac = mac.with_lifetime(self.max_wait * seconds_per_unit)
            # after its first fate a hop needs only (msg, sender, receiver): its view
            # (and the view's trees) is let go
            self.mac = MacChannel(mac, network, radio, seconds_per_unit, seed,
                                  later=lambda hop: hop[:3])
        protocol = OracleRoutes if routing == "oracle" else PROTOCOLS.get(routing)
        self.protocol = protocol(self, nodes, routing_params, seed)
        if capture is not None and routing == "rpl":   # its DIOs name the root it took
            capture.root = self.protocol.root
        self._packs = self.protocol.packs_messages
        self._started = False   # at the first advance, when the messages to route are in
        # what is made ready at the time being processed (a control packet sent, a
        # packet released or a notice), in the order made: beside the calendar, not in
        # it (see _push)
        self._now: deque = deque()
        self._now_t = -math.inf
        # a protocol's packets in a compiled loop of their own, beside the calendar
        # (links medium, no batteries: set at the first advance), and whether it has
        # transmissions staged for the control log and ledger (handed over before this
        # logs one, and when advance returns)
        self._compiled = None
        self._loop_asked = False
        self._staged = False
        #: ``(ids, arrival times)`` of the messages sent as arrays delivered so far (by
        #: the compiled loop, in order; no message objects), as lists
        self.framed_arrivals: tuple[list, list] = ([], [])

    def _loop(self):
        """The protocol's compiled loop for this run (:attr:`_compiled`, made at the
        first ask: on the links medium without batteries), None for none."""
        if not self._loop_asked:
            self._loop_asked = True
            if self.medium == "links" and self.energy is None and self.capture is None:
                self._compiled = self.protocol.compiled_loop(self)
        return self._compiled

    def send_many(self, msg_id: np.ndarray, src: np.ndarray, dst: np.ndarray,
                  sent_at: np.ndarray, size_bytes: np.ndarray) -> None:
        """Data messages of one unit given as arrays, in order of ``sent_at``
        (:meth:`Transport.send_many`): to a compiled loop as arrays, numbered in order
        as :meth:`send` numbers them, each made into a message object only if Python
        handles it (their deliveries come back in lists: :attr:`framed_arrivals`);
        without a loop, one :meth:`send` each."""
        loop = self._loop()
        if loop is None:
            super().send_many(msg_id, src, dst, sent_at, size_bytes)
            return
        crossing = int(np.count_nonzero(src != dst))
        self.sent += crossing
        self._unresolved += crossing
        seqs = np.arange(self._seq + 1, self._seq + 1 + len(msg_id), dtype=np.int64)
        self._seq += len(msg_id)
        loop.take_send_arrays(seqs, msg_id, src, dst, sent_at, size_bytes, _READY)

    def _pending(self) -> tuple[int, float]:
        """As :meth:`Transport._pending`, then the deliveries of the messages sent as
        arrays (:attr:`framed_arrivals`), their delays summed on in the order they
        arrived (numpy's ``accumulate`` adds one after another, where its ``sum`` adds
        pairwise). :func:`emulator.deliver` sends every message as an array, and a
        run's driver none, so :attr:`arrivals` then holds only messages sent to their
        own node, which do not count."""
        pending, pending_sum = super()._pending()
        self._framed_block()
        if self._frames_arrived:
            blocks = self._frames_arrived
            ids = np.concatenate([ids for ids, _ in blocks])
            delays = (np.concatenate([times for _, times in blocks])
                      - self._compiled._data.sent_at(ids))
            pending += len(ids)
            pending_sum = float(np.add.accumulate(np.append(pending_sum, delays))[-1])
        return pending, pending_sum

    def outcomes(self) -> tuple:
        self._framed_block()
        return super().outcomes()

    def _framed_block(self) -> None:
        """The deliveries of messages sent as arrays so far (:attr:`framed_arrivals`)
        into :attr:`_frames_arrived`, as one block."""
        ids, times = self.framed_arrivals
        if ids:
            self._frames_arrived.append((np.array(ids, np.int64), np.array(times)))
            self.framed_arrivals = ([], [])

    # -- the Host contract ------------------------------------------------------------
    def send_control(self, t: float, node: int, dst: int, control: Control,
                     size_bytes: int) -> None:
        """Send ``control`` one hop from ``node`` at ``t`` (to ``dst`` or everyone)."""
        if self._compiled is not None and self._compiled.takes(control.type, dst):
            self._seq += 1
            self._compiled.file(t, node, dst, self._seq, self._next_control_id,
                                control, size_bytes, _READY)
            self._next_control_id -= 1
            return
        msg = Message(self._next_control_id, ROUTING, node, dst, t,
                      size_bytes / self.bytes_per_unit, size_bytes, control)
        self._next_control_id -= 1
        self._push(t, _READY, msg, node)

    def link_delivery(self, t: float, u: int, v: int, size_bytes: int) -> float:
        """The probability that a frame of ``size_bytes`` sent by ``u`` at ``t`` reaches
        ``v``: what the link model of the epoch draws against (``(1 - loss)(1 -
        ber)^(8 b)``), 0 without a link. A link-quality estimate for a protocol that
        asks the MAC (RPL's ETX), until a MAC learns it from its acknowledgements.

        >>> import networkx as nx
        >>> from emulator.network import Network
        >>> from emulator.routing.params import resolve
        >>> g = nx.path_graph(3); g.edges[0, 1].update(loss=0.2)
        >>> class OneEpoch:
        ...     epochs = [0.0]
        ...     def snapshot(self, t): return g
        >>> tr = RoutedTransport(Network(OneEpoch()), None, seed=1, routing="rpl",
        ...                      routing_params=resolve("rpl"))
        >>> tr.link_delivery(0.0, 1, 0, 64), tr.link_delivery(0.0, 1, 2, 64), tr.link_delivery(0.0, 0, 2, 64)
        (0.8, 1.0, 0.0)
        """
        view = self.network.view(t)
        k = view.link_indices().get((u, v), -1)
        if k < 0:
            return 0.0
        lists = view.hop_lists()   # (head, cost, delay, jitter, bandwidth, loss, ber, ...)
        return (1.0 - lists[5][k]) * (1.0 - lists[6][k]) ** (8 * size_bytes)

    def link_rx_dbm(self, t: float, u: int, v: int) -> float | None:
        """The power (dBm) at which ``v`` receives ``u``'s frames under the MAC (what a
        radio reports as RSSI; RPL's first ETX guess), None without a MAC."""
        return None if self.mac is None else self.mac.rx_dbm(u, v)

    def set_timer(self, t: float, node: int, tag) -> None:
        """Fire ``on_timer(t, node, tag)`` at ``t``, unless the run is over by then."""
        if (self._unresolved > 0) if self.horizon is None else (t < self.horizon):
            compiled = self._compiled
            if compiled is not None and compiled.takes_timer(tag):
                self._seq += 1
                compiled.file_timer(t, self._seq, node, tag)
                return
            self._push(t, _TIMER, tag, node)

    def release(self, t: float, node: int, msg) -> None:
        """Forward ``msg`` from ``node`` again at ``t`` (it waited for a route)."""
        if self._compiled is not None and msg.kind != ROUTING:
            self._seq += 1
            self._compiled.file_data(t, self._seq, msg, node, -1,
                                     self._taken.get(msg.msg_id, 0), _READY, True)
            return
        self._push(t, _READY, msg, node)

    def drop(self, t: float, node: int, msg, reason: str) -> None:
        """Drop ``msg`` at ``node``: counted, and its source told (a notice, or at once
        if it is the source; a dead node tells no one). A notice dropped is only
        counted."""
        if msg.kind == ROUTING:
            self.control_lost[reason] += 1
            return
        if self.booked_drop(t, node, msg, reason) and self._alive_at(t, node):
            # a dead node tells no one
            notice = self.notice(t, node, msg, reason, self._next_control_id)
            self._next_control_id -= 1
            if self._compiled is not None:   # routed there like data
                self._seq += 1
                self._compiled.file_data(t, self._seq, notice, node, -1, 0, _READY, True)
                return
            self._push(t, _READY, notice, node)

    def booked_drop(self, t: float, node: int, msg, reason: str) -> bool:
        """The data packet ``msg`` dropped at ``node`` at ``t``, counted and listed (and
        learnt by its source at once if it is the source); whether a notice is due."""
        self.lost[reason] += 1
        self._unresolved -= 1
        self.drops.append((t, msg, reason, node))
        self._taken.pop(msg.msg_id, None)
        if node == msg.src or not self.protocol.notices:
            self.losses.append((t, msg, reason, node))
            return False
        return True

    def notice(self, t: float, node: int, msg, reason: str, msg_id: int) -> Message:
        """The notice ``msg_id`` that ``node`` sends ``msg``'s source at ``t``: ``msg``
        was dropped there for ``reason``."""
        return Message(msg_id, ROUTING, node, msg.src, t,
                       NOTICE_BYTES / self.bytes_per_unit, NOTICE_BYTES,
                       Notice(node, msg.src, msg, reason))

    # -- the hop loop -----------------------------------------------------------------
    def _push(self, t: float, rank: int, a, b=None) -> None:
        """File an event: one made ready at the time being processed goes to the back
        of ``_now``, the others into the calendar. ``_now`` is in (time, rank, number)
        order as it fills (one time, one rank, numbers rising), so :meth:`advance`
        takes the least of the three queues' heads in the order one heap would give,
        and most events of a routed run (its control packets: 1.6 M of AODV's at 200
        nodes and 10^5 messages) never enter the heap."""
        self._seq += 1
        if t == self._now_t and rank == _READY:
            self._now.append((t, rank, self._seq, a, b))
        else:
            heapq.heappush(self._calendar, (t, rank, self._seq, a, b))

    def advance(self, until: float = math.inf) -> None:
        """Process every event before ``until``: hops ready, transmissions ending,
        the protocol's timers; on the shared medium the channel is granted after each
        instant's events (as the oracle's compiled loop does, :mod:`emulator.hop_kernel`).

        The loop holds the view of the epoch in force in locals, and hands a control
        packet heard to the protocol here: most events of a run are receptions of flooded packets (a
        RREQ or a TC is heard by every neighbour of every node that sends it), so what
        an event costs before the protocol sees it counts.
        """
        if not self._started:
            self._started = True
            self._loop()
            self.protocol.start(0.0)
        compiled = self._compiled
        if compiled is not None and self._sends:   # its sends are the loop's too
            compiled.take_sends(self._sends, _READY)
        cal, pop = self._calendar, heapq.heappop
        sends, take = self._sends, self._sends.popleft
        now, take_now = self._now, self._now.popleft
        network, receive = self.network, self.protocol.on_receive
        receive_all = self.protocol.on_receive_all
        send_hop, forward = self._send_hop, self._forward
        mac = self.mac
        shared = self.medium == "shared" and mac is None
        instant = None   # shared medium: the instant whose events are being processed
        v_start, v_end = math.inf, -math.inf
        while True:
            if sends and (not cal or sends[0] < cal[0]):
                queue = sends
            elif cal:
                queue = cal
            else:
                queue = None
            if now and (queue is None or now[0] < queue[0]):
                queue = now
            if mac is not None:   # the channel's decisions up to the next event first
                limit = until if queue is None else min(queue[0][0], until)
                due = mac.next_time()
                if due <= limit and due < math.inf:
                    self._mac_fates(mac.step(limit))
                    if self._duty_book:
                        self.energy.mac_radio(mac.ids, *mac.engine.exchange_seconds())
                    continue
            if compiled is not None:   # a protocol's own loop, beside the calendar
                head = compiled.head
                if head is not None and (queue is None or head < queue[0]):
                    if head[0] >= until:
                        break
                    compiled.run(None if queue is None else queue[0], until, _READY)
                    continue
            if instant is not None:
                if queue is None or queue[0][0] != instant:
                    # the instant is over: the channel is granted (which may add events)
                    if self._channel:
                        self._grant(instant)
                    instant = None
                    continue
            elif queue is None or queue[0][0] >= until:
                break
            elif shared:
                instant = queue[0][0]
            if queue is now:
                t, rank, seq, msg, u = take_now()
            else:
                t, rank, seq, msg, u = take() if queue is sends else pop(cal)
                self._now_t = t
            if rank == _READY:
                if not v_start <= t < v_end:
                    view, v_start, v_end = network.view_span(t)
                    alive = view._alive_map
                if type(u) is tuple:   # a broadcast heard by several (_broadcast)
                    src = msg.src
                    if src not in u:
                        # the same receptions in the same order, handed over in one
                        # call: the fan-out grouped those up at the arrival only
                        receive_all(t, u, msg)
                    else:
                        for i, v in enumerate(u):
                            if alive[v]:
                                if v != src:
                                    receive(t, v, msg)
                                else:
                                    send_hop(t, seq + i, msg, v, msg.dst, view)
                elif type(msg.payload) is Control and msg.kind == ROUTING:
                    if alive[u]:   # a dead node neither hears nor sends
                        if u != msg.src:
                            receive(t, u, msg)
                        else:
                            send_hop(t, seq, msg, u, msg.dst, view)
                else:
                    forward(t, seq, msg, u, view)
            elif rank == _TIMER:
                self._timer(t, u, msg)
            else:
                self._end(msg)   # msg holds the transmission number here
        if self._staged:
            self._compiled.hand_over()

    def mac_failed(self, t: float, u: int, msg, v: int, reason: str) -> None:
        """``u``'s MAC failed to send ``msg`` to ``v`` at ``t`` (no link)."""
        self._timer(t, u, _MacFailure(msg, v, reason))

    def mac_fails(self, t: float, seq: int, u: int, msg, v: int, reason: str) -> None:
        """``u``'s MAC will learn at ``t`` that ``msg`` did not reach ``v``: its timer,
        numbered ``seq``."""
        heapq.heappush(self._calendar, (t, _TIMER, seq, _MacFailure(msg, v, reason), u))

    def next_time(self) -> float:
        """When the next event is due, the compiled loop's own included (inf if
        none)."""
        t = super().next_time()
        if self.mac is not None:
            t = min(t, self.mac.next_time())
        compiled = self._compiled
        return t if compiled is None or compiled.head is None else min(t, compiled.head[0])

    def _forward(self, t: float, seq: int, msg, u: int, view) -> None:
        """A data packet (or a notice) ``msg`` is at ``u`` at ``t`` (``view`` in force):
        delivered, dropped, or forwarded to the next hop the protocol chooses."""
        if u == msg.dst:   # sent to itself (others arrive at their last hop's start)
            self.arrivals.append((t, msg))
            return
        if not view._alive_map[u]:
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
            i, j = self._gpos[u], self._gpos[msg.dst]
            if not self.flow_started[i, j]:
                self.flow_started[i, j] = True
                self.first_waits[u, msg.dst] = t - msg.sent_at
        self._taken[msg.msg_id] = taken + 1
        if self._compiled is not None and msg.kind != ROUTING:   # its hops compiled
            self._compiled.file_data(t, seq, msg, u, v, taken + 1, _READY, False)
            return
        self._send_hop(t, seq, msg, u, v, view)

    def _send_hop(self, t: float, seq: int, msg, u: int, v: int, view) -> None:
        """Put ``msg`` on its way from ``u`` to the neighbour ``v`` (or everyone): on
        the link when it is free, or in the shared channel's queue."""
        if v == BROADCAST:
            hop = (msg, u, v, view.out_links(u), view)
            if self.medium == "shared":
                self._wait(t, seq, hop)
            else:   # when every link of u is free, unless it would wait too long
                self._broadcast(t, hop, self.max_wait)
            return
        k = view.link_indices().get((u, v), -1)
        if k < 0:   # out of range: the MAC gives up (its retries take no time here)
            self._timer(t, u, _MacFailure(msg, v, "link_break"))
            return
        hop = (msg, u, v, k, view)
        if self.medium == "shared":
            self._wait(t, seq, hop)
        else:   # when its link is free, unless it would wait too long
            self._transmit(t, hop, self.max_wait)

    def _transmit(self, ready: float, hop, max_wait: float = math.inf) -> float | None:
        """Send ``hop``, ready at ``ready`` (granted then on the shared medium; on the
        links medium when its links are free, refused if that is more than
        ``max_wait`` later: None); returns when it ends. A unicast hop's frame is
        compiled (:func:`emulator.routing.fanout.unicast`); what follows it
        (:meth:`_after_hop`) is the host's."""
        if hop[2] == BROADCAST:
            return self._broadcast(ready, hop, max_wait)
        msg, u, v, k, view = hop
        if len(self._pool) - self._drawn < 2:   # a frame takes two uniforms at most
            self._refill_pool()
        code, start, done, arrive, dropped, self._drawn = unicast(
            ready, max_wait, self.medium != "shared", self.reorder, self._gpos[u],
            self._gpos[v], k, msg.size_bytes, self._links_of(view)[1], self._link_times,
            self._pool, self._drawn)
        if code == EXPIRED:
            self._expire(ready, hop)
            return None
        if self._staged:   # the compiled loop's transmissions came first
            self._compiled.hand_over()
        self._log(start, hop)
        reached = dropped or self._alive_at(arrive, v)
        if self.energy is not None or self.ledger is not None:
            _, costs, _, _, _, _, _, lengths = view.hop_lists()
            if self.energy is not None:
                self.energy.hop(u, v, msg.size_bytes, lengths[k], reached)
            if self.ledger is not None:
                self.ledger.add(start, msg.msg_id, msg.kind, msg.src, msg.dst, u, v,
                                msg.size_units, msg.size_bytes, costs[k],
                                dropped or not reached)
        self.hops += 1
        self._after_hop(arrive, msg, u, v, dropped, reached)
        return done

    def _log(self, start: float, hop) -> None:
        """A routing message's transmission goes into the control log (counted from it
        when asked)."""
        msg = hop[0]
        if msg.kind != ROUTING:
            return
        payload = msg.payload
        if type(payload) is Control:
            kind = payload.type
            if self._packs:
                types = getattr(payload.body, "types", None)
                if types is not None:
                    self._packed[len(self.control_log)] = types
            if self.capture is not None:
                self.capture.control_sent(msg.msg_id, hop[1], payload)
        else:
            kind = "NOTICE"
        self.control_log.append(start, hop[1], kind, msg.size_bytes)

    def forget_views(self) -> None:
        super().forget_views()
        for cache in (self._zones, self._hop_zones, self._link_arrays,
                      self._alive_arrays):
            cache.clear()
        self._zones_of = None
        if self._compiled is not None:
            self._compiled.forget_views()

    def _broadcast(self, ready: float, hop, max_wait: float = math.inf) -> float | None:
        """One transmission from ``u``, ready at ``ready``, heard by each neighbour with
        its own link's delay, jitter and loss, serialized at the slowest of those links
        (on the links medium it starts when they are all free, and is refused if that
        is more than ``max_wait`` later: None): the wait and the walk over the receivers
        are one compiled call (:func:`emulator.routing.fanout.hear`). Receivers that
        hear it at the same time (the usual case) are one calendar entry, ``(arrive,
        _READY, number, msg, (v, w, ...))``, holding the numbers of as many:
        consecutive entries of one time and rank come out together, and what a
        reception adds comes after them, so the order is the same as one entry each,
        with a tenth of the heap's work (a flood is most of a run)."""
        msg, u, links, view = hop[0], hop[1], hop[3], hop[4]
        bandwidth, cost, length = self._fanout(hop)
        heard = self._heard
        head, attrs = self._links_of(view)
        if self._view is None:   # none in force yet (or forgotten): the ready time's
            self._alive_at(ready, u)
        resume = False
        while True:
            # an arrival outside the view in force asks for its epoch's (NEED_VIEW)
            need, taken, lost, dead, groups, count, arrive, start, done = hear(
                ready, max_wait, bandwidth, self._gpos[u], links.start, links.stop,
                msg.size_bytes, self._drawn, resume, self.medium != "shared",
                self.reorder, self._v_start, self._v_end, head, attrs, self._link_times,
                self._pool, self._alive_array(), self._gids, heard.ints, heard.floats)
            if need == DONE:
                break
            if need == EXPIRED:
                self._expire(ready, hop)
                return None
            resume = True
            if need == NEED_VIEW:   # an arrival in another epoch: who is up then
                self._alive_at(heard.ask_time(), u)
            else:
                self._drawn = heard.taken()
                self._refill_pool()
                heard.restart_pool()
        self._drawn = taken
        if self._staged:   # the compiled loop's transmissions came first
            self._compiled.hand_over()
        self._log(start, hop)
        if self.ledger is not None:
            self.ledger.add(start, msg.msg_id, msg.kind, u, BROADCAST, u, BROADCAST,
                            msg.size_units, msg.size_bytes, cost, False)
        self.hops += 1
        if lost:
            self.control_lost["link_loss"] += lost
        if dead:
            self.control_lost["dead_node"] += dead
        cal, push, seq = self._calendar, heapq.heappush, self._seq
        for arrive, nodes in ([(arrive, heard.heard_ids[:count].tolist())] if groups == 1
                              else heard.groups()):
            push(cal, (arrive, _READY, seq + 1, msg, nodes[0] if len(nodes) == 1
                       else tuple(nodes)))
            seq += len(nodes)
        self._seq = seq
        if self.energy is not None:   # the frame must reach the farthest receiver
            self.energy.broadcast(u, view.hop_lists()[0][links.start:links.stop],
                                  msg.size_bytes, length)
        return done

    # -- a broadcast's receivers --------------------------------------------------------
    def _fanout(self, hop) -> tuple:
        """What :meth:`_broadcast` reads of a broadcast hop's links (those of its sender
        in the view it was ready in) beside their arrays: ``(the least bandwidth, the
        greatest cost, the greatest length)`` (:meth:`NetView.out_extremes`)."""
        view = hop[4]
        bandwidths, costs, lengths = view.out_extremes()
        i = view._pos[hop[1]]
        return bandwidths[i], costs[i], lengths[i]

    def _links_of(self, view) -> tuple:
        """A view's directed links as the fan-out reads them, kept per epoch: ``(the
        receiver's global position, fanout.ATTRS)``, by link."""
        found = self._link_arrays.get(view.epoch_start)
        if found is None:
            head, attrs = view.hop_arrays()
            local = np.array([self._gpos[v] for v in view.nodes], dtype=np.int64)
            columns = dict(zip(LINK_DEFAULTS, attrs))
            found = (local[head], np.array([columns[name] for name in ATTRS], dtype=float))
            _keep_few(self._link_arrays)
            self._link_arrays[view.epoch_start] = found
        return found

    def _alive_array(self) -> np.ndarray:
        """Who is up in the view in force (:meth:`_alive_at`'s), by global position."""
        view = self._view
        found = self._alive_arrays.get(view.epoch_start)
        if found is None:
            alive = view._alive_map
            found = np.array([alive.get(v, False) for v in self._gids.tolist()], np.bool_)
            _keep_few(self._alive_arrays)
            self._alive_arrays[view.epoch_start] = found
        return found

    def _receivers(self, hop) -> tuple:
        """The receivers of a broadcast hop (its neighbours in the view it was ready
        in)."""
        heads = hop[4].hop_lists()[0]
        return tuple(heads[k] for k in hop[3])

    # -- the shared channel ---------------------------------------------------------
    def _wait(self, t: float, seq: int, hop) -> None:
        """Put the transmission ``hop`` (numbered ``seq``, ready at ``t``) in the shared
        channel's queue, with its zone and endpoints (:mod:`.channel`)."""
        if self.mac is not None:
            self.mac.add(t, hop, hop[1], hop[2], hop[0].size_bytes,
                         self.protocol.mac_broadcast_jitter_s if hop[2] == BROADCAST
                         else 0.0)
            return
        zone, ends = self._hop_sets(t, hop)
        self._channel.add(t, seq, hop, self._gpos[hop[1]], zone, ends)
        if len(self._channel) == SATURATED:
            log.warning("shared channel saturated: %d transmissions waiting at t=%.4g "
                        "(%s); [network] queue_max_wait bounds how long one may wait",
                        SATURATED, t, self.routing)

    def _grant(self, t: float) -> None:
        """Start every waiting transmission the channel's rule allows at ``t``, in ready
        order, and lose those that waited longer than :attr:`max_wait`
        (:func:`.channel.scan` judges them)."""
        rezoned = self.radius is not None   # zones follow the epoch of t
        if rezoned:
            epoch = self.network.epoch_index(t)
            if epoch != self._zones_of:
                self._channel.rezone(lambda item: self._hop_sets(t, item[2])[0])
                self._zones_of = epoch
        for (_, seq, hop), slot in self._channel.grant(t, self.max_wait, rezoned):
            if slot >= 0:
                done = self._transmit(t, hop)
                self._active[seq] = slot
                self._push(done, _END, seq)
            else:
                self._expire(t, hop)

    # -- the MAC (a [mac] model under the shared medium) -------------------------------
    def _mac_fates(self, fates) -> None:
        """What the MAC decided (:class:`emulator.mac.adapter.Fate` rows, in time order)
        becomes arrivals, receptions, link-layer feedback and drops."""
        for fate in fates:
            hop = fate.item
            msg, u, v = hop[0], hop[1], hop[2]
            reason = fate.reason
            if v == BROADCAST:
                if reason in _RECEIVER_FATES:
                    if not fate.repeated:
                        self._mac_sent(fate, hop, False)
                    if reason == "delivered":
                        self._push(fate.time, _READY, msg, fate.node)
                    else:
                        self.control_lost[reason] += 1
                else:
                    self.drop(fate.time, u, msg, reason)
            elif reason == "delivered":
                self._mac_sent(fate, hop, False)
                # the sender counts it acknowledged (an ACK lost too comes as a
                # retry_limit fate after it, and counts once more, unacknowledged)
                self._link_outcomes(fate, u, v, True)
                self._after_hop(fate.time, msg, u, v, False, True)
            elif fate.repeated:
                # delivered, only its ACKs were lost: the packet went on; a sender that
                # gave up at the retry limit still takes the link as broken (ns-3's
                # AODV does), one that found the channel busy on a retry learns nothing
                if reason == "retry_limit":
                    self.protocol.on_link_outcome(fate.time, u, v, fate.attempts, False)
                    self.protocol.on_link_failure(fate.time, u, v)
            else:
                if reason == "retry_limit" or (fate.frames is not None and fate.attempts):
                    self._mac_sent(fate, hop, True)   # on air (a fragment at least)
                    self._link_outcomes(fate, u, v, False)
                if reason == "reassembly_full":   # the receiver had no room for it
                    self.drop(fate.time, v, msg, reason)
                else:
                    self._timer(fate.time, u, _MacFailure(msg, v, reason))

    def _link_outcomes(self, fate, u: int, v: int, acked: bool) -> None:
        """Tell the protocol each frame's outcome on the link ``u`` -> ``v``: the hop's
        one, or each 6LoWPAN fragment's that went on air (Contiki-NG's link-stats count
        every frame the MAC sent)."""
        for _, attempts, received in fate.frames or ((None, fate.attempts, acked),):
            if attempts:   # (a fragment never sent tells nothing; a hop is always sent)
                self.protocol.on_link_outcome(fate.time, u, v, attempts, received)

    @property
    def energy(self):
        """The batteries (:class:`emulator.energy.EnergyBook`), if any. Under
        ``radio_states`` with a duty-cycled MAC the book takes each radio's time from
        the MAC (:meth:`~emulator.energy.EnergyBook.mac_radio`), not per hop."""
        return self._energy

    @energy.setter
    def energy(self, book) -> None:
        self._energy = book
        mac = getattr(self, "mac", None)
        duty = None if mac is None else mac.config.duty
        self._duty_book = book is not None and book.radio is not None and duty is not None
        if self._duty_book:
            book.duty_cycled(duty.idle_on_fraction())

    def _mac_sent(self, fate, hop, lost: bool) -> None:
        """A frame the MAC put on air: the control log, the ledger (at its last
        attempt's start, lost if no attempt got through) and the energy of every
        attempt."""
        msg, u, v, view = hop[0], hop[1], hop[2], hop[4]
        start = fate.time if lost else fate.start
        if self._staged:
            self._compiled.hand_over()
        self._log(start, hop)
        self.hops += 1
        if v == BROADCAST:
            _, cost, length = self._fanout(hop)
            if self.ledger is not None:
                # the column is there: one frame, or a 6LoWPAN packet's fragments
                self.ledger.note_attempts(len(self.ledger),
                                          1 if fate.frames is None else len(fate.frames))
                self.ledger.add(start, msg.msg_id, msg.kind, u, BROADCAST, u, BROADCAST,
                                msg.size_units, msg.size_bytes, cost, False)
            if self.energy is not None and not self._duty_book:
                on_air = msg.size_bytes if fate.frames is None else \
                    sum(nbytes for nbytes, _, _ in fate.frames)   # a 6LoWPAN packet's
                self.energy.broadcast(u, self._receivers(hop), on_air, length)
            return
        k = hop[3]
        _, costs, _, _, _, _, _, lengths = view.hop_lists()
        if self.ledger is not None:
            self.ledger.note_attempts(len(self.ledger), fate.attempts)
            self.ledger.add(start, msg.msg_id, msg.kind, msg.src, msg.dst, u, v,
                            msg.size_units, msg.size_bytes, costs[k], lost)
        if self.energy is not None and not self._duty_book:
            frames = fate.frames or ((msg.size_bytes, fate.attempts, not lost),)
            for nbytes, attempts, received in frames:   # a 6LoWPAN packet's fragments
                for attempt in range(1, max(attempts, 1) + 1):
                    self.energy.hop(u, v, nbytes, lengths[k],
                                    received and attempt == attempts)

    def _end(self, seq: int) -> None:
        """The transmission numbered ``seq`` leaves the channel: its endpoints are free,
        and the next grant judges every waiting transmission again."""
        self._channel.end(self._active.pop(seq))

    def _hop_sets(self, t: float, hop) -> tuple:
        """``(zone, endpoints)`` of a hop as bit sets of node positions (:mod:`.channel`'s
        rows): its endpoints (its sender and receiver; a broadcast's receivers are its
        neighbours in the view it was ready in) and the union of their zones. Kept per
        epoch and hop (its sender, and its receiver if it has one; with a radius, per
        epoch of the view and of ``t``): a flood on the shared medium has every node
        broadcast in the same epoch, and a unicast route the same hops. Made as Python
        ints (an OR of two zones: 60 ns, of two arrays: 0.6 µs), then read as words."""
        u, v, view = hop[1], hop[2], hop[4]
        zone_epoch = self._zone_epoch(t, view)
        kept = _per_epoch(self._hop_zones, (view.epoch_start, zone_epoch))
        key = u if v == BROADCAST else (u, v)
        found = kept.get(key)
        if found is None:
            ends = (u, v) if v != BROADCAST else (u, *self._receivers(hop))
            gpos, zone, members = self._gpos, 0, 0
            for w in ends:
                zone |= self._zone(t, view, w, zone_epoch)
                members |= 1 << gpos[w]
            found = kept[key] = (self._words(zone), self._words(members))
        return found

    def _words(self, mask: int) -> np.ndarray:
        """The bit set ``mask`` (an int, bit ``p`` for position ``p``) as the channel's
        row of uint64 words."""
        return np.frombuffer(mask.to_bytes(self._row_bytes, "little"), np.uint64)

    def _zone(self, t: float, view, u: int, zone_epoch) -> int:
        """``u`` and the nodes it interferes with at ``t`` as a bit mask of positions:
        its neighbours in ``view``, or with a radius every node within it at ``t``'s
        positions. Kept per ``zone_epoch`` (:meth:`_zone_epoch`): by epoch, not by view,
        as holding views would hold their trees (4 GiB on bench_scale's shared medium)."""
        zones = _per_epoch(self._zones, zone_epoch)
        zone = zones.get(u)
        if zone is None:
            if self.radius is None:
                members = (u, *view.neighbors(u))
            else:
                pos = self.positions(t)
                x, y = pos[u]
                members = [w for w, (a, b) in pos.items()
                           if math.hypot(a - x, b - y) <= self.radius]
            gpos, zone = self._gpos, 0
            for w in members:
                zone |= 1 << gpos[w]
            zones[u] = zone
        return zone

    def _zone_epoch(self, t: float, view):
        """What zones are kept by: the view's epoch (zones by links), or the epoch of
        ``t`` (by radius: the positions then)."""
        return view.epoch_start if self.radius is None else self.network.epoch_index(t)

    def _after_hop(self, arrive: float, msg, u: int, v: int, dropped: bool,
                   reached: bool) -> None:
        """What follows a unicast hop ``u -> v`` that arrives (or would have) at
        ``arrive``: a failure the sender's MAC learns of, a notice or a delivery
        arrived, or the next hop ready at ``v``."""
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

    def _expire(self, t: float, hop) -> None:
        """A hop that waited too long for its channel (:attr:`max_wait`): dropped at its
        sender, as a frame the MAC let expire (no link-layer feedback: the link is not
        broken)."""
        self.drop(t, hop[1], hop[0], "queue_expired")

    def _timer(self, t: float, node: int, tag) -> None:
        if type(tag) is not _MacFailure:
            if self.horizon is not None or self._unresolved > 0:
                # deliver's rule: once every message is delivered or dropped, the
                # protocol's clock stops (its neighbours would time out one another)
                self.protocol.on_timer(t, node, tag)
            return
        if tag.reason in ("link_break", "retry_limit"):
            self.protocol.on_link_failure(t, node, tag.neighbour)
        self.drop(t, node, tag.msg, tag.reason)

    # -- what the run reports ---------------------------------------------------------
    @property
    def control_sent(self) -> Counter:
        """Control packets transmitted, by type (a packet of several messages by its
        first one's, as ns-3's trace names it; a notice's hops as ``"NOTICE"``)."""
        return self.control_log.count_by_type()

    @property
    def control_bytes(self) -> Counter:
        """Their bytes, by type."""
        return self.control_log.bytes_by_type()

    @property
    def control_messages(self) -> Counter:
        """Messages in them, by type: a packet whose body has ``types`` (OLSR's, which
        may carry several) counts each of them, any other one message."""
        if not self._packed:
            return self.control_sent
        packed, carried = self._packed, Counter()
        for row, kind in enumerate(self.control_log.types()):
            types = packed.get(row)
            if types is None:
                carried[kind] += 1
            else:
                carried.update(types)
        return carried

    def stats(self) -> dict:
        """The protocol's figures for ``meta.json`` and the summary."""
        waits = list(self.first_waits.values())
        return {"routing": self.routing,
                "control_sent": dict(self.control_sent),
                "control_bytes": dict(self.control_bytes),
                "control_messages": dict(self.control_messages),
                "control_lost": dict(self.control_lost),
                "drops_by_reason": dict(self.lost),
                "route_discovery_latency_mean": (sum(waits) / len(waits) if waits
                                                 else math.nan),
                **self._delivery(),
                **self.protocol.counters(),
                **({} if self.mac is None else {"mac": self.mac.counters()})}


    def series(self, interval: float) -> list[tuple]:
        """Beside the drops: control packets and bytes each node sent per ``interval``
        (``routing_control_messages``, ``routing_control_bytes``); with a MAC, each
        node's totals at the MAC's clock (:meth:`MacChannel.metric_rows`)."""
        control = [(t, node, metric, amount) for t, node, _, size in self.control_log
                   for metric, amount in (("routing_control_messages", 1),
                                          ("routing_control_bytes", size))]
        rows = super().series(interval) + _binned(control, interval)
        return rows if self.mac is None else rows + self.mac.metric_rows()


def open_transport(network, ledger, seed: int, medium: str = "links",
                   interference_radius: float | None = None, positions=None, *,
                   reorder: bool = False, max_wait: float | None = None,
                   routing: str = "oracle", routing_params: dict | None = None,
                   horizon: float | None = None, bytes_per_unit: int = 32, mac=None,
                   radio=None, seconds_per_unit: float = 1.0, capture=None) -> Transport:
    """The transport for ``routing``: the oracle's own, or one that hosts a protocol
    (``capture``: :attr:`RoutedTransport.capture`). With a MAC (``mac``, a
    :class:`emulator.mac.config.MacConfig` other than ideal) every routing, the oracle too
    (:class:`.oracle.OracleRoutes`), runs in the routed host, whose shared medium hands
    its frames to the MAC (:mod:`emulator.mac.adapter`)."""
    with_mac = mac is not None and not mac.ideal
    if routing == "oracle" and not with_mac:
        return Transport(network, ledger, seed, medium, interference_radius, positions,
                         reorder=reorder, max_wait=max_wait)
    if routing == "oracle":
        routing_params = {"ip_ttl": 64}
    return RoutedTransport(network, ledger, seed, medium, interference_radius, positions,
                           reorder=reorder, max_wait=max_wait, routing=routing,
                           routing_params=routing_params, horizon=horizon,
                           bytes_per_unit=bytes_per_unit, mac=mac, radio=radio,
                           seconds_per_unit=seconds_per_unit, capture=capture)

