"""An OLSR packet heard by its receivers, learnt compiled (RFC 3626 §3.4, §7.1.1, §8.2.1,
§8.4.1, §9.5): what each receiver's repositories
(:class:`~emulator.routing.olsr.state.Repositories`) take from each message, in the
packet's order, and which TCs each receiver relays.

A packet's messages come as rows of an int64 table (:func:`~.messages.message_rows`,
made once by the sender): a HELLO as
``(HELLO, its symmetric list, its heard-only list, its MPR list)``, a TC as ``(TC,
originator, sequence number, ANSN, selector list, TTL)``, lists numbered by
:meth:`~emulator.routing.olsr.routes.RouteInputs.list_number` and nodes as positions.

- A **HELLO** from ``v``: the link is heard until NEIGHB_HOLD_TIME from now, and
  symmetric as long if ``v`` lists the receiver; over a symmetric link, ``v``'s list is
  its two-hop entry (the routes are computed again unless it is the same but for the
  receiver itself) and ``v`` is a selector if it lists the receiver as an MPR; a link
  that stops being symmetric changes the routes.
- A **TC** not the receiver's own, heard over a symmetric link and not seen before
  (DUP_HOLD_TIME): its selectors replace the originator's topology entry unless it holds
  a greater ANSN (the routes are computed again if the set changed), and it is relayed
  if TTL > 1 and the sender chose the receiver as an MPR.

Most receptions of a run are of TCs already seen, mostly the latest message of their
originator that the receiver processed: each of those is turned away after a few reads,
without a look-up in the table of messages seen (:mod:`emulator.routing.seen`).

>>> import numpy as np
>>> from emulator.routing.olsr.messages import Hello, Tc
>>> from emulator.routing.olsr.state import Repositories
>>> reps = Repositories([0, 1, 2, 3])
>>> at = np.array([1, 2])                                      # receivers 1, 2's positions
>>> holds = {"neighb_hold_time": 6.0, "dup_hold_time": 30.0, "top_hold_time": 15.0}
>>> hello = ("HELLO", Hello(sym=(1,), asym=(), mprs=(1,)))    # 0 chose 1 as its MPR
>>> hear(reps, 1.0, 0, [1, 2], at, reps.rows([hello]), holds)
[]
>>> reps.symmetric(1, 1.0), reps.symmetric(2, 1.0)            # 0 lists 1, not 2
((0,), ())
>>> tc = ("TC", Tc(orig=3, seq=1, ansn=1, selectors=(0,), ttl=255, hops=1))
>>> hear(reps, 1.5, 0, [1, 2], at, reps.rows([tc, tc]), holds)  # 2: not symmetric; 1: once
[(1, 0)]
"""
from __future__ import annotations

import numpy as np
from numba import njit

from emulator.routing import bits as bitset
from emulator.routing.olsr.messages import HELLO
from emulator.routing.olsr.state import ABSENT
from emulator.routing.seen import first_time, is_latest, note_latest, seen_key


def hear(reps, t: float, sender: int, receivers, at: np.ndarray, rows: np.ndarray,
         params: dict) -> list:
    """``receivers`` (ids; ``at``: their positions) hear the packet whose messages are
    ``rows`` (:func:`~.messages.message_rows`) from ``sender`` at ``t``: what they learn
    goes into ``reps`` (a :class:`~emulator.routing.olsr.state.Repositories`;
    ``params``: the hold times); returns ``(receiver, message index)`` of each TC a
    receiver relays, in order."""
    inputs = reps.inputs
    most = len(at) * len(rows)   # a key and a TC to ask about a receiver and message
    reps.seen.reserve(t, most)
    if len(reps.asks) < most:
        reps.asks = np.empty((max(most, 2 * len(reps.asks)), 3), np.int64)
    relayed = receive(t, reps.pos[sender], at, rows,
                      params["neighb_hold_time"], params["dup_hold_time"],
                      params["top_hold_time"], reps.heard_until, inputs.sym_until,
                      inputs.two_hop_until, inputs.two_hop_list, reps.selector_until,
                      reps.topology_ansn, inputs.topology_until, inputs.topology_list,
                      reps.topology_expiry, inputs.stale, inputs.bit_sets(),
                      *reps.seen.arrays(), reps.latest, reps.asks)
    return [(receivers[a], k) for a, k in reps.asks[:relayed, :2].tolist()]


@njit(cache=True, _nrt=False)
def receive(t, sender, receivers, rows, neighb_hold, dup_hold, top_hold, heard_until,
            sym_until, two_hop_until, two_hop_list, selector_until, topology_ansn,
            topology_until, topology_list, topology_expiry, stale, bits, seen_keys,
            seen_untils, seen_count, latest, asks):
    """Every receiver (positions, in order) learns every message row from ``sender`` at
    ``t`` (see the module docstring); writes the ``(receiver index, row)`` pairs of the
    TCs relayed, in the order met, into ``asks``' first rows (as many rows as receivers
    times messages) and returns how many.

    Two passes: the first learns the HELLOs in order and lists the TCs that ``latest``
    does not turn away, each with whether it is relayed if new (the sender's selector
    entry as it stands at its turn: a later HELLO of the packet may change it); the
    second asks ``seen`` about those, in order, and learns the new ones. A TC changes
    only topology entries, which no HELLO reads, so this is the packet's order for
    every receiver. A loop whose body may look a key up in ``seen`` costs 60–80 ns a
    pass even when it does not (AODV's walk, measured), so the first has no such
    call."""
    n = heard_until.shape[1]
    count = 0
    for a in range(len(receivers)):
        u = receivers[a]
        for k in range(len(rows)):
            if rows[k, 0] == HELLO:
                _hello(t, u, sender, rows[k, 1], rows[k, 2], rows[k, 3], neighb_hold,
                       heard_until, sym_until, two_hop_until, two_hop_list,
                       selector_until, stale, bits)
                continue
            orig = rows[k, 1]
            if orig == u or sym_until[u, sender] <= t:
                continue   # its own, or not from a symmetric neighbour: not relayed
            if is_latest(latest, u, orig, rows[k, 2], t):
                continue   # a copy of the last message of orig that u processed
            asks[count, 0], asks[count, 1] = a, k
            asks[count, 2] = rows[k, 5] > 1 and selector_until[u, sender] > t
            count += 1
    found = 0
    for j in range(count):
        a, k, relayed = asks[j, 0], asks[j, 1], asks[j, 2]
        u, orig, seq = receivers[a], rows[k, 1], rows[k, 2]
        if not first_time(seen_keys, seen_untils, seen_count, seen_key(u, orig, seq, n), t,
                          t + dup_hold):
            continue   # a duplicate
        note_latest(latest, u, orig, seq, t + dup_hold)
        ansn, listed = rows[k, 3], rows[k, 4]
        held = topology_ansn[u, orig]
        if ansn >= held:   # none held (-1), or not newer than this one
            until = t + top_hold
            if held < 0 or not _same(topology_list[u, orig], listed, bits):
                stale[u] = True
            topology_ansn[u, orig] = ansn
            topology_until[u, orig] = until
            topology_list[u, orig] = listed
            if until < topology_expiry[u]:
                topology_expiry[u] = until
        if relayed:   # written over a row read already (found <= j)
            asks[found, 0], asks[found, 1] = a, k
            found += 1
    return found


@njit(cache=True, inline="always")
def _hello(t, u, v, sym, asym, mprs, neighb_hold, heard_until, sym_until, two_hop_until,
           two_hop_list, selector_until, stale, bits):
    """``u`` hears the HELLO of ``v`` listing ``sym``, ``asym`` and ``mprs``."""
    hold = t + neighb_hold
    if heard_until[u, v] < 0:   # a new link: neither heard nor symmetric yet
        sym_until[u, v] = 0.0
    was_symmetric = sym_until[u, v] > t
    heard_until[u, v] = hold
    if bitset.has(bits[sym], u) or bitset.has(bits[asym], u):
        sym_until[u, v] = hold   # v hears u: the link is symmetric
    if sym_until[u, v] > t:
        held, old = two_hop_until[u, v] >= 0, two_hop_list[u, v]
        two_hop_until[u, v], two_hop_list[u, v] = hold, sym
        # changed: a two-hop neighbour other than u came or went
        if not held or not was_symmetric or not _same(old, sym, bits, u):
            stale[u] = True
        selector_until[u, v] = hold if bitset.has(bits[mprs], u) else ABSENT
    elif was_symmetric:
        stale[u] = True


@njit(cache=True, inline="always")
def _same(a, b, bits, but=-1):
    """Whether lists ``a`` and ``b`` hold the same nodes, but for the node ``but`` (-1:
    none), which may be in one and not the other."""
    if a == b:
        return True
    for w in range(bits.shape[1]):
        differ = bits[a, w] ^ bits[b, w]
        if w == but >> 6:
            differ &= ~(np.uint64(1) << np.uint64(but & 63))
        if differ:
            return False
    return True
