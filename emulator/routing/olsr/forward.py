"""OLSR's forwarding in a compiled loop beside the host's calendar (the links medium,
without batteries): data packets and notices hop by hop, and the protocol's own packets
queued, flushed, broadcast, heard and relayed, without coming back to Python between
them.

Data hops are most of a busy OLSR run's events (at 200 mobile nodes and 10^5 messages,
282 k forwarding decisions; at 10^6 ten times as many), its packets heard most of the
rest (33 k packets of 3.6 messages each heard by 24 receivers). Here
(:class:`~emulator.routing.compiled_loop.CompiledLoop`, whose rows, calendar, frames,
broadcasts, timers and staging are shared with AODV's loop), as the host's Python would
have it:

- a data packet or a notice at a node is sent on to the next hop of the node's table
  (:meth:`~.routes.RouteInputs.route`'s rule: the table searched again, only as deep
  as asked, at the first query after a change), crossing its link by the unicast
  frame's rules, then ready at the next node or staged as delivered; it is dropped
  where the node's table has no route (``no_route``; a relay sends the packet's source a
  notice, routed from there like data) and where its next hop is out of range (the
  MAC gives up: ``link_break``), the link broken first with ``link_layer_feedback``
  (the protocol's ``on_link_failure``); it is Python's otherwise
  (:data:`~emulator.routing.loop.DATA_IN_PYTHON`: its node down, its TTL spent, back
  at its source; a MAC's failure learnt at the arrival; a wait too long for its link);
- at a node's HELLO timer its expired entries are purged, its MPRs selected and a
  HELLO queued; at its TC timer, if some neighbour chose it as an MPR, a TC of its
  selectors (the protocol's ``_hello`` and ``_tc``);
- a node's messages (its HELLOs and TCs, and the TCs it relays) wait in its queue, and
  the first one to find the queue empty sets the flush, a timer after a jitter drawn
  from the protocol's uniforms (:meth:`~emulator.routing.base.Protocol.uniform`, which
  this loop draws from in turn with Python); at the flush the queue leaves in packets
  of up to ``max_messages_per_packet`` messages (its rows), each broadcast by the
  fan-out's rules (:func:`~emulator.routing.loop.broadcast`);
- a group of receivers hearing a packet learns its messages
  (:func:`~.receive.receive`), and each TC a receiver relays joins its queue, its TTL
  less one.

With ``max_messages_per_packet`` 1 (a relayed TC waits on a timer of its own) the
protocol's packets and timers stay the host's Python and this loop carries the data
only.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from emulator.hop_kernel import _calendar_pop, calendar_push
from emulator.routing.compiled_loop import CompiledLoop
from emulator.routing.loop import (
    ASK, CURRENT_NODE, CURRENT_ROW, CURRENT_SEQ, CURRENT_T, DATA_IN_PYTHON, DRAWN,
    DST, FIRST_OWN_CODE, GO, GROUPS_FREE, IDLE, INTS, LINK_BREAK, MAC_NOW, MAX_WAIT,
    MSG_ID, NEED_FRAME_UNIFORMS, NEED_ROOM, NEXT_ID, NO_ROUTE, ORIG, RECEIVER, ROOM,
    SENDER, SEQ, SIZE, STAGED, TYPE, broadcast, drop_here, group_done, leaves,
    new_row, next_step, pythons, release, routed, send_unicast, short_of_room,
    take_send, unresolved)
from emulator.routing.loop import FIELDS as DATA_FIELDS
from emulator.routing import bits as bitset
from emulator.routing.olsr.messages import _PACKET, HELLO, TC
from emulator.routing.olsr.mpr import select_into
from emulator.routing.olsr.receive import receive
from emulator.routing.olsr.routes import UNKNOWN, _route
from emulator.routing.olsr.state import purge
from emulator.routing.seen import remember, seen_key
from emulator.transport import _TIMER

#: A row's fields: the loop's, then how many messages a packet of the protocol's holds
#: (their rows are ``messages[row, :count]``, as :func:`~.messages.message_rows` makes
#: them, and their own sizes ``message_sizes[row, :count]``).
FIELDS = DATA_FIELDS + ("count",)
_COUNT = len(DATA_FIELDS)
#: The control types the loop carries, by code: a packet's is its first message's
#: (:data:`~.messages.HELLO` 0, :data:`~.messages.TC` 1); a notice is routed like data.
TYPES = ("HELLO", "TC", "NOTICE")
#: What :func:`run` returns beside the loop's codes: room in the table of messages seen
#: (and in ``asks``) for ``ints[ROOM]`` keys at ``floats[ASK]`` (what
#: :func:`~.receive.hear` reserves before every packet heard, or a TC remembers); room
#: in the nodes' queues; more of the protocol's uniforms; room for lists (a HELLO's
#: three, a TC's one, numbered with the protocol's Python: ``RouteInputs.grow_lists``).
NEED_SEEN, NEED_QUEUE_ROOM, NEED_DRAWS, NEED_LISTS = range(FIRST_OWN_CODE,
                                                          FIRST_OWN_CODE + 4)
#: The protocol's timer tags whose timers this loop fires: a node's queue flushed, its
#: HELLO and its TC due (a timer's ``msg`` here: :data:`FLUSH_TIMER` ...).
FLUSH, HELLO_TAG, TC_TAG = "flush", "hello", "tc"
FLUSH_TIMER, HELLO_TIMER, TC_TIMER = 0, 1, 2
_TIMER_KINDS = {FLUSH: FLUSH_TIMER, HELLO_TAG: HELLO_TIMER, TC_TAG: TC_TIMER}
#: The messages a node's queue has room for at first (doubled as needed).
QUEUE = 16
# ``ints``' own field: the packets flushed whose message types are staged (``packed``)
_PACKED, _INTS = INTS, INTS + 1
# ``times``' own fields: MAXJITTER, the hold times, the horizon at which the host's
# timers stop (if consts[_HAS_HORIZON]), the HELLO and TC intervals
(_MAXJITTER, _NEIGHB_HOLD, _DUP_HOLD, _TOP_HOLD, _HORIZON, _HELLO_INTERVAL,
 _TC_INTERVAL) = range(1, 8)
#: A TC's TTL as its originator sends it.
TC_TTL = 255
# ``consts``' own fields, after the loop's: whether a MAC's failure breaks the link,
# the messages a packet may hold, whether the host's timers stop at a horizon, its rank
# for timers, the bytes a packet pays once (IPv4, UDP, its header)
(_LINK_LAYER_FEEDBACK, _MAX_MESSAGES, _HAS_HORIZON, _TIMER_RANK,
 _PACKET_BYTES) = range(4, 9)

#: The arrays the data hops read (the nodes' tables, :class:`~.routes.RouteInputs`'; and
#: the link sets', :class:`~.state.Repositories`'), as one argument of the helpers.
Tables = namedtuple("Tables", "stale search_t sym_until two_hop_until two_hop_list "
                              "topology_until topology_list lists routes search "
                              "heard_until")
#: The arrays the protocol's packets use: the groups of receivers, the packets'
#: messages, the nodes' queues and flushes, the timers, the uniforms, the message
#: types staged, and what a packet heard updates (:func:`~.receive.receive`'s).
Flood = namedtuple("Flood", "groups group_len free_groups messages message_sizes queue "
                            "queue_len flush_at timers timer_state uniforms uniforms_left "
                            "packed selector_until topology_ansn topology_expiry "
                            "seen_keys seen_untils seen_count latest asks")
#: What a node's HELLO and TC use beyond :data:`Flood`: the link sets' state at the last
#: purge, the lists numbered so far, each node's message sequence number, ANSN and the
#: selectors its last TC advertised (a bit set), the MPR selection's scratch and a
#: message's row being made.
Own = namedtuple("Own", "last_symmetric lists_used msg_seqs ansns advertised strict "
                        "covers reach sets mpr row")


@njit(cache=True, _nrt=False)
def run(stop_t, stop_rank, stop_seq, until, ready_rank, cal_time, cal_seq, cal_msg,
        cal_node, ints, floats, times, consts, packets, refs, free_rows, units, sent_at,
        first, last, bandwidths, costs, alive_ready, head, attrs, link_costs, alive,
        link_times, pool, reorder, out_floats, out_ints, arrived_at, arrived_ids,
        flow_started, first_flows, first_waits, drops_at, drop_ids, sends_floats,
        sends_ints, stale, search_t, sym_until, two_hop_until, two_hop_list,
        topology_until, topology_list, lists, routes, search, heard_until, groups,
        group_len, free_groups, ids, fan_ints, fan_floats, messages, message_sizes,
        queue, queue_len, flush_at, timer_time, timer_seq, timer_msg, timer_node,
        timer_state, uniforms, uniforms_left, packed, selector_until, topology_ansn,
        topology_expiry, seen_keys, seen_untils, seen_count, latest, asks, last_symmetric,
        lists_used, msg_seqs, ansns, advertised, strict, covers, reach, sets, mpr,
        own_row):
    """Take this calendar's events (data packets and notices at a node, the host's
    sends, the protocol's packets at their sender and their groups of receivers, the
    flushes) while they come before the host's next one ``(stop_t, stop_rank,
    stop_seq)`` and before ``until``; returns why it stopped (the module docstring;
    :data:`~emulator.routing.loop.IDLE`: nothing more before the host's). The tables'
    arrays are :class:`~.routes.RouteInputs`' (``lists``: its bit sets), read and
    searched as its ``route`` does; what a packet heard updates is
    :class:`~.state.Repositories`'. ``queue[u, :queue_len[u]]``: node ``u``'s messages
    waiting (their rows and own sizes), ``flush_at[u]``: when its flush was last set
    for; ``timer_*``: the flushes (``node``: the node's position); ``packed``: the
    message types of the packets flushed (their id, count and which are TCs)."""
    cal = (cal_time, cal_seq, cal_msg, cal_node)
    tables = Tables(stale, search_t, sym_until, two_hop_until, two_hop_list,
                    topology_until, topology_list, lists, routes, search, heard_until)
    flood = Flood(groups, group_len, free_groups, messages, message_sizes, queue,
                  queue_len, flush_at, (timer_time, timer_seq, timer_msg, timer_node),
                  timer_state, uniforms, uniforms_left, packed, selector_until,
                  topology_ansn, topology_expiry, seen_keys, seen_untils, seen_count,
                  latest, asks)
    own = Own(last_symmetric, lists_used, msg_seqs, ansns, advertised, strict, covers,
              reach, sets, mpr, own_row)
    # a hop's links and what it stages, one argument each (numba inlines no call of
    # more than 30 arguments)
    links = (first, last, head, attrs, link_costs, alive, alive_ready, link_times, pool,
             reorder)
    staged = (out_floats, out_ints, arrived_at, arrived_ids, flow_started, first_flows,
              first_waits, drops_at, drop_ids)
    n = len(heard_until)
    # room for what an event may file: a broadcast's groups (one a receiver at most),
    # a flush's packets, a group's flushes (one a receiver), a notice's row
    room = max(n + 1, queue.shape[1] // consts[_MAX_MESSAGES] + 2)
    fan = (groups, group_len, free_groups, ids, fan_ints, fan_floats)
    frame = (first, last, bandwidths, costs, head, attrs, link_times, pool, reorder)
    sends = (sends_floats, sends_ints)
    timers = (timer_time, timer_seq, timer_msg, timer_node)
    stop = (until, stop_t, stop_rank, stop_seq)
    while True:
        code, timer, sent, t, seq, node = next_step(
            ints, floats, times[MAX_WAIT], consts, packets, refs, free_rows, units,
            out_floats, out_ints, link_costs, alive, arrived_at, arrived_ids, cal, fan,
            frame, sends, timers, timer_state, stop, ready_rank, consts[_TIMER_RANK])
        if code != GO:
            return code
        if (short_of_room(ints, room, cal_time, out_floats, arrived_ids, first_waits,
                          drops_at)
                or ints[GROUPS_FREE] < room or len(timer_time) - timer_state[0] < room
                or packed.shape[1] - ints[_PACKED] < room):
            return NEED_ROOM
        if timer:
            code = _timer_fires(t, ints, floats, times, consts, packets, refs, free_rows,
                                cal, tables, flood, own)
            if code != IDLE:
                return code
            continue
        if node >= 0:   # a packet at a node (a send by the host: data at its source)
            hopped = sent or routed(consts, packets, cal_msg[0])
            if hopped and len(pool) - ints[DRAWN] < 2:
                return NEED_FRAME_UNIFORMS   # a frame takes two uniforms at most
            if sent:
                row, node = take_send(t, seq, ints, floats, sends_floats, sends_ints, refs,
                                      free_rows, packets, units, sent_at)
            else:
                row = cal_msg[0]
                _calendar_pop(cal, ints)
                ints[CURRENT_ROW], ints[CURRENT_NODE], floats[CURRENT_T] = row, node, t
                ints[CURRENT_SEQ] = seq
            if hopped:
                code = _data_hop(row, node, t, ints, floats, times, consts, packets, refs,
                                 free_rows, units, sent_at, links, staged, cal, tables)
            elif not alive_ready[node]:   # a dead node sends nothing
                release(refs, free_rows, ints, row)
                code = IDLE
            else:
                code = broadcast(ints, floats, times[MAX_WAIT], consts, packets, refs,
                                 free_rows, groups, group_len, free_groups, out_floats,
                                 out_ints, first, last, bandwidths, costs, head, attrs,
                                 alive, link_times, pool, ids, fan_ints, fan_floats,
                                 reorder, cal, False)
            if code != IDLE:
                return code
            continue
        code = _group_hears(t, -1 - node, ints, floats, times, consts, packets, refs,
                            free_rows, cal, tables, flood)
        if code != IDLE:
            return code


@njit(cache=True, inline="always")
def _data_hop(row, u, t, ints, floats, times, consts, packets, refs, free_rows, units,
              sent_at, links, staged, cal, tables):
    """The current data packet (or notice) of ``row`` at ``u`` (the host's
    ``_forward``): on to its next hop (one Python chose is sent at once), dropped
    without a route or with its next hop out of range, or Python's. ``links``,
    ``staged``: :func:`run`'s arrays of a hop's links and of what it stages."""
    first, last, head, attrs, link_costs, alive, alive_ready, link_times, pool, \
        reorder = links
    (out_floats, out_ints, arrived_at, arrived_ids, flow_started, first_flows,
     first_waits, drops_at, drop_ids) = staged
    if u != packets[row, SENDER]:
        if pythons(ints, consts, packets, refs, free_rows, alive_ready, row, u):
            return DATA_IN_PYTHON
        nxt = next_hop(t, u, packets[row, DST], tables.stale, tables.search_t,
                       tables.sym_until, tables.two_hop_until, tables.two_hop_list,
                       tables.topology_until, tables.topology_list, tables.lists,
                       tables.routes, tables.search)
        if nxt < 0:
            release(refs, free_rows, ints, row)   # read below before a notice's
            drop_here(t, NO_ROUTE, packets[row, TYPE], packets[row, MSG_ID],
                      packets[row, ORIG], u, alive_ready, ints, consts, packets, refs,
                      free_rows, units, sent_at, drops_at, drop_ids, cal)
            return IDLE
        leaves(t, row, u, nxt, ints, packets, sent_at, flow_started, first_flows,
               first_waits)
    code = send_unicast(ints, floats, times[MAX_WAIT], consts, packets, refs, free_rows,
                        units, first, last, head, attrs, link_costs, alive, link_times,
                        pool, reorder, out_floats, out_ints, arrived_at, arrived_ids, cal)
    if code == MAC_NOW:   # the row was let go; nothing has taken it since
        v = packets[row, RECEIVER]
        if consts[_LINK_LAYER_FEEDBACK] and tables.heard_until[u, v] >= 0:
            # the protocol's on_link_failure (Repositories.break_link)
            tables.heard_until[u, v] = tables.sym_until[u, v] = t
            tables.stale[u] = True
        drop_here(t, LINK_BREAK, packets[row, TYPE], packets[row, MSG_ID],
                  packets[row, ORIG], u, alive_ready, ints, consts, packets, refs,
                  free_rows, units, sent_at, drops_at, drop_ids, cal)
        return IDLE
    return code


@njit(cache=True, inline="always")
def next_hop(t, i, j, stale, search_t, sym_until, two_hop_until, two_hop_list,
             topology_until, topology_list, lists, routes, search):
    """Node ``i``'s next hop towards ``j`` (positions; -1: none) at ``t``, as
    :meth:`~.routes.RouteInputs.route` finds it."""
    k = UNKNOWN if stale[i] else routes[i, j]
    if k == UNKNOWN:
        k = _route(i, j, t, stale, search_t, sym_until, two_hop_until, two_hop_list,
                   topology_until, topology_list, lists, routes, search)
    return k


@njit(cache=True, inline="always")
def _group_hears(t, group, ints, floats, times, consts, packets, refs, free_rows, cal,
                 tables, flood):
    """The receivers of ``group`` (the calendar's first event) hear its packet at ``t``
    (the protocol's ``on_receive_all``): its messages learnt, then each TC a receiver
    relays queued at it (:func:`enqueue`, its TTL less one), in order; or what that
    needs first (room in the table of messages seen, in the queues, uniforms), the
    event left in the calendar."""
    row, count = cal[2][0], flood.group_len[group]
    sender, messages = packets[row, SENDER], packets[row, _COUNT]
    most = count * messages   # a key and a TC to ask about a receiver and message
    if flood.seen_count[0] + most > len(flood.seen_keys) // 2 or len(flood.asks) < most:
        floats[ASK], ints[ROOM] = t, most
        return NEED_SEEN
    receivers = flood.groups[group, :count]
    queue_len = flood.queue_len
    for a in range(count):
        if queue_len[receivers[a]] + messages > flood.queue.shape[1]:
            ints[ROOM] = queue_len[receivers[a]] + messages
            return NEED_QUEUE_ROOM
    if flood.uniforms_left[0] < count:   # a flush's jitter a receiver at most
        return NEED_DRAWS
    _calendar_pop(cal, ints)
    ints[CURRENT_ROW], ints[CURRENT_NODE], floats[CURRENT_T] = row, -1 - group, t
    asks = flood.asks
    relayed = receive(t, sender, receivers, flood.messages[row, :messages],
                      times[_NEIGHB_HOLD], times[_DUP_HOLD], times[_TOP_HOLD],
                      tables.heard_until, tables.sym_until, tables.two_hop_until,
                      tables.two_hop_list, flood.selector_until, flood.topology_ansn,
                      tables.topology_until, tables.topology_list, flood.topology_expiry,
                      tables.stale, tables.lists, flood.seen_keys, flood.seen_untils,
                      flood.seen_count, flood.latest, asks)
    for j in range(relayed):   # tc._replace(ttl=tc.ttl - 1), from the receiver
        a, k = asks[j, 0], asks[j, 1]
        u = receivers[a]
        at = enqueue(t, u, flood.messages[row, k], -1, flood.message_sizes[row, k],
                     times, flood.queue, queue_len, flood.flush_at, flood.uniforms,
                     flood.uniforms_left)
        if at >= 0:
            _set_timer(at, u, FLUSH_TIMER, ints, times, consts, flood.timers,
                       flood.timer_state)
    group_done(ints, flood.free_groups, refs, free_rows, group, row)
    return IDLE


@njit(cache=True, inline="always")
def enqueue(t, u, message, ttl_change, size, times, queue, queue_len, flush_at, uniforms,
            uniforms_left):
    """Node ``u`` has the message of row ``message`` (its TTL changed by ``ttl_change``)
    of ``size`` bytes to send at ``t`` (the protocol's ``_emit``): into its queue; the
    first one to find it empty (or a flush set for before ``t``, which the host
    refused) sets the flush after a jitter, whose time it returns (-1: none to set).
    The caller has made room, and left a uniform.

    >>> times, queue = np.array([0.0, 0.5]), np.zeros((1, 4, 7), np.int64)
    >>> queue_len, flush_at = np.zeros(1, np.int64), np.full(1, np.inf)
    >>> uniforms, left = np.array([0.2, 0.6]), np.array([2])
    >>> tc = np.array([1, 3, 7, 1, 5, 255])       # a TC of node 3 (:data:`.TC` 1)
    >>> [enqueue(t, 0, tc, -1, 52, times, queue, queue_len, flush_at, uniforms, left)
    ...  for t in (1.0, 1.1, 2.0)]                 # flush at 1.3, then at 2.1 (late)
    [1.3, -1.0, 2.1]
    >>> queue[0, :3, 5].tolist(), queue_len.tolist(), left.tolist()   # TTLs less one
    ([254, 254, 254], [3], [0])
    """
    q = queue_len[u]
    for c in range(6):
        queue[u, q, c] = message[c]
    queue[u, q, 5] += ttl_change
    queue[u, q, 6] = size
    queue_len[u] = q + 1
    if q and flush_at[u] >= t:
        return -1.0
    k = uniforms_left[0] - 1
    uniforms_left[0] = k
    at = t + uniforms[k] * times[_MAXJITTER]
    flush_at[u] = at
    return at


@njit(cache=True, inline="always")
def _set_timer(t, u, kind, ints, times, consts, timers, timer_state):
    """Node ``u``'s timer of ``kind`` at ``t`` (the host's ``set_timer``: none once
    nothing is left to deliver, or from the horizon on)."""
    if t < times[_HORIZON] if consts[_HAS_HORIZON] else unresolved(ints) > 0:
        ints[SEQ] += 1
        calendar_push(timers, timer_state, t, ints[SEQ], kind, u)


@njit(cache=True, inline="always")
def _timer_fires(t, ints, floats, times, consts, packets, refs, free_rows, cal, tables,
                 flood, own):
    """The next timer fires (the protocol's ``on_timer``; none acts once nothing is
    left to deliver without a horizon, as the host's timers do not): a node's flush,
    HELLO or TC; or what a HELLO or TC needs first (room in its queue, a uniform, room
    for lists, room in the table of messages seen), the timer left in the calendar."""
    timers, timer_state = flood.timers, flood.timer_state
    kind, u = timers[2][0], timers[3][0]
    if kind != FLUSH_TIMER:
        if flood.queue_len[u] + 1 > flood.queue.shape[1]:
            ints[ROOM] = flood.queue_len[u] + 1
            return NEED_QUEUE_ROOM
        if flood.uniforms_left[0] < 1:
            return NEED_DRAWS
        if own.lists_used[0] + 3 > len(tables.lists):
            ints[ROOM] = own.lists_used[0] + 3
            return NEED_LISTS
        if kind == TC_TIMER and flood.seen_count[0] + 1 > len(flood.seen_keys) // 2:
            floats[ASK], ints[ROOM] = t, 1   # the TC remembered as seen
            return NEED_SEEN
    _calendar_pop(timers, timer_state)
    if not (consts[_HAS_HORIZON] or unresolved(ints) > 0):
        return IDLE
    if kind == FLUSH_TIMER:
        _flush(t, u, ints, consts, packets, refs, free_rows, cal, flood)
    elif kind == HELLO_TIMER:
        _hello(t, u, ints, times, consts, tables, flood, own)
    else:
        _tc(t, u, ints, times, consts, tables, flood, own)
    return IDLE


@njit(cache=True, inline="always")
def _hello(t, u, ints, times, consts, tables, flood, own):
    """Node ``u``'s HELLO (the protocol's ``_hello``): its expired entries purged, its
    MPRs selected, a HELLO of its symmetric, heard-only and MPR neighbours queued (the
    three lists numbered anew), the next one due a HELLO_INTERVAL on."""
    purge(u, t, tables.heard_until, tables.sym_until, own.last_symmetric,
          tables.two_hop_until, flood.topology_ansn, tables.topology_until,
          flood.topology_expiry, tables.stale)
    select_into(u, t, tables.sym_until, tables.two_hop_until, tables.two_hop_list,
                tables.lists, own.strict, own.covers, own.reach, own.sets, own.mpr)
    lists, k = tables.lists, own.lists_used[0]
    own.lists_used[0] = k + 3
    for w in range(lists.shape[1]):
        lists[k, w] = lists[k + 1, w] = lists[k + 2, w] = 0
    sym = heard = mprs = 0
    for j in range(len(own.mpr)):
        if tables.sym_until[u, j] > t:
            bitset.add(lists[k], j)
            sym += 1
        elif tables.heard_until[u, j] > t:
            bitset.add(lists[k + 1], j)
            heard += 1
        if own.mpr[j]:
            bitset.add(lists[k + 2], j)
            mprs += 1
    codes = (mprs > 0) + (sym > mprs) + (heard > 0)   # Hello.bytes
    size = _PACKET + 16 + 4 * codes + 4 * (sym + heard)
    row = own.row
    row[0], row[1], row[2], row[3], row[4], row[5] = HELLO, k, k + 1, k + 2, 0, 0
    _queue_own(t, u, row, size, ints, times, consts, flood)
    _set_timer(t + times[_HELLO_INTERVAL], u, HELLO_TIMER, ints, times, consts,
               flood.timers, flood.timer_state)


@njit(cache=True, inline="always")
def _tc(t, u, ints, times, consts, tables, flood, own):
    """Node ``u``'s TC (the protocol's ``_tc``): if some neighbour chose it as an MPR, a
    TC of its selectors queued (its ANSN raised if they changed, remembered as seen),
    the next one due a TC_INTERVAL on."""
    lists, k = tables.lists, own.lists_used[0]
    for w in range(lists.shape[1]):
        lists[k, w] = 0
    selectors = 0
    for j in range(len(own.mpr)):
        if flood.selector_until[u, j] > t:
            bitset.add(lists[k], j)
            selectors += 1
    if selectors:
        own.lists_used[0] = k + 1
        changed = False
        for w in range(lists.shape[1]):
            if lists[k, w] != own.advertised[u, w]:
                changed = True
            own.advertised[u, w] = lists[k, w]
        if changed:
            own.ansns[u] += 1
        own.msg_seqs[u] += 1
        remember(flood.seen_keys, flood.seen_untils, flood.seen_count,
                 seen_key(u, u, own.msg_seqs[u], len(own.mpr)), t + times[_DUP_HOLD])
        row = own.row
        row[0], row[1], row[2], row[3], row[4], row[5] = (TC, u, own.msg_seqs[u],
                                                          own.ansns[u], k, TC_TTL)
        _queue_own(t, u, row, _PACKET + 16 + 4 * selectors, ints, times, consts, flood)
    _set_timer(t + times[_TC_INTERVAL], u, TC_TIMER, ints, times, consts, flood.timers,
               flood.timer_state)


@njit(cache=True, inline="always")
def _queue_own(t, u, row, size, ints, times, consts, flood):
    """Node ``u``'s own message (``row``, six fields) of ``size`` bytes into its queue
    (:func:`enqueue`), its flush set if it is the first."""
    at = enqueue(t, u, row, 0, size, times, flood.queue, flood.queue_len,
                 flood.flush_at, flood.uniforms, flood.uniforms_left)
    if at >= 0:
        _set_timer(at, u, FLUSH_TIMER, ints, times, consts, flood.timers,
                   flood.timer_state)


@njit(cache=True, inline="always")
def _flush(t, u, ints, consts, packets, refs, free_rows, cal, flood):
    """Node ``u``'s flush (the protocol's ``_flush``): its queue leaves in packets of up
    to ``max_messages_per_packet`` messages, each ready at it now (a row, numbered from
    the host's control ids), their message types staged."""
    queue = flood.queue
    count, most = flood.queue_len[u], consts[_MAX_MESSAGES]
    flood.queue_len[u] = 0
    for k in range(0, count, most):
        end = min(k + most, count)
        row = new_row(refs, free_rows, ints)
        for f in range(packets.shape[1]):
            packets[row, f] = 0
        size, tcs = consts[_PACKET_BYTES], 0
        for j in range(k, end):
            for c in range(6):
                flood.messages[row, j - k, c] = queue[u, j, c]
            flood.message_sizes[row, j - k] = queue[u, j, 6]
            size += queue[u, j, 6] - consts[_PACKET_BYTES]
            if queue[u, j, 0] == TC:
                tcs |= 1 << (j - k)
        packets[row, TYPE], packets[row, SIZE] = queue[u, k, 0], size
        packets[row, SENDER], packets[row, ORIG], packets[row, RECEIVER] = u, u, -1
        packets[row, _COUNT], packets[row, MSG_ID] = end - k, ints[NEXT_ID]
        p = ints[_PACKED]
        flood.packed[0, p], flood.packed[1, p] = ints[NEXT_ID], end - k
        flood.packed[2, p] = tcs
        ints[_PACKED] = p + 1
        ints[NEXT_ID] -= 1
        ints[SEQ] += 1
        calendar_push(cal, ints, t, ints[SEQ], row, u)


class OlsrLoop(CompiledLoop):
    """OLSR's data packets and notices, and with ``max_messages_per_packet`` above 1
    its own packets and timers (:attr:`control`), on the links medium beside the host's
    calendar (the module docstring); the protocol's tables, repositories and sequence
    numbers are read and written in place, the nodes' queues are this loop's."""

    FIELDS, INTS, TYPES = FIELDS, _INTS, TYPES
    kernel = staticmethod(run)

    def __init__(self, host, protocol):
        p = protocol.params
        horizon = host.horizon
        n, most = len(host._gids), p["max_messages_per_packet"]
        # each node's messages waiting (their rows and own sizes), and how many; when
        # its flush was last set for (none: never before a time asked)
        self.queue = np.zeros((n, QUEUE, 7), np.int64)
        self.queue_len = np.zeros(n, np.int64)
        self.flush_at = np.full(n, np.inf)
        super().__init__(
            host, protocol,
            times=(p["maxjitter"], p["neighb_hold_time"], p["dup_hold_time"],
                   p["top_hold_time"], np.inf if horizon is None else horizon,
                   p["hello_interval"], p["tc_interval"]),
            consts=(int(p["link_layer_feedback"]), p["max_messages_per_packet"],
                    horizon is not None, _TIMER, _PACKET))
        #: Whether the protocol's packets are this loop's too.
        self.control = p["max_messages_per_packet"] > 1
        self._reps = protocol._reps
        self._inputs = self._reps.inputs
        capacity = len(self.refs)
        self.messages = np.zeros((capacity, most, 6), np.int64)
        self.message_sizes = np.zeros((capacity, most), np.int64)
        self.packed = np.zeros((3, 1024), np.int64)
        self._types: dict[int, tuple] = {}   # a packet's message types, by its id
        words = self._inputs.bit_sets().shape[1]
        # the MPR selection's scratch (mpr.select_into), a message's row
        self._scratch = (np.zeros((n, words), np.uint64), np.zeros(n, np.int64),
                         np.zeros(n, np.int64), np.zeros((3, words), np.uint64),
                         np.zeros(n, np.bool_), np.zeros(6, np.int64))

    # -- what the protocol and the host call ------------------------------------------
    def takes_timer(self, tag) -> bool:
        return self.control and tag in _TIMER_KINDS

    def file_timer(self, t: float, seq: int, node: int, tag) -> None:
        """A node's flush, HELLO or TC, due at ``t`` (the host's event number ``seq``)."""
        self._make_room()
        calendar_push(self.timers, self.timer_state, t, seq, _TIMER_KINDS[tag],
                      self.protocol.position[node])
        self._filed((t, _TIMER, seq))

    def hand_over(self) -> None:
        """The loop's (:meth:`CompiledLoop.hand_over`), with the message types of each
        packet of the protocol's handed over (the host counts each message)."""
        ints, host = self.ints, self.host
        packed = ints.item(_PACKED)
        if packed:
            for msg_id, count, tcs in zip(*self.packed[:, :packed].tolist()):
                self._types[msg_id] = tuple("TC" if tcs >> i & 1 else "HELLO"
                                            for i in range(count))
            ints[_PACKED] = 0
        count = ints.item(STAGED)
        if count and self._types:
            at, types = len(host.control_log), self._types
            for msg_id, type_ in zip(self.out_ints[1, :count].tolist(),
                                     self.out_ints[5, :count].tolist()):
                if type_ < 0:   # a data packet's: not logged
                    continue
                if type_ < len(TYPES) - 1:   # a packet of the protocol's
                    host._packed[at] = types.pop(msg_id)
                at += 1
        super().hand_over()

    # -- the protocol's own codes ---------------------------------------------------------
    def _asked(self, code: int) -> bool:
        ints, reps = self.ints, self._reps
        if code == NEED_SEEN:   # as receive.hear makes room before a packet heard
            most = int(ints[ROOM])
            reps.seen.reserve(self.floats[ASK].item(), most)
            if len(reps.asks) < most:
                reps.asks = np.empty((max(most, 2 * len(reps.asks)), 3), np.int64)
        elif code == NEED_QUEUE_ROOM:
            self._grow_queues(int(ints[ROOM]))
        elif code == NEED_DRAWS:
            self.protocol.more_uniforms()
        elif code == NEED_LISTS:
            self._inputs.grow_lists(int(ints[ROOM]))
        else:
            return False
        return True

    def _grow_queues(self, room: int) -> None:
        """Queues of at least ``room`` messages each (twice as long at least)."""
        longer = np.zeros((self.n, max(room, 2 * self.queue.shape[1]), 7), np.int64)
        longer[:, :self.queue.shape[1]] = self.queue
        self.queue, self._kept = longer, None
        self._room_needed = self.room()

    # -- arguments and room -------------------------------------------------------------
    def _kept_too(self) -> tuple:
        # made anew when a list more needs room, a table of messages seen is remade,
        # asks grows, a block of uniforms is drawn
        return (self._inputs.bit_sets(), self._reps.seen.keys, self._reps.asks,
                self.protocol.uniforms)

    def _gather(self) -> tuple:
        host, inputs, reps, protocol = self.host, self._inputs, self._reps, self.protocol
        return (*self.calendar, self.ints, self.floats, self.times, self.consts,
                self.packets, self.refs, self.free_rows, self.units, self.sent_at,
                *self._ready, host._alive_array(), host._link_times, host._pool,
                host.reorder, self.out_floats, self.out_ints, self.arrived_at,
                self.arrived_ids, host.flow_started, self.first_flows, self.first_waits,
                self.drops_at, self.drop_ids, self.sends_floats, self.sends_ints,
                inputs.stale, inputs._search_t, inputs.sym_until, inputs.two_hop_until,
                inputs.two_hop_list, inputs.topology_until, inputs.topology_list,
                inputs.bit_sets(), inputs.routes, inputs._search, reps.heard_until,
                self.groups, self.group_len, self.free_groups, self.ids, self.fan.ints,
                self.fan.floats, self.messages, self.message_sizes, self.queue,
                self.queue_len, self.flush_at, *self.timers, self.timer_state,
                protocol.uniforms, protocol.uniforms_left, self.packed,
                reps.selector_until, reps.topology_ansn, reps.topology_expiry,
                *reps.seen.arrays(), reps.latest, reps.asks, reps.last_symmetric,
                inputs.lists_used, protocol.msg_seqs, protocol.ansns,
                protocol.advertised, *self._scratch)

    def _row_arrays(self) -> tuple:
        return (*super()._row_arrays(), self.messages, self.message_sizes)

    def _set_row_arrays(self, arrays: tuple) -> None:
        super()._set_row_arrays(arrays[:-2])
        self.messages, self.message_sizes = arrays[-2:]

    def _make_room(self) -> None:
        super()._make_room()
        if self.packed.shape[1] - self.ints[_PACKED] < self._room_needed:
            self.packed = np.concatenate([self.packed, np.zeros_like(self.packed)], 1)
            self._kept = None

    def room(self) -> int:
        """As :func:`run` counts it: a broadcast's groups, a flush's packets."""
        return max(len(self.queue) + 1,
                   self.queue.shape[1] // self.protocol.params["max_messages_per_packet"]
                   + 2)
