"""Topologies as GraphML files, read and written with networkx's GraphML support.

Node data keys ``x`` and ``y`` (both or neither) give ``pos``; edge data keys are the link
attributes (``cost``, ``delay``, ``jitter``, ``bandwidth``, ``loss``; ``inf`` allowed for
bandwidth); graph data keys ``radius`` and ``link_cost``. An edge key's ``<default>`` is the
file's link default (as ``graph.defaults`` in JSON: a caller's defaults, e.g. a spec's,
come first), and a ``link_cost`` model sets every link's cost from the node positions (see
:mod:`topologies.topology_file`). Node ids must be integers. Keys naming any other
attribute are errors, so a misspelt attribute is never silently ignored. Values are
checked by the project's rules whatever ``attr.type`` a key declares. Errors name the
element in document order, e.g. ``edge[4].cost``; XML syntax errors name the line.
"""
from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Mapping
from os import PathLike

import networkx as nx
from networkx.readwrite.graphml import GraphMLReader

from topologies.errors import TopologyFileError, check_new_link
from topologies.model import LINK_COST_MODELS, LINK_DEFAULTS, Topology
from topologies.topology_file import TopologyFile
from topologies.values import BadValue, check_float, check_int, check_link_attribute

_VALID = {"node": {"x", "y"}, "edge": set(LINK_DEFAULTS), "graph": {"radius", "link_cost"}}
#: The elements a key's ``for`` names; a key without ``for`` is for all of them.
_DOMAINS = {"node": ("node",), "edge": ("edge",), "graph": ("graph",),
            "all": ("node", "edge", "graph")}


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

    Examples
    --------
    >>> from importlib.resources import files
    >>> topo = read_graphml(files("topologies") / "data" / "five_nodes.graphml",
    ...                     defaults={"loss": 0.5})
    >>> topo, topo.link_cost, topo.graph.edges[0, 2]["cost"], topo.defaults["loss"]
    (Topology(5 nodes, 6 links), 'distance', 0.5, 0.5)
    """
    return parse_graphml(path).topology(defaults)


def parse_graphml(path: str | PathLike) -> TopologyFile:
    """What a GraphML topology file states (see :class:`TopologyFile`), checked.

    networkx parses the file; :class:`_TopologyReader` checks each key, node and edge as
    networkx reaches it. networkx's own exceptions become one-line errors naming the file.

    Examples
    --------
    >>> from importlib.resources import files
    >>> stated = parse_graphml(files("topologies") / "data" / "five_nodes.graphml")
    >>> stated.settings, stated.graph.edges[0, 1]["cost"], stated.node_fields[4]
    ({'link_cost': 'distance', 'radius': 0.5}, 0.3, 'node[4]')
    >>> stated.cost_fields[frozenset({2, 4})]
    'edge[5].cost'
    """
    reader = _TopologyReader(path)
    try:
        [graph] = reader(path=path)   # exactly one: checked before networkx reads it
    except ET.ParseError as err:
        line, column = err.position
        reason = str(err).split(":")[0]
        raise TopologyFileError(path, line,
                                f"well-formed GraphML XML ({reason}, column {column + 1})"
                                ) from None
    except nx.NetworkXError as err:
        # Left to networkx (e.g. a <hyperedge>), so it names no element.
        raise TopologyFileError(path, "graph", f"GraphML networkx can read ({err})"
                                ) from None
    return TopologyFile(str(path), graph, radius=reader.radius, link_cost=reader.link_cost,
                        defaults=reader.link_defaults, node_fields=reader.node_fields,
                        cost_fields=reader.cost_fields)


def _as_written(text: str | None) -> str | None:
    """A GraphML value as the file writes it; the project's checks convert it."""
    return text


class _TopologyReader(GraphMLReader):
    """networkx's GraphML reader, checking a topology file as it reads it.

    networkx parses the XML, collects the keys and their defaults and decodes each
    element's data. The hooks below check each key, node and edge where networkx reaches
    it, so an error names its place (``node[3].id``, ``edge[4].cost``): a networkx graph
    keeps no document order for edges and merges a repeated node. They build the
    topology's graph: integer node ids, checked link attributes, in document order.
    ``radius``, ``link_cost``, ``link_defaults``, ``node_fields`` and ``cost_fields`` hold
    the rest of the :class:`TopologyFile` once the file is read.
    """

    def __init__(self, path: str | PathLike):
        # force_multigraph makes networkx return the graph the hooks built, not a copy
        # into a new nx.Graph, which would reorder neighbours (and so tie-breaks between
        # equal routes). It stays simple: add_edge refuses a repeated node pair.
        super().__init__(force_multigraph=True)
        # Every value arrives as written, whatever its attr.type: errors show 'abc' or
        # '-1' as in the file, not networkx's bare ValueError from float() or -1.0.
        self.python_type = defaultdict(lambda: _as_written)
        self.path = path
        self.node_ids: dict[str, int] = {}     # id as written -> node
        self.node_fields: dict[int, str] = {}
        self.cost_fields: dict[frozenset, str] = {}
        self.key_places: dict[str, str] = {}   # key id -> "key[i]"

    def _tag(self, name: str) -> str:
        """``name`` in the file's namespace, as ElementTree looks elements up."""
        return f"{{{self.NS_GRAPHML}}}{name}"

    def find_graphml_keys(self, graph_element):
        """networkx's keys and their defaults, after checking the document: a
        ``<graphml>`` root holding one graph, and keys that each name an attribute."""
        root = graph_element.getroot()
        namespace, _, tag = root.tag.rpartition("}")
        if tag != "graphml":
            raise TopologyFileError(self.path, "root element", "<graphml>", got=tag)
        # networkx looks for elements in the GraphML namespace; read the file in the one
        # its root uses instead, so a file that declares none (or another) still reads.
        self.NS_GRAPHML = namespace.lstrip("{")
        for i, key in enumerate(root.findall(self._tag("key"))):
            domain = key.get("for", "all")
            if domain not in _DOMAINS:
                raise TopologyFileError(self.path, f"key[{i}].for",
                                        "node, edge, graph or all", got=domain)
            _check_name(self.path, f"key[{i}].attr.name", domain, key.get("attr.name"))
            self.key_places[key.get("id")] = f"key[{i}]"
        graphs = root.findall(self._tag("graph"))
        if len(graphs) != 1:
            raise TopologyFileError(self.path, "graph", "exactly one <graph> element",
                                    got=len(graphs))
        with warnings.catch_warnings():
            # attr.type is not used (see __init__), so one left out is not worth a warning.
            warnings.filterwarnings("ignore", "No key type for id")
            return super().find_graphml_keys(graph_element)

    def make_graph(self, graph_xml, graphml_keys, defaults, G=None):
        """The topology's graph, after checking the graph element, its settings and the
        file's link defaults; networkx adds nodes and edges through the hooks below."""
        edgedefault = graph_xml.get("edgedefault", "undirected")
        if edgedefault != "undirected":
            raise TopologyFileError(self.path, "graph.edgedefault", "'undirected'",
                                    got=edgedefault)
        meta = self._data(graph_xml, "graph", "graph", graphml_keys, defaults)
        self.radius, self.link_cost = _graph_settings(self.path, meta)
        self.link_defaults = _link_defaults(self.path, graphml_keys, defaults,
                                            self.key_places)
        graph = super().make_graph(graph_xml, graphml_keys, defaults, nx.Graph())
        graph.graph.clear()   # networkx's unchecked copy of what was checked above
        return graph

    def add_node(self, G, node_xml, graphml_keys, defaults):
        """Add a node: an integer id not used before, ``pos`` from its ``x`` and ``y``."""
        # Every earlier node was added (a bad one raises), so the count is this one's place.
        where = f"node[{G.number_of_nodes()}]"
        raw = node_xml.get("id")
        try:
            node = check_int(raw, from_text=True)
        except BadValue as bad:
            raise TopologyFileError(self.path, f"{where}.id", bad.expected, got=raw) from None
        if node in G:   # "0" and "00" are the same node
            raise TopologyFileError(self.path, f"{where}.id", "a node id not used before",
                                    got=raw)
        values = self._data(node_xml, "node", where, graphml_keys, defaults)
        if values and values.keys() != {"x", "y"}:
            raise TopologyFileError(self.path, where, "both x and y, or neither",
                                    got=sorted(values))
        G.add_node(node)
        if values:
            G.nodes[node]["pos"] = tuple(_coordinate(self.path, f"{where}.{axis}",
                                                     values[axis]) for axis in ("x", "y"))
        self.node_ids[raw] = node
        self.node_fields[node] = where

    def add_edge(self, G, edge_element, graphml_keys):
        """Add an edge between two ``<node>`` ids, once per pair, its attributes checked."""
        where = f"edge[{G.number_of_edges()}]"   # as in add_node
        directed = edge_element.get("directed", "false")
        if directed != "false":
            raise TopologyFileError(self.path, f"{where}.directed", "'false'", got=directed)
        ends = []
        for end in ("source", "target"):
            raw = edge_element.get(end)
            if raw not in self.node_ids:
                raise TopologyFileError(self.path, f"{where}.{end}", "the id of a <node>",
                                        got=raw)
            ends.append(self.node_ids[raw])
        u, v = ends
        check_new_link(self.path, where, G, u, v, noun="edge")
        attrs = {}
        for name, raw in self._data(edge_element, "edge", where, graphml_keys).items():
            try:
                attrs[name] = check_link_attribute(name, raw, from_text=True)
            except BadValue as bad:
                raise TopologyFileError(self.path, f"{where}.{name}", bad.expected,
                                        got=raw) from None
        G.add_edge(u, v, **attrs)
        self.cost_fields[frozenset((u, v))] = f"{where}.cost"

    def _data(self, element, domain: str, where: str, graphml_keys,
              defaults: Mapping | None = None) -> dict:
        """The attributes ``element`` gives, as written, over its keys' ``defaults``.

        Each ``<data>`` must use a declared key naming an attribute of ``domain``,
        checked here: networkx would name no element, and would keep any name.
        """
        for data in element.findall(self._tag("data")):
            key_id = data.get("key")
            if key_id not in graphml_keys:
                raise TopologyFileError(self.path, f"{where}.data",
                                        "a key declared by <key>", got=key_id)
            _check_name(self.path, f"{where}.data", domain, graphml_keys[key_id]["name"])
        values = {}
        for key_id, value in (defaults or {}).items():
            key = graphml_keys[key_id]
            if domain in _DOMAINS[key["for"] or "all"] and key["name"] in _VALID[domain]:
                values[key["name"]] = value
        return {**values, **self.decode_data_elements(graphml_keys, element)}


def _check_name(path, where: str, domain: str, name: str | None) -> None:
    """``name`` must be an attribute of the elements ``domain`` (a key's ``for``) names.

    Examples
    --------
    >>> _check_name("net.graphml", "key[0].attr.name", "edge", "weight")
    Traceback (most recent call last):
    ...
    topologies.errors.TopologyFileError: net.graphml: key[0].attr.name: expected edge attribute named one of bandwidth, cost, delay, jitter, loss, got 'weight'
    """
    valid = set().union(*(_VALID[d] for d in _DOMAINS[domain]))
    if name not in valid:
        kind = "node, edge or graph" if domain == "all" else domain
        raise TopologyFileError(path, where, f"{kind} attribute named one of "
                                f"{', '.join(sorted(valid))}", got=name)


def _coordinate(path, where: str, raw: str | None) -> float:
    """A node's ``x`` or ``y``, checked.

    Examples
    --------
    >>> _coordinate("net.graphml", "node[0].x", " 0.25")
    0.25
    """
    try:
        return check_float(raw, from_text=True)
    except BadValue as bad:
        raise TopologyFileError(path, where, bad.expected, got=raw) from None


def _graph_settings(path, meta: Mapping) -> tuple[float | None, str | None]:
    """The file's ``radius`` and ``link_cost`` from its graph data, checked.

    Examples
    --------
    >>> _graph_settings("net.graphml", {"radius": "0.5", "link_cost": "etx"})
    (0.5, 'etx')
    >>> _graph_settings("net.graphml", {"link_cost": "far"})
    Traceback (most recent call last):
    ...
    topologies.errors.TopologyFileError: net.graphml: graph.link_cost: expected one of hop, distance, distance2, etx, got 'far'
    """
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
    return radius, link_cost


def _link_defaults(path, graphml_keys, defaults: Mapping, key_places: Mapping
                   ) -> dict[str, float]:
    """The file's link defaults: the ``<default>`` of each key for edges, checked.

    They are the file's defaults, not values of every edge: a caller's link defaults (a
    spec's) come before them, as before ``graph.defaults`` in JSON.
    """
    own = {}
    for key_id, raw in defaults.items():
        key = graphml_keys[key_id]
        if "edge" in _DOMAINS[key["for"] or "all"] and key["name"] in LINK_DEFAULTS:
            try:
                own[key["name"]] = check_link_attribute(key["name"], raw, from_text=True)
            except BadValue as bad:
                raise TopologyFileError(path, f"{key_places[key_id]}.default",
                                        bad.expected, got=raw) from None
    return own


def write_graphml(topo: Topology, path: str | PathLike) -> None:
    """Write ``topo`` as GraphML with networkx (all link attributes on every edge).

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
    settings = {"radius": topo.radius, "link_cost": topo.link_cost}
    graph = nx.Graph(**{name: value for name, value in settings.items()
                        if value is not None})
    for node, pos in topo.graph.nodes(data="pos"):
        # GraphML data are scalars: a position is two keys, as the reader expects.
        graph.add_node(node, **({} if pos is None else {"x": pos[0], "y": pos[1]}))
    graph.add_edges_from(topo.graph.edges(data=True))
    nx.write_graphml(graph, path)
