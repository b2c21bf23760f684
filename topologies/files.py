"""Reading and writing topology files, chosen by extension (``.json``, ``.graphml``)."""
from __future__ import annotations

from collections.abc import Mapping
from os import PathLike
from pathlib import Path

from topologies.errors import TopologyFileError
from topologies.graphml import parse_graphml, write_graphml
from topologies.model import Topology
from topologies.node_link import parse_json, write_json
from topologies.topology_file import TopologyFile

_READERS = {".json": parse_json, ".graphml": parse_graphml}
_WRITERS = {".json": write_json, ".graphml": write_graphml}


def _suffix(path: str | PathLike) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in _READERS:
        raise TopologyFileError(path, "file name",
                                "a .json (node-link) or .graphml extension", got=suffix)
    return suffix


def read_topology(path: str | PathLike, *, defaults: Mapping[str, float] | None = None
                  ) -> Topology:
    """Read a topology from JSON node-link or GraphML, by extension.

    ``defaults`` fill link attributes a link does not give, before the file's own link
    defaults. The costs follow the ``link_cost`` model the file names, if any, so they
    agree with the topology's ``link_cost``.

    Examples
    --------
    >>> from importlib.resources import files
    >>> topo = read_topology(files("topologies") / "data" / "five_nodes.json")
    >>> topo, topo.link_cost, topo.graph.edges[0, 2]["cost"]
    (Topology(5 nodes, 6 links), 'distance', 0.5)
    """
    return parse_topology(path).topology(defaults)


def parse_topology(path: str | PathLike) -> TopologyFile:
    """What a JSON node-link or GraphML file states, by extension, before any caller's
    settings (see :class:`~topologies.topology_file.TopologyFile`).

    Examples
    --------
    >>> from importlib.resources import files
    >>> parse_topology(files("topologies") / "data" / "five_nodes.graphml").settings
    {'link_cost': 'distance', 'radius': 0.5}
    """
    return _READERS[_suffix(path)](path)


def write_topology(topo: Topology, path: str | PathLike) -> None:
    """Write ``topo`` as JSON node-link or GraphML, by extension."""
    _WRITERS[_suffix(path)](topo, path)
