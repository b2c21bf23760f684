"""Drawing a topology to an image file (matplotlib, no display needed)."""
from __future__ import annotations

from os import PathLike

import networkx as nx
from matplotlib.figure import Figure

from topologies.model import Topology

#: Graphs with at most this many links get their costs written on the links.
LABEL_LINKS_UP_TO = 60


def draw_topology(topo: Topology, path: str | PathLike, *, title: str | None = None) -> None:
    """Draw ``topo`` into ``path`` (format from the extension, e.g. ``.png``).

    Nodes sit at their ``pos`` (a seeded spring layout when some node has none); link
    costs are printed on small graphs (up to :data:`LABEL_LINKS_UP_TO` links).
    """
    graph = topo.graph
    positions = topo.positions
    if len(positions) != graph.number_of_nodes():
        positions = nx.spring_layout(graph, seed=0)
    # A bare Figure renders with the Agg canvas: no pyplot state, no display needed.
    fig = Figure(figsize=(6, 6), dpi=100)
    ax = fig.subplots()
    nx.draw_networkx(graph, positions, ax=ax, node_size=250, font_size=8,
                     node_color="#9ecae1", edge_color="#555555")
    if graph.number_of_edges() <= LABEL_LINKS_UP_TO:
        labels = {(u, v): f"{c:g}" for u, v, c in graph.edges(data="cost")}
        nx.draw_networkx_edge_labels(graph, positions, edge_labels=labels, ax=ax,
                                     font_size=7)
    ax.set_title(title or repr(topo))
    ax.set_aspect("equal")
    fig.savefig(path)
