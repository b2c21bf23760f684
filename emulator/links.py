"""The links medium's calendar and hop loop, compiled (:mod:`emulator.hop_kernel`).

:class:`CompiledLinks` holds what the kernel reads and writes as arrays and translates at
the edges: node ids to dense indices and back, messages to numbers, the epoch in force
to arrays, and the kernel's outputs to what :class:`emulator.transport.Transport` keeps
(deliveries, losses, the batteries' charges); it writes the hops straight into the
ledger's columns.
It answers every stop of the kernel (:data:`emulator.hop_kernel.NEED_EPOCH` and the
others) and calls it again until it is done.

A message in flight holds a number (a slot, reused once it is delivered or lost), so the
arrays grow with the messages in flight, not with the messages of a run.

Example: two messages over a line of three nodes (links of delay 0.1, 100 bytes per time
unit, cost 2); the second waits for the first on link 0 -> 1.

>>> import networkx as nx
>>> from topologies.static import StaticDynamics
>>> from topologies.model import Topology
>>> from emulator.network import Network
>>> from contract.messages import Message
>>> from emulator.ledger import Ledger
>>> g = nx.path_graph(3)
>>> nx.set_edge_attributes(g, 2.0, "cost"); nx.set_edge_attributes(g, 0.1, "delay")
>>> nx.set_edge_attributes(g, 100.0, "bandwidth")
>>> ledger = Ledger()
>>> links = CompiledLinks(Network(StaticDynamics(Topology(g))), np.random.default_rng(1),
...                       reorder=False, ledger=ledger)
>>> for i in (7, 8):
...     links.send(Message(i, "data", 0, 2, 0.0, 1.0, 50, None))
>>> decided = links.advance(np.inf)
>>> [(round(t, 6), m.msg_id) for t, m in decided.arrivals], decided.hops
([(1.2, 7), (1.7, 8)], 4)
>>> ledger.frame()["hop_v"].tolist()
[1, 1, 2, 2]
"""
from __future__ import annotations

import math
from collections import namedtuple
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from emulator import collector, hop_kernel as k
from emulator.ledger import FLOATS, INTS

#: Hops (and deliveries, and losses) the kernel may decide between two hand-overs.
BLOCK = 8192


@dataclass
class Decided:
    """What one :meth:`CompiledLinks.advance` decided, in the order it was decided."""

    #: ``(arrival time, message)``.
    arrivals: list = field(default_factory=list)
    #: ``(time, message, reason, node)``.
    losses: list = field(default_factory=list)
    #: Hops moved.
    hops: int = 0
    #: ``(u, v, size_bytes, length_m, heard)`` per hop, for the batteries (only when
    #: ``energy`` is asked for).
    energy: list = field(default_factory=list)
    #: The deliveries of messages sent as arrays (:meth:`CompiledLinks.send_many`),
    #: blocks of ``(arrival times, msg ids, sent_at, crossed)`` (``crossed``: the
    #: source is not the destination).
    frame_arrivals: list = field(default_factory=list)
    #: Their losses, blocks of ``(times, msg ids, reason codes, nodes)``
    #: (:data:`emulator.hop_kernel.REASONS`; node ids).
    frame_losses: list = field(default_factory=list)


def refilled(pool: np.ndarray, taken: int, rng: np.random.Generator) -> np.ndarray:
    """The uniforms of ``pool`` not taken yet, then a new block of 4,096 from ``rng``:
    the stream is drawn in blocks (a scalar numpy draw costs as much as a hop) and in
    order, whoever draws and wherever a block runs out.

    >>> pool = refilled(np.array([0.1, 0.2, 0.3]), 2, np.random.default_rng(1))
    >>> len(pool), float(pool[0])
    (4097, 0.3)
    """
    return np.concatenate([pool[taken:], rng.random(4096)])


class CompiledLinks:
    """The event calendar over ``network`` (an :class:`emulator.network.Network`) on
    ``medium`` (``"links"`` or ``"shared"``), its uniform draws from ``rng`` (in blocks
    of 4,096, the stream :class:`emulator.transport.Transport` has always drawn).

    ``reorder=False`` keeps every link's order; the hops are written into ``ledger``
    (an :class:`emulator.ledger.Ledger`, or None: no ledger); ``energy`` (set later, as
    the transport's is) keeps each hop's charge. On the shared medium, zones are the
    epoch's neighbours, or with ``radius`` the nodes within it by ``positions(t)``
    (``{node: (x, y)}``). A hop that would wait longer than ``max_wait`` for its link
    or the channel is lost (``queue_expired``).
    """

    def __init__(self, network, rng: np.random.Generator, reorder: bool, ledger,
                 medium: str = "links", radius: float | None = None, positions=None,
                 max_wait: float = math.inf):
        self.network = network
        self.max_wait = float(max_wait)
        self.medium = medium
        self.radius = radius
        self.positions = positions
        self.rng = rng
        self.reorder = bool(reorder)
        self.ledger = ledger
        self.energy = False
        self._ids = np.empty(0, np.int64)   # dense index -> node id
        self._dense: dict = {}              # node id -> dense index
        self._cal = k.new_calendar(1024)
        self._state, self._clock = k.new_state()
        self._out = k.new_outputs(BLOCK)
        self._links = LinkNumbers()
        self._link_free = k.new_link_times(1024)
        self._link_last = k.new_link_times(1024)
        self._uniforms = np.empty(0)
        # the sends queue, in time order: (time, seq, slot, node) in [SENDS_TAKEN,
        # SENDS_END); a send earlier than the last queued waits in _late for the heap
        self._sends = k.new_calendar(1024)
        self._sends_end = 0
        self._sends_last = -math.inf
        self._late: list = []
        self._seq = 0                       # the calendar's last number (the kernel's SEQ)
        # per slot, a message in flight: the message, and what the kernel and the
        # ledger read of it (_SLOT_COLUMNS)
        self._msgs: list = []
        self._free: list[int] = []
        self._columns = Slots(*(np.empty(0, dtype) for dtype in _SLOT_COLUMNS.values()))
        self._framed = False   # messages were sent as arrays (send_many)
        self._epoch = _NO_EPOCH             # the epoch in force, as the kernel reads it
        self._view = None
        # the shared medium: the hops waiting for the channel, the zones of the epochs
        # they came from, and per node the transmissions in progress it is in
        self._waiting = k.new_waiting(1024)
        self._zones = _no_zones(1)
        self._marks = k.new_marks(0)

    # -- messages in ----------------------------------------------------------------------
    def send(self, msg) -> None:
        """Inject ``msg`` at ``msg.sent_at`` at its source: a slot and a calendar number
        (in the order of sending: it orders events at equal times), on the sends queue
        if no message queued before it is later, else (at the next advance) the heap.

        Written per message into the arrays: a driver's step sends a few messages, and
        a batch's fixed costs (numpy calls on small arrays) would outweigh them."""
        free = self._free
        if free:
            slot = free.pop()
            self._msgs[slot] = msg
        else:
            slot = self._new_slot(msg)
        dense = self._dense
        src, dst = dense.get(msg.src), dense.get(msg.dst)
        if src is None or dst is None:
            src, dst = self._index(msg.src), self._index(msg.dst)
            self._epoch = _NO_EPOCH   # the epoch's arrays must hold the new node
        columns = self._columns
        columns.dst[slot], columns.src[slot], columns.bytes[slot] = dst, src, msg.size_bytes
        if self.ledger is not None:
            columns.msg_id[slot], columns.units[slot] = msg.msg_id, msg.size_units
            columns.kind[slot] = self.ledger.kind_code(msg.kind)
        if self._framed:
            columns.framed[slot] = False
        self._seq += 1
        t = msg.sent_at
        if t >= self._sends_last:
            i = self._sends_end
            if i == len(self._sends.time):
                i = self._sends_room()
            sends = self._sends
            sends.time[i], sends.seq[i], sends.msg[i], sends.node[i] = (
                t, k.READY + self._seq, slot, src)
            self._sends_end, self._sends_last = i + 1, t
        else:
            self._late.append((t, k.READY + self._seq, slot, src))

    def send_many(self, msg_id: np.ndarray, src: np.ndarray, dst: np.ndarray,
                  sent_at: np.ndarray, size_bytes: np.ndarray) -> None:
        """Inject data messages of one unit given as arrays, in order of ``sent_at``
        (ascending): what :meth:`send` does for each in turn, as whole-array writes,
        with no message object. Their fates come back as arrays (the ``frame_*``
        blocks of :class:`Decided`). For :func:`emulator.deliver`, whose messages are
        a frame: at 10^5 messages and more, the per-message calls were most of the
        transport's time, and a million message objects its largest memory."""
        n = len(msg_id)
        if n == 0:
            return
        if (np.diff(sent_at) < 0).any():
            raise ValueError("send_many: sent_at must be in ascending order")
        self._framed = True
        srcs, dsts = self._dense_pairs(src, dst)
        slots = self._slots(n)
        columns = self._columns
        columns.src[slots], columns.dst[slots] = srcs, dsts
        columns.bytes[slots], columns.msg_id[slots] = size_bytes, msg_id
        columns.units[slots], columns.sent[slots], columns.framed[slots] = 1.0, sent_at, True
        if self.ledger is not None:
            columns.kind[slots] = self.ledger.kind_code("data")
        seq = k.READY + self._seq + 1 + np.arange(n, dtype=np.int64)
        self._seq += n
        # as send does one by one: those earlier than the last queued wait for the heap
        late = int(np.searchsorted(sent_at, self._sends_last, side="left"))
        self._late.extend(zip(sent_at[:late].tolist(), seq[:late].tolist(),
                              slots[:late].tolist(), srcs[:late].tolist()))
        if late < n:
            i = self._sends_room_for(n - late)
            sends, j = self._sends, i + n - late
            sends.time[i:j], sends.seq[i:j] = sent_at[late:], seq[late:]
            sends.msg[i:j], sends.node[i:j] = slots[late:], srcs[late:]
            self._sends_end, self._sends_last = j, float(sent_at[-1])

    def _dense_pairs(self, src: np.ndarray, dst: np.ndarray) -> tuple:
        """The dense indices of ``src`` and ``dst``, the nodes not seen yet numbered in
        order of first appearance, a message's source before its destination (as
        :meth:`send` numbers them); one sort of the nodes for both."""
        nodes = np.column_stack([src, dst]).ravel()
        unique, first, inverse = np.unique(nodes, return_index=True, return_inverse=True)
        unseen = [(i, u) for i, u in zip(first.tolist(), unique.tolist())
                  if u not in self._dense]
        for _, u in sorted(unseen):
            self._index(u)
        if unseen:
            self._epoch = _NO_EPOCH   # the epoch's arrays must hold the new nodes
        dense = np.array([self._dense[u] for u in unique.tolist()], np.int64)[inverse]
        return dense[0::2], dense[1::2]

    def _slots(self, n: int) -> np.ndarray:
        """``n`` slots for new messages: the free ones first, in the order :meth:`send`
        takes them (the last freed first), then new ones (the arrays grown)."""
        free, msgs = self._free, self._msgs
        reused = free[len(free) - min(n, len(free)):][::-1]
        del free[len(free) - len(reused):]
        start = len(msgs)
        msgs.extend([None] * (n - len(reused)))
        if len(msgs) > len(self._columns.dst):
            self._columns = Slots(*(np.resize(column, max(1024, 2 * len(msgs)))
                                    for column in self._columns))
        return np.concatenate([np.array(reused, np.int64),
                               np.arange(start, len(msgs), dtype=np.int64)])

    def _new_slot(self, msg) -> int:
        """A slot never used before, holding ``msg`` (the slot arrays grown if full)."""
        slot = len(self._msgs)
        self._msgs.append(msg)
        if slot >= len(self._columns.dst):
            self._columns = Slots(*(np.resize(column, max(1024, 2 * slot))
                                    for column in self._columns))
        return slot

    def _sends_room(self) -> int:
        """Room at the end of the sends queue: the sends taken dropped, the arrays
        grown if still half full; returns where the next send goes."""
        taken, end = self._state[k.SENDS_TAKEN], self._sends_end
        left = end - taken
        sends = self._sends
        if 2 * left > len(sends.time):
            sends = self._sends = k.grown_calendar(sends, end)
        for column in sends:
            column[:left] = column[taken:end]
        self._state[k.SENDS_TAKEN], self._sends_end = 0, left
        return left

    def _sends_room_for(self, count: int) -> int:
        """Room for ``count`` sends at the end of the sends queue (the sends taken
        dropped, the arrays grown if needed); returns where the first goes."""
        taken, end = self._state[k.SENDS_TAKEN], self._sends_end
        if end + count <= len(self._sends.time):
            return end
        left = end - taken
        sends = self._sends
        if left + count > len(sends.time):
            bigger = k.new_calendar(2 * (left + count))
            for old, new in zip(sends, bigger):
                new[:left] = old[taken:end]
            self._sends = bigger
        else:
            for column in sends:
                column[:left] = column[taken:end]
        self._state[k.SENDS_TAKEN], self._sends_end = 0, left
        return left

    def _take_late(self) -> None:
        """The sends out of time order onto the heap."""
        late, self._late = self._late, []
        for t, seq, slot, node in late:
            self._room()
            k.calendar_push(self._cal, self._state, t, seq, slot, node)

    def _indices(self, nodes) -> np.ndarray:
        """The dense indices of ``nodes`` (new ones for nodes first seen)."""
        dense = self._dense
        found = [dense.get(u) for u in nodes]
        if None in found:
            found = [self._index(u) if i is None else i for u, i in zip(nodes, found)]
        return np.array(found, np.int64)

    def _index(self, node) -> int:
        """The dense index of ``node`` (a new one the first time it is seen)."""
        i = self._dense.get(node)
        if i is None:
            i = self._dense[node] = len(self._dense)
            if i >= len(self._ids):
                self._ids = np.resize(self._ids, max(64, 2 * i))
            self._ids[i] = node
        return i

    def _room(self) -> None:
        """Room on the heap for the entries a transmission may add (its next hop and
        its end) beside one more: what the kernel's check asks for."""
        if self._state[k.HEAP_SIZE] + 3 >= len(self._cal.time):
            self._cal = k.grown_calendar(self._cal, self._state[k.HEAP_SIZE])

    # -- the calendar ---------------------------------------------------------------------
    def next_time(self) -> float:
        """When the next hop is due (inf if none)."""
        state = self._state
        taken = state[k.SENDS_TAKEN]
        first = self._sends.time[taken] if taken < self._sends_end else math.inf
        if state[k.HEAP_SIZE]:
            first = min(first, self._cal.time[0])
        for late in self._late:
            first = min(first, late[0])
        return float(first)

    def forget_epoch(self) -> None:
        """The network's epochs changed (nodes died): load the epoch in force again (and
        the zones of the epochs the waiting hops came from)."""
        self._epoch = _NO_EPOCH
        self._zones.key[:] = np.nan
        self._state[k.GRANT_FROM] = -1   # the zones the held hops covered are gone

    def advance(self, until: float) -> Decided:
        """Run the kernel on every hop ready before ``until``; what it decided."""
        if self._late:
            self._take_late()
        if self.next_time() >= until:   # a driver's step often has nothing to move
            return Decided()
        # what is made here (deliveries, the ledger's columns) forms no cycle: the
        # collector's scans of every message in flight cost more than the kernel
        with collector.paused():
            return self._advance(until)

    def _advance(self, until: float) -> Decided:
        decided = Decided()
        state, clock = self._state, self._clock
        state[k.SEQ], state[k.SENDS_END] = self._seq, self._sends_end
        dsts, sizes = self._columns.dst, self._columns.bytes
        while True:
            if self.medium == "links":
                reason = k.run(float(until), self._cal, *self._sends, state, clock, dsts,
                               sizes, self._epoch, self._link_free, self._link_last,
                               self.reorder, self._uniforms, self._out, self.max_wait)
            else:
                reason = k.run_shared(float(until), self._cal, *self._sends, state, clock,
                                      dsts, sizes, self._epoch, self._link_last,
                                      self.reorder, self._uniforms, self._out,
                                      self._waiting, self._zones, self.radius is not None,
                                      self._marks, self.max_wait)
            self._hand_over(decided)
            if reason == k.DONE:
                break
            if reason == k.NEED_EPOCH:
                self._load_epoch(float(clock[k.ASK_TIME]))
            elif reason == k.NEED_ZONES:
                self._load_zones(float(clock[k.ASK_TIME]))
            elif reason == k.NEED_ROUTE:
                self._load_route(int(state[k.ASK_NODE]))
            elif reason == k.NEED_UNIFORMS:
                self._uniforms = refilled(self._uniforms, state[k.UNIFORMS_TAKEN], self.rng)
                state[k.UNIFORMS_TAKEN] = 0
            elif reason == k.NEED_ALIVE:
                v, t = int(state[k.ASK_NODE]), float(clock[k.ASK_TIME])
                alive = self.network.view(t)._alive_map.get(int(self._ids[v]), False)
                state[k.HINT_NODE], state[k.HINT_ALIVE], clock[k.HINT_TIME] = v, alive, t
            else:   # FULL: the outputs are handed over; the heap may need room
                self._room()
                if state[k.WAITING] == len(self._waiting.msg):
                    self._waiting = k.grown_waiting(self._waiting, state[k.WAITING])
        self._seq = int(state[k.SEQ])
        return decided

    # -- what the kernel reads ------------------------------------------------------------
    def _load_epoch(self, t: float) -> None:
        """The epoch in force at ``t`` as the kernel's arrays (every node seen so far
        has an entry; those not in the epoch's graph are down), with who is up in the
        next one."""
        view, start, end = self.network.view_span(t)
        dense = self._indices(view.nodes)
        # the shared medium's next grant judges every waiting hop again (new zones or
        # marks may come with the epoch)
        self._state[k.GRANT_FROM] = -1
        after, next_end = None, -math.inf
        if end < math.inf:
            after, _, next_end = self.network.view_span(end)
            after_dense = self._indices(after.nodes)
        n = len(self._dense)
        if len(self._marks.busy) < n:   # nodes first seen: room in the per-node arrays
            marks = k.new_marks(n)
            marks.busy[:len(self._marks.busy)] = self._marks.busy
            self._marks = marks
            self._zones = _no_zones(len(self._zones.key))
        alive = np.zeros(n, np.bool_)
        alive[dense] = view._alive_list
        next_alive = np.zeros(n, np.bool_)
        if after is not None:
            next_alive[after_dense] = after._alive_list
        pos = np.full(n, -1, np.int64)
        pos[dense] = np.arange(len(dense))
        head, attrs = view.hop_arrays()
        tails = np.repeat(dense, np.diff(view.link_starts()))
        link = self._links.numbers(tails * k.LINK_KEY + dense[head])
        if self._links.count > len(self._link_free):   # room for the links first seen
            size = 2 * self._links.count
            self._link_free = _grown(self._link_free, size)
            self._link_last = _grown(self._link_last, size)
        self._view = view
        route_row = np.full(n, -1, np.int64)
        routes = view.prefetched_routes()
        # rows of routes used; -1: the trees are the view's (networkx, zero-cost links)
        used = np.array([0 if view._compiled else -1], np.int64)
        work = _NO_WORK
        if routes is None:   # built one destination at a time, as hops need them
            routes = np.empty((min(n, 16), len(dense)), np.int32)
            work = k.new_work(len(dense))
        else:                # every tree of the epoch at hand: no stop for a route
            route_row[dense] = np.arange(len(dense))
            used[0] = len(dense)
        self._epoch = k.Epoch(float(start), float(end), alive, pos, dense[head], *attrs,
                              route_row, routes, float(next_end), next_alive, link,
                              view.link_starts(), head, used, work)

    def _load_zones(self, key: float) -> None:
        """The zones of the epoch starting at ``key`` (by radius: of the epoch in force
        at ``key``) into a slot of the kernel's ring: a free one, one no waiting hop
        needs, or a new one."""
        if self.radius is None:   # a node's zone: its neighbours in the epoch
            view = self.network.view_span(key)[0]
            nodes = self._indices(view.nodes)
            head, _ = view.hop_arrays()
            starts, members = view.link_starts(), nodes[head]
        else:
            nodes, starts, members = self._radius_zones(key)
        n = len(self._dense)
        self._state[k.GRANT_FROM] = -1   # a slot may be given to other zones
        zones, needed = self._zones, {float(self._epoch.start)}
        needed.update(self._waiting.epoch[:self._state[k.WAITING]].tolist())
        free = [z for z, held in enumerate(zones.key.tolist())
                if math.isnan(held) or held not in needed]
        rows, size = max(len(nodes) + 1, zones.starts.shape[1]), \
            max(len(members), zones.members.shape[1])
        if not free or zones.row.shape[1] < n or zones.starts.shape[1] < rows or \
                zones.members.shape[1] < size:
            zones = self._zones = _grown_zones(zones, n, rows, size, extra=not free)
            free = free or [len(zones.key) - 1]
        z = free[0]
        zones.key[z] = key
        zones.row[z, :] = -1
        zones.row[z, nodes] = np.arange(len(nodes))
        zones.starts[z, :len(starts)] = starts
        zones.members[z, :len(members)] = members

    def _radius_zones(self, t: float) -> tuple:
        """Per node with a position at ``t``, the others within the radius (as the
        Python loop found them: ``math.hypot`` of the offsets ``<=`` the radius):
        ``(dense nodes, starts, members)``."""
        where = self.positions(t)
        nodes = self._indices(list(where))
        xy = np.array(list(where.values()), dtype=float).reshape(-1, 2)
        dx = xy[:, 0][:, None] - xy[:, 0][None, :]
        dy = xy[:, 1][:, None] - xy[:, 1][None, :]
        near = np.hypot(dx, dy) <= self.radius
        np.fill_diagonal(near, False)
        rows, cols = np.nonzero(near)
        starts = np.searchsorted(rows, np.arange(len(nodes) + 1))
        return nodes, starts, nodes[cols]

    def _load_route(self, dst: int) -> None:
        """The next-hop table towards ``dst`` (dense) in the epoch in force."""
        epoch = self._epoch
        rows = int((epoch.route_row >= 0).sum())
        routes = epoch.routes
        if rows == len(routes):   # the kernel builds the next ones itself (when it can)
            routes = np.resize(routes, (2 * rows, routes.shape[1]))
        node = int(self._ids[dst])
        # a node absent from the epoch's graph is alive nowhere: no route leads to it
        routes[rows] = self._view.route_array(node) if node in self._view._pos else -1
        epoch.route_row[dst] = rows
        if epoch.trees[0] >= 0:
            epoch.trees[0] = rows + 1
        self._epoch = epoch._replace(routes=routes)

    # -- what the kernel wrote ------------------------------------------------------------
    def _hand_over(self, decided: Decided) -> None:
        """Move the kernel's outputs into ``decided`` (the hops into the ledger) and
        free the slots of the messages delivered or lost."""
        out, state, ids, msgs = self._out, self._state, self._ids, self._msgs
        hops = int(state[k.N_HOPS])
        if hops:
            decided.hops += hops
            if self.ledger is not None:
                c = self._columns
                _record(hops, out.hop_start, out.hop_msg, out.hop_u, out.hop_v,
                        out.hop_cost, out.hop_lost, c.msg_id, c.kind, c.src, c.dst,
                        c.units, c.bytes, ids, *self.ledger.reserve(hops))
            if self.energy:
                slots = out.hop_msg[:hops]
                decided.energy.extend(zip(
                    ids[out.hop_u[:hops]].tolist(), ids[out.hop_v[:hops]].tolist(),
                    self._columns.bytes[slots].tolist(), out.hop_length[:hops].tolist(),
                    out.hop_heard[:hops].tolist()))
        arrived = int(state[k.N_ARRIVALS])
        if arrived:
            slots, times = out.arr_msg[:arrived], out.arr_time[:arrived]
            if self._framed:
                slots, times = self._frame_arrivals(decided, slots, times)
            slots = slots.tolist()
            decided.arrivals.extend(zip(times.tolist(), [msgs[slot] for slot in slots]))
            self._release(slots)
        lost = int(state[k.N_LOSSES])
        if lost:
            slots, times = out.loss_msg[:lost], out.loss_time[:lost]
            reasons, nodes = out.loss_reason[:lost], out.loss_node[:lost]
            if self._framed:
                framed = self._columns.framed[slots]
                if framed.any():
                    decided.frame_losses.append((
                        times[framed].copy(), self._columns.msg_id[slots[framed]],
                        reasons[framed].copy(), ids[nodes[framed]]))
                    self._release(slots[framed].tolist())
                    slots, times = slots[~framed], times[~framed]
                    reasons, nodes = reasons[~framed], nodes[~framed]
            slots = slots.tolist()
            decided.losses.extend(zip(times.tolist(), [msgs[slot] for slot in slots],
                                      [k.REASONS[r] for r in reasons.tolist()],
                                      ids[nodes].tolist()))
            self._release(slots)
        state[k.N_HOPS] = state[k.N_ARRIVALS] = state[k.N_LOSSES] = 0

    def _frame_arrivals(self, decided: Decided, slots: np.ndarray,
                        times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The deliveries among ``slots`` (arriving at ``times``) of messages sent as
        arrays, as one block onto ``decided`` (their slots freed); the others'."""
        columns = self._columns
        framed = columns.framed[slots]
        if not framed.any():
            return slots, times
        mine = slots[framed]
        decided.frame_arrivals.append((times[framed].copy(), columns.msg_id[mine],
                                       columns.sent[mine], columns.src[mine] != columns.dst[mine]))
        self._release(mine.tolist())
        return slots[~framed], times[~framed]

    def _release(self, slots: list) -> None:
        """The messages in ``slots`` left the network: their slots are free."""
        msgs = self._msgs
        for slot in slots:
            msgs[slot] = None
        self._free.extend(slots)


#: What the slot arrays hold per message in flight: destination and source (dense),
#: bytes, and for the ledger its id, size in units and kind (a code); for a message sent
#: as arrays (``framed``) its id and send time, which its outcome reports.
_SLOT_COLUMNS = {"dst": np.int64, "src": np.int64, "bytes": np.int64, "msg_id": np.int64,
                 "units": np.float64, "kind": np.int64, "sent": np.float64,
                 "framed": np.bool_}

#: The slot arrays by name.
Slots = namedtuple("Slots", list(_SLOT_COLUMNS))

_EMPTY_F, _EMPTY_I = np.empty(0), np.empty(0, np.int64)
#: An epoch's ``work`` when the kernel builds no tree in it (its trees are all at hand).
_NO_WORK = k.new_work(0)
#: The kernel's epoch before any is loaded: its span is empty, so it asks for one.
_NO_EPOCH = k.Epoch(math.inf, -math.inf, np.empty(0, np.bool_), _EMPTY_I, _EMPTY_I,
                    *([_EMPTY_F] * 7), _EMPTY_I, np.empty((0, 0), np.int32), -math.inf,
                    np.empty(0, np.bool_), _EMPTY_I, np.zeros(1, np.int64), _EMPTY_I,
                    np.array([-1], np.int64), _NO_WORK)


class LinkNumbers:
    """A number for each directed link the run has met (its key ``u * LINK_KEY + v``),
    the same in every epoch, so that a link's queue and order carry over. The keys are
    held in a compiled hash table (:func:`emulator.hop_kernel.number_links`): an
    epoch's 2,000 links are numbered in about 8 us, where searching sorted
    keys and sorting the new ones in took half a millisecond, the most of loading an
    epoch.

    >>> links = LinkNumbers()
    >>> links.numbers(np.array([7, 3, 9])).tolist(), links.numbers(np.array([9, 5])).tolist()
    ([0, 1, 2], [2, 3])
    """

    def __init__(self):
        self._table = k.new_link_table(1024)
        self.count = 0

    def numbers(self, keys: np.ndarray) -> np.ndarray:
        """The numbers of ``keys`` (new ones, in order of first appearance, for keys
        not met before)."""
        if 2 * (self.count + len(keys)) > len(self._table.key):   # at most half full
            self._table = k.grown_link_table(self._table, self.count + len(keys))
        out = np.empty(len(keys), np.int64)
        self.count = k.number_links(self._table, np.ascontiguousarray(keys, np.int64),
                                    self.count, out)
        return out


def _no_zones(slots: int) -> "k.Zones":
    """A ring of ``slots`` free zone slots (no nodes yet)."""
    return k.Zones(np.full(slots, np.nan), np.full((slots, 0), -1, np.int64),
                   np.zeros((slots, 1), np.int64), np.zeros((slots, 0), np.int64))


def _grown_zones(zones: "k.Zones", nodes: int, rows: int, size: int,
                 extra: bool) -> "k.Zones":
    """``zones`` with room for ``nodes`` nodes, ``rows`` starts and ``size`` members per
    slot (and one slot more if ``extra``), the slots kept."""
    slots = len(zones.key) + int(extra)
    grown = k.Zones(np.full(slots, np.nan), np.full((slots, nodes), -1, np.int64),
                    np.zeros((slots, rows), np.int64), np.zeros((slots, size), np.int64))
    old = len(zones.key)
    grown.key[:old] = zones.key
    grown.row[:old, :zones.row.shape[1]] = zones.row
    grown.starts[:old, :zones.starts.shape[1]] = zones.starts
    grown.members[:old, :zones.members.shape[1]] = zones.members
    return grown


def _grown(times: np.ndarray, size: int) -> np.ndarray:
    """``times`` with room for ``size`` links, the new ones not yet set."""
    grown = k.new_link_times(size)
    grown[:len(times)] = times
    return grown


@njit(cache=True, _nrt=False)
def _record(hops, start, msg, u, v, cost, lost, msg_id, kind, src, dst, units, size_bytes,
            ids, floats, ints, at):
    """The kernel's first ``hops`` hops (their ``start`` .. ``lost``, the message's
    slot in ``msg``) into the ledger's columns from row ``at``
    (:meth:`emulator.ledger.Ledger.reserve`), with what the slot holds of the message
    (``msg_id`` .. ``size_bytes``; node ids through ``ids``). One call per hand-over,
    where a dict of eleven arrays gathered by numpy cost 20-30 us; its arrays are
    passed one by one, since numba checks a named tuple's arrays as slowly as
    arguments and more (8 us a call with the kernel's two named tuples).

    The rows are written in the order of ``FLOATS`` and ``INTS``, which the module
    checks when loaded (numba's cache on disk would not see them change)."""
    for h in range(hops):
        slot, row = msg[h], at + h
        floats[0, row] = start[h]
        floats[1, row] = units[slot]
        floats[2, row] = cost[h]
        ints[0, row] = msg_id[slot]
        ints[1, row] = kind[slot]
        ints[2, row] = ids[src[slot]]
        ints[3, row] = ids[dst[slot]]
        ints[4, row] = ids[u[h]]
        ints[5, row] = ids[v[h]]
        ints[6, row] = size_bytes[slot]
        ints[7, row] = lost[h]


assert FLOATS == ("time", "size_units", "link_cost") and INTS == (
    "msg_id", "kind", "src", "dst", "hop_u", "hop_v", "size_bytes", "lost"), \
    "emulator.links._record writes the ledger's columns in their old order"
