"""AODV's route discoveries and data hops in one compiled loop: RREQs flooded, RREPs
sent back, RERRs passed on and data packets forwarded without coming back to Python
(the links medium, without batteries).

Route discovery is most of an AODV run: at 200 mobile nodes and 10^5 messages, 1.51 M
of the host's 3.70 M events are RREQs (755 k ready at their sender, 754 k groups of
receivers hearing one) and 1.50 M are RREPs (docs/NOTES.md, "What step (3) has to
carry, counted"). Handled one at a time by the host's Python they cost about 18 us a
broadcast with its groups. Here they have a calendar of their own, in arrays, beside
the host's: the host's loop takes the least of its queues' heads and this calendar's,
and while this calendar's is the least, :func:`run` takes its events in the same
``(time, rank, number)`` order, numbered from the host's counter, so the run is the
one the host's Python made, event for event and draw for draw:

- a RREQ ready at its sender (if it is up) is broadcast by the fan-out's rules
  (:func:`emulator.routing.fanout.hear`), its receivers filed in groups;
- a group hearing it is walked (:func:`emulator.routing.aodv.receive.hear_rreq`), and
  each receiver it is new to rebroadcasts it or answers it (a RREP as the
  destination, or from its own route, and one to the destination for a gratuitous
  reply), filed at once in the receivers' order, as the protocol's Python does;
- a RREP ready at its sender crosses its link by the unicast frame's rules
  (:func:`emulator.routing.fanout.unicast`) and is heard by its next hop
  (:func:`emulator.routing.aodv.receive.hear_rrep`), which relays it;
- a RERR is broadcast, heard (:func:`emulator.routing.aodv.receive.hear_rerr`) and
  passed on under the rate limit;
- a data packet the host's Python sent from its source (which may have waited for a
  discovery) crosses its link by the same frame's rules and is forwarded at each node
  on its valid route (:func:`emulator.routing.aodv.rtable.use`), until it is staged as
  delivered or Python must drop it (its node down, its TTL spent, no valid route).

Every transmission's ledger row and control log entry are staged for the host, which
takes them before it logs one of its own and when its advance returns; deliveries are
handed over at each return (the protocol's timers stop when nothing is left to
deliver, so the host's count must be in step). :func:`run` returns when its next
event is not before the host's, or when it needs what only Python has: the view of
another epoch, uniforms, room in the duplicate table or in its own arrays; and it hands
Python what Python does: a MAC's failure (no link, or a frame lost or a receiver dead,
learnt at the arrival: the timer's number kept), a RREP with the A flag (answered with
a RREP-ACK), a RREP back at an originator still discovering (its held packets go), a
data packet to drop or expired at its link. After Python has
filed something the host's loop looks again, since that may come first. A group that
holds its own sender (only a self-loop makes one: input validation refuses them) is an
error (:data:`SELF_HEARD`).

Rows: a transmission is a row of ``packets`` (:data:`FIELDS`), held while an event
refers to it (``refs``); a group's receivers are a row of ``groups``. An event is
``(time, number, packet row, node)`` with ``node`` the sender of a packet ready to go,
a RREP's next hop hearing it or a data packet's next node, ``-1 - group row`` for a
group hearing a RREQ (every event here is of the host's rank "ready"). The host's
sends are taken as they are queued (:meth:`RouteDiscoveries.take_sends`) and are
events too, merged with the calendar by the same key. Nodes are the protocol's (and
the host's) positions. The shared medium (the channel's queue) and batteries (each
frame's energy) are the host's Python's still.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from emulator.hop_kernel import HEAP_SIZE, _calendar_pop, calendar_push, new_calendar
from emulator.routing.aodv.packets import Rrep
from emulator.routing.aodv.receive import (ANSWER, ARRIVED, DEST, REBROADCAST, REVERSE,
                                           hear_rerr, hear_rrep, hear_rreq)
from emulator.routing.aodv.rtable import HOPS, NEXT, SEQ as ROUTE_SEQ, lost_cells, use
from emulator.routing.base import IP_UDP_BYTES
from emulator.routing.fanout import (_GROUP_START, _GROUP_TIME, _HEARD_IDS, EXPIRED,
                                     NEED_UNIFORMS, NEED_VIEW, Fanout, hear, unicast)

#: A transmission's fields, in ``packets``' columns (positions for nodes; -1 for an
#: unknown destination sequence number): a RREQ's; a RREP uses ``orig``, ``dst``,
#: ``dst_seq``, ``hops``, ``gratuitous`` (its A flag) and ``receiver`` (its lifetime is
#: in ``lifetimes``); a data packet uses ``orig`` (its source), ``dst``, ``hops`` (the
#: hops it has taken, the host's TTL count), ``sender`` (the node it leaves, -1 while
#: it is to be forwarded), ``receiver`` (its next hop), ``kind`` (its kind's code in
#: the ledger) and ``at_source`` (1 at its source, before its first hop: its flow's
#: first wait is then counted); its size in units is in ``lifetimes``, when it was
#: sent in ``sent_at``.
FIELDS = ("orig", "orig_seq", "rreq_id", "dst", "dst_seq", "hops", "ttl", "gratuitous",
          "size_bytes", "sender", "msg_id", "type", "receiver", "entries", "kind",
          "at_source")
(_ORIG, _ORIG_SEQ, _RREQ_ID, _DST, _DST_SEQ, _HOPS, _TTL, _GRATUITOUS, _SIZE, _SENDER,
 _MSG_ID, _TYPE, _RECEIVER, _ENTRIES, _KIND, _AT_SOURCE) = range(len(FIELDS))
#: The control types the loop carries (``packets[:, type]``), by code, then data. A
#: RERR's list of unreachable destinations is ``lists[row, :, :entries]`` (positions
#: over sequence numbers, as :func:`~.rtable.unreachable` reads it).
TYPES = ("RREQ", "RREP", "RERR")
_RREQ, _RREP, _RERR, _DATA = 0, 1, 2, 3

#: What :func:`run` returns (the host's Python does what it names, then calls again):
#:
#: - ``IDLE``: its next event is not before the host's next one (or it has none);
#: - ``NEED_READY_VIEW``: the view in force at ``floats[ASK]``, for a packet ready then;
#: - ``NEED_FAN_ALIVE``: who is up at the fan-out's asked arrival (``Fanout.ask_time``);
#: - ``NEED_FAN_UNIFORMS``: more uniforms for the fan-out's walk;
#: - ``NEED_SEEN``: room in the duplicate table for ``ints[ROOM]`` keys at ``floats[ASK]``;
#: - ``NEED_ROOM``: room in the loop's arrays (``ints[ROOM]`` entries for a RERR's walk);
#: - ``SELF_HEARD``: the next group holds its sender (an error);
#: - ``NEED_FRAME_UNIFORMS``: the two uniforms a unicast frame may take;
#: - ``NEED_FRAME_ALIVE``: who is up at the current RREP's arrival, ``floats[ASK]``;
#: - ``MAC_NOW``: the current RREP's next hop is out of range (no link);
#: - ``MAC_LATER``: its sender's MAC will learn at ``floats[ARRIVE]`` that it failed;
#: - ``RREP_IN_PYTHON``: the current RREP (A flag) is Python's to hear;
#: - ``BACK_AT_ORIGINATOR``: it is back at an originator still discovering;
#: - ``DATA_EXPIRED``: the current data packet waited too long for its link;
#: - ``DATA_IN_PYTHON``: the current data packet is Python's from here (its node is
#:   down, its TTL is spent, it has no valid route, or it is back at its source).
#:
#: ``MAC_NOW`` and ``MAC_LATER`` are a data packet's too (the row's type tells).
(IDLE, NEED_READY_VIEW, NEED_FAN_ALIVE, NEED_FAN_UNIFORMS, NEED_SEEN, NEED_ROOM,
 SELF_HEARD, NEED_FRAME_UNIFORMS, NEED_FRAME_ALIVE, MAC_NOW, MAC_LATER, RREP_IN_PYTHON,
 BACK_AT_ORIGINATOR, DATA_EXPIRED, DATA_IN_PYTHON) = range(15)

# what _unicast returns for a frame never sent (it waited too long for its link)
_NOT_SENT = -1
# ``ints``' fields (HEAP_SIZE is the calendar's, first)
(_PHASE, SEQ, NEXT_ID, DRAWN, ROWS_FREE, GROUPS_FREE, STAGED, N_LOST, N_DEAD,
 N_EXPIRED, ROOM, CURRENT_ROW, CURRENT_NODE, LINK, DROPPED, MAC_SEQ, CURRENT_SEQ,
 N_ARRIVED, N_FIRST, SENDS_AT, SENDS_END, _INTS) = range(1, 23)
#: The host's sends the loop has taken (``sends_ints``' rows, in order of their
#: ``(time, number)``; their times and sizes in units are ``sends_floats``' rows).
SENDS_INTS = ("seq", "msg_id", "src", "dst", "size_bytes", "kind")
# ``floats``' fields: the ready view's span, the arrival view's, the time asked about,
# the current event's time
RV_START, RV_END, AV_START, AV_END, ASK, CURRENT_T, START, ARRIVE, _FLOATS = range(9)
#: The events, transmissions and groups there is room for at first (doubled as needed).
CAPACITY = 1024
#: The room for a RERR walk's output at first, per node (grown as needed).
TOLD = 4
# phases: between events, in a broadcast (resumed after NEED_FAN_ALIVE or
# NEED_FAN_UNIFORMS), after a unicast's frame (resumed after NEED_FRAME_ALIVE)
_BETWEEN, _SENDING, _SENT = 0, 1, 2
# ``times``' fields (the protocol's timing, fixed for a run)
_ACTIVE_ROUTE_TIMEOUT, _PATH_DISCOVERY_TIME, _NET_TRAVERSAL_TIME, _NODE_TRAVERSAL_TIME, \
    _MAX_WAIT, _MY_ROUTE_TIMEOUT, _DELETE_PERIOD, _RATELIMIT_INTERVAL = range(8)
# ``consts``' fields: a RREP's size in bytes, whether answers for a neighbour ask for a
# RREP-ACK, a RERR's size less 8 bytes an entry, RERRs a node may send a second, the
# hops a data packet may take (the host's TTL), the host's bytes per size unit
_RREP_BYTES, _RREP_ACK, _RERR_BYTES, _RERR_RATELIMIT, _IP_TTL, _BYTES_PER_UNIT = range(6)
#: A staged transmission's integer fields (``out_ints``' rows; its start, cost and size
#: in units are ``out_floats``' rows), as the ledger takes them: ``kind`` is the
#: ledger's code of a data packet's kind, -1 for a control packet.
STAGED_INTS = ("node", "msg_id", "size_bytes", "receiver", "lost", "type", "src", "dst",
               "kind")


@njit(cache=True, inline="always")
def _room(n):
    """The free rows, groups and calendar entries an event of ``n`` nodes may need."""
    return 2 * n + 2


@njit(cache=True, inline="always")
def _before(t, seq, stop_t, stop_rank, stop_seq, ready_rank):
    """Whether event ``(t, ready_rank, seq)`` comes before ``(stop_t, stop_rank,
    stop_seq)``."""
    if t != stop_t:
        return t < stop_t
    if ready_rank != stop_rank:
        return ready_rank < stop_rank
    return seq < stop_seq


@njit(cache=True, inline="always")
def _release(packets_refs, free_rows, ints, row):
    """One event fewer refers to packet ``row``; it is free with none."""
    packets_refs[row] -= 1
    if packets_refs[row] == 0:
        free_rows[ints[ROWS_FREE]] = row
        ints[ROWS_FREE] += 1


@njit(cache=True, inline="always")
def _new_row(packets_refs, free_rows, ints):
    """A free packet row, referred to once."""
    ints[ROWS_FREE] -= 1
    row = free_rows[ints[ROWS_FREE]]
    packets_refs[row] = 1
    return row


@njit(cache=True, _nrt=False)
def run(stop_t, stop_rank, stop_seq, until, ready_rank, cal_time, cal_seq, cal_msg,
        cal_node, ints, floats, times, packets, refs, free_rows, groups, group_len,
        free_groups, out_floats, out_ints, first, last, bandwidths, costs, alive_ready,
        head, attrs, link_costs, alive, packet_lifetimes, link_times, pool, ids,
        fan_ints, fan_floats, hello_on, reorder, heard_at, heard_rank, heard_next,
        lifetimes, routes, latest, seen_keys, seen_untils, seen_count, todo,
        last_broadcast, seqs, discovering, consts, lists, told, rerr_limits, arrived_at,
        arrived_ids, sent_at, sends_floats, sends_ints, flow_started, first_flows,
        first_waits):
    """Take this calendar's events while they come before the host's next one
    ``(stop_t, stop_rank, stop_seq)`` and before ``until``; returns why it stopped (the
    module docstring). ``ints``/``floats``: the loop's state, which the host reads and
    writes between calls (the event counter, the next control id and the uniforms
    drawn are the host's, handed over in them). The host's sends it has taken
    (``sends_*``) are events too, merged with the calendar's. Its 61 arguments cost
    about 1.6 us a call to check."""
    cal = (cal_time, cal_seq, cal_msg, cal_node)
    while True:
        phase = ints[_PHASE]
        if phase != _BETWEEN:   # a transmission stopped for Python: on with it, once
            ints[_PHASE] = _BETWEEN
            if phase == _SENDING:
                code = _send(ints, floats, times, packets, refs, free_rows, groups,
                             group_len, free_groups, out_floats, out_ints, first, last,
                             bandwidths, costs, head, attrs, alive, link_times, pool, ids,
                             fan_ints, fan_floats, reorder, consts, cal, ready_rank, True)
                if code != IDLE:   # Python again, then on again
                    ints[_PHASE] = _SENDING
            else:
                code = _after_unicast(ints, floats, consts, packets, refs, free_rows,
                                      packet_lifetimes, out_floats, out_ints, link_costs,
                                      alive, arrived_at, arrived_ids, cal)
                if code == NEED_FRAME_ALIVE:
                    ints[_PHASE] = _SENT
            if code != IDLE:
                return code
        at, sent = ints[SENDS_AT], False   # the next send, if it comes first
        if at < ints[SENDS_END]:
            t, seq = sends_floats[0, at], sends_ints[0, at]
            sent = ints[HEAP_SIZE] == 0 or t < cal_time[0] or (t == cal_time[0]
                                                                and seq < cal_seq[0])
        if not sent:
            if ints[HEAP_SIZE] == 0:
                return IDLE
            t, seq = cal_time[0], cal_seq[0]
        if not (t < until and _before(t, seq, stop_t, stop_rank, stop_seq, ready_rank)):
            return IDLE
        # room for what the event may file (numba checks no bounds): a broadcast's
        # groups (one a receiver at most), a group's rebroadcasts and answers (two a
        # receiver at most: a gratuitous reply), a staged row
        room = _room(len(heard_at))
        if (ints[ROWS_FREE] < room or ints[GROUPS_FREE] < room
                or len(cal_time) - ints[HEAP_SIZE] < room
                or ints[STAGED] >= out_floats.shape[1]
                or ints[N_ARRIVED] >= len(arrived_ids)
                or ints[N_FIRST] >= len(first_waits)):
            return NEED_ROOM
        if sent:   # a data packet at its source, sent by the host
            if not floats[RV_START] <= t < floats[RV_END]:
                floats[ASK] = t
                return NEED_READY_VIEW
            if len(pool) - ints[DRAWN] < 2:
                return NEED_FRAME_UNIFORMS   # a frame takes two uniforms at most
            ints[SENDS_AT] = at + 1
            row = _new_row(refs, free_rows, ints)
            node = sends_ints[2, at]
            _data_row(row, -1, -1, sends_ints[1, at], node, sends_ints[3, at], 0,
                      sends_ints[4, at], sends_floats[1, at], sends_ints[5, at], t, 1,
                      packets, packet_lifetimes, sent_at)
            ints[CURRENT_ROW], ints[CURRENT_NODE], floats[CURRENT_T] = row, node, t
            ints[CURRENT_SEQ] = seq
            code = _data_hop(False, ints, floats, times, consts, packets, refs, free_rows,
                             packet_lifetimes, first, last, head, attrs, link_costs,
                             alive, alive_ready, link_times, pool, reorder, lifetimes,
                             routes, out_floats, out_ints, arrived_at, arrived_ids,
                             sent_at, flow_started, first_flows, first_waits, cal)
            if code != IDLE:
                return code
            continue
        row, node = cal_msg[0], cal_node[0]
        if node >= 0:   # a packet ready at its sender, or at its next hop
            if not floats[RV_START] <= t < floats[RV_END]:
                floats[ASK] = t
                return NEED_READY_VIEW
            kind = packets[row, _TYPE]
            rrep = kind == _RREP
            sending = node == packets[row, _SENDER]
            if (kind == _DATA or rrep and sending) and len(pool) - ints[DRAWN] < 2:
                return NEED_FRAME_UNIFORMS   # a frame takes two uniforms at most
            _calendar_pop(cal, ints)
            if kind == _DATA:
                ints[CURRENT_ROW], ints[CURRENT_NODE], floats[CURRENT_T] = row, node, t
                ints[CURRENT_SEQ] = seq
                code = _data_hop(sending, ints, floats, times, consts, packets, refs,
                                 free_rows, packet_lifetimes, first, last, head, attrs,
                                 link_costs, alive, alive_ready, link_times, pool,
                                 reorder, lifetimes, routes, out_floats, out_ints,
                                 arrived_at, arrived_ids, sent_at, flow_started,
                                 first_flows, first_waits, cal)
                if code != IDLE:
                    return code
                continue
            if not alive_ready[node]:   # a dead node neither hears nor sends
                _release(refs, free_rows, ints, row)
                continue
            ints[CURRENT_ROW], ints[CURRENT_NODE], floats[CURRENT_T] = row, node, t
            if not rrep:   # a RREQ or a RERR broadcast
                code = _send(ints, floats, times, packets, refs, free_rows, groups,
                             group_len, free_groups, out_floats, out_ints, first, last,
                             bandwidths, costs, head, attrs, alive, link_times, pool, ids,
                             fan_ints, fan_floats, reorder, consts, cal, ready_rank, False)
                if code != IDLE:
                    ints[_PHASE] = _SENDING
            elif sending:
                code = _send_unicast(ints, floats, times, consts, packets, refs,
                                     free_rows, packet_lifetimes, first, last, head,
                                     attrs, link_costs, alive, link_times, pool, reorder,
                                     out_floats, out_ints, arrived_at, arrived_ids, cal)
            else:
                code = _hear_rrep(t, node, row, ints, times, packets, refs, free_rows,
                                  packet_lifetimes, hello_on, heard_at, heard_rank,
                                  heard_next, lifetimes, routes, discovering, cal)
            if code != IDLE:
                return code
            continue
        group = -1 - node   # a group hears it
        count = group_len[group]
        sender = packets[row, _SENDER]
        for k in range(count):
            if groups[group, k] == sender:   # only a self-loop makes one
                ints[CURRENT_NODE] = sender
                return SELF_HEARD
        if packets[row, _TYPE] == _RERR:
            if count * packets[row, _ENTRIES] > len(told):   # what the walk may write
                ints[ROOM] = count * packets[row, _ENTRIES]
                return NEED_ROOM
            _calendar_pop(cal, ints)
            ints[CURRENT_ROW], ints[CURRENT_NODE], floats[CURRENT_T] = row, node, t
            _hear_rerr(t, sender, row, groups[group, :count], ints, floats, times,
                       consts, packets, refs, free_rows, groups, free_groups, hello_on,
                       heard_at, heard_rank, heard_next, lifetimes, routes, todo, told,
                       lists, rerr_limits, last_broadcast, cal)
            continue
        if seen_count[0] + count > len(seen_keys) // 2:
            floats[ASK], ints[ROOM] = t, count
            return NEED_SEEN
        _calendar_pop(cal, ints)
        ints[CURRENT_ROW], ints[CURRENT_NODE], floats[CURRENT_T] = row, node, t
        listed = _hear_rreq(t, sender, row, groups[group, :count], times, packets,
                            hello_on, heard_at, heard_rank, heard_next, lifetimes, routes,
                            latest, seen_keys, seen_untils, seen_count, todo)
        _answer_or_send_on(ints, floats, times, consts, packets, refs, free_rows, groups,
                           group_len, free_groups, todo, last_broadcast, seqs, routes,
                           lifetimes, packet_lifetimes, cal, listed)


@njit(cache=True, inline="always")
def _hear_rreq(t, sender, row, receivers, times, packets, hello_on, heard_at, heard_rank,
               heard_next, lifetimes, routes, latest, seen_keys, seen_untils, seen_count,
               todo):
    """``receivers`` hear the RREQ of ``row`` from ``sender`` at ``t``
    (:func:`~.receive.hear_rreq`, with the lifetimes the protocol's Python gives it);
    returns how many it listed in ``todo``."""
    hops = packets[row, _HOPS] + 1
    reverse_lifetime = t + max(2 * times[_NET_TRAVERSAL_TIME]
                               - 2 * hops * times[_NODE_TRAVERSAL_TIME],
                               times[_NODE_TRAVERSAL_TIME])
    return hear_rreq(
        t, sender, receivers, hello_on, t + times[_ACTIVE_ROUTE_TIMEOUT],
        t + times[_PATH_DISCOVERY_TIME], heard_at, heard_rank, heard_next, lifetimes,
        routes, latest, seen_keys, seen_untils, seen_count, todo, packets[row, _ORIG],
        packets[row, _ORIG_SEQ], packets[row, _RREQ_ID], packets[row, _DST],
        packets[row, _DST_SEQ], hops, packets[row, _TTL], reverse_lifetime)


@njit(cache=True, inline="always")
def _answer_or_send_on(ints, floats, times, consts, packets, refs, free_rows, groups,
                       group_len, free_groups, todo, last_broadcast, seqs, routes,
                       lifetimes, packet_lifetimes, cal, count):
    """What the current group's walk left (``count`` receivers listed), in order: a
    rebroadcast, or an answer (a RREP, and one to the destination for a gratuitous
    reply with a route back), filed at once; then the group's rows let go. As the
    protocol's Python does it (``Aodv._hear_rreq``, ``Aodv.answer_rreq``)."""
    row, group, t = ints[CURRENT_ROW], -1 - ints[CURRENT_NODE], floats[CURRENT_T]
    for j in range(count):
        k, needs, value = todo[0, j], todo[1, j], todo[2, j]
        if needs & REBROADCAST:
            u = groups[group, k]
            last_broadcast[u] = t
            # rreq._replace(dst_seq=value, hops=hops + 1, ttl=ttl - 1), from u
            _rreq(t, u, packets[row, _ORIG], packets[row, _ORIG_SEQ],
                  packets[row, _RREQ_ID], packets[row, _DST], value,
                  packets[row, _HOPS] + 1, packets[row, _TTL] - 1,
                  packets[row, _GRATUITOUS], packets[row, _SIZE], ints, refs, free_rows,
                  packets, cal)
        elif needs & DEST:   # §6.6.1: with a fresh sequence number
            u, sender = groups[group, k], packets[row, _SENDER]
            seqs[u] = max(seqs[u], max(packets[row, _DST_SEQ], 0))   # None counts 0
            _reply(t, u, sender, u, seqs[u], packets[row, _ORIG], 0,
                   times[_MY_ROUTE_TIMEOUT], 0, consts[_RREP_BYTES], ints, refs,
                   free_rows, packets, packet_lifetimes, cal)
        elif needs & ANSWER:   # §6.6.2, and §6.6.3 with the G flag and a route back
            u, sender = groups[group, k], packets[row, _SENDER]
            orig, dst = packets[row, _ORIG], packets[row, _DST]
            hops = routes[u, dst, HOPS]
            # a destination that is a neighbour may hear us but not be heard: ask the
            # node the RREP goes to for an acknowledgement (ns-3's rule)
            ack = consts[_RREP_ACK] and hops == 1
            _reply(t, u, sender, dst, routes[u, dst, ROUTE_SEQ], orig, hops,
                   lifetimes[u, dst] - t, ack, consts[_RREP_BYTES], ints, refs, free_rows,
                   packets, packet_lifetimes, cal)
            if packets[row, _GRATUITOUS] and needs & REVERSE:
                _reply(t, u, routes[u, dst, NEXT], orig, routes[u, orig, ROUTE_SEQ], dst,
                       routes[u, orig, HOPS], lifetimes[u, orig] - t, 0,
                       consts[_RREP_BYTES], ints, refs, free_rows, packets,
                       packet_lifetimes, cal)
    free_groups[ints[GROUPS_FREE]] = group
    ints[GROUPS_FREE] += 1
    _release(refs, free_rows, ints, row)


@njit(cache=True, inline="always")
def _hear_rerr(t, sender, row, receivers, ints, floats, times, consts, packets, refs,
               free_rows, groups, free_groups, hello_on, heard_at, heard_rank,
               heard_next, lifetimes, routes, todo, told, lists, rerr_limits,
               last_broadcast, cal):
    """``receivers`` hear the RERR of ``row`` from ``sender`` at ``t``
    (:func:`~.receive.hear_rerr`, with the lifetimes the protocol's Python gives it),
    and pass it on (:func:`_pass_on`)."""
    listed = hear_rerr(t, sender, receivers, hello_on, t + times[_ACTIVE_ROUTE_TIMEOUT],
                       heard_at, heard_rank, heard_next, lifetimes, routes, todo,
                       lists[row, :, :packets[row, _ENTRIES]], t + times[_DELETE_PERIOD],
                       told)
    _pass_on(ints, floats, times, consts, packets, refs, free_rows, groups, free_groups,
             todo, told, lists, rerr_limits, last_broadcast, cal, listed)


@njit(cache=True, inline="always")
def _pass_on(ints, floats, times, consts, packets, refs, free_rows, groups, free_groups,
             todo, told, lists, rerr_limits, last_broadcast, cal, count):
    """What the current group's RERR walk left (``count`` receivers listed), in order:
    each that invalidated routes with precursors broadcasts a RERR of those
    destinations (``told``, in turn) unless it sent RERR_RATELIMIT this second; then
    the group's rows let go. As the protocol's Python does it (``Aodv._hear_rerr``,
    ``Aodv._send_rerr``)."""
    row, group, t = ints[CURRENT_ROW], -1 - ints[CURRENT_NODE], floats[CURRENT_T]
    at = 0
    for j in range(count):
        k, many = todo[0, j], todo[2, j]
        if many:
            u = groups[group, k]
            if within_limit(t, rerr_limits, u, consts[_RERR_RATELIMIT],
                            times[_RATELIMIT_INTERVAL]):
                last_broadcast[u] = t
                new = _rerr(t, u, many, consts[_RERR_BYTES] + 8 * many, ints, refs,
                            free_rows, packets, cal)
                for e in range(many):
                    lists[new, 0, e] = lists[row, 0, told[at + e]]
                    lists[new, 1, e] = lists[row, 1, told[at + e]]
            at += many
    free_groups[ints[GROUPS_FREE]] = group
    ints[GROUPS_FREE] += 1
    _release(refs, free_rows, ints, row)


@njit(cache=True, inline="always")
def within_limit(t, limits, u, limit, interval):
    """Count one more packet of node ``u`` at ``t`` in ``limits[u]`` (the end of its
    second, so far), the second starting over at every ``interval`` from 0; False,
    counting nothing, once ``limit`` are in (RFC 3561's RREQ_RATELIMIT and
    RERR_RATELIMIT, counted as ns-3's timers count them).

    >>> import numpy as np
    >>> limits = np.zeros((1, 2))
    >>> [within_limit(t, limits, 0, 2, 1.0) for t in (0.2, 0.5, 0.9, 1.1)]
    [True, True, False, True]
    >>> limits[0].tolist()     # the second ending at 2.0, one sent in it
    [2.0, 1.0]
    """
    if t >= limits[u, 0]:   # a new second
        end = (math.floor(t / interval) + 1) * interval
        if end <= t:   # rounding: the next second ends after t
            end += interval
        limits[u, 0], limits[u, 1] = end, 0.0
    if limits[u, 1] >= limit:
        return False
    limits[u, 1] += 1.0
    return True


@njit(cache=True, inline="always")
def _reply(t, u, to, dst, dst_seq, orig, hops, lifetime, ack, size_bytes, ints, refs,
           free_rows, packets, packet_lifetimes, cal):
    """``u`` sends ``to`` a RREP of its route to ``dst`` for ``orig`` at ``t`` (the
    protocol's ``_unicast``; :func:`_filed`)."""
    row = _filed(t, u, _RREP, size_bytes, ints, refs, free_rows, packets, cal)
    packets[row, _ORIG], packets[row, _DST], packets[row, _DST_SEQ] = orig, dst, dst_seq
    packets[row, _HOPS], packets[row, _GRATUITOUS] = hops, ack
    packets[row, _RECEIVER] = to
    packet_lifetimes[row] = lifetime


@njit(cache=True, inline="always")
def _send(ints, floats, times, packets, refs, free_rows, groups, group_len, free_groups,
          out_floats, out_ints, first, last, bandwidths, costs, head, attrs, alive,
          link_times, pool, ids, fan_ints, fan_floats, reorder, consts, cal, ready_rank,
          resume):
    """Broadcast the current RREQ or RERR from its sender (the host's ``_broadcast``
    on the links medium): the fan-out's walk, then the row staged and the groups
    filed."""
    row, u, ready = ints[CURRENT_ROW], ints[CURRENT_NODE], floats[CURRENT_T]
    need, taken, lost, dead, count, heard, arrive, start, done = hear(
        ready, times[_MAX_WAIT], bandwidths[u], u, first[u], last[u], packets[row, _SIZE],
        ints[DRAWN], resume, True, reorder, floats[AV_START], floats[AV_END], head, attrs,
        link_times, pool, alive, ids, fan_ints, fan_floats)
    if need == NEED_VIEW:
        return NEED_FAN_ALIVE
    if need == NEED_UNIFORMS:
        return NEED_FAN_UNIFORMS
    if need == EXPIRED:   # waited too long for its links: dropped at its sender
        ints[N_EXPIRED] += 1
        _release(refs, free_rows, ints, row)
        return IDLE
    ints[DRAWN] = taken
    _stage_control(ints, consts, packets, row, out_floats, out_ints, start, costs[u], u,
                   -1, False)
    ints[N_LOST] += lost
    ints[N_DEAD] += dead
    # the groups, numbered as the host numbers them: the first one more than the last
    # event's, each as many on as it holds
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
    _release(refs, free_rows, ints, row)
    return IDLE


@njit(cache=True, inline="always")
def _data_hop(sending, ints, floats, times, consts, packets, refs, free_rows,
              packet_lifetimes, first, last, head, attrs, link_costs, alive, alive_ready,
              link_times, pool, reorder, lifetimes, routes, out_floats, out_ints,
              arrived_at, arrived_ids, sent_at, flow_started, first_flows, first_waits,
              cal):
    """The current data packet at its node (the host's ``_forward``): sent on if the
    node is up, its TTL not spent and its route valid (the route kept active, as
    :func:`~.rtable.use` does for the protocol's ``next_hop``; at its source, its
    flow's first packet's wait staged), then its frame (:func:`_send_unicast`).
    Anything else is Python's (:data:`DATA_IN_PYTHON`): its drops, notices and route
    requests are the host's books. One Python filed (``sending``) has its next hop
    already."""
    row, u, t = ints[CURRENT_ROW], ints[CURRENT_NODE], floats[CURRENT_T]
    if not sending:
        src, dst = packets[row, _ORIG], packets[row, _DST]
        at_source = packets[row, _AT_SOURCE]
        if (not alive_ready[u] or packets[row, _HOPS] >= consts[_IP_TTL] or u == dst
                or u == src and not at_source):
            _release(refs, free_rows, ints, row)
            return DATA_IN_PYTHON
        nxt = use(routes, lifetimes, u, dst, src, t, t + times[_ACTIVE_ROUTE_TIMEOUT])
        if nxt < 0:
            _release(refs, free_rows, ints, row)
            return DATA_IN_PYTHON
        if at_source:
            packets[row, _AT_SOURCE] = 0
            if not flow_started[u, dst]:   # its flow's first: its wait for a route
                flow_started[u, dst] = True
                f = ints[N_FIRST]
                first_flows[0, f], first_flows[1, f] = u, dst
                first_waits[f] = t - sent_at[row]
                ints[N_FIRST] = f + 1
        packets[row, _HOPS] += 1
        packets[row, _SENDER], packets[row, _RECEIVER] = u, nxt
    return _send_unicast(ints, floats, times, consts, packets, refs, free_rows,
                         packet_lifetimes, first, last, head, attrs, link_costs, alive,
                         link_times, pool, reorder, out_floats, out_ints, arrived_at,
                         arrived_ids, cal)


@njit(cache=True, inline="always")
def _send_unicast(ints, floats, times, consts, packets, refs, free_rows, packet_lifetimes,
                  first, last, head, attrs, link_costs, alive, link_times, pool, reorder,
                  out_floats, out_ints, arrived_at, arrived_ids, cal):
    """The current RREP or data packet sent to its next hop (:func:`_unicast`) and what
    follows it (:func:`_after_unicast`, resumed in the ``_SENT`` phase if it needs
    who is up at the arrival). Returns what Python must do, else :data:`IDLE`."""
    code = _unicast(ints, floats, times, packets, refs, free_rows, first, last, head,
                    attrs, link_times, pool, reorder)
    if code == _NOT_SENT:
        return IDLE
    if code != IDLE:
        return code
    code = _after_unicast(ints, floats, consts, packets, refs, free_rows, packet_lifetimes,
                          out_floats, out_ints, link_costs, alive, arrived_at,
                          arrived_ids, cal)
    if code == NEED_FRAME_ALIVE:
        ints[_PHASE] = _SENT
    return code


@njit(cache=True, inline="always")
def _unicast(ints, floats, times, packets, refs, free_rows, first, last, head, attrs,
             link_times, pool, reorder):
    """Send the current RREP or data packet to its next hop (the host's ``_send_hop``
    and ``_transmit`` on the links medium): :data:`MAC_NOW` if the next hop is out of
    range (no link), ``_NOT_SENT`` if it waited too long for its link (a data packet:
    :data:`DATA_EXPIRED`, as the host drops it), else the frame
    (:func:`~emulator.routing.fanout.unicast`; :data:`IDLE`), whose fate
    :func:`_after_unicast` decides."""
    row, u, t = ints[CURRENT_ROW], ints[CURRENT_NODE], floats[CURRENT_T]
    v, k = packets[row, _RECEIVER], -1
    for i in range(first[u], last[u]):
        if head[i] == v:
            k = i
            break
    if k < 0:   # out of range: the MAC gives up (its retries take no time here)
        _release(refs, free_rows, ints, row)
        return MAC_NOW
    code, start, _, arrive, dropped, taken = unicast(
        t, times[_MAX_WAIT], True, reorder, u, v, k, packets[row, _SIZE], attrs,
        link_times, pool, ints[DRAWN])
    ints[DRAWN] = taken
    if code == EXPIRED:   # waited too long for its link: dropped at its sender
        _release(refs, free_rows, ints, row)
        if packets[row, _TYPE] == _DATA:
            return DATA_EXPIRED
        ints[N_EXPIRED] += 1
        return _NOT_SENT
    floats[START], floats[ARRIVE] = start, arrive
    ints[LINK], ints[DROPPED] = k, dropped
    return IDLE


@njit(cache=True, inline="always")
def _after_unicast(ints, floats, consts, packets, refs, free_rows, packet_lifetimes,
                   out_floats, out_ints, link_costs, alive, arrived_at, arrived_ids, cal):
    """What follows the current RREP's or data packet's frame (the host's
    ``_after_hop``): its ledger row staged; if it arrives at its next hop up and not
    lost, a data packet at its destination is staged as arrived, anything else is
    ready there; else the sender's MAC learns of it at the arrival (:data:`MAC_LATER`,
    the timer's number kept in ``ints[MAC_SEQ]``)."""
    row, u, arrive = ints[CURRENT_ROW], ints[CURRENT_NODE], floats[ARRIVE]
    v, dropped = packets[row, _RECEIVER], ints[DROPPED]
    reached = True
    if not dropped:
        if not floats[AV_START] <= arrive < floats[AV_END]:
            floats[ASK] = arrive
            return NEED_FRAME_ALIVE
        reached = alive[v]
    lost = dropped or not reached
    cost = link_costs[ints[LINK]]
    data = packets[row, _TYPE] == _DATA
    if data:
        _stage(ints, out_floats, out_ints, floats[START], cost, u, packets[row, _MSG_ID],
               packets[row, _SIZE], v, lost, _DATA, packets[row, _ORIG],
               packets[row, _DST], packets[row, _KIND], packet_lifetimes[row])
    else:
        _stage_control(ints, consts, packets, row, out_floats, out_ints, floats[START],
                       cost, u, v, lost)
    if not lost and data and v == packets[row, _DST]:   # delivered: no event follows
        a = ints[N_ARRIVED]
        arrived_at[a], arrived_ids[a] = arrive, packets[row, _MSG_ID]
        ints[N_ARRIVED] = a + 1
        _release(refs, free_rows, ints, row)
        return IDLE
    ints[SEQ] += 1
    if lost:
        ints[MAC_SEQ] = ints[SEQ]
        _release(refs, free_rows, ints, row)
        return MAC_LATER
    calendar_push(cal, ints, arrive, ints[SEQ], row, v)   # the row goes on with it
    return IDLE


@njit(cache=True, inline="always")
def _hear_rrep(t, u, row, ints, times, packets, refs, free_rows, packet_lifetimes,
               hello_on, heard_at, heard_rank, heard_next, lifetimes, routes, discovering,
               cal):
    """Node ``u`` hears the RREP of ``row`` (the protocol's ``_on_rrep``): the routes'
    work (:func:`~.receive.hear_rrep`), then relayed to the next hop back, handed to
    Python at an originator still discovering (:data:`BACK_AT_ORIGINATOR`: the packets it
    held go), or let go. One with the A flag is Python's whole
    (:data:`RREP_IN_PYTHON`: it answers with a RREP-ACK first)."""
    if packets[row, _GRATUITOUS]:
        _release(refs, free_rows, ints, row)
        return RREP_IN_PYTHON
    hops = packets[row, _HOPS] + 1
    until = t + times[_ACTIVE_ROUTE_TIMEOUT]
    lifetime = packet_lifetimes[row]
    to = hear_rrep(t, u, packets[row, _SENDER], hello_on, until, packets[row, _ORIG],
                   packets[row, _DST], packets[row, _DST_SEQ], hops, t + lifetime, until,
                   heard_at, heard_rank, heard_next, lifetimes, routes)
    if to >= 0:   # relayed: Rrep(dst, dst_seq, orig, hops, lifetime), from u
        _reply(t, u, to, packets[row, _DST], packets[row, _DST_SEQ], packets[row, _ORIG],
               hops, lifetime, 0, packets[row, _SIZE], ints, refs, free_rows, packets,
               packet_lifetimes, cal)
    _release(refs, free_rows, ints, row)
    if to == ARRIVED and discovering[u, packets[row, _DST]]:
        return BACK_AT_ORIGINATOR
    return IDLE   # relayed, let go, or back where no discovery waits for it


@njit(cache=True, inline="always")
def _stage(ints, out_floats, out_ints, start, cost, u, msg_id, size, v, lost, type_, src,
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
def _stage_control(ints, consts, packets, row, out_floats, out_ints, start, cost, u, v,
                   lost):
    """A control packet's transmission from ``u`` to ``v`` (-1: everyone) staged: its
    ledger row is from ``u`` to ``v``, its size in units its bytes over the host's
    bytes per unit."""
    size = packets[row, _SIZE]
    _stage(ints, out_floats, out_ints, start, cost, u, packets[row, _MSG_ID], size, v,
           lost, packets[row, _TYPE], u, v, -1, size / consts[_BYTES_PER_UNIT])


@njit(cache=True, _nrt=False)
def file_rrep(t, node, seq, msg_id, receiver, orig, dst, dst_seq, hops, lifetime, ack,
              size_bytes, cal_time, cal_seq, cal_msg, cal_node, ints, refs, free_rows,
              packets, packet_lifetimes):
    """File a RREP ready at ``node`` at ``t`` (number ``seq``, message ``msg_id``) for
    ``receiver`` that Python sent; the caller has made room."""
    ints[SEQ], ints[NEXT_ID] = seq - 1, msg_id   # the host's, handed over at each run
    _reply(t, node, receiver, dst, dst_seq, orig, hops, lifetime, ack, size_bytes, ints,
           refs, free_rows, packets, packet_lifetimes,
           (cal_time, cal_seq, cal_msg, cal_node))


@njit(cache=True, _nrt=False)
def file_rerr(t, node, seq, msg_id, lost, size_bytes, cal_time, cal_seq, cal_msg,
              cal_node, ints, refs, free_rows, packets, lists):
    """File a RERR ready at ``node`` at ``t`` (number ``seq``, message ``msg_id``) that
    Python sent, of the destinations ``lost`` (positions over sequence numbers); the
    caller has made room."""
    ints[SEQ], ints[NEXT_ID] = seq - 1, msg_id   # the host's, handed over at each run
    row = _rerr(t, node, lost.shape[1], size_bytes, ints, refs, free_rows, packets,
                (cal_time, cal_seq, cal_msg, cal_node))
    for e in range(lost.shape[1]):
        lists[row, 0, e], lists[row, 1, e] = lost[0, e], lost[1, e]


@njit(cache=True, _nrt=False)
def file_rreq(t, node, seq, msg_id, orig, orig_seq, rreq_id, dst, dst_seq, hops, ttl,
              gratuitous, size_bytes, cal_time, cal_seq, cal_msg, cal_node, ints, refs,
              free_rows, packets):
    """File a RREQ ready at ``node`` at ``t`` (number ``seq``, message ``msg_id``) that
    Python sent; the caller has made room."""
    ints[SEQ], ints[NEXT_ID] = seq - 1, msg_id   # the host's, handed over at each run
    _rreq(t, node, orig, orig_seq, rreq_id, dst, dst_seq, hops, ttl, gratuitous,
          size_bytes, ints, refs, free_rows, packets,
          (cal_time, cal_seq, cal_msg, cal_node))


@njit(cache=True, _nrt=False)
def file_data(t, node, seq, msg_id, receiver, src, dst, hops, size_bytes, units, kind,
              sent, at_source, cal_time, cal_seq, cal_msg, cal_node, ints, refs,
              free_rows, packets, packet_lifetimes, sent_at):
    """File a data packet at ``node`` at ``t`` as the host's event number ``seq``: one
    leaving for ``receiver``, ``hops`` taken with this one, in the event being
    processed (the frame is sent at once, as the host's Python sends it), or one to
    forward from its source (``receiver`` -1: released after a route was found); the
    caller has made room."""
    row = _new_row(refs, free_rows, ints)
    _data_row(row, node if receiver >= 0 else -1, receiver, msg_id, src, dst, hops,
              size_bytes, units, kind, sent, at_source, packets, packet_lifetimes,
              sent_at)
    calendar_push((cal_time, cal_seq, cal_msg, cal_node), ints, t, seq, row, node)


@njit(cache=True, inline="always")
def _data_row(row, sender, receiver, msg_id, src, dst, hops, size_bytes, units, kind,
              sent, at_source, packets, packet_lifetimes, sent_at):
    """Write a data packet's fields into ``row`` (:data:`FIELDS`)."""
    for f in range(len(FIELDS)):
        packets[row, f] = 0
    packets[row, _TYPE], packets[row, _SIZE], packets[row, _MSG_ID] = (
        _DATA, size_bytes, msg_id)
    packets[row, _SENDER], packets[row, _RECEIVER] = sender, receiver
    packets[row, _ORIG], packets[row, _DST], packets[row, _HOPS] = src, dst, hops
    packets[row, _KIND], packets[row, _AT_SOURCE] = kind, at_source
    packet_lifetimes[row], sent_at[row] = units, sent


@njit(cache=True, inline="always")
def _filed(t, u, kind, size_bytes, ints, refs, free_rows, packets, cal):
    """A new row for a packet of ``kind`` ready at ``u`` at ``t``, its fields zero but
    its type, size, sender and message id (the next control id), filed with the next
    event number; returns the row for the caller to fill."""
    row = _new_row(refs, free_rows, ints)
    for f in range(len(FIELDS)):
        packets[row, f] = 0
    packets[row, _TYPE], packets[row, _SIZE] = kind, size_bytes
    packets[row, _SENDER], packets[row, _RECEIVER] = u, -1
    packets[row, _MSG_ID] = ints[NEXT_ID]
    ints[NEXT_ID] -= 1
    ints[SEQ] += 1
    calendar_push(cal, ints, t, ints[SEQ], row, u)
    return row


@njit(cache=True, inline="always")
def _rreq(t, u, orig, orig_seq, rreq_id, dst, dst_seq, hops, ttl, gratuitous, size_bytes,
          ints, refs, free_rows, packets, cal):
    """``u`` broadcasts a RREQ at ``t`` (:func:`_filed`)."""
    row = _filed(t, u, _RREQ, size_bytes, ints, refs, free_rows, packets, cal)
    packets[row, _ORIG], packets[row, _ORIG_SEQ], packets[row, _RREQ_ID] = (
        orig, orig_seq, rreq_id)
    packets[row, _DST], packets[row, _DST_SEQ] = dst, dst_seq
    packets[row, _HOPS], packets[row, _TTL], packets[row, _GRATUITOUS] = (
        hops, ttl, gratuitous)


@njit(cache=True, inline="always")
def _rerr(t, u, entries, size_bytes, ints, refs, free_rows, packets, cal):
    """``u`` broadcasts a RERR of ``entries`` destinations at ``t`` (:func:`_filed`);
    returns its row, whose list the caller fills."""
    row = _filed(t, u, _RERR, size_bytes, ints, refs, free_rows, packets, cal)
    packets[row, _ENTRIES] = entries
    return row


class RouteDiscoveries:
    """The route discoveries of an AODV run on the links medium, beside the host's
    calendar (:class:`~emulator.routing.host.RoutedTransport`), and its data packets'
    hops: :meth:`file` takes a RREQ, RREP or RERR the protocol's Python sent,
    :meth:`file_data` a data packet the host's Python sends to its next hop,
    :meth:`run` takes the loop's events before the host's next one, and :attr:`head`
    is the next event's ``(time, rank, number)``."""

    def __init__(self, host, protocol):
        self.host, self.protocol = host, protocol
        capacity = CAPACITY
        n = self.n = len(host._gids)
        self.ints = np.zeros(_INTS, np.int64)
        self.floats = np.zeros(_FLOATS)
        self._forget_ready_view()
        self.floats[AV_START], self.floats[AV_END] = math.inf, -math.inf
        p = protocol.params
        self.times = np.array([p["active_route_timeout"], protocol.path_discovery_time,
                               protocol.net_traversal_time, p["node_traversal_time"],
                               host.max_wait, protocol.my_route_timeout,
                               protocol.delete_period, p["ratelimit_interval"]])
        self.consts = np.array([Rrep(0, 0, 0, 0, 0.0).bytes(), p["rrep_ack"],
                                IP_UDP_BYTES + 4, p["rerr_ratelimit"], host.ip_ttl,
                                host.bytes_per_unit], np.int64)
        self.calendar = new_calendar(capacity)
        self.packets = np.zeros((capacity, len(FIELDS)), np.int64)
        self.refs = np.zeros(capacity, np.int64)
        self.lifetimes = np.zeros(capacity)   # a RREP's; a data packet's size in units
        self.sent_at = np.zeros(capacity)     # a data packet's
        self.lists = np.zeros((capacity, 2, n), np.int64)   # a RERR's
        self.told = np.zeros(TOLD * n, np.int64)   # what a RERR walk writes (grown)
        self.free_rows = np.arange(capacity - 1, -1, -1, dtype=np.int64)
        self.ints[ROWS_FREE] = capacity
        self.groups = np.zeros((capacity, n), np.int64)
        self.group_len = np.zeros(capacity, np.int64)
        self.free_groups = np.arange(capacity - 1, -1, -1, dtype=np.int64)
        self.ints[GROUPS_FREE] = capacity
        self.out_floats = np.zeros((3, 4096))
        self.out_ints = np.zeros((len(STAGED_INTS), 4096), np.int64)
        # data packets delivered, staged: their arrival and id; the packets in the loop
        # by id (the host's messages)
        self.arrived_at, self.arrived_ids = np.zeros(4096), np.zeros(4096, np.int64)
        self._data: dict = {}
        # flows' first packets' waits, staged (source and destination, wait)
        self.first_flows, self.first_waits = np.zeros((2, 1024), np.int64), np.zeros(1024)
        # the host's sends taken (SENDS_INTS), from ints[SENDS_AT] to ints[SENDS_END]
        self.sends_floats = np.zeros((2, 0))
        self.sends_ints = np.zeros((len(SENDS_INTS), 0), np.int64)
        self.ids = np.arange(n, dtype=np.int64)   # the groups hold positions
        self.fan = Fanout(n)
        self._views: dict = {}    # by epoch: a ready view's arrays (_ready_view)
        self._kept = self._args = None   # run's arguments (_arguments)
        gids = host._gids.tolist()
        self._gids = None if gids == list(range(n)) else host._gids   # None: the same
        #: ``(time, rank, number)`` of the next event, None for none.
        self.head = None

    # -- what the host calls --------------------------------------------------------
    @staticmethod
    def takes(kind: str, dst: int) -> bool:
        """Whether a control packet of type ``kind`` to ``dst`` goes through the loop: a
        RREQ or RERR (broadcast) or a RREP (to a neighbour)."""
        return kind == "RREQ" or kind == "RERR" or (kind == "RREP" and dst >= 0)

    def file(self, t: float, node: int, dst: int, seq: int, msg_id: int, control,
             size_bytes: int, rank: int) -> None:
        """The RREQ, RREP or RERR ``control`` is ready at ``node`` at ``t`` (to
        ``dst``), the host's event number ``seq`` and control message ``msg_id``."""
        self._make_room()
        pos, body = self.protocol.position, control.body
        if control.type == "RREQ":
            file_rreq(t, pos[node], seq, msg_id, pos[body.orig], body.orig_seq,
                      body.rreq_id, pos[body.dst],
                      -1 if body.dst_seq is None else body.dst_seq, body.hops, body.ttl,
                      int(body.gratuitous), size_bytes, *self.calendar, self.ints,
                      self.refs, self.free_rows, self.packets)
        elif control.type == "RERR":
            file_rerr(t, pos[node], seq, msg_id, lost_cells(body.unreachable, pos),
                      size_bytes, *self.calendar, self.ints, self.refs, self.free_rows,
                      self.packets, self.lists)
        else:
            file_rrep(t, pos[node], seq, msg_id, pos[dst], pos[body.orig], pos[body.dst],
                      body.dst_seq, body.hops, body.lifetime, int(body.ack), size_bytes,
                      *self.calendar, self.ints, self.refs, self.free_rows, self.packets,
                      self.lifetimes)
        key = (t, rank, seq)
        if self.head is None or key < self.head:
            self.head = key

    def file_data(self, t: float, seq: int, msg, u: int, v: int, hops: int, rank: int,
                  at_source: bool) -> None:
        """The data packet ``msg`` leaves ``u`` for ``v`` at ``t``, its ``hops``-th hop,
        in the host's event number ``seq`` (the one being processed); or, with ``v``
        -1, is ready at its source ``u`` (``at_source``: released after a discovery),
        ``hops`` taken so far, as event ``seq``."""
        self._make_room()
        pos, ledger = self.protocol.position, self.host.ledger
        file_data(t, pos[u], seq, msg.msg_id, -1 if v < 0 else pos[v], pos[msg.src],
                  pos[msg.dst], hops, msg.size_bytes, msg.size_units,
                  0 if ledger is None else ledger.kind_code(msg.kind), msg.sent_at,
                  int(at_source), *self.calendar, self.ints, self.refs, self.free_rows,
                  self.packets, self.lifetimes, self.sent_at)
        self._data[msg.msg_id] = msg
        key = (t, rank, seq)
        if self.head is None or key < self.head:
            self.head = key

    def take_sends(self, sends, rank: int) -> None:
        """Take the host's queue of sends (``(time, rank, number, message, source)`` in
        order, emptied): each is an event here, in the same order."""
        ints, pos, ledger = self.ints, self.protocol.position, self.host.ledger
        at, end = int(ints[SENDS_AT]), int(ints[SENDS_END])
        count = len(sends)
        floats = np.zeros((2, end - at + count))
        table = np.zeros((len(SENDS_INTS), end - at + count), np.int64)
        floats[:, :end - at] = self.sends_floats[:, at:end]
        table[:, :end - at] = self.sends_ints[:, at:end]
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
        taken = np.array(rows, dtype=object).T if rows else None
        if taken is not None:
            floats[:, end - at:] = taken[:2].astype(float)
            table[:, end - at:] = taken[2:].astype(np.int64)
        self.sends_floats, self.sends_ints, self._kept = floats, table, None
        ints[SENDS_AT], ints[SENDS_END] = 0, floats.shape[1]
        self.head = self._head(rank)

    def run(self, stop, until: float, rank: int) -> None:
        """Take the floods' events before the host's next one ``stop`` (``(time, rank,
        number, ...)``, None: none) and before ``until``; events the host's Python
        must see are handed to it on the way."""
        host, ints, floats = self.host, self.ints, self.floats
        stop_t, stop_rank, stop_seq = (math.inf, 0, 0) if stop is None else stop[:3]
        protocol = self.protocol
        while True:
            if host._view is None:   # none in force yet (or forgotten)
                host._alive_at(self.calendar.time[0].item(), host._gids[0].item())
            floats[AV_START], floats[AV_END] = host._v_start, host._v_end
            ints[SEQ], ints[NEXT_ID], ints[DRAWN] = (host._seq, host._next_control_id,
                                                      host._drawn)
            code = run(stop_t, stop_rank, stop_seq, until, rank, *self._arguments())
            host._seq, host._next_control_id, host._drawn = (
                ints.item(SEQ), ints.item(NEXT_ID), ints.item(DRAWN))
            host._staged = ints.item(STAGED) > 0
            self._count_losses()
            if ints.item(N_ARRIVED) or ints.item(N_FIRST):
                self._arrived()
            if code == IDLE:
                break
            if code == NEED_READY_VIEW:
                self._ready_view(floats[ASK].item())
            elif code == NEED_FAN_ALIVE:
                host._alive_at(self.fan.ask_time(), host._gids[ints[CURRENT_NODE]].item())
            elif code == NEED_FAN_UNIFORMS:
                host._drawn = self.fan.taken()
                host._refill_pool()
                self.fan.restart_pool()
            elif code == NEED_SEEN:
                protocol.seen.reserve(floats[ASK].item(), int(ints[ROOM]))
            elif code == NEED_ROOM:
                self.hand_over()
                self._make_room()
            elif code == NEED_FRAME_UNIFORMS:
                host._refill_pool()
            elif code == NEED_FRAME_ALIVE:
                row = ints[CURRENT_ROW]
                host._alive_at(floats[ASK].item(),
                               host._gids[self.packets[row, _RECEIVER]].item())
            elif code == SELF_HEARD:
                node = self.protocol.nodes[ints[CURRENT_NODE]]
                raise ValueError(f"node {node} hears its own broadcasts: the network has "
                                 "a link from a node to itself (expected none)")
            else:   # Python files something: it may come before the next event here
                self._in_python(code)
                break
        self.head = self._head(rank)

    def _head(self, rank: int):
        """``(time, rank, number)`` of the next event, the calendar's or the next
        send's, None for none."""
        ints = self.ints
        at = ints.item(SENDS_AT)
        send = (None if at == ints.item(SENDS_END) else
                (self.sends_floats.item(0, at), rank, self.sends_ints.item(0, at)))
        if ints.item(HEAP_SIZE) == 0:
            return send
        event = (self.calendar.time.item(0), rank, self.calendar.seq.item(0))
        return event if send is None or event < send else send

    def forget_views(self) -> None:
        """The network's views were rebuilt (nodes died): so are the ready views'
        arrays."""
        self._views.clear()
        self._forget_ready_view()

    def _arguments(self) -> tuple:
        """:func:`run`'s arguments after the stop, made again only when one of them is
        another array (room grown, another view, uniforms refilled, the duplicate table
        remade): about 2 us a call to gather, against 280 k calls."""
        host, protocol = self.host, self.protocol
        alive, pool, seen = host._alive_array(), host._pool, protocol.seen.keys
        kept = self._kept
        if kept is None or kept[0] is not alive or kept[1] is not pool or \
                kept[2] is not seen:
            self._kept = (alive, pool, seen)
            self._args = (
                *self.calendar, self.ints, self.floats, self.times, self.packets,
                self.refs, self.free_rows, self.groups, self.group_len,
                self.free_groups, self.out_floats, self.out_ints, *self._ready, alive,
                self.lifetimes, host._link_times, pool, self.ids, self.fan.ints,
                self.fan.floats, protocol.hello_on, host.reorder, protocol._heard_at,
                protocol._heard_rank, protocol._heard_next, protocol._lifetimes,
                protocol._routes, protocol._latest, *protocol.seen.arrays(),
                protocol._todo, protocol._last_broadcast, protocol.seqs,
                protocol.discovering, self.consts, self.lists, self.told,
                protocol.rerr_limits, self.arrived_at, self.arrived_ids, self.sent_at,
                self.sends_floats, self.sends_ints, host.flow_started, self.first_flows,
                self.first_waits)
        return self._args

    # -- what run hands over ----------------------------------------------------------
    def hand_over(self) -> None:
        """The transmissions staged so far into the host's control log (control
        packets') and ledger, in order: the host calls this before it logs one of its
        own, and when its advance returns."""
        ints, host = self.ints, self.host
        count = ints.item(STAGED)
        host._staged = False
        if not count:
            return
        staged = self.out_ints[:, :count]
        gids = self._gids
        if gids is not None:   # a broadcast's receiver stays -1
            staged = staged.copy()
            for field in (0, 3, 6, 7):
                staged[field] = np.where(staged[field] < 0, staged[field],
                                         gids[np.maximum(staged[field], 0)])
        starts = self.out_floats[0, :count]
        control = staged[5] != _DATA
        if control.all():
            host.control_log.extend(starts.tolist(), staged[0].tolist(),
                                    [TYPES[k] for k in staged[5].tolist()],
                                    staged[2].tolist())
        else:
            host.control_log.extend(starts[control].tolist(), staged[0, control].tolist(),
                                    [TYPES[k] for k in staged[5, control].tolist()],
                                    staged[2, control].tolist())
        if host.ledger is not None:
            _ledger_rows(host.ledger, self.out_floats[:, :count], staged)
        host.hops += count
        ints[STAGED] = 0

    def _arrived(self) -> None:
        """The data packets delivered since the last call, into the host's arrivals (as
        its ``_after_hop`` books one), at once: what its timers ask
        (``_unresolved``) stays in step; and the flows' first waits, in the order
        found."""
        ints, host, data = self.ints, self.host, self._data
        count = ints.item(N_ARRIVED)
        taken, arrivals = host._taken, host.arrivals
        for t, msg_id in zip(self.arrived_at[:count].tolist(),
                             self.arrived_ids[:count].tolist()):
            taken.pop(msg_id, None)
            arrivals.append((t, data.pop(msg_id)))
        host._unresolved -= count
        ints[N_ARRIVED] = 0
        count = ints.item(N_FIRST)
        if count:
            nodes, waits = self.protocol.nodes, host.first_waits
            for u, dst, wait in zip(*self.first_flows[:, :count].tolist(),
                                    self.first_waits[:count].tolist()):
                waits[nodes[u], nodes[dst]] = wait
            ints[N_FIRST] = 0

    def _count_losses(self) -> None:
        """The control packets lost since the last call, into the host's counts at once
        (the order their reasons first appear is the order of the run's figures)."""
        ints, host = self.ints, self.host
        if ints.item(N_LOST) or ints.item(N_DEAD) or ints.item(N_EXPIRED):
            for field, reason in ((N_LOST, "link_loss"), (N_DEAD, "dead_node"),
                                  (N_EXPIRED, "queue_expired")):
                if ints[field]:
                    host.control_lost[reason] += int(ints[field])
                    ints[field] = 0

    def _in_python(self, code: int) -> None:
        """What the loop hands to the protocol's or the host's Python: a RREP or data
        packet whose sender's MAC failed now (no link) or will learn it failed at its
        arrival; a RREP with the A flag heard; a RREP back at its originator; a data
        packet that waited too long for its link, or that the host's Python forwards
        (or drops) from here."""
        host, ints, nodes = self.host, self.ints, self.protocol.nodes
        # the current row was let go, but nothing has taken it since
        row, t = int(ints[CURRENT_ROW]), self.floats[CURRENT_T].item()
        u = nodes[ints[CURRENT_NODE]]
        if code == BACK_AT_ORIGINATOR:
            self.protocol.rrep_arrived(t, u, nodes[self.packets[row, _DST]])
            return
        if self.packets[row, _TYPE] == _DATA:
            msg = self._data.pop(self.packets[row, _MSG_ID].item())
        else:
            msg = self._message(row)
        v = nodes[self.packets[row, _RECEIVER]]
        if code == RREP_IN_PYTHON:
            self.protocol.on_receive(t, u, msg)
        elif code == MAC_NOW:
            host.mac_failed(t, u, msg, v, "link_break")
        elif code == MAC_LATER:   # at the arrival, with the number kept for it
            host.mac_fails(self.floats[ARRIVE].item(), int(ints[MAC_SEQ]), u, msg, v,
                           "link_loss" if ints[DROPPED] else "link_break")
        elif code == DATA_EXPIRED:
            host.drop(t, u, msg, "queue_expired")
        else:   # DATA_IN_PYTHON: as the host's Python would have it here
            hops = self.packets[row, _HOPS].item()
            if hops:
                host._taken[msg.msg_id] = hops
            host._forward(t, int(ints[CURRENT_SEQ]), msg, u, host.network.view_span(t)[0])

    def _message(self, row: int):
        """The RREP of ``row`` as the host's message."""
        from contract.messages import Message
        from emulator.routing.aodv.packets import Rrep
        from emulator.routing.base import Control
        f, nodes = self.packets[row].tolist(), self.protocol.nodes
        size = f[_SIZE]
        rrep = Rrep(nodes[f[_DST]], f[_DST_SEQ], nodes[f[_ORIG]], f[_HOPS],
                    self.lifetimes[row].item(), bool(f[_GRATUITOUS]))
        return Message(f[_MSG_ID], "routing", nodes[f[_SENDER]], nodes[f[_RECEIVER]],
                       self.floats[CURRENT_T].item(), size / self.host.bytes_per_unit,
                       size, Control("RREP", rrep))

    # -- room and views -----------------------------------------------------------------
    def _make_room(self) -> None:
        """Twice the room wherever less than an event may need is left (:func:`_room`;
        the staged rows were handed over)."""
        room, ints = _room(self.n), self.ints
        while len(self.calendar.time) - ints[HEAP_SIZE] < room:
            size = int(ints[HEAP_SIZE])
            bigger = new_calendar(2 * len(self.calendar.time))
            for old, new in zip(self.calendar, bigger):
                new[:size] = old[:size]
            self.calendar, self._kept = bigger, None
        while ints[ROWS_FREE] < room:
            (self.packets, self.refs, self.lifetimes, self.sent_at, self.lists,
             self.free_rows) = _doubled((self.packets, self.refs, self.lifetimes,
                                         self.sent_at, self.lists), self.free_rows, ints,
                                        ROWS_FREE)
            self._kept = None
        while ints[GROUPS_FREE] < room:
            self.groups, self.group_len, self.free_groups = _doubled(
                (self.groups, self.group_len), self.free_groups, ints, GROUPS_FREE)
            self._kept = None
        if ints[ROOM] > len(self.told):   # a RERR walk's receivers times destinations
            self.told = np.zeros(2 * ints[ROOM], np.int64)
            self._kept = None

    def _forget_ready_view(self) -> None:
        self.floats[RV_START], self.floats[RV_END] = math.inf, -math.inf
        self._kept = None
        n = self.n
        self._ready = (np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n),
                       np.zeros(n), np.zeros(n, np.bool_), np.zeros(1, np.int64),
                       np.zeros((5, 1)), np.zeros(1))

    def _ready_view(self, t: float) -> None:
        """The view in force at ``t`` as :func:`run` reads a sender's: by position, its
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


def _doubled(arrays, free, ints, free_field):
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
