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
(:mod:`emulator.links`, :mod:`emulator.hop_kernel`); the Python calendar and hop methods
here serve the routing protocols' host (:class:`emulator.routing.host.RoutedTransport`),
whose shared channel is :mod:`emulator.routing.channel`.

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

import networkx as nx
import numpy as np

from contract.messages import Message
from emulator import hop_kernel
from emulator.ledger import Ledger
from emulator.links import CompiledLinks, refilled
from emulator.network import Network, all_next_hops

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
    hop loop are compiled (:class:`emulator.links.CompiledLinks`); there is no Python
    hop loop beside them (the tests' literal model of the shared medium,
    ``tests/test_deliver.py``, writes its own). A routing protocol runs in
    :class:`emulator.routing.host.RoutedTransport`, which keeps its calendar here
    (``compiled_links = False``: its packets and timers are Python objects), overrides
    the hop loop (:meth:`advance`) and sends its hops' frames compiled
    (:mod:`emulator.routing.fanout`).
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
        self.rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, 1013])))
        # the uniforms drawn ahead for jitter and loss, in the stream's order (what the
        # compiled frames of a routed run read), and how many are used
        self._pool, self._drawn = np.empty(0), 0
        self._calendar: list = []
        self._sends: deque = deque()   # sends in time order, beside the calendar
        # the view in force over [_v_start, _v_end) as _alive_at last found it
        self._v_start, self._v_end, self._view = math.inf, -math.inf, None
        self._seq = 0
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
        >>> from topologies.static import StaticDynamics
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
        if self._links is not None:
            self._links.forget_epoch()

    def _refill_pool(self) -> None:
        """A new block of uniforms after those not used yet (:func:`links.refilled`)."""
        self._pool = refilled(self._pool, self._drawn, self.rng)
        self._drawn = 0

    def _alive_at(self, t: float, v: int) -> bool:
        """Whether ``v`` is up at ``t`` (the view in force kept while ``t`` stays in its
        epoch: a hop's arrival asks, and most arrivals fall in the epoch of the last)."""
        if not self._v_start <= t < self._v_end:
            self._view, self._v_start, self._v_end = self.network.view_span(t)
        return self._view._alive_map[v]

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
        pending, pending_sum = self._pending()
        delivered = self.delivered + pending
        delay_sum = self._delay_sum + pending_sum
        return {"sent": self.sent, "delivered": delivered,
                "message_delay_mean": delay_sum / delivered if delivered else math.nan}


    def _pending(self) -> tuple[int, float]:
        """The deliveries not yet taken that crossed the network, and their delays
        summed one after another, in order (what ``sum`` of them gives)."""
        # summed in a loop: a list of the pending deliveries (all of a routed run's:
        # 91,000 at 10^5 messages) would set off the collector's full passes over the
        # run's objects (0.5 s of AODV's 28 s)
        pending, pending_sum = 0, 0
        for t, m in self.arrivals:
            if m.src != m.dst:
                pending += 1
                pending_sum += t - m.sent_at
        return pending, pending_sum
    def series(self, interval: float) -> list[tuple]:
        """Metric rows ``(time, node, "network", metric, value)`` per ``interval``: data
        messages each node dropped, by reason (``drops_<reason>``)."""
        return _binned(((t, node, f"drops_{reason}", 1)
                        for t, _, reason, node in self.drops), interval)

    def _lose(self, t: float, msg, reason: str, at_node: int) -> None:
        """The oracle's loss: counted, and its sender told at once."""
        self.lost[reason] += 1
        self.losses.append((t, msg, reason, at_node))


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


def warm_up() -> None:
    """Compile the kernels into numba's cache on disk (``make setup`` does, so that the
    first run does not spend its seconds compiling): one message over one link on each
    medium, every tree of that link at once (what the trees' workers compute), and one
    tree as a view builds it when asked (a run whose trees are not fetched ahead)."""
    class OneEpoch:
        epochs = [0.0]

        def snapshot(self, t):
            return nx.path_graph(2)

    for medium in ("links", "shared"):
        transport = Transport(Network(OneEpoch()), Ledger(), seed=0, medium=medium)
        transport.send(Message(0, "data", 0, 1, 0.0, 1.0, 10, None))
        transport.advance()
    all_next_hops(*transport.network.view(0.0).routing_links())
    Network(OneEpoch()).view(0.0).route_array(1)
