"""A routed run's transmissions, compiled: a broadcast heard by its sender's neighbours
(:func:`hear`), and a unicast hop (:func:`unicast`: a data packet, a notice or a control
packet to one neighbour), by the same rules for each frame on a link (:func:`cross`).

A control packet broadcast by ``u`` is one transmission that every neighbour hears
with its own link's delay, jitter and loss
(:class:`~emulator.routing.host.RoutedTransport`). Floods make these most of a routed
run's events (a RREQ or a TC is heard by every neighbour of every node that sends it:
20 a broadcast at 200 nodes), so the walk over the receivers runs here, over arrays,
and does exactly what the host's Python loop did, draw for draw:

- on the links medium the transmission starts when every link of the sender is free
  (it must reach them all), unless that is more than ``max_wait`` after it was ready
  (:data:`EXPIRED`: nothing is sent); it ends after its bytes at the least bandwidth;
- a receiver's arrival is the end of the transmission plus its link's delay and a
  jitter draw (when the link has jitter), no earlier than the last arrival on that
  link unless the run reorders;
- then a loss draw (when the link has loss or bit errors) may lose it;
- then it is heard if it is up at its arrival (``alive`` holds for ``[a_start,
  a_end)``: for an arrival outside, the kernel stops and the host hands it who is up
  in the arrival's epoch, :data:`NEED_VIEW`);
- the receivers that hear it at one time, in link order, are one group (one calendar
  entry of the host's).

Draws come from the host's pool of uniforms in its order; when fewer than the two a
receiver may take are left, the kernel stops (:data:`NEED_UNIFORMS`) and the host puts
a new block after the ones not taken (the stream's order is kept).

Nodes are *global positions* (those of the protocol's nodes); a view's links are
arrays by directed link, a sender's ``first`` to ``last`` - 1. A compiled call from
Python costs about 0.05 us an array argument and as much a number before it starts
(numba checks each one's type; twice as much an array with numba's reference counting,
which these kernels are compiled without), so what a broadcast needs comes in a few
arrays: ``attrs`` stacks the links' :data:`ATTRS` (delay, jitter, loss, ber and
bandwidth); ``links`` the last arrival and the time free of every link ``(u, v)``;
:class:`Fanout` what the walk writes.

>>> import numpy as np
>>> head, ids = np.array([1, 2, 3]), np.array([10, 11, 12, 13])
>>> attrs = np.zeros((4, 3)); attrs[0] = [0.5, 0.5, 0.25]     # delays; no jitter, loss
>>> links = np.full((4, 4, 2), -np.inf)
>>> pool, alive = np.random.default_rng(1).random(8), np.ones(4, np.bool_)
>>> out = Fanout(4)
>>> hear(1.0, np.inf, 0.0, 0, 0, 3, 40, 0, False, True, False, 0.0, 10.0, head, attrs,
...      links, pool, alive, ids, out.ints, out.floats)  # no draw, loss or dead; 2 groups
(0, 0, 0, 0, 2, 3, 1.5, 1.0, 1.0)
>>> out.groups()                     # in link order: 11 and 12 together, then 13 (sooner)
[(1.5, [11, 12]), (1.25, [13])]
>>> links[0, 1:, 1].tolist()         # the sender's links are busy until the end
[1.0, 1.0, 1.0]
>>> links[0, 3, 1] = 1.75            # one link busy: the next broadcast waits for it
>>> hear(1.0, np.inf, 80.0, 0, 0, 3, 40, 0, False, True, False, 0.0, 10.0, head, attrs,
...      links, pool, alive, ids, out.ints, out.floats)[-2:]  # 40 B at 80 B/s
(1.75, 2.25)
>>> hear(1.0, 0.5, 80.0, 0, 0, 3, 40, 0, False, True, False, 0.0, 10.0, head, attrs,
...      links, pool, alive, ids, out.ints, out.floats)[0] == EXPIRED   # waited 1.25
True
"""
from __future__ import annotations

import numpy as np
from numba import njit

#: What :func:`hear` returns first: every receiver done; who is up at
#: ``Fanout.ask_time`` wanted; more uniforms wanted; not sent (it would have waited
#: longer than ``max_wait`` for its links).
DONE, NEED_VIEW, NEED_UNIFORMS, EXPIRED = 0, 1, 2, 3

# a receiver's fate
_HEARD, _LOST, _DEAD = 0, 1, 2

# Fanout.ints' rows: each receiver's node and fate; the ids heard, group by group; where
# each group starts among them; the walk's state
_NODE, _FATE, _HEARD_IDS, _GROUP_START, _STATE = range(5)
# Fanout.floats' rows: each receiver's arrival; each group's; the walk's times (the
# arrival asked about, the transmission's start and end)
_TIME, _GROUP_TIME, _TIMES = range(3)
_ASK, _START, _DONE = range(3)
# the state's fields: the next link, uniforms taken, receivers written, whether the
# last written waits for who is up, then (once DONE) groups, losses, dead receivers
_NEXT, _TAKEN, _WRITTEN, _PENDING, _GROUPS, _LOST_COUNT, _DEAD_COUNT = range(7)
#: The link arrays' rows (``hear``'s ``attrs``): delay, jitter, loss, ber, bandwidth.
ATTRS = ("delay", "jitter", "loss", "ber", "bandwidth")
_BANDWIDTH = 4


class Fanout:
    """What :func:`hear` writes for a broadcast of up to ``n`` receivers, one at a time:
    ``ints`` and ``floats``, read through the methods."""

    def __init__(self, n: int):
        width = max(n + 1, 8)
        self.ints = np.zeros((5, width), np.int64)
        self.floats = np.zeros((3, width))
        self.heard_ids = self.ints[_HEARD_IDS]   # a view: sliced for every broadcast

    def taken(self) -> int:
        """The uniforms of the pool used so far."""
        return int(self.ints[_STATE, _TAKEN])

    def restart_pool(self) -> None:
        """The pool was refilled with the uniforms not taken first."""
        self.ints[_STATE, _TAKEN] = 0

    def ask_time(self) -> float:
        """The arrival whose epoch :data:`NEED_VIEW` asks about."""
        return float(self.floats[_TIMES, _ASK])

    def groups(self) -> list[tuple[float, list]]:
        """``(arrival, ids)`` of each group heard, in order."""
        count = int(self.ints[_STATE, _GROUPS])
        starts = self.ints[_GROUP_START, :count + 1].tolist()
        heard = self.ints[_HEARD_IDS, :starts[-1]].tolist()
        return [(time, heard[starts[g]:starts[g + 1]])
                for g, time in enumerate(self.floats[_GROUP_TIME, :count].tolist())]


@njit(cache=True, _nrt=False)
def hear(ready, max_wait, bandwidth, sender, first, last, size_bytes, taken, resume,
         set_free, reorder, a_start, a_end, head, attrs, links, pool, alive, ids, ints,
         floats):
    """Send the broadcast of ``size_bytes`` bytes by ``sender``, ready at ``ready``, on
    its links ``first`` to ``last`` - 1 (``head``: their receivers, ``attrs``: their
    :data:`ATTRS`; ``bandwidth``: the least of theirs, 0 for none), and walk its
    receivers, as the module docstring says, from uniform ``taken`` of ``pool`` on.
    Returns ``(DONE, uniforms used, lost on the air, dead at the arrival, groups,
    receivers heard, the first group's arrival, the start, the end)``, :data:`EXPIRED`
    (nothing sent), or what it needs to go on first (the rest 0): call again with
    ``resume`` (``first`` and ``taken`` are then read from the state). Most broadcasts
    are one group: its ids are ``Fanout.heard_ids[:receivers heard]``, read without
    another numpy call. ``links``: per link ``(sender,
    receiver)``, its last arrival (``[..., 0]``) and, with ``set_free`` (the links
    medium: else the shared channel has granted it at ``ready``), when it is free
    (``[..., 1]``: the start waits for every one, and they are busy until the end).
    ``ids``: node ids by global position, what the groups hold; ``ints``/``floats``:
    a :class:`Fanout`'s."""
    state, times = ints[_STATE], floats[_TIMES]
    if resume:
        i, taken, written = state[_NEXT], state[_TAKEN], state[_WRITTEN]
    else:
        i, written = first, 0
        state[_PENDING] = 0
        start = ready
        if set_free:
            for k in range(first, last):
                if links[sender, head[k], 1] > start:
                    start = links[sender, head[k], 1]
            if start - ready > max_wait:   # refused as it comes (Transport.max_wait)
                return EXPIRED, 0, 0, 0, 0, 0, 0.0, 0.0, 0.0
        times[_START] = start
        times[_DONE] = start + (size_bytes / bandwidth if bandwidth > 0 else 0.0)
    done = times[_DONE]
    if state[_PENDING]:   # the receiver written last waited for who is up in its epoch
        state[_PENDING] = 0
        ints[_FATE, written - 1] = _HEARD if alive[ints[_NODE, written - 1]] else _DEAD
    # a float power, as Python takes it: numba's power of an int rounds otherwise
    bits = float(8 * size_bytes)
    while i < last:
        if len(pool) - taken < 2:
            state[_NEXT], state[_TAKEN], state[_WRITTEN] = i, taken, written
            return NEED_UNIFORMS, 0, 0, 0, 0, 0, 0.0, 0.0, 0.0
        v = head[i]
        arrive, lost, taken = cross(done, sender, v, i, bits, set_free, reorder, attrs,
                                    links, pool, taken)
        ints[_NODE, written], floats[_TIME, written] = v, arrive
        i += 1
        written += 1
        if lost:
            ints[_FATE, written - 1] = _LOST
            continue
        if not a_start <= arrive < a_end:
            state[_NEXT], state[_TAKEN], state[_WRITTEN] = i, taken, written
            state[_PENDING] = 1
            times[_ASK] = arrive
            return NEED_VIEW, 0, 0, 0, 0, 0, 0.0, 0.0, 0.0
        ints[_FATE, written - 1] = _HEARD if alive[v] else _DEAD
    state[_NEXT], state[_TAKEN], state[_WRITTEN] = i, taken, written
    groups, heard, lost, dead = _group(ids, ints, floats, written)
    return (DONE, taken, lost, dead, groups, heard, floats[_GROUP_TIME, 0], times[_START],
            done)


@njit(cache=True, _nrt=False)
def unicast(ready, max_wait, set_free, reorder, sender, receiver, k, size_bytes, attrs,
            links, pool, taken):
    """Send a frame of ``size_bytes`` bytes over link ``k`` (``attrs``' column) from
    ``sender`` to ``receiver`` (global positions), ready at ``ready``: on the links
    medium (``set_free``) when the link is free, unless that is more than ``max_wait``
    later (:data:`EXPIRED`), else (the shared channel granted it) at ``ready``.
    Returns ``(DONE, start, end, arrival, lost, uniforms used)``, from uniform
    ``taken`` of ``pool`` on (two at most: the caller leaves that many).

    >>> import numpy as np
    >>> attrs = np.array([[0.5], [0.0], [0.0], [0.0], [80.0]])   # no jitter, no loss
    >>> links = np.full((2, 2, 2), -np.inf); links[0, 1, 1] = 2.0   # busy until 2
    >>> unicast(1.0, np.inf, True, False, 0, 1, 0, 40, attrs, links, np.zeros(2), 0)
    (0, 2.0, 2.5, 3.0, False, 0)
    >>> links[0, 1].tolist()            # its last arrival, and free again at the end
    [3.0, 2.5]
    >>> unicast(1.0, 1.0, True, False, 0, 1, 0, 40, attrs, links, np.zeros(2), 0)[0]
    3
    """
    start = ready
    if set_free:
        if links[sender, receiver, 1] > start:
            start = links[sender, receiver, 1]
        if start - ready > max_wait:   # refused as it comes (Transport.max_wait)
            return EXPIRED, start, start, start, False, taken
    bandwidth = attrs[_BANDWIDTH, k]
    done = start + (size_bytes / bandwidth if bandwidth > 0 else 0.0)
    arrive, lost, taken = cross(done, sender, receiver, k, float(8 * size_bytes),
                                set_free, reorder, attrs, links, pool, taken)
    return DONE, start, done, arrive, lost, taken


@njit(cache=True, inline="always")
def cross(done, sender, receiver, k, bits, set_free, reorder, attrs, links, pool, taken):
    """A frame of ``bits`` bits over link ``k`` from ``sender`` to ``receiver``, sent
    until ``done``: its arrival (the link's delay, a jitter draw if it has jitter, no
    earlier than the link's last arrival unless the run reorders) and whether it is
    lost (a draw, if the link has loss or bit errors); the link busy until ``done``
    with ``set_free``. Returns ``(arrival, lost, uniforms taken)``. ``bits`` is a float:
    numba's power of an int rounds otherwise, where Python's does not."""
    if set_free:
        links[sender, receiver, 1] = done
    loss = attrs[2, k]
    if attrs[3, k] > 0:   # every bit must arrive (topologies.radio); 0: unit disk
        loss = 1.0 - (1.0 - loss) * (1.0 - attrs[3, k]) ** bits
    arrive = done + attrs[0, k]
    if attrs[1, k] > 0:
        arrive += pool[taken] * attrs[1, k]
        taken += 1
    else:
        arrive += 0.0
    if not reorder:   # frames leave a link in order
        if arrive < links[sender, receiver, 0]:
            arrive = links[sender, receiver, 0]
        links[sender, receiver, 0] = arrive
    lost = False
    if loss > 0:
        taken += 1
        lost = pool[taken - 1] < loss
    return arrive, lost, taken


@njit(cache=True, inline="always")
def _group(ids, ints, floats, written):
    """The receivers heard, in groups of consecutive ones (those lost or dead between
    them aside) that hear at one time; the losses and the dead counted."""
    groups, heard, lost, dead = 0, 0, 0, 0
    at = np.nan
    for j in range(written):
        fate = ints[_FATE, j]
        if fate == _LOST:
            lost += 1
        elif fate == _DEAD:
            dead += 1
        else:
            if groups == 0 or floats[_TIME, j] != at:
                at = floats[_TIME, j]
                ints[_GROUP_START, groups], floats[_GROUP_TIME, groups] = heard, at
                groups += 1
            ints[_HEARD_IDS, heard] = ids[ints[_NODE, j]]
            heard += 1
    ints[_GROUP_START, groups] = heard
    state = ints[_STATE]
    state[_GROUPS], state[_LOST_COUNT], state[_DEAD_COUNT] = groups, lost, dead
    return groups, heard, lost, dead
