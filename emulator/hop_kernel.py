"""The links medium's hop loop, compiled: numba over flat arrays.

The loop of :class:`emulator.links.CompiledLinks`, which owns the arrays and speaks to the
rest of the emulator in Python objects. Everything here is a number: nodes are dense
indices, messages numbers, the calendar a binary heap of ``(time, number)`` keys beside a
queue of sends already in time order, the epoch in force its links as arrays and its
next-hop tables as rows of a matrix, a link's queue its free time in an array indexed by
the link's number for the run (a typed dictionary keyed by the pair cost 0.35 us a look-up
and update, the array 3 ns).

The kernel stops and returns a reason whenever it needs something only Python has, with
nothing of the hop at hand done yet (the entry stays on the calendar, the draws are not
taken), so the caller fetches it and calls again, and the hop runs as if it had never
stopped: the epoch of the next event (:data:`NEED_EPOCH`), a destination's next-hop table
in this epoch (:data:`NEED_ROUTE`), more uniform draws (:data:`NEED_UNIFORMS`: the same
seeded stream, in the same order), whether a receiver is up when a hop arrives after the
epoch ends (:data:`NEED_ALIVE`), or room in the calendar or the output arrays
(:data:`FULL`). Each stop costs a few microseconds; they come per epoch and destination,
per 4,096 draws and per few thousand hops.

The loops are compiled without numba's reference counting (``_nrt=False``, an option of
the pinned numba): with it, every array taken out of a named tuple (the epoch's, the
calendar's, the outputs') was counted in and out at each hop, atomically, and that was
three quarters of the loop (481 ns a hop, 97 ns without, on ``bench_emulator``'s
network). The price: nothing is allocated inside; what a loop works in comes from
Python (an epoch's ``work`` to build a tree in, the shared medium's :class:`Marks`).

Example: one message from node 0 to node 2 over the line 0-1-2 (four directed links, delay
0.1, no bandwidth limit): the kernel first asks for the epoch, then for the next-hop
table towards node 2; given both, it runs to the end.

>>> import numpy as np
>>> cal = new_calendar(4)
>>> state, clock = new_state()
>>> calendar_push(cal, state, 0.0, READY + 1, 0, 0)   # message 0 ready at node 0 at 0.0
>>> sends = (np.empty(0), *[np.empty(0, np.int64)] * 3)
>>> links = ([0, 1, 1, 2], [1, 0, 2, 1])          # tails and heads, by position
>>> epoch = Epoch(0.0, np.inf, np.ones(3, np.bool_), np.arange(3), np.array(links[1]),
...               np.ones(4), np.full(4, 0.1), np.zeros(4), np.full(4, np.inf),
...               np.zeros(4), np.zeros(4), np.zeros(4),
...               np.array([-1, -1, 0]), np.array([[0, 2, -1]], np.int32),   # 0: link 0, 1: 2
...               np.inf, np.ones(3, np.bool_), np.arange(4),
...               np.array([0, 1, 3, 4]), np.array(links[1]), np.array([-1]),  # no trees here
...               new_work(0))
>>> out = new_outputs(8)
>>> run(np.inf, cal, *sends, state, clock, np.array([2]), np.array([50]), epoch,
...     new_link_times(4), new_link_times(4), False, np.empty(0), out, np.inf) == DONE
True
>>> int(state[N_HOPS]), float(out.arr_time[0]), out.hop_v[:2].tolist()
(2, 0.2, [1, 2])
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from emulator.route_kernel import _search, workspace

# -- why the kernel stopped -------------------------------------------------------------
DONE, NEED_EPOCH, NEED_ROUTE, NEED_UNIFORMS, NEED_ALIVE, FULL, NEED_ZONES = range(7)

# -- loss reasons, as :attr:`emulator.transport.Transport.lost` names them -----------------
DEAD_NODE, NO_ROUTE, LINK_LOSS, QUEUE_EXPIRED = range(4)
REASONS = ("dead_node", "no_route", "link_loss", "queue_expired")

# -- the kernel's integer state (one int64 array, kept between calls) ---------------------
(HEAP_SIZE, SENDS_TAKEN, SENDS_END, SEQ, UNIFORMS_TAKEN, N_HOPS, N_ARRIVALS, N_LOSSES,
 ASK_NODE, HINT_NODE, HINT_ALIVE, WAITING, INSTANT_OPEN, GRANT_FROM, GRANT_GONE) = range(15)
# (GRANT_FROM: the waiting hops the last grant judged, all of them held back, and that
# are held back still until a transmission ends; -1 when they must be judged again.
# GRANT_GONE: how many of them are marked as gone, see _grant.)
# ... and its float state (one float64 array): the time of a question (an epoch, a
# liveness, zones), the time the answer given to NEED_ALIVE holds for, and the instant
# whose events the shared medium is processing
ASK_TIME, HINT_TIME, INSTANT = range(3)

#: A hop ready at a node sorts after a transmission ending at the same time: the
#: calendar's number of a ready hop is ``READY + seq``, of an ending one ``seq`` (the
#: links medium has only ready hops).
READY = 1 << 62

#: A directed link's key: ``u * LINK_KEY + v`` (dense indices), numbered once for the
#: whole run (:class:`emulator.links.LinkNumbers`) so its queue outlives the epoch.
LINK_KEY = 1 << 32

#: The calendar: a binary heap of hops ready at a node, keyed by ``(time, seq)``.
Calendar = namedtuple("Calendar", "time seq msg node")
#: The epoch in force: its span, node and link arrays, its next-hop tables (row
#: ``route_row[dst]`` of ``routes``, indexed by the node's position in the epoch; -1 in
#: ``route_row``: not fetched yet), and which nodes are up in the next epoch, up to
#: ``next_end`` (a hop that ends after its epoch asks no question then); ``link`` numbers
#: each directed link for the run's link arrays (``link_free``, ``link_last``). With
#: ``trees`` (the epoch's costs are positive: :meth:`emulator.network.NetView._prepare`)
#: the kernel builds a missing table itself, over the links by position (``starts``,
#: ``head_pos``, ``cost``), into the next free row of ``routes`` (``trees[0]`` of them
#: used), as :func:`emulator.route_kernel.tree` builds the view's, in ``work`` (its cost
#: and table as long as the epoch's nodes, then a :func:`emulator.route_kernel.workspace`).
Epoch = namedtuple("Epoch", "start end alive pos head cost delay jitter bandwidth loss "
                            "ber length route_row routes next_end next_alive link "
                            "starts head_pos trees work")
#: The shared medium's hops waiting for the channel, in the order they became ready:
#: message, sender, link (in its epoch, and its number for the run), receiver, the
#: start of the epoch it was ready in, its link's attributes, and when it became ready.
Waiting = namedtuple("Waiting", "msg u k link v epoch cost delay jitter bandwidth loss ber "
                                "length ready")
#: Interference zones of a few epochs, one slot each: ``key`` the epoch's start (nan:
#: free), per node ``row`` into ``starts`` (-1: a zone of itself alone), the nodes of
#: its zone besides itself in ``members[starts[row]:starts[row + 1]]``.
Zones = namedtuple("Zones", "key row starts members")
#: Per node, how many transmissions in progress it is an endpoint of (``busy``), and a
#: grant's scratch: whether it is covered by a waiting hop's zone, and the zone slot it
#: was covered from (-1: none).
Marks = namedtuple("Marks", "busy covered zone_covered")
#: What the kernel decided since the caller last emptied it: hops (the ledger's and the
#: batteries' rows), deliveries and losses.
Outputs = namedtuple("Outputs", "hop_start hop_msg hop_u hop_v hop_cost hop_length "
                                "hop_lost hop_heard arr_time arr_msg loss_time loss_msg "
                                "loss_reason loss_node")


def new_calendar(capacity: int) -> Calendar:
    """An empty calendar with room for ``capacity`` entries."""
    return Calendar(np.empty(capacity), np.empty(capacity, np.int64),
                    np.empty(capacity, np.int64), np.empty(capacity, np.int64))


def grown_calendar(cal: Calendar, size: int) -> Calendar:
    """``cal`` with twice the room, its first ``size`` entries kept."""
    bigger = new_calendar(2 * len(cal.time))
    for old, new in zip(cal, bigger):
        new[:size] = old[:size]
    return bigger


def new_state() -> tuple[np.ndarray, np.ndarray]:
    """The kernel's integer and float state: all zero, and no NEED_ALIVE answer given."""
    state = np.zeros(15, np.int64)
    state[HINT_NODE] = state[GRANT_FROM] = -1
    return state, np.zeros(3)


def new_waiting(capacity: int) -> Waiting:
    """Room for ``capacity`` hops waiting for the shared channel."""
    i, f = np.int64, np.float64
    return Waiting(*(np.empty(capacity, dtype) for dtype in (i, i, i, i, i, f, f, f, f, f,
                                                              f, f, f, f)))


def grown_waiting(waiting: Waiting, size: int) -> Waiting:
    """``waiting`` with twice the room, its first ``size`` entries kept."""
    bigger = new_waiting(2 * len(waiting.msg))
    for old, new in zip(waiting, bigger):
        new[:size] = old[:size]
    return bigger


def new_outputs(capacity: int) -> Outputs:
    """Output arrays for ``capacity`` hops (and as many deliveries and losses)."""
    f, i = np.float64, np.int64
    return Outputs(np.empty(capacity, f), np.empty(capacity, i), np.empty(capacity, i),
                   np.empty(capacity, i), np.empty(capacity, f), np.empty(capacity, f),
                   np.empty(capacity, np.bool_), np.empty(capacity, np.bool_),
                   np.empty(capacity, f),
                   np.empty(capacity, i), np.empty(capacity, f), np.empty(capacity, i),
                   np.empty(capacity, np.int8), np.empty(capacity, i))


def new_work(nodes: int) -> tuple:
    """An epoch's ``work``: room to build a tree over ``nodes`` nodes in (its cost and
    table, then a :func:`emulator.route_kernel.workspace`); ``new_work(0)`` when the
    epoch's trees are all at hand."""
    return (np.empty(nodes), np.empty(nodes, np.int64), *workspace(nodes))


def new_marks(nodes: int) -> Marks:
    """:class:`Marks` for ``nodes`` nodes, none busy."""
    return Marks(np.zeros(nodes, np.int64), np.zeros(nodes, np.bool_),
                 np.full(nodes, -1, np.int64))


#: The run's link numbers: an open-addressing hash table of link keys (-1: a free slot)
#: and their numbers, its size a power of two.
LinkTable = namedtuple("LinkTable", "key number")


def new_link_table(size: int) -> LinkTable:
    """An empty :class:`LinkTable` of at least ``size`` slots."""
    size = 1 << max(4, int(size - 1).bit_length())
    return LinkTable(np.full(size, -1, np.int64), np.empty(size, np.int64))


def grown_link_table(table: LinkTable, links: int) -> LinkTable:
    """``table``'s links in a table with room for ``links`` at most half full."""
    used = table.key >= 0
    keys, numbers = table.key[used], table.number[used]
    grown = new_link_table(4 * links)
    order = np.argsort(numbers)
    number_links(grown, keys[order], 0, np.empty(len(keys), np.int64))
    return grown


@njit(cache=True, _nrt=False)
def number_links(table, keys, count, out):
    """Each of ``keys``' number into ``out``: the one it has in ``table``, or for a key
    not met before the next after ``count`` (in order), entered into the table; returns
    the new count. The caller keeps the table at most half full.

    >>> table, out = new_link_table(16), np.empty(3, np.int64)
    >>> number_links(table, np.array([7, 3, 7]), 0, out), out.tolist()
    (2, [0, 1, 0])
    """
    mask = np.uint64(len(table.key) - 1)
    for i in range(len(keys)):
        key = keys[i]
        # Fibonacci hashing: the high bits of the key times 2^64 / golden ratio
        slot = np.int64(((np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(32))
                        & mask)
        while True:
            held = table.key[slot]
            if held == key:
                out[i] = table.number[slot]
                break
            if held < 0:
                table.key[slot], table.number[slot] = key, count
                out[i] = count
                count += 1
                break
            slot = (slot + 1) & np.int64(mask)
    return count


def new_link_times(links: int = 0) -> np.ndarray:
    """Per link number, a time not yet set (a link's free time, or its last arrival):
    -inf, which every hop's own time beats."""
    return np.full(links, -np.inf)


@njit(cache=True, inline="always")
def calendar_push(cal, state, t, seq, msg, node):
    """Put message ``msg`` ready at ``node`` at ``t`` (number ``seq``) on the calendar;
    the caller has made room."""
    i = state[HEAP_SIZE]
    state[HEAP_SIZE] = i + 1
    time, seqs, msgs, nodes = cal
    while i > 0:   # sift up
        parent = (i - 1) >> 1
        if time[parent] < t or (time[parent] == t and seqs[parent] < seq):
            break
        time[i], seqs[i], msgs[i], nodes[i] = (time[parent], seqs[parent], msgs[parent],
                                               nodes[parent])
        i = parent
    time[i], seqs[i], msgs[i], nodes[i] = t, seq, msg, node


@njit(cache=True, inline="always")
def _calendar_pop(cal, state):
    """Drop the calendar's first entry."""
    n = state[HEAP_SIZE] - 1
    state[HEAP_SIZE] = n
    time, seqs, msgs, nodes = cal
    t, seq, msg, node = time[n], seqs[n], msgs[n], nodes[n]   # the last, sifted down
    i = 0
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        right = child + 1
        if right < n and (time[right] < time[child] or
                          (time[right] == time[child] and seqs[right] < seqs[child])):
            child = right
        if t < time[child] or (t == time[child] and seq < seqs[child]):
            break
        time[i], seqs[i], msgs[i], nodes[i] = (time[child], seqs[child], msgs[child],
                                               nodes[child])
        i = child
    if n > 0:
        time[i], seqs[i], msgs[i], nodes[i] = t, seq, msg, node


@njit(cache=True, _nrt=False)
def run(until, cal, send_time, send_seq, send_msg, send_node, state, clock, msg_dst,
        msg_bytes, epoch, link_free, link_last, reorder, uniforms, out, max_wait):
    """Process every hop ready before ``until`` in ``(time, seq)`` order; returns why it
    stopped (:data:`DONE` when nothing is left before ``until``).

    The hop's steps and draws are those of the module docstring of
    :mod:`emulator.transport`, in its order: wait for the link, serialize, propagate with
    a jitter draw, a loss draw, and the receiver's liveness at the arrival. A hop that
    would wait longer than ``max_wait`` for its link is lost as it joins the queue
    (:data:`QUEUE_EXPIRED`; the queue is first in first out, so its wait is known then).
    """
    while True:
        found, from_sends, t, _, m, u = _peek(cal, send_time, send_seq, send_msg,
                                              send_node, state)
        if not found or t >= until:
            return DONE
        # room for what this hop may write: a hop row, a delivery or loss, an entry
        if not _room(out, state, cal, 1):
            return FULL
        reason, k = _ready(t, m, u, cal, state, clock, msg_dst, epoch, out, from_sends)
        if reason != DONE:
            return reason
        if k < 0:   # delivered to itself, or lost
            continue
        link = epoch.link[k]
        start = link_free[link]
        if start < t:
            start = t
        elif start - t > max_wait:   # it would leave the queue too late: refused
            _take(cal, state, from_sends)
            _lose(out, state, t, m, QUEUE_EXPIRED, u)
            continue
        reason, done = _transmit(start, m, u, k, epoch.link[k], epoch.head[k],
                                 epoch.cost[k], epoch.delay[k], epoch.jitter[k],
                                 epoch.bandwidth[k], epoch.loss[k], epoch.ber[k],
                                 epoch.length[k], cal, state, clock, msg_dst, msg_bytes,
                                 epoch, link_last, reorder, uniforms, out, from_sends, 1)
        if reason != DONE:
            return reason
        link_free[link] = done


@njit(cache=True, _nrt=False)
def run_shared(until, cal, send_time, send_seq, send_msg, send_node, state, clock, msg_dst,
               msg_bytes, epoch, link_last, reorder, uniforms, out, waiting, zones,
               by_radius, marks, max_wait):
    """:func:`run` on the shared medium: every event of an instant (transmissions
    ending first, then hops ready, which join the waiting ones), then the channel
    granted (:func:`_grant`) if a transmission waits; returns why it stopped.

    ``waiting`` holds the hops waiting for the channel in the order they became ready
    (``state[WAITING]`` of them), each with its link's attributes and the epoch whose
    neighbours make its zones; ``zones`` the zones of a few epochs (one per epoch the
    waiting hops came from, or with ``by_radius`` the epoch of the grant); ``marks`` per
    node the transmissions in progress it is an endpoint of (:class:`Marks`); a hop
    that has waited longer than ``max_wait`` when the channel would start it is lost
    instead (:func:`_grant`).
    """
    while True:
        found, from_sends, t, key, m, u = _peek(cal, send_time, send_seq, send_msg,
                                                send_node, state)
        if state[INSTANT_OPEN]:
            instant = clock[INSTANT]
            if not found or t != instant:   # the instant is over: grant the channel
                if state[WAITING]:
                    reason = _grant(instant, cal, state, clock, msg_dst, msg_bytes, epoch,
                                    link_last, reorder, uniforms, out, waiting, zones,
                                    by_radius, marks, max_wait)
                    if reason != DONE:
                        return reason
                state[INSTANT_OPEN] = 0
                continue
        elif not found or t >= until:
            return DONE
        else:
            state[INSTANT_OPEN], clock[INSTANT] = 1, t
        if not _room(out, state, cal, 1):
            return FULL
        if key < READY:   # a transmission ends: u and v (held in its entry) are free
            _take(cal, state, from_sends)
            marks.busy[m] -= 1
            marks.busy[u] -= 1
            state[GRANT_FROM] = -1   # what it held back may start now: judge all again
            continue
        if state[WAITING] == len(waiting.msg):
            return FULL
        reason, k = _ready(t, m, u, cal, state, clock, msg_dst, epoch, out, from_sends)
        if reason != DONE:
            return reason
        if k < 0:
            continue
        _take(cal, state, from_sends)
        i = state[WAITING]
        waiting.msg[i], waiting.u[i], waiting.k[i] = m, u, k
        waiting.v[i], waiting.link[i], waiting.epoch[i] = (epoch.head[k], epoch.link[k],
                                                           epoch.start)
        waiting.cost[i], waiting.delay[i], waiting.jitter[i] = (epoch.cost[k],
                                                                epoch.delay[k],
                                                                epoch.jitter[k])
        waiting.bandwidth[i], waiting.loss[i], waiting.ber[i], waiting.length[i] = (
            epoch.bandwidth[k], epoch.loss[k], epoch.ber[k], epoch.length[k])
        waiting.ready[i] = t
        state[WAITING] = i + 1


@njit(cache=True, _nrt=False)
def _grant(t, cal, state, clock, msg_dst, msg_bytes, epoch, link_last, reorder, uniforms,
           out, waiting, zones, by_radius, marks, max_wait):
    """Start every waiting transmission the conflict rule allows at ``t`` (the rule a
    routed run's channel applies too, :func:`emulator.routing.channel.scan`): in ready
    order, u -> v starts unless a transmission in progress has an endpoint in the zone
    of u or of v, or u or v lies in the zone of an earlier one still waiting. One
    allowed to start after waiting longer than ``max_wait`` is lost instead
    (:data:`QUEUE_EXPIRED`), and takes no airtime: as a Wi-Fi MAC drops an expired
    frame when it gets the channel.

    A stop (zones, draws, a liveness, room) leaves the ones not yet judged waiting;
    called again, the scan starts over, and decides as the whole scan would have: those
    started since are in progress, so whatever held a transmission before still holds
    it. A hop started is marked (``msg`` -1) where it stands; the list is compacted once
    half of it is marked.

    A whole scan leaves every hop it judged held back, and until a transmission ends
    they stay so: the transmissions in progress only grow, and the earlier hops whose
    zones hold them back are still waiting. So the next grant judges only the hops that
    became ready since (``state[GRANT_FROM]`` on), with the zones the held ones covered
    kept in ``marks``; an end, a stop, or the caller loading an epoch or zones (which
    sets ``GRANT_FROM`` to -1) makes the next grant judge them all again.
    """
    if by_radius and not epoch.start <= t < epoch.end:
        clock[ASK_TIME] = t   # radius zones follow the epoch of the grant (its loading
        return NEED_EPOCH     # makes the next grant judge every waiting hop)
    n = state[WAITING]
    busy, covered = marks.busy, marks.covered
    # per node, the zone slot whose zone of it is covered already (-1: none): the hops
    # queued at one sender, most of a long queue, cover the same zones
    zone_covered = marks.zone_covered
    i, gone, reason = state[GRANT_FROM], state[GRANT_GONE], DONE
    if i < 0:
        covered[:] = False
        zone_covered[:] = -1
        i, gone = 0, 0
    while i < n:
        if waiting.msg[i] < 0:   # started at an earlier grant (left in place, below)
            gone += 1
            i += 1
            continue
        key = epoch.start if by_radius else waiting.epoch[i]
        z = _zone_slot(zones, key)
        if z < 0:
            clock[ASK_TIME] = key
            reason = NEED_ZONES
            break
        u, v = waiting.u[i], waiting.v[i]
        if (covered[u] or covered[v] or _busy_near(zones, z, u, busy) or
                _busy_near(zones, z, v, busy)):
            for x in (u, v):
                if zone_covered[x] != z:
                    _cover(zones, z, x, covered)
                    zone_covered[x] = z
            i += 1
            continue
        if not _room(out, state, cal, 1):
            reason = FULL
            break
        if t - waiting.ready[i] > max_wait:
            _lose(out, state, t, waiting.msg[i], QUEUE_EXPIRED, u)
            waiting.msg[i] = -1
            gone += 1
            i += 1
            continue
        reason, done = _transmit(t, waiting.msg[i], u, waiting.k[i], waiting.link[i], v,
                                 waiting.cost[i], waiting.delay[i], waiting.jitter[i],
                                 waiting.bandwidth[i], waiting.loss[i], waiting.ber[i],
                                 waiting.length[i], cal, state, clock, msg_dst, msg_bytes,
                                 epoch, link_last, reorder, uniforms, out, False, 0)
        if reason != DONE:
            break
        busy[u] += 1
        busy[v] += 1
        state[SEQ] += 1
        calendar_push(cal, state, done, state[SEQ], v, u)   # its end frees v and u
        # A hop that starts is marked, not taken out: taking it out moved every hop
        # after it, and a saturated channel keeps thousands waiting behind the few
        # that start. The marked ones go when they are half of the list.
        waiting.msg[i] = -1
        gone += 1
        i += 1
    if reason != DONE:   # after a stop the scan starts over
        state[GRANT_FROM] = -1
        return reason
    if 2 * gone > n:
        state[WAITING] = n = _compact(waiting, n)
        gone = 0
    state[GRANT_FROM], state[GRANT_GONE] = n, gone
    return reason


@njit(cache=True, inline="always")
def _compact(waiting, n):
    """Move the first ``n`` waiting hops not marked gone (``msg`` -1) to the front, in
    order; how many there are."""
    kept = 0
    for j in range(n):
        if waiting.msg[j] >= 0:
            _move(waiting, j, kept)
            kept += 1
    return kept


@njit(cache=True, inline="always")
def _zone_slot(zones, key):
    """The slot of ``zones`` holding the zones of the epoch starting at ``key``, -1."""
    for z in range(len(zones.key)):
        if zones.key[z] == key:
            return z
    return -1


@njit(cache=True, inline="always")
def _busy_near(zones, z, x, busy):
    """Whether ``x`` or a node of its zone (slot ``z``) is in a transmission."""
    if busy[x]:
        return True
    row = zones.row[z, x]
    if row >= 0:
        for j in range(zones.starts[z, row], zones.starts[z, row + 1]):
            if busy[zones.members[z, j]]:
                return True
    return False


@njit(cache=True, inline="always")
def _cover(zones, z, x, covered):
    """Mark ``x`` and its zone (slot ``z``) covered."""
    covered[x] = True
    row = zones.row[z, x]
    if row >= 0:
        for j in range(zones.starts[z, row], zones.starts[z, row + 1]):
            covered[zones.members[z, j]] = True


@njit(cache=True, inline="always")
def _move(waiting, i, j):
    """Waiting entry ``i`` to place ``j`` (``j <= i``)."""
    if i != j:
        w = waiting
        w.msg[j], w.u[j], w.k[j], w.link[j], w.v[j] = w.msg[i], w.u[i], w.k[i], w.link[i], w.v[i]
        w.epoch[j], w.cost[j], w.delay[j], w.jitter[j] = (w.epoch[i], w.cost[i], w.delay[i],
                                                          w.jitter[i])
        w.bandwidth[j], w.loss[j], w.ber[j], w.length[j] = (w.bandwidth[i], w.loss[i],
                                                            w.ber[i], w.length[i])
        w.ready[j] = w.ready[i]


@njit(cache=True, inline="always")
def _peek(cal, send_time, send_seq, send_msg, send_node, state):
    """The next event, from the sends in order or the heap, by ``(time, seq)``:
    ``(found, from the sends, time, seq, message, node)``."""
    s, n = state[SENDS_TAKEN], state[HEAP_SIZE]
    if s < state[SENDS_END] and (n == 0 or send_time[s] < cal.time[0] or
                                 (send_time[s] == cal.time[0] and
                                  send_seq[s] < cal.seq[0])):
        return True, True, send_time[s], send_seq[s], send_msg[s], send_node[s]
    if n > 0:
        return True, False, cal.time[0], cal.seq[0], cal.msg[0], cal.node[0]
    return False, False, 0.0, 0, 0, 0


@njit(cache=True, inline="always")
def _room(out, state, cal, hops):
    """Room for ``hops`` hops' rows, deliveries or losses and two calendar entries each."""
    capacity = len(out.hop_start)
    return (state[N_HOPS] + hops <= capacity and state[N_ARRIVALS] + hops <= capacity and
            state[N_LOSSES] + hops <= capacity and
            state[HEAP_SIZE] + 2 * hops < len(cal.time))


@njit(cache=True, inline="always")
def _ready(t, m, u, cal, state, clock, msg_dst, epoch, out, from_sends):
    """Message ``m`` ready at ``u`` at ``t``: ``(DONE, k)`` with the link ``k`` of the
    epoch in force it takes next, or ``(DONE, -1)`` once delivered (to itself) or lost
    (``u`` down, no route), the event taken; or a stop, nothing done."""
    dst = msg_dst[m]
    if u == dst:   # sent to itself
        _take(cal, state, from_sends)
        _arrive(out, state, t, m)
        return DONE, -1
    if not epoch.start <= t < epoch.end:
        clock[ASK_TIME] = t
        return NEED_EPOCH, -1
    if not epoch.alive[u]:
        _take(cal, state, from_sends)
        _lose(out, state, t, m, DEAD_NODE, u)
        return DONE, -1
    row = epoch.route_row[dst]
    if row < 0:
        row = _build_route(epoch, dst)
        if row < 0:   # no room, or trees only networkx builds alike: the caller's
            state[ASK_NODE] = dst
            return NEED_ROUTE, -1
    k = epoch.routes[row, epoch.pos[u]]
    if k < 0:
        _take(cal, state, from_sends)
        _lose(out, state, t, m, NO_ROUTE, u)
        return DONE, -1
    return DONE, k


@njit(cache=True, _nrt=False)
def _build_route(epoch, dst):
    """The next-hop table towards ``dst`` (dense) into a free row of ``epoch.routes``;
    its row, or -1 when there is no free row or the epoch's trees are the caller's. Not
    inlined: it runs once per epoch and destination, and its search is large."""
    used = epoch.trees[0]
    if used < 0 or used == epoch.routes.shape[0]:
        return -1
    n = len(epoch.starts) - 1
    cost, table, parent, where, heap_cost, heap_node, lowered = epoch.work
    table[:] = -1
    d = epoch.pos[dst]
    if d >= 0:   # a node absent from the epoch's graph is reached by no route
        cost[:] = np.inf
        _search(d, epoch.starts, epoch.head_pos, epoch.cost, cost, table, parent, where,
                heap_cost, heap_node, lowered)
    for i in range(n):
        epoch.routes[used, i] = table[i]
    epoch.route_row[dst] = used
    epoch.trees[0] = used + 1
    return used


@njit(cache=True, inline="always")
def _transmit(start, m, u, k, link, v, cost, delay, jitter, bandwidth, loss, ber, length,
              cal, state, clock, msg_dst, msg_bytes, epoch, link_last, reorder, uniforms,
              out, from_sends, take):
    """Message ``m`` crosses ``u -> v`` (link ``k`` of its epoch, numbered ``link``)
    from ``start``: serialized, propagated with a jitter draw, a loss draw, the
    receiver's liveness at the arrival; then its row, and its delivery, loss or next
    hop. ``(DONE, end of serialization)``, or a stop with nothing done. ``take``: the
    event that made it ready is taken off the calendar when it is decided."""
    size = msg_bytes[m]
    done = start + (size / bandwidth if bandwidth > 0 else 0.0)
    if ber > 0:   # every bit must arrive (topologies.radio); 0: unit disk
        # a float power, as Python takes it: numba's power of an int rounds otherwise
        loss = 1.0 - (1.0 - loss) * (1.0 - ber) ** float(8 * size)
    drawn = state[UNIFORMS_TAKEN]
    if jitter > 0:
        if drawn >= len(uniforms):
            return NEED_UNIFORMS, 0.0
        arrive = done + delay + uniforms[drawn] * jitter
        drawn += 1
    else:
        arrive = done + delay + 0.0
    if not reorder:   # frames leave a link in order
        last = link_last[link]
        if arrive < last:
            arrive = last
    dropped = False
    if loss > 0:
        if drawn >= len(uniforms):
            return NEED_UNIFORMS, 0.0
        dropped = uniforms[drawn] < loss
        drawn += 1
    if dropped:
        reached = True
    elif epoch.start <= arrive < epoch.end:
        reached = epoch.alive[v]
    elif epoch.end <= arrive < epoch.next_end:
        reached = epoch.next_alive[v]
    elif state[HINT_NODE] == v and clock[HINT_TIME] == arrive:
        reached = state[HINT_ALIVE] == 1   # the caller's answer to NEED_ALIVE
        state[HINT_NODE] = -1
    else:
        state[ASK_NODE], clock[ASK_TIME] = v, arrive
        return NEED_ALIVE, 0.0
    # the hop is decided: take it
    if take:
        _take(cal, state, from_sends)
    state[UNIFORMS_TAKEN] = drawn
    if not reorder:
        link_last[link] = arrive
    h = state[N_HOPS]
    out.hop_start[h], out.hop_msg[h], out.hop_u[h], out.hop_v[h] = start, m, u, v
    out.hop_cost[h], out.hop_length[h] = cost, length
    out.hop_lost[h] = dropped or not reached
    out.hop_heard[h] = reached   # a frame lost to noise was still received
    state[N_HOPS] = h + 1
    if dropped:
        _lose(out, state, arrive, m, LINK_LOSS, u)
    elif not reached:
        _lose(out, state, arrive, m, DEAD_NODE, v)
    elif v == msg_dst[m]:
        _arrive(out, state, arrive, m)
    else:
        state[SEQ] += 1
        calendar_push(cal, state, arrive, READY + state[SEQ], m, v)
    return DONE, done


@njit(cache=True, inline="always")
def _take(cal, state, from_sends):
    """Take the event just looked at off the sends or the heap."""
    if from_sends:
        state[SENDS_TAKEN] += 1
    else:
        _calendar_pop(cal, state)


@njit(cache=True, inline="always")
def _arrive(out, state, t, m):
    i = state[N_ARRIVALS]
    out.arr_time[i], out.arr_msg[i] = t, m
    state[N_ARRIVALS] = i + 1


@njit(cache=True, inline="always")
def _lose(out, state, t, m, reason, node):
    i = state[N_LOSSES]
    out.loss_time[i], out.loss_msg[i], out.loss_reason[i], out.loss_node[i] = (
        t, m, reason, node)
    state[N_LOSSES] = i + 1
