"""Topology generators: line, grid, random geometric (unit square), complete.

All links get the link defaults (``cost`` 1.0 unless ``complete`` draws costs); apply a
cost model with :func:`topologies.link_cost.apply_link_cost`. Random generators take
``seed`` (int or ``numpy.random.Generator``).
"""
from __future__ import annotations

from collections.abc import Mapping

import networkx as nx
import numpy as np

from topologies.errors import DisconnectedTopologyError
from topologies.model import Topology
from topologies.rng import as_generator
from topologies.values import BadValue, check_float, check_int


def _arg_int(name: str, value: object, low: int) -> int:
    try:
        return check_int(value, low=low)
    except BadValue as bad:
        raise ValueError(f"{name}: {bad}") from None


def line(n: int, *, defaults: Mapping[str, float] | None = None) -> Topology:
    """``n`` nodes in a row, one unit apart: ``0 - 1 - ... - n-1``.

    Examples
    --------
    >>> topo = line(4)
    >>> list(topo.graph.edges), topo.graph.nodes[3]["pos"]
    ([(0, 1), (1, 2), (2, 3)], (3.0, 0.0))
    """
    n = _arg_int("n", n, 1)
    graph = nx.path_graph(n)
    nx.set_node_attributes(graph, {i: (float(i), 0.0) for i in range(n)}, "pos")
    return Topology(graph, defaults=defaults)


def grid(rows: int, cols: int, *, defaults: Mapping[str, float] | None = None) -> Topology:
    """A ``rows x cols`` grid, one unit apart; node ``r * cols + c`` sits at ``(c, r)``.

    Examples
    --------
    >>> topo = grid(2, 3)
    >>> topo.graph.number_of_edges(), topo.graph.nodes[5]["pos"]
    (7, (2.0, 1.0))
    """
    rows, cols = _arg_int("rows", rows, 1), _arg_int("cols", cols, 1)
    graph = nx.Graph()
    for r in range(rows):
        for c in range(cols):
            node = r * cols + c
            graph.add_node(node, pos=(float(c), float(r)))
            if c > 0:
                graph.add_edge(node - 1, node)
            if r > 0:
                graph.add_edge(node - cols, node)
    return Topology(graph, defaults=defaults)


def geometric_edges(positions: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs ``(i, j)``, ``i < j``, of points at most ``radius`` apart, and distances.

    Examples
    --------
    >>> pairs, dist = geometric_edges(np.array([[0, 0], [0.3, 0.4], [2, 2]]), 0.5)
    >>> pairs.tolist(), dist.tolist()
    ([[0, 1]], [0.5])
    """
    diff = positions[:, None, :] - positions[None, :, :]
    dist = np.sqrt((diff ** 2).sum(axis=-1))
    i, j = np.triu_indices(len(positions), k=1)
    keep = dist[i, j] <= radius
    pairs = np.stack([i[keep], j[keep]], axis=1)
    return pairs, dist[i[keep], j[keep]]


def random_geometric(n: int, radius: float, seed: int | np.random.Generator,
                     max_attempts: int = 100, *,
                     defaults: Mapping[str, float] | None = None) -> Topology:
    """``n`` nodes uniform on the unit square, linked when at most ``radius`` apart.

    Positions are redrawn (from the same generator) until the graph is connected.

    Raises
    ------
    DisconnectedTopologyError
        No connected graph in ``max_attempts`` draws.

    Examples
    --------
    >>> topo = random_geometric(20, 0.4, seed=1)
    >>> topo.is_connected(), topo.radius, len(topo.nodes)
    (True, 0.4, 20)
    >>> topo == random_geometric(20, 0.4, seed=1)
    True
    """
    n = _arg_int("n", n, 1)
    max_attempts = _arg_int("max_attempts", max_attempts, 1)
    try:
        radius = check_float(radius, low=0.0, low_open=True)
    except BadValue as bad:
        raise ValueError(f"radius: {bad}") from None
    rng = as_generator(seed)
    for _ in range(max_attempts):
        positions = rng.random((n, 2))
        pairs, _dist = geometric_edges(positions, radius)
        graph = nx.Graph()
        graph.add_nodes_from((i, {"pos": (float(x), float(y))})
                             for i, (x, y) in enumerate(positions))
        graph.add_edges_from(pairs.tolist())
        if nx.is_connected(graph):
            return Topology(graph, defaults=defaults, radius=radius)
    raise DisconnectedTopologyError(n, radius, max_attempts)


def complete(n: int, cost_range: tuple[int, int] = (1, 10), *,
             seed: int | np.random.Generator,
             defaults: Mapping[str, float] | None = None) -> Topology:
    """Every pair of ``n`` nodes linked, integer costs uniform in ``cost_range`` (inclusive).

    The setup of the SMJ experiments: sites with random pairwise transmission costs.
    Nodes have no positions.

    Examples
    --------
    >>> topo = complete(4, (1, 3), seed=7)
    >>> topo.graph.number_of_edges()
    6
    >>> {c for _, _, c in topo.graph.edges(data="cost")} <= {1.0, 2.0, 3.0}
    True
    """
    n = _arg_int("n", n, 1)
    if not (isinstance(cost_range, (tuple, list)) and len(cost_range) == 2):
        raise ValueError(f"cost_range: expected [low, high], got {cost_range!r}")
    low = _arg_int("cost_range[0]", cost_range[0], 0)
    high = _arg_int("cost_range[1]", cost_range[1], low)
    rng = as_generator(seed)
    graph = nx.complete_graph(n)
    costs = rng.integers(low, high, size=graph.number_of_edges(), endpoint=True)
    for (u, v), cost in zip(graph.edges, costs):
        graph.edges[u, v]["cost"] = float(cost)
    return Topology(graph, defaults=defaults)
