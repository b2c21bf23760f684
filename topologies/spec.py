"""Building topologies and dynamics from the ``[topology]`` / ``[mobility]`` spec tables.

See "Spec format" in ``docs/DESIGN.md``. Every key is checked: unknown keys, keys the
chosen generator or model does not use, and wrong values raise ``ValueError`` naming the
dotted field (``topology.radius``) and what was expected. File errors come from the
readers as :class:`~topologies.errors.TopologyFileError`.

``[topology]`` keys: ``generator`` (line | grid | random_geometric | complete | file),
``nodes``, ``rows``, ``cols``, ``radius`` (required by random_geometric; elsewhere the
radio range used when nodes move or for ``etx``), ``link_cost`` (hop | distance |
distance2 | etx; omitted: keep the generator's costs, or the file's model or costs),
``cost_range`` (complete), ``file``, and link defaults ``delay``, ``jitter``,
``bandwidth``, ``loss``. With ``generator = "file"``, the file's own ``link_cost``,
``radius`` and link defaults hold unless the table gives its own (a different value is
warned about, naming both).

``[mobility]`` keys: ``model`` (none | random_waypoint | gauss_markov | random_walk |
random_direction | rpgm | ns2 | bonnmotion | sumo_fcd | schedule; default none),
``speed`` (random_waypoint, random_walk, random_direction, rpgm), ``pause``
(random_waypoint, random_direction, rpgm), ``steady_state`` (random_waypoint),
``alpha``, ``mean_velocity``, ``mean_direction``, ``velocity_sd``, ``direction_sd``,
``time_step`` (gauss_markov), ``mode``, ``time``, ``distance`` (random_walk; ``time`` is
read under mode "time" only, ``distance`` under "distance" only), ``max_distance``,
``groups``, ``group_size``, ``group_size_sd``, ``group_change_prob`` (rpgm; ``groups``
or the two sizes, not both), ``resolution`` (every moving model and movement file;
default 1.0), ``file`` (ns2: an ns-2 trace, bonnmotion: BonnMotion's ``.movements``,
sumo_fcd: SUMO's FCD output, schedule: a CSV), ``scale`` (movement files: every
coordinate is multiplied by it, default 1.0; e.g. 0.001 for a trace in metres on a unit
topology), ``failures`` (every moving model and movement file: a schedule file whose
node rows ``time,u,,,up`` take nodes down and up
again while they move).

``[radio]`` (:data:`topologies.radio.RADIO_SCHEMA`): ``model = "unit_disk"`` keeps the
links above; ``"log_distance"`` links the nodes by the radio from their positions (a
topology without positions is an error naming ``radio.model``; ``radius`` then no longer
decides links: :func:`radio_from_spec` says so in a warning).

A trace must fit the topology: one whose coordinates span more than
:data:`TRACE_SPAN_LIMIT` times the topology's area (or its radius), or on which no two
nodes ever come within the radius, is refused with the ``scale`` that would fit it.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from os import PathLike
from pathlib import Path

import numpy as np

from topologies import generators
from topologies.dynamics import Dynamics
from topologies.files import parse_topology
from topologies.group_motion import rpgm
from topologies.link_cost import apply_link_cost
from topologies.mobility import mobility_dynamics, random_waypoint
from topologies.model import LINK_COST_MODELS, LINK_DEFAULTS, Topology
from topologies.motion_models import WALK_MODES, gauss_markov, random_direction, random_walk
from topologies.bonnmotion import read_movements
from topologies.ns2 import read_ns2_trace
from topologies.radio import Radio, check_positions, radio_from_table
from topologies.schedule import read_schedule, schedule_dynamics
from topologies.static import static_dynamics
from topologies.sumo_fcd import read_fcd
from topologies.schema import REQUIRED, Field, check_value
from topologies.values import (LINK_ATTRIBUTE_RULES, BadValue, check_float, check_int,
                               check_link_attribute)

# allow_disconnected: read by the runner (a run on a topology where a stream cannot reach
# the query node is refused unless the spec allows it).
_TOPOLOGY_COMMON = ({"generator", "link_cost", "radius", "allow_disconnected"}
                    | (set(LINK_DEFAULTS) - {"cost"}))
_TOPOLOGY_KEYS = {
    "line": {"nodes"},
    "grid": {"rows", "cols"},
    "random_geometric": {"nodes"},
    "complete": {"nodes", "cost_range"},
    "file": {"file"},
}
_MOVING = {"resolution", "failures"}
_MOBILITY_KEYS = {
    "none": set(),
    "random_waypoint": {"speed", "pause", "steady_state"} | _MOVING,
    "gauss_markov": {"alpha", "mean_velocity", "mean_direction", "velocity_sd",
                     "direction_sd", "time_step"} | _MOVING,
    "random_walk": {"speed", "mode", "time", "distance"} | _MOVING,
    "random_direction": {"speed", "pause"} | _MOVING,
    "rpgm": {"speed", "pause", "max_distance", "groups", "group_size", "group_size_sd",
             "group_change_prob"} | _MOVING,
    "ns2": {"file", "scale"} | _MOVING,
    "bonnmotion": {"file", "scale"} | _MOVING,
    "sumo_fcd": {"file", "scale"} | _MOVING,
    "schedule": {"file"},
}
#: The models that read a movement file, and the reader of each: ``(path, topology) ->
#: (trajectories, node events)`` (SUMO's vehicles are up only while on the map).
TRACE_READERS = {
    "ns2": lambda path, topo: (read_ns2_trace(path, topo), []),
    "bonnmotion": lambda path, topo: (read_movements(path, topo), []),
    "sumo_fcd": lambda path, topo: _fcd(read_fcd(path, topo)),
}
#: The models that move nodes from their topology positions (or uniform ones).
MOVING_MODELS = ("random_waypoint", "gauss_markov", "random_walk", "random_direction",
                 "rpgm")
#: The most nodes a generated topology may have: a typo such as ``rows = 1000000000``
#: must be an error, not a machine out of memory (routing tables grow with n²).
MAX_NODES = 100_000

#: The ``[topology]`` table (which keys each generator takes: ``_TOPOLOGY_KEYS``).
TOPOLOGY_SCHEMA = {
    "generator": Field("choice", REQUIRED, choices=tuple(_TOPOLOGY_KEYS),
                       doc="how the network is made"),
    "nodes": Field("integer", REQUIRED, low=1, high=MAX_NODES,
                   doc="line, random_geometric, complete: number of nodes"),
    "rows": Field("integer", REQUIRED, low=1, high=MAX_NODES, doc="grid: rows"),
    "cols": Field("integer", REQUIRED, low=1, high=MAX_NODES, doc="grid: columns"),
    "radius": Field("number", None, low=0, low_open=True, none=True,
                    doc="radio range (random_geometric: required; mobility, etx); file: "
                        "the file's `graph.radius`"),
    "link_cost": Field("choice", None, choices=LINK_COST_MODELS, none=True,
                       doc="cost model; none: the generator's costs, or the file's model "
                           "or costs"),
    "cost_range": Field("list", [1, 10], doc="complete: integer costs uniform in "
                                             "[low, high]"),
    "file": Field("str", REQUIRED, doc="file generator: node-link JSON or GraphML, "
                                       "relative to the spec's folder"),
    "allow_disconnected": Field("bool", False, doc="run even if a stream node cannot reach "
                                                   "the query node at time 0"),
    **{name: Field("number", LINK_DEFAULTS[name], none=name == "bandwidth",
                   doc=f"link default where the topology gives none; file: the file's "
                       f"`graph.defaults.{name}`",
                   **LINK_ATTRIBUTE_RULES[name])
       for name in LINK_DEFAULTS if name != "cost"},
}
#: The ``[mobility]`` table (which keys each model takes: ``_MOBILITY_KEYS``).
MOBILITY_SCHEMA = {
    "model": Field("choice", "none", choices=tuple(_MOBILITY_KEYS),
                   doc="how nodes move or links change"),
    "speed": Field("list", REQUIRED, doc="random_waypoint, random_walk, random_direction: "
                                         "[low, high] speed per time unit, both > 0; "
                                         "rpgm: the reference points' speed"),
    "pause": Field("number", 0.0, low=0, doc="random_waypoint: pause at each waypoint; "
                                             "random_direction: at each edge; rpgm: the "
                                             "reference points' pause"),
    "steady_state": Field("bool", False, doc="random_waypoint: start from the stationary "
                                             "distribution (ns-3's SteadyStateRandomWaypoint"
                                             "MobilityModel), so the mean speed does not "
                                             "decay over the run"),
    "alpha": Field("number", 0.85, low=0, high=1, doc="gauss_markov: memory (ns-3's "
                                                      "Alpha); 1: constant velocity"),
    "mean_velocity": Field("number", REQUIRED, low=0, low_open=True,
                           doc="gauss_markov: mean speed per time unit (ns-3's "
                               "MeanVelocity)"),
    "mean_direction": Field("number", None, none=True,
                            doc="gauss_markov: mean direction in radians (ns-3's "
                                "MeanDirection); none: uniform in [0, 2 pi) per node"),
    "velocity_sd": Field("number", 0.0, low=0,
                         doc="gauss_markov: standard deviation of the speed's Gaussian "
                             "draw (ns-3's NormalVelocity)"),
    "direction_sd": Field("number", 1.0, low=0,
                          doc="gauss_markov: standard deviation in radians of the "
                              "direction's Gaussian draw (ns-3's NormalDirection)"),
    "time_step": Field("number", 1.0, low=0, low_open=True,
                       doc="gauss_markov: time between updates (ns-3's TimeStep)"),
    "mode": Field("choice", "distance", choices=WALK_MODES,
                  doc="random_walk: a new speed and direction after `time` or after "
                      "`distance` (ns-3's Mode)"),
    "time": Field("number", 1.0, low=0, low_open=True,
                  doc="random_walk, mode time: time between draws (ns-3's Time)"),
    "distance": Field("number", 0.1, low=0, low_open=True,
                      doc="random_walk, mode distance: distance between draws (ns-3's "
                          "Distance)"),
    "max_distance": Field("number", REQUIRED, low=0, low_open=True,
                          doc="rpgm: largest distance of a member from its group's "
                              "reference point (BonnMotion's maxdist), less than half "
                              "the area's shorter side"),
    "groups": Field("integer", None, low=1, none=True,
                    doc="rpgm: a fixed number of groups, as equal as possible; none: "
                        "sizes drawn by group_size and group_size_sd"),
    "group_size": Field("number", 3.0, low=1,
                        doc="rpgm: mean group size (BonnMotion's average nodes per group)"),
    "group_size_sd": Field("number", 2.0, low=0,
                           doc="rpgm: standard deviation of the group size (BonnMotion's "
                               "groupSizeDeviation)"),
    "group_change_prob": Field("number", 0.01, low=0, high=1,
                               doc="rpgm: probability that a member within max_distance "
                                   "of another group's reference point joins it, at each "
                                   "of its waypoints (BonnMotion's pGroupChange)"),
    "resolution": Field("number", 1.0, low=0, low_open=True,
                        doc="positions sampled into link epochs this often"),
    "file": Field("str", REQUIRED, doc="ns2: the ns-2 movement trace; bonnmotion: "
                                       "BonnMotion's .movements (or .movements.gz); "
                                       "sumo_fcd: SUMO's --fcd-output XML; schedule: the "
                                       "CSV schedule"),
    "scale": Field("number", 1.0, low=0, low_open=True,
                   doc="ns2, bonnmotion, sumo_fcd: multiplies every coordinate (0.001: "
                       "metres onto a unit square)"),
    "failures": Field("str", None, none=True, doc="moving models and movement files: a "
                                                  "schedule of node rows (time,u,,,up) "
                                                  "taking nodes down and up"),
}
_REQUIRED = {"random_geometric": {"nodes", "radius"}, "line": {"nodes"},
             "grid": {"rows", "cols"}, "complete": {"nodes"}, "file": {"file"},
             "random_waypoint": {"speed"}, "gauss_markov": {"mean_velocity"},
             "random_walk": {"speed"}, "random_direction": {"speed"}, "ns2": {"file"},
             "rpgm": {"speed", "max_distance"},
             "bonnmotion": {"file"}, "sumo_fcd": {"file"}, "schedule": {"file"}}
#: Keys a model takes that another of its keys leaves unread (random_walk's mode).
UNREAD_UNDER = {("random_walk", "mode", "time"): "distance",
                ("random_walk", "mode", "distance"): "time"}


def _check_keys(table: str, section: Mapping, kind_key: str, kinds: dict[str, set],
                common: set[str]) -> str:
    """Validate the keys of ``section``; return the generator/model it names."""
    every = common | set().union(*kinds.values())
    for key in section:
        if key not in every:
            raise ValueError(f"{table}.{key}: unknown key; valid keys: "
                             f"{', '.join(sorted(every))}")
    kind = section.get(kind_key, "none" if table == "mobility" else None)
    if kind not in kinds:
        raise ValueError(f"{table}.{kind_key}: expected one of {', '.join(kinds)}, "
                         f"got {kind!r}")
    used = common | kinds[kind]
    for key in section:
        if key not in used:
            raise ValueError(f"{table}.{key}: not used by {kind_key} {kind!r} (it takes "
                             f"{', '.join(sorted(used))})")
    for key in sorted(_REQUIRED.get(kind, set())):
        if key not in section:
            raise ValueError(f"{table}.{key}: required by {kind_key} {kind!r}")
    return kind


def _value(field: str, value: object, check: Callable[[object], object]):
    try:
        return check(value)
    except BadValue as bad:
        raise ValueError(f"{field}: {bad}") from None


def _pair(field: str, value: object, item: Callable[[object], object]) -> tuple:
    if not (isinstance(value, (list, tuple)) and len(value) == 2):
        raise ValueError(f"{field}: expected a list [low, high], got {value!r}")
    low, high = (_value(f"{field}[{i}]", v, item) for i, v in enumerate(value))
    if high < low:
        raise ValueError(f"{field}: expected low <= high, got {value!r}")
    return low, high


def _path(field: str, value: object, base_dir: str | PathLike | None) -> Path:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{field}: expected a file path, got {value!r}")
    path = Path(value)
    return path if path.is_absolute() else Path(base_dir or ".") / path


def _shown(value: object) -> str:
    """A setting's value as a spec would spell it: ``"hop"``, ``0.5``, ``inf``."""
    return f'"{value}"' if isinstance(value, str) else f"{value:g}"


def _user_warning(field: str, message: str) -> None:
    warnings.warn(f"{field}: {message}", UserWarning, stacklevel=3)


def topology_from_spec(section: Mapping, seed: int | np.random.Generator,
                       base_dir: str | PathLike | None = None, *,
                       warn: Callable[[str, str], None] | None = None) -> Topology:
    """Build the topology a ``[topology]`` table describes.

    A topology file's own settings (``link_cost``, ``radius``, link defaults) are used
    unless the table gives its own; each one the table overrides with another value is
    reported by ``warn(field, message)`` (default: a ``UserWarning`` ``field: message``).
    A new ``radius`` also recomputes the costs of the file's ``etx`` model.

    Examples
    --------
    >>> topology_from_spec({"generator": "grid", "rows": 2, "cols": 3}, seed=1)
    Topology(6 nodes, 7 links)
    >>> from importlib.resources import files
    >>> topo = topology_from_spec({"generator": "file", "file": "five_nodes.json",
    ...                            "link_cost": "hop"}, seed=1,
    ...                           base_dir=files("topologies") / "data", warn=print)
    topology.link_cost "hop" in the spec overrides "distance" in five_nodes.json
    >>> topo.link_cost, topo.radius, topo.graph.edges[0, 2]["cost"]
    ('hop', 0.5, 1.0)
    >>> topo = topology_from_spec({"generator": "random_geometric", "nodes": 10,
    ...                            "radius": 0.5, "link_cost": "etx"}, seed=1)
    >>> topo.link_cost, topo.radius
    ('etx', 0.5)
    >>> topology_from_spec({"generator": "line", "nodes": 3, "colour": "red"}, seed=1)
    Traceback (most recent call last):
    ...
    ValueError: topology.colour: unknown key; valid keys: allow_disconnected, bandwidth, cols, cost_range, delay, file, generator, jitter, link_cost, loss, nodes, radius, rows
    """
    generator = _check_keys("topology", section, "generator", _TOPOLOGY_KEYS,
                            _TOPOLOGY_COMMON)
    defaults = {name: _value(f"topology.{name}", section[name],
                             lambda v, n=name: check_link_attribute(n, v))
                for name in LINK_DEFAULTS if name in section}
    radius = section.get("radius")
    if radius is not None:
        radius = _value("topology.radius", radius,
                        lambda v: check_float(v, low=0.0, low_open=True))
    link_cost = section.get("link_cost")
    if link_cost is not None and link_cost not in LINK_COST_MODELS:
        raise ValueError(f"topology.link_cost: expected one of "
                         f"{', '.join(LINK_COST_MODELS)}, got {link_cost!r}")

    def count(key: str) -> int:
        return _value(f"topology.{key}", section[key], TOPOLOGY_SCHEMA[key].check)

    if generator == "line":
        topo = generators.line(count("nodes"), defaults=defaults)
    elif generator == "grid":
        topo = generators.grid(count("rows"), count("cols"), defaults=defaults)
    elif generator == "random_geometric":
        topo = generators.random_geometric(count("nodes"), radius, seed, defaults=defaults)
    elif generator == "complete":
        cost_range = (1, 10)
        if "cost_range" in section:
            cost_range = _pair("topology.cost_range", section["cost_range"],
                               lambda v: check_int(v, low=0))
        topo = generators.complete(count("nodes"), cost_range, seed=seed, defaults=defaults)
    else:
        stated = parse_topology(_path("topology.file", section["file"], base_dir))
        given = {"link_cost": link_cost, "radius": radius, **defaults}
        for name, value in stated.settings.items():
            if given.get(name) is not None and given[name] != value:
                (warn or _user_warning)(f"topology.{name}", f"{_shown(given[name])} in the "
                                        f"spec overrides {_shown(value)} in {section['file']}")
        topo = stated.topology(defaults)
        # etx costs grow with distance / radius: the file's were for its own radius
        if (link_cost is None and topo.link_cost == "etx" and radius is not None
                and radius != topo.radius):
            link_cost = "etx"
    if radius is not None and radius != topo.radius:
        topo = Topology(topo.graph, defaults=topo.defaults, radius=radius,
                        link_cost=topo.link_cost)
    if link_cost is not None:
        try:
            topo = apply_link_cost(topo, link_cost, topo.radius)
        except ValueError as err:
            raise ValueError(f"topology.link_cost: {err}") from None
    return topo


#: How many times the topology's extent a trace may span before it is taken for a unit
#: mistake (a trace in metres on a unit square spans hundreds of times more).
TRACE_SPAN_LIMIT = 10.0


def check_trace_scale(trajectories, topo: Topology, path, duration: float) -> None:
    """Refuse a trace that cannot be meant for ``topo``: coordinates far outside its area,
    or no two nodes within ``topo.radius`` at any of 50 instants over the run.

    >>> from topologies.mobility import Trajectories
    >>> topo = generators.random_geometric(3, 0.5, seed=1)
    >>> metres = Trajectories({0: [(0.0, 0.0, 0.0)], 1: [(0.0, 800.0, 0.0)],
    ...                        2: [(0.0, 0.0, 600.0)]})
    >>> check_trace_scale(metres, topo, "walk.ns_movements", 10.0)
    Traceback (most recent call last):
    ...
    ValueError: mobility.file: walk.ns_movements: coordinates span 800 x 600 but the topology spans 1 x 1 (radius 0.5); a trace in other units? set mobility.scale = 0.00125
    >>> check_trace_scale(metres.scaled(0.0005), topo, "walk.ns_movements", 10.0)
    >>> check_trace_scale(metres.scaled(0.00125), topo, "walk.ns_movements", 10.0)
    Traceback (most recent call last):
    ...
    ValueError: mobility.file: walk.ns_movements: no two nodes come within the radius 0.5 during the run (every node isolated); check the trace's units (mobility.scale) against topology.radius
    """
    x0, y0, x1, y1 = trajectories.extent()
    span = max(x1 - x0, y1 - y0)
    width, height = _area(topo)
    room = max(width, height, topo.radius or 0.0)
    if span > TRACE_SPAN_LIMIT * room:
        raise ValueError(f"mobility.file: {path}: coordinates span {x1 - x0:g} x {y1 - y0:g} "
                         f"but the topology spans {width:g} x {height:g} (radius "
                         f"{topo.radius:g}); a trace in other units? set mobility.scale = "
                         f"{room / span:.3g}")
    positions = trajectories.sample(np.linspace(0.0, duration, 50))
    if positions.shape[1] < 2:
        return
    gaps = np.linalg.norm(positions[:, :, None, :] - positions[:, None, :, :], axis=-1)
    gaps[:, np.arange(positions.shape[1]), np.arange(positions.shape[1])] = np.inf
    if (gaps > topo.radius).all():
        raise ValueError(f"mobility.file: {path}: no two nodes come within the radius "
                         f"{topo.radius:g} during the run (every node isolated); check the "
                         "trace's units (mobility.scale) against topology.radius")


def _area(topo: Topology) -> tuple[float, float]:
    """The unit square, grown to hold every node position (e.g. of a grid)."""
    positions = np.array(list(topo.positions.values()) or [[1.0, 1.0]])
    return (max(1.0, float(positions[:, 0].max())), max(1.0, float(positions[:, 1].max())))


def node_outages(topo: Topology, section: Mapping, duration: float,
                 base_dir: str | PathLike | None = None) -> list[tuple[int, float, float]]:
    """When nodes are down in a run of this ``[mobility]`` table: ``(node, down_at,
    up_at)`` from the node rows of its ``failures`` file (or of its schedule file),
    ``[]`` when nothing fails. Call it on a table :func:`dynamics_from_spec` accepted.

    Examples
    --------
    >>> topo = topology_from_spec({"generator": "random_geometric", "nodes": 8,
    ...                            "radius": 0.6}, seed=2)
    >>> node_outages(topo, {"model": "random_waypoint", "speed": [0.05, 0.1]}, 10.0)
    []
    """
    model = section.get("model", "none")
    key = "file" if model == "schedule" else "failures"
    if model == "none" or key not in section:
        return []
    schedule = read_schedule(_path(f"mobility.{key}", section[key], base_dir), topo)
    return schedule.outages(duration)


def radio_from_spec(section: Mapping | None, topo: Topology, mobility: Mapping,
                    warn: Callable[[str, str], None] | None = None) -> Radio:
    """The radio a ``[radio]`` table describes, checked against the topology and the
    ``[mobility]`` table it will run with: ``log_distance`` needs every node's position
    unless the nodes move (the moving models place them), and cannot take the links of a
    schedule. A topology ``radius`` no longer decides links under ``log_distance``;
    ``warn(field, message)`` says so (default: a ``UserWarning``).

    >>> from topologies.generators import complete, line
    >>> radio_from_spec({"model": "log_distance"}, complete(3, seed=1), {})
    Traceback (most recent call last):
    ...
    ValueError: radio.model: "log_distance" needs every node's position (pos); nodes 0, 1, 2 have none
    >>> radio_from_spec({"model": "laser"}, line(3), {})
    Traceback (most recent call last):
    ...
    topologies.schema.FieldError: radio.model: expected one of unit_disk, log_distance, got 'laser'
    >>> topo = topology_from_spec({"generator": "random_geometric", "nodes": 5,
    ...                            "radius": 0.6}, seed=1)
    >>> radio_from_spec({"model": "log_distance", "meters_per_unit": 200}, topo, {},
    ...                 warn=print).exponent
    topology.radius 0.6 does not decide links under radio.model = "log_distance": the radio links nodes up to 0.975 units apart (range_m / meters_per_unit, without shadowing)
    3.0
    """
    radio = radio_from_table(section)
    if radio.model != "log_distance":
        return radio
    model = mobility.get("model", "none")
    if model == "schedule":
        raise ValueError('radio.model: "log_distance" decides the links itself; '
                         'mobility.model "schedule" sets them (use one or the other)')
    if model not in MOVING_MODELS:
        check_positions(radio, topo.nodes, topo.positions)
    reach = radio.range_m() / radio.meters_per_unit
    check_radio_scale(radio, topo)
    # a radius chosen to match the radio's range (to the digits shown) says nothing new
    if topo.radius is not None and f"{topo.radius:.3g}" != f"{reach:.3g}":
        (warn or _user_warning)("topology.radius", f"{topo.radius:g} does not decide links "
                                f'under radio.model = "log_distance": the radio links nodes '
                                f"up to {reach:.3g} units apart (range_m / meters_per_unit, "
                                "without shadowing)")
    return radio


def check_radio_scale(radio: Radio, topo: Topology) -> None:
    """Refuse a ``log_distance`` radio at one metre per unit on positions within the
    unit square (where generators and the moving models put nodes): its range of some 195
    units would link every node to every other. The message suggests the
    ``meters_per_unit`` that makes the range ``topology.radius`` (or 0.39 units, the
    shipped specs' 500 m square).

    >>> from topologies.generators import random_geometric
    >>> check_radio_scale(Radio(), random_geometric(5, 0.5, seed=1))
    Traceback (most recent call last):
    ...
    ValueError: radio.meters_per_unit: 1 m per unit on positions within the unit square gives radio.model = "log_distance" a range of 195 units, so every node links to every other; set radio.meters_per_unit (e.g. 390: a range of 0.5 units, topology.radius)
    >>> check_radio_scale(Radio(meters_per_unit=500.0), random_geometric(5, 0.5, seed=1))
    """
    width, height = _area(topo)
    if radio.meters_per_unit != 1.0 or max(width, height) > 1.0:
        return
    target, said = ((topo.radius, "topology.radius") if topo.radius is not None
                    else (0.39, "a 500 m square"))
    raise ValueError(f"radio.meters_per_unit: 1 m per unit on positions within the unit "
                     f'square gives radio.model = "log_distance" a range of '
                     f"{radio.range_m():.3g} units, so every node links to every other; set "
                     f"radio.meters_per_unit (e.g. {radio.range_m() / target:.3g}: a range "
                     f"of {target:g} units, {said})")


def dynamics_from_spec(topo: Topology, section: Mapping, duration: float,
                       seed: int | np.random.Generator,
                       base_dir: str | PathLike | None = None, *,
                       radio: Radio | Mapping | None = None,
                       radio_seed: int | np.random.Generator | None = None) -> Dynamics:
    """Build the dynamics a ``[mobility]`` table describes, over ``[0, duration)``.

    The moving models (:data:`MOVING_MODELS`) start nodes at their topology positions
    (uniform if any node has none; random waypoint's steady state draws its own) and
    move them on the unit square, or on ``[0, max x] x [0, max y]`` of the positions
    when that is larger; links follow ``topo.radius`` and
    ``topo.link_cost`` (hop when it has none). ``radio`` (a ``[radio]`` table or a
    :class:`~topologies.radio.Radio`, checked by :func:`radio_from_spec`): under
    ``log_distance`` the radio decides the links, static or moving, its shadowing drawn
    from ``radio_seed``.

    Examples
    --------
    >>> topo = topology_from_spec({"generator": "random_geometric", "nodes": 8,
    ...                            "radius": 0.6, "link_cost": "distance"}, seed=2)
    >>> dyn = dynamics_from_spec(topo, {"model": "random_waypoint", "speed": [0.05, 0.1],
    ...                                 "pause": 1.0}, duration=10.0, seed=3)
    >>> dyn.epochs[0], len(dyn.epochs) > 1
    (0.0, True)
    >>> dynamics_from_spec(topo, {}, duration=10.0, seed=3).epochs
    [0.0]
    >>> dynamics_from_spec(topo, {"model": "gauss_markov", "mean_velocity": 0.05,
    ...                           "alpha": 1.5}, duration=10.0, seed=3)
    Traceback (most recent call last):
    ...
    topologies.schema.FieldError: mobility.alpha: expected a number >= 0 and <= 1, got 1.5
    """
    model = _check_keys("mobility", section, "model", _MOBILITY_KEYS, {"model"})
    duration = _value("run.duration", duration, lambda v: check_float(v, low=0.0,
                                                                        low_open=True))
    radio = radio_from_table(radio)
    if model == "none":
        return static_dynamics(topo, radio=radio, seed=radio_seed)
    if model == "schedule":
        path = _path("mobility.file", section["file"], base_dir)
        return schedule_dynamics(topo, read_schedule(path, topo),
                                 meters_per_unit=radio.meters_per_unit)
    if radio.model == "log_distance":   # the radio's range stands for the radius
        topo = Topology(topo.graph, defaults=topo.defaults, link_cost=topo.link_cost,
                        radius=radio.range_m() / radio.meters_per_unit)
    if topo.radius is None:
        raise ValueError(f"mobility.model: {model!r} needs topology.radius (the radio range)")
    resolution = _value("mobility.resolution", section.get("resolution", 1.0),
                        lambda v: check_float(v, low=0.0, low_open=True))
    events = []
    if model in TRACE_READERS:
        path = _path("mobility.file", section["file"], base_dir)
        scale = _value("mobility.scale", section.get("scale", 1.0),
                       lambda v: check_float(v, low=0.0, low_open=True))
        trajectories, events = TRACE_READERS[model](path, topo)
        trajectories = trajectories.scaled(scale)
        check_trace_scale(trajectories, topo, path, duration)
    else:
        trajectories = _moving_nodes(topo, model, section, duration, seed)
    if "failures" in section:
        path = _path("mobility.failures", section["failures"], base_dir)
        if not path.is_file():
            raise ValueError(f"mobility.failures: no such file: {path}")
        failures = read_schedule(path, topo)
        if len(failures.node_events()) != len(failures.rows):
            raise ValueError(f"mobility.failures: {failures.path}: expected node rows only "
                             "(time,u,,,up); link changes belong to the mobility model")
        events = sorted(events + list(failures.node_events()))
    return mobility_dynamics(topo, trajectories, duration=duration, resolution=resolution,
                             node_events=events, radio=radio, seed=radio_seed)


def _fcd(trace) -> tuple:
    """An FCD trace's movements, and its vehicles entering and leaving the map as node
    events (a vehicle not on the map is down: the network does not see it)."""
    return trace.trajectories, list(trace.node_events)


def _moving_nodes(topo: Topology, model: str, section: Mapping, duration: float,
                  seed: int | np.random.Generator):
    """The trajectories of a moving ``model`` (one of :data:`MOVING_MODELS`) from its
    ``[mobility]`` table: nodes start at their topology positions (uniform if any node
    has none) and move on :func:`_area`."""
    def given(key: str):
        return check_value(f"mobility.{key}", MOBILITY_SCHEMA[key],
                           section.get(key, MOBILITY_SCHEMA[key].default))

    positions = topo.positions
    where = dict(area=_area(topo),
                 start=positions if len(positions) == len(topo.nodes) else None)
    if model == "gauss_markov":
        return gauss_markov(topo.nodes, duration, given("mean_velocity"), seed,
                            alpha=given("alpha"), time_step=given("time_step"),
                            mean_direction=given("mean_direction"),
                            velocity_sd=given("velocity_sd"),
                            direction_sd=given("direction_sd"), **where)
    speed = _pair("mobility.speed", section["speed"],
                  lambda v: check_float(v, low=0.0, low_open=True))
    if model == "random_walk":
        return random_walk(topo.nodes, duration, speed, seed, mode=given("mode"),
                           time=given("time"), distance=given("distance"), **where)
    if model == "random_direction":
        return random_direction(topo.nodes, duration, speed, given("pause"), seed, **where)
    if model == "rpgm":
        return _group_motion(topo, section, duration, speed, seed, given)
    return random_waypoint(topo.nodes, duration, speed, given("pause"), seed,
                           steady_state=given("steady_state"), **where)


def _group_motion(topo: Topology, section: Mapping, duration: float,
                  speed: tuple[float, float], seed: int | np.random.Generator,
                  given: Callable[[str], object]):
    """RPGM from its ``[mobility]`` table (:func:`topologies.group_motion.rpgm`): the
    groups' own random start, so the topology's positions are not read."""
    if "groups" in section and {"group_size", "group_size_sd"} & set(section):
        raise ValueError("mobility.groups: give groups or group_size / group_size_sd, "
                         "not both (groups fixes the count; the sizes draw it)")
    keys = ("pause", "groups", "group_size", "group_size_sd", "group_change_prob")
    options, radius = {key: given(key) for key in keys}, given("max_distance")
    try:   # what depends on the area or the node count, checked by the model
        return rpgm(topo.nodes, duration, speed, radius, seed, area=_area(topo), **options)
    except ValueError as bad:   # its message starts with the parameter, a key here
        raise ValueError(f"mobility.{bad}") from None


def mobility_settings(section: Mapping) -> dict:
    """A checked ``[mobility]`` table with the defaults its model uses filled in.

    >>> mobility_settings({"model": "random_waypoint", "speed": [0.1, 0.2]})
    {'failures': None, 'model': 'random_waypoint', 'pause': 0.0, 'resolution': 1.0, 'speed': [0.1, 0.2], 'steady_state': False}
    >>> mobility_settings({"model": "random_walk", "speed": [0.1, 0.2]})["distance"]
    0.1
    >>> mobility_settings({})
    {'model': 'none'}
    """
    model = section.get("model", "none")
    out = {"model": model}
    unread = {key for (owner, by, value), key in UNREAD_UNDER.items()
              if owner == model and section.get(by, MOBILITY_SCHEMA[by].default) == value}
    for key in sorted(_MOBILITY_KEYS[model] - unread):
        default = MOBILITY_SCHEMA[key].default
        if key in section or default is not REQUIRED:
            out[key] = section.get(key, default)
    return dict(sorted(out.items()))


def section_keys(section: str) -> set[str]:
    """Every key a ``[topology]`` or ``[mobility]`` table may hold.

    >>> sorted(section_keys("mobility"))[:3]
    ['alpha', 'direction_sd', 'distance']
    """
    return set(TOPOLOGY_SCHEMA if section == "topology" else MOBILITY_SCHEMA)
