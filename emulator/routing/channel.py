"""The shared channel of a routed run: which waiting transmissions start, compiled.

On the shared medium a transmission waits for its channel. At each instant, once its
events are processed, every waiting transmission, in the order they became ready,
starts unless a transmission in progress has an endpoint in its zone, or one of its
endpoints lies in the zone of an earlier one still waiting; one that may start after
waiting longer than ``max_wait`` is lost instead, taking no airtime. A transmission's
endpoints are its sender and its receiver (a broadcast's: its sender and every
neighbour that hears it); its zone, the union of its endpoints' zones (a node's zone:
itself and its neighbours, or the nodes within the interference radius). This is the
rule of the oracle's compiled hop loop (:func:`emulator.hop_kernel._grant`).

A routed run's calendar holds Python objects (packets, timers), so its hop loop is
Python (:class:`emulator.routing.host.RoutedTransport`); the grant is this module's:
the waiting transmissions as rows of arrays (when each became ready, its sender, its
zone and endpoints as bit sets of node positions, :mod:`.bits`) beside their hops, and
one compiled :func:`scan` per instant that lists the transmissions to start or lose, in
ready order, for the host to start. A congested channel's queue is thousands long and
every end of a transmission has it judged again: a row costs the scan 1–2 ns, where the
Python loop it replaced spent about 0.5 µs a transmission judged; a short queue pays
for the call instead (a transmission queued, granted and ended: 6.4 µs against about
3 µs; ``docs/NOTES.md``, "A routed run's shared channel compiled"). Two things keep a
scan short:

- until a transmission ends, the ones a scan held back stay held (those in progress only
  grow, and the earlier ones that held them still wait), so the next scan judges only
  those after them, with the zones the held ones cover kept in ``covered``;
- a full scan stops once every node is covered, or once every node that sends one of
  the transmissions not yet judged is covered (a sender is an endpoint of its own):
  none after can start. The next scan goes on from there.

Taken rows are marked (sender -1), and the arrays and the list of hops are compacted
when half their rows are taken: taking a row out of a long queue moved every row after
it (a flood on a saturated channel keeps thousands waiting behind the few that start).
The oldest rows are taken first, mostly: a scan starts at the first row not taken.

>>> import numpy as np
>>> channel = SharedChannel(3)
>>> one, two = np.array([0b011], np.uint64), np.array([0b110], np.uint64)
>>> channel.add(0.0, 1, "0 -> 1", 0, one, one)   # zones: the endpoints' neighbours
>>> channel.add(0.0, 2, "1 -> 2", 1, two, two)   # shares node 1 with the first
>>> taken = channel.grant(0.0, np.inf)
>>> [(item[2], slot) for item, slot in taken]     # started, in progress in slot 0
[('0 -> 1', 0)]
>>> len(channel), channel.grant(0.5, np.inf)      # nothing ended: still held
(1, [])
>>> channel.end(0)                                # the first ends at 1.0
>>> [(item[2], slot) for item, slot in channel.grant(1.0, 0.5)]
[('1 -> 2', -1)]

The second had waited 1.0, longer than 0.5: it is lost (slot -1), not started.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from emulator.routing import bits

#: The cells of a channel's ``state``: rows in use (taken ones too), rows taken, the
#: rows before it known to be held until a transmission ends, and the first row not
#: taken.
ROWS, TAKEN, HELD, FRONT = 0, 1, 2, 3


class SharedChannel:
    """The transmissions waiting for a routed run's shared channel (see the module
    docstring), and those in progress, over ``nodes`` node positions.

    A transmission started holds a slot until it ends: its endpoints in ``active``'s
    row, ``live`` set. Transmissions in progress have no endpoint in common (one starts
    only if its zone, which holds its own endpoints, has none of theirs), so ``nodes``
    slots are enough; ``busy`` is their union, made again from the live slots when a
    scan judges every waiting transmission again (after an end)."""

    def __init__(self, nodes: int, capacity: int = 256):
        size = bits.words(nodes)
        #: ``(ready time, number, hop)`` by row; None once taken.
        self.items: list = []
        self.ready = np.empty(capacity)
        self.sender = np.empty(capacity, np.int64)
        self.zone = np.zeros((capacity, size), np.uint64)
        self.ends = np.zeros((capacity, size), np.uint64)
        self.busy = np.zeros(size, np.uint64)
        self.active = np.zeros((nodes, size), np.uint64)
        self.live = np.zeros(nodes, np.bool_)
        self.covered = np.zeros(size, np.uint64)
        self.everyone = np.zeros(size, np.uint64)
        bits.fill(self.everyone, np.arange(nodes))
        self.from_count = np.zeros(nodes, np.int64)   # rows waiting, by sender
        # what scan works in (it allocates nothing: a compiled call with numba's
        # reference counting costs twice as much to start)
        self.left = np.zeros(nodes, np.int64)
        self.senders = np.zeros(size, np.uint64)
        self.state = np.zeros(4, np.int64)
        self.taken = np.empty((2, capacity), np.int64)
        self._count = 0   # waiting (asked after every instant: a Python int)
        self._added = self._ended = False   # since the last grant

    def __len__(self) -> int:
        return self._count

    def add(self, ready: float, number: int, hop, sender: int, zone: np.ndarray,
            ends: np.ndarray) -> None:
        """Queue the transmission ``hop`` (numbered ``number``, ready at ``ready``) from
        the node at position ``sender``, with its zone and endpoints as bit sets."""
        i = int(self.state[ROWS])
        if i == len(self.ready):
            self._grow()
        self.items.append((ready, number, hop))
        self.ready[i], self.sender[i] = ready, sender
        self.zone[i], self.ends[i] = zone, ends
        self.from_count[sender] += 1
        self.state[ROWS] = i + 1
        self._count += 1
        self._added = True

    def grant(self, t: float, max_wait: float, rezoned: bool = False) -> list:
        """The transmissions to take at ``t``, in ready order: ``(item, slot)``, to start
        in ``slot`` (their endpoints are busy until :meth:`end` frees it), or with slot
        -1 to lose (they waited longer than ``max_wait``). All are judged again when a
        transmission has ended since the last grant, or with ``rezoned`` (their zones
        have changed); else those after the ones held then."""
        full = rezoned or self._ended
        if not (full or self._added):   # those judged held are held still: no scan
            return []
        self._added = self._ended = False
        count = scan(t, max_wait, full, self.state, self.ready, self.sender, self.zone,
                     self.ends, self.busy, self.active, self.live, self.covered,
                     self.from_count, self.everyone, self.taken, self.left,
                     self.senders)
        if not count:
            return []
        self._count -= count
        items, taken = self.items, []
        rows, slots = self.taken[:, :count].tolist()
        for row, slot in zip(rows, slots):
            taken.append((items[row], slot))
            items[row] = None
        if self.state[ROWS] < len(items):   # the scan compacted the rows
            self.items = [item for item in items if item is not None]
        return taken

    def end(self, slot: int) -> None:
        """The transmission in progress in ``slot`` ends: its endpoints are free (for
        the next scan, which judges every waiting transmission again)."""
        self.live[slot] = False
        self._ended = True

    def rezone(self, zone_of) -> None:
        """Give every waiting transmission the zone ``zone_of(item)`` (zones by an
        interference radius follow the epoch of the grant)."""
        for row, item in enumerate(self.items):
            if item is not None:
                self.zone[row] = zone_of(item)

    def _grow(self) -> None:
        size = 2 * len(self.ready)
        self.ready = np.resize(self.ready, size)
        self.sender = np.resize(self.sender, size)
        self.zone = np.concatenate([self.zone, np.zeros_like(self.zone)])
        self.ends = np.concatenate([self.ends, np.zeros_like(self.ends)])
        self.taken = np.empty((2, size), np.int64)


@njit(cache=True, _nrt=False)
def scan(t, max_wait, full, state, ready, sender, zone, ends, busy, active, live, covered,
         from_count, everyone, taken, left, senders):
    """Judge the waiting transmissions at ``t`` (all of them with ``full``, else those
    after the ones known held): write ``(row, its slot / -1: lose)`` of each one taken
    into ``taken``'s columns, in ready order, put the endpoints of those started in a
    free slot of ``active`` (and into ``busy``), and return how many. Compacts the rows
    once half of them are taken. ``left`` and ``senders``: room to work in (by node,
    and a bit set)."""
    rows, gone, front = state[ROWS], state[TAKEN], state[FRONT]
    size = busy.shape[0]
    if full:   # transmissions ended since the last scan: busy is what is still live
        _rebuild_busy(busy, active, live)
    i = 0 if full else state[HELD]
    if i == 0:
        _clear(covered)
    whole = i == 0
    if i < front:   # the rows before it are all taken
        i = front
    # a full scan of a long queue: the senders of the transmissions not judged yet, and
    # how many each (a short one is judged whole sooner than these are counted)
    counting = whole and rows - gone >= 32
    _clear(senders)
    if counting:
        for u in range(len(from_count)):
            left[u] = from_count[u]
            if left[u]:
                bits.add(senders, u)
    count = 0
    while i < rows:
        u = sender[i]
        if u < 0:   # taken at an earlier scan
            i += 1
            continue
        if counting:
            left[u] -= 1
            if left[u] == 0:
                bits.remove(senders, u)
        held = False
        for w in range(size):
            if covered[w] & ends[i, w] or busy[w] & zone[i, w]:
                held = True
                break
        i += 1
        if held:
            everyone_covered, senders_covered = True, True
            for w in range(size):
                covered[w] |= zone[i - 1, w]
                if covered[w] & everyone[w] != everyone[w]:
                    everyone_covered = False
                if senders[w] & ~covered[w]:
                    senders_covered = False
            if everyone_covered or (counting and senders_covered):
                break   # none after this one can start
            continue
        taken[0, count] = i - 1
        if t - ready[i - 1] > max_wait:
            taken[1, count] = -1
        else:
            slot = 0
            while live[slot]:
                slot += 1
            live[slot] = True
            taken[1, count] = slot
            for w in range(size):
                active[slot, w] = ends[i - 1, w]
                busy[w] |= ends[i - 1, w]
        count += 1
        from_count[u] -= 1
        sender[i - 1] = -1
        gone += 1
        if i - 1 == front:
            while front < rows and sender[front] < 0:
                front += 1
    held_rows = i
    if 2 * gone > rows:
        rows, held_rows = _compact(rows, i, ready, sender, zone, ends)
        gone, front = 0, 0
    state[ROWS], state[TAKEN], state[HELD], state[FRONT] = rows, gone, held_rows, front
    return count


@njit(cache=True, inline="always")
def _rebuild_busy(busy, active, live):
    """``busy``: the union of the endpoints of the transmissions in live slots."""
    _clear(busy)
    for slot in range(len(live)):
        if live[slot]:
            for w in range(busy.shape[0]):
                busy[w] |= active[slot, w]


@njit(cache=True, inline="always")
def _clear(words):
    """Every word of ``words`` 0."""
    for w in range(len(words)):
        words[w] = 0


@njit(cache=True, inline="always")
def _compact(rows, judged, ready, sender, zone, ends):
    """Move the first ``rows`` rows not taken (sender -1) to the front, in order:
    ``(how many there are, how many of them were among the first judged)``."""
    kept, held = 0, 0
    for j in range(rows):
        if sender[j] >= 0:
            ready[kept], sender[kept] = ready[j], sender[j]
            for w in range(zone.shape[1]):   # a slice copy needs numba's runtime
                zone[kept, w] = zone[j, w]
                ends[kept, w] = ends[j, w]
            kept += 1
            if j < judged:
                held += 1
    return kept, held
