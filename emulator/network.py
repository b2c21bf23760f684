"""Least-cost routing over a time-varying topology.

A :class:`Network` turns :class:`topologies.Dynamics` into one :class:`NetView` per epoch:
least path costs from SciPy's Dijkstra (compiled; networkx's took a second per 100
destinations on a 1,000-node graph) and next hops from them, one tree per destination,
built when first asked for. Views are built lazily and cached too, so a run pays only for
the epochs and destinations its messages touch.

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
from dataclasses import dataclass

import networkx as nx
import numpy as np
from scipy.sparse import csr_array
from scipy.sparse.csgraph import dijkstra

#: Link attributes the transport reads, with the value used where a link gives none
#: (spelled out again in NetView.from_graph, the hot loop of an epoch's build).
LINK_DEFAULTS = {"cost": 1.0, "delay": 0.01, "jitter": 0.0, "bandwidth": math.inf, "loss": 0.0}


@dataclass(frozen=True)
class Link:
    """A directed link's attributes at one epoch."""

    cost: float
    delay: float
    jitter: float
    bandwidth: float
    loss: float


class NetView:
    """A frozen, picklable snapshot of routing at one epoch.

    Least-cost trees are computed lazily, one per destination (Dijkstra on the usable
    links), and cached: traffic usually goes to a few destinations, so an epoch costs a
    few shortest-path trees rather than all pairs. Dead nodes neither send, receive nor
    forward. Ties between equal-cost next hops go to the smaller node id: the next hop
    from ``u`` is the smallest neighbour ``p`` with ``cost(p) + w(u, p) == cost(u)``,
    exactly as networkx's list of equal-cost predecessors gives it.
    """

    def __init__(self, epoch_start, graph: nx.Graph, alive: dict, links: dict):
        self.epoch_start = float(epoch_start)
        self.nodes = tuple(sorted(graph.nodes))
        self._graph = graph
        self._alive_map = alive
        self._links = links
        self._trees: dict[int, tuple[dict, dict]] = {}
        # the usable links as arrays (both directions) and a sparse matrix, for Dijkstra
        self._index = {u: k for k, u in enumerate(self.nodes)}
        self._ids = np.array(self.nodes, dtype=np.int64)
        edges = [(self._index[u], self._index[v], d["cost"])
                 for u, v, d in graph.edges(data=True)]
        tail = np.array([e[0] for e in edges], dtype=np.int64)
        head = np.array([e[1] for e in edges], dtype=np.int64)
        cost = np.array([e[2] for e in edges], dtype=float)
        self._u = np.concatenate([tail, head])
        self._p = np.concatenate([head, tail])
        self._w = np.concatenate([cost, cost])
        n = len(self.nodes)
        # SciPy reads an explicit 0 in a sparse matrix as "no edge": a zero-cost link is
        # routed by networkx instead (costs here are positive in every generator)
        self._scipy = bool(edges) and bool((self._w > 0).all())
        self._matrix = csr_array((self._w, (self._u, self._p)), shape=(n, n)) \
            if self._scipy else None

    @classmethod
    def from_graph(cls, graph: nx.Graph, epoch_start: float = 0.0) -> "NetView":
        """The view of ``graph`` (edge attrs as in :data:`LINK_DEFAULTS`, plus ``up``;
        node attr ``alive``, default True)."""
        alive = {u: bool(graph.nodes[u].get("alive", True)) for u in graph.nodes}
        usable = nx.Graph()
        usable.add_nodes_from(sorted(graph.nodes))
        links = {}
        for u, v, d in graph.edges(data=True):
            if d.get("up", True) and alive[u] and alive[v]:
                get = d.get
                link = Link(float(get("cost", 1.0)), float(get("delay", 0.01)),
                            float(get("jitter", 0.0)), float(get("bandwidth", math.inf)),
                            float(get("loss", 0.0)))
                usable.add_edge(u, v, cost=link.cost)
                links[(u, v)] = links[(v, u)] = link
        return cls(epoch_start, usable, alive, links)

    def _tree(self, dst: int) -> tuple[dict, dict]:
        """``(distance to dst, next hop towards dst)`` for every node that reaches ``dst``."""
        tree = self._trees.get(dst)
        if tree is None:
            tree = self._trees[dst] = self._scipy_tree(dst) if self._scipy else \
                self._networkx_tree(dst)
        return tree

    def _scipy_tree(self, dst: int) -> tuple[dict, dict]:
        d = self._index[dst]
        # the matrix holds both directions: a directed search from dst is the undirected
        # one without SciPy symmetrising the matrix on every call
        cost = dijkstra(self._matrix, directed=True, indices=d)
        on_path = np.isfinite(cost[self._u]) & (self._u != d) & \
            (cost[self._p] + self._w == cost[self._u])
        n = len(self.nodes)
        best = np.full(n, n, dtype=np.int64)
        np.minimum.at(best, self._u[on_path], self._p[on_path])
        ids = self._ids
        reach = np.flatnonzero(np.isfinite(cost))
        dist = dict(zip(ids[reach].tolist(), cost[reach].tolist()))
        hop = reach[best[reach] < n]
        towards = dict(zip(ids[hop].tolist(), ids[best[hop]].tolist()))
        towards[dst] = dst
        return dist, towards

    def _networkx_tree(self, dst: int) -> tuple[dict, dict]:
        pred, dist = nx.dijkstra_predecessor_and_distance(self._graph, dst, weight="cost")
        towards = {u: min(p) for u, p in pred.items() if p}
        towards[dst] = dst
        return dist, towards

    def forget_trees(self) -> None:
        """Drop the cached least-cost trees (they are rebuilt when asked for again)."""
        self._trees.clear()

    def alive(self, u: int) -> bool:
        """Whether node ``u`` is up in this epoch."""
        return self._alive_map[u]

    def cost(self, u: int, v: int) -> float:
        """Least path cost from ``u`` to ``v`` (0 for u == v, inf if unreachable)."""
        return float(self._tree(v)[0].get(u, math.inf))

    def cost_matrix(self, nodes) -> np.ndarray:
        """``W[i][j]`` = least path cost between ``nodes[i]`` and ``nodes[j]``."""
        nodes = list(nodes)
        w = np.empty((len(nodes), len(nodes)))
        for j, v in enumerate(nodes):
            dist = self._tree(v)[0]
            w[:, j] = [dist.get(u, math.inf) for u in nodes]
        return w

    def next_hop(self, u: int, v: int) -> int | None:
        """The neighbour of ``u`` on the least-cost path to ``v``, or None."""
        return self._tree(v)[1].get(u)

    def next_hops_towards(self, v: int) -> dict:
        """``{u: next hop from u towards v}`` for every node that reaches ``v`` (a table
        the transport keeps while the epoch lasts instead of asking hop by hop)."""
        return self._tree(v)[1]

    def path(self, u: int, v: int) -> list[int]:
        """Nodes on the least-cost path from ``u`` to ``v`` ([] if unreachable)."""
        towards = self._tree(v)[1]
        if u not in towards:
            return []
        path = [u]
        while path[-1] != v:
            path.append(towards[path[-1]])
        return path

    def hops(self, u: int, v: int) -> int:
        """Number of hops on the least-cost path (-1 if unreachable)."""
        return len(self.path(u, v)) - 1

    def neighbors(self, u: int) -> list[int]:
        """The nodes ``u`` has a link to that is up in this epoch."""
        return list(self._graph.neighbors(u))

    def link(self, u: int, v: int) -> Link | None:
        """Attributes of the link ``u -> v`` if it is up in this epoch."""
        return self._links.get((u, v))

    def center(self, targets) -> int:
        """The live node with the least sum of path costs to ``targets`` (ties: smaller id)."""
        trees = [self._tree(t)[0] for t in targets]
        totals = [(sum(d.get(u, math.inf) for d in trees), u)
                  for u in self.nodes if self._alive_map[u]]
        return min(totals)[1]


class Network:
    """Routing views over the epochs of a :class:`topologies.Dynamics`, built lazily."""

    def __init__(self, dynamics):
        self.dynamics = dynamics
        self.epochs = list(dynamics.epochs)
        self._views: dict[int, NetView] = {}
        self._current = (math.inf, -math.inf, None)   # (start, end, view) last returned

    def epoch_index(self, t: float) -> int:
        """Index of the epoch in force at time ``t``."""
        return max(0, bisect.bisect_right(self.epochs, t) - 1)

    def view(self, t: float) -> NetView:
        """The routing view in force at time ``t``."""
        start, end, view = self._current
        if start <= t < end:
            return view
        k = self.epoch_index(t)
        if view is not None:
            # time moves on: the trees of the epoch left behind are built again if an
            # event of its time still asks (bounds memory to about one epoch's trees)
            view.forget_trees()
        if k not in self._views:
            start = self.epochs[k]
            self._views[k] = NetView.from_graph(self.dynamics.snapshot(start), start)
        end = self.epochs[k + 1] if k + 1 < len(self.epochs) else math.inf
        self._current = (self.epochs[k], end, self._views[k])
        return self._views[k]

    def next_change(self, t: float) -> float:
        """Time of the first epoch after ``t`` (inf if none)."""
        k = bisect.bisect_right(self.epochs, t)
        return self.epochs[k] if k < len(self.epochs) else math.inf
