"""Topologies as JSON node-link documents (the ``networkx.node_link_data`` layout).

::

    {"directed": false, "multigraph": false,
     "graph": {"radius": 0.3, "link_cost": "distance", "defaults": {"delay": 0.02}},
     "nodes": [{"id": 0, "pos": [0.1, 0.2]}, ...],
     "links": [{"source": 0, "target": 1, "cost": 1.0, "delay": 0.01,
                "jitter": 0.0, "bandwidth": null, "loss": 0.0}, ...]}

``links`` may also be called ``edges`` (networkx >= 3.4 writes that). Link attributes are
optional (missing ones take the caller's defaults, e.g. a spec's ``[topology]`` table,
then ``graph.defaults``, then :data:`~topologies.model.LINK_DEFAULTS`); ``bandwidth:
null`` means unlimited. A ``graph.link_cost`` model sets every link's cost from the node
positions (see :mod:`topologies.topology_file`). Unknown keys are errors, so a misspelt
attribute is never silently ignored.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping
from os import PathLike
from pathlib import Path

import networkx as nx

from topologies.errors import TopologyFileError, check_new_link
from topologies.model import LINK_COST_MODELS, LINK_DEFAULTS, Topology
from topologies.topology_file import TopologyFile
from topologies.values import BadValue, check_float, check_int, check_link_attribute, \
    check_position

_TOP_KEYS = {"directed", "multigraph", "graph", "nodes", "links", "edges"}
_GRAPH_KEYS = {"radius", "link_cost", "defaults"}
_NODE_KEYS = {"id", "pos"}
_LINK_KEYS = {"source", "target"} | set(LINK_DEFAULTS)


def _check_keys(path, where: str, obj: object, valid: set[str]) -> dict:
    if not isinstance(obj, dict):
        raise TopologyFileError(path, where, "an object", got=obj)
    unknown = sorted(set(obj) - valid)
    if unknown:
        field = f"{where}.{unknown[0]}" if where else unknown[0]
        raise TopologyFileError(path, field, f"one of the keys {', '.join(sorted(valid))}")
    return obj


def loads_topology(text: str, path: str | PathLike = "<string>", *,
                   defaults: Mapping[str, float] | None = None) -> Topology:
    """Parse a node-link JSON document; ``path`` is only used in error messages.

    ``defaults`` (the caller's link defaults) come before the file's ``graph.defaults``.

    Examples
    --------
    >>> doc = '{"nodes": [{"id": 0}, {"id": 1}], "links": [{"source": 0, "target": 1}]}'
    >>> loads_topology(doc, "net.json")
    Topology(2 nodes, 1 links)
    >>> doc = ('{"graph": {"link_cost": "distance"}, "nodes": [{"id": 0, "pos": [0, 0]}, '
    ...        '{"id": 1, "pos": [3, 4]}], "links": [{"source": 0, "target": 1}]}')
    >>> loads_topology(doc, "net.json").graph.edges[0, 1]["cost"]
    5.0
    >>> loads_topology(doc.replace('"pos": [3, 4]', '"pos": [3, 4]}, {"id": 2'), "net.json")
    Traceback (most recent call last):
    ...
    topologies.errors.TopologyFileError: net.json: nodes[2].pos: expected a position (graph.link_cost 'distance' needs one on every node)
    >>> loads_topology('{"nodes": [\\n{"id": 0},\\n]}', "net.json")
    Traceback (most recent call last):
    ...
    topologies.errors.TopologyFileError: net.json: line 3: expected valid JSON (Expecting value, column 1)
    >>> loads_topology('{"nodes": [{"id": 0}], "links": [{"source": 0, "target": 9}]}', "net.json")
    Traceback (most recent call last):
    ...
    topologies.errors.TopologyFileError: net.json: links[0].target: expected a node listed in nodes, got 9
    """
    return parse_node_link(text, path).topology(defaults)


def parse_node_link(text: str, path: str | PathLike = "<string>") -> TopologyFile:
    """What a node-link JSON document states (see :class:`TopologyFile`), checked."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise TopologyFileError(path, err.lineno,
                                f"valid JSON ({err.msg}, column {err.colno})") from None
    _check_keys(path, "", doc, _TOP_KEYS)
    for flag in ("directed", "multigraph"):
        if doc.get(flag, False) is not False:
            raise TopologyFileError(path, flag, "false (undirected simple graphs only)",
                                    got=doc[flag])
    radius, link_cost, own_defaults = _parse_graph_meta(path, doc.get("graph", {}))
    if "links" in doc and "edges" in doc:
        raise TopologyFileError(path, "edges", "either 'links' or 'edges', not both")
    links_key = "edges" if "edges" in doc else "links"
    graph = nx.Graph()
    node_fields = _add_nodes(path, graph, doc.get("nodes"))
    links = doc.get(links_key, [])
    if not isinstance(links, list):
        raise TopologyFileError(path, links_key, "a list of links", got=links)
    cost_fields = {}
    for i, link in enumerate(links):
        where = f"{links_key}[{i}]"
        u, v = _add_link(path, graph, where, link)
        cost_fields[frozenset((u, v))] = f"{where}.cost"
    return TopologyFile(str(path), graph, radius=radius, link_cost=link_cost,
                        defaults=own_defaults, node_fields=node_fields,
                        cost_fields=cost_fields)


def _parse_graph_meta(path, meta: object) -> tuple[float | None, str | None, dict]:
    """The document's ``graph`` object, checked: its radius, link cost model and defaults."""
    _check_keys(path, "graph", meta, _GRAPH_KEYS)
    radius = meta.get("radius")
    if radius is not None:
        try:
            radius = check_float(radius, low=0.0, low_open=True)
        except BadValue as bad:
            raise TopologyFileError(path, "graph.radius", bad.expected, got=radius) from None
    link_cost = meta.get("link_cost")
    if link_cost is not None and link_cost not in LINK_COST_MODELS:
        raise TopologyFileError(path, "graph.link_cost",
                                f"one of {', '.join(LINK_COST_MODELS)}", got=link_cost)
    file_defaults = _check_keys(path, "graph.defaults", meta.get("defaults", {}),
                                set(LINK_DEFAULTS))
    own_defaults = {}
    for name, value in file_defaults.items():
        try:
            own_defaults[name] = check_link_attribute(name, value)
        except BadValue as bad:
            raise TopologyFileError(path, f"graph.defaults.{name}", bad.expected,
                                    got=value) from None
    return radius, link_cost, own_defaults


def _add_nodes(path, graph: nx.Graph, nodes: object) -> dict:
    """Add the checked ``nodes`` list to ``graph``; each node's ``pos`` field name, by id."""
    if not isinstance(nodes, list):
        raise TopologyFileError(path, "nodes", "a list of nodes", got=nodes)
    node_fields = {}
    for i, node in enumerate(nodes):
        where = f"nodes[{i}]"
        _check_keys(path, where, node, _NODE_KEYS)
        if "id" not in node:
            raise TopologyFileError(path, f"{where}.id", "a node id (integer)")
        try:
            node_id = check_int(node["id"])
        except BadValue as bad:
            raise TopologyFileError(path, f"{where}.id", bad.expected, got=node["id"]) from None
        if node_id in graph:
            raise TopologyFileError(path, f"{where}.id", "a node id not used before",
                                    got=node_id)
        graph.add_node(node_id)
        node_fields[node_id] = f"{where}.pos"
        if "pos" in node:
            try:
                graph.nodes[node_id]["pos"] = check_position(node["pos"])
            except BadValue as bad:
                raise TopologyFileError(path, f"{where}.pos", bad.expected,
                                        got=node["pos"]) from None
    return node_fields


def _add_link(path, graph: nx.Graph, where: str, link: object) -> tuple[int, int]:
    """Add one checked link (found at ``where``) to ``graph``; its two ends."""
    _check_keys(path, where, link, _LINK_KEYS)
    ends = []
    for end in ("source", "target"):
        if end not in link:
            raise TopologyFileError(path, f"{where}.{end}", "a node id")
        if not (isinstance(link[end], int) and not isinstance(link[end], bool)
                and link[end] in graph):
            raise TopologyFileError(path, f"{where}.{end}", "a node listed in nodes",
                                    got=link[end])
        ends.append(link[end])
    u, v = ends
    check_new_link(path, where, graph, u, v)
    attrs = {}
    for name in LINK_DEFAULTS:
        if name in link:
            try:
                attrs[name] = check_link_attribute(name, link[name])
            except BadValue as bad:
                raise TopologyFileError(path, f"{where}.{name}", bad.expected,
                                        got=link[name]) from None
    graph.add_edge(u, v, **attrs)
    return u, v


def read_json(path: str | PathLike, *, defaults: Mapping[str, float] | None = None
              ) -> Topology:
    """Read a node-link JSON topology file (see the module docstring for the layout)."""
    return parse_json(path).topology(defaults)


def parse_json(path: str | PathLike) -> TopologyFile:
    """What a node-link JSON topology file states (see :class:`TopologyFile`)."""
    return parse_node_link(Path(path).read_text(encoding="utf-8"), path)


def dumps_topology(topo: Topology) -> str:
    """The node-link JSON text of ``topo`` (every link with all five attributes).

    Examples
    --------
    >>> from topologies.generators import line
    >>> loads_topology(dumps_topology(line(3))) == line(3)
    True
    """
    graph_meta = {k: v for k, v in (("radius", topo.radius), ("link_cost", topo.link_cost))
                  if v is not None}
    if topo.defaults != LINK_DEFAULTS:
        graph_meta["defaults"] = {name: None if math.isinf(value) else value
                                  for name, value in topo.defaults.items()}
    nodes = []
    for node, pos in topo.graph.nodes(data="pos"):
        nodes.append({"id": node} if pos is None else {"id": node, "pos": list(pos)})
    links = []
    for u, v, attrs in topo.graph.edges(data=True):
        link = {"source": u, "target": v}
        for name in LINK_DEFAULTS:
            value = attrs[name]
            link[name] = None if math.isinf(value) else value
        links.append(link)
    doc = {"directed": False, "multigraph": False, "graph": graph_meta,
           "nodes": nodes, "links": links}
    return json.dumps(doc, indent=1) + "\n"


def write_json(topo: Topology, path: str | PathLike) -> None:
    """Write ``topo`` as node-link JSON."""
    Path(path).write_text(dumps_topology(topo), encoding="utf-8")
