"""Link-cost models: the cost of a link from the distance between its endpoints.

``hop``
    1 per link (hop count routing).
``distance``
    the Euclidean distance ``d``.
``distance2``
    ``d**2`` (energy-like: transmit power grows at least with the square of range).
``etx``
    an ETX-like expected transmission count. *Model choice* (not a measured radio): the
    delivery loss grows with the fourth power of the distance relative to the radio range,
    ``loss = min((d / radius)**4, ETX_MAX_LOSS)``, equal in both directions, and
    ``etx = 1 / (1 - loss)**2`` (De Couto et al.'s ``1 / (d_f * d_r)``). Clipping keeps a
    link at the edge of the range usable but expensive (``etx = 100``).

The model only sets ``cost``; a link's ``loss`` attribute (what the transport drops) is
left as it is.
"""
from __future__ import annotations

import networkx as nx
import numpy as np

from topologies.model import LINK_COST_MODELS, Topology

#: Highest loss the ``etx`` model assumes (so the cost stays finite at the range limit).
ETX_MAX_LOSS = 0.9


def check_model(model: str, radius: float | None = None) -> str:
    """Return ``model`` if it is known and has what it needs (``etx`` needs ``radius``).

    Examples
    --------
    >>> check_model("etx")
    Traceback (most recent call last):
    ...
    ValueError: link cost model 'etx' needs the radio range (radius)
    """
    if model not in LINK_COST_MODELS:
        raise ValueError(f"unknown link cost model {model!r}; valid: "
                         f"{', '.join(LINK_COST_MODELS)}")
    if model == "etx" and radius is None:
        raise ValueError("link cost model 'etx' needs the radio range (radius)")
    return model


def link_costs(model: str, distances: np.ndarray, radius: float | None = None) -> np.ndarray:
    """Costs of links of the given lengths under ``model`` (vectorised).

    Examples
    --------
    >>> d = np.array([0.0, 0.5, 1.0])
    >>> link_costs("distance2", d).tolist()
    [0.0, 0.25, 1.0]
    >>> link_costs("etx", d, radius=1.0).round(3).tolist()
    [1.0, 1.138, 100.0]
    """
    check_model(model, radius)
    distances = np.asarray(distances, dtype=float)
    if model == "hop":
        return np.ones_like(distances)
    if model == "distance":
        return distances.copy()
    if model == "distance2":
        return distances ** 2
    loss = np.minimum((distances / radius) ** 4, ETX_MAX_LOSS)
    return 1.0 / (1.0 - loss) ** 2


def apply_link_cost(graph: nx.Graph | Topology, model: str,
                    radius: float | None = None) -> nx.Graph | Topology:
    """A copy of ``graph`` whose link costs follow ``model``.

    Distances come from the node attribute ``pos``; ``hop`` needs none. A ``Topology``
    gives a ``Topology`` (remembering ``model`` and ``radius``; ``radius`` defaults to
    the topology's), a graph a graph.

    Raises
    ------
    ValueError
        Unknown model, ``etx`` without ``radius``, or a node without a position.

    Examples
    --------
    >>> g = nx.Graph()
    >>> g.add_node(0, pos=(0.0, 0.0)); g.add_node(1, pos=(3.0, 4.0)); g.add_edge(0, 1)
    >>> apply_link_cost(g, "distance").edges[0, 1]["cost"]
    5.0
    """
    topo = graph if isinstance(graph, Topology) else None
    if topo is not None and radius is None:
        radius = topo.radius
    check_model(model, radius)
    result = nx.Graph(graph.graph if topo is not None else graph)
    edges = list(result.edges)
    if model == "hop":
        costs = np.ones(len(edges))
    else:
        for node, pos in result.nodes(data="pos"):
            if pos is None:
                raise ValueError(f"link cost model {model!r} needs node positions; "
                                 f"node {node} has no pos")
        ends = np.array([[result.nodes[u]["pos"], result.nodes[v]["pos"]] for u, v in edges],
                        dtype=float).reshape(len(edges), 2, 2)
        costs = link_costs(model, np.linalg.norm(ends[:, 0] - ends[:, 1], axis=1), radius)
    for (u, v), cost in zip(edges, costs):
        result.edges[u, v]["cost"] = float(cost)
    if topo is None:
        return result
    return Topology(result, defaults=topo.defaults, radius=radius, link_cost=model)
