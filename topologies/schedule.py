"""Link schedules: CSV files of timed link (and node) changes applied to a topology.

::

    time,u,v,cost,delay,bandwidth,loss,up
    0.0,0,1,2.0,,,,
    5.0,0,1,,,,,0
    8.0,1,3,4.0,0.02,,,1
    9.0,2,,,,,,0

reads: link 0-1 costs 2 from the start; it goes down at t=5 (its cost is kept for when
it returns); a link 1-3 the topology does not have appears at t=8; node 2 dies at t=9.

The header is required; ``time,u,v,cost`` must be there, ``delay``, ``jitter``,
``bandwidth``, ``loss`` and ``up`` are optional columns. A row sets a link's attributes
from its time on; an empty cell keeps the link's previous value (a link absent from the
topology starts from the topology's link defaults and is up). ``up`` accepts
``0/1/true/false``. Rows with an empty ``v`` change node ``u``'s liveness and need
``up``. Rows may come in any time order; rows at the same time apply in file order.
Blank lines and lines starting with ``#`` are skipped.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

import networkx as nx

from topologies.dynamics import Dynamics, set_lengths
from topologies.errors import TopologyFileError
from topologies.model import Topology
from topologies.values import BadValue, check_float, check_int, check_link_attribute

REQUIRED_COLUMNS = ("time", "u", "v", "cost")
OPTIONAL_COLUMNS = ("delay", "jitter", "bandwidth", "loss", "up")
_UP = {"0": False, "1": True, "false": False, "true": True}


@dataclass(frozen=True)
class ScheduleRow:
    """One change: at ``time``, link ``(u, v)`` (or node ``u`` when ``v`` is None)."""

    time: float
    line: int
    u: int
    v: int | None
    attrs: dict = field(default_factory=dict)
    up: bool | None = None


@dataclass(frozen=True)
class Schedule:
    """The rows of a schedule file, in file order, and the file they came from."""

    path: str
    rows: tuple[ScheduleRow, ...]

    def node_events(self) -> list[tuple[float, int, bool]]:
        """The node rows as ``(time, node, alive)``, e.g. for ``mobility_dynamics``.

        Examples
        --------
        >>> loads_schedule("time,u,v,cost,up\\n9,2,,,0\\n1,0,1,3,\\n").node_events()
        [(9.0, 2, False)]
        """
        return [(r.time, r.u, r.up) for r in self.rows if r.v is None]

    def outages(self, end: float) -> list[tuple[int, float, float]]:
        """Each node's down intervals ``(node, down_at, up_at)`` from its node rows, in
        time order, clipped to ``[0, end)``: a node still down at ``end`` comes back at
        ``end``, and an outage from ``end`` on is left out.

        Examples
        --------
        >>> rows = loads_schedule("time,u,v,cost,up\\n35,7,,,0\\n15,3,,,0\\n25,3,,,1\\n")
        >>> rows.outages(60.0)
        [(3, 15.0, 25.0), (7, 35.0, 60.0)]
        >>> rows.outages(20.0)
        [(3, 15.0, 20.0)]
        """
        down: dict[int, float] = {}
        spans = []
        for time, node, up in sorted(self.node_events(), key=lambda e: e[0]):
            if not up:
                down.setdefault(node, time)
            elif node in down:
                spans.append((node, down.pop(node), time))
        spans += [(node, t, float(end)) for node, t in down.items()]
        return sorted(((node, a, min(b, float(end))) for node, a, b in spans if a < end),
                      key=lambda s: (s[1], s[0]))

    def check_nodes(self, topology: Topology) -> None:
        """Raise :class:`TopologyFileError` for a row naming a node not in ``topology``."""
        for row in self.rows:
            for column, node in (("u", row.u), ("v", row.v)):
                if node is not None and node not in topology.graph:
                    raise TopologyFileError(self.path, f"line {row.line}, {column}",
                                            "a node of the topology", got=node)


def _cell(path, line_no: int, column: str, text: str, check):
    try:
        return check(text)
    except BadValue as bad:
        raise TopologyFileError(path, f"line {line_no}, {column}", bad.expected,
                                got=text) from None


def _up(text: str) -> bool:
    value = _UP.get(text.strip().lower())
    if value is None:
        raise BadValue("0, 1, true or false", text)
    return value


def loads_schedule(text: str, path: str | PathLike = "<string>",
                   topology: Topology | None = None) -> Schedule:
    """Parse schedule CSV text; ``path`` only names it in errors.

    Examples
    --------
    >>> s = loads_schedule("time,u,v,cost,up\\n0,0,1,2.5,\\n4,0,1,,false\\n", "s.csv")
    >>> [(r.time, r.u, r.v, r.attrs, r.up) for r in s.rows]
    [(0.0, 0, 1, {'cost': 2.5}, None), (4.0, 0, 1, {}, False)]
    >>> loads_schedule("time,u,v,cost\\n1,0,1,cheap\\n", "s.csv")
    Traceback (most recent call last):
    ...
    topologies.errors.TopologyFileError: s.csv: line 2, cost: expected a number >= 0, got 'cheap'
    """
    header, rows = None, []
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cells = [c.strip() for c in next(csv.reader([line]))]
        if header is None:
            valid = REQUIRED_COLUMNS + OPTIONAL_COLUMNS
            for name in cells:
                if name not in valid:
                    raise TopologyFileError(path, line_no,
                                            f"a header of columns among {','.join(valid)}",
                                            got=name)
            missing = [c for c in REQUIRED_COLUMNS if c not in cells]
            if missing or len(set(cells)) != len(cells):
                raise TopologyFileError(path, line_no, "a header with time,u,v,cost and "
                                        "no column twice", got=line.strip())
            header = cells
            continue
        if len(cells) != len(header):
            raise TopologyFileError(path, line_no, f"{len(header)} cells "
                                    f"({','.join(header)})", got=line.strip())
        row = dict(zip(header, cells))
        time = _cell(path, line_no, "time", row["time"],
                     lambda s: check_float(s, low=0.0, from_text=True))
        u = _cell(path, line_no, "u", row["u"], lambda s: check_int(s, from_text=True))
        up = None if not row.get("up") else _cell(path, line_no, "up", row["up"], _up)
        given = [c for c in header if c not in ("time", "u", "v", "up") and row[c]]
        if not row["v"]:
            if up is None or given:
                raise TopologyFileError(path, line_no, "a node row (empty v) to give only "
                                        "time, u and up", got=line.strip())
            rows.append(ScheduleRow(time, line_no, u, None, {}, up))
            continue
        v = _cell(path, line_no, "v", row["v"], lambda s: check_int(s, from_text=True))
        if u == v:
            raise TopologyFileError(path, f"line {line_no}, v", "a node other than u", got=v)
        attrs = {name: _cell(path, line_no, name, row[name],
                             lambda s, n=name: check_link_attribute(n, s, from_text=True))
                 for name in given}
        rows.append(ScheduleRow(time, line_no, u, v, attrs, up))
    if header is None:
        raise TopologyFileError(path, 1, "a header line time,u,v,cost[,...]")
    schedule = Schedule(str(path), tuple(rows))
    if topology is not None:
        schedule.check_nodes(topology)
    return schedule


def read_schedule(path: str | PathLike, topology: Topology | None = None) -> Schedule:
    """Read a schedule CSV file (see the module docstring)."""
    return loads_schedule(Path(path).read_text(encoding="utf-8"), path, topology)


class ScheduleDynamics(Dynamics):
    """A topology changed by a :class:`Schedule` at the times of its rows."""

    def __init__(self, topo: Topology, schedule: Schedule, meters_per_unit: float = 1.0):
        schedule.check_nodes(topo)
        self.topology = topo
        self.schedule = schedule
        self.meters_per_unit = meters_per_unit
        self._rows = sorted(schedule.rows, key=lambda r: (r.time, r.line))
        super().__init__([0.0] + sorted({r.time for r in self._rows if r.time > 0}))

    def _build(self, index: int) -> nx.Graph:
        now = self.epochs[index]
        links = {frozenset(e): dict(a, up=True) for *e, a in self.topology.graph.edges(data=True)}
        alive = dict.fromkeys(self.topology.nodes, True)
        for row in self._rows:
            if row.time > now:
                break
            if row.v is None:
                alive[row.u] = row.up
                continue
            link = links.setdefault(frozenset((row.u, row.v)),
                                    dict(self.topology.defaults, up=True))
            link.update(row.attrs)
            if row.up is not None:
                link["up"] = row.up
        graph = nx.Graph()
        for node, attrs in self.topology.graph.nodes(data=True):
            graph.add_node(node, **attrs, alive=alive[node])
        for pair, attrs in links.items():
            u, v = sorted(pair)
            if attrs.pop("up") and alive[u] and alive[v]:
                graph.add_edge(u, v, **attrs)
        set_lengths(graph, self.meters_per_unit)
        return graph

    def with_radio(self, radio, seed) -> "ScheduleDynamics":
        """The same schedule with the lengths of ``radio``'s scale; a schedule sets its
        links itself, so only the unit disk applies (``seed`` is not used)."""
        from topologies.radio import radio_from_table

        radio = radio_from_table(radio)
        if radio.model != "unit_disk":
            raise ValueError(f'radio.model: "{radio.model}" decides the links itself; a '
                             "schedule sets them (use one or the other)")
        return ScheduleDynamics(self.topology, self.schedule, radio.meters_per_unit)


def schedule_dynamics(topo: Topology, schedule: Schedule, *,
                      meters_per_unit: float = 1.0) -> Dynamics:
    """Dynamics of ``topo`` changed by ``schedule`` (a link between nodes with positions
    is ``meters_per_unit`` metres a unit long: its ``length_m``).

    Examples
    --------
    >>> from topologies.generators import line
    >>> s = loads_schedule("time,u,v,cost,up\\n2,0,1,5,\\n4,1,2,,0\\n", "s.csv")
    >>> dyn = schedule_dynamics(line(3), s)
    >>> dyn.epochs
    [0.0, 2.0, 4.0]
    >>> [sorted(dyn.snapshot(t).edges(data="cost")) for t in (0, 3, 4)]
    [[(0, 1, 1.0), (1, 2, 1.0)], [(0, 1, 5.0), (1, 2, 1.0)], [(0, 1, 5.0)]]
    """
    return ScheduleDynamics(topo, schedule, meters_per_unit)
