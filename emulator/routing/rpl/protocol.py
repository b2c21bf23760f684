"""RPL at every node (RFC 6550, storing mode): the one class that sends, receives and
owns the timers.

What runs, by the RFC's sections:

- **DODAG construction** (§8): one DODAG, rooted at ``root``. The root advertises its
  rank (MinHopRankIncrease) in DIOs; a node that hears a DIO of a finite rank joins,
  picks a preferred parent by the objective function (:mod:`.objective`: OF0 or MRHOF
  over ETX) among the neighbours of its version whose rank is below its own (any, when
  it has none) and that are not its descendants, takes the rank through it, and
  advertises it in DIOs of its own. DIOs follow a Trickle timer per node
  (:mod:`.trickle`, RFC 6206: Imin 8 ms, 20 doublings, k = 10); a DIO that changes
  neither the hearer's parent, rank nor version counts as consistent, and joining, a
  new parent or rank, a new version, losing the parent and a DIS heard reset the
  timer (under a MAC, a new parent or rank only when the rank moved more than
  RPL_SIGNIFICANT_CHANGE_THRESHOLD: see below). A node
  without a parent sends a DIS (first after ``dis_delay``, then every ``dis_interval``).
- **Downward routes** (§9, storing mode): a node sends its parent a DAO ``dao_delay``
  after its parent or its routes changed, and every ``dao_interval``, listing itself
  (with a new path sequence each time) and every target it routes to: the full set its
  subtree reaches, so the parent replaces the routes it had through that child. A list
  longer than one DAO of ``max_dao_bytes`` carries (default 116: an 802.15.4 frame's
  payload, 127 bytes less the 11 of the MAC header) goes in several DAOs of one
  DAOSequences in a row, numbered, all but the last flagged "more"; the parent replaces
  the child's routes once it has every piece (a piece lost: the routes the others list
  are taken, none removed). With ``dao_ack`` each piece is acknowledged on its own and
  the unanswered ones are sent again. Routes
  live ``route_lifetime`` unless refreshed. A node leaving a parent sends it a No-Path
  DAO (lifetime 0) for what it listed. With ``dao_ack`` a DAO asks for a DAO-ACK (§9.3)
  and is sent again after ``dao_ack_timeout``, up to ``dao_max_retransmissions`` times,
  after which the parent counts as lost. Traffic goes up the default route (the parent)
  until a node routes to the destination downwards, then down: a packet for a node in
  no subtree goes up to the root, which drops it (``no_route``).
- **Stale routes down** (§11.2.2.3, DAO inconsistency detection and recovery, with
  ``forwarding_error``): a packet going down (the 'O' flag) that reaches a node with no
  route down is sent back, with the Forwarding-Error 'F' flag, to the node that sent it
  down (:mod:`.forwarding`); that node removes its route to the destination through the
  sender (its next DAO tells its parent), clears 'F' and forwards the packet again: down
  another route if it has one, back with 'F' to its own sender if it too was reached
  going down, else up to its parent as any packet without a route down (the root drops
  it, ``no_route``). One packet so clears a chain of stale routes and is delivered the
  right way (counted in :attr:`Rpl.forwarding_errors`). Contiki-NG's storing mode
  (rpl-classic's ``update_hbh_header``) instead drops the packet and sends the sender
  a No-Path DAO for the destination ("We should send back the packet to the
  originating parent, but it is not feasible yet"), and its receiver of an 'F' packet
  (``rpl_ext_header_hbh_update``) would drop the route and the packet; the RFC has the
  packet sent again, as here. Without ``forwarding_error`` such a packet is dropped
  (``no_route``), as the RFC has a node that does no recovery do.
- **Links under a MAC** (as Contiki-NG's rpl-lite over its link statistics): each
  unicast's outcome (:meth:`Rpl.on_link_outcome`) teaches the link's ETX
  (:mod:`.link_stats`), and the parent is chosen again; a best candidate whose
  statistics are not fresh is probed with a unicast DIO before it is taken; a rank
  moved by a new ETX resets Trickle only past RPL_SIGNIFICANT_CHANGE_THRESHOLD (4 x
  MinHopRankIncrease) from the rank last advertised, and a parent no longer below
  that rank has the node send one DIO at once; a node takes as a new parent only a
  neighbour below both its rank and the rank it last advertised (its children's
  ranks came from that one), and no neighbour above its lowest rank since joining
  plus ``MAX_RANK_INCREASE`` x MinHopRankIncrease (DAGMaxRankIncrease; its parent
  past it is lost); a neighbour that poisons, or advertises a rank below that lowest,
  is no descendant (the routes to and through it go); a node without a parent probes
  its least lossy neighbour with each DIS and after 1, 2, 4, 8, 8... s; with
  ``probing_interval`` each node probes a neighbour that often (Contiki-NG's periodic
  probing). On the ideal medium none of this runs, and the ETX is the link model's,
  exact.
- **Local repair** (§8.2.2.5): a frame the MAC could not deliver to a neighbour (the
  link-layer feedback, ``link_layer_feedback``) removes it and the routes through it
  (under a MAC only once its learnt ETX makes it no parent, or the link is gone);
  losing the parent, a node takes the best remaining candidate, or detaches: it
  advertises the infinite rank (poisoning: its children leave it too) and asks for DIOs
  with a DIS. DAOs double as the probe that finds a dead parent.
- **Global repair** (§8.2.2.1): with ``version_interval`` the root increments the DODAG
  version; a node hearing a newer version forgets the older one's neighbours and
  downward routes and joins the new one afresh (traffic down waits for the new DAOs,
  ``dao_delay`` a hop).

Left out: non-storing mode (source routes, §9.7), P2P-RPL (RFC 6997), several
instances or DODAGs, grounded/floating DODAGs, DAO-ACK statuses other than
"accepted", DTSN-triggered DAOs, the DODAG Configuration option (every node has the
spec's parameters), MaxRankIncrease on the ideal medium, the loop detection of the
data path (the 'R' flag; a loop ends at ``ip_ttl``; tried under the MAC, docs/NOTES.md),
the wait the RFC allows before a packet sent back with 'F' goes to another neighbour
(it leaves at once: a node holds one route a target),
lollipop counters (versions and path sequences do not
wrap), multicast and security (§10).
"""
from __future__ import annotations

from emulator.routing.base import BROADCAST, Control, Protocol
from emulator.routing.rpl.forwarding import DownwardPaths
from emulator.routing.rpl.link_stats import LinkStats
from emulator.routing.rpl.objective import ETX_FRAME_BYTES, ObjectiveFunction, etx
from emulator.routing.rpl.packets import INFINITE_RANK, Dao, DaoAck, Dio, Dis, dao_pieces
from emulator.routing.rpl.tables import RplNode
from emulator.routing.rpl.trickle import Trickle
from topologies.schema import FieldError

_SEND, _END = "dio", "dio_end"        # a Trickle interval's transmission and its end
_RESEND = "dao_resend"                # (_RESEND, DAOSequence): a DAO-ACK is overdue
_DIS, _DAO, _REFRESH, _VERSION = "dis", "dao", "refresh", "version"
#: A probe with no outcome by then (its frame never got on air) is given up, and the
#: next may leave (this testbed's; Contiki-NG's probing timer has no such case).
PROBE_TIMEOUT = 1.0
#: Contiki-NG's RPL_MAX_RANKINC in MinHopRankIncrease (rpl-lite's ``rpl-conf.h``).
MAX_RANK_INCREASE = 8
_PROBE, _REPROBE = "probe", "reprobe"
#: A detached node's first probe after the one with its DIS (then doubling).
REPROBE_FIRST, REPROBE_LAST = 1.0, 8.0


class Rpl(Protocol):
    """RPL's state at every node (see the module docstring); ``params`` as
    :data:`emulator.routing.params.RPL`, in time units, ``root`` filled in (None: the
    lowest node id)."""

    name = "rpl"

    def __init__(self, host, nodes, params: dict, seed: int):
        super().__init__(host, nodes, params, seed)
        root = params["root"]
        self.root = self.nodes[0] if root is None else root
        if self.root not in self.position:
            raise FieldError("routing.rpl.root", f"expected a node of the network "
                                                 f"({self.nodes[0]}..{self.nodes[-1]}), "
                                                 f"got {root!r}")
        # under a MAC the links' ETX is learnt from its acknowledgements (one
        # LinkStats a node); on the ideal medium it is the link model's, exact
        self.stats = {u: LinkStats() for u in self.nodes} \
            if getattr(host, "mac", None) is not None else None
        self.objective = ObjectiveFunction(params["objective"], params,
                                           learnt=self.stats is not None)
        #: Contiki-NG's RPL_SIGNIFICANT_CHANGE_THRESHOLD: with a learnt ETX, a rank
        #: change resets Trickle only when it moves this far from the rank last advertised
        self.significant = 4 * params["min_hop_rank_increase"]
        #: Contiki-NG's RPL_MAX_RANKINC (RFC 6550's DAGMaxRankIncrease): with a learnt
        #: ETX a neighbour whose DAGRank is above that of the node's lowest rank plus
        #: this is no candidate, its parent included
        self.max_rank_increase = MAX_RANK_INCREASE * params["min_hop_rank_increase"]
        self.min_hop = params["min_hop_rank_increase"]
        self.lifetime = params["route_lifetime"]
        self.max_dao = params["max_dao_bytes"]
        self._state = {u: RplNode(Trickle(params["dio_interval_min"],
                                          params["dio_interval_doublings"],
                                          params["dio_redundancy_constant"]))
                       for u in self.nodes}
        self._paths = DownwardPaths()   # the data packets' 'O' and 'F' flags
        #: Packets sent back with the Forwarding-Error flag (§11.2.2.3): each found a
        #: stale route down.
        self.forwarding_errors = 0
        #: ``(time, node, parent)`` of every parent a node took (None: detached).
        self.parent_log: list[tuple] = []

    # -- timers -------------------------------------------------------------------------
    def start(self, t: float) -> None:
        root = self._state[self.root]
        root.version, root.rank, root.joined_at = 0, self.objective.root_rank, t
        self._reset_trickle(t, self.root)
        if self.params["version_interval"] is not None:
            self.host.set_timer(t + self.params["version_interval"], self.root, _VERSION)
        for u in self.nodes:
            if u != self.root:
                self._state[u].dis_pending = True
                self.host.set_timer(t + self.params["dis_delay"], u, _DIS)
                self.host.set_timer(t + self.uniform() * self.params["dao_interval"], u,
                                    _REFRESH)
                if self.stats is not None and self.params["probing_interval"] is not None:
                    self._probe_later(t, u)

    def on_timer(self, t: float, u: int, tag) -> None:
        node = self._state[u]
        if type(tag) is tuple and tag[0] == _RESEND:
            self._dao_overdue(t, u, tag[1])
        elif type(tag) is tuple:   # (what, generation) of a Trickle interval
            what, generation = tag
            if not node.trickle.current(generation):
                return
            if what == _SEND:
                if node.trickle.may_send():
                    node.advertised = node.rank
                    self._send(t, u, BROADCAST, Dio(node.version, node.rank))
            else:
                self._trickle_timers(t, u, node.trickle.next_interval(t, self.uniform()))
        elif tag == _DIS:
            node.dis_pending = False
            if node.parent is None:
                self._send(t, u, BROADCAST, Dis())
                self._probe_detached(t, u)
                self._dis_later(t, u)
        elif tag == _DAO:
            node.dao_pending = False
            self._send_dao(t, u)
        elif tag == _REFRESH:
            self._send_dao(t, u)
            self.host.set_timer(t + self.params["dao_interval"], u, _REFRESH)
        elif tag == _REPROBE:
            if node.parent is None and self._probe_detached(t, u, chain=False):
                node.reprobe = min(2 * node.reprobe, REPROBE_LAST)
                self.host.set_timer(t + node.reprobe, u, _REPROBE)
            else:
                node.reprobe = None
        elif tag == _PROBE:
            self._probe_periodic(t, u)
            self._probe_later(t, u)
        elif tag == _VERSION:
            node.version += 1
            self._reset_trickle(t, u)
            self.host.set_timer(t + self.params["version_interval"], u, _VERSION)

    def _reset_trickle(self, t: float, u: int) -> None:
        trickle = self._state[u].trickle
        if trickle.reset():
            trickle.resets.append(t)
            self._trickle_timers(t, u, trickle.begin(t, self.uniform()))

    def _trickle_timers(self, t: float, u: int, times: tuple[float, float]) -> None:
        generation = self._state[u].trickle.generation
        self.host.set_timer(times[0], u, (_SEND, generation))
        self.host.set_timer(times[1], u, (_END, generation))

    # -- packets heard ------------------------------------------------------------------
    def on_receive(self, t: float, u: int, msg) -> None:
        packet = msg.payload.body
        if type(packet) is Dio:
            self._on_dio(t, u, msg.src, packet)
        elif type(packet) is Dao:
            self._on_dao(t, u, msg.src, packet)
        elif type(packet) is DaoAck:
            awaiting = self._state[u].awaiting
            if awaiting is not None:
                awaiting[2] = [p for p in awaiting[2] if p.sequence != packet.sequence]
                if not awaiting[2]:
                    self._state[u].awaiting = None
        elif self._state[u].rank < INFINITE_RANK:   # a DIS: advertise soon (§8.3)
            self._reset_trickle(t, u)

    def _on_dio(self, t: float, u: int, v: int, dio: Dio) -> None:
        node = self._state[u]
        if u == self.root:
            if dio.version == node.version:
                node.trickle.heard_consistent()
            else:   # a node of an older version: tell it the new one soon
                self._reset_trickle(t, u)
            return
        if node.version is None or dio.version > node.version:
            if dio.rank >= INFINITE_RANK:
                return
            # a new version (global repair) is a new DODAG: the old one's ranks, parent
            # and downward routes are gone (the old tree must not bar a parent as a
            # descendant), and the node joins afresh at whatever rank (its old parent,
            # if another is taken, is told with a No-Path)
            node.version = dio.version
            node.neighbours.clear()
            node.routes.clear()
            if node.parent is not None:
                node.detached_from = node.parent
            node.parent, node.rank = None, INFINITE_RANK
        elif dio.version < node.version:
            self._reset_trickle(t, u)
            return
        # a poisoned neighbour stays known (it can still hear a No-Path DAO)
        if self.stats is None:
            node.neighbours[v] = (dio.rank, etx(self.host.link_delivery(t, u, v,
                                                                        ETX_FRAME_BYTES)))
        else:   # the ETX is the link statistics', read when a parent is chosen
            node.neighbours[v] = (dio.rank, self.stats[u].heard(v, self.host.link_rx_dbm(
                t, v, u)))
            if dio.rank >= INFINITE_RANK or dio.rank < node.lowest:
                self._forget_routes_of(t, u, v)
        if not self._reselect(t, u) and dio.rank < INFINITE_RANK:
            node.trickle.heard_consistent()

    def _forget_routes_of(self, t: float, u: int, v: int) -> None:
        """With a learnt ETX, ``v`` is no descendant of ``u`` whatever ``u``'s routes
        say: it poisons (it has no parent, and reaches no one), or its rank is below
        the lowest ``u`` held since it joined (a descendant's rank is above it). The
        routes to it and through it go (a DAO tells the parent), and ``v`` is no longer
        barred as a parent. Without this a region whose No-Path DAOs were lost in
        collisions saw only 'descendants' around it and stayed detached: the route to a
        node of rank 512 that had left long before barred the one way out
        (docs/NOTES.md, 2026-12-03)."""
        node = self._state[u]
        gone = node.routes_via(v)
        if v in node.routes and v not in gone:
            gone.append(v)
        for target in gone:
            del node.routes[target]
        if gone:
            self._schedule_dao(t, u)

    def _on_dao(self, t: float, u: int, v: int, dao: Dao) -> None:
        node = self._state[u]
        node.expire(t)
        changed = False
        if dao.lifetime == 0:   # No-Path: v no longer reaches these
            for target, _ in dao.targets:
                if node.next_hop_down(target, t) == v:
                    del node.routes[target]
                    changed = True
        else:
            # a DAO's pieces (DAOSequences in a row from its part 0's) list together
            # what v reaches; how many there are is known from the last (not "more")
            first = dao.sequence - dao.part
            sequence, parts, listed, count = node.listed.pop(v, (None, None, None, None))
            if sequence != first:
                parts, listed, count = set(), set(), None
            parts.add(dao.part)
            if not dao.more:
                count = dao.part + 1
            until = t + dao.lifetime
            for target, seq in dao.targets:
                if target != u and target != node.parent:   # never route to self or up
                    changed |= node.offer_route(target, v, seq, until)
                    listed.add(target)
            if len(parts) == count:   # the whole DAO: the routes through v it does not
                for target in node.routes_via(v):   # list are gone
                    if target not in listed:
                        del node.routes[target]
                        changed = True
            else:
                node.listed[v] = (first, parts, listed, count)
        if changed:
            self._schedule_dao(t, u)
        if dao.ack:
            self._send(t, u, v, DaoAck(dao.sequence))

    # -- parent selection ---------------------------------------------------------------
    def _reselect(self, t: float, u: int) -> bool:
        """Choose the parent again; reset Trickle if that is news for the neighbours;
        whether it was. On the ideal medium any new parent or rank is news. With a
        learnt ETX (every unicast moves it, and with it the rank) only what Contiki-NG's
        rpl-lite resets on: joining, detaching, or a rank moved more than
        RPL_SIGNIFICANT_CHANGE_THRESHOLD from the rank last advertised; a new parent
        at about the same rank is told in the next DIO, and by the DAO it is sent."""
        node = self._state[u]
        had = node.parent
        if not self._choose_parent(t, u):
            return False
        if self.stats is not None and had is not None and node.parent is not None \
                and abs(node.rank - node.advertised) <= self.significant:
            if node.neighbours[node.parent][0] >= node.advertised:
                # the parent is no longer below the rank last advertised (RFC 6550
                # §8.2.2.4: never advertise a rank not above a parent's): one DIO now
                node.advertised = node.rank
                self._send(t, u, BROADCAST, Dio(node.version, node.rank))
            return False
        node.advertised = node.rank
        self._reset_trickle(t, u)
        return True

    def _choose_parent(self, t: float, u: int) -> bool:
        """Select the preferred parent (and rank) by the objective function; whether
        the parent or the rank changed (news for the neighbours: a Trickle reset)."""
        node, objective = self._state[u], self.objective
        old = node.parent
        attached = old is not None
        candidates, order = {}, {}
        stats = self.stats[u] if self.stats is not None else None
        ceiling = INFINITE_RANK if stats is None or not attached else \
            (node.lowest + self.max_rank_increase) // self.min_hop
        below = node.rank if stats is None else min(node.rank, node.advertised)
        for v, (rank, link_etx) in node.neighbours.items():
            if rank >= INFINITE_RANK or node.descendant(v) or \
                    not (v == old or not attached or rank < below) or \
                    rank // self.min_hop > ceiling:
                continue
            if stats is not None:
                link_etx = stats.etx(v)
            via = objective.rank_via(rank, link_etx)
            if via is not None:
                candidates[v] = via
                order[v] = objective.order(rank, link_etx, via) + (v,)
        best = min(candidates, key=order.__getitem__) if candidates else None
        if stats is not None and best is not None and not stats.fresh(t, best):
            best = self._probe_first(t, u, order, best)
        # the parent is kept unless the best is better by the objective's own measure
        # (OF0 with a learnt ETX: a lower path cost, so ties keep the parent)
        if old in candidates and best is not None and best != old and \
                not objective.better(order[best][0], order[old][0]):
            best = old
        if best is None:
            if old is None and node.rank >= INFINITE_RANK:   # still out: keep asking
                self._dis_later(t, u)
                return False
            self._detach(t, u)
            return True
        rank, node.parent, node.rank = node.rank, best, candidates[best]
        if old is None or node.rank < node.lowest:   # as Contiki-NG: a rejoin starts anew
            node.lowest = node.rank
        if best == old:
            return rank != node.rank
        if node.joined_at is None:
            node.joined_at = t
        self.parent_log.append((t, u, best))
        # the parent left (or the last one, after a detachment) forgets this subtree,
        # and so no longer counts it as descendants: a No-Path DAO, if it can hear
        left = old if old is not None else node.detached_from
        node.detached_from = None
        if left is not None and left != best and left in node.neighbours:
            for piece in dao_pieces(self._targets(t, u, node), 0, self.max_dao):
                self._send(t, u, left, piece)
        self._schedule_dao(t, u)
        return True

    def _probe_first(self, t: float, u: int, order: dict, best: int) -> int | None:
        """With a learnt ETX the best candidate ``best`` has no fresh statistics (a
        guess, or old): probe it with a unicast DIO (its MAC's outcome is news of the
        link, and the parent is chosen again then), and meanwhile choose as Contiki-NG's
        ``rpl_neighbor_select_best`` does: the parent kept if it is ``best``, else the
        best fresh candidate, else ``best`` if the node has a parent, else none yet."""
        node, stats = self._state[u], self.stats[u]
        if node.probing is None or node.probing[1] + PROBE_TIMEOUT <= t:
            node.probing = (best, t)
            self._send(t, u, best, Dio(node.version, node.rank))
        if best == node.parent:
            return best
        fresh = [v for v in order if stats.fresh(t, v)]
        if fresh:
            return min(fresh, key=order.__getitem__)
        return best if node.parent is not None else None

    def _detach(self, t: float, u: int) -> None:
        """No parent left: advertise the infinite rank (poisoning its subtree) and ask
        for DIOs."""
        node = self._state[u]
        if node.parent is not None:
            node.detached_from = node.parent
        node.parent, node.rank = None, INFINITE_RANK
        self.parent_log.append((t, u, None))
        self._send(t, u, BROADCAST, Dis())
        self._probe_detached(t, u)
        self._dis_later(t, u)

    def _probe_later(self, t: float, u: int) -> None:
        """The next periodic probe, ``probing_interval`` x U(0.5, 1.5) from ``t``."""
        self.host.set_timer(t + self.params["probing_interval"] * (0.5 + self.uniform()), u,
                            _PROBE)

    def _probe_periodic(self, t: float, u: int) -> None:
        """Contiki-NG's periodic probe (``RPL_WITH_PROBING``, ``get_probing_target``
        simplified), under a MAC with ``probing_interval``: the parent if its statistics
        are not fresh, else the neighbour of a finite rank (not a descendant) whose
        statistics are the oldest, so that a link counted dead is measured again."""
        node, stats = self._state[u], self.stats[u]
        target = node.parent if node.parent is not None and \
            not stats.fresh(t, node.parent) else None
        if target is None:
            known = [v for v, (rank, _) in node.neighbours.items()
                     if rank < INFINITE_RANK and not node.descendant(v) and v != node.parent]
            if known:
                target = min(known, key=lambda v: (stats.last(v), v))
        if target is not None:
            node.probing = (target, t)
            self._send(t, u, target, Dio(node.version, node.rank))

    def _probe_detached(self, t: float, u: int, chain: bool = True) -> bool:
        """With a learnt ETX, a node without a parent whose neighbours of a finite rank
        all have links too lossy to take probes the least lossy of them, with each DIS
        it sends and ``REPROBE_FIRST`` after, the wait doubling to ``REPROBE_LAST``
        while it stays out (``chain``: start that series unless one runs). Each
        acknowledged probe moves the ETX a tenth of the way to 1, so a link that lost
        three frames in a start-up's collisions (ETX 5 to 6) is usable again after five
        (this testbed's rule: Contiki-NG probes such a link only once its statistics
        are 10 minutes old, and a node cut off by such links waits so long); whether a
        probe left."""
        if self.stats is None:
            return False
        node, stats = self._state[u], self.stats[u]
        known = [v for v, (rank, _) in node.neighbours.items()
                 if rank < INFINITE_RANK and not node.descendant(v)]
        if not known:
            return False
        v = min(known, key=lambda v: (stats.etx(v), v))
        node.probing = (v, t)
        self._send(t, u, v, Dio(node.version, node.rank))
        if chain and node.reprobe is None:
            node.reprobe = REPROBE_FIRST
            self.host.set_timer(t + REPROBE_FIRST, u, _REPROBE)
        return True

    def _dis_later(self, t: float, u: int) -> None:
        """Another DIS in ``dis_interval`` unless one is due already."""
        node = self._state[u]
        if not node.dis_pending:
            node.dis_pending = True
            self.host.set_timer(t + self.params["dis_interval"], u, _DIS)

    def on_link_outcome(self, t: float, u: int, v: int, attempts: int, acked: bool) -> None:
        """A unicast of ``u`` to ``v`` took ``attempts`` transmissions of its MAC and was
        acknowledged or not: the link's ETX learns it, and the parent is chosen again
        (Contiki-NG's ``rpl_link_callback`` schedules the same state update)."""
        if self.stats is None:
            return
        self.stats[u].sent(t, v, attempts, acked)
        node = self._state[u]
        if node.probing is not None and node.probing[0] == v:
            node.probing = None
        if u != self.root and v in self._state[u].neighbours:
            self._reselect(t, u)

    def on_link_failure(self, t: float, u: int, v: int) -> None:
        """Link-layer feedback (``link_layer_feedback``): on the ideal medium the
        neighbour is lost at the first frame that fails. With a learnt ETX the failure
        has raised the link's ETX (:meth:`on_link_outcome`), and the neighbour is lost
        only once its link is dead: its ETX makes it no parent by the objective
        function (MRHOF: above MAX_LINK_METRIC; OF0, as Contiki-NG's with its fixed
        step: never), or the link is gone from the network (out of range, a dead
        node)."""
        if not self.params["link_layer_feedback"]:
            return
        if self.stats is None or not self.objective.usable(self.stats[u].etx(v)) or \
                self.host.link_delivery(t, u, v, ETX_FRAME_BYTES) == 0.0:
            self._lose_neighbour(t, u, v)

    def _lose_neighbour(self, t: float, u: int, v: int) -> None:
        """``v`` is unreachable: forget it and the routes through it; repair locally if
        it was the parent."""
        node = self._state[u]
        node.neighbours.pop(v, None)
        gone = node.routes_via(v)
        for target in gone:
            del node.routes[target]
        if v == node.parent and self._reselect(t, u):
            pass
        elif gone:
            self._schedule_dao(t, u)

    # -- DAOs ---------------------------------------------------------------------------
    def _schedule_dao(self, t: float, u: int) -> None:
        node = self._state[u]
        if u != self.root and not node.dao_pending:
            node.dao_pending = True
            self.host.set_timer(t + self.params["dao_delay"], u, _DAO)

    def _targets(self, t: float, u: int, node: RplNode) -> tuple:
        """What a DAO of ``u`` lists: itself and every target it routes to."""
        node.expire(t)
        return ((u, node.path_seq),) + tuple((target, route[1]) for target, route
                                             in sorted(node.routes.items()))

    def _send_dao(self, t: float, u: int) -> None:
        node = self._state[u]
        if node.parent is None:
            return
        node.path_seq += 1
        ack = self.params["dao_ack"]
        first = node.dao_sequence + 1
        pieces = dao_pieces(self._targets(t, u, node), self.lifetime, self.max_dao,
                            first, ack)
        node.dao_sequence = pieces[-1].sequence
        if ack:   # overtakes one unanswered, whose sends to this parent still count
            before = node.awaiting
            unanswered = before[3] + 1 if before is not None and before[1] == node.parent \
                else 0
            node.awaiting = [first, node.parent, pieces, unanswered]
            self.host.set_timer(t + self.params["dao_ack_timeout"], u, (_RESEND, first))
        for piece in pieces:
            self._send(t, u, node.parent, piece)

    def _dao_overdue(self, t: float, u: int, sequence: int) -> None:
        """No DAO-ACK for (pieces of) the DAO from ``sequence``: send them again, or after
        ``dao_max_retransmissions`` count the parent as lost (§9.3 leaves what then to
        the implementation)."""
        node = self._state[u]
        awaiting = node.awaiting
        if awaiting is None or awaiting[0] != sequence:
            return
        if awaiting[1] != node.parent:   # it left that parent: the new one has its DAO
            node.awaiting = None
            return
        if awaiting[3] < self.params["dao_max_retransmissions"]:
            awaiting[3] += 1
            self.host.set_timer(t + self.params["dao_ack_timeout"], u, (_RESEND, sequence))
            for piece in awaiting[2]:
                self._send(t, u, node.parent, piece)
            return
        node.awaiting = None
        self._lose_neighbour(t, u, node.parent)

    # -- forwarding ---------------------------------------------------------------------
    def next_hop(self, t: float, u: int, msg) -> int | None:
        node, paths = self._state[u], self._paths
        stale = paths.returned(msg.msg_id)
        if stale is not None:   # sent back with 'F': its route through that child is stale
            self._drop_route(t, u, msg.dst, stale)
        down = node.next_hop_down(msg.dst, t)
        if down is not None:
            paths.went_down(msg.msg_id, u)
            return down
        going_down = paths.going_down(msg.msg_id)   # 'O' set, no route down: inconsistent
        if going_down and self.params["forwarding_error"]:
            self.forwarding_errors += 1
            return paths.send_back(msg.msg_id, u)
        if going_down or u == self.root or node.parent is None:
            self.host.drop(t, u, msg, "no_route")
            return None
        return node.parent

    def _drop_route(self, t: float, u: int, target: int, via: int) -> None:
        """A packet for ``target`` came back from ``via`` with the Forwarding-Error
        flag: ``u``'s route to ``target`` through ``via`` is stale (RFC 6550 §11.2.2.3:
        removed), and ``u``'s parent is told by a DAO (storing mode's DAOs list all a
        node reaches, so the parent drops it too)."""
        node = self._state[u]
        route = node.routes.get(target)
        if route is not None and route[0] == via:
            del node.routes[target]
            self._schedule_dao(t, u)

    def route(self, t: float, u: int, dst: int) -> int | None:
        node = self._state[u]
        down = node.next_hop_down(dst, t)
        return down if down is not None or u == self.root else node.parent

    # -- what it learnt, for the figures ------------------------------------------------
    def tree(self) -> dict[int, int | None]:
        """Every node's preferred parent now (None: the root, or not joined)."""
        return {u: self._state[u].parent for u in self.nodes}

    def ranks(self) -> dict[int, int]:
        return {u: self._state[u].rank for u in self.nodes}

    def counters(self) -> dict:
        return {"rpl_forwarding_errors": self.forwarding_errors}

    # -- sending ------------------------------------------------------------------------
    def _send(self, t: float, u: int, dst: int, packet) -> None:
        self.host.send_control(t, u, dst, Control(packet.type, packet), packet.bytes())
