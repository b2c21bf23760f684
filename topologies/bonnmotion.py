"""BonnMotion's native movement files (``scenario.movements``, or ``.movements.gz``).

BonnMotion writes one line per node, node ``i`` on line ``i + 1``, each a sequence of
waypoints ``t x y`` (2D scenarios; BonnMotion's ``-J 3D`` output ``t x y z`` is not read):
the node moves in a straight line from one waypoint to the next, at the speed their
distance and times give, and stays at its last one. Its ``bm NSFile`` export is the
ns-2 trace :mod:`topologies.ns2` reads; the native file keeps BonnMotion's own numbers
(no rounding into ``setdest`` speeds).

Errors name the file, the line (the node) and the waypoint: a number that is not one,
a line whose values are not whole ``t x y`` triples, time going back, a node the
topology lacks.

>>> tr = loads_movements("0.0 0.0 0.0 10.0 30.0 40.0\\n0.0 5.0 5.0\\n", "s.movements")
>>> tr.nodes, tr.position(0, 5.0), tr.position(1, 99.0)
([0, 1], (15.0, 20.0), (5.0, 5.0))
>>> loads_movements("0.0 0.0 0.0 10.0 30.0\\n", "s.movements")
Traceback (most recent call last):
...
topologies.errors.TopologyFileError: s.movements: line 1: expected waypoints as whole 't x y' triples (a 2D BonnMotion scenario), got 5 numbers
"""
from __future__ import annotations

import gzip
import math
from os import PathLike
from pathlib import Path

from topologies.errors import TopologyFileError
from topologies.mobility import Trajectories
from topologies.model import Topology


def loads_movements(text: str, path: str | PathLike = "<string>",
                    topology: Topology | None = None) -> Trajectories:
    """Parse a BonnMotion ``.movements`` text; ``path`` only names it in errors. With
    ``topology``, every line's node must be one of its nodes."""
    waypoints = {}
    lines = [line for line in text.splitlines()]
    for line_no, line in enumerate(lines, start=1):
        fields = line.split()
        if not fields:
            continue
        node = line_no - 1
        if topology is not None and node not in topology.graph:
            raise TopologyFileError(path, line_no, f"at most {topology.graph.number_of_nodes()}"
                                    " lines, one per node of the topology (line "
                                    f"{line_no} is node {node})")
        if len(fields) % 3:
            raise TopologyFileError(path, line_no, "waypoints as whole 't x y' triples (a 2D "
                                    f"BonnMotion scenario), got {len(fields)} numbers")
        points = []
        for k in range(0, len(fields), 3):
            t, x, y = (_number(path, line_no, k // 3, name, text)
                       for name, text in zip("txy", fields[k:k + 3]))
            if points and t < points[-1][0]:
                raise TopologyFileError(path, f"line {line_no}, waypoint {k // 3 + 1}, t",
                                        f"a time >= the waypoint before's {points[-1][0]:g} "
                                        "(time never goes back)", got=fields[k])
            points.append((t, x, y))
        waypoints[node] = points
    if not waypoints:
        raise TopologyFileError(path, 1, "one line of waypoints 't x y ...' per node")
    return Trajectories(waypoints)


def read_movements(path: str | PathLike, topology: Topology | None = None) -> Trajectories:
    """Read a BonnMotion ``.movements`` file (gzip-compressed when it ends in ``.gz``)."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return loads_movements(f.read(), path, topology)


def _number(path, line_no: int, index: int, name: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or (name == "t" and value < 0):
        expected = "a time >= 0" if name == "t" else "a finite number"
        raise TopologyFileError(path, f"line {line_no}, waypoint {index + 1}, {name}",
                                expected, got=text)
    return value
