"""ns-2 / BonnMotion movement traces (the format ns-3's ``Ns2MobilityHelper`` reads).

Recognised lines::

    $node_(3) set X_ 10.0                          # initial position (Z_ is ignored)
    $node_(3) set Y_ 20.0
    $ns_ at 2.0 "$node_(3) setdest 40.0 20.0 5.0"  # from t=2 move to (40, 20) at speed 5
    $ns_ at 9.0 "$node_(3) set X_ 12.0"            # at t=9 jump (and stop moving)

A ``setdest`` received while moving starts from where the node is at that moment; a
node reaching its destination stays there; speed 0 stops the node where it is. Blank
lines, ``#`` comments and the ``$god_`` lines of CMU ``setdest`` scenarios are skipped;
anything else is an error naming the file and line.
"""
from __future__ import annotations

import math
import re
from os import PathLike
from pathlib import Path

from topologies.errors import TopologyFileError
from topologies.mobility import Trajectories
from topologies.model import Topology
from topologies.values import BadValue, check_float

_NUM = r"(\S+)"
_INITIAL = re.compile(r"\$node_\((\d+)\)\s+set\s+([XYZ])_\s+" + _NUM)
_AT = re.compile(r'\$ns_\s+at\s+' + _NUM + r'\s+"(.*)"')
_SETDEST = re.compile(r"\$node_\((\d+)\)\s+setdest\s+" + _NUM + r"\s+" + _NUM + r"\s+" + _NUM)
_GOD = re.compile(r'\$god_\s|\$ns_\s+at\s+\S+\s+"\$god_\s')
_EXPECTED = ('an ns-2 movement line: $node_(i) set X_|Y_|Z_ v, '
             '$ns_ at t "$node_(i) setdest x y speed" or $ns_ at t "$node_(i) set X_ v"')


def _number(path, line_no: int, field: str, text: str, low: float = -math.inf) -> float:
    # the common case first (a trace has thousands of numbers): a finite number at or
    # above ``low`` is what check_float returns; anything else goes to it for its error
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if math.isfinite(value) and value >= low:
        return value
    try:
        return check_float(text, from_text=True, low=low)
    except BadValue as bad:
        raise TopologyFileError(path, f"line {line_no}, {field}", bad.expected,
                                got=text) from None


def _parse(path, text: str, topology: Topology | None):
    """Initial coordinates and timed commands per node, checked line by line."""
    initial: dict[int, dict[str, float]] = {}
    commands: dict[int, list[tuple]] = {}   # node -> [(time, line, kind, a, b, c)]
    first_line: dict[int, int] = {}

    def node_of(raw: str, line_no: int) -> int:
        node = int(raw)
        if topology is not None and node not in topology.graph:
            raise TopologyFileError(path, f"line {line_no}, node",
                                    "a node of the topology", got=node)
        first_line.setdefault(node, line_no)
        return node

    for line_no, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#") or _GOD.match(line):
            continue
        match = _INITIAL.fullmatch(line)
        if match:
            node = node_of(match[1], line_no)
            initial.setdefault(node, {})[match[2]] = _number(path, line_no, f"{match[2]}_",
                                                             match[3])
            continue
        match = _AT.fullmatch(line)
        inner = match[2].strip() if match else ""
        dest = _SETDEST.fullmatch(inner)
        jump = _INITIAL.fullmatch(inner)
        if not match or not (dest or jump):
            raise TopologyFileError(path, line_no, _EXPECTED, got=line)
        at = _number(path, line_no, "time", match[1], low=0.0)
        if dest:
            node = node_of(dest[1], line_no)
            x = _number(path, line_no, "x", dest[2])
            y = _number(path, line_no, "y", dest[3])
            speed = _number(path, line_no, "speed", dest[4], low=0.0)
            commands.setdefault(node, []).append((at, line_no, "setdest", x, y, speed))
        else:
            node = node_of(jump[1], line_no)
            value = _number(path, line_no, f"{jump[2]}_", jump[3])
            if jump[2] != "Z":   # positions are planar; height is checked, then dropped
                commands.setdefault(node, []).append((at, line_no, jump[2], value, 0.0, 0.0))
    return initial, commands, first_line


def _waypoints(start: tuple[float, float], commands: list[tuple]) -> list[tuple]:
    """Waypoints ``(t, x, y)`` of one node from its start and its timed commands."""
    points = [(0.0, *start)]
    motion = None   # (t0, x0, y0, x1, y1, arrival)

    def where(t: float) -> tuple[float, float]:
        if motion is None:
            return points[-1][1:]
        t0, x0, y0, x1, y1, arrival = motion
        if t >= arrival:
            return (x1, y1)
        frac = (t - t0) / (arrival - t0)
        return (x0 + frac * (x1 - x0), y0 + frac * (y1 - y0))

    for at, _line, kind, a, b, speed in sorted(commands, key=lambda c: (c[0], c[1])):
        if motion is not None and motion[5] <= at:
            points.append((motion[5], motion[3], motion[4]))   # arrived before ``at``
        x, y = where(at)
        points.append((at, x, y))
        motion = None
        if kind == "setdest":
            length = math.hypot(a - x, b - y)
            if speed > 0 and length > 0:
                motion = (at, x, y, a, b, at + length / speed)
        else:   # a jump in X or Y
            points.append((at, a if kind == "X" else x, a if kind == "Y" else y))
    if motion is not None:
        points.append((motion[5], motion[3], motion[4]))
    return points


def loads_ns2_trace(text: str, path: str | PathLike = "<string>",
                    topology: Topology | None = None) -> Trajectories:
    """Parse an ns-2 movement trace; ``path`` only names the text in errors.

    With ``topology``, every node must be one of its nodes, and a node with no initial
    ``set X_``/``set Y_`` starts at its topology ``pos``.

    Examples
    --------
    >>> trace = '''$node_(0) set X_ 0.0
    ... $node_(0) set Y_ 0.0
    ... $ns_ at 1.0 "$node_(0) setdest 3.0 4.0 1.0"'''
    >>> tr = loads_ns2_trace(trace, "moves.ns_movements")
    >>> tr.position(0, 1.0), tr.position(0, 3.5), tr.position(0, 60.0)
    ((0.0, 0.0), (1.5, 2.0), (3.0, 4.0))
    >>> loads_ns2_trace('$ns_ at 1.0 "$node_(0) setdest 3.0 4.0 fast"', "m.tcl")
    Traceback (most recent call last):
    ...
    topologies.errors.TopologyFileError: m.tcl: line 1, speed: expected a number >= 0, got 'fast'
    """
    initial, commands, first_line = _parse(path, text, topology)
    waypoints = {}
    for node in sorted(set(initial) | set(commands)):
        coords = initial.get(node, {})
        if "X" in coords and "Y" in coords:
            start = (coords["X"], coords["Y"])
        elif topology is not None and not coords and \
                topology.graph.nodes[node].get("pos") is not None:
            start = topology.graph.nodes[node]["pos"]
        else:
            raise TopologyFileError(path, first_line[node],
                                    f"initial '$node_({node}) set X_' and 'set Y_' lines "
                                    f"(node {node} has no start position)")
        waypoints[node] = _waypoints(start, commands.get(node, []))
    return Trajectories(waypoints)


def read_ns2_trace(path: str | PathLike, topology: Topology | None = None) -> Trajectories:
    """Read an ns-2 / BonnMotion movement file (see :func:`loads_ns2_trace`)."""
    return loads_ns2_trace(Path(path).read_text(encoding="utf-8"), path, topology)
