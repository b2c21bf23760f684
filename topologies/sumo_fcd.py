"""SUMO's floating car data (``sumo --fcd-output fcd.xml``) as node movements.

An FCD file lists, per ``<timestep time="t">``, every vehicle in the network then with
its position ``x``, ``y`` in metres. Read with SUMO's own ``sumolib``. Each vehicle is a
node, numbered 0, 1, ... in the order vehicles first appear (ties by id); it moves in a
straight line between its samples, is up from its first timestep to one FCD period
after its last (it left the map then; one still on it at the file's last timestep stays
up) and down before and after (``node_events``, as a
failure schedule gives them: the network does not see it).

Errors name the file and the element: a timestep without a time, a time going back,
a vehicle without a number for ``x`` or ``y``, a file with no vehicle; more vehicles
than the topology has nodes.

>>> import tempfile, os
>>> text = '''<fcd-export>
... <timestep time="0.00"><vehicle id="a" x="0.00" y="0.00"/></timestep>
... <timestep time="1.00"><vehicle id="a" x="10.00" y="0.00"/>
...   <vehicle id="b" x="5.00" y="5.00"/></timestep>
... </fcd-export>'''
>>> with tempfile.TemporaryDirectory() as d:
...     path = os.path.join(d, "fcd.xml")
...     _ = open(path, "w").write(text)
...     fcd = read_fcd(path)
>>> fcd.vehicles, fcd.trajectories.position(0, 0.5), fcd.node_events
({0: 'a', 1: 'b'}, (5.0, 0.0), [(0.0, 1, False), (1.0, 1, True)])
"""
from __future__ import annotations

import math
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

from topologies.errors import TopologyFileError
from topologies.mobility import Trajectories
from topologies.model import Topology


@dataclass(frozen=True)
class FcdTrace:
    """What an FCD file gives: the movements, when each vehicle is on the map
    (``(time, node, up)`` rows in time order), and each node's vehicle id."""

    trajectories: Trajectories
    node_events: list
    vehicles: dict


def read_fcd(path: str | PathLike, topology: Topology | None = None) -> FcdTrace:
    """Read SUMO's FCD output (see the module docstring). With ``topology``, the
    vehicles must fit its nodes (vehicle k is node k)."""
    import sumolib.xml

    path = Path(path)
    samples: dict[str, list[tuple[float, float, float]]] = {}
    times: list[float] = []
    try:
        for k, step in enumerate(sumolib.xml.parse(str(path), "timestep"), start=1):
            t = _number(path, f"timestep {k}, time", step.time)
            if times and t < times[-1]:
                raise TopologyFileError(path, f"timestep {k}, time", f"a time >= the "
                                        f"timestep before's {times[-1]:g} (time never goes "
                                        "back)", got=step.time)
            times.append(t)
            for vehicle in step.getChild("vehicle") if step.hasChild("vehicle") else []:
                where = f"timestep {k} (time {t:g}), vehicle {vehicle.id!r}"
                samples.setdefault(vehicle.id, []).append(
                    (t, _number(path, f"{where}, x", vehicle.x),
                     _number(path, f"{where}, y", vehicle.y)))
    except ElementTree.ParseError as err:
        raise TopologyFileError(path, err.position[0], f"well-formed XML ({err})") from None
    if not samples:
        raise TopologyFileError(path, "timestep", "at least one <vehicle> in a <timestep> "
                                "(SUMO's --fcd-output)")
    order = sorted(samples, key=lambda v: (samples[v][0][0], v))
    if topology is not None and len(order) > topology.graph.number_of_nodes():
        raise TopologyFileError(path, "vehicle", f"at most {topology.graph.number_of_nodes()}"
                                f" vehicles, one per node of the topology, got {len(order)}")
    period = min((b - a for a, b in zip(times, times[1:]) if b > a), default=1.0)
    events = []
    for node, vehicle in enumerate(order):
        first, last = samples[vehicle][0][0], samples[vehicle][-1][0]
        if first > times[0]:
            events += [(times[0], node, False), (first, node, True)]
        if last < times[-1]:    # left the map (those still on it at the end stay up)
            events.append((last + period, node, False))
    return FcdTrace(Trajectories({node: samples[v] for node, v in enumerate(order)}),
                    sorted(events), dict(enumerate(order)))


def _number(path, where: str, text) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value):
        raise TopologyFileError(path, where, "a number", got=text)
    return value
