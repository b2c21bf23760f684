"""AODV's route discoveries and data hops in one compiled loop: RREQs flooded, RREPs
sent back, RERRs passed on, data packets held at their source while a route is looked
for and forwarded, the discoveries' timers and HELLO ticks fired, without coming back to
Python (the links medium, without batteries).

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
- a data packet the host sent crosses its link by the same frame's rules and is
  forwarded at each node on its valid route (:func:`emulator.routing.aodv.rtable.use`),
  until it is staged as delivered or Python must drop it (its node down, its TTL
  spent, no valid route at a relay); at its source without a route it is held (a row
  in the source's queue, :class:`HeldRows`) and a discovery started (a RREQ, and its
  timeout); a RREP back at the originator ends the discovery and files the packets
  held for the destination at it again, in the order held;
- a notice (the host's Python makes one where it drops a packet at a relay) is routed
  like a data packet to the packet's source, where its arrival is staged with the
  deliveries;
- a timer (:data:`RREQ_TIMEOUT`, :data:`RREQ_LATER`, :data:`HELLO`: the host's
  ``set_timer`` hands this loop those tags) is an event of the host's timer rank: a
  timeout widens the ring or sends the RREQ again, a RREQ the rate limit held back is
  sent, a HELLO tick breaks the links to neighbours not heard (RERRs).

Every transmission's ledger row and control log entry are staged for the host, which
takes them before it logs one of its own and when its advance returns; deliveries are
handed over at each return (the protocol's timers stop when nothing is left to
deliver, so the host's count must be in step). :func:`run` returns when its next
event is not before the host's, or when it needs what only Python has: the view of
another epoch, uniforms, room in the duplicate table or in its own arrays; and it hands
Python what Python does: a MAC's failure learnt at the arrival (a frame lost or a
receiver dead: the timer's number kept), a RREP with the A flag (answered with a
RREP-ACK), a data packet at a node down, its TTL spent, back at its source or expired
at its link, a source's full queue, a discovery failed (its packets dropped), a HELLO
due (sent by Python). A next hop out of range and a relay without a route are the
loop's: the packet is dropped here and the drop staged for the host's books
(:func:`~emulator.routing.loop.drop_here`, with the notice a relay sends). After Python has
filed something the host's loop looks again, since that may come first. A group that
holds its own sender (only a self-loop makes one: input validation refuses them) is an
error (:data:`SELF_HEARD`).

Rows: a transmission is a row of ``packets`` (:data:`FIELDS`), held while an event
refers to it (``refs``); a group's receivers are a row of ``groups``. An event is
``(time, number, packet row, node)`` with ``node`` the sender of a packet ready to go,
a RREP's next hop hearing it or a data packet's next node, ``-1 - group row`` for a
group hearing a RREQ (every such event is of the host's rank "ready"; the timers
are a calendar of their own, of its rank "timer"). The host's
sends are taken as they are queued (:meth:`RouteDiscoveries.take_sends`) and are
events too, merged with the calendar by the same key. Nodes are the protocol's (and
the host's) positions. The shared medium (the channel's queue) and batteries (each
frame's energy) are the host's Python's still.
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from emulator.hop_kernel import _calendar_pop, calendar_push, new_calendar
from emulator.routing.aodv.packets import Rrep, Rreq
from emulator.routing.aodv.receive import (ANSWER, ARRIVED, DEST, REBROADCAST, REVERSE,
                                           gone_neighbours, hear_rerr, hear_rrep,
                                           hear_rreq)
from emulator.routing.aodv.rtable import HOPS as ROUTE_HOPS, NEXT, SEQ as ROUTE_SEQ
from emulator.routing.aodv.rtable import break_link, lost_cells, new_routes, use
from emulator.routing.base import IP_UDP_BYTES
from emulator.routing.compiled_loop import CompiledLoop
from emulator.routing.seen import remember, seen_key
from emulator.transport import _TIMER
from emulator.routing.loop import (
    ASK, CURRENT_NODE, CURRENT_ROW, CURRENT_SEQ, CURRENT_T, DATA, DATA_IN_PYTHON,
    DRAWN, DST, FIRST_OWN_CODE, GO, GROUPS_FREE, HOPS, IDLE, INTS, LINK_BREAK,
    MAC_NOW, MAX_WAIT, MSG_ID, NEED_FRAME_UNIFORMS, NEED_ROOM, NEXT_ID, NO_ROUTE,
    ORIG, RECEIVER, ROOM, ROWS_FREE, SENDER, SEQ, SIZE, TYPE, broadcast, data_row,
    drop_here, file_data, group_done, leaves, new_row, next_step, pythons, release,
    routed, send_unicast, short_of_room, take_send, unresolved)
from emulator.routing.loop import FIELDS as DATA_FIELDS

#: A row's fields: the loop's (:data:`emulator.routing.loop.FIELDS`), then a RREQ's own
#: (positions for nodes; -1 for an unknown destination sequence number). A RREQ uses
#: ``orig``, ``dst``, ``hops`` and these; a RREP ``orig``, ``dst``, ``dst_seq``,
#: ``hops``, ``gratuitous`` (its A flag) and ``receiver`` (its lifetime is in
#: ``units``); a RERR ``entries`` (its list of unreachable destinations is ``lists[row,
#: :, :entries]``, positions over sequence numbers, as :func:`~.rtable.unreachable`
#: reads it).
FIELDS = DATA_FIELDS + ("orig_seq", "rreq_id", "dst_seq", "ttl", "gratuitous", "entries")
(_ORIG_SEQ, _RREQ_ID, _DST_SEQ, _TTL, _GRATUITOUS, _ENTRIES) = range(len(DATA_FIELDS),
                                                                     len(FIELDS))
#: The control types the loop carries (``packets[:, type]``), by code (data is
#: :data:`~emulator.routing.loop.DATA`; a notice is routed like data).
TYPES = ("RREQ", "RREP", "RERR", "NOTICE")
_RREQ, _RREP, _RERR = 0, 1, 2

#: What :func:`run` returns beside the loop's codes (:data:`emulator.routing.loop.IDLE`
#: ...; the host's Python does what it names, then calls again):
#:
#: - ``NEED_SEEN``: room in the duplicate table for ``ints[ROOM]`` keys at ``floats[ASK]``;
#: - ``SELF_HEARD``: the next group holds its sender (an error);
#: - ``RREP_IN_PYTHON``: the current RREP (A flag) is Python's to hear;
#: - ``DISCOVERY_FAILED``: the last RREQ of the discovery of node ``ints[CURRENT_NODE]``
#:   for ``ints[FAILED_DST]`` went unanswered at ``floats[CURRENT_T]`` (its packets are
#:   dropped);
#: - ``HELLO_IN_PYTHON``: node ``ints[CURRENT_NODE]``'s HELLO tick at
#:   ``floats[CURRENT_T]`` found no broadcast of its in the last interval: Python sends
#:   a HELLO and sets the next tick (``Aodv.hello_due``).
#:
#: ``NEED_ROOM`` asks for ``ints[ROOM]`` entries of a RERR's walk too.
(NEED_SEEN, SELF_HEARD, RREP_IN_PYTHON, DISCOVERY_FAILED,
 HELLO_IN_PYTHON) = range(FIRST_OWN_CODE, FIRST_OWN_CODE + 5)

#: A discovery's fields (``discoveries[node, destination]``, positions), valid while
#: ``discovering`` says it is in progress: its TTL, its retries at NET_DIAMETER, and
#: the RREQ ID of its RREQ out, or NONE_OUT (none yet, or held again) or HELD_BACK (the
#: rate limit held it: no timeout of an earlier one acts meanwhile). A timer's RREQ ID
#: HELD_BACK is the rate limit's (the RREQ is sent when it fires).
D_TTL, D_RETRIES, D_RREQ = 0, 1, 2
NONE_OUT, HELD_BACK = -1, -2
#: The protocol's timer tags this loop fires: ``(RREQ_TIMEOUT, destination, RREQ ID)``,
#: ``(RREQ_LATER, destination)`` (a RREQ the rate limit held back) and ``HELLO`` (a
#: node's HELLO tick, a timer of RREQ ID HELLO_TICK here).
RREQ_TIMEOUT, RREQ_LATER, HELLO = "rreq", "rreq later", "hello"
HELLO_TICK = -3

#: What :func:`run` hands its helpers as one argument: the packets held, the timers
#: (a calendar and its size), the discoveries, the rate limits, the nodes' sequence
#: numbers and RREQ IDs, the routes, the last broadcasts, the duplicate table, the
#: neighbours heard, the walks' scratch, the RERRs' lists, the drops staged
#: (:func:`run`'s arguments).
Found = namedtuple("Found", "held held_count timers timer_state discovering discoveries "
                            "rreq_limits rreq_ids seqs routes last_broadcast seen_keys "
                            "seen_untils seen_count lifetimes heard_at heard_rank todo "
                            "rerr_limits lists drops_at drop_ids")

# ``ints``' own field: a failed discovery's destination
FAILED_DST, _INTS = INTS, INTS + 1
#: The room for a RERR walk's output at first, per node (grown as needed).
TOLD = 4
# ``times``' own fields (the protocol's timing, fixed for a run), after MAX_WAIT; the
# horizon at which the host's timers stop (if consts[_HAS_HORIZON])
(_ACTIVE_ROUTE_TIMEOUT, _PATH_DISCOVERY_TIME, _NET_TRAVERSAL_TIME, _NODE_TRAVERSAL_TIME,
 _MY_ROUTE_TIMEOUT, _DELETE_PERIOD, _RATELIMIT_INTERVAL, _HORIZON, _HELLO_INTERVAL,
 _HELLO_LIFETIME) = range(1, 11)
# ``consts``' own fields, after the loop's: a RREP's size in bytes, whether answers for
# a neighbour ask for a RREP-ACK, a RERR's size less 8 bytes an entry, RERRs a node may
# send a second; a RREQ's size, RREQs a node may originate a second, whether they ask
# for gratuitous replies, the expanding ring's TTL_START, TTL_INCREMENT,
# TTL_THRESHOLD, NET_DIAMETER, RREQ_RETRIES, TIMEOUT_BUFFER, the packets a node may
# hold; whether the host's timers stop at a horizon, and its rank for timers; whether a
# MAC's failure breaks the link
(_RREP_BYTES, _RREP_ACK, _RERR_BYTES, _RERR_RATELIMIT, _RREQ_BYTES, _RREQ_RATELIMIT,
 _GRATUITOUS_ON, _TTL_START, _TTL_INCREMENT, _TTL_THRESHOLD, _NET_DIAMETER,
 _RREQ_RETRIES, _TIMEOUT_BUFFER, _QUEUE_LENGTH, _HAS_HORIZON, _TIMER_RANK,
 _LINK_LAYER_FEEDBACK) = range(4, 21)


@njit(cache=True, inline="always")
def _room(n, held):
    """The free rows, groups and calendar entries an event of ``n`` nodes may need,
    ``held`` packets a node may hold (released at once when a RREP comes back)."""
    return 2 * n + 2 + held


@njit(cache=True, _nrt=False)
def run(stop_t, stop_rank, stop_seq, until, ready_rank, cal_time, cal_seq, cal_msg,
        cal_node, ints, floats, times, packets, refs, free_rows, groups, group_len,
        free_groups, out_floats, out_ints, first, last, bandwidths, costs, alive_ready,
        head, attrs, link_costs, alive, packet_lifetimes, link_times, pool, ids,
        fan_ints, fan_floats, hello_on, reorder, heard_at, heard_rank, heard_next,
        lifetimes, routes, latest, seen_keys, seen_untils, seen_count, todo,
        last_broadcast, seqs, discovering, consts, lists, told, rerr_limits, arrived_at,
        arrived_ids, sent_at, sends_floats, sends_ints, flow_started, first_flows,
        first_waits, held, held_count, timer_time, timer_seq, timer_msg, timer_node,
        timer_state, rreq_ids, discoveries, rreq_limits, drops_at, drop_ids):
    """Take this calendar's events while they come before the host's next one
    ``(stop_t, stop_rank, stop_seq)`` and before ``until``; returns why it stopped (the
    module docstring). ``ints``/``floats``: the loop's state, which the host reads and
    writes between calls (the event counter, the next control id and the uniforms
    drawn are the host's, handed over in them). The host's sends it has taken
    (``sends_*``) are events too, merged with the calendar's. ``held[u,
    :held_count[u]]``: the rows of the packets ``u`` holds for a route, in order;
    ``timer_*``: the discoveries' timers, a calendar of the host's timer rank
    (``timer_state[0]`` entries; ``node`` is the discovering node's position times n
    plus the destination's, ``msg`` the RREQ ID the timer waits for, or HELD_BACK).
    ``drop*``: the data packets the loop dropped, staged for the host. Its
    73 arguments cost about 2 us a call to check."""
    cal = (cal_time, cal_seq, cal_msg, cal_node)
    # the discoveries' arrays, one argument to the helpers inlined (a call of more
    # than 30 arguments is compiled as one of *args, which numba does not inline)
    found = Found(held, held_count, (timer_time, timer_seq, timer_msg, timer_node),
                  timer_state, discovering, discoveries, rreq_limits, rreq_ids, seqs,
                  routes, last_broadcast, seen_keys, seen_untils, seen_count, lifetimes,
                  heard_at, heard_rank, todo, rerr_limits, lists, drops_at, drop_ids)
    n = len(heard_at)
    fan = (groups, group_len, free_groups, ids, fan_ints, fan_floats)
    frame = (first, last, bandwidths, costs, head, attrs, link_times, pool, reorder)
    sends = (sends_floats, sends_ints)
    timers = (timer_time, timer_seq, timer_msg, timer_node)
    stop = (until, stop_t, stop_rank, stop_seq)
    while True:
        code, timer, sent, t, seq, node = next_step(
            ints, floats, times[MAX_WAIT], consts, packets, refs, free_rows,
            packet_lifetimes, out_floats, out_ints, link_costs, alive, arrived_at,
            arrived_ids, cal, fan, frame, sends, timers, timer_state, stop, ready_rank,
            consts[_TIMER_RANK])
        if code != GO:
            return code
        # room for what the event may file (numba checks no bounds): a broadcast's
        # groups (one a receiver at most), a group's rebroadcasts and answers (two a
        # receiver at most: a gratuitous reply), a staged row, the packets a RREP
        # releases, a timer; and a key in the duplicate table for a RREQ originated
        room = _room(n, held.shape[1])
        if (short_of_room(ints, room, cal_time, out_floats, arrived_ids, first_waits,
                          drops_at)
                or ints[GROUPS_FREE] < room or len(timer_time) - timer_state[0] < 2):
            return NEED_ROOM
        if seen_count[0] + 1 > len(seen_keys) // 2:
            floats[ASK], ints[ROOM] = t, 1
            return NEED_SEEN
        if timer:
            code = _timer_fires(t, n, ints, floats, times, consts, packets, refs,
                                free_rows, cal, found)
            if code != IDLE:
                return code
            continue
        if node >= 0:   # a packet at a node (a send by the host: data at its source)
            row, kind, sending, hopped = -1, DATA, False, True
            if not sent:
                row = cal_msg[0]
                kind, sending = packets[row, TYPE], node == packets[row, SENDER]
                hopped = routed(consts, packets, row)   # a data packet or a notice
            rrep = kind == _RREP
            if (hopped or rrep and sending) and len(pool) - ints[DRAWN] < 2:
                return NEED_FRAME_UNIFORMS   # a frame takes two uniforms at most
            if sent:
                row, node = take_send(t, seq, ints, floats, sends_floats, sends_ints, refs,
                                      free_rows, packets, packet_lifetimes, sent_at)
            else:
                _calendar_pop(cal, ints)
                ints[CURRENT_ROW], ints[CURRENT_NODE], floats[CURRENT_T] = row, node, t
                ints[CURRENT_SEQ] = seq
            if hopped:
                code = _data_hop(sending, ints, floats, times, consts, packets, refs,
                                 free_rows, packet_lifetimes, first, last, head, attrs,
                                 link_costs, alive, alive_ready, link_times, pool,
                                 reorder, lifetimes, out_floats, out_ints, arrived_at,
                                 arrived_ids, sent_at, flow_started, first_flows,
                                 first_waits, cal, found)
                if code == MAC_NOW:
                    code = _mac_now(ints, floats, times, consts, packets, refs, free_rows,
                                    packet_lifetimes, sent_at, alive_ready, cal, found)
                if code != IDLE:
                    return code
                continue
            if not alive_ready[node]:   # a dead node neither hears nor sends
                release(refs, free_rows, ints, row)
                continue
            if not rrep:   # a RREQ or a RERR broadcast
                code = broadcast(ints, floats, times[MAX_WAIT], consts, packets, refs,
                                 free_rows, groups, group_len, free_groups, out_floats,
                                 out_ints, first, last, bandwidths, costs, head, attrs,
                                 alive, link_times, pool, ids, fan_ints, fan_floats,
                                 reorder, cal, False)
            elif sending:
                code = send_unicast(ints, floats, times[MAX_WAIT], consts, packets, refs,
                                    free_rows, packet_lifetimes, first, last, head, attrs,
                                    link_costs, alive, link_times, pool, reorder,
                                    out_floats, out_ints, arrived_at, arrived_ids, cal)
                if code == MAC_NOW:
                    code = _mac_now(ints, floats, times, consts, packets, refs, free_rows,
                                    packet_lifetimes, sent_at, alive_ready, cal, found)
            else:
                code = _hear_rrep(t, node, row, ints, times, packets, refs, free_rows,
                                  packet_lifetimes, hello_on, heard_at, heard_rank,
                                  heard_next, lifetimes, routes, discovering, held,
                                  held_count, cal)
            if code != IDLE:
                return code
            continue
        code = _group_hears(t, -1 - node, ints, floats, times, consts, packets, refs,
                            free_rows, groups, group_len, free_groups, hello_on,
                            heard_next, latest, told, packet_lifetimes, cal, found)
        if code != IDLE:
            return code


@njit(cache=True, inline="always")
def _group_hears(t, group, ints, floats, times, consts, packets, refs, free_rows, groups,
                 group_len, free_groups, hello_on, heard_next, latest, told,
                 packet_lifetimes, cal, found):
    """The receivers of ``group`` (the calendar's first event) hear its RREQ or RERR
    at ``t``: walked (:func:`_hear_rreq`, :func:`_hear_rerr`), then what each one
    does, in order; or what the walk needs first (room for a RERR walk's output, or
    in the duplicate table), the event left in the calendar. A group that holds its
    sender is an error (:data:`SELF_HEARD`)."""
    row, count = cal[2][0], group_len[group]
    sender = packets[row, SENDER]
    for k in range(count):
        if groups[group, k] == sender:   # only a self-loop makes one
            ints[CURRENT_NODE] = sender
            return SELF_HEARD
    heard_at, heard_rank, lifetimes = found.heard_at, found.heard_rank, found.lifetimes
    routes, todo = found.routes, found.todo
    if packets[row, TYPE] == _RERR:
        if count * packets[row, _ENTRIES] > len(told):   # what the walk may write
            ints[ROOM] = count * packets[row, _ENTRIES]
            return NEED_ROOM
        _calendar_pop(cal, ints)
        ints[CURRENT_ROW], ints[CURRENT_NODE], floats[CURRENT_T] = row, -1 - group, t
        _hear_rerr(t, sender, row, groups[group, :count], ints, floats, times, consts,
                   packets, refs, free_rows, groups, free_groups, hello_on, heard_at,
                   heard_rank, heard_next, lifetimes, routes, todo, told, found.lists,
                   found.rerr_limits, found.last_broadcast, cal)
        return IDLE
    seen_keys, seen_untils, seen_count = (found.seen_keys, found.seen_untils,
                                          found.seen_count)
    if seen_count[0] + count > len(seen_keys) // 2:
        floats[ASK], ints[ROOM] = t, count
        return NEED_SEEN
    _calendar_pop(cal, ints)
    ints[CURRENT_ROW], ints[CURRENT_NODE], floats[CURRENT_T] = row, -1 - group, t
    listed = _hear_rreq(t, sender, row, groups[group, :count], times, packets, hello_on,
                        heard_at, heard_rank, heard_next, lifetimes, routes, latest,
                        seen_keys, seen_untils, seen_count, todo)
    _answer_or_send_on(ints, floats, times, consts, packets, refs, free_rows, groups,
                       group_len, free_groups, todo, found.last_broadcast, found.seqs,
                       routes, lifetimes, packet_lifetimes, cal, listed)
    return IDLE


@njit(cache=True, inline="always")
def _hear_rreq(t, sender, row, receivers, times, packets, hello_on, heard_at, heard_rank,
               heard_next, lifetimes, routes, latest, seen_keys, seen_untils, seen_count,
               todo):
    """``receivers`` hear the RREQ of ``row`` from ``sender`` at ``t``
    (:func:`~.receive.hear_rreq`, with the lifetimes the protocol's Python gives it);
    returns how many it listed in ``todo``."""
    hops = packets[row, HOPS] + 1
    reverse_lifetime = t + max(2 * times[_NET_TRAVERSAL_TIME]
                               - 2 * hops * times[_NODE_TRAVERSAL_TIME],
                               times[_NODE_TRAVERSAL_TIME])
    return hear_rreq(
        t, sender, receivers, hello_on, t + times[_ACTIVE_ROUTE_TIMEOUT],
        t + times[_PATH_DISCOVERY_TIME], heard_at, heard_rank, heard_next, lifetimes,
        routes, latest, seen_keys, seen_untils, seen_count, todo, packets[row, ORIG],
        packets[row, _ORIG_SEQ], packets[row, _RREQ_ID], packets[row, DST],
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
            _rreq(t, u, packets[row, ORIG], packets[row, _ORIG_SEQ],
                  packets[row, _RREQ_ID], packets[row, DST], value,
                  packets[row, HOPS] + 1, packets[row, _TTL] - 1,
                  packets[row, _GRATUITOUS], packets[row, SIZE], ints, refs, free_rows,
                  packets, cal)
        elif needs & DEST:   # §6.6.1: with a fresh sequence number
            u, sender = groups[group, k], packets[row, SENDER]
            seqs[u] = max(seqs[u], max(packets[row, _DST_SEQ], 0))   # None counts 0
            _reply(t, u, sender, u, seqs[u], packets[row, ORIG], 0,
                   times[_MY_ROUTE_TIMEOUT], 0, consts[_RREP_BYTES], ints, refs,
                   free_rows, packets, packet_lifetimes, cal)
        elif needs & ANSWER:   # §6.6.2, and §6.6.3 with the G flag and a route back
            u, sender = groups[group, k], packets[row, SENDER]
            orig, dst = packets[row, ORIG], packets[row, DST]
            hops = routes[u, dst, ROUTE_HOPS]
            # a destination that is a neighbour may hear us but not be heard: ask the
            # node the RREP goes to for an acknowledgement (ns-3's rule)
            ack = consts[_RREP_ACK] and hops == 1
            _reply(t, u, sender, dst, routes[u, dst, ROUTE_SEQ], orig, hops,
                   lifetimes[u, dst] - t, ack, consts[_RREP_BYTES], ints, refs, free_rows,
                   packets, packet_lifetimes, cal)
            if packets[row, _GRATUITOUS] and needs & REVERSE:
                _reply(t, u, routes[u, dst, NEXT], orig, routes[u, orig, ROUTE_SEQ], dst,
                       routes[u, orig, ROUTE_HOPS], lifetimes[u, orig] - t, 0,
                       consts[_RREP_BYTES], ints, refs, free_rows, packets,
                       packet_lifetimes, cal)
    group_done(ints, free_groups, refs, free_rows, group, row)


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
            new = _rerr_from(t, groups[group, k], many, ints, times, consts, packets, refs,
                             free_rows, cal, rerr_limits, last_broadcast)
            if new >= 0:
                for e in range(many):
                    lists[new, 0, e] = lists[row, 0, told[at + e]]
                    lists[new, 1, e] = lists[row, 1, told[at + e]]
            at += many
    group_done(ints, free_groups, refs, free_rows, group, row)


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
    packets[row, ORIG], packets[row, DST], packets[row, _DST_SEQ] = orig, dst, dst_seq
    packets[row, HOPS], packets[row, _GRATUITOUS] = hops, ack
    packets[row, RECEIVER] = to
    packet_lifetimes[row] = lifetime


@njit(cache=True, inline="always")
def _data_hop(sending, ints, floats, times, consts, packets, refs, free_rows,
              packet_lifetimes, first, last, head, attrs, link_costs, alive, alive_ready,
              link_times, pool, reorder, lifetimes, out_floats, out_ints, arrived_at,
              arrived_ids, sent_at, flow_started, first_flows, first_waits, cal, found):
    """The current data packet (or notice) at its node (the host's ``_forward``): sent
    on if its route is valid (the route kept active, as :func:`~.rtable.use` does for
    the protocol's ``next_hop``), then its frame
    (:func:`~emulator.routing.loop.send_unicast`); at its source without a route, held
    while a discovery looks for one (:func:`_held_at_source`); at a relay without one,
    dropped (a RERR for its destination, §6.11 (ii); a notice without a route is
    dropped anywhere). Anything else is Python's
    (:func:`~emulator.routing.loop.pythons`, :data:`DATA_IN_PYTHON`: its node down, its
    TTL spent, back at its source, its source's queue full). One Python filed
    (``sending``) has its next hop already. ``found``: the discoveries'
    arrays and the routes (:func:`run`; at most 30 arguments are inlined)."""
    row, u, t = ints[CURRENT_ROW], ints[CURRENT_NODE], floats[CURRENT_T]
    routes = found.routes
    if not sending:
        if pythons(ints, consts, packets, refs, free_rows, alive_ready, row, u):
            return DATA_IN_PYTHON
        nxt = use(routes, lifetimes, u, packets[row, DST], packets[row, ORIG], t,
                  t + times[_ACTIVE_ROUTE_TIMEOUT])
        if nxt < 0:
            # pythons() let through only the packets at their source before their
            # first hop, and those at a relay; a notice never waits for a route
            type_, dst, src = packets[row, TYPE], packets[row, DST], packets[row, ORIG]
            if type_ == DATA and u == src:
                if _held_at_source(t, u, row, len(routes), ints, times, consts, packets,
                                   refs, free_rows, cal, found):
                    return IDLE
                release(refs, free_rows, ints, row)
                return DATA_IN_PYTHON   # its queue is full: Python drops it
            msg_id = packets[row, MSG_ID]
            release(refs, free_rows, ints, row)
            drop_here(t, NO_ROUTE, type_, msg_id, src, u, alive_ready, ints, consts,
                      packets, refs, free_rows, packet_lifetimes, sent_at, found.drops_at,
                      found.drop_ids, cal)
            if type_ == DATA:   # §6.11 (ii): a packet to forward and no route
                new = _rerr_from(t, u, 1, ints, times, consts, packets, refs, free_rows,
                                 cal, found.rerr_limits, found.last_broadcast)
                if new >= 0:   # (dst, its sequence number, none counted 0)
                    found.lists[new, 0, 0] = dst
                    found.lists[new, 1, 0] = max(routes[u, dst, ROUTE_SEQ], 0)
            return IDLE
        leaves(t, row, u, nxt, ints, packets, sent_at, flow_started, first_flows,
               first_waits)
    return send_unicast(ints, floats, times[MAX_WAIT], consts, packets, refs, free_rows,
                        packet_lifetimes, first, last, head, attrs, link_costs, alive,
                        link_times, pool, reorder, out_floats, out_ints, arrived_at,
                        arrived_ids, cal)


@njit(cache=True, inline="always")
def _held_at_source(t, u, row, n, ints, times, consts, packets, refs, free_rows, cal,
                    found):
    """The data packet of ``row`` at its source ``u`` without a route: held (its row
    kept, in ``u``'s queue), and a discovery started if none is in progress (the
    protocol's ``next_hop``, RFC 3561 §6.3); False (nothing done) if ``u``'s queue is
    full (Python drops it). ``found``: the discoveries' arrays (:func:`run`)."""
    held, held_count = found.held, found.held_count
    discovering, discoveries = found.discovering, found.discoveries
    if held_count[u] >= consts[_QUEUE_LENGTH]:
        return False
    dst = packets[row, DST]
    held[u, held_count[u]] = row   # the event's reference is the queue's now
    held_count[u] += 1
    if not discovering[u, dst]:
        discovering[u, dst] = True
        discoveries[u, dst, D_TTL] = consts[_TTL_START]
        discoveries[u, dst, D_RETRIES] = 0
        discoveries[u, dst, D_RREQ] = NONE_OUT
        _send_rreq(t, u, dst, n, ints, times, consts, packets, refs, free_rows, cal,
                   found)
    return True


@njit(cache=True, inline="always")
def _send_rreq(t, u, dst, n, ints, times, consts, packets, refs, free_rows, cal, found):
    """``u`` floods a RREQ of its discovery for ``dst`` and waits for its answer (the
    protocol's ``_send_rreq``: the expanding ring's wait, then NET_TRAVERSAL_TIME
    doubled at each retry); over the rate limit, the RREQ waits for the next second
    (a timer of HELD_BACK)."""
    discoveries, rreq_limits, rreq_ids = (found.discoveries, found.rreq_limits,
                                          found.rreq_ids)
    timers, timer_state = found.timers, found.timer_state
    seqs, routes, last_broadcast = found.seqs, found.routes, found.last_broadcast
    seen_keys, seen_untils, seen_count = (found.seen_keys, found.seen_untils,
                                          found.seen_count)
    if not within_limit(t, rreq_limits, u, consts[_RREQ_RATELIMIT],
                        times[_RATELIMIT_INTERVAL]):
        if discoveries[u, dst, D_RREQ] != HELD_BACK:   # one timer per held discovery
            discoveries[u, dst, D_RREQ] = HELD_BACK
            _set_timer(rreq_limits[u, 0], u * n + dst, HELD_BACK, ints, times, consts,
                       timers, timer_state)
        return
    ttl, retries = discoveries[u, dst, D_TTL], discoveries[u, dst, D_RETRIES]
    seqs[u] += 1
    rreq_ids[u] += 1
    rreq_id = rreq_ids[u]
    discoveries[u, dst, D_RREQ] = rreq_id
    remember(seen_keys, seen_untils, seen_count, seen_key(u, u, rreq_id, n),
             t + times[_PATH_DISCOVERY_TIME])
    last_broadcast[u] = t
    known = routes[u, dst, ROUTE_SEQ]   # -1: unknown (the U flag)
    _rreq(t, u, u, seqs[u], rreq_id, dst, known if known >= 0 else -1, 0, ttl,
          consts[_GRATUITOUS_ON], consts[_RREQ_BYTES], ints, refs, free_rows, packets,
          cal)
    if ttl < consts[_NET_DIAMETER]:
        wait = 2 * times[_NODE_TRAVERSAL_TIME] * (ttl + consts[_TIMEOUT_BUFFER])
    else:
        wait = times[_NET_TRAVERSAL_TIME] * (1 << retries)
    _set_timer(t + wait, u * n + dst, rreq_id, ints, times, consts, timers, timer_state)


@njit(cache=True, inline="always")
def _set_timer(t, key, rreq_id, ints, times, consts, timers, timer_state):
    """A discovery's timer at ``t`` (the host's ``set_timer``: none once nothing is left
    to deliver, or from the horizon on)."""
    if (t < times[_HORIZON] if consts[_HAS_HORIZON]
            else unresolved(ints) > 0):
        ints[SEQ] += 1
        calendar_push(timers, timer_state, t, ints[SEQ], rreq_id, key)


@njit(cache=True, inline="always")
def _timer_fires(t, n, ints, floats, times, consts, packets, refs, free_rows, cal, found):
    """The next discovery timer fires (the protocol's ``on_timer``): a RREQ held back
    by the rate limit is sent; a RREQ unanswered is sent again with a wider ring, or
    once more at NET_DIAMETER, or the discovery has failed (:data:`DISCOVERY_FAILED`:
    Python drops its packets); a timer of a discovery answered, or of a RREQ sent
    again since, does nothing; a HELLO tick is :func:`_hello`'s. None acts once nothing
    is left to deliver (without a horizon), as the host's timers do not."""
    timers, timer_state = found.timers, found.timer_state
    discovering, discoveries = found.discovering, found.discoveries
    key, rreq_id = timers[3][0], timers[2][0]   # its node and RREQ ID
    _calendar_pop(timers, timer_state)
    u, dst = key // n, key % n
    if not (consts[_HAS_HORIZON] or unresolved(ints) > 0):
        return IDLE
    if rreq_id == HELLO_TICK:
        return _hello(t, u, n, ints, floats, times, consts, packets, refs, free_rows, cal,
                      found)
    if not discovering[u, dst]:
        return IDLE   # answered (or failed)
    if rreq_id == HELD_BACK:
        if discoveries[u, dst, D_RREQ] != HELD_BACK:
            return IDLE
        discoveries[u, dst, D_RREQ] = NONE_OUT   # held again if this second is full
    else:
        if discoveries[u, dst, D_RREQ] != rreq_id:
            return IDLE   # a later RREQ is out
        ttl, retries = discoveries[u, dst, D_TTL], discoveries[u, dst, D_RETRIES]
        if ttl < consts[_NET_DIAMETER]:
            ttl += consts[_TTL_INCREMENT]
            discoveries[u, dst, D_TTL] = (ttl if ttl <= consts[_TTL_THRESHOLD]
                                          else consts[_NET_DIAMETER])
        elif retries < consts[_RREQ_RETRIES]:
            discoveries[u, dst, D_RETRIES] = retries + 1
        else:
            ints[CURRENT_NODE], ints[FAILED_DST], floats[CURRENT_T] = u, dst, t
            return DISCOVERY_FAILED
    _send_rreq(t, u, dst, n, ints, times, consts, packets, refs, free_rows, cal, found)
    return IDLE


@njit(cache=True, inline="always")
def _hello(t, u, n, ints, floats, times, consts, packets, refs, free_rows, cal, found):
    """``u``'s HELLO tick (the protocol's ``_hello``, §6.9, §6.11): the neighbours not
    heard for ALLOWED_HELLO_LOSS intervals are gone, the routes through each broken in
    turn (:func:`_link_broken`); then a HELLO if ``u`` sent no broadcast in the last
    interval (Python's: :data:`HELLO_IN_PYTHON`), else the next tick set here."""
    timers, timer_state = found.timers, found.timer_state
    heard_at, heard_rank = found.heard_at, found.heard_rank
    gone = found.todo[0]
    count = gone_neighbours(heard_at, heard_rank, u, t, times[_HELLO_LIFETIME], gone)
    for k in range(count):
        _link_broken(t, u, gone[k], ints, times, consts, packets, refs, free_rows, cal,
                     found)
    if t - found.last_broadcast[u] >= times[_HELLO_INTERVAL]:
        ints[CURRENT_NODE], floats[CURRENT_T] = u, t
        return HELLO_IN_PYTHON
    _set_timer(t + times[_HELLO_INTERVAL], u * n + u, HELLO_TICK, ints, times, consts,
               timers, timer_state)
    return IDLE


@njit(cache=True, inline="always")
def _mac_now(ints, floats, times, consts, packets, refs, free_rows, units, sent_at,
             alive_ready, cal, found):
    """The current unicast's next hop is out of range: its sender's MAC gives up (the
    host's ``mac_failed``): with link-layer feedback the link is broken (the protocol's
    ``on_link_failure``: the neighbour lost, its routes' RERR), then the packet is
    dropped (:func:`~emulator.routing.loop.drop_here`)."""
    row, u, t = ints[CURRENT_ROW], ints[CURRENT_NODE], floats[CURRENT_T]
    # the row was let go: what the drop needs is read before a RERR may take it
    v, type_, msg_id, src = (packets[row, RECEIVER], packets[row, TYPE],
                             packets[row, MSG_ID], packets[row, ORIG])
    if consts[_LINK_LAYER_FEEDBACK]:
        found.heard_at[u, v] = -np.inf   # heard again, it goes last in u's order
        _link_broken(t, u, v, ints, times, consts, packets, refs, free_rows, cal, found)
    drop_here(t, LINK_BREAK, type_, msg_id, src, u, alive_ready, ints, consts, packets,
              refs, free_rows, units, sent_at, found.drops_at, found.drop_ids, cal)
    return IDLE


@njit(cache=True, inline="always")
def _link_broken(t, u, v, ints, times, consts, packets, refs, free_rows, cal, found):
    """``u``'s link to ``v`` is broken (the protocol's ``_link_broken``): the routes
    through it invalid, their sequence numbers raised, and a RERR of those with
    precursors broadcast unless ``u`` sent RERR_RATELIMIT this second (§6.11)."""
    routes, lifetimes, lists = found.routes, found.lifetimes, found.lists
    told = found.todo[1]
    count = break_link(routes, lifetimes, u, v, t + times[_DELETE_PERIOD], True, told)
    row = _rerr_from(t, u, count, ints, times, consts, packets, refs, free_rows, cal,
                     found.rerr_limits, found.last_broadcast) if count else -1
    if row >= 0:
        for e in range(count):   # (dst, its sequence number, none counted 0)
            lists[row, 0, e] = told[e]
            lists[row, 1, e] = max(routes[u, told[e], ROUTE_SEQ], 0)


@njit(cache=True, inline="always")
def _rerr_from(t, u, entries, ints, times, consts, packets, refs, free_rows, cal,
               rerr_limits, last_broadcast):
    """``u`` broadcasts a RERR of ``entries`` destinations at ``t`` unless it sent
    RERR_RATELIMIT this second (the protocol's ``_send_rerr``, §6.11); returns its row
    (-1: none), whose list the caller fills."""
    if not within_limit(t, rerr_limits, u, consts[_RERR_RATELIMIT],
                        times[_RATELIMIT_INTERVAL]):
        return -1
    last_broadcast[u] = t
    return _rerr(t, u, entries, consts[_RERR_BYTES] + 8 * entries, ints, refs, free_rows,
                 packets, cal)


@njit(cache=True, inline="always")
def _hear_rrep(t, u, row, ints, times, packets, refs, free_rows, packet_lifetimes,
               hello_on, heard_at, heard_rank, heard_next, lifetimes, routes, discovering,
               held, held_count, cal):
    """Node ``u`` hears the RREP of ``row`` (the protocol's ``_on_rrep``): the routes'
    work (:func:`~.receive.hear_rrep`), then relayed to the next hop back, or, back at
    an originator still discovering, the discovery over and the packets it held sent
    (the protocol's ``rrep_arrived``), or let go. One with the A flag is Python's whole
    (:data:`RREP_IN_PYTHON`: it answers with a RREP-ACK first)."""
    if packets[row, _GRATUITOUS]:
        release(refs, free_rows, ints, row)
        return RREP_IN_PYTHON
    hops = packets[row, HOPS] + 1
    until = t + times[_ACTIVE_ROUTE_TIMEOUT]
    lifetime = packet_lifetimes[row]
    to = hear_rrep(t, u, packets[row, SENDER], hello_on, until, packets[row, ORIG],
                   packets[row, DST], packets[row, _DST_SEQ], hops, t + lifetime, until,
                   heard_at, heard_rank, heard_next, lifetimes, routes)
    if to >= 0:   # relayed: Rrep(dst, dst_seq, orig, hops, lifetime), from u
        _reply(t, u, to, packets[row, DST], packets[row, _DST_SEQ], packets[row, ORIG],
               hops, lifetime, 0, packets[row, SIZE], ints, refs, free_rows, packets,
               packet_lifetimes, cal)
    release(refs, free_rows, ints, row)
    dst = packets[row, DST]
    if to == ARRIVED and discovering[u, dst]:
        discovering[u, dst] = False
        _release_held(t, u, dst, ints, packets, held, held_count, cal)
    return IDLE   # relayed, let go, or back where no discovery waits for it


@njit(cache=True, inline="always")
def _release_held(t, u, dst, ints, packets, held, held_count, cal):
    """The packets ``u`` held for ``dst`` filed at ``u`` at ``t``, in the order held, to
    be forwarded from their source (the host's ``release``); the others stay, in
    order."""
    kept = 0
    for k in range(held_count[u]):
        row = held[u, k]
        if packets[row, DST] == dst:
            ints[SEQ] += 1
            calendar_push(cal, ints, t, ints[SEQ], row, u)   # the queue's reference
        else:
            held[u, kept] = row
            kept += 1
    held_count[u] = kept


@njit(cache=True, _nrt=False)
def hold(u, msg_id, src, dst, hops, size_bytes, units_, kind, sent, ints, refs,
         free_rows, packets, units, sent_at, held, held_count):
    """``u`` holds a data packet for a route, in a new row (ready to be filed at its
    source: no sender or receiver yet); the caller has checked the queue's room and
    made room for a row."""
    row = new_row(refs, free_rows, ints)
    data_row(row, -1, -1, msg_id, src, dst, hops, size_bytes, units_, kind, sent, 1,
             packets, units, sent_at)
    held[u, held_count[u]] = row
    held_count[u] += 1


@njit(cache=True, _nrt=False)
def unhold(u, dst, held, held_count, packets, refs, free_rows, ints, taken):
    """The packets ``u`` held for ``dst`` out of its queue, their message ids into
    ``taken`` in the order held, their rows let go; returns how many."""
    kept = count = 0
    for k in range(held_count[u]):
        row = held[u, k]
        if packets[row, DST] == dst:
            taken[count] = packets[row, MSG_ID]
            count += 1
            release(refs, free_rows, ints, row)
        else:
            held[u, kept] = row
            kept += 1
    held_count[u] = kept
    return count


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


@njit(cache=True, inline="always")
def _filed(t, u, kind, size_bytes, ints, refs, free_rows, packets, cal):
    """A new row for a packet of ``kind`` ready at ``u`` at ``t``, its fields zero but
    its type, size, sender and message id (the next control id), filed with the next
    event number; returns the row for the caller to fill."""
    row = new_row(refs, free_rows, ints)
    for f in range(len(FIELDS)):
        packets[row, f] = 0
    packets[row, TYPE], packets[row, SIZE] = kind, size_bytes
    packets[row, SENDER], packets[row, RECEIVER] = u, -1
    packets[row, MSG_ID] = ints[NEXT_ID]
    ints[NEXT_ID] -= 1
    ints[SEQ] += 1
    calendar_push(cal, ints, t, ints[SEQ], row, u)
    return row


@njit(cache=True, inline="always")
def _rreq(t, u, orig, orig_seq, rreq_id, dst, dst_seq, hops, ttl, gratuitous, size_bytes,
          ints, refs, free_rows, packets, cal):
    """``u`` broadcasts a RREQ at ``t`` (:func:`_filed`)."""
    row = _filed(t, u, _RREQ, size_bytes, ints, refs, free_rows, packets, cal)
    packets[row, ORIG], packets[row, _ORIG_SEQ], packets[row, _RREQ_ID] = (
        orig, orig_seq, rreq_id)
    packets[row, DST], packets[row, _DST_SEQ] = dst, dst_seq
    packets[row, HOPS], packets[row, _TTL], packets[row, _GRATUITOUS] = (
        hops, ttl, gratuitous)


@njit(cache=True, inline="always")
def _rerr(t, u, entries, size_bytes, ints, refs, free_rows, packets, cal):
    """``u`` broadcasts a RERR of ``entries`` destinations at ``t`` (:func:`_filed`);
    returns its row, whose list the caller fills."""
    row = _filed(t, u, _RERR, size_bytes, ints, refs, free_rows, packets, cal)
    packets[row, _ENTRIES] = entries
    return row


def warm_up() -> None:
    """Compile (or load) what the host's Python calls into the loop, with the types a
    run gives it: a RREQ, RREP or RERR it sends, a packet held and taken back, a packet
    filed (released, or a notice), and the protocol's route rule and rate limits. A
    small run (``emulator.kernels.ready``) does all of these in the loop itself, and a
    large one in Python too (a relay without a route: a RERR)."""
    n, rows = 2, 8
    cal, ints = new_calendar(rows), np.zeros(_INTS, np.int64)
    refs, free_rows = np.zeros(rows, np.int64), np.arange(rows - 1, -1, -1, dtype=np.int64)
    ints[ROWS_FREE] = rows
    packets, units = np.zeros((rows, len(FIELDS)), np.int64), np.zeros(rows)
    lists, sent_at = np.zeros((rows, 2, n), np.int64), np.zeros(rows)
    file_rreq(0.0, 0, 1, -1, 0, 1, 1, 1, -1, 0, 1, 0, 52, *cal, ints, refs, free_rows,
              packets)
    file_rrep(0.0, 0, 2, -2, 1, 0, 1, 1, 1, 6.0, 0, 48, *cal, ints, refs, free_rows,
              packets, units)
    file_rerr(0.0, 0, 3, -3, np.zeros((2, 1), np.int64), 40, *cal, ints, refs, free_rows,
              packets, lists)
    held, held_count = np.zeros((n, 1), np.int64), np.zeros(n, np.int64)
    hold(0, 0, 0, 1, 0, 56, 1.0, 0, 0.0, ints, refs, free_rows, packets, units, sent_at,
         held, held_count)
    unhold(0, 1, held, held_count, packets, refs, free_rows, ints, np.zeros(1, np.int64))
    file_data(0.0, 0, 4, 0, -1, 0, 1, 0, 56, 1.0, 0, 0.0, 1, DATA, *cal, ints, refs,
              free_rows, packets, units, sent_at)   # a packet released, a notice
    lifetimes, routes = new_routes(n)
    use(routes, lifetimes, 0, 1, 0, 0.0, 3.0)   # the protocol's next_hop
    within_limit(0.0, np.zeros((n, 2)), 0, 10, 1.0)   # its RREQs' and RERRs' limits


class RouteDiscoveries(CompiledLoop):
    """The route discoveries of an AODV run on the links medium, beside the host's
    calendar (:class:`~emulator.routing.host.RoutedTransport`), and its data packets'
    hops (:class:`~emulator.routing.compiled_loop.CompiledLoop`): :meth:`file` takes a
    RREQ, RREP or RERR the protocol's Python sent."""

    FIELDS, INTS, TYPES = FIELDS, _INTS, TYPES
    kernel = staticmethod(run)

    def __init__(self, host, protocol):
        p = protocol.params
        horizon = host.horizon
        super().__init__(
            host, protocol,
            times=(p["active_route_timeout"], protocol.path_discovery_time,
                   protocol.net_traversal_time, p["node_traversal_time"],
                   protocol.my_route_timeout, protocol.delete_period,
                   p["ratelimit_interval"], math.inf if horizon is None else horizon,
                   protocol.hello_interval, protocol.hello_lifetime),
            consts=(Rrep(0, 0, 0, 0, 0.0).bytes(), p["rrep_ack"], IP_UDP_BYTES + 4,
                    p["rerr_ratelimit"], Rreq(0, 0, 0, 0, None, 0, 0).bytes(),
                    p["rreq_ratelimit"], p["gratuitous_reply"], p["ttl_start"],
                    p["ttl_increment"], p["ttl_threshold"], p["net_diameter"],
                    p["rreq_retries"], p["timeout_buffer"], p["queue_length"],
                    horizon is not None, _TIMER, p["link_layer_feedback"]))
        n, capacity = self.n, len(self.refs)
        self.lists = np.zeros((capacity, 2, n), np.int64)   # a RERR's
        self.told = np.zeros(TOLD * n, np.int64)   # what a RERR walk writes (grown)
        # the packets each node holds for a route (their rows, in order)
        self.held = np.zeros((n, self._queue_length()), np.int64)
        self.held_count = np.zeros(n, np.int64)
        self._taken_ids = np.zeros(self.held.shape[1], np.int64)

    def _queue_length(self) -> int:
        return max(self.protocol.params["queue_length"], 1)

    def room(self) -> int:
        return _room(self.n, self._queue_length())

    def request_queue(self, at: int) -> "HeldRows":
        """The request queue of the node at position ``at``: its packets are rows of
        this loop, which sends them when a RREP comes back."""
        return HeldRows(self, at, self.protocol.params["queue_length"])

    # -- what the host calls --------------------------------------------------------
    @staticmethod
    def takes(kind: str, dst: int) -> bool:
        """Whether a control packet of type ``kind`` to ``dst`` goes through the loop: a
        RREQ or RERR (broadcast) or a RREP (to a neighbour)."""
        return kind == "RREQ" or kind == "RERR" or (kind == "RREP" and dst >= 0)

    @staticmethod
    def takes_timer(tag) -> bool:
        """Whether a timer of the protocol's ``tag`` is this loop's (:meth:`file_timer`):
        a RREQ's timeout, or a RREQ held back by the rate limit."""
        return tag == HELLO or type(tag) is tuple and (tag[0] == RREQ_TIMEOUT
                                                      or tag[0] == RREQ_LATER)

    def file_timer(self, t: float, seq: int, node: int, tag) -> None:
        """The protocol's timer ``tag`` at ``node``, due at ``t`` (the host's event
        number ``seq``): its discovery's, fired here."""
        self._make_room()
        pos = self.protocol.position
        if tag == HELLO:
            rreq_id, dst = HELLO_TICK, node
        else:
            rreq_id, dst = (tag[2] if tag[0] == RREQ_TIMEOUT else HELD_BACK), tag[1]
        calendar_push(self.timers, self.timer_state, t, seq, rreq_id,
                      pos[node] * self.n + pos[dst])
        self._filed((t, _TIMER, seq))

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
                      self.units)
        self._filed((t, rank, seq))

    # -- the protocol's own codes ---------------------------------------------------------
    def _asked(self, code: int) -> bool:
        ints, floats = self.ints, self.floats
        if code == NEED_SEEN:
            self.protocol.seen.reserve(floats[ASK].item(), int(ints[ROOM]))
        elif code == SELF_HEARD:
            node = self.protocol.nodes[ints[CURRENT_NODE]]
            raise ValueError(f"node {node} hears its own broadcasts: the network has "
                             "a link from a node to itself (expected none)")
        else:
            return False
        return True

    def _in_python(self, code: int) -> None:
        """The loop's (:meth:`CompiledLoop._in_python`), a RREP with the A flag heard,
        a discovery failed and a HELLO to send."""
        ints, nodes = self.ints, self.protocol.nodes
        t = self.floats[CURRENT_T].item()
        if code == RREP_IN_PYTHON:
            self.protocol.on_receive(t, nodes[ints[CURRENT_NODE]],
                                     self._message(int(ints[CURRENT_ROW])))
        elif code == DISCOVERY_FAILED:
            self.protocol.discovery_failed(t, nodes[ints[CURRENT_NODE]],
                                           nodes[ints[FAILED_DST]])
        elif code == HELLO_IN_PYTHON:
            self.protocol.hello_due(t, nodes[ints[CURRENT_NODE]])
        else:
            super()._in_python(code)

    def _message(self, row: int):
        """The RREP of ``row`` as the host's message."""
        from contract.messages import Message
        from emulator.routing.base import Control
        f, nodes = self.packets[row].tolist(), self.protocol.nodes
        size = f[SIZE]
        rrep = Rrep(nodes[f[DST]], f[_DST_SEQ], nodes[f[ORIG]], f[HOPS],
                    self.units[row].item(), bool(f[_GRATUITOUS]))
        return Message(f[MSG_ID], "routing", nodes[f[SENDER]], nodes[f[RECEIVER]],
                       self.floats[CURRENT_T].item(), size / self.host.bytes_per_unit,
                       size, Control("RREP", rrep))

    # -- arguments and room -------------------------------------------------------------
    def _kept_too(self) -> tuple:
        return (self.protocol.seen.keys,)

    def _gather(self) -> tuple:
        host, protocol = self.host, self.protocol
        return (*self.calendar, self.ints, self.floats, self.times, self.packets,
                self.refs, self.free_rows, self.groups, self.group_len, self.free_groups,
                self.out_floats, self.out_ints, *self._ready, host._alive_array(),
                self.units, host._link_times, host._pool, self.ids, self.fan.ints,
                self.fan.floats, protocol.hello_on, host.reorder, protocol._heard_at,
                protocol._heard_rank, protocol._heard_next, protocol._lifetimes,
                protocol._routes, protocol._latest, *protocol.seen.arrays(),
                protocol._todo, protocol._last_broadcast, protocol.seqs,
                protocol.discovering, self.consts, self.lists, self.told,
                protocol.rerr_limits, self.arrived_at, self.arrived_ids, self.sent_at,
                self.sends_floats, self.sends_ints, host.flow_started, self.first_flows,
                self.first_waits, self.held, self.held_count, *self.timers,
                self.timer_state, protocol.rreq_ids, protocol.discoveries,
                protocol.rreq_limits, self.drops_at, self.drop_ids)

    def _row_arrays(self) -> tuple:
        return (*super()._row_arrays(), self.lists)

    def _set_row_arrays(self, arrays: tuple) -> None:
        super()._set_row_arrays(arrays[:-1])
        self.lists = arrays[-1]

    def _make_room(self) -> None:
        super()._make_room()
        ints = self.ints
        if ints[ROOM] > len(self.told):   # a RERR walk's receivers times destinations
            self.told = np.zeros(2 * ints[ROOM], np.int64)
            self._kept = None


class HeldRows:
    """A node's request queue (:class:`~emulator.routing.aodv.rqueue.RequestQueue`'s
    contract) as rows of its compiled loop, which files them when a RREP comes back:
    at most ``capacity`` packets, first in first out by destination.
    """

    def __init__(self, loop: RouteDiscoveries, at: int, capacity: int):
        self.loop, self.at, self.capacity = loop, at, capacity

    def __len__(self) -> int:
        return self.loop.held_count.item(self.at)

    def push(self, msg, dst: int) -> bool:
        """Hold ``msg`` for ``dst``; False (not held) when the queue is full."""
        loop = self.loop
        if len(self) >= self.capacity:
            return False
        loop._make_room()
        host = loop.host
        pos, ledger = host._gpos, host.ledger
        hold(self.at, msg.msg_id, pos[msg.src], pos[dst], host._taken.get(msg.msg_id, 0),
             msg.size_bytes, msg.size_units,
             0 if ledger is None else ledger.kind_code(msg.kind), msg.sent_at, loop.ints,
             loop.refs, loop.free_rows, loop.packets, loop.units, loop.sent_at, loop.held,
             loop.held_count)
        loop._data[msg.msg_id] = msg
        return True

    def take(self, dst: int) -> list:
        """Every packet held for ``dst``, oldest first; they leave the queue."""
        loop = self.loop
        count = unhold(self.at, loop.host._gpos[dst], loop.held, loop.held_count,
                       loop.packets, loop.refs, loop.free_rows, loop.ints, loop._taken_ids)
        data = loop._data
        return [data.pop(msg_id) for msg_id in loop._taken_ids[:count].tolist()]
