"""Topologies as GraphML files.

Node data keys ``x`` and ``y`` (both or neither) give ``pos``; edge data keys are the link
attributes (``cost``, ``delay``, ``jitter``, ``bandwidth``, ``loss``; ``inf`` allowed for
bandwidth); graph data keys ``radius`` and ``link_cost``. An edge key's ``<default>`` is the
file's link default (as ``graph.defaults`` in JSON: a caller's defaults, e.g. a spec's,
come first), and a ``link_cost`` model sets every link's cost from the node positions (see
:mod:`topologies.topology_file`). Node ids must be integers. Keys naming any other
attribute are errors, so a misspelt attribute is never silently ignored. Errors name the
element in document order, e.g. ``edge[4].cost``; XML syntax errors name the line.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from os import PathLike

import networkx as nx

from topologies.errors import TopologyFileError, check_new_link
from topologies.model import LINK_COST_MODELS, LINK_DEFAULTS, Topology
from topologies.topology_file import TopologyFile
from topologies.values import BadValue, check_float, check_int, check_link_attribute

NAMESPACE = "http://graphml.graphdrawing.org/xmlns"
_VALID = {"node": {"x", "y"}, "edge": set(LINK_DEFAULTS), "graph": {"radius", "link_cost"}}


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def read_graphml(path: str | PathLike, *, defaults: Mapping[str, float] | None = None
                 ) -> Topology:
    """Read a GraphML topology file; ``defaults`` (the caller's link defaults) come before
    the file's edge key defaults.

    Raises
    ------
    TopologyFileError
        Malformed XML (with its line), a directed graph, a non-integer or repeated node
        id, an edge to an unknown node, an unknown attribute or a bad value, or a
        ``link_cost`` model the file cannot follow (see :class:`TopologyFile`).
    """
    return parse_graphml(path).topology(defaults)


def parse_graphml(path: str | PathLike) -> TopologyFile:
    """What a GraphML topology file states (see :class:`TopologyFile`), checked."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as err:
        line, column = err.position
        reason = str(err).split(":")[0]
        raise TopologyFileError(path, line,
                                f"well-formed GraphML XML ({reason}, column {column + 1})"
                                ) from None
    if _local(root.tag) != "graphml":
        raise TopologyFileError(path, "root element", "<graphml>", got=_local(root.tag))
    keys: dict[str, tuple[str, str]] = {}   # key id -> (domain, attribute name)
    key_defaults = {"node": {}, "edge": {}, "graph": {}}
    default_fields = {}                     # edge attribute -> where its default is
    for i, key in enumerate(el for el in root if _local(el.tag) == "key"):
        domain, name = key.get("for", "all"), key.get("attr.name")
        domains = ("node", "edge", "graph") if domain == "all" else (domain,)
        if domain not in ("node", "edge", "graph", "all"):
            raise TopologyFileError(path, f"key[{i}].for", "node, edge, graph or all",
                                    got=domain)
        if domain != "all" and name not in _VALID[domain]:
            # for="all" keys are checked where they are used, against that element.
            valid = ", ".join(sorted(_VALID[domain]))
            raise TopologyFileError(path, f"key[{i}].attr.name",
                                    f"{domain} attribute named one of {valid}", got=name)
        keys[key.get("id")] = (domain, name)
        default = next((el for el in key if _local(el.tag) == "default"), None)
        if default is not None:
            for d in domains:
                key_defaults[d][name] = default.text
            default_fields[name] = f"key[{i}].default"
    graphs = [el for el in root if _local(el.tag) == "graph"]
    if len(graphs) != 1:
        raise TopologyFileError(path, "graph", "exactly one <graph> element",
                                got=len(graphs))
    graph_el = graphs[0]
    if graph_el.get("edgedefault", "undirected") != "undirected":
        raise TopologyFileError(path, "graph.edgedefault", "'undirected'",
                                got=graph_el.get("edgedefault"))

    def data_of(element, domain: str, where: str) -> dict[str, str]:
        # An edge key's default is the file's link default, not a value of every edge:
        # a caller's link defaults (a spec's) come before it, as before graph.defaults.
        values = {} if domain == "edge" else {
            k: v for k, v in key_defaults[domain].items() if k in _VALID[domain]}
        for data in (el for el in element if _local(el.tag) == "data"):
            key_id = data.get("key")
            if key_id not in keys:
                raise TopologyFileError(path, f"{where}.data", "a key declared by <key>",
                                        got=key_id)
            name = keys[key_id][1]
            if name not in _VALID[domain]:
                raise TopologyFileError(path, f"{where}.data",
                                        f"{domain} attribute named one of "
                                        f"{', '.join(sorted(_VALID[domain]))}", got=name)
            values[name] = data.text
        return values

    meta = data_of(graph_el, "graph", "graph")
    radius = meta.get("radius")
    if radius is not None:
        try:
            radius = check_float(radius, low=0.0, low_open=True, from_text=True)
        except BadValue as bad:
            raise TopologyFileError(path, "graph.radius", bad.expected, got=radius) from None
    link_cost = meta.get("link_cost")
    if link_cost is not None and link_cost not in LINK_COST_MODELS:
        raise TopologyFileError(path, "graph.link_cost",
                                f"one of {', '.join(LINK_COST_MODELS)}", got=link_cost)
    own_defaults = {}
    for name, raw in key_defaults["edge"].items():
        if name in _VALID["edge"]:
            try:
                own_defaults[name] = check_link_attribute(name, raw, from_text=True)
            except BadValue as bad:
                raise TopologyFileError(path, default_fields[name], bad.expected,
                                        got=raw) from None
    graph = nx.Graph()
    ids: dict[str, int] = {}
    node_fields, cost_fields = {}, {}
    for i, node in enumerate(el for el in graph_el if _local(el.tag) == "node"):
        where = f"node[{i}]"
        raw = node.get("id")
        try:
            node_id = check_int(raw, from_text=True)
        except BadValue as bad:
            raise TopologyFileError(path, f"{where}.id", bad.expected, got=raw) from None
        if node_id in graph:
            raise TopologyFileError(path, f"{where}.id", "a node id not used before", got=raw)
        ids[raw] = node_id
        graph.add_node(node_id)
        node_fields[node_id] = where
        values = data_of(node, "node", where)
        if values.keys() == {"x", "y"}:
            pos = []
            for axis in ("x", "y"):
                try:
                    pos.append(check_float(values[axis], from_text=True))
                except BadValue as bad:
                    raise TopologyFileError(path, f"{where}.{axis}", bad.expected,
                                            got=values[axis]) from None
            graph.nodes[node_id]["pos"] = tuple(pos)
        elif values:
            raise TopologyFileError(path, where, "both x and y, or neither",
                                    got=sorted(values))
    for i, edge in enumerate(el for el in graph_el if _local(el.tag) == "edge"):
        where = f"edge[{i}]"
        if edge.get("directed", "false") != "false":
            raise TopologyFileError(path, f"{where}.directed", "'false'",
                                    got=edge.get("directed"))
        ends = []
        for end in ("source", "target"):
            raw = edge.get(end)
            if raw not in ids:
                raise TopologyFileError(path, f"{where}.{end}", "the id of a <node>", got=raw)
            ends.append(ids[raw])
        u, v = ends
        check_new_link(path, where, graph, u, v, noun="edge")
        attrs = {}
        for name, raw in data_of(edge, "edge", where).items():
            try:
                attrs[name] = check_link_attribute(name, raw, from_text=True)
            except BadValue as bad:
                raise TopologyFileError(path, f"{where}.{name}", bad.expected, got=raw) from None
        graph.add_edge(u, v, **attrs)
        cost_fields[frozenset((u, v))] = f"{where}.cost"
    return TopologyFile(str(path), graph, radius=radius, link_cost=link_cost,
                        defaults=own_defaults, node_fields=node_fields,
                        cost_fields=cost_fields)


def write_graphml(topo: Topology, path: str | PathLike) -> None:
    """Write ``topo`` as GraphML (all link attributes on every edge).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from topologies.generators import grid
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     out = pathlib.Path(tmp) / "g.graphml"
    ...     write_graphml(grid(2, 2), out)
    ...     read_graphml(out) == grid(2, 2)
    True
    """
    if topo.defaults != LINK_DEFAULTS:
        # Links already carry every attribute; only the defaults for future links
        # (mobility, schedules) would be lost, so refuse rather than drop them.
        raise ValueError("GraphML cannot hold non-default link defaults; write JSON")
    ET.register_namespace("", NAMESPACE)
    ns = "{%s}" % NAMESPACE
    root = ET.Element(ns + "graphml")
    declared = [("graph", "radius", "double"), ("graph", "link_cost", "string"),
                ("node", "x", "double"), ("node", "y", "double")]
    declared += [("edge", name, "double") for name in LINK_DEFAULTS]
    for domain, name, kind in declared:
        ET.SubElement(root, ns + "key", {"id": f"{domain[0]}_{name}", "for": domain,
                                         "attr.name": name, "attr.type": kind})
    graph_el = ET.SubElement(root, ns + "graph", {"edgedefault": "undirected"})

    def add_data(parent, key: str, value) -> None:
        ET.SubElement(parent, ns + "data", {"key": key}).text = (
            value if isinstance(value, str) else repr(float(value)))

    for name in ("radius", "link_cost"):
        if getattr(topo, name) is not None:
            add_data(graph_el, f"g_{name}", getattr(topo, name))
    for node, pos in topo.graph.nodes(data="pos"):
        node_el = ET.SubElement(graph_el, ns + "node", {"id": str(node)})
        if pos is not None:
            add_data(node_el, "n_x", pos[0])
            add_data(node_el, "n_y", pos[1])
    for u, v, attrs in topo.graph.edges(data=True):
        edge_el = ET.SubElement(graph_el, ns + "edge", {"source": str(u), "target": str(v)})
        for name in LINK_DEFAULTS:
            add_data(edge_el, f"e_{name}", attrs[name])
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
