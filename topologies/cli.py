"""The ``testbed topology`` subcommands: ``validate`` and ``show``.

``testbed/cli.py`` calls :func:`add_subcommands` on its subparsers; each leaf
command sets ``func(args) -> exit code``.

``topology validate FILE [--topology TOPO]`` checks a topology (``.json``,
``.graphml``), a movement file (an ns-2 trace ``.ns_movements``, ``.tcl``, ``.ns2``;
BonnMotion's ``.movements`` or ``.movements.gz``; SUMO's FCD output ``.xml``) or a link
schedule (``.csv``) and prints a summary (for a topology, also the settings a
run of it uses unless a spec overrides them); traces and schedules are checked against
``TOPO`` when given. ``topology show FILE -o PNG`` draws a topology.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import networkx as nx

from topologies.draw import draw_topology
from topologies.files import parse_topology, read_topology
from topologies.model import topology_settings
from topologies.spec import TRACE_READERS, check_trace_scale
from topologies.schedule import read_schedule

TOPOLOGY_SUFFIXES = (".json", ".graphml")
#: A movement file's ending, and the ``[mobility] model`` that reads it.
TRACE_SUFFIXES = {".ns_movements": "ns2", ".tcl": "ns2", ".ns2": "ns2",
                  ".movements": "bonnmotion", ".movements.gz": "bonnmotion",
                  ".xml": "sumo_fcd"}
SCHEDULE_SUFFIXES = (".csv",)
TRACE_NAMES = {"ns2": "ns-2 trace", "bonnmotion": "BonnMotion movements",
               "sumo_fcd": "SUMO FCD"}


def _kind(path: str) -> str:
    """``topology``, ``schedule``, or the mobility model of a movement file."""
    name = Path(path).name.lower()
    suffix = ".movements.gz" if name.endswith(".movements.gz") else Path(name).suffix
    if suffix in TRACE_SUFFIXES:
        return TRACE_SUFFIXES[suffix]
    for kind, suffixes in (("topology", TOPOLOGY_SUFFIXES), ("schedule", SCHEDULE_SUFFIXES)):
        if suffix in suffixes:
            return kind
    raise ValueError(f"{path}: file name: expected one of the extensions "
                     f"{', '.join(TOPOLOGY_SUFFIXES + tuple(TRACE_SUFFIXES) + SCHEDULE_SUFFIXES)}")


def describe_topology(path: str) -> str:
    """Read and check the topology file ``path``; return a summary line and the settings
    a run of it uses (each from the file or built in), one per line.

    Examples
    --------
    >>> from importlib.resources import files
    >>> data = files("topologies") / "data"
    >>> print(describe_topology(str(data / "five_nodes.json")).split(": ", 1)[1])
    topology, 5 nodes, 6 links, connected
      link_cost  distance  (file)
      radius     0.5       (file)
      delay      0.01      (built-in default, for links that give none)
      jitter     0         (built-in default, for links that give none)
      bandwidth  inf       (built-in default, for links that give none)
      loss       0         (built-in default, for links that give none)
      positions  every node
    """
    stated = parse_topology(path)
    topo = stated.topology()
    parts = nx.number_connected_components(topo.graph)
    shape = "connected" if parts == 1 else f"disconnected ({parts} components)"
    settings = topology_settings(topo)
    lines = [f"{path}: topology, {settings['nodes']} nodes, {settings['links']} links, "
             f"{shape}"]
    unstated = {"link_cost": "none: the costs written on the links", "radius": "none"}
    for name in ("link_cost", "radius", "delay", "jitter", "bandwidth", "loss"):
        value = settings[name]
        if name in stated.settings:
            shown, source = f"{value:g}" if isinstance(value, float) else value, "(file)"
        elif name in unstated:
            shown, source = unstated[name], ""
        else:
            shown, source = f"{value:g}", "(built-in default, for links that give none)"
        lines.append(f"  {name:<10} {shown:<9} {source}".rstrip())
    with_pos = settings["nodes_with_position"]
    lines.append("  positions  " + ("every node" if with_pos == settings["nodes"] > 0 else
                                    "none" if with_pos == 0 else
                                    f"{with_pos} of {settings['nodes']} nodes"))
    return "\n".join(lines)


def describe_file(path: str, topology_path: str | None = None) -> str:
    """Read and check ``path``; return its summary (raises on bad input): one line for a
    trace or schedule, :func:`describe_topology` for a topology.

    Examples
    --------
    >>> from importlib.resources import files
    >>> data = files("topologies") / "data"
    >>> describe_file(str(data / "five_nodes.json")).splitlines()[0].split(": ")[1]
    'topology, 5 nodes, 6 links, connected'
    """
    kind = _kind(path)
    if kind == "topology":
        if topology_path is not None:
            raise ValueError("--topology applies to traces and schedules only")
        return describe_topology(path)
    topo = None if topology_path is None else read_topology(topology_path)
    against = "" if topo is None else f", nodes checked against {topology_path}"
    if kind in TRACE_READERS:
        trajectories, events = TRACE_READERS[kind](path, topo)
        if topo is not None and topo.radius is not None:
            check_trace_scale(trajectories, topo, path, max(trajectories.end, 1.0))
        comings = f", {len(events)} arrivals and departures" if events else ""
        return (f"{path}: {TRACE_NAMES[kind]}, {len(trajectories.nodes)} nodes, moving "
                f"until t={trajectories.end:g}{comings}{against}")
    schedule = read_schedule(path, topo)
    links = {frozenset((r.u, r.v)) for r in schedule.rows if r.v is not None}
    node_rows = sum(r.v is None for r in schedule.rows)
    times = {r.time for r in schedule.rows}
    return (f"{path}: schedule, {len(schedule.rows)} rows, {len(links)} links, "
            f"{node_rows} node changes, {len(times)} change times{against}")


def _file_error(err: Exception, path: str) -> str:
    """One line for a reader's error; the OS's own text names the file plainly."""
    if isinstance(err, OSError) and err.filename is not None:
        reason = {FileNotFoundError: "no such file",
                  IsADirectoryError: "a directory, not a file"}.get(type(err), err.strerror)
        return f"{err.filename}: {reason}"
    if isinstance(err, UnicodeDecodeError):
        return f"{path}: expected a UTF-8 text file (byte {err.start} is not UTF-8)"
    return str(err)


def validate_command(args: argparse.Namespace) -> int:
    """``topology validate``: print the summary (exit 0) or the error (exit 2, as every
    ``testbed`` command on bad input)."""
    try:
        summary = describe_file(args.file, args.topology)
    except (ValueError, OSError) as err:
        print(f"error: {_file_error(err, args.file)}", file=sys.stderr)
        return 2
    print(summary)
    if "disconnected" in summary:
        print(f"warning: {args.file}: some nodes cannot reach others; a run refuses it "
              "where a stream cannot reach the query node (unless "
              "topology.allow_disconnected = true)", file=sys.stderr)
    return 0


def show_command(args: argparse.Namespace) -> int:
    """``topology show``: draw a topology file into ``args.output``."""
    try:
        if _kind(args.file) != "topology":
            raise ValueError(f"{args.file}: expected a topology file "
                             f"({', '.join(TOPOLOGY_SUFFIXES)})")
        draw_topology(read_topology(args.file), args.output, title=Path(args.file).name)
    except (ValueError, OSError) as err:
        print(f"error: {_file_error(err, args.file)}", file=sys.stderr)
        return 2
    print(f"wrote {args.output}")
    return 0


def add_subcommands(subparsers: argparse._SubParsersAction) -> None:
    """Add ``topology validate`` and ``topology show`` to a CLI's subparsers.

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="testbed")
    >>> add_subcommands(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["topology", "validate", "net.json"])
    >>> args.func is validate_command, args.topology is None
    (True, True)
    """
    topology = subparsers.add_parser(
        "topology", help="check and draw topology, movement trace and schedule files")
    commands = topology.add_subparsers(dest="topology_command", required=True)
    validate = commands.add_parser(
        "validate", help="check a topology (.json/.graphml), ns-2 trace or schedule (.csv)")
    validate.add_argument("file", help="the file to check")
    validate.add_argument("--topology", metavar="FILE",
                          help="topology whose nodes a trace or schedule must use")
    validate.set_defaults(func=validate_command)
    show = commands.add_parser("show", help="draw a topology file to an image")
    show.add_argument("file", help="topology file (.json or .graphml)")
    show.add_argument("-o", "--output", required=True, metavar="PNG",
                      help="image to write (format from the extension)")
    show.set_defaults(func=show_command)
