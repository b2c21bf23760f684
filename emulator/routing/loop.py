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
- the host's sends, taken as they are queued
  (:meth:`~emulator.routing.compiled_loop.CompiledLoop.take_sends`), are events too,
  merged with the calendar by the same key (:func:`next_event`);
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
the host's loop looks again, since that may come first. The Python side is
:class:`~emulator.routing.compiled_loop.CompiledLoop`; a protocol's loop extends it with
its own packets and codes (AODV's discoveries: :mod:`emulator.routing.aodv.discovery`).
"""
from __future__ import annotations

import math

from numba import njit

from emulator.hop_kernel import HEAP_SIZE, calendar_push
from emulator.routing.fanout import (_GROUP_START, _GROUP_TIME, _HEARD_IDS, EXPIRED,
                                     NEED_UNIFORMS, NEED_VIEW, hear, unicast)

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
#: of :meth:`~emulator.routing.compiled_loop.CompiledLoop._count_losses`).
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
