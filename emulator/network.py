"""Least-cost routing over a time-varying topology.

A :class:`Network` turns :class:`topologies.Dynamics` into one :class:`NetView` per epoch:
least path costs from a compiled Dijkstra (:mod:`emulator.route_kernel`; networkx's took a
second per 100 destinations on a 1,000-node graph, SciPy's a third more than this one for
all of them) and next hops from them, one tree per destination kept as a flat table
(indexed by node position), built when first asked for. Views
are built lazily from the epoch's links as arrays, and only the last few are kept, so a
run pays only for the epochs and destinations its messages touch. A run that will ask
for nearly every tree of every epoch can have them computed ahead, all destinations of an
epoch at once, in other processes (:class:`TreePrefetch`): the same tables.

Example
-------
>>> import networkx as nx
>>> g = nx.Graph()
>>> g.add_edge(0, 1, cost=1.0); g.add_edge(1, 2, cost=1.0); g.add_edge(0, 2, cost=5.0)
>>> view = NetView.from_graph(g, epoch_start=0.0)
>>> view.cost(0, 2), view.path(0, 2), view.hops(0, 2)
(2.0, [0, 1, 2], 2)
"""
from __future__ import annotations

import bisect
import math
import multiprocessing
import os
from collections import OrderedDict
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass

import networkx as nx
import numpy as np

from emulator import route_kernel

#: Link attributes the transport reads, with the value used where a link gives none.
#: ``ber`` (bit error rate: a hop of ``b`` bytes is also lost with ``1 - (1 - ber)^(8 b)``)
#: and ``length_m`` (metres, 0: unknown) come from the radio and the nodes' positions
#: (:mod:`topologies.radio`); a topology does not set them.
LINK_DEFAULTS = {"cost": 1.0, "delay": 0.01, "jitter": 0.0, "bandwidth": math.inf, "loss": 0.0,
                 "ber": 0.0, "length_m": 0.0}


@dataclass(frozen=True)
class Link:
    """A directed link's attributes at one epoch."""

    cost: float
    delay: float
    jitter: float
    bandwidth: float
    loss: float
    ber: float = 0.0
    length_m: float = 0.0


def _column(value, m: int) -> np.ndarray:
    """``value`` (a number or one per link) as a read-only float array of ``m`` links.

    A float array of ``m`` already (what a dynamics' link table holds) becomes a
    read-only view of itself: ``np.broadcast_to`` gives the same, in several times the
    time, and a view is built per attribute and epoch.

    >>> _column(2.0, 3).tolist(), _column(np.array([1.0, 2.0]), 2).flags.writeable
    ([2.0, 2.0, 2.0], False)
    """
    if type(value) is np.ndarray and value.dtype == np.float64 and value.shape == (m,):
        view = value.view()
        view.flags.writeable = False
        return view
    return np.broadcast_to(np.asarray(value, dtype=float), (m,))


class NetView:
    """A frozen, picklable snapshot of routing at one epoch.

    The usable links (up, between live nodes) are kept as flat arrays, each undirected
    link once (``tail``, ``head``: positions in :attr:`nodes`, sorted ids) with one array
    per attribute of :data:`LINK_DEFAULTS`. What routing needs is derived from them when
    first asked for: the directed links sorted by ``(tail, head)`` (so the links leaving a
    node are a slice, in increasing id order), per-link Python lists for the transport's
    hot loop, and per destination a least-cost tree — compiled Dijkstra costs and a
    next-hop table (a list indexed by node position holding the directed link to take,
    -1 where there is none). Traffic usually goes to a few destinations, so an epoch
    costs a few trees rather than all pairs. Dead nodes neither send, receive nor forward.
    Ties between equal-cost next hops go to the smaller node id: the next hop from ``u``
    is the smallest neighbour ``p`` with ``cost(p) + w(u, p) == cost(u)``, exactly as
    networkx's list of equal-cost predecessors gives it (a property test holds them
    equal).

    Example
    -------
    >>> import numpy as np
    >>> view = NetView(0.0, [0, 1, 2], [True, True, True], [0, 1, 0], [1, 2, 2],
    ...                {"cost": np.array([1.0, 1.0, 5.0])})
    >>> view.path(0, 2), view.neighbors(0), view.link(2, 1).delay
    ([0, 1, 2], [1, 2], 0.01)
    """

    def __init__(self, epoch_start, nodes, alive, tail, head, attrs: dict):
        self.epoch_start = float(epoch_start)
        self.nodes = tuple(nodes)
        self._alive_list = alive.tolist() if isinstance(alive, np.ndarray) and \
            alive.dtype == bool else [bool(a) for a in alive]
        self._alive_map = dict(zip(self.nodes, self._alive_list))
        self._pos = {u: k for k, u in enumerate(self.nodes)}
        self._tail = np.asarray(tail, dtype=np.int64)
        self._head = np.asarray(head, dtype=np.int64)
        m = len(self._tail)
        self._attrs = {name: _column(attrs.get(name, default), m)
                       for name, default in LINK_DEFAULTS.items()}
        self._routing = None     # built by _prepare() when routing is first asked for
        # what hop_lists(), link_indices() and out_extremes() build from it, kept where
        # a hop reads it
        self._hop_lists, self._link_indices, self._out_extremes = None, None, None
        self._tables: dict[int, list] = {}        # next hops by destination position
        self._arrays: dict[int, np.ndarray] = {}  # the same as arrays, built first
        self._dists: dict[int, np.ndarray] = {}
        # every destination's next hops from a worker process: a Future, then its
        # n x n table (None: trees are built here, one per destination asked for)
        self._prefetched = None

    def __getstate__(self):
        # Ship the links only (the Spark runtime pickles a view per node and epoch):
        # routing structures and trees are rebuilt, identically, where they are used.
        state = dict(self.__dict__)
        state.update(_routing=None, _hop_lists=None, _link_indices=None,
                     _out_extremes=None, _tables={}, _arrays={}, _dists={},
                     _prefetched=None)
        return state

    @classmethod
    def from_graph(cls, graph: nx.Graph, epoch_start: float = 0.0) -> "NetView":
        """The view of ``graph`` (edge attrs as in :data:`LINK_DEFAULTS`, plus ``up``;
        node attrs ``alive``, default True, and ``pos``). A link without ``length_m``
        between two nodes with a ``pos`` is as long as they are apart (one metre a
        position unit: a dynamics that knows its radio's scale sets ``length_m``)."""
        nodes = sorted(graph.nodes)
        pos = {u: k for k, u in enumerate(nodes)}
        alive = [bool(graph.nodes[u].get("alive", True)) for u in nodes]
        where = graph.nodes(data="pos")
        tail, head, columns = [], [], {name: [] for name in LINK_DEFAULTS}
        for u, v, d in graph.edges(data=True):
            i, j = pos[u], pos[v]
            if d.get("up", True) and alive[i] and alive[j]:
                tail.append(i)
                head.append(j)
                for name, default in LINK_DEFAULTS.items():
                    columns[name].append(float(d.get(name, default)))
                if "length_m" not in d and where[u] is not None and where[v] is not None:
                    columns["length_m"][-1] = math.dist(where[u], where[v])
        return cls(epoch_start, nodes, alive, tail, head,
                   {name: np.array(values, dtype=float) for name, values in columns.items()})

    def without(self, dead) -> "NetView":
        """This view with the nodes of ``dead`` down and their links gone (same start).

        >>> view = NetView(0.0, [0, 1, 2], [True] * 3, [0, 1], [1, 2], {})
        >>> v = view.without({1})
        >>> v.alive(1), v.neighbors(0), view.neighbors(0)
        (False, [], [1])
        """
        alive = [a and u not in dead for u, a in zip(self.nodes, self._alive_list)]
        keep = np.array([alive[i] and alive[j] for i, j in zip(self._tail, self._head)],
                        dtype=bool).reshape(-1)
        return NetView(self.epoch_start, self.nodes, alive, self._tail[keep],
                       self._head[keep], {name: column[keep]
                                          for name, column in self._attrs.items()})

    # -- routing structures, built on first use -------------------------------------------
    def _prepare(self):
        if self._routing is None:
            n, m = len(self.nodes), len(self._tail)
            u = np.concatenate([self._tail, self._head])
            p = np.concatenate([self._head, self._tail])
            undirected = np.concatenate([np.arange(m), np.arange(m)])
            # by (u, p): one sort of a combined key (p < n) costs half a lexsort
            order = np.argsort(u * max(n, 1) + p, kind="stable")
            u, p, undirected = u[order], p[order], undirected[order]
            w = self._attrs["cost"][undirected]
            ids = np.array(self.nodes, dtype=np.int64)
            starts = np.searchsorted(u, np.arange(n + 1))
            # the compiled trees' tie rule (strictly closer) holds for positive costs: a
            # zero-cost link is routed by networkx instead (costs here are positive in
            # every generator); their search holds a node's links in room for n
            # (route_kernel.workspace), so a node with more (self-loops) goes the same way
            compiled = bool(m) and bool((w > 0).all()) and int(np.diff(starts).max()) <= n
            self._routing = {
                "u": u, "p": p, "w": w, "ids": ids, "compiled": compiled,
                "starts": starts.tolist(), "starts_array": starts,
                # per directed link, what the transport reads at each hop: as arrays
                # (the compiled hop loop, emulator.links) and as lists (the Python ones)
                "head_pos": p,
                "attr_arrays": tuple(np.ascontiguousarray(self._attrs[name][undirected])
                                     for name in LINK_DEFAULTS),
                "head": ids[p].tolist(),
            }
        return self._routing

    @property
    def _compiled(self) -> bool:
        return self._prepare()["compiled"]

    def hop_lists(self):
        """The per-directed-link lists the transport reads at each hop:
        ``(head id, cost, delay, jitter, bandwidth, loss, ber, length_m)``, indexed like
        the entries of :meth:`route`."""
        lists = self._hop_lists
        if lists is None:
            # built once: a routed run's hop asks for them at every hop
            r = self._prepare()
            lists = self._hop_lists = (r["head"],) + tuple(a.tolist()
                                                          for a in r["attr_arrays"])
        return lists

    def hop_arrays(self) -> tuple[np.ndarray, tuple]:
        """What :meth:`hop_lists` holds as arrays: the head of each directed link as a
        position in :attr:`nodes`, and one array per attribute of :data:`LINK_DEFAULTS`.

        >>> view = NetView(0.0, [4, 7], [True, True], [0], [1], {"cost": np.array([2.0])})
        >>> head, attrs = view.hop_arrays()
        >>> head.tolist(), attrs[0].tolist()
        ([1, 0], [2.0, 2.0])
        """
        r = self._prepare()
        return r["head_pos"], r["attr_arrays"]

    def link_starts(self) -> np.ndarray:
        """``starts[i]``: the first directed link leaving ``nodes[i]`` (links are sorted
        by tail), ``starts[n]`` their number.

        >>> NetView(0.0, [4, 7, 9], [True] * 3, [0, 1], [1, 2], {}).link_starts().tolist()
        [0, 1, 3, 4]
        """
        return self._prepare()["starts_array"]

    def route(self, dst: int) -> list:
        """The next-hop table towards ``dst``: entry ``k`` is the directed link (an index
        into :meth:`hop_lists`) that node ``nodes[k]`` sends on, -1 if it has none (no
        route, or ``nodes[k]`` is ``dst``)."""
        d = self._pos[dst]
        table = self._tables.get(d)
        if table is None:
            table = self._tables[d] = self.route_array(dst).tolist()
        return table

    def route_array(self, dst: int) -> np.ndarray:
        """:meth:`route` as an int64 array (what the compiled hop loop reads)."""
        d = self._pos[dst]
        table = self._arrays.get(d)
        if table is None:
            if self._prefetched is not None:
                table = self._prefetched_tree(d)
            if table is None:
                table = self._build_tree(d)
        return table

    def _build_tree(self, d: int) -> np.ndarray:
        r = self._prepare()
        if r["compiled"]:
            cost = np.full(len(self.nodes), math.inf)
            table = np.full(len(self.nodes), -1, dtype=np.int64)
            route_kernel.tree(d, r["starts_array"], r["p"], r["w"], cost, table)
            self._arrays[d] = table
            self._dists[d] = cost
            return table
        n = len(self.nodes)
        table = np.full(n, -1, dtype=np.int64)
        cost = np.full(n, math.inf)
        pred, dist = nx.dijkstra_predecessor_and_distance(self._nx_graph(), self.nodes[d],
                                                          weight="cost")
        for node, c in dist.items():
            cost[self._pos[node]] = c
        for node, before in pred.items():
            if before:
                table[self._pos[node]] = self._link_index(node, _acyclic_choice(before, dist,
                                                                                node))
        self._arrays[d] = table
        self._dists[d] = cost
        return table

    def prefetched_routes(self) -> np.ndarray | None:
        """Every destination's next-hop table (``n x n`` int32, row ``d`` towards
        ``nodes[d]``) if a worker process computed them (:class:`TreePrefetch`), else
        None. The first call waits for that process to finish the epoch: by then most
        trees of it are wanted."""
        tables = self._prefetched
        if isinstance(tables, Future):
            tables = None if tables.cancelled() else tables.result()
            self._prefetched = tables
        return tables

    def _prefetched_tree(self, d: int) -> np.ndarray | None:
        """The tree towards position ``d`` from :meth:`prefetched_routes`, None if
        there are none."""
        tables = self.prefetched_routes()
        if tables is None:
            return None
        # costs are not shipped (the transport reads next hops only): cost() and
        # center() build their tree here, identically
        self._arrays[d] = table = tables[d]
        return table

    def _dist(self, dst: int) -> np.ndarray:
        d = self._pos[dst]
        if d not in self._dists:
            self._build_tree(d)
        return self._dists[d]

    def _link_index(self, u: int, v: int) -> int:
        """The directed link ``u -> v`` (an index into :meth:`hop_lists`), -1 if not up."""
        r = self._prepare()
        i, j = self._pos.get(u), self._pos.get(v)
        if i is None or j is None:
            return -1
        lo, hi = r["starts"][i], r["starts"][i + 1]
        k = lo + int(np.searchsorted(r["p"][lo:hi], j))
        return k if k < hi and r["p"][k] == j else -1

    def link_indices(self) -> dict:
        """``{(u, v): k}`` for every directed link up in this epoch: what
        :meth:`_link_index` finds, -1 aside, in one dictionary look-up (a routing
        protocol's host asks at every unicast hop, where a binary search costs
        microseconds). Built on first use.

        >>> view = NetView(0.0, [0, 1, 2], [True, True, True], [0, 1], [1, 2], {})
        >>> view.link_indices() == {(0, 1): 0, (1, 0): 1, (1, 2): 2, (2, 1): 3}
        True
        >>> all(view._link_index(u, v) == k for (u, v), k in view.link_indices().items())
        True
        """
        index = self._link_indices
        if index is None:
            r = self._prepare()
            tails = r["ids"][r["u"]].tolist()
            index = self._link_indices = dict(zip(zip(tails, r["head"]),
                                                  range(len(tails))))
        return index

    def _nx_graph(self) -> nx.Graph:
        """The usable links as a networkx graph (the reference, and zero-cost links)."""
        g = nx.Graph()
        g.add_nodes_from(self.nodes)
        for i, j, c in zip(self._tail.tolist(), self._head.tolist(),
                           self._attrs["cost"].tolist()):
            g.add_edge(self.nodes[i], self.nodes[j], cost=c)
        return g

    def _compiled_tree(self, dst: int) -> tuple[dict, dict]:
        """``(distance to dst, next hop towards dst)`` by node, from the view's own tree."""
        table, cost = self.route(dst), self._dist(dst)
        head = self._prepare()["head"]
        dist = {u: c for u, c in zip(self.nodes, cost.tolist()) if c != math.inf}
        towards = {u: head[k] for u, k in zip(self.nodes, table) if k >= 0}
        towards[dst] = dst
        return dist, towards

    def _networkx_tree(self, dst: int) -> tuple[dict, dict]:
        """The same from networkx's Dijkstra (the reference the tree is held equal to)."""
        pred, dist = nx.dijkstra_predecessor_and_distance(self._nx_graph(), dst, weight="cost")
        towards = {u: _acyclic_choice(p, dist, u) for u, p in pred.items() if p}
        towards[dst] = dst
        return dist, towards

    def forget_trees(self) -> None:
        """Drop the cached least-cost trees (they are rebuilt when asked for again)."""
        self._tables.clear()
        self._arrays.clear()
        self._dists.clear()
        self._prefetched = None

    def routing_links(self):
        """``(starts, p, w)``: what :func:`all_next_hops` needs to route this view
        elsewhere, None if it is not routed compiled (no links, or a zero-cost link)."""
        r = self._prepare()
        return (r["starts_array"], r["p"], r["w"]) if r["compiled"] else None

    # -- queries ------------------------------------------------------------------------
    def alive(self, u: int) -> bool:
        """Whether node ``u`` is up in this epoch."""
        return self._alive_map[u]

    def cost(self, u: int, v: int) -> float:
        """Least path cost from ``u`` to ``v`` (0 for u == v, inf if unreachable)."""
        i = self._pos.get(u)
        return math.inf if i is None else float(self._dist(v)[i])

    def cost_matrix(self, nodes) -> np.ndarray:
        """``W[i][j]`` = least path cost between ``nodes[i]`` and ``nodes[j]``."""
        nodes = list(nodes)
        w = np.empty((len(nodes), len(nodes)))
        for j, v in enumerate(nodes):
            w[:, j] = [self.cost(u, v) for u in nodes]
        return w

    def next_hop(self, u: int, v: int) -> int | None:
        """The neighbour of ``u`` on the least-cost path to ``v``, or None."""
        if u == v:
            return v
        i = self._pos.get(u)
        k = -1 if i is None else self.route(v)[i]
        return self._prepare()["head"][k] if k >= 0 else None

    def next_hops_towards(self, v: int) -> dict:
        """``{u: next hop from u towards v}`` for every node that reaches ``v``."""
        return self._compiled_tree(v)[1]

    def path(self, u: int, v: int) -> list[int]:
        """Nodes on the least-cost path from ``u`` to ``v`` ([] if unreachable)."""
        if self.next_hop(u, v) is None:
            return []
        path = [u]
        while path[-1] != v:
            path.append(self.next_hop(path[-1], v))
        return path

    def hops(self, u: int, v: int) -> int:
        """Number of hops on the least-cost path (-1 if unreachable)."""
        return len(self.path(u, v)) - 1

    def neighbors(self, u: int) -> list[int]:
        """The nodes ``u`` has a link to that is up in this epoch, in increasing id order."""
        r = self._prepare()
        i = self._pos[u]
        return r["head"][r["starts"][i]:r["starts"][i + 1]]

    def out_links(self, u: int) -> range:
        """The directed links leaving ``u`` (indices into :meth:`hop_lists`), in
        increasing order of the neighbour's id."""
        r = self._prepare()
        i = self._pos[u]
        return range(r["starts"][i], r["starts"][i + 1])

    def out_extremes(self) -> tuple[list, list, list]:
        """By node position, over the links leaving the node: the least bandwidth, the
        greatest cost and the greatest length (``inf``, 0 and 0 for a node with none):
        what a broadcast is held to, built once for all nodes (a routing protocol's
        nodes broadcast many times an epoch). The attributes are finite, or infinite
        bandwidths, on which numpy's and Python's min and max agree.

        >>> attrs = {"cost": np.array([2.0, 3.0]), "bandwidth": np.array([5.0, 9.0])}
        >>> view = NetView(0.0, [0, 1, 2], [True, True, True], [0, 1], [1, 2], attrs)
        >>> view.out_extremes()
        ([5.0, 5.0, 9.0], [2.0, 3.0, 3.0], [0.0, 0.0, 0.0])
        """
        found = self._out_extremes
        if found is None:
            r = self._prepare()
            starts = r["starts_array"]
            columns = dict(zip(LINK_DEFAULTS, r["attr_arrays"]))
            n = len(self.nodes)
            bandwidth, cost, length = np.full(n, math.inf), np.zeros(n), np.zeros(n)
            some = starts[1:] > starts[:-1]
            if some.any():   # reduceat's slices run from one start to the next given
                at = starts[:-1][some]
                bandwidth[some] = np.minimum.reduceat(columns["bandwidth"], at)
                cost[some] = np.maximum.reduceat(columns["cost"], at)
                length[some] = np.maximum.reduceat(columns["length_m"], at)
            found = self._out_extremes = (bandwidth.tolist(), cost.tolist(),
                                          length.tolist())
        return found

    def link(self, u: int, v: int) -> Link | None:
        """Attributes of the link ``u -> v`` if it is up in this epoch."""
        k = self._link_index(u, v)
        if k < 0:
            return None
        return Link(*(column[k] for column in self.hop_lists()[1:]))

    def center(self, targets) -> int:
        """The live node with the least sum of path costs to ``targets`` (ties: smaller id)."""
        rows = [self._dist(t).tolist() for t in targets]
        totals = [(sum(row[i] for row in rows), u)
                  for i, u in enumerate(self.nodes) if self._alive_list[i]]
        return min(totals)[1]


def _acyclic_choice(before: list, dist: dict, node) -> int:
    """The next hop from ``node`` among networkx's equal-cost predecessors ``before``:
    the smallest id among those strictly closer to the destination, else (every one
    reached over zero-cost links) the first, through which Dijkstra reached ``node``.

    networkx also lists a predecessor at the same distance that it settled *after*
    ``node`` (a zero-cost link), so the smallest id alone can send two nodes to each
    other and a message back and forth for ever; the first-reached one was settled
    earlier, so following it always ends at the destination.

    >>> _acyclic_choice([3, 1], {1: 2.0, 3: 1.0, 7: 2.0}, 7)
    3
    >>> _acyclic_choice([5, 1], {1: 2.0, 5: 2.0, 7: 2.0}, 7)
    5
    """
    closer = [p for p in before if dist[p] < dist[node]]
    return min(closer) if closer else before[0]


def all_next_hops(starts: np.ndarray, p: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Every destination's next-hop table of one view (``routing_links()``), as an
    ``n x n`` int32 array: row ``d`` is what ``route(nodes[d])`` returns (the same
    compiled trees, so the rows equal them exactly; a test holds them equal)."""
    return route_kernel.all_tables(starts, p, w)


def prefetch_workers() -> int:
    """How many worker processes :class:`TreePrefetch` starts by default: one per core,
    at most 4."""
    return min(4, os.cpu_count() or 1)


class TreePrefetch:
    """Next-hop tables of the coming epochs of a :class:`Network`, computed in other
    processes while this one runs the current epoch.

    The compiled Dijkstra holds the GIL, so a thread gains nothing; processes do. Worth
    it only when a run asks for most trees of most epochs (see :func:`emulator.deliver`'s
    rule): a worker computes all of an epoch's trees, asked for or not. Epochs are
    submitted ``ahead`` at a time in order; the first route asked of a view waits for its
    epoch's tables, and an epoch that time skipped is cancelled if not started. The
    tables equal the trees built on demand, so a run's outputs are the same with or
    without prefetching, and whatever the number of workers.

    One worker per core (``workers``, by default :func:`prefetch_workers`), not one
    beside the caller: with 1,000 nodes an epoch's trees take longer than the hops of the
    epoch, so the caller mostly waits for them, and its core is better spent on the next
    epoch's trees (``benchmarks/bench_scale.py`` at 1,000 nodes: 43 s with one worker,
    half that with two on two cores).
    """

    def __init__(self, network: "Network", ahead: int = 3, workers: int | None = None):
        self.network = network
        workers = workers or prefetch_workers()
        self.ahead = max(ahead, workers + 1)   # every worker busy, one epoch in hand
        # fork: starts in milliseconds and does not run the caller's __main__ again
        # (spawn would, in any script without a main guard); the workers only compute
        context = multiprocessing.get_context(
            "fork" if "fork" in multiprocessing.get_all_start_methods() else None)
        self._executor = ProcessPoolExecutor(workers, mp_context=context)
        self._views: dict[int, NetView] = {}     # built to submit, not yet handed over
        self._futures: dict[int, Future] = {}
        self._submitted = -1                     # the last epoch submitted

    def view(self, k: int) -> NetView:
        """A new view of epoch ``k`` holding its prefetched tables (a Future), and the
        next ``ahead`` epochs submitted."""
        for old in [j for j in self._futures if j < k]:   # skipped: not worth computing
            self._futures.pop(old).cancel()
            self._views.pop(old, None)
        self.submit_until(k + self.ahead)
        view = self._views.pop(k, None) or self.network.build_view(k)
        view._prefetched = self._futures.pop(k, None)
        return view

    def submit_until(self, last: int) -> None:
        """Submit every epoch after the last submitted up to ``last``."""
        last = min(last, len(self.network.epochs) - 1)
        for k in range(self._submitted + 1, last + 1):
            view = self._views[k] = self.network.build_view(k)
            links = view.routing_links()
            if links is not None:
                self._futures[k] = self._executor.submit(all_next_hops, *links)
        self._submitted = max(self._submitted, last)

    def close(self) -> None:
        """Stop the worker processes (work not started is dropped)."""
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._futures.clear()
        self._views.clear()


class Network:
    """Routing views over the epochs of a :class:`topologies.Dynamics`, built lazily.

    A dynamics that can list an epoch's links as arrays (``link_table(index)``, as
    :class:`topologies.mobility.MobilityDynamics` does) gives its views without building a
    networkx graph; any other is read through ``snapshot``. Only the ``keep`` views used
    last are kept, with their trees (``keep`` >= 2: the transport looks one epoch ahead
    for the receiver's liveness while it routes in the current one); a view dropped is
    built again, identically, if an event of its time still asks. With ``prefetch``,
    worker processes compute every tree of the coming epochs (:class:`TreePrefetch`);
    :meth:`close` stops them.
    """

    def __init__(self, dynamics, keep: int = 3, prefetch: bool = False):
        self.dynamics = dynamics
        self.epochs = list(dynamics.epochs)
        # the dynamics' own epochs; self.epochs adds the instants nodes died (kill)
        self._dynamics_epochs = list(self.epochs)
        #: ``{node: time}``: nodes that died at run time (:meth:`kill`), for good.
        self.deaths: dict[int, float] = {}
        self.keep = keep
        self._views: OrderedDict[int, NetView] = OrderedDict()
        self._current = (math.inf, -math.inf, None)   # (start, end, view) last returned
        self._prefetch = None
        if prefetch:
            self._prefetch = TreePrefetch(self)
            # started now: the workers work while the caller sets up its run
            self._prefetch.submit_until(self._prefetch.ahead - 1)

    def close(self) -> None:
        """Stop the prefetching process, if any (views already built keep working)."""
        if self._prefetch is not None:
            self._prefetch.close()
            self._prefetch = None

    def epoch_index(self, t: float) -> int:
        """Index of the epoch in force at time ``t``."""
        return max(0, bisect.bisect_right(self.epochs, t) - 1)

    def view(self, t: float) -> NetView:
        """The routing view in force at time ``t``."""
        return self.view_span(t)[0]

    def view_span(self, t: float) -> tuple[NetView, float, float]:
        """``(view, start, end)``: the view in force at ``t`` and the epoch it holds for."""
        start, end, view = self._current
        if start <= t < end:
            return view, start, end
        k = self.epoch_index(t)
        view = self._views.get(k)
        if view is None:
            view = self.build_view(k) if self._prefetch is None else self._prefetch.view(k)
            self._views[k] = view
            if len(self._views) > self.keep:
                self._views.popitem(last=False)
        else:
            self._views.move_to_end(k)
        end = self.epochs[k + 1] if k + 1 < len(self.epochs) else math.inf
        self._current = (self.epochs[k], end, view)
        return view, self.epochs[k], end

    def build_view(self, k: int) -> NetView:
        """A new view of epoch ``k``, outside the cache (a caller that wants views of
        many epochs, such as the lookahead, leaves the transport's cached ones alone)."""
        start = self.epochs[k]
        if self.deaths:   # the dynamics' epoch in force, less the nodes dead by then
            b = max(0, bisect.bisect_right(self._dynamics_epochs, start) - 1)
            view = self._dynamics_view(b, start)
            dead = {n for n, t in self.deaths.items() if t <= start}
            return view.without(dead) if dead else view
        return self._dynamics_view(k, start)

    def _dynamics_view(self, b: int, start: float) -> NetView:
        """The view of the dynamics' epoch ``b``, starting at ``start``."""
        table = getattr(self.dynamics, "link_table", None)
        return NetView(start, *table(b)) if table is not None else \
            NetView.from_graph(self.dynamics.snapshot(self._dynamics_epochs[b]), start)

    def kill(self, nodes, t: float) -> None:
        """``nodes`` die at ``t``, for good (a battery ran out): every view from ``t`` on
        has them down and their links gone. ``t`` becomes an epoch start; views already
        built for later times are dropped, so the caller must not hold on to one (the
        transport forgets its own: :meth:`emulator.transport.Transport.forget_views`).

        >>> import networkx as nx
        >>> g = nx.path_graph(3)
        >>> class OneEpoch:
        ...     epochs = [0.0]
        ...     def snapshot(self, t): return g
        >>> net = Network(OneEpoch())
        >>> net.kill([1], 2.5)
        >>> net.epochs, net.view(1.0).path(0, 2), net.view(3.0).alive(1), net.view(3.0).path(0, 2)
        ([0.0, 2.5], [0, 1, 2], False, [])
        """
        if self._prefetch is not None:
            raise RuntimeError("Network.kill: prefetched trees follow the dynamics' "
                               "epochs; build the network without prefetch")
        new = [n for n in nodes if n not in self.deaths]
        if not new:
            return
        for n in new:
            self.deaths[n] = float(t)
        if t not in self.epochs:
            bisect.insort(self.epochs, float(t))
        self._views.clear()
        self._current = (math.inf, -math.inf, None)

    def next_change(self, t: float) -> float:
        """Time of the first epoch after ``t`` (inf if none)."""
        k = bisect.bisect_right(self.epochs, t)
        return self.epochs[k] if k < len(self.epochs) else math.inf
