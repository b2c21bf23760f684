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

Example: one message from node 0 to node 2 over the line 0-1-2 (four directed links, delay
0.1, no bandwidth limit): the kernel first asks for the epoch, then for the next-hop
table towards node 2; given both, it runs to the end.

>>> import numpy as np
>>> cal = new_calendar(4)
>>> state, clock = new_state()
>>> calendar_push(cal, state, 0.0, 1, 0, 0)      # message 0 ready at node 0 at 0.0
>>> sends = (np.empty(0), *[np.empty(0, np.int64)] * 3)
>>> links = ([0, 1, 1, 2], [1, 0, 2, 1])          # tails and heads, by position
>>> epoch = Epoch(0.0, np.inf, np.ones(3, np.bool_), np.arange(3), np.array(links[1]),
...               np.ones(4), np.full(4, 0.1), np.zeros(4), np.full(4, np.inf),
...               np.zeros(4), np.zeros(4), np.zeros(4),
...               np.array([-1, -1, 0]), np.array([[0, 2, -1]], np.int32),   # 0: link 0, 1: 2
...               np.inf, np.ones(3, np.bool_), np.arange(4))
>>> out = new_outputs(8)
>>> run(np.inf, cal, *sends, state, clock, np.array([2]), np.array([50]), epoch,
...     new_link_times(4), new_link_times(4), False, np.empty(0), out) == DONE
True
>>> int(state[N_HOPS]), float(out.arr_time[0]), out.hop_v[:2].tolist()
(2, 0.2, [1, 2])
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

# -- why the kernel stopped -------------------------------------------------------------
DONE, NEED_EPOCH, NEED_ROUTE, NEED_UNIFORMS, NEED_ALIVE, FULL = range(6)

# -- loss reasons, as :attr:`emulator.transport.Transport.lost` names them -----------------
DEAD_NODE, NO_ROUTE, LINK_LOSS = range(3)
REASONS = ("dead_node", "no_route", "link_loss")

# -- the kernel's integer state (one int64 array, kept between calls) ---------------------
(HEAP_SIZE, SENDS_TAKEN, SENDS_END, SEQ, UNIFORMS_TAKEN, N_HOPS, N_ARRIVALS, N_LOSSES,
 ASK_NODE, HINT_NODE, HINT_ALIVE) = range(11)
# ... and its float state (one float64 array): the time of a NEED_ALIVE question, and
# the time the answer given holds for
ASK_TIME, HINT_TIME = range(2)

#: A directed link's key: ``u * LINK_KEY + v`` (dense indices), numbered once for the
#: whole run (:class:`emulator.links.LinkNumbers`) so its queue outlives the epoch.
LINK_KEY = 1 << 32

#: The calendar: a binary heap of hops ready at a node, keyed by ``(time, seq)``.
Calendar = namedtuple("Calendar", "time seq msg node")
#: The epoch in force: its span, node and link arrays, its next-hop tables (row
#: ``route_row[dst]`` of ``routes``, indexed by the node's position in the epoch; -1 in
#: ``route_row``: not fetched yet), and which nodes are up in the next epoch, up to
#: ``next_end`` (a hop that ends after its epoch asks no question then); ``link`` numbers
#: each directed link for the run's link arrays (``link_free``, ``link_last``).
Epoch = namedtuple("Epoch", "start end alive pos head cost delay jitter bandwidth loss "
                            "ber length route_row routes next_end next_alive link")
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
    state = np.zeros(11, np.int64)
    state[HINT_NODE] = -1
    return state, np.zeros(2)


def new_outputs(capacity: int) -> Outputs:
    """Output arrays for ``capacity`` hops (and as many deliveries and losses)."""
    f, i = np.float64, np.int64
    return Outputs(np.empty(capacity, f), np.empty(capacity, i), np.empty(capacity, i),
                   np.empty(capacity, i), np.empty(capacity, f), np.empty(capacity, f),
                   np.empty(capacity, np.bool_), np.empty(capacity, np.bool_),
                   np.empty(capacity, f),
                   np.empty(capacity, i), np.empty(capacity, f), np.empty(capacity, i),
                   np.empty(capacity, np.int8), np.empty(capacity, i))


def new_link_times(links: int = 0) -> np.ndarray:
    """Per link number, a time not yet set (a link's free time, or its last arrival):
    -inf, which every hop's own time beats."""
    return np.full(links, -np.inf)


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
def run(until, cal, send_time, send_seq, send_msg, send_node, state, clock, msg_dst,
        msg_bytes, epoch, link_free, link_last, reorder, uniforms, out):
    """Process every hop ready before ``until`` in ``(time, seq)`` order; returns why it
    stopped (:data:`DONE` when nothing is left before ``until``).

    The hop's steps and draws are those of the module docstring of
    :mod:`emulator.transport`, in its order: wait for the link, serialize, propagate with
    a jitter draw, a loss draw, and the receiver's liveness at the arrival.
    """
    capacity = len(out.hop_start)
    n_sends = state[SENDS_END]   # the sends queue holds [SENDS_TAKEN, SENDS_END)
    start_e, end_e = epoch.start, epoch.end
    alive, pos, head, route_row, routes = (epoch.alive, epoch.pos, epoch.head,
                                           epoch.route_row, epoch.routes)
    heap_time, heap_seq = cal.time, cal.seq
    while True:
        # the next event, from the sends in order or the heap, by (time, seq)
        s = state[SENDS_TAKEN]
        n = state[HEAP_SIZE]
        if s < n_sends and (n == 0 or send_time[s] < heap_time[0] or
                            (send_time[s] == heap_time[0] and send_seq[s] < heap_seq[0])):
            from_sends = True
            t, m, u = send_time[s], send_msg[s], send_node[s]
        elif n > 0:
            from_sends = False
            t, m, u = heap_time[0], cal.msg[0], cal.node[0]
        else:
            return DONE
        if t >= until:
            return DONE
        # room for what this hop may write: a hop row, a delivery or loss, an entry
        if (state[N_HOPS] >= capacity or state[N_ARRIVALS] >= capacity or
                state[N_LOSSES] >= capacity or n + 1 >= len(heap_time)):
            return FULL
        dst = msg_dst[m]
        if u == dst:   # sent to itself
            _take(cal, state, from_sends)
            _arrive(out, state, t, m)
            continue
        if not start_e <= t < end_e:
            return NEED_EPOCH
        if not alive[u]:
            _take(cal, state, from_sends)
            _lose(out, state, t, m, DEAD_NODE, u)
            continue
        row = route_row[dst]
        if row < 0:
            state[ASK_NODE] = dst
            return NEED_ROUTE
        k = routes[row, pos[u]]
        if k < 0:
            _take(cal, state, from_sends)
            _lose(out, state, t, m, NO_ROUTE, u)
            continue
        v = head[k]
        link = epoch.link[k]
        start = link_free[link]
        if start < t:
            start = t
        size = msg_bytes[m]
        bandwidth = epoch.bandwidth[k]
        done = start + (size / bandwidth if bandwidth > 0 else 0.0)
        jitter, loss, ber = epoch.jitter[k], epoch.loss[k], epoch.ber[k]
        if ber > 0:   # every bit must arrive (topologies.radio); 0: unit disk
            loss = 1.0 - (1.0 - loss) * (1.0 - ber) ** (8 * size)
        drawn = state[UNIFORMS_TAKEN]
        if jitter > 0:
            if drawn >= len(uniforms):
                return NEED_UNIFORMS
            arrive = done + epoch.delay[k] + uniforms[drawn] * jitter
            drawn += 1
        else:
            arrive = done + epoch.delay[k] + 0.0
        if not reorder:   # frames leave a link in order
            last = link_last[link]
            if arrive < last:
                arrive = last
        dropped = False
        if loss > 0:
            if drawn >= len(uniforms):
                return NEED_UNIFORMS
            dropped = uniforms[drawn] < loss
            drawn += 1
        if dropped:
            reached = True
        elif start_e <= arrive < end_e:
            reached = alive[v]
        elif end_e <= arrive < epoch.next_end:
            reached = epoch.next_alive[v]
        elif state[HINT_NODE] == v and clock[HINT_TIME] == arrive:
            reached = state[HINT_ALIVE] == 1   # the caller's answer to NEED_ALIVE
            state[HINT_NODE] = -1
        else:
            state[ASK_NODE], clock[ASK_TIME] = v, arrive
            return NEED_ALIVE
        # the hop is decided: take it
        _take(cal, state, from_sends)
        state[UNIFORMS_TAKEN] = drawn
        link_free[link] = done
        if not reorder:
            link_last[link] = arrive
        h = state[N_HOPS]
        out.hop_start[h], out.hop_msg[h], out.hop_u[h], out.hop_v[h] = start, m, u, v
        out.hop_cost[h], out.hop_length[h] = epoch.cost[k], epoch.length[k]
        out.hop_lost[h] = dropped or not reached
        out.hop_heard[h] = reached   # a frame lost to noise was still received
        state[N_HOPS] = h + 1
        if dropped:
            _lose(out, state, arrive, m, LINK_LOSS, u)
        elif not reached:
            _lose(out, state, arrive, m, DEAD_NODE, v)
        elif v == dst:
            _arrive(out, state, arrive, m)
        else:
            state[SEQ] += 1
            calendar_push(cal, state, arrive, state[SEQ], m, v)


@njit(cache=True)
def _take(cal, state, from_sends):
    """Take the event just looked at off the sends or the heap."""
    if from_sends:
        state[SENDS_TAKEN] += 1
    else:
        _calendar_pop(cal, state)


@njit(cache=True)
def _arrive(out, state, t, m):
    i = state[N_ARRIVALS]
    out.arr_time[i], out.arr_msg[i] = t, m
    state[N_ARRIVALS] = i + 1


@njit(cache=True)
def _lose(out, state, t, m, reason, node):
    i = state[N_LOSSES]
    out.loss_time[i], out.loss_msg[i], out.loss_reason[i], out.loss_node[i] = (
        t, m, reason, node)
    state[N_LOSSES] = i + 1
