"""Causal hop-by-hop transport over the time-varying network, on links or a shared medium.

An event calendar in time order: a hop joins its channel at the moment it reaches it and
is served in that order (ties: the order the hops became ready). At each node the next hop
is looked up in the routing of the epoch in force *at that moment*, so a route change
mid-flight re-routes the message — one of the ways traffic drifts out of order. Per hop:

1. wait for the channel: the directed link (``medium="links"``, FIFO in arrival order) or
   the shared radio channel (``medium="shared"``, the two-hop conflict rule; see
   :mod:`emulator.deliver` for the model and what it leaves out against 802.11 DCF),
2. serialize ``size_bytes / bandwidth``,
3. propagate ``delay + U(0, jitter)``,
4. draw a loss with the link's probability.

A hop from or towards a dead node, a missing route or a loss draw ends the message; it is
counted in :attr:`Transport.lost` (and listed in :attr:`Transport.losses`), never silently
dropped. A delivery is known when its last hop starts, so a backend that advances the
calendar to the start of its step ``t0`` knows every delivery before ``t0 + smallest
delay`` — with steps no longer than the smallest link delay, exactly those of the step,
while no decision about a time >= ``t0`` is taken before the step's own messages are in.

The oracle's calendar and hop loop, on both media, are compiled
(:mod:`emulator.links`, :mod:`emulator.hop_kernel`); the Python calendar and channel
methods here serve the routing protocols' host
(:class:`emulator.routing.host.RoutedTransport`).

Example
-------
>>> import networkx as nx
>>> from emulator.network import Network
>>> from contract.messages import Message
>>> g = nx.Graph()
>>> nx.add_path(g, [0, 1, 2], cost=2.0, delay=0.1, bandwidth=100.0)
>>> class OneEpoch:
...     epochs = [0.0]
...     def snapshot(self, t): return g
>>> led = Ledger()
>>> tr = Transport(Network(OneEpoch()), led, seed=1)
>>> tr.send(Message(0, "data", 0, 2, 1.0, 1.0, 50, None))   # 2 x (0.5 + 0.1)
>>> tr.advance()
>>> [round(t, 6) for t, _ in tr.take_arrivals()], float(led.frame()["cost"].sum())
([2.2], 4.0)
"""
from __future__ import annotations

import heapq
import math
from collections import Counter, deque

import numpy as np

from emulator import hop_kernel
from emulator.ledger import Ledger
from emulator.links import CompiledLinks, refilled
from emulator.routing.base import BROADCAST

#: The channel models.
MEDIA = ("links", "shared")

# At equal times a channel is freed before new hops queue for it, and a routing
# protocol's timers fire after the instant's hops are ready.
_END, _READY, _TIMER = 0, 1, 2

# A calendar entry is one flat tuple ``(time, rank, number, a, b)``: ``(msg, node)`` for a
# hop that becomes ready, ``(transmission number, None)`` for the end of one, ``(tag,
# node)`` for a routing timer. The unique number settles every comparison before ``a``;
# a nested payload tuple would cost one more allocation per hop.


class Transport:
    """An event calendar of hops over a time-varying network (see the module docstring).

    ``network`` is an :class:`emulator.network.Network`; ``ledger`` gets one row per hop
    (None: no rows, as :func:`emulator.deliver` wants); ``positions(t)`` (optional) gives
    ``{node: (x, y)}`` at time ``t`` for an interference radius, the same throughout an
    epoch (zones are kept per epoch).

    ``reorder=False`` (the default) keeps every link's order: a message never arrives
    before one sent earlier on the same directed link (a radio sends its frames in
    order; jitter then delays the later one).

    ``max_wait`` (None: no limit) bounds a hop's wait for its channel: on a link, a
    hop that would start more than ``max_wait`` after it is ready is lost as it comes
    (``"queue_expired"``; the link's queue is first in first out, so the wait is known
    then); on the shared medium, a hop the grant would start after waiting longer is
    lost then instead, taking no airtime (a Wi-Fi MAC's queue drops a frame whose
    lifetime is over when it gets the channel: ns-3's ``WifiMacQueue`` ``MaxDelay``).

    Next hops come from the epoch's least-cost trees: the oracle. The calendar and the
    hop loop are compiled (:class:`emulator.links.CompiledLinks`). A routing protocol
    runs in
    :class:`emulator.routing.host.RoutedTransport`, which overrides the hop loop
    (:meth:`advance`) and what follows a hop (:meth:`_after_hop`).
    """

    #: Whether the calendar runs compiled: a routing protocol's host keeps its calendar
    #: here (its control packets and timers are Python objects).
    compiled_links = True

    def __init__(self, network, ledger: Ledger | None, seed: int, medium: str = "links",
                 interference_radius: float | None = None, positions=None, *,
                 reorder: bool = False, max_wait: float | None = None):
        check_medium(medium, interference_radius)
        self.network = network
        self.max_wait = math.inf if max_wait is None else float(max_wait)
        self.ledger = ledger
        self.medium = medium
        self.radius = interference_radius
        self.positions = positions
        self.reorder = reorder
        # reorder=False: the last arrival on each directed link (u, v)
        self._link_last: dict[tuple[int, int], float] = {}
        self.rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, 1013])))
        # the uniforms drawn ahead for jitter and loss, in the stream's order, as an
        # array (what compiled code reads) and a list (what Python reads), and how many
        # are used: one stream whoever draws
        self._pool, self._pool_list, self._drawn = np.empty(0), [], 0
        self._calendar: list = []
        self._sends: deque = deque()   # sends in time order, beside the calendar
        # the view in force over [_v_start, _v_end) as _alive_at last found it
        self._v_start, self._v_end, self._view = math.inf, -math.inf, None
        self._seq = 0
        self._waiting: list = []      # shared medium: (ready time, seq, hop) in ready order
        self._active: dict[int, int] = {}   # shared medium: seq -> its endpoints' mask
        # The grant's node sets are bit masks (a bit per node, _bits), which an AND
        # tests at a fraction of a set's cost: the nodes in a transmission in progress,
        # and how many of _waiting are known to wait while no transmission ends with the
        # nodes their zones cover (see _grant)
        self._bits: dict[int, int] = {}
        self._zone_masks: dict = {}   # epoch -> {node: its zone's mask} (_zone_mask)
        self._busy_mask = 0
        self._still_waiting, self._covered = 0, 0
        # shared medium: how many waiting transmissions each node sends, and the mask of
        # those that send any (_grant's early end; kept by the host that fills _waiting)
        self._waiting_from: dict[int, int] = {}
        self._senders_mask = 0
        # shared medium, zones by links: a waiting transmission's zone and endpoints as
        # masks, and its endpoints, fixed while it waits (its view's): from its first scan
        self._wait_zones: dict = {}
        self._zones: dict = {}                # shared medium: epoch -> {node: zone}
        #: Messages lost, by reason: "dead_node", "no_route", "link_loss".
        self.lost: Counter = Counter()
        self.hops = 0
        #: ``(arrival time, message)`` of the deliveries decided so far.
        self.arrivals: list[tuple[float, object]] = []
        #: ``(time, message, reason, node)`` of the losses the senders learn of, when
        #: they learn: with the oracle at the loss, otherwise when a :class:`Notice`
        #: reaches the source (or at once, when the source itself dropped it).
        self.losses: list[tuple[float, object, str, int]] = []
        self._losses_taken = 0
        #: Every data message dropped, ``(time, message, reason, node)``, when and where.
        self.drops = self.losses
        #: Data messages sent across the network (not to their own node), delivered.
        self.sent, self.delivered = 0, 0
        self._unresolved = 0   # sent across the network, neither delivered nor dropped
        self._delay_sum = 0.0  # of the messages delivered: arrival - sent_at
        #: The batteries (:class:`emulator.energy.EnergyBook`) charged per hop, if any.
        self.energy = None
        # the fates of the messages sent as arrays: blocks of (ids, arrival times) and
        # of (ids, loss reason codes)
        self._frames_arrived: list = []
        self._frames_lost: list = []
        # the links medium's calendar and hop loop, compiled (None: the calendar here)
        self._links = CompiledLinks(network, self.rng, reorder, ledger, medium,
                                    interference_radius, positions, self.max_wait) \
            if self.compiled_links else None

    # -- the calendar -------------------------------------------------------------------
    def send(self, msg) -> None:
        """Inject ``msg`` (an :class:`contract.messages.Message`) at ``msg.sent_at``."""
        if msg.src != msg.dst:
            self.sent += 1
            self._unresolved += 1
        if self._links is not None:
            return self._links.send(msg)
        self._seq += 1
        entry = (msg.sent_at, _READY, self._seq, msg, msg.src)
        sends = self._sends
        if not sends or sends[-1][0] <= entry[0]:
            # Sends come mostly in time order: kept in a queue beside the calendar, they
            # leave the heap small (a pop and a push cost 0.7 us on a heap of 5,000
            # entries, 5 us on one of a million). Merged by the same (time, rank, number)
            # key, so the order is the one a single heap gives.
            sends.append(entry)
        else:
            heapq.heappush(self._calendar, entry)

    def send_many(self, msg_id: np.ndarray, src: np.ndarray, dst: np.ndarray,
                  sent_at: np.ndarray, size_bytes: np.ndarray) -> None:
        """Inject data messages of one unit given as arrays, in order of ``sent_at``:
        as :meth:`send` for each in turn, without a message object on the compiled
        calendar. Their fates: :meth:`outcomes`.

        >>> import networkx as nx
        >>> from emulator.network import Network
        >>> from topologies.dynamics import StaticDynamics
        >>> from topologies.model import Topology
        >>> g = nx.path_graph(3); nx.set_edge_attributes(g, 0.5, "delay")
        >>> tr = Transport(Network(StaticDynamics(Topology(g))), None, seed=1)
        >>> tr.send_many(np.array([4, 9]), np.array([0, 2]), np.array([2, 2]),
        ...              np.array([0.0, 1.0]), np.array([10, 10]))
        >>> tr.advance()
        >>> [a.tolist() for a in tr.outcomes()]
        [[4, 9], [1.0, 1.0], [], []]
        """
        if self._links is None:   # a protocol's calendar holds message objects
            from contract.messages import Message

            for row in zip(msg_id.tolist(), src.tolist(), dst.tolist(), sent_at.tolist(),
                           size_bytes.tolist()):
                self.send(Message(row[0], "data", row[1], row[2], row[3], 1.0, row[4], None))
            return
        crossing = int(np.count_nonzero(src != dst))
        self.sent += crossing
        self._unresolved += crossing
        self._links.send_many(msg_id, src, dst, sent_at, size_bytes)

    def outcomes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The data messages delivered and lost so far, as arrays: ``(ids delivered,
        their arrival times, ids lost, their reasons)``; those sent by :meth:`send`
        (not yet taken by :meth:`take_arrivals`) and by :meth:`send_many` alike."""
        arrived = [(np.array([m.msg_id for _, m in self.arrivals], np.int64),
                    np.array([t for t, _ in self.arrivals], float))] + self._frames_arrived
        lost = [(np.array([m.msg_id for _, m, _, _ in self.drops], np.int64),
                 np.array([reason for _, _, reason, _ in self.drops], object))]
        lost += [(ids, np.array(hop_kernel.REASONS, object)[codes])
                 for ids, codes in self._frames_lost]
        return (np.concatenate([ids for ids, _ in arrived]),
                np.concatenate([times for _, times in arrived]),
                np.concatenate([ids for ids, _ in lost]),
                np.concatenate([reasons for _, reasons in lost]))

    def _push(self, t: float, rank: int, a, b=None) -> None:
        self._seq += 1
        heapq.heappush(self._calendar, (t, rank, self._seq, a, b))

    def _pop(self):
        """The next calendar entry in (time, rank, number) order, from either queue."""
        sends, cal = self._sends, self._calendar
        if sends and (not cal or sends[0] < cal[0]):
            return sends.popleft()
        return heapq.heappop(cal)

    def next_time(self) -> float:
        """When the next hop event is due (inf if none)."""
        if self._links is not None:
            return self._links.next_time()
        return min(self._calendar[0][0] if self._calendar else math.inf,
                   self._sends[0][0] if self._sends else math.inf)

    def advance(self, until: float = math.inf) -> None:
        """Process every hop event before ``until``, in time order: the compiled loop
        (:mod:`emulator.links`), then what it decided filed here in the order it was
        decided."""
        links = self._links
        links.energy = self.energy is not None
        decided = links.advance(until)
        self.arrivals.extend(decided.arrivals)
        for loss in decided.losses:
            self._lose(*loss)
        for times, ids, sent_at, crossed in decided.frame_arrivals:
            self.delivered += int(crossed.sum())
            self._unresolved -= int(crossed.sum())
            self._delay_sum += float((times - sent_at)[crossed].sum())
            self._frames_arrived.append((ids, times))
        for _, ids, codes, _ in decided.frame_losses:
            self._unresolved -= len(ids)
            for code, count in zip(*np.unique(codes, return_counts=True)):
                self.lost[hop_kernel.REASONS[code]] += int(count)
            self._frames_lost.append((ids, codes))
        if decided.energy:
            hop = self.energy.hop
            for u, v, size, length, heard in decided.energy:
                hop(u, v, size, length, heard)
        self.hops += decided.hops

    def forget_views(self) -> None:
        """Drop what was kept per epoch: nodes died (:meth:`Network.kill`), so the
        network's epochs are split and its views rebuilt."""
        self._v_start, self._v_end, self._view = math.inf, -math.inf, None
        self._zones.clear()
        self._zone_masks.clear()
        if self._links is not None:
            self._links.forget_epoch()

    def _refill_pool(self) -> None:
        """A new block of uniforms after those not used yet (:func:`links.refilled`)."""
        self._pool = refilled(self._pool, self._drawn, self.rng)
        self._pool_list = self._pool.tolist()
        self._drawn = 0

    def _uniform(self) -> float:
        if self._drawn == len(self._pool_list):
            self._refill_pool()
        self._drawn += 1
        return self._pool_list[self._drawn - 1]

    def _alive_at(self, t: float, v: int) -> bool:
        """Whether ``v`` is up at ``t`` (the view in force kept while ``t`` stays in its
        epoch: a hop's arrival asks, and most arrivals fall in the epoch of the last)."""
        if not self._v_start <= t < self._v_end:
            self._view, self._v_start, self._v_end = self.network.view_span(t)
        return self._view._alive_map[v]

    # -- one hop ------------------------------------------------------------------------
    def _transmit(self, start: float, hop) -> float:
        """Start ``hop`` on its channel at ``start`` (the shared channel granted it, or
        its link is free); returns when it ends."""
        msg, u, v, k, view = hop
        _, costs, delays, jitters, bandwidths, losses, bers, lengths = view.hop_lists()
        cost, delay, jitter = costs[k], delays[k], jitters[k]
        bandwidth, loss = bandwidths[k], losses[k]
        if bers[k] > 0:   # every bit must arrive (topologies.radio); 0: unit disk
            loss = 1.0 - (1.0 - loss) * (1.0 - bers[k]) ** (8 * msg.size_bytes)
        done = start + (msg.size_bytes / bandwidth if bandwidth > 0 else 0.0)
        arrive = self._in_order(u, v, done + delay + (self._uniform() * jitter
                                                      if jitter > 0 else 0.0))
        dropped = loss > 0 and self._uniform() < loss
        reached = dropped or self._alive_at(arrive, v)
        if self.energy is not None:
            self.energy.hop(u, v, msg.size_bytes, lengths[k], reached)
        if self.ledger is not None:
            self.ledger.add(start, msg.msg_id, msg.kind, msg.src, msg.dst, u, v,
                            msg.size_units, msg.size_bytes, cost, dropped or not reached)
        self.hops += 1
        self._after_hop(arrive, msg, u, v, dropped, reached)
        return done

    def _after_hop(self, arrive: float, msg, u: int, v: int, dropped: bool,
                   reached: bool) -> None:
        """What follows a transmission ``u -> v`` that ends at ``arrive``: the oracle's
        rules (the compiled loop's, :func:`emulator.hop_kernel._transmit`, are the same)."""
        if dropped:
            self._lose(arrive, msg, "link_loss", u)
        elif not reached:
            self._lose(arrive, msg, "dead_node", v)
        elif v == msg.dst:
            # Known as soon as the last hop starts: a backend may hand it on before the
            # calendar reaches the arrival time.
            self.arrivals.append((arrive, msg))
        else:
            self._push(arrive, _READY, msg, v)

    def _in_order(self, u: int, v: int, arrive: float) -> float:
        """``arrive``, or later: not before the last frame sent on ``u -> v`` (unless
        the transport reorders)."""
        if self.reorder:
            return arrive
        last = self._link_last.get((u, v), arrive)
        arrive = last if arrive < last else arrive
        self._link_last[(u, v)] = arrive
        return arrive

    def take_losses(self) -> list:
        """The losses decided since the last call, ``(time, message, reason, node)``."""
        taken = self.losses[self._losses_taken:]
        self._losses_taken = len(self.losses)
        return taken

    def take_arrivals(self) -> list:
        """The deliveries decided since the last call, ``(arrival time, message)``."""
        arrivals, self.arrivals = self.arrivals, []
        self._count_arrivals(arrivals)
        return arrivals

    def _count_arrivals(self, arrivals) -> tuple[int, float]:
        """Count ``arrivals`` that crossed the network into :attr:`delivered` and their
        delays into the mean's sum; returns the totals so far."""
        for t, msg in arrivals:
            if msg.src != msg.dst:
                self.delivered += 1
                self._delay_sum += t - msg.sent_at
        return self.delivered, self._delay_sum

    def stats(self) -> dict:
        """The network's figures for ``meta.json`` and the summary (the oracle sends no
        control packets and routes at once)."""
        return {"routing": "oracle", "control_sent": {}, "control_bytes": {},
                "control_lost": {}, "drops_by_reason": dict(self.lost),
                "route_discovery_latency_mean": 0.0, **self._delivery()}

    def _delivery(self) -> dict:
        """Data messages sent across the network, delivered, and their mean delay (the
        deliveries not yet taken included)."""
        delivered, delay_sum = self.delivered, self._delay_sum
        pending = [(t, m) for t, m in self.arrivals if m.src != m.dst]
        delivered += len(pending)
        delay_sum += sum(t - m.sent_at for t, m in pending)
        return {"sent": self.sent, "delivered": delivered,
                "message_delay_mean": delay_sum / delivered if delivered else math.nan}

    def series(self, interval: float) -> list[tuple]:
        """Metric rows ``(time, node, "network", metric, value)`` per ``interval``: data
        messages each node dropped, by reason (``drops_<reason>``)."""
        return _binned(((t, node, f"drops_{reason}", 1)
                        for t, _, reason, node in self.drops), interval)

    def _lose(self, t: float, msg, reason: str, at_node: int) -> None:
        """The oracle's loss: counted, and its sender told at once."""
        self.lost[reason] += 1
        self.losses.append((t, msg, reason, at_node))

    # -- the shared medium --------------------------------------------------------------
    def _grant(self, t: float) -> None:
        """Start every waiting transmission the conflict rule allows at ``t``.

        In ready order, a transmission u→v starts unless a transmission in progress has
        an endpoint in the zone of u or v, or u or v lies in the zone of an earlier one
        still waiting. Both are kept as bit masks of nodes, so a check is two ANDs, not a
        walk over the transmissions in progress and waiting; once the waiting ones cover
        every node, none after them can start and the scan stops.
        """
        waiting = self._waiting
        if not waiting:
            return
        busy = self._busy_mask      # endpoints of the transmissions in progress
        # Zones by links are fixed per transmission, so while no transmission has ended
        # the ones left waiting by the last scan still wait: start after them, with the
        # zones they cover (radius zones follow the epoch of t: always a full scan).
        known = self._still_waiting if self.radius is None else 0
        if len(waiting) == 1 and not known:
            # the usual case below saturation, without the scan's set and list: no
            # earlier waiting transmission, so only those in progress can hold it back
            item = waiting[0]
            zones = self._waiting_zones(t, item)[0]
            if not busy & zones:
                self._waiting = []
                self._start_waiting(t, item)   # or lose it, if it waited too long
            else:
                self._still_waiting, self._covered = 1, zones
            return
        covered = self._covered if known else 0   # zones of earlier waiting ones
        everyone = len(waiting[0][2][4].nodes)
        kept = self._wait_zones
        # A full scan of a saturated channel (a flood on it) ends once every node that
        # sends one of the transmissions not yet scanned is covered: a sender is an
        # endpoint of its own, so none of them can start. ``left``: how many each node
        # sends among those, ``senders``: the nodes that send any. After every end
        # every waiting transmission was scanned again, and their list grew with the
        # flood: the shared medium's AODV went quadratic (NOTES.md). For the same
        # reason the list is not copied: the few that start are deleted from it.
        left = None if known or len(waiting) < 32 else dict(self._waiting_from)
        senders, bit, ended, started = self._senders_mask, self._bits, False, []
        for i in range(known, len(waiting)):
            item = waiting[i]
            found = kept.get(item[1])
            zones, ends = found if found is not None else self._waiting_zones(t, item)
            if left is not None:
                u = item[2][1]
                n = left[u] = left[u] - 1
                if not n:
                    senders &= ~bit[u]
            # an endpoint in an earlier waiting one's zone, or one in progress in its own
            if covered & ends or busy & zones:
                covered |= zones
                if covered.bit_count() == everyone:
                    break   # every node covered: none after this one can start
                if left is not None and not senders & ~covered:
                    # none after this one can start either; their zones are not in
                    # ``covered``, so the next scan is a full one
                    ended = True
                    break
                continue
            started.append(i)
            self._start_waiting(t, item)
            busy = self._busy_mask
        for i in reversed(started):
            del waiting[i]
        self._still_waiting, self._covered = (0, 0) if ended else (len(waiting), covered)

    def _wait(self, t: float, seq: int, hop) -> None:
        """Put the transmission ``hop`` (numbered ``seq``, ready at ``t``) in the shared
        channel's queue."""
        self._waiting.append((t, seq, hop))
        u = hop[1]
        n = self._waiting_from.get(u, 0)
        self._waiting_from[u] = n + 1
        if not n:
            self._senders_mask |= self._bit(u)

    def _start_waiting(self, t: float, item) -> None:
        """:meth:`_start` a transmission taken out of the queue, or lose it if it waited
        longer than :attr:`max_wait` (:meth:`_expire`)."""
        u = item[2][1]
        if _count_down(self._waiting_from, u):
            self._senders_mask &= ~self._bits[u]
        if t - item[0] > self.max_wait:
            self._wait_zones.pop(item[1], None)
            self._expire(t, item[2])
        else:
            self._start(t, item[1], item[2])

    def _expire(self, t: float, hop) -> None:
        """The hop ``hop`` waited too long for its channel: its message is lost at its
        sender (a routing protocol's host drops it there, :meth:`RoutedTransport.drop`)."""
        self._lose(t, hop[0], "queue_expired", hop[1])

    def _waiting_zones(self, t: float, item) -> tuple:
        """``(zone mask, endpoints mask)`` of a waiting transmission: the nodes its
        sender and receivers interfere with, and its sender and receivers (a
        broadcast's are its neighbours). Kept while it waits when zones follow links
        (they are its view's); under an interference radius they follow the epoch of
        ``t``."""
        found = self._wait_zones.get(item[1])
        if found is not None:
            return found
        hop = item[2]
        u, v, view = hop[1], hop[2], hop[4]
        zone_mask = self._zone_mask
        if v != BROADCAST:
            zone = zone_mask(t, view, u) | zone_mask(t, view, v)
            ends = (u, v)
        else:   # the zones of its receivers too (a mask of a union is the masks' OR)
            zone = 0
            ends = (u, *self._receivers(hop))
            for w in ends:
                zone |= zone_mask(t, view, w)
        found = (zone, self._mask(ends))
        if self.radius is None:
            self._wait_zones[item[1]] = found
        return found

    def _mask(self, nodes) -> int:
        """The bit mask of ``nodes`` (a bit per node, given the first time it is seen).

        >>> tr = Transport.__new__(Transport); tr._bits = {}
        >>> tr._mask([7, 3]), tr._mask([3]), tr._mask([9, 7])
        (3, 2, 5)
        """
        mask = 0
        for node in nodes:
            mask |= self._bit(node)
        return mask

    def _zone_mask(self, t: float, view, u: int) -> int:
        """The bit mask of :meth:`_zone` ``(t, view, u)``, kept as the zone is: made
        once, not per transmission that waits in it."""
        masks = _per_epoch(self._zone_masks, self._zone_epoch(t, view))
        mask = masks.get(u)
        if mask is None:
            mask = masks[u] = self._mask(self._zone(t, view, u))
        return mask

    def _bit(self, node) -> int:
        """``node``'s bit (a new one the first time it is seen)."""
        bit = self._bits.get(node)
        if bit is None:
            bit = self._bits[node] = 1 << len(self._bits)
        return bit

    def _start(self, t: float, seq: int, hop) -> None:
        """Put the waiting transmission numbered ``seq`` on the channel at ``t``."""
        u, v = hop[1], hop[2]
        done = self._transmit(t, hop)
        # u != v: a hop crosses a link; a broadcast's receivers are its neighbours
        kept = self._wait_zones.pop(seq, None)
        ends = kept[1] if kept is not None else \
            self._mask((u, v) if v != BROADCAST else (u, *self._receivers(hop)))
        self._active[seq] = ends
        self._busy_mask |= ends
        self._push(done, _END, seq)

    def _receivers(self, hop) -> list:
        """The receivers of a broadcast hop (its neighbours when it was ready)."""
        heads = hop[4].hop_lists()[0]
        return [heads[k] for k in hop[3]]

    def _end(self, seq: int) -> None:
        """The transmission numbered ``seq`` leaves the channel."""
        self._still_waiting = 0   # it may free some of those waiting: scan them all again
        # Transmissions in progress have no endpoint in common: one starts only if no
        # endpoint of those in progress is in its zone, which holds its own endpoints
        self._busy_mask &= ~self._active.pop(seq)

    def _zone(self, t: float, view, u: int) -> frozenset:
        """``u`` and the nodes it interferes with at ``t`` (kept for the last epochs:
        by epoch, not by view, as holding views would hold their trees, 4 GiB on
        bench_scale's shared medium before this bound)."""
        zones = _per_epoch(self._zones, self._zone_epoch(t, view))
        zone = zones.get(u)
        if zone is None:
            if self.radius is None:
                zone = frozenset((u, *view.neighbors(u)))
            else:
                pos = self.positions(t)
                x, y = pos[u]
                zone = frozenset(w for w, (a, b) in pos.items()
                                 if math.hypot(a - x, b - y) <= self.radius)
            zones[u] = zone
        return zone

    def _zone_epoch(self, t: float, view):
        """What zones are kept by: the view's epoch (zones by links), or the epoch of
        ``t`` (by radius: the positions then)."""
        return view.epoch_start if self.radius is None else self.network.epoch_index(t)


def check_medium(medium: str, interference_radius: float | None) -> None:
    """One-line errors for a medium name or radius that cannot be used.

    >>> check_medium("air", None)
    Traceback (most recent call last):
    ...
    ValueError: medium: expected 'links' or 'shared', got 'air'
    """
    if medium not in MEDIA:
        raise ValueError(f"medium: expected 'links' or 'shared', got {medium!r}")
    if interference_radius is not None and not interference_radius > 0:
        raise ValueError(f"interference_radius: expected a number > 0, "
                         f"got {interference_radius!r}")


def _binned(events, interval: float) -> list[tuple]:
    """``(time, node, metric, amount)`` events summed per node, metric and ``interval``
    (stamped at the interval's start) as metric rows of ``source = "network"``.

    >>> _binned([(0.2, 1, "drops_ttl", 1), (0.7, 1, "drops_ttl", 1), (1.1, 1, "drops_ttl", 1)], 1.0)
    [(0.0, 1, 'network', 'drops_ttl', 2), (1.0, 1, 'network', 'drops_ttl', 1)]
    """
    sums: dict = {}
    for t, node, metric, amount in events:
        key = (math.floor(t / interval) * interval, node, metric)
        sums[key] = sums.get(key, 0) + amount
    return [(t, node, "network", metric, value)
            for (t, node, metric), value in sorted(sums.items())]


def _count_down(counts: dict, key) -> bool:
    """Take one from ``counts[key]``; True when none is left (the entry is then gone).

    >>> counts = {7: 2}
    >>> _count_down(counts, 7), counts[7]
    (False, 1)
    >>> _count_down(counts, 7), counts
    (True, {})
    """
    left = counts[key] - 1
    if left:
        counts[key] = left
        return False
    del counts[key]
    return True


def _per_epoch(cache: dict, epoch) -> dict:
    """``cache[epoch]``, a new dict if absent; only the last few epochs are kept (a
    hop of an older epoch, rare, has its entry made again)."""
    entries = cache.get(epoch)
    if entries is None:
        _keep_few(cache)
        entries = cache[epoch] = {}
    return entries


def _keep_few(cache: dict) -> None:
    """Make room in a cache by epoch for one more: the last three are kept."""
    if len(cache) > 2:
        del cache[next(iter(cache))]
