"""The network description: :class:`Topology` and least-cost path matrices.

A ``Topology`` is an undirected ``networkx.Graph`` with integer node ids, an optional
``pos=(x, y)`` per node and five float attributes per link (``cost``, ``delay``,
``jitter``, ``bandwidth``, ``loss``). It only describes; the emulator runs it.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping

import networkx as nx
import numpy as np

from topologies.values import BadValue, check_int, check_link_attribute, check_position

#: Link attributes every link carries, with the value used when none is given.
LINK_DEFAULTS: dict[str, float] = {
    "cost": 1.0,
    "delay": 0.01,
    "jitter": 0.0,
    "bandwidth": math.inf,
    "loss": 0.0,
}

#: Names of the link-cost models (implemented in :mod:`topologies.link_cost`).
LINK_COST_MODELS = ("hop", "distance", "distance2", "etx")


def link_defaults(overrides: Mapping[str, object] | None = None) -> dict[str, float]:
    """:data:`LINK_DEFAULTS` with ``overrides`` applied and checked.

    Examples
    --------
    >>> link_defaults({"delay": 0.5})["delay"]
    0.5
    >>> link_defaults({"speed": 1})
    Traceback (most recent call last):
    ...
    ValueError: unknown link attribute 'speed'; valid: bandwidth, cost, delay, jitter, loss
    """
    defaults = dict(LINK_DEFAULTS)
    for name, value in (overrides or {}).items():
        if name not in LINK_DEFAULTS:
            raise ValueError(f"unknown link attribute {name!r}; valid: "
                             f"{', '.join(sorted(LINK_DEFAULTS))}")
        try:
            defaults[name] = check_link_attribute(name, value)
        except BadValue as bad:
            raise ValueError(f"link default {name}: {bad}") from None
    return defaults


class Topology:
    """An immutable network description wrapping an undirected ``networkx.Graph``.

    Parameters
    ----------
    graph : networkx.Graph
        Nodes are ints; node attribute ``pos`` is optional; link attributes are any of
        :data:`LINK_DEFAULTS` (missing ones take ``defaults``). The graph is copied.
    defaults : mapping, optional
        Overrides of :data:`LINK_DEFAULTS` for links that lack an attribute. Kept, so
        that links created later (mobility, schedules) get the same values.
    radius : float, optional
        Radio range the topology was built with (used when nodes move).
    link_cost : str, optional
        Name of the link-cost model the costs come from (see :mod:`topologies.link_cost`),
        ``None`` when costs were given directly.

    Raises
    ------
    ValueError
        A non-int node id, a bad position, an unknown link attribute or a value out of
        range; the message names the node or link.

    Examples
    --------
    >>> g = nx.Graph([(0, 1), (1, 2)])
    >>> topo = Topology(g, defaults={"delay": 0.5})
    >>> topo.nodes, topo.graph.edges[0, 1]["delay"], topo.graph.edges[0, 1]["cost"]
    ([0, 1, 2], 0.5, 1.0)
    >>> topo
    Topology(3 nodes, 2 links)
    """

    def __init__(self, graph: nx.Graph, *, defaults: Mapping[str, object] | None = None,
                 radius: float | None = None, link_cost: str | None = None):
        if graph.is_directed() or graph.is_multigraph():
            raise ValueError("topology graph: expected an undirected simple nx.Graph")
        self.defaults = link_defaults(defaults)
        if radius is not None and not (isinstance(radius, (int, float))
                                       and math.isfinite(radius) and radius > 0):
            raise ValueError(f"topology radius: expected a number > 0, got {radius!r}")
        self.radius = None if radius is None else float(radius)
        if link_cost is not None and link_cost not in LINK_COST_MODELS:
            raise ValueError(f"topology link_cost: expected one of "
                             f"{', '.join(LINK_COST_MODELS)}, got {link_cost!r}")
        self.link_cost = link_cost
        clean = nx.Graph()
        for node, attrs in sorted(graph.nodes(data=True), key=lambda item: _node_key(item[0])):
            node = _check_node(node)
            unknown = set(attrs) - {"pos"}
            if unknown:
                raise ValueError(f"node {node}: unknown attribute(s) {sorted(unknown)}; "
                                 f"valid: pos")
            clean.add_node(node)
            if "pos" in attrs:
                try:
                    clean.nodes[node]["pos"] = check_position(attrs["pos"])
                except BadValue as bad:
                    raise ValueError(f"node {node}: pos: {bad}") from None
        for u, v, attrs in graph.edges(data=True):
            if u == v:
                raise ValueError(f"link ({u}, {v}): expected two different nodes")
            unknown = set(attrs) - set(LINK_DEFAULTS)
            if unknown:
                raise ValueError(f"link ({u}, {v}): unknown attribute(s) {sorted(unknown)};"
                                 f" valid: {', '.join(sorted(LINK_DEFAULTS))}")
            clean_attrs = {}
            for name, default in self.defaults.items():
                try:
                    clean_attrs[name] = check_link_attribute(name, attrs.get(name, default))
                except BadValue as bad:
                    raise ValueError(f"link ({u}, {v}): {name}: {bad}") from None
            clean.add_edge(u, v, **clean_attrs)
        self.graph: nx.Graph = nx.freeze(clean)

    @property
    def nodes(self) -> list[int]:
        """Node ids, sorted."""
        return list(self.graph.nodes)

    @property
    def positions(self) -> dict[int, tuple[float, float]]:
        """``{node: (x, y)}`` for the nodes that have a position."""
        return {n: p for n, p in self.graph.nodes(data="pos") if p is not None}

    def is_connected(self) -> bool:
        """True when every node can reach every other (an empty graph is not)."""
        return self.graph.number_of_nodes() > 0 and nx.is_connected(self.graph)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Topology):
            return NotImplemented
        return (self.defaults == other.defaults and self.radius == other.radius
                and self.link_cost == other.link_cost
                and dict(self.graph.nodes(data=True)) == dict(other.graph.nodes(data=True))
                and _edge_dict(self.graph) == _edge_dict(other.graph))

    __hash__ = None  # equal topologies need not hash alike; they are not dict keys

    def __repr__(self) -> str:
        return (f"Topology({self.graph.number_of_nodes()} nodes, "
                f"{self.graph.number_of_edges()} links)")


def topology_settings(topo: Topology) -> dict:
    """The settings a run of ``topo`` uses, resolved: node and link counts, the cost
    model (``None``: the costs the links were given), the radio range, the link defaults
    (links that give no value of their own, and links that mobility or a schedule makes,
    take them) and how many nodes have a position.

    Examples
    --------
    >>> topology_settings(Topology(nx.Graph([(0, 1)]), defaults={"delay": 0.5}))
    {'nodes': 2, 'links': 1, 'link_cost': None, 'radius': None, 'delay': 0.5, 'jitter': 0.0, 'bandwidth': inf, 'loss': 0.0, 'nodes_with_position': 0}
    """
    defaults = {name: topo.defaults[name] for name in LINK_DEFAULTS if name != "cost"}
    return {"nodes": topo.graph.number_of_nodes(), "links": topo.graph.number_of_edges(),
            "link_cost": topo.link_cost, "radius": topo.radius, **defaults,
            "nodes_with_position": len(topo.positions)}


def _node_key(node: object) -> tuple:
    # Sort ints numerically and anything else (about to be rejected) after them.
    return (0, node, "") if isinstance(node, int) else (1, 0, repr(node))


def _check_node(node: object) -> int:
    try:
        return check_int(node)
    except BadValue:
        raise ValueError(f"node id {node!r}: expected an integer") from None


def _edge_dict(graph: nx.Graph) -> dict:
    return {(min(u, v), max(u, v)): attrs for u, v, attrs in graph.edges(data=True)}


def path_cost_matrix(topo_or_graph: Topology | nx.Graph, nodes: Iterable[int],
                     weight: str | Callable = "cost") -> np.ndarray:
    """Least path cost between every pair of ``nodes`` (``inf`` where unreachable).

    Parameters
    ----------
    topo_or_graph : Topology or networkx.Graph
        The network (for example a :meth:`Dynamics.snapshot`).
    nodes : iterable of int
        Row/column order of the matrix.
    weight : str or callable
        Link attribute to add up, or a networkx weight function ``f(u, v, attrs)``.

    Examples
    --------
    >>> g = nx.Graph()
    >>> g.add_edge(0, 1, cost=2.0); g.add_edge(1, 2, cost=3.0); g.add_node(3)
    >>> path_cost_matrix(g, [0, 2, 3])
    array([[ 0.,  5., inf],
           [ 5.,  0., inf],
           [inf, inf,  0.]])
    """
    graph = topo_or_graph.graph if isinstance(topo_or_graph, Topology) else topo_or_graph
    order = list(nodes)
    if len(set(order)) != len(order):
        raise ValueError(f"path_cost_matrix: nodes listed twice in {order}")
    missing = [n for n in order if n not in graph]
    if missing:
        raise ValueError(f"path_cost_matrix: nodes {missing} are not in the graph")
    matrix = np.full((len(order), len(order)), np.inf)
    index = {n: i for i, n in enumerate(order)}
    for i, source in enumerate(order):
        lengths = nx.single_source_dijkstra_path_length(graph, source, weight=weight)
        for target, length in lengths.items():
            j = index.get(target)
            if j is not None:
                matrix[i, j] = length
    return matrix
