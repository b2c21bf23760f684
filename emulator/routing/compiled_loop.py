"""The Python side of a protocol's compiled loop (:mod:`emulator.routing.loop`, whose
docstring says what the loop does and shares): :class:`CompiledLoop`, which the routed
host (:class:`~emulator.routing.host.RoutedTransport`) calls, and which a protocol's loop
extends with its own packets and codes (AODV's discoveries:
:class:`~emulator.routing.aodv.discovery.RouteDiscoveries`; OLSR's forwarding:
:class:`~emulator.routing.olsr.forward.OlsrLoop`); and :class:`SentMessages`, the host's
messages in the loop by id.
"""
from __future__ import annotations

import math

import numpy as np

from emulator.hop_kernel import HEAP_SIZE, grown_calendar, new_calendar
from emulator.routing.base import NOTICE_BYTES
from emulator.routing.fanout import Fanout
from emulator.routing.loop import (
    ARRIVE, ASK, AV_END, AV_START, CAPACITY, CURRENT_NODE, CURRENT_ROW, CURRENT_SEQ,
    CURRENT_T, DATA, DATA_EXPIRED, DATA_IN_PYTHON, DRAWN, DROPPED, DROP_REASONS,
    FIELDS, FIRST_OWN_CODE, FLOATS, GROUPS_FREE, HOPS, IDLE, INTS, MAC_LATER,
    MAC_NOW, MAC_SEQ, MSG_ID, NEED_FAN_ALIVE, NEED_FAN_UNIFORMS, NEED_FRAME_ALIVE,
    NEED_FRAME_UNIFORMS, NEED_READY_VIEW, NEED_ROOM, NEXT_ID, N_ARRIVED,
    N_CTRL_LINK_BREAK, N_CTRL_NO_ROUTE, N_DEAD, N_DROPS, N_EXPIRED, N_FIRST, N_LOST,
    N_NOTICES, RECEIVER, ROWS_FREE, RV_END, RV_START, SENDS_AT, SENDS_END,
    SENDS_INTS, SEQ, STAGED, STAGED_INTS, TYPE, UNRESOLVED, _READ, file_data)
from emulator.transport import _TIMER


class SentMessages:
    """The host's data messages and notices in a loop, by id: those handed over as
    objects, or (a transport's data goes one way or the other) those sent as arrays
    (:meth:`CompiledLoop.take_send_arrays`), made into a message only when Python needs
    one (a drop, a packet handed back): at 10^6 messages, making every one and reading
    it back had been a fifth of an AODV run.

    >>> sent = SentMessages()
    >>> sent.add_arrays(np.array([7, 9]), np.array([1, 2]), np.array([3, 3]),
    ...                 np.array([0.5, 0.75]), np.array([64, 64]))
    >>> sent.arrays, sent.pop(9)
    (True, Message(msg_id=9, kind='data', src=2, dst=3, sent_at=0.75, size_units=1.0, \
size_bytes=64, payload=None))
    """

    def __init__(self):
        self._objects: dict = {}
        self._blocks: list = []      # (msg_id, src, dst, sent_at, size_bytes) arrays
        self._where: list = []       # by block: id -> index, and its columns as lists
        #: Whether data was sent as arrays (its deliveries go into the host's lists).
        self.arrays = False
        self._objects_sent = False

    def __setitem__(self, msg_id: int, msg) -> None:
        self._objects[msg_id] = msg

    def pop(self, msg_id: int):
        """The message ``msg_id``, no longer held."""
        msg = self._objects.pop(msg_id, None)
        return self._made(msg_id) if msg is None else msg

    def discard(self, msg_id: int) -> None:
        """The message ``msg_id`` is held no longer, as an object or not."""
        self._objects.pop(msg_id, None)

    def add_arrays(self, msg_id, src, dst, sent_at, size_bytes) -> None:
        """Data messages of one unit sent as arrays (ids for nodes)."""
        if self._objects_sent:
            raise ValueError("a transport's data messages are sent as objects or as "
                             "arrays, not both")
        self.arrays = True
        self._blocks.append((msg_id, src, dst, sent_at, size_bytes))
        self._where.append(None)

    def objects_sent(self) -> None:
        """Data messages were sent as objects."""
        if self.arrays:
            raise ValueError("a transport's data messages are sent as objects or as "
                             "arrays, not both")
        self._objects_sent = True

    def sent_at(self, ids: np.ndarray) -> np.ndarray:
        """When the messages ``ids`` (sent as arrays) were sent."""
        every = np.concatenate([block[0] for block in self._blocks])
        order = np.argsort(every, kind="stable")
        found = order[np.searchsorted(every, ids, sorter=order)]
        return np.concatenate([block[3] for block in self._blocks])[found]

    def _made(self, msg_id: int):
        from contract.messages import Message

        for b, block in enumerate(self._blocks):
            found = self._where[b]
            if found is None:   # the block's columns as lists, and where each id is
                columns = [column.tolist() for column in block]
                found = self._where[b] = (dict(zip(columns[0], range(len(columns[0])))),
                                          *columns[1:])
            where, src, dst, sent_at, size = found
            i = where.get(msg_id)
            if i is not None:
                return Message(msg_id, "data", src[i], dst[i], sent_at[i], 1.0, size[i],
                               None)
        raise KeyError(msg_id)


class CompiledLoop:
    """The Python side of a protocol's compiled loop (:mod:`emulator.routing.loop`): the
    host files data packets (:meth:`file_data`) and hands its sends over
    (:meth:`take_sends`), calls :meth:`run` while :attr:`head` (the next event's
    ``(time, rank, number)``, None for none) comes before its own next event, and
    :meth:`hand_over` before it logs a transmission of its own.

    A protocol's loop sets :attr:`kernel` (its compiled ``run``, whose arguments after
    the stop are :meth:`_gather`'s), :attr:`TYPES` (its control types by code),
    :attr:`FIELDS` and :attr:`INTS` (these and its own), and answers its own codes
    (:meth:`_asked`, :meth:`_in_python`)."""

    FIELDS = FIELDS
    INTS = INTS
    TYPES: tuple = ()
    kernel = None

    def __init__(self, host, protocol, times=(), consts=()):
        self.host, self.protocol = host, protocol
        capacity = CAPACITY
        n = self.n = len(host._gids)
        self.ints = np.zeros(self.INTS, np.int64)
        self.floats = np.zeros(FLOATS)
        self._forget_ready_view()
        self.floats[AV_START], self.floats[AV_END] = math.inf, -math.inf
        self.times = np.array([host.max_wait, *times], float)
        #: The type code of a notice (routed like data): "NOTICE" among the types.
        self.notice_type = (self.TYPES.index("NOTICE") if "NOTICE" in self.TYPES
                            else len(self.TYPES))
        self.consts = np.array([host.ip_ttl, host.bytes_per_unit, self.notice_type,
                                NOTICE_BYTES, *consts], np.int64)
        self.calendar = new_calendar(capacity)
        self.packets = np.zeros((capacity, len(self.FIELDS)), np.int64)
        self.refs = np.zeros(capacity, np.int64)
        self.units = np.zeros(capacity)     # a data packet's size in units
        self.sent_at = np.zeros(capacity)   # a data packet's
        self.free_rows = np.arange(capacity - 1, -1, -1, dtype=np.int64)
        self.ints[ROWS_FREE] = capacity
        # the receivers of a broadcast that hear it at one time, by group (broadcast())
        self.groups = np.zeros((capacity, n), np.int64)
        self.group_len = np.zeros(capacity, np.int64)
        self.free_groups = np.arange(capacity - 1, -1, -1, dtype=np.int64)
        self.ints[GROUPS_FREE] = capacity
        self.ids = np.arange(n, dtype=np.int64)   # the groups hold positions
        self.fan = Fanout(n)
        # the loop's own timers (a protocol's, of the host's rank for timers), and how
        # many
        self.timers = new_calendar(64)
        self.timer_state = np.zeros(1, np.int64)
        self.out_floats = np.zeros((3, 4096))
        self.out_ints = np.zeros((len(STAGED_INTS), 4096), np.int64)
        # data packets delivered, staged: their arrival and id; the packets in the loop
        # by id (the host's messages)
        self.arrived_at, self.arrived_ids = np.zeros(4096), np.zeros(4096, np.int64)
        self._data = SentMessages()
        # flows' first packets' waits, staged (source and destination, wait)
        self.first_flows, self.first_waits = np.zeros((2, 1024), np.int64), np.zeros(1024)
        # data packets the loop dropped, staged: when, and their id, node, notice, the
        # arrivals staged before them and why (drop_here())
        self.drops_at, self.drop_ids = np.zeros(1024), np.zeros((5, 1024), np.int64)
        # the host's sends taken (SENDS_INTS), from ints[SENDS_AT] to ints[SENDS_END]
        self.sends_floats = np.zeros((2, 0))
        self.sends_ints = np.zeros((len(SENDS_INTS), 0), np.int64)
        self._views: dict = {}    # by epoch: a ready view's arrays (_ready_view)
        self._kept = self._args = None   # run's arguments (_arguments)
        self._ids = host._gids.tolist()   # the host's ids by position
        self._gids = None if self._ids == list(range(n)) else host._gids   # None: the same
        #: ``(time, rank, number)`` of the next event, None for none.
        self.head = None
        self._room_needed = self.room()

    def room(self) -> int:
        """The free rows and calendar entries an event may need (a data hop: one
        each)."""
        return 2

    # -- what the host calls --------------------------------------------------------
    @staticmethod
    def takes(kind: str, dst: int) -> bool:
        """Whether a control packet of type ``kind`` to ``dst`` goes through the loop
        (:meth:`file`): none here."""
        return False

    @staticmethod
    def takes_timer(tag) -> bool:
        """Whether a protocol's timer ``tag`` is the loop's to fire (:meth:`file_timer`):
        none here."""
        return False

    def file_data(self, t: float, seq: int, msg, u: int, v: int, hops: int, rank: int,
                  at_source: bool) -> None:
        """The data packet (or notice) ``msg`` leaves ``u`` for ``v`` at ``t``, its
        ``hops``-th hop, in the host's event number ``seq`` (the one being processed);
        or, with ``v`` -1, is ready at its source ``u`` (``at_source``: released after
        a discovery, or a notice made there), ``hops`` taken so far, as event
        ``seq``."""
        self._make_room()
        pos, ledger = self.host._gpos, self.host.ledger
        if msg.msg_id < 0:   # a notice (control ids are negative): a control kind (-1)
            type_, kind = self.notice_type, -1
        else:
            type_, kind = DATA, 0 if ledger is None else ledger.kind_code(msg.kind)
        file_data(t, pos[u], seq, msg.msg_id, -1 if v < 0 else pos[v], pos[msg.src],
                  pos[msg.dst], hops, msg.size_bytes, msg.size_units, kind, msg.sent_at,
                  int(at_source), type_, *self.calendar, self.ints, self.refs,
                  self.free_rows, self.packets, self.units, self.sent_at)
        self._data[msg.msg_id] = msg
        self._filed((t, rank, seq))

    def take_sends(self, sends, rank: int) -> None:
        """Take the host's queue of sends (``(time, rank, number, message, source)`` in
        order, emptied): each is an event here, in the same order."""
        pos, ledger = self.host._gpos, self.host.ledger
        data, kinds = self._data, {}
        rows = []
        for t, _, seq, msg, _ in sends:
            kind = kinds.get(msg.kind)
            if kind is None:
                kind = kinds[msg.kind] = 0 if ledger is None else ledger.kind_code(msg.kind)
            rows.append((t, msg.size_units, seq, msg.msg_id, pos[msg.src], pos[msg.dst],
                         msg.size_bytes, kind))
            data[msg.msg_id] = msg
        sends.clear()
        if rows:
            data.objects_sent()
            taken = np.array(rows, dtype=object).T
            self._queue_sends(taken[:2].astype(float), taken[2:].astype(np.int64))
        self.head = self._head(rank)

    def take_send_arrays(self, seqs: np.ndarray, msg_id: np.ndarray, src: np.ndarray,
                         dst: np.ndarray, sent_at: np.ndarray,
                         size_bytes: np.ndarray, rank: int) -> None:
        """Take data messages of one unit the host sent as arrays (ids for nodes,
        numbered ``seqs``, in order), as :meth:`take_sends` takes a queue of them,
        without a message object: one is made only if Python needs it
        (:class:`SentMessages`), and their deliveries are handed over as ids and times
        (the host's ``framed_arrivals``)."""
        host = self.host
        gids = host._gids
        kind = 0 if host.ledger is None else host.ledger.kind_code("data")
        by_id = np.argsort(gids)   # a node's position: where its id is in gids
        table = np.array([seqs, msg_id, by_id[np.searchsorted(gids, src, sorter=by_id)],
                          by_id[np.searchsorted(gids, dst, sorter=by_id)], size_bytes,
                          np.full(len(seqs), kind)], np.int64)
        self._queue_sends(np.array([sent_at, np.ones(len(seqs))], float), table)
        self._data.add_arrays(msg_id, src, dst, sent_at, size_bytes)
        self.head = self._head(rank)

    def _queue_sends(self, floats: np.ndarray, table: np.ndarray) -> None:
        """Sends (``sends_floats``' and ``sends_ints``' rows, in order) after those not
        taken yet, all in ``(time, number)`` order."""
        ints = self.ints
        at, end = int(ints[SENDS_AT]), int(ints[SENDS_END])
        kept = end - at
        if kept:
            floats = np.concatenate([self.sends_floats[:, at:end], floats], axis=1)
            table = np.concatenate([self.sends_ints[:, at:end], table], axis=1)
            if (floats[0, kept], table[0, kept]) < (floats[0, kept - 1],
                                                    table[0, kept - 1]):
                # sent before the last of those still here: in (time, number) order
                order = np.lexsort((table[0], floats[0]))
                floats, table = floats[:, order], table[:, order]
        # In C order whatever the caller's layout (a transposed table, a column gather is
        # F-ordered): the compiled loops take them, and numba compiles a loop again,
        # some 50 s for AODV's, for each layout it meets.
        self.sends_floats = np.ascontiguousarray(floats)
        self.sends_ints, self._kept = np.ascontiguousarray(table), None
        ints[SENDS_AT], ints[SENDS_END] = 0, floats.shape[1]

    def run(self, stop, until: float, rank: int) -> None:
        """Take the loop's events before the host's next one ``stop`` (``(time, rank,
        number, ...)``, None: none) and before ``until``; events the host's Python
        must see are handed to it on the way."""
        host, ints, floats = self.host, self.ints, self.floats
        stop_t, stop_rank, stop_seq = (math.inf, 0, 0) if stop is None else stop[:3]
        kernel = self.kernel
        while True:
            if host._view is None:   # none in force yet (or forgotten)
                host._alive_at(self.head[0], host._gids[0].item())
            floats[AV_START], floats[AV_END] = host._v_start, host._v_end
            ints[SEQ], ints[NEXT_ID], ints[DRAWN], ints[UNRESOLVED] = (
                host._seq, host._next_control_id, host._drawn, host._unresolved)
            code = kernel(stop_t, stop_rank, stop_seq, until, rank, *self._arguments())
            (heap, host._seq, host._next_control_id, host._drawn, staged, lost, dead,
             expired, arrived, firsts, dropped, ctrl_broken, ctrl_unrouted, at,
             end) = ints[:_READ].tolist()
            host._staged = staged > 0
            if lost or dead or expired or ctrl_broken or ctrl_unrouted:
                self._count_losses()
            if arrived or firsts or dropped:
                self._arrived()
            if code == IDLE:
                self.head = self._head(rank, heap, at, end)
                return
            if code == NEED_READY_VIEW:
                self._ready_view(floats[ASK].item())
            elif code == NEED_ROOM:
                self.hand_over()
                self._make_room()
            elif code == NEED_FRAME_UNIFORMS:
                host._refill_pool()
            elif code == NEED_FRAME_ALIVE:
                row = ints[CURRENT_ROW]
                host._alive_at(floats[ASK].item(),
                               host._gids[self.packets[row, RECEIVER]].item())
            elif code == NEED_FAN_ALIVE:
                host._alive_at(self.fan.ask_time(),
                               host._gids[ints[CURRENT_NODE]].item())
            elif code == NEED_FAN_UNIFORMS:
                host._drawn = self.fan.taken()
                host._refill_pool()
                self.fan.restart_pool()
            elif code < FIRST_OWN_CODE or not self._asked(code):
                self._in_python(code)   # Python files something: it may come first
                break
        self.head = self._head(rank)

    def forget_views(self) -> None:
        """The network's views were rebuilt (nodes died): so are the ready views'
        arrays."""
        self._views.clear()
        self._forget_ready_view()

    def hand_over(self) -> None:
        """The transmissions staged so far into the host's control log (control
        packets') and ledger, in order: the host calls this before it logs one of its
        own, and when its advance returns."""
        ints, host = self.ints, self.host
        count = ints.item(STAGED)
        host._staged = False
        if not count:
            return
        ints[STAGED] = 0
        host.hops += count
        staged = self.out_ints[:, :count]
        gids = self._gids
        if gids is not None:   # a broadcast's receiver stays -1
            staged = staged.copy()
            for field in (0, 3, 6, 7):
                staged[field] = np.where(staged[field] < 0, staged[field],
                                         gids[np.maximum(staged[field], 0)])
        floats = self.out_floats[:, :count]
        # the control packets' rows (a data packet's type is DATA, negative)
        host.control_log.extend(floats[0], staged[0], staged[5], staged[2], self.TYPES)
        if host.ledger is not None:
            _ledger_rows(host.ledger, floats, staged)

    # -- what run hands over ----------------------------------------------------------
    def _filed(self, key: tuple) -> None:
        if self.head is None or key < self.head:
            self.head = key

    def _head(self, rank: int, heap: int | None = None, at: int = 0, end: int = 0):
        """``(time, rank, number)`` of the next event, the calendar's, the next send's
        or the next timer's, None for none (``heap``, ``at``, ``end``: ``ints``'
        HEAP_SIZE, SENDS_AT and SENDS_END, if read already)."""
        if heap is None:
            read = self.ints[:_READ].tolist()   # a slice: fancy indexing costs more
            heap, at, end = read[HEAP_SIZE], read[SENDS_AT], read[SENDS_END]
        send = (None if at == end else
                (self.sends_floats.item(0, at), rank, self.sends_ints.item(0, at)))
        event = send
        if heap:
            filed = (self.calendar.time.item(0), rank, self.calendar.seq.item(0))
            event = filed if send is None or filed < send else send
        if not self.timer_state.item(0):
            return event
        timer = (self.timers.time.item(0), _TIMER, self.timers.seq.item(0))
        return timer if event is None or timer < event else event

    def _arrived(self) -> None:
        """The packets delivered and the data packets the loop dropped
        (:func:`drop_here`) since the last call, into the host's books in the order they
        were staged (as its ``_after_hop`` books an arrival and its ``drop`` a drop), at
        once: what its timers ask (``_unresolved``) stays in step, and what the sources
        learn (a drop at the source, a notice arrived) is in the run's order; and the
        flows' first waits, in the order found."""
        ints, host, data = self.ints, self.host, self._data
        count, notices, dropped = (ints.item(N_ARRIVED), ints.item(N_NOTICES),
                                   ints.item(N_DROPS))
        drops = (list(zip(*self.drop_ids[:, :dropped].tolist(),
                          self.drops_at[:dropped].tolist())) if dropped else ())
        taken, arrivals, nodes = host._taken, host.arrivals, self._ids
        # data sent as arrays arrives into the host's lists, without a message object
        arrays, (framed_ids, framed_times) = data.arrays, host.framed_arrivals
        d = 0
        for k, (t, msg_id) in enumerate(zip(self.arrived_at[:count].tolist(),
                                            self.arrived_ids[:count].tolist())):
            while d < len(drops) and drops[d][3] <= k:   # staged before this arrival
                self._book_drop(*drops[d])
                d += 1
            taken.pop(msg_id, None)
            if msg_id < 0:   # a notice (control ids are negative): its packet's source
                notice = data.pop(msg_id).payload   # learns
                host.losses.append((t, notice.packet, notice.reason, notice.src))
            elif arrays:
                framed_ids.append(msg_id)
                framed_times.append(t)
                data.discard(msg_id)   # made into an object on the way, if it was
            else:
                arrivals.append((t, data.pop(msg_id)))
        for drop in drops[d:]:
            self._book_drop(*drop)
        host._unresolved -= count - notices
        ints[N_ARRIVED] = ints[N_NOTICES] = ints[N_DROPS] = 0
        count = ints.item(N_FIRST)
        if count:
            waits = host.first_waits
            for u, dst, wait in zip(*self.first_flows[:, :count].tolist(),
                                    self.first_waits[:count].tolist()):
                waits[nodes[u], nodes[dst]] = wait
            ints[N_FIRST] = 0

    def _book_drop(self, msg_id: int, u: int, notice: int, _, reason: int,
                   t: float) -> None:
        """A data packet dropped at node position ``u`` at ``t`` for ``reason``
        (:func:`drop_here`), into the host's books, with the notice it made (0: none)."""
        host, node, why = self.host, self._ids[u], DROP_REASONS[reason]
        msg = self._data.pop(msg_id)
        host.booked_drop(t, node, msg, why)
        if notice:
            self._data[notice] = host.notice(t, node, msg, why, notice)

    def _count_losses(self) -> None:
        """The control packets lost since the last call, into the host's counts at once
        (the order their reasons first appear is the order of the run's figures)."""
        ints, host = self.ints, self.host
        for field, reason in ((N_LOST, "link_loss"), (N_DEAD, "dead_node"),
                              (N_EXPIRED, "queue_expired"),
                              (N_CTRL_LINK_BREAK, "link_break"),
                              (N_CTRL_NO_ROUTE, "no_route")):
            if ints[field]:
                host.control_lost[reason] += int(ints[field])
                ints[field] = 0

    def _asked(self, code: int) -> bool:
        """A protocol's own question (``code``) answered: True; False for anything
        Python is to do (:meth:`_in_python`). None here."""
        return False

    def _in_python(self, code: int) -> None:
        """What the loop hands to the host's Python: a unicast whose sender's MAC failed
        now (no link) or will learn it failed at its arrival; a data packet that
        waited too long for its link, or that the host's Python forwards (or drops)
        from here."""
        host, ints, nodes = self.host, self.ints, self._ids
        # the current row was let go, but nothing has taken it since
        row, t = int(ints[CURRENT_ROW]), self.floats[CURRENT_T].item()
        u = nodes[ints[CURRENT_NODE]]
        if self.packets[row, TYPE] in (DATA, self.notice_type):
            msg = self._data.pop(self.packets[row, MSG_ID].item())
        else:
            msg = self._message(row)
        v = nodes[self.packets[row, RECEIVER]]
        if code == MAC_NOW:
            host.mac_failed(t, u, msg, v, "link_break")
        elif code == MAC_LATER:   # at the arrival, with the number kept for it
            host.mac_fails(self.floats[ARRIVE].item(), int(ints[MAC_SEQ]), u, msg, v,
                           "link_loss" if ints[DROPPED] else "link_break")
        elif code == DATA_EXPIRED:
            host.drop(t, u, msg, "queue_expired")
        elif code == DATA_IN_PYTHON:   # as the host's Python would have it here
            hops = self.packets[row, HOPS].item()
            if hops:
                host._taken[msg.msg_id] = hops
            host._forward(t, int(ints[CURRENT_SEQ]), msg, u, host.network.view_span(t)[0])
        else:
            raise ValueError(f"a compiled loop returned {code}, which nothing answers")

    def _message(self, row: int):
        """A control packet's row as the host's message (a protocol's)."""
        raise NotImplementedError

    # -- arguments, room and views ------------------------------------------------------
    def _arguments(self) -> tuple:
        """The kernel's arguments after the stop (:meth:`_gather`), gathered again only
        when one of them is another array (room grown, another view, uniforms refilled,
        or :meth:`_kept_too`'s): about 2 us a call to gather, against some 10^5
        calls."""
        host, kept = self.host, self._kept
        alive, pool, too = host._alive_array(), host._pool, self._kept_too()
        if kept is None or kept[0] is not alive or kept[1] is not pool or \
                any(a is not b for a, b in zip(kept[2], too)):
            self._kept = (alive, pool, too)
            self._args = self._gather()
        return self._args

    def _kept_too(self) -> tuple:
        """The protocol's arrays that may be made anew between calls."""
        return ()

    def _gather(self) -> tuple:
        """The kernel's arguments after the stop (a protocol's)."""
        raise NotImplementedError

    def _row_arrays(self) -> tuple:
        """The arrays by row (grown together); a protocol's may add its own."""
        return (self.packets, self.refs, self.units, self.sent_at)

    def _set_row_arrays(self, arrays: tuple) -> None:
        self.packets, self.refs, self.units, self.sent_at = arrays

    def _make_room(self) -> None:
        """Twice the room wherever less than an event may need is left (:meth:`room`;
        the staged rows were handed over)."""
        room, ints = self._room_needed, self.ints
        while len(self.calendar.time) - ints[HEAP_SIZE] < room:
            size = int(ints[HEAP_SIZE])
            bigger = new_calendar(2 * len(self.calendar.time))
            for old, new in zip(self.calendar, bigger):
                new[:size] = old[:size]
            self.calendar, self._kept = bigger, None
        while ints[ROWS_FREE] < room:
            *arrays, self.free_rows = doubled(self._row_arrays(), self.free_rows, ints,
                                              ROWS_FREE)
            self._set_row_arrays(tuple(arrays))
            self._kept = None
        while ints[GROUPS_FREE] < room:
            self.groups, self.group_len, self.free_groups = doubled(
                (self.groups, self.group_len), self.free_groups, ints, GROUPS_FREE)
            self._kept = None
        while len(self.timers.time) - self.timer_state[0] < room:
            self.timers = grown_calendar(self.timers, int(self.timer_state[0]))
            self._kept = None

    def _forget_ready_view(self) -> None:
        self.floats[RV_START], self.floats[RV_END] = math.inf, -math.inf
        self._kept = None
        n = self.n
        self._ready = (np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n),
                       np.zeros(n), np.zeros(n, np.bool_), np.zeros(1, np.int64),
                       np.zeros((5, 1)), np.zeros(1))

    def _ready_view(self, t: float) -> None:
        """The view in force at ``t`` as a kernel reads a sender's: by position, its
        links' first and last (in the view's arrays), their least bandwidth and
        greatest cost, whether it is up; the links' receivers and attributes."""
        host = self.host
        view, start, end = host.network.view_span(t)
        found = self._views.get(start)
        if found is None:
            head, attrs = host._links_of(view)
            where = np.array([host._gpos[v] for v in view.nodes], np.int64)
            starts = view.link_starts()
            first, last = np.zeros(self.n, np.int64), np.zeros(self.n, np.int64)
            first[where], last[where] = starts[:-1], starts[1:]
            bandwidths, costs, _ = view.out_extremes()
            least, dearest = np.full(self.n, math.inf), np.zeros(self.n)
            least[where], dearest[where] = bandwidths, costs
            alive = view._alive_map
            up = np.array([alive.get(v, False) for v in host._gids.tolist()], np.bool_)
            link_costs = np.asarray(view.hop_lists()[1], float)
            found = (first, last, least, dearest, up, head, attrs, link_costs)
            if len(self._views) > 2:
                del self._views[next(iter(self._views))]
            self._views[start] = found
        self._ready, self._kept = found, None
        self.floats[RV_START], self.floats[RV_END] = start, end


def _ledger_rows(ledger, floats, staged) -> None:
    """Staged transmissions' ledger rows (``floats``: start, cost, size in units;
    ``staged``: :data:`STAGED_INTS`, ids for nodes), as the host's Python writes them:
    a broadcast's ``hop_v = dst = -1``, costed at its dearest link; a control packet's
    kind ``"routing"``."""
    count = floats.shape[1]
    out_floats, out_ints, at = ledger.reserve(count)
    rows = slice(at, at + count)
    out_floats[0, rows], out_floats[1, rows], out_floats[2, rows] = (
        floats[0], floats[2], floats[1])
    out_ints[0, rows] = staged[1]
    kinds = staged[8]
    out_ints[1, rows] = (np.where(kinds < 0, ledger.kind_code("routing"), kinds)
                         if kinds.min() < 0 else kinds)
    out_ints[2, rows], out_ints[3, rows] = staged[6], staged[7]
    out_ints[4, rows], out_ints[5, rows] = staged[0], staged[3]
    out_ints[6, rows], out_ints[7, rows] = staged[2], staged[4]


def doubled(arrays, free, ints, free_field):
    """``arrays`` (by row) with twice the rows, then the free list with the new ones
    free."""
    size = len(free)
    grown = [np.concatenate([a, np.zeros_like(a)]) for a in arrays]
    count = int(ints[free_field])
    bigger = np.zeros(2 * size, np.int64)
    bigger[:size] = np.arange(2 * size - 1, size - 1, -1)
    bigger[size:size + count] = free[:count]
    ints[free_field] = count + size
    return (*grown, bigger)
