"""What the OLSR nodes have learnt (RFC 3626 §4), as arrays over node positions: link
sets, two-hop neighbours, MPR selectors and topology sets, each entry with the time it
expires.

One ``n x n`` array per field, row ``i`` for the node at position ``i`` (positions in id
order), column for the other node, ``ABSENT`` (-1) where a node holds no entry. An
entry is read only while valid (``until > t``); :func:`purge` drops the expired ones at
a node's HELLO ticks, as the RFC's repositories are purged, and says whether the
routing table must be computed again. The arrays a table is computed from (symmetric
links, two-hop sets, topology sets, and the lists the HELLOs and TCs carried) are those
of :class:`~emulator.routing.olsr.routes.RouteInputs`, kept once. Memory: seven
``n x n`` arrays, 56 MB at 1,000 nodes, and the messages seen
(:attr:`Repositories.seen`).

Packets are learnt compiled (:mod:`.receive`): a run of ``bench_scale`` hears tens of
thousands of packets of up to 64 messages, each by a dozen receivers.

>>> reps = Repositories([3, 5, 9])
>>> i, j = reps.pos[3], reps.pos[5]
>>> reps.heard_until[i, j] = reps.inputs.sym_until[i, j] = 4.0     # symmetric until 4
>>> reps.symmetric(3, 3.0), reps.symmetric(3, 4.0)
((5,), ())
>>> reps.purge(3, 3.0), reps.purge(3, 3.5)      # the symmetric link came, then stayed
(True, False)
>>> reps.purge(3, 4.0), float(reps.heard_until[i, j])      # expired: gone
(True, -1.0)
"""
from __future__ import annotations

import numpy as np
from numba import njit

from emulator.routing.olsr.messages import message_rows
from emulator.routing.olsr.mpr import select_mprs_compiled
from emulator.routing.olsr.routes import RouteInputs
from emulator.routing.seen import Seen, new_latest, remember, seen_key

#: The expiry of an entry a node does not hold.
ABSENT = -1.0


class Repositories:
    """Every node's link set, two-hop set, MPR selector set and topology set.

    ``heard_until[i, j]`` and ``inputs.sym_until[i, j]``: the link from ``i`` to ``j``
    heard and symmetric until (L_ASYM_time, L_SYM_time; a link ``i`` holds has
    ``heard_until >= 0``). ``inputs.two_hop_until``/``two_hop_list``: ``j``'s HELLO (the
    list of its symmetric neighbours). ``selector_until``: ``j`` chose ``i`` as an MPR.
    ``topology_ansn``/``inputs.topology_until``/``topology_list``: ``j``'s last TC (-1:
    none). ``last_symmetric``: the symmetric links at ``i``'s last purge;
    ``topology_expiry[i]``: no topology entry of ``i`` expires before it (the set is
    scanned only from then on). ``inputs.stale[i]``: ``i``'s table is to be computed
    again. ``seen``: the messages processed, ``key(i, originator, sequence number)`` ->
    until; ``latest``: the last message of each originator each node processed
    (:func:`~emulator.routing.seen.new_latest`), which turns most copies away without
    a look-up in ``seen``.
    """

    def __init__(self, nodes):
        self.inputs = RouteInputs(nodes)
        self.ids, self.pos = self.inputs.ids, self.inputs.pos
        n = len(self.ids)
        self.heard_until = np.full((n, n), ABSENT)
        self.selector_until = np.full((n, n), ABSENT)
        self.topology_ansn = np.full((n, n), -1, np.int64)
        self.topology_expiry = np.full(n, np.inf)
        self.last_symmetric = np.zeros((n, n), np.bool_)
        self.seen = Seen()
        self.latest = new_latest(n)
        #: What :func:`~.receive.receive` works in (it allocates nothing: a compiled
        #: call with numba's reference counting costs twice as much to start).
        self.asks = np.empty((64, 3), np.int64)
        self._id_array = np.array(self.ids)

    def symmetric(self, u: int, t: float) -> tuple:
        """``u``'s symmetric neighbours at ``t``, in id order."""
        return tuple(self._id_array[self.inputs.sym_until[self.pos[u]] > t].tolist())

    def heard_only(self, u: int, t: float) -> tuple:
        """The neighbours ``u`` hears at ``t`` over a link not (yet) symmetric."""
        i = self.pos[u]
        sym = self.inputs.sym_until[i] > t
        return tuple(self._id_array[(self.heard_until[i] > t) & ~sym].tolist())

    def selectors(self, u: int, t: float) -> frozenset:
        """The neighbours that have chosen ``u`` as an MPR, at ``t``."""
        return frozenset(self._id_array[self.selector_until[self.pos[u]] > t].tolist())

    def ids_of(self, flags: np.ndarray) -> frozenset:
        """The ids of the positions flagged."""
        return frozenset(self._id_array[flags].tolist())

    def rows(self, messages) -> np.ndarray:
        """A packet's ``messages`` (``((type, message), ...)``) as
        :func:`~emulator.routing.olsr.receive.receive` reads them."""
        return message_rows(messages, self.pos, self.inputs.list_number)

    def remember(self, t: float, u: int, orig: int, seq: int, until: float) -> None:
        """``u`` has seen the message ``(orig, seq)`` at ``t`` (its own, as it sends
        it)."""
        self.seen.reserve(t, 1)
        remember(*self.seen.arrays(),
                 seen_key(self.pos[u], self.pos[orig], seq, len(self.ids)), until)

    def break_link(self, u: int, v: int, t: float) -> bool:
        """``u``'s link to ``v`` is lost at ``t`` (link-layer feedback), if ``u`` holds
        one; returns whether it did."""
        i, j = self.pos[u], self.pos[v]
        if self.heard_until[i, j] < 0:
            return False
        self.heard_until[i, j] = self.inputs.sym_until[i, j] = t
        self.inputs.stale[i] = True
        return True

    def purge(self, u: int, t: float) -> bool:
        """Drop ``u``'s expired entries at ``t`` (:func:`purge`); whether its routing
        table must be computed again."""
        inputs = self.inputs
        return purge(self.pos[u], t, self.heard_until, inputs.sym_until,
                     self.last_symmetric, inputs.two_hop_until, self.topology_ansn,
                     inputs.topology_until, self.topology_expiry, inputs.stale)

    def mprs(self, u: int, t: float) -> frozenset:
        """The MPRs ``u`` selects at ``t`` from its symmetric neighbours and their
        HELLOs (:func:`~emulator.routing.olsr.mpr.select_mprs_compiled`)."""
        inputs = self.inputs
        return self.ids_of(select_mprs_compiled(self.pos[u], t, inputs.sym_until,
                                                inputs.two_hop_until, inputs.two_hop_list,
                                                inputs.bit_sets()))


@njit(cache=True, _nrt=False)
def purge(i, t, heard_until, sym_until, last_symmetric, two_hop_until, topology_ansn,
          topology_until, topology_expiry, stale):
    """Drop node ``i``'s expired entries at ``t``; True if its routing table must be
    computed again (a symmetric link came or went, a two-hop or topology entry went),
    which is also written into ``stale``. Expired MPR selectors are not read as valid,
    so they stay."""
    n = heard_until.shape[1]
    changed = False
    for j in range(n):
        heard = heard_until[i, j]
        if heard >= 0 and max(heard, sym_until[i, j]) <= t:
            heard_until[i, j] = ABSENT
        symmetric = sym_until[i, j] > t
        if symmetric != last_symmetric[i, j]:
            last_symmetric[i, j] = symmetric
            changed = True
        if 0 <= two_hop_until[i, j] <= t:
            two_hop_until[i, j] = ABSENT
            changed = True
    if t >= topology_expiry[i]:
        expiry = np.inf
        for j in range(n):
            if topology_ansn[i, j] < 0:
                continue
            if topology_until[i, j] <= t:
                topology_ansn[i, j] = -1
                topology_until[i, j] = ABSENT
                changed = True
            elif topology_until[i, j] < expiry:
                expiry = topology_until[i, j]
        topology_expiry[i] = expiry
    if changed:
        stale[i] = True
    return changed
