"""A protocol's packets in a compiled loop beside the routed host's calendar: the rows,
the calendar merged with the host's sends, a data packet's hops, and what is staged for
the host's books (the links medium, without batteries).

The routed host (:class:`~emulator.routing.host.RoutedTransport`) keeps its events in
Python: a packet ready, a timer, a transmission's end. A protocol whose events are most
of a run has them here instead, in arrays: the host's loop takes the least of its
queues' heads and this calendar's, and while this calendar's is the least, the
protocol's compiled ``run`` takes its events in the same ``(time, rank, number)`` order,
numbered from the host's counter, so the run is the one the host's Python made, event
for event and draw for draw. This module is what every such loop shares:

- rows: a transmission is a row of ``packets`` (:data:`FIELDS`, then the protocol's
  own), held while an event refers to it (``refs``); an event is ``(time, number, row,
  node)``, every one of the host's rank "ready";
- the host's sends, taken as they are queued (:meth:`CompiledLoop.take_sends`), are
  events too, merged with the calendar by the same key (:func:`next_event`);
- a data packet at a node is forwarded on the next hop the protocol's rule gives
  (:func:`leaves`), crosses its link by the unicast frame's rules
  (:func:`emulator.routing.fanout.unicast`, :func:`send_unicast`) and is ready at the
  next node or staged as delivered (:func:`after_unicast`); a node down, a TTL spent or
  no route make it Python's (:data:`DATA_IN_PYTHON`: the host's drops, notices and
  route requests are its books);
- every transmission's ledger row (and a control packet's log entry) is staged and
  handed over before the host logs one of its own and when its advance returns; the
  deliveries and the flows' first waits at each return (the protocol's timers stop
  when nothing is left to deliver, so the host's count must be in step).

A loop's ``run`` returns when its next event is not before the host's, or when it needs
what only Python has (the view of another epoch, uniforms, room), or hands Python what
Python does (a MAC's failure, a data packet to drop); after Python has filed something
the host's loop looks again, since that may come first. :class:`CompiledLoop` is the
Python side; a protocol's loop extends it with its own packets and codes (AODV's
discoveries: :mod:`emulator.routing.aodv.discovery`).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from emulator.hop_kernel import HEAP_SIZE, calendar_push, grown_calendar, new_calendar
from emulator.routing.base import NOTICE_BYTES
from emulator.transport import _TIMER
from emulator.routing.fanout import (_GROUP_START, _GROUP_TIME, _HEARD_IDS, EXPIRED,
                                     NEED_UNIFORMS, NEED_VIEW, Fanout, hear, unicast)

#: A row's fields every loop shares, in ``packets``' first columns (positions for
#: nodes): ``orig`` (a data packet's source, a control packet's originator), ``dst``,
#: ``hops`` (a data packet's hops taken, the host's TTL count), ``size_bytes``,
#: ``sender`` (the node a packet leaves; -1 for a data packet to forward), ``msg_id``,
#: ``type`` (a control type's code, or :data:`DATA`), ``receiver`` (a unicast's next
#: hop), ``kind`` (a data packet's kind's code in the ledger) and ``at_source`` (1 for a
#: data packet at its source, before its first hop: its flow's first wait is then
#: counted). A data packet's size in units is in ``units``, when it was sent in
#: ``sent_at`` (a protocol may use ``units`` for a float of its own packets).
FIELDS = ("orig", "dst", "hops", "size_bytes", "sender", "msg_id", "type", "receiver",
          "kind", "at_source")
(ORIG, DST, HOPS, SIZE, SENDER, MSG_ID, TYPE, RECEIVER, KIND, AT_SOURCE) = range(
    len(FIELDS))
#: A data packet's type code (control types are 0, 1, ...: the protocol's names; a
#: notice's, routed like data, is ``consts[NOTICE_TYPE]``).
DATA = -1

#: What a loop's ``run`` returns (the host's Python does what it names, then calls
#: again); a protocol's own codes follow, from :data:`FIRST_OWN_CODE`:
#:
#: - ``IDLE``: its next event is not before the host's next one (or it has none);
#: - ``NEED_READY_VIEW``: the view in force at ``floats[ASK]``, for a packet ready then;
#: - ``NEED_ROOM``: room in the loop's arrays;
#: - ``NEED_FRAME_UNIFORMS``: the two uniforms a unicast frame may take;
#: - ``NEED_FRAME_ALIVE``: who is up at the current unicast's arrival, ``floats[ASK]``;
#: - ``MAC_NOW``: the current unicast's next hop is out of range (no link);
#: - ``MAC_LATER``: its sender's MAC will learn at ``floats[ARRIVE]`` that it failed;
#: - ``DATA_EXPIRED``: the current data packet waited too long for its link;
#: - ``DATA_IN_PYTHON``: the current data packet is Python's from here (its node is
#:   down, its TTL is spent, it has no route, it is back at its source or at its
#:   destination);
#: - ``NEED_FAN_ALIVE``: who is up at the fan-out's asked arrival (``Fanout.ask_time``);
#: - ``NEED_FAN_UNIFORMS``: more uniforms for the fan-out's walk.
(IDLE, NEED_READY_VIEW, NEED_ROOM, NEED_FRAME_UNIFORMS, NEED_FRAME_ALIVE, MAC_NOW,
 MAC_LATER, DATA_EXPIRED, DATA_IN_PYTHON, NEED_FAN_ALIVE, NEED_FAN_UNIFORMS,
 FIRST_OWN_CODE) = range(12)

# what send_unicast's frame returns when it was never sent (it waited too long for its
# link: a control packet is counted lost)
NOT_SENT = -1
#: ``ints``' fields (HEAP_SIZE is the calendar's, first); a protocol's own follow, from
#: ``INTS``. The first fifteen are what the host reads after every call, in one slice
#: (:data:`_READ`). ``UNRESOLVED``: the host's data packets neither delivered nor
#: dropped when the call began (:func:`unresolved`); ``N_NOTICES``: how many of the
#: ``N_ARRIVED`` staged are notices; ``GROUPS_FREE``: the free rows of ``groups``;
#: ``LOSSES_SEEN``: the reasons a control packet was lost for so far (bits, in the order
#: of :meth:`CompiledLoop._count_losses`).
(SEQ, NEXT_ID, DRAWN, STAGED, N_LOST, N_DEAD, N_EXPIRED, N_ARRIVED, N_FIRST, N_DROPS,
 N_CTRL_LINK_BREAK, N_CTRL_NO_ROUTE, SENDS_AT, SENDS_END, PHASE, ROWS_FREE, ROOM,
 CURRENT_ROW, CURRENT_NODE, CURRENT_SEQ, LINK, DROPPED, MAC_SEQ, UNRESOLVED, N_NOTICES,
 GROUPS_FREE, LOSSES_SEEN, INTS) = range(1, 29)
#: Why the loop drops a packet itself (:func:`drop_here`), by code.
DROP_REASONS = ("link_break", "no_route")
LINK_BREAK, NO_ROUTE = 0, 1
_READ = SENDS_END + 1
#: ``floats``' fields: the ready view's span, the arrival view's, the time asked about,
#: the current event's time, the current frame's start and arrival.
RV_START, RV_END, AV_START, AV_END, ASK, CURRENT_T, START, ARRIVE, FLOATS = range(9)
#: Phases: between events, after a unicast's frame (resumed after
#: :data:`NEED_FRAME_ALIVE`), in a broadcast (a protocol's, resumed after its own codes).
BETWEEN, SENT, SENDING = 0, 1, 2
#: ``times``' first fields (a protocol's own follow): how long a frame may wait for its
#: link (the host's ``max_wait``).
MAX_WAIT = 0
#: ``consts``' first fields (a protocol's own follow): the hops a data packet may take
#: (the host's TTL), the host's bytes per size unit, the type code of a notice (a
#: report to a dropped packet's source, routed like data: "NOTICE" in the protocol's
#: types) and its size in bytes.
IP_TTL, BYTES_PER_UNIT, NOTICE_TYPE, NOTICE_SIZE = 0, 1, 2, 3
#: A staged transmission's integer fields (``out_ints``' rows; its start, cost and size
#: in units are ``out_floats``' rows), as the ledger takes them: ``kind`` is the
#: ledger's code of a data packet's kind, -1 for a control packet.
STAGED_INTS = ("node", "msg_id", "size_bytes", "receiver", "lost", "type", "src", "dst",
               "kind")
#: The host's sends the loop has taken (``sends_ints``' rows, in order of their
#: ``(time, number)``; their times and sizes in units are ``sends_floats``' rows).
SENDS_INTS = ("seq", "msg_id", "src", "dst", "size_bytes", "kind")
#: The events and rows there is room for at first (doubled as needed).
CAPACITY = 1024


@njit(cache=True, inline="always")
def before(t, seq, stop_t, stop_rank, stop_seq, ready_rank):
    """Whether event ``(t, ready_rank, seq)`` comes before ``(stop_t, stop_rank,
    stop_seq)``."""
    if t != stop_t:
        return t < stop_t
    if ready_rank != stop_rank:
        return ready_rank < stop_rank
    return seq < stop_seq


@njit(cache=True, inline="always")
def release(refs, free_rows, ints, row):
    """One event fewer refers to ``row``; it is free with none."""
    refs[row] -= 1
    if refs[row] == 0:
        free_rows[ints[ROWS_FREE]] = row
        ints[ROWS_FREE] += 1


@njit(cache=True, inline="always")
def new_row(refs, free_rows, ints):
    """A free row, referred to once."""
    ints[ROWS_FREE] -= 1
    row = free_rows[ints[ROWS_FREE]]
    refs[row] = 1
    return row


@njit(cache=True, inline="always")
def next_event(ints, cal_time, cal_seq, sends_floats, sends_ints):
    """``(from the sends, time, number)`` of the next event, the calendar's or the next
    send's (a send goes first at an equal key: there is none, numbers being unique);
    ``(False, inf, -1)`` for none."""
    at = ints[SENDS_AT]
    if at < ints[SENDS_END]:
        t, seq = sends_floats[0, at], sends_ints[0, at]
        if ints[HEAP_SIZE] == 0 or t < cal_time[0] or (t == cal_time[0]
                                                         and seq < cal_seq[0]):
            return True, t, seq
    if ints[HEAP_SIZE] == 0:
        return False, math.inf, -1
    return False, cal_time[0], cal_seq[0]


@njit(cache=True, inline="always")
def short_of_room(ints, room, cal_time, out_floats, arrived_ids, first_waits, drops_at):
    """Whether less than ``room`` rows or calendar entries are free, or the staging
    arrays are full (numba checks no bounds)."""
    return (ints[ROWS_FREE] < room or len(cal_time) - ints[HEAP_SIZE] < room
            or ints[STAGED] >= out_floats.shape[1] or ints[N_ARRIVED] >= len(arrived_ids)
            or ints[N_FIRST] >= len(first_waits) or ints[N_DROPS] >= len(drops_at))


@njit(cache=True, inline="always")
def drop_here(t, reason, type_, msg_id, src, u, alive_ready, ints, consts, packets, refs,
              free_rows, units, sent_at, drops_at, drop_ids, cal):
    """A packet (of ``type_``, id ``msg_id``, from ``src``) is dropped at ``u`` at ``t``
    for ``reason`` (:data:`DROP_REASONS`: its sender's MAC gave up on a link that is
    gone, or a relay has no route; the host's ``drop``). A control packet or a notice
    is counted; a data packet's drop is staged for the host's books, with the notice
    ``u`` sends its source if ``u`` is a relay (routed from here like data, its number
    the next control id: 0 for none). Room made for a row and an event."""
    if type_ != DATA:
        ints[N_CTRL_LINK_BREAK if reason == LINK_BREAK else N_CTRL_NO_ROUTE] += 1
        return
    notice = 0
    if u != src and alive_ready[u]:   # a dead node tells no one
        notice = ints[NEXT_ID]
        ints[NEXT_ID] -= 1
        new = new_row(refs, free_rows, ints)
        size = consts[NOTICE_SIZE]
        data_row(new, -1, -1, notice, u, src, 0, size, size / consts[BYTES_PER_UNIT], -1,
                 t, 1, packets, units, sent_at)
        packets[new, TYPE] = consts[NOTICE_TYPE]
        ints[SEQ] += 1
        calendar_push(cal, ints, t, ints[SEQ], new, u)
    b = ints[N_DROPS]
    drops_at[b] = t
    drop_ids[0, b], drop_ids[1, b], drop_ids[2, b] = msg_id, u, notice
    drop_ids[3, b] = ints[N_ARRIVED]   # the arrivals staged before it, for the order
    drop_ids[4, b] = reason
    ints[N_DROPS] = b + 1


@njit(cache=True, inline="always")
def take_send(t, seq, ints, floats, sends_floats, sends_ints, refs, free_rows, packets,
              units, sent_at):
    """The next send, taken as the current event: a data packet at its source, in a new
    row; returns its row and node."""
    at = ints[SENDS_AT]
    ints[SENDS_AT] = at + 1
    row = new_row(refs, free_rows, ints)
    node = sends_ints[2, at]
    data_row(row, -1, -1, sends_ints[1, at], node, sends_ints[3, at], 0,
             sends_ints[4, at], sends_floats[1, at], sends_ints[5, at], t, 1, packets,
             units, sent_at)
    ints[CURRENT_ROW], ints[CURRENT_NODE], floats[CURRENT_T] = row, node, t
    ints[CURRENT_SEQ] = seq
    return row, node


@njit(cache=True, inline="always")
def new_loss(ints):
    """Whether a control packet was lost since the last return for a reason the loop
    had not met yet: the loop returns then, between events, for the host to count it
    at once (the run's figures list the reasons in the order first met)."""
    seen = ints[LOSSES_SEEN]
    now = ((ints[N_LOST] > 0) | (ints[N_DEAD] > 0) << 1 | (ints[N_EXPIRED] > 0) << 2
           | (ints[N_CTRL_LINK_BREAK] > 0) << 3 | (ints[N_CTRL_NO_ROUTE] > 0) << 4)
    if now & ~seen:
        ints[LOSSES_SEEN] = seen | now
        return True
    return False


@njit(cache=True, inline="always")
def unresolved(ints):
    """The host's data packets neither delivered nor dropped now (the host's
    ``_unresolved``, less those delivered or dropped since the call began)."""
    return ints[UNRESOLVED] - (ints[N_ARRIVED] - ints[N_NOTICES]) - ints[N_DROPS]


@njit(cache=True, inline="always")
def routed(consts, packets, row):
    """Whether ``row`` is a packet routed end to end, hop by hop: a data packet or a
    notice (a control packet goes one hop)."""
    return packets[row, TYPE] == DATA or packets[row, TYPE] == consts[NOTICE_TYPE]


@njit(cache=True, inline="always")
def pythons(ints, consts, packets, refs, free_rows, alive_ready, row, u):
    """Whether the data packet of ``row`` at ``u`` is Python's from here (let go if so):
    ``u`` is down, its TTL is spent, it is at its destination (sent to itself), or back
    at its source after a hop (the protocol's Python may hold it for a route)."""
    if (not alive_ready[u] or packets[row, HOPS] >= consts[IP_TTL]
            or u == packets[row, DST] or u == packets[row, ORIG]
            and not packets[row, AT_SOURCE]):
        release(refs, free_rows, ints, row)
        return True
    return False


@njit(cache=True, inline="always")
def leaves(t, row, u, nxt, ints, packets, sent_at, flow_started, first_flows,
           first_waits):
    """The data packet (or notice) of ``row`` leaves ``u`` for ``nxt`` at ``t`` (the
    host's ``_forward``): one more hop taken; a data packet at its source has its
    flow's first packet's wait staged."""
    if packets[row, AT_SOURCE]:
        packets[row, AT_SOURCE] = 0
        dst = packets[row, DST]
        if packets[row, TYPE] == DATA and not flow_started[u, dst]:
            # its flow's first: its wait for a route
            flow_started[u, dst] = True
            f = ints[N_FIRST]
            first_flows[0, f], first_flows[1, f] = u, dst
            first_waits[f] = t - sent_at[row]
            ints[N_FIRST] = f + 1
    packets[row, HOPS] += 1
    packets[row, SENDER], packets[row, RECEIVER] = u, nxt


@njit(cache=True, inline="always")
def send_unicast(ints, floats, max_wait, consts, packets, refs, free_rows, units, first,
                 last, head, attrs, link_costs, alive, link_times, pool, reorder,
                 out_floats, out_ints, arrived_at, arrived_ids, cal):
    """The current unicast (a data packet, or a protocol's) sent to its next hop
    (:func:`unicast_frame`) and what follows it (:func:`after_unicast`, resumed in the
    :data:`SENT` phase if it needs who is up at the arrival). Returns what Python must
    do, else :data:`IDLE`."""
    code = unicast_frame(ints, floats, max_wait, packets, refs, free_rows, first, last,
                         head, attrs, link_times, pool, reorder)
    if code == NOT_SENT:
        return IDLE
    if code != IDLE:
        return code
    return after_frame(ints, floats, consts, packets, refs, free_rows, units, out_floats,
                       out_ints, link_costs, alive, arrived_at, arrived_ids, cal)


@njit(cache=True, inline="always")
def unicast_frame(ints, floats, max_wait, packets, refs, free_rows, first, last, head,
                  attrs, link_times, pool, reorder):
    """Send the current unicast to its next hop (the host's ``_send_hop`` and
    ``_transmit`` on the links medium): :data:`MAC_NOW` if the next hop is out of range
    (no link), :data:`NOT_SENT` if it waited too long for its link (a data packet:
    :data:`DATA_EXPIRED`, as the host drops it), else the frame
    (:func:`~emulator.routing.fanout.unicast`; :data:`IDLE`), whose fate
    :func:`after_unicast` decides."""
    row, u, t = ints[CURRENT_ROW], ints[CURRENT_NODE], floats[CURRENT_T]
    v, k = packets[row, RECEIVER], -1
    for i in range(first[u], last[u]):
        if head[i] == v:
            k = i
            break
    if k < 0:   # out of range: the MAC gives up (its retries take no time here)
        release(refs, free_rows, ints, row)
        return MAC_NOW
    code, start, _, arrive, dropped, taken = unicast(
        t, max_wait, True, reorder, u, v, k, packets[row, SIZE], attrs, link_times, pool,
        ints[DRAWN])
    ints[DRAWN] = taken
    if code == EXPIRED:   # waited too long for its link: dropped at its sender
        release(refs, free_rows, ints, row)
        if packets[row, TYPE] == DATA:
            return DATA_EXPIRED
        ints[N_EXPIRED] += 1
        return NOT_SENT
    floats[START], floats[ARRIVE] = start, arrive
    ints[LINK], ints[DROPPED] = k, dropped
    return IDLE


@njit(cache=True, inline="always")
def after_frame(ints, floats, consts, packets, refs, free_rows, units, out_floats,
                out_ints, link_costs, alive, arrived_at, arrived_ids, cal):
    """:func:`after_unicast`, to be resumed in the :data:`SENT` phase if it needs who is
    up at the arrival."""
    code = after_unicast(ints, floats, consts, packets, refs, free_rows, units,
                         out_floats, out_ints, link_costs, alive, arrived_at, arrived_ids,
                         cal)
    if code == NEED_FRAME_ALIVE:
        ints[PHASE] = SENT
    return code


@njit(cache=True, inline="always")
def after_unicast(ints, floats, consts, packets, refs, free_rows, units, out_floats,
                  out_ints, link_costs, alive, arrived_at, arrived_ids, cal):
    """What follows the current unicast's frame (the host's ``_after_hop``): its ledger
    row staged; if it arrives at its next hop up and not lost, a data packet or a
    notice at its destination is staged as arrived (``ints[N_NOTICES]`` of them
    notices), anything else is ready there; else the sender's MAC learns of it at the
    arrival (:data:`MAC_LATER`, the timer's number kept in ``ints[MAC_SEQ]``)."""
    row, u, arrive = ints[CURRENT_ROW], ints[CURRENT_NODE], floats[ARRIVE]
    v, dropped = packets[row, RECEIVER], ints[DROPPED]
    reached = True
    if not dropped:
        if not floats[AV_START] <= arrive < floats[AV_END]:
            floats[ASK] = arrive
            return NEED_FRAME_ALIVE
        reached = alive[v]
    lost = dropped or not reached
    cost = link_costs[ints[LINK]]
    data = routed(consts, packets, row)
    if data:   # its ledger row is of its kind, source and destination
        stage(ints, out_floats, out_ints, floats[START], cost, u, packets[row, MSG_ID],
              packets[row, SIZE], v, lost, packets[row, TYPE], packets[row, ORIG],
              packets[row, DST], packets[row, KIND], units[row])
    else:
        stage_control(ints, consts, packets, row, out_floats, out_ints, floats[START],
                      cost, u, v, lost)
    if not lost and data and v == packets[row, DST]:   # arrived: no event follows
        a = ints[N_ARRIVED]
        arrived_at[a], arrived_ids[a] = arrive, packets[row, MSG_ID]
        ints[N_ARRIVED] = a + 1
        if packets[row, TYPE] != DATA:
            ints[N_NOTICES] += 1
        release(refs, free_rows, ints, row)
        return IDLE
    ints[SEQ] += 1
    if lost:
        ints[MAC_SEQ] = ints[SEQ]
        release(refs, free_rows, ints, row)
        return MAC_LATER
    calendar_push(cal, ints, arrive, ints[SEQ], row, v)   # the row goes on with it
    return IDLE


@njit(cache=True, inline="always")
def stage(ints, out_floats, out_ints, start, cost, u, msg_id, size, v, lost, type_, src,
          dst, kind, units):
    """A transmission's ledger row (and a control packet's log entry), staged for the
    host (:data:`STAGED_INTS`)."""
    s = ints[STAGED]
    out_floats[0, s], out_floats[1, s], out_floats[2, s] = start, cost, units
    out_ints[0, s], out_ints[1, s], out_ints[2, s] = u, msg_id, size
    out_ints[3, s], out_ints[4, s], out_ints[5, s] = v, lost, type_
    out_ints[6, s], out_ints[7, s], out_ints[8, s] = src, dst, kind
    ints[STAGED] = s + 1


@njit(cache=True, inline="always")
def stage_control(ints, consts, packets, row, out_floats, out_ints, start, cost, u, v,
                  lost):
    """A control packet's transmission from ``u`` to ``v`` (-1: everyone) staged: its
    ledger row is from ``u`` to ``v``, its size in units its bytes over the host's
    bytes per unit."""
    size = packets[row, SIZE]
    stage(ints, out_floats, out_ints, start, cost, u, packets[row, MSG_ID], size, v, lost,
          packets[row, TYPE], u, v, -1, size / consts[BYTES_PER_UNIT])


@njit(cache=True, inline="always")
def broadcast(ints, floats, max_wait, consts, packets, refs, free_rows, groups, group_len,
              free_groups, out_floats, out_ints, first, last, bandwidths, costs, head,
              attrs, alive, link_times, pool, ids, fan_ints, fan_floats, reorder, cal,
              resume):
    """Broadcast the current control packet from its sender (the host's ``_broadcast``
    on the links medium): the fan-out's walk (:func:`~emulator.routing.fanout.hear`;
    ``resume``: on with it after Python answered what it asked; when it asks, the phase
    is left at ``SENDING`` for :func:`resume`), then the row staged
    and the groups of receivers filed, each an event ``-1 - group`` at its arrival,
    numbered as the host numbers them: the first one more than the last event's, each
    as many on as it holds."""
    row, u, ready = ints[CURRENT_ROW], ints[CURRENT_NODE], floats[CURRENT_T]
    need, taken, lost, dead, count, heard, arrive, start, done = hear(
        ready, max_wait, bandwidths[u], u, first[u], last[u], packets[row, SIZE],
        ints[DRAWN], resume, True, reorder, floats[AV_START], floats[AV_END], head, attrs,
        link_times, pool, alive, ids, fan_ints, fan_floats)
    if need == NEED_VIEW or need == NEED_UNIFORMS:
        ints[PHASE] = SENDING   # Python answers, then resume goes on with the walk
        return NEED_FAN_ALIVE if need == NEED_VIEW else NEED_FAN_UNIFORMS
    if need == EXPIRED:   # waited too long for its links: dropped at its sender
        ints[N_EXPIRED] += 1
        release(refs, free_rows, ints, row)
        return IDLE
    ints[DRAWN] = taken
    stage_control(ints, consts, packets, row, out_floats, out_ints, start, costs[u], u,
                  -1, False)
    ints[N_LOST] += lost
    ints[N_DEAD] += dead
    starts, heard_ids = fan_ints[_GROUP_START], fan_ints[_HEARD_IDS]
    group_times = fan_floats[_GROUP_TIME]
    seq = ints[SEQ]
    for g in range(count):
        a, b = starts[g], starts[g + 1]
        ints[GROUPS_FREE] -= 1
        group = free_groups[ints[GROUPS_FREE]]
        for k in range(a, b):
            groups[group, k - a] = heard_ids[k]
        group_len[group] = b - a
        refs[row] += 1
        calendar_push(cal, ints, group_times[g], seq + 1, row, -1 - group)
        seq += b - a
    ints[SEQ] = seq
    release(refs, free_rows, ints, row)
    return IDLE


@njit(cache=True, inline="always")
def resume(ints, floats, max_wait, consts, packets, refs, free_rows, units, out_floats,
           out_ints, link_costs, alive, arrived_at, arrived_ids, cal, fan, frame):
    """On with a transmission stopped for Python (``ints[PHASE]``), once: a broadcast's
    walk (:func:`broadcast`), or what follows a unicast's frame (:func:`after_unicast`);
    :data:`IDLE` when none was stopped or it is done, else what Python must do first
    (the phase kept). ``fan``: the groups' arrays and the fan-out's (``groups,
    group_len, free_groups, ids, fan_ints, fan_floats``); ``frame``: the links'
    (``first, last, bandwidths, costs, head, attrs, link_times, pool, reorder``)."""
    phase = ints[PHASE]
    if phase == BETWEEN:
        return IDLE
    ints[PHASE] = BETWEEN
    if phase == SENDING:
        groups, group_len, free_groups, ids, fan_ints, fan_floats = fan
        first, last, bandwidths, costs, head, attrs, link_times, pool, reorder = frame
        code = broadcast(ints, floats, max_wait, consts, packets, refs, free_rows, groups,
                         group_len, free_groups, out_floats, out_ints, first, last,
                         bandwidths, costs, head, attrs, alive, link_times, pool, ids,
                         fan_ints, fan_floats, reorder, cal, True)
        return code   # not IDLE: Python again (broadcast kept the phase), then on again
    return after_frame(ints, floats, consts, packets, refs, free_rows, units, out_floats,
                       out_ints, link_costs, alive, arrived_at, arrived_ids, cal)


#: What :func:`next_step` returns first when an event is due to be taken.
GO = -1


@njit(cache=True, inline="always")
def next_step(ints, floats, max_wait, consts, packets, refs, free_rows, units, out_floats,
              out_ints, link_costs, alive, arrived_at, arrived_ids, cal, fan, frame,
              sends, timers, timer_state, stop, ready_rank, timer_rank):
    """What a loop does between events: on with a transmission stopped for Python
    (:func:`resume`), back to the host if a control packet was first lost for a reason
    (:func:`new_loss`), then its next event (:func:`next_due`), whose node (a packet's,
    or ``-1 - group`` for a group hearing a broadcast; -1 for a timer) asks for the
    view in force at its time if it is not the ready view. Returns ``(GO, timer, sent,
    time, number, node)`` when an event is due, else ``(code, ...)`` with the code the
    loop returns. ``sends``: ``(sends_floats, sends_ints)``; ``timers``: the timers'
    calendar; ``stop``: ``(until, stop_t, stop_rank, stop_seq)``."""
    code = resume(ints, floats, max_wait, consts, packets, refs, free_rows, units,
                  out_floats, out_ints, link_costs, alive, arrived_at, arrived_ids, cal,
                  fan, frame)
    if code != IDLE:
        return code, False, False, 0.0, 0, -1
    if new_loss(ints):   # for the host to count first
        return IDLE, False, False, 0.0, 0, -1
    until, stop_t, stop_rank, stop_seq = stop
    due, timer, sent, t, seq = next_due(ints, cal[0], cal[1], sends[0], sends[1],
                                        timers[0], timers[1], timer_state, until, stop_t,
                                        stop_rank, stop_seq, ready_rank, timer_rank)
    if not due:
        return IDLE, timer, sent, t, seq, -1
    node = -1
    if not timer:   # a send by the host is data at its source
        node = sends[1][2, ints[SENDS_AT]] if sent else cal[3][0]
        if node >= 0 and not floats[RV_START] <= t < floats[RV_END]:
            floats[ASK] = t
            return NEED_READY_VIEW, timer, sent, t, seq, node
    return GO, timer, sent, t, seq, node


@njit(cache=True, inline="always")
def next_due(ints, cal_time, cal_seq, sends_floats, sends_ints, timer_time, timer_seq,
             timer_state, until, stop_t, stop_rank, stop_seq, ready_rank, timer_rank):
    """``(due, timer, sent, time, number)`` of the loop's next event: the calendar's, the
    next send's (``sent``) or the next timer's (``timer``; one at the time of a packet
    ready comes after it, as the host's ranks order them); ``due`` if there is one and
    it comes before ``until`` and the host's next event ``(stop_t, stop_rank,
    stop_seq)``."""
    sent, t, seq = next_event(ints, cal_time, cal_seq, sends_floats, sends_ints)
    ready = sent or ints[HEAP_SIZE] > 0
    timer = timer_state[0] > 0 and (not ready or timer_time[0] < t)
    if timer:
        t, seq = timer_time[0], timer_seq[0]
    elif not ready:
        return False, False, sent, t, seq
    due = t < until and before(t, seq, stop_t, stop_rank, stop_seq,
                               timer_rank if timer else ready_rank)
    return due, timer, sent, t, seq


@njit(cache=True, inline="always")
def group_done(ints, free_groups, refs, free_rows, group, row):
    """A group has heard its broadcast: its row of ``groups`` free, and the packet's
    row let go once."""
    free_groups[ints[GROUPS_FREE]] = group
    ints[GROUPS_FREE] += 1
    release(refs, free_rows, ints, row)


@njit(cache=True, _nrt=False)
def file_data(t, node, seq, msg_id, receiver, src, dst, hops, size_bytes, units_, kind,
              sent, at_source, type_, cal_time, cal_seq, cal_msg, cal_node, ints, refs,
              free_rows, packets, units, sent_at):
    """File a data packet (or a notice: ``type_``) at ``node`` at ``t`` as the host's
    event number ``seq``: one leaving for ``receiver``, ``hops`` taken with this one,
    in the event being processed (the frame is sent at once, as the host's Python
    sends it), or one to forward from its source (``receiver`` -1: released after a
    route was found, or a notice just made); the caller has made room."""
    row = new_row(refs, free_rows, ints)
    data_row(row, node if receiver >= 0 else -1, receiver, msg_id, src, dst, hops,
             size_bytes, units_, kind, sent, at_source, packets, units, sent_at)
    packets[row, TYPE] = type_
    calendar_push((cal_time, cal_seq, cal_msg, cal_node), ints, t, seq, row, node)


@njit(cache=True, inline="always")
def data_row(row, sender, receiver, msg_id, src, dst, hops, size_bytes, units_, kind,
             sent, at_source, packets, units, sent_at):
    """Write a data packet's fields into ``row`` (:data:`FIELDS`)."""
    for f in range(len(FIELDS)):
        packets[row, f] = 0
    packets[row, TYPE], packets[row, SIZE], packets[row, MSG_ID] = DATA, size_bytes, msg_id
    packets[row, SENDER], packets[row, RECEIVER] = sender, receiver
    packets[row, ORIG], packets[row, DST], packets[row, HOPS] = src, dst, hops
    packets[row, KIND], packets[row, AT_SOURCE] = kind, at_source
    units[row], sent_at[row] = units_, sent


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
    """The Python side of a protocol's compiled loop (the module docstring): the host
    files data packets (:meth:`file_data`) and hands its sends over
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
        self.sends_floats, self.sends_ints, self._kept = floats, table, None
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
