"""What a topology file states, and the one place it becomes a :class:`Topology`.

Both readers (:mod:`topologies.node_link`, :mod:`topologies.graphml`) parse a file into a
:class:`TopologyFile`: its graph with only the link attributes each link gives, and the
file's own settings (``link_cost``, ``radius``, link defaults). :meth:`TopologyFile.
topology` resolves them the same way for every format:

- a link attribute a link does not give takes the caller's default (a spec's
  ``[topology]`` ``delay``, ...), else the file's own default, else
  :data:`~topologies.model.LINK_DEFAULTS`;
- when the file names a ``link_cost`` model, every link's cost follows it (so the costs
  always agree with the ``link_cost`` the topology reports). A cost the file also
  writes on a link must agree with the model's within :data:`COST_TOLERANCE`, and is
  kept as written; one that does not is an error naming the link.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import networkx as nx

from topologies.errors import TopologyFileError
from topologies.link_cost import apply_link_cost
from topologies.model import Topology

#: Relative difference allowed between a cost a file writes on a link and the cost its
#: ``link_cost`` model gives that link: costs rounded to four significant digits agree.
COST_TOLERANCE = 1e-3


@dataclass(frozen=True)
class TopologyFile:
    """A parsed topology file, before any caller's settings are applied.

    Attributes
    ----------
    path : str
        The file, as given (for error messages).
    graph : networkx.Graph
        Nodes (with ``pos`` where the file gives one) and links with only the attributes
        the file writes on each link.
    radius, link_cost : optional
        The file's own radio range and cost model (``None`` where it names none).
    defaults : dict
        The file's own link defaults (only those it states).
    node_fields, cost_fields : dict
        Where a node's position (``nodes[3].pos``) and a link's cost (``links[4].cost``,
        keyed by ``frozenset({u, v})``) are in the file, for error messages.

    Examples
    --------
    >>> g = nx.Graph()
    >>> g.add_node(0, pos=(0.0, 0.0)); g.add_node(1, pos=(0.3, 0.4)); g.add_edge(0, 1)
    >>> stated = TopologyFile("net.json", g, link_cost="distance",
    ...                       defaults={"delay": 0.02})
    >>> topo = stated.topology()
    >>> topo.link_cost, topo.graph.edges[0, 1]["cost"], topo.graph.edges[0, 1]["delay"]
    ('distance', 0.5, 0.02)
    >>> stated.topology(defaults={"delay": 0.05}).graph.edges[0, 1]["delay"]
    0.05
    >>> stated.settings
    {'link_cost': 'distance', 'delay': 0.02}
    """

    path: str
    graph: nx.Graph
    radius: float | None = None
    link_cost: str | None = None
    defaults: Mapping[str, float] = field(default_factory=dict)
    node_fields: Mapping[int, str] = field(default_factory=dict, repr=False)
    cost_fields: Mapping[frozenset, str] = field(default_factory=dict, repr=False)

    @property
    def settings(self) -> dict:
        """The settings the file states: ``link_cost``, ``radius`` and its link defaults,
        only those it gives."""
        named = {"link_cost": self.link_cost, "radius": self.radius}
        return {**{k: v for k, v in named.items() if v is not None}, **self.defaults}

    def topology(self, defaults: Mapping[str, float] | None = None) -> Topology:
        """The topology the file describes; ``defaults`` (the caller's) take precedence
        over the file's own link defaults for links that give no value.

        Raises
        ------
        TopologyFileError
            The file's ``link_cost`` model cannot be applied (a node without a position,
            ``etx`` without ``graph.radius``) or contradicts a cost written on a link.
        """
        topo = Topology(self.graph, defaults={**self.defaults, **(defaults or {})},
                        radius=self.radius, link_cost=self.link_cost)
        if self.link_cost is None:
            return topo
        return self._costs_from_model(topo)

    def _costs_from_model(self, topo: Topology) -> Topology:
        model = self.link_cost
        if model != "hop":
            for node, pos in self.graph.nodes(data="pos"):
                if pos is None:
                    where = self.node_fields.get(node, f"node {node}")
                    raise TopologyFileError(self.path, where, f"a position (graph.link_cost "
                                            f"{model!r} needs one on every node)")
        if model == "etx" and self.radius is None:
            raise TopologyFileError(self.path, "graph.radius", "the radio range "
                                    "(graph.link_cost 'etx' needs it)")
        graph = nx.Graph(apply_link_cost(topo, model).graph)
        for u, v, given in self.graph.edges(data="cost"):
            if given is None:
                continue
            cost = graph.edges[u, v]["cost"]
            if not math.isclose(given, cost, rel_tol=COST_TOLERANCE, abs_tol=1e-12):
                where = self.cost_fields.get(frozenset((u, v)), f"link ({u}, {v}).cost")
                raise TopologyFileError(self.path, where, f"{cost:.6g}, the cost graph."
                                        f"link_cost {model!r} gives this link", got=given)
            # Kept as written: a hand-written 0.3 stays 0.3, not the model's
            # 0.30000000000000004, so routes (and results) do not move by a rounding.
            graph.edges[u, v]["cost"] = given
        return Topology(graph, defaults=topo.defaults, radius=topo.radius, link_cost=model)
