"""OLSR's data hops in a compiled loop beside the host's calendar (the links medium,
without batteries): a data packet or a notice forwarded hop by hop on the next hop its
node's table gives, without coming back to Python between hops.

Data hops are most of a busy OLSR run's events: at 200 mobile nodes and 10^5 messages,
282 k forwarding decisions against 48 k timers and 33 k packets of control heard; at
10^6 messages ten times as many decisions and the same control. Each one, in the host's
Python, cost a few microseconds around the table's compiled search. Here
(:class:`~emulator.routing.loop.CompiledLoop`, whose rows, calendar, frames and staging
are shared with AODV's loop) a packet at a node is, as the host's Python would have it:

- sent on to the next hop of its node's table (:meth:`~.routes.RouteInputs.route`'s
  rule: the table searched again, only as deep as asked, at the first query after a
  change), crossing its link by the unicast frame's rules, then ready at the next node
  or staged as delivered;
- dropped where its node's table has no route (``no_route``; a relay sends the
  packet's source a notice, routed from there like data);
- dropped where its next hop is out of range (the MAC gives up: ``link_break``), the
  link broken first with ``link_layer_feedback`` (the protocol's ``on_link_failure``:
  the link set's entry expired, the table searched again);
- Python's otherwise (:data:`~emulator.routing.loop.DATA_IN_PYTHON`: its node down,
  its TTL spent, back at its source; a MAC's failure learnt at the arrival; a wait too
  long for its link).

HELLOs, TCs and their packets stay the host's Python, so the loop returns whenever
one of them comes first: about 60 k returns at 10^5 messages, whatever the traffic.
"""
from __future__ import annotations

from numba import njit

from emulator.hop_kernel import HEAP_SIZE, _calendar_pop
from emulator.routing.loop import (
    ASK, BETWEEN, CURRENT_NODE, CURRENT_ROW, CURRENT_SEQ, CURRENT_T, DATA_IN_PYTHON, DRAWN,
    DST, IDLE, LINK_BREAK, MAC_NOW, MAX_WAIT, MSG_ID, NEED_FRAME_ALIVE,
    NEED_FRAME_UNIFORMS, NEED_READY_VIEW, NEED_ROOM, NO_ROUTE, ORIG, PHASE, RECEIVER,
    RV_END, RV_START, SENDER, SENT, TYPE, CompiledLoop, after_unicast, before, drop_here, leaves, next_event,
    pythons, release, send_unicast, short_of_room, take_send)
from emulator.routing.olsr.routes import UNKNOWN, _route

#: ``consts``' own field, after the loop's: whether a MAC's failure breaks the link.
_LINK_LAYER_FEEDBACK = 4


@njit(cache=True, _nrt=False)
def run(stop_t, stop_rank, stop_seq, until, ready_rank, cal_time, cal_seq, cal_msg,
        cal_node, ints, floats, times, consts, packets, refs, free_rows, units, sent_at,
        first, last, bandwidths, costs, alive_ready, head, attrs, link_costs, alive,
        link_times, pool, reorder, out_floats, out_ints, arrived_at, arrived_ids,
        flow_started, first_flows, first_waits, drops_at, drop_ids, sends_floats,
        sends_ints, stale, search_t, sym_until, two_hop_until, two_hop_list,
        topology_until, topology_list, lists, routes, search, heard_until):
    """Take this calendar's events (data packets and notices at a node, the host's
    sends) while they come before the host's next one ``(stop_t, stop_rank,
    stop_seq)`` and before ``until``; returns why it stopped (the module docstring;
    :data:`~emulator.routing.loop.IDLE`: nothing more before the host's). The tables'
    arrays are :class:`~.routes.RouteInputs`' (``lists``: its bit sets), read and
    searched as its ``route`` does; ``heard_until``: the link sets'
    (:class:`~.state.Repositories`)."""
    cal = (cal_time, cal_seq, cal_msg, cal_node)
    while True:
        if ints[PHASE] != BETWEEN:   # a frame whose arrival's epoch Python looked up
            ints[PHASE] = BETWEEN
            code = after_unicast(ints, floats, consts, packets, refs, free_rows, units,
                                 out_floats, out_ints, link_costs, alive, arrived_at,
                                 arrived_ids, cal)
            if code == NEED_FRAME_ALIVE:
                ints[PHASE] = SENT
            if code != IDLE:
                return code
        sent, t, seq = next_event(ints, cal_time, cal_seq, sends_floats, sends_ints)
        if not sent and ints[HEAP_SIZE] == 0:
            return IDLE
        if not (t < until and before(t, seq, stop_t, stop_rank, stop_seq, ready_rank)):
            return IDLE
        # a row and an event for a notice (numba checks no bounds); a frame's uniforms
        if short_of_room(ints, 2, cal_time, out_floats, arrived_ids, first_waits,
                         drops_at):
            return NEED_ROOM
        if not floats[RV_START] <= t < floats[RV_END]:
            floats[ASK] = t
            return NEED_READY_VIEW
        if len(pool) - ints[DRAWN] < 2:
            return NEED_FRAME_UNIFORMS
        if sent:
            row, u = take_send(t, seq, ints, floats, sends_floats, sends_ints, refs,
                               free_rows, packets, units, sent_at)
        else:
            row, u = cal_msg[0], cal_node[0]
            _calendar_pop(cal, ints)
            ints[CURRENT_ROW], ints[CURRENT_NODE], floats[CURRENT_T] = row, u, t
            ints[CURRENT_SEQ] = seq
        if u != packets[row, SENDER]:   # else Python chose its next hop: sent at once
            if pythons(ints, consts, packets, refs, free_rows, alive_ready, row, u):
                return DATA_IN_PYTHON
            nxt = next_hop(t, u, packets[row, DST], stale, search_t, sym_until,
                           two_hop_until, two_hop_list, topology_until, topology_list,
                           lists, routes, search)
            if nxt < 0:
                release(refs, free_rows, ints, row)   # read below before a notice's
                drop_here(t, NO_ROUTE, packets[row, TYPE], packets[row, MSG_ID],
                          packets[row, ORIG], u, alive_ready, ints, consts, packets, refs,
                          free_rows, units, sent_at, drops_at, drop_ids, cal)
                continue
            leaves(t, row, u, nxt, ints, packets, sent_at, flow_started, first_flows,
                   first_waits)
        code = send_unicast(ints, floats, times[MAX_WAIT], consts, packets, refs,
                            free_rows, units, first, last, head, attrs, link_costs, alive,
                            link_times, pool, reorder, out_floats, out_ints, arrived_at,
                            arrived_ids, cal)
        if code == MAC_NOW:   # the row was let go; nothing has taken it since
            v = packets[row, RECEIVER]
            if consts[_LINK_LAYER_FEEDBACK] and heard_until[u, v] >= 0:
                # the protocol's on_link_failure (Repositories.break_link)
                heard_until[u, v] = sym_until[u, v] = t
                stale[u] = True
            drop_here(t, LINK_BREAK, packets[row, TYPE], packets[row, MSG_ID],
                      packets[row, ORIG], u, alive_ready, ints, consts, packets, refs,
                      free_rows, units, sent_at, drops_at, drop_ids, cal)
            continue
        if code != IDLE:
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


class DataHops(CompiledLoop):
    """The data packets and notices of an OLSR run on the links medium, hop by hop,
    beside the host's calendar (the module docstring); the protocol's tables are read
    and searched in place."""

    TYPES = ("NOTICE",)
    kernel = staticmethod(run)

    def __init__(self, host, protocol):
        super().__init__(host, protocol,
                         consts=(int(protocol.params["link_layer_feedback"]),))
        self._inputs, self._heard_until = protocol._inputs, protocol._reps.heard_until

    def _kept_too(self) -> tuple:
        return (self._inputs.bit_sets(),)   # made anew when a list more needs room

    def _gather(self) -> tuple:
        host, inputs = self.host, self._inputs
        return (*self.calendar, self.ints, self.floats, self.times, self.consts,
                self.packets, self.refs, self.free_rows, self.units, self.sent_at,
                *self._ready, host._alive_array(), host._link_times, host._pool,
                host.reorder, self.out_floats, self.out_ints, self.arrived_at,
                self.arrived_ids, host.flow_started, self.first_flows, self.first_waits,
                self.drops_at, self.drop_ids, self.sends_floats, self.sends_ints,
                inputs.stale, inputs._search_t, inputs.sym_until, inputs.two_hop_until,
                inputs.two_hop_list, inputs.topology_until, inputs.topology_list,
                inputs.bit_sets(), inputs.routes, inputs._search, self._heard_until)
