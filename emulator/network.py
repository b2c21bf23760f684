"""Least-cost routing over a time-varying topology.

A :class:`Network` turns :class:`topologies.Dynamics` into one :class:`NetView` per epoch:
all-pairs least path costs (networkx's Floyd–Warshall on numpy) and next hops. Views are
built lazily and cached, so a run pays only for the epochs its messages touch.

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

#: Link attributes the transport reads, with the value used where a link gives none.
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

    ``dist[i, j]`` is the least path cost between ``nodes[i]`` and ``nodes[j]`` (inf where
    unreachable); ``next_hop[i, j]`` the index of the first node on that path (-1 where
    none). Dead nodes neither send, receive nor forward.
    """

    def __init__(self, epoch_start, nodes, alive, dist, next_hop, links):
        self.epoch_start = float(epoch_start)
        self.nodes = tuple(nodes)
        self._index = {u: i for i, u in enumerate(self.nodes)}
        self._alive = np.asarray(alive, dtype=bool)
        self.dist = dist
        self.next_hop_index = next_hop
        self._links = links
        # Plain-Python tables for the transport's per-hop lookups (numpy scalar indexing
        # costs more than the rest of a hop).
        ids = np.asarray(self.nodes + (-1,))
        self._next_rows = {u: dict(zip(self.nodes, ids[next_hop[i]].tolist()))
                           for i, u in enumerate(self.nodes)}
        self._alive_map = dict(zip(self.nodes, self._alive.tolist()))

    @classmethod
    def from_graph(cls, graph: nx.Graph, epoch_start: float = 0.0) -> "NetView":
        """Compute the view of ``graph`` (edge attrs as in :data:`LINK_DEFAULTS`, plus
        ``up``; node attr ``alive``, default True)."""
        nodes = sorted(graph.nodes)
        alive = [bool(graph.nodes[u].get("alive", True)) for u in nodes]
        dead = {u for u, ok in zip(nodes, alive) if not ok}
        edges = [(u, v, d) for u, v, d in graph.edges(data=True)
                 if d.get("up", True) and u not in dead and v not in dead]
        if len(edges) != graph.number_of_edges():
            # Routing must not see links that are down or touch a dead node.
            graph = nx.Graph()
            graph.add_nodes_from(nodes)
            graph.add_edges_from(edges)
        dist = nx.floyd_warshall_numpy(graph, nodelist=nodes, weight="cost")
        adjacency = nx.to_numpy_array(graph, nodelist=nodes, weight="cost", nonedge=np.inf)
        next_hop = _next_hops(adjacency, dist)
        links = {}
        for u, v, d in edges:
            link = Link(*(float(d.get(k, LINK_DEFAULTS[k])) for k in LINK_DEFAULTS))
            links[(u, v)] = links[(v, u)] = link
        return cls(epoch_start, nodes, alive, dist, next_hop, links)

    def alive(self, u: int) -> bool:
        """Whether node ``u`` is up in this epoch."""
        return self._alive_map[u]

    def cost(self, u: int, v: int) -> float:
        """Least path cost from ``u`` to ``v`` (0 for u == v, inf if unreachable)."""
        return float(self.dist[self._index[u], self._index[v]])

    def cost_matrix(self, nodes) -> np.ndarray:
        """``W[i][j]`` = least path cost between ``nodes[i]`` and ``nodes[j]``."""
        idx = [self._index[u] for u in nodes]
        return self.dist[np.ix_(idx, idx)].copy()

    def next_hop(self, u: int, v: int) -> int | None:
        """The neighbour of ``u`` on the least-cost path to ``v``, or None."""
        nxt = self._next_rows[u][v]
        return None if nxt < 0 else nxt

    def path(self, u: int, v: int) -> list[int]:
        """Nodes on the least-cost path from ``u`` to ``v`` ([] if unreachable)."""
        if u == v:
            return [u]
        path = [u]
        while path[-1] != v:
            nxt = self.next_hop(path[-1], v)
            if nxt is None:
                return []
            path.append(nxt)
        return path

    def hops(self, u: int, v: int) -> int:
        """Number of hops on the least-cost path (-1 if unreachable)."""
        return len(self.path(u, v)) - 1

    def link(self, u: int, v: int) -> Link | None:
        """Attributes of the link ``u -> v`` if it is up in this epoch."""
        return self._links.get((u, v))

    def center(self, targets) -> int:
        """The live node with the least sum of path costs to ``targets`` (ties: smaller id)."""
        idx = [self._index[t] for t in targets]
        totals = self.dist[:, idx].sum(axis=1)
        totals = np.where(self._alive, totals, np.inf)
        return self.nodes[int(np.argmin(totals))]


def _next_hops(adjacency: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """First hop (as an index) of a least-cost path for every pair: the neighbour ``w``
    of ``u`` minimising ``cost(u, w) + dist[w, v]`` (ties: the smaller index); -1 where
    there is no path, ``u`` itself on the diagonal."""
    n = len(dist)
    next_hop = np.full((n, n), -1, dtype=np.int32)
    np.fill_diagonal(adjacency, np.inf)   # a node is not its own neighbour
    for i in range(n):
        nbrs = np.flatnonzero(np.isfinite(adjacency[i]))
        if nbrs.size == 0:
            continue
        via = adjacency[i, nbrs][:, None] + dist[nbrs, :]
        best = np.argmin(via, axis=0)
        reachable = np.isfinite(via[best, np.arange(n)])
        next_hop[i] = np.where(reachable, nbrs[best], -1)
        next_hop[i, i] = i
    return next_hop


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
