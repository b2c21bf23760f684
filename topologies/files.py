"""Reading and writing topology files, chosen by extension (``.json``, ``.graphml``)."""
from __future__ import annotations

from collections.abc import Mapping
from os import PathLike
from pathlib import Path

from topologies.errors import TopologyFileError
from topologies.graphml import read_graphml, write_graphml
from topologies.model import Topology
from topologies.node_link import read_json, write_json

_READERS = {".json": read_json, ".graphml": read_graphml}
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

    ``defaults`` fill link attributes the file does not give.

    Examples
    --------
    >>> from importlib.resources import files
    >>> read_topology(files("topologies") / "data" / "five_nodes.json")
    Topology(5 nodes, 6 links)
    """
    return _READERS[_suffix(path)](path, defaults=defaults)


def write_topology(topo: Topology, path: str | PathLike) -> None:
    """Write ``topo`` as JSON node-link or GraphML, by extension."""
    _WRITERS[_suffix(path)](topo, path)
