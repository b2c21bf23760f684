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

from emulator.ledger import Ledger

#: The channel models.
MEDIA = ("links", "shared")

_END, _READY = 0, 1   # at equal times a channel is freed before new hops queue for it

# A calendar entry is one flat tuple ``(time, rank, number, a, b)``: ``(msg, node)`` for a
# hop that becomes ready, ``(transmission number, None)`` for the end of one. The unique
# number settles every comparison before ``a``; a nested payload tuple would cost one
# more allocation per hop.


class Transport:
    """An event calendar of hops over a time-varying network (see the module docstring).

    ``network`` is an :class:`emulator.network.Network`; ``ledger`` gets one row per hop
    (None: no rows, as :func:`emulator.deliver` wants); ``positions(t)`` (optional) gives
    ``{node: (x, y)}`` at time ``t`` for an interference radius, the same throughout an
    epoch (zones are kept per epoch).
    """

    def __init__(self, network, ledger: Ledger | None, seed: int, medium: str = "links",
                 interference_radius: float | None = None, positions=None):
        check_medium(medium, interference_radius)
        self.network = network
        self.ledger = ledger
        self.medium = medium
        self.radius = interference_radius
        self.positions = positions
        self.rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, 1013])))
        self._uniforms: list[float] = []
        self._calendar: list = []
        self._sends: deque = deque()   # sends in time order, beside the calendar
        self._seq = 0
        self._link_free: dict[tuple[int, int], float] = {}
        self._waiting: list = []      # shared medium: (ready time, seq, hop) in ready order
        self._active: dict[int, tuple] = {}   # shared medium: seq -> (u, v, end)
        self._busy: dict[int, int] = {}       # shared medium: node -> transmissions it is in
        # shared medium: how many of _waiting are known to wait while no transmission
        # ends, and the nodes their zones cover (see _grant)
        self._still_waiting, self._covered = 0, set()
        self._zones: dict = {}                # shared medium: epoch -> {node: zone}
        #: Messages lost, by reason: "dead_node", "no_route", "link_loss".
        self.lost: Counter = Counter()
        self.hops = 0
        #: ``(arrival time, message)`` of the deliveries decided so far.
        self.arrivals: list[tuple[float, object]] = []
        self.losses: list[tuple[float, object, str, int]] = []
        self._losses_taken = 0

    # -- the calendar -------------------------------------------------------------------
    def send(self, msg) -> None:
        """Inject ``msg`` (an :class:`contract.messages.Message`) at ``msg.sent_at``."""
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
        return min(self._calendar[0][0] if self._calendar else math.inf,
                   self._sends[0][0] if self._sends else math.inf)

    def advance(self, until: float = math.inf) -> None:
        """Process every hop event before ``until``, in time order."""
        if self.medium == "links":
            return self._advance_links(until)
        return self._advance_shared(until)

    def _advance_shared(self, until: float) -> None:
        """:meth:`advance` on the shared medium: every event of an instant, then
        :meth:`_grant`.

        A hop ready at ``u`` is delivered if ``u`` is its destination, lost if ``u`` is
        down or has no route, and otherwise waits for the channel. Those steps are
        written out in both loops (here and :meth:`_advance_links`), with the view of
        the epoch in force and its tables held in locals: a method call and a view
        look-up per event cost a few per cent (a hop is two events here, its readiness
        and the end of its transmission).
        """
        cal, pop = self._calendar, heapq.heappop
        sends, take = self._sends, self._sends.popleft
        network, arrivals, waiting = self.network, self.arrivals, self._waiting
        grant, end, lose = self._grant, self._end, self._lose
        v_start, v_end = math.inf, -math.inf
        while True:
            # the next instant, from whichever queue holds the earlier entry
            if sends and (not cal or sends[0] < cal[0]):
                t = sends[0][0]
            elif cal:
                t = cal[0][0]
            else:
                break
            if t >= until:
                break
            while True:   # every event at t, in (time, rank, number) order
                if sends and (not cal or sends[0] < cal[0]):
                    if sends[0][0] != t:
                        break
                    _, rank, seq, msg, u = take()
                elif cal and cal[0][0] == t:
                    _, rank, seq, msg, u = pop(cal)
                else:
                    break
                if rank == _END:
                    end(msg)   # msg holds the transmission number here
                    continue
                # the hop is ready at u (the same steps as in _advance_links)
                dst = msg.dst
                if u == dst:   # sent to itself
                    arrivals.append((t, msg))
                    continue
                if not v_start <= t < v_end:
                    view, v_start, v_end = network.view_span(t)
                    alive, pos, routes, heads = view._alive_map, view._pos, {}, \
                        view.hop_lists()[0]
                if not alive[u]:
                    lose(t, msg, "dead_node", u)
                    continue
                table = routes.get(dst)
                if table is None:
                    table = routes[dst] = view.route(dst)
                k = table[pos[u]]
                if k < 0:
                    lose(t, msg, "no_route", u)
                    continue
                waiting.append((t, seq, (msg, u, heads[k], k, view)))
            if waiting:   # an instant that only ended transmissions may leave none
                grant(t)
                # _grant replaces the list it leaves waiting
                waiting = self._waiting

    def _advance_links(self, until: float) -> None:
        """:meth:`advance` on links: a hop ready at ``u`` (as in :meth:`_advance_shared`)
        and its transmission (as :meth:`_transmit` does it) in one loop.

        The same steps in the same order (so the same draws, rows and calendar numbers),
        with what a hop reads held in locals: the view of the epoch in force and its
        next-hop tables and per-link lists, refreshed only when time leaves the epoch.
        This loop is most of the emulator's time; a method call or a dictionary lookup
        less per hop is a few per cent.
        """
        cal, pop, push = self._calendar, heapq.heappop, heapq.heappush
        network, link_free, arrivals = self.network, self._link_free, self.arrivals
        record = self.ledger.append if self.ledger is not None else None
        uniforms = self._uniforms
        lose = self._lose
        seq, hops = self._seq, 0
        v_start, v_end = math.inf, -math.inf
        sends, take = self._sends, self._sends.popleft
        while True:
            if sends and (not cal or sends[0] < cal[0]):
                if sends[0][0] >= until:
                    break
                t, _, _, msg, u = take()
            elif cal and cal[0][0] < until:
                t, _, _, msg, u = pop(cal)
            else:
                break
            dst = msg.dst
            if u == dst:   # sent to itself
                arrivals.append((t, msg))
                continue
            if not v_start <= t < v_end:
                view, v_start, v_end = network.view_span(t)
                alive, pos, routes = view._alive_map, view._pos, {}
                heads, costs, delays, jitters, bandwidths, losses = view.hop_lists()
            if not alive[u]:
                lose(t, msg, "dead_node", u)
                continue
            table = routes.get(dst)
            if table is None:
                table = routes[dst] = view.route(dst)
            k = table[pos[u]]
            if k < 0:
                lose(t, msg, "no_route", u)
                continue
            v = heads[k]
            channel = (u, v)
            free = link_free.get(channel, t)
            start = t if free < t else free
            bandwidth = bandwidths[k]
            done = start + (msg.size_bytes / bandwidth if bandwidth > 0 else 0.0)
            link_free[channel] = done
            jitter, loss = jitters[k], losses[k]
            if jitter > 0:
                if not uniforms:
                    uniforms = self._refill()
                arrive = done + delays[k] + uniforms.pop() * jitter
            else:
                arrive = done + delays[k] + 0.0
            if loss > 0:
                if not uniforms:
                    uniforms = self._refill()
                dropped = uniforms.pop() < loss
            else:
                dropped = False
            if dropped:
                reached = True
            elif v_start <= arrive < v_end:
                reached = alive[v]
            else:
                reached = network.view(arrive).alive(v)
            if record is not None:
                record((start, msg.msg_id, msg.kind, msg.src, dst, u, v, msg.size_units,
                        msg.size_bytes, costs[k], dropped or not reached))
            hops += 1
            if dropped:
                lose(arrive, msg, "link_loss", u)
            elif not reached:
                lose(arrive, msg, "dead_node", v)
            elif v == dst:
                arrivals.append((arrive, msg))
            else:
                seq += 1
                push(cal, (arrive, _READY, seq, msg, v))
        self._seq = seq
        self.hops += hops

    def _refill(self) -> list:
        # Drawn in blocks: a scalar numpy draw costs as much as a whole hop.
        self._uniforms[:] = self.rng.random(4096).tolist()[::-1]
        return self._uniforms

    def _uniform(self) -> float:
        if not self._uniforms:
            self._refill()
        return self._uniforms.pop()

    # -- one hop ------------------------------------------------------------------------
    def _transmit(self, start: float, hop) -> float:
        """Start ``hop`` on the shared channel at ``start``; returns when it ends."""
        msg, u, v, k, view = hop
        _, costs, delays, jitters, bandwidths, losses = view.hop_lists()
        cost, delay, jitter = costs[k], delays[k], jitters[k]
        bandwidth, loss = bandwidths[k], losses[k]
        done = start + (msg.size_bytes / bandwidth if bandwidth > 0 else 0.0)
        arrive = done + delay + (self._uniform() * jitter if jitter > 0 else 0.0)
        dropped = loss > 0 and self._uniform() < loss
        reached = dropped or self.network.view(arrive).alive(v)
        if self.ledger is not None:
            self.ledger.add(start, msg.msg_id, msg.kind, msg.src, msg.dst, u, v,
                            msg.size_units, msg.size_bytes, cost, dropped or not reached)
        self.hops += 1
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
        return done

    def take_losses(self) -> list:
        """The losses decided since the last call, ``(time, message, reason, node)``."""
        taken = self.losses[self._losses_taken:]
        self._losses_taken = len(self.losses)
        return taken

    def take_arrivals(self) -> list:
        """The deliveries decided since the last call, ``(arrival time, message)``."""
        arrivals, self.arrivals = self.arrivals, []
        return arrivals

    def _lose(self, t: float, msg, reason: str, at_node: int) -> None:
        self.lost[reason] += 1
        self.losses.append((t, msg, reason, at_node))

    # -- the shared medium --------------------------------------------------------------
    def _grant(self, t: float) -> None:
        """Start every waiting transmission the conflict rule allows at ``t``.

        In ready order, a transmission u→v starts unless a transmission in progress has
        an endpoint in the zone of u or v, or u or v lies in the zone of an earlier one
        still waiting. Both are kept as node sets, so a check costs the size of two zones,
        not the number of transmissions in progress and waiting; once the waiting ones
        cover every node, none after them can start and the scan stops.
        """
        waiting = self._waiting
        if not waiting:
            return
        busy = self._busy.keys()    # endpoints of the transmissions in progress
        zone = self._zone
        # Zones by links are fixed per transmission, so while no transmission has ended
        # the ones left waiting by the last scan still wait: start after them, with the
        # zones they cover (radius zones follow the epoch of t: always a full scan).
        known = self._still_waiting if self.radius is None else 0
        if len(waiting) == 1 and not known:
            # the usual case below saturation, without the scan's set and list: no
            # earlier waiting transmission, so only those in progress can hold it back
            item = waiting[0]
            hop = item[2]
            zone_u, zone_v = zone(t, hop[4], hop[1]), zone(t, hop[4], hop[2])
            if busy.isdisjoint(zone_u) and busy.isdisjoint(zone_v):
                self._waiting = []
                self._start(t, item[1], hop)
            else:
                self._still_waiting, self._covered = 1, zone_u | zone_v
            return
        covered: set = self._covered if known else set()   # zones of earlier waiting ones
        everyone = len(waiting[0][2][4].nodes)
        still = waiting[:known]
        for i in range(known, len(waiting)):
            item = waiting[i]
            hop = item[2]
            u, v, view = hop[1], hop[2], hop[4]
            zone_u, zone_v = zone(t, view, u), zone(t, view, v)
            if u in covered or v in covered or not busy.isdisjoint(zone_u) \
                    or not busy.isdisjoint(zone_v):
                still.append(item)
                covered |= zone_u
                covered |= zone_v
                if len(covered) == everyone:
                    # every node covered: none after this one can start
                    still.extend(waiting[i + 1:])
                    break
                continue
            self._start(t, item[1], hop)
        self._waiting = still
        self._still_waiting, self._covered = len(still), covered

    def _start(self, t: float, seq: int, hop) -> None:
        """Put the waiting transmission numbered ``seq`` on the channel at ``t``."""
        u, v = hop[1], hop[2]
        done = self._transmit(t, hop)
        self._active[seq] = (u, v, done)
        counts = self._busy
        counts[u] = counts.get(u, 0) + 1   # u != v: a hop crosses a link
        counts[v] = counts.get(v, 0) + 1
        self._push(done, _END, seq)

    def _end(self, seq: int) -> None:
        """The transmission numbered ``seq`` leaves the channel."""
        self._still_waiting = 0   # it may free some of those waiting: scan them all again
        u, v, _ = self._active.pop(seq)
        for node in (u, v):
            left = self._busy[node] - 1
            if left:
                self._busy[node] = left
            else:
                del self._busy[node]

    def _zone(self, t: float, view, u: int) -> frozenset:
        """``u`` and the nodes it interferes with at ``t`` (kept for the last epochs)."""
        epoch = view.epoch_start if self.radius is None else self.network.epoch_index(t)
        zones = self._zones.get(epoch)
        if zones is None:
            # by epoch, not by view, and only the last few: holding views would hold
            # their trees (4 GiB on bench_scale's shared medium before this bound)
            zones = self._zones[epoch] = {}
            if len(self._zones) > 3:
                del self._zones[next(iter(self._zones))]
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
