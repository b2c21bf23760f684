"""Node movement: piecewise-linear trajectories, random waypoint, and link epochs.

:class:`Trajectories` holds, per node, waypoints ``(t, x, y)`` joined by straight lines
(two waypoints at the same time are a jump). :func:`mobility_dynamics` samples the
positions every ``resolution`` time units and links the nodes at most ``radius`` apart,
costed by a link-cost model: the radio-range model of ad hoc networks. With a
log-distance radio (:mod:`topologies.radio`) the radio decides the links instead, and
gives each one its bit error rate at every sample.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import networkx as nx
import numpy as np

from topologies.dynamics import Dynamics
from topologies.link_cost import check_model, link_costs
from topologies.model import LINK_DEFAULTS, Topology
from topologies.radio import Radio, radio_from_table
from topologies.rng import as_generator
from topologies.stationary import stationary_start

#: The link attributes a link keeps from the topology as nodes move (its cost is the
#: epoch's).
_CARRIED = ("delay", "jitter", "bandwidth", "loss")


class Trajectories:
    """Piecewise-linear positions of nodes over time.

    Parameters
    ----------
    waypoints : mapping of int to sequence of (t, x, y)
        Per node, waypoints with non-decreasing times. Before the first waypoint a node
        is at its first position, after the last at its last one.

    Examples
    --------
    >>> tr = Trajectories({0: [(0, 0, 0), (2, 2, 0)], 1: [(0, 1, 1)]})
    >>> tr.position(0, 1.5), tr.position(0, 9.0), tr.position(1, 0.5)
    ((1.5, 0.0), (2.0, 0.0), (1.0, 1.0))
    >>> tr.sample([0.0, 1.0]).tolist()
    [[[0.0, 0.0], [1.0, 1.0]], [[1.0, 0.0], [1.0, 1.0]]]
    """

    def __init__(self, waypoints: Mapping[int, Sequence[tuple[float, float, float]]]):
        self._times: dict[int, np.ndarray] = {}
        self._xy: dict[int, np.ndarray] = {}
        for node in sorted(waypoints):
            points = np.asarray(waypoints[node], dtype=float).reshape(-1, 3)
            if len(points) == 0:
                raise ValueError(f"trajectory of node {node}: expected at least one waypoint")
            if not np.isfinite(points).all():
                raise ValueError(f"trajectory of node {node}: expected finite numbers")
            if (np.diff(points[:, 0]) < 0).any():
                raise ValueError(f"trajectory of node {node}: expected non-decreasing times")
            self._times[node] = points[:, 0]
            self._xy[node] = points[:, 1:]

    @property
    def nodes(self) -> list[int]:
        """Nodes with a trajectory, sorted."""
        return list(self._times)

    @property
    def end(self) -> float:
        """Time of the last waypoint of any node (after it, nothing moves)."""
        return max(float(t[-1]) for t in self._times.values()) if self._times else 0.0

    def waypoints(self, node: int) -> list[tuple[float, float, float]]:
        """The waypoints ``(t, x, y)`` of ``node``."""
        return [(float(t), float(x), float(y))
                for t, (x, y) in zip(self._times[node], self._xy[node])]

    def _node_positions(self, node: int, times: np.ndarray) -> np.ndarray:
        tk, xy = self._times[node], self._xy[node]
        # Right-side search: at the time of a jump the node is already at its new place.
        idx = np.clip(np.searchsorted(tk, times, side="right") - 1, 0, len(tk) - 1)
        nxt = np.minimum(idx + 1, len(tk) - 1)
        span = tk[nxt] - tk[idx]
        frac = np.where(span > 0, (times - tk[idx]) / np.where(span > 0, span, 1.0), 0.0)
        frac = np.clip(frac, 0.0, 1.0)[:, None]
        return xy[idx] + frac * (xy[nxt] - xy[idx])

    def position(self, node: int, t: float) -> tuple[float, float]:
        """Position of ``node`` at time ``t``."""
        if node not in self._times:
            raise ValueError(f"node {node} has no trajectory")
        x, y = self._node_positions(node, np.array([float(t)]))[0]
        return (float(x), float(y))

    def scaled(self, factor: float) -> "Trajectories":
        """The same movements with every coordinate multiplied by ``factor`` (times kept),
        e.g. a trace in metres brought onto a unit-square topology.

        >>> Trajectories({0: [(0.0, 100.0, 50.0)]}).scaled(0.01).waypoints(0)
        [(0.0, 1.0, 0.5)]
        """
        return Trajectories({node: [(t, x * factor, y * factor)
                                    for t, x, y in self.waypoints(node)]
                             for node in self.nodes})

    def extent(self) -> tuple[float, float, float, float]:
        """``(min x, min y, max x, max y)`` over every waypoint."""
        xy = np.concatenate(list(self._xy.values()))
        return (float(xy[:, 0].min()), float(xy[:, 1].min()),
                float(xy[:, 0].max()), float(xy[:, 1].max()))

    def sample(self, times: Sequence[float]) -> np.ndarray:
        """Positions at ``times``: array of shape ``(len(times), len(nodes), 2)``."""
        times = np.asarray(times, dtype=float)
        out = np.empty((len(times), len(self._times), 2))
        for k, node in enumerate(self._times):
            out[:, k, :] = self._node_positions(node, times)
        return out


def _positive_pair(name: str, value: object) -> tuple[float, float]:
    if not (isinstance(value, (list, tuple)) and len(value) == 2
            and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                    and np.isfinite(v) and v > 0 for v in value)):
        raise ValueError(f"{name}: expected two numbers > 0, got {value!r}")
    return float(value[0]), float(value[1])


def _speed_range(speed: object) -> tuple[float, float]:
    """``speed`` as ``(low, high)`` with ``0 < low <= high``."""
    low, high = _positive_pair("speed", speed)
    if high < low:
        raise ValueError(f"speed: expected [low, high] with low <= high, got {speed!r}")
    return low, high


def random_waypoint(nodes: int | Iterable[int], duration: float,
                    speed: tuple[float, float], pause: float,
                    seed: int | np.random.Generator,
                    area: tuple[float, float] = (1.0, 1.0),
                    start: Mapping[int, tuple[float, float]] | None = None,
                    steady_state: bool = False) -> Trajectories:
    """Random waypoint movement on ``[0, area[0]] x [0, area[1]]``.

    Each node repeatedly picks a destination uniformly in the area and a speed uniformly
    in ``speed``, moves there in a straight line, then rests ``pause`` time units, until
    ``duration`` is covered. Started so, the nodes' mean speed decays over the run;
    ``steady_state`` draws each node's first leg (or rest) from the model's stationary
    distribution instead (:func:`topologies.stationary.stationary_start`), so that it
    does not.

    Parameters
    ----------
    nodes : int or iterable of int
        ``n`` (nodes ``0 .. n-1``) or the node ids.
    duration : float
        Time to cover (> 0).
    speed : (low, high)
        Speed range, ``0 < low <= high`` (a zero speed would never arrive).
    pause : float
        Rest at each destination (>= 0).
    seed : int or numpy.random.Generator
    area : (width, height)
    start : mapping of node to (x, y), optional
        Initial positions (e.g. the topology's); uniform in the area if not given.
        A steady-state start draws its own.
    steady_state : bool
        Start from the stationary distribution (ns-3's
        SteadyStateRandomWaypointMobilityModel).

    Examples
    --------
    >>> tr = random_waypoint(3, 10.0, speed=(0.1, 0.2), pause=1.0, seed=4)
    >>> tr.nodes, tr.end >= 10.0
    ([0, 1, 2], True)
    >>> x, y = tr.position(2, 5.0); 0 <= x <= 1 and 0 <= y <= 1
    True
    >>> random_waypoint(3, 10.0, (0.1, 0.2), 1.0, seed=4, steady_state=True).nodes
    [0, 1, 2]
    """
    node_ids = list(range(nodes)) if isinstance(nodes, int) else sorted(nodes)
    if not (isinstance(duration, (int, float)) and np.isfinite(duration) and duration > 0):
        raise ValueError(f"duration: expected a number > 0, got {duration!r}")
    low, high = _speed_range(speed)
    if not (isinstance(pause, (int, float)) and np.isfinite(pause) and pause >= 0):
        raise ValueError(f"pause: expected a number >= 0, got {pause!r}")
    width, height = _positive_pair("area", area)
    rng = as_generator(seed)
    size = np.array([width, height], dtype=float)
    waypoints = {}
    for node in node_ids:
        if steady_state:
            points = stationary_start(rng, size, (low, high), pause)
            t, pos = points[-1][0], np.array(points[-1][1:])
        else:
            if start is not None and node in start:
                pos = np.asarray(start[node], dtype=float)
            else:
                pos = rng.random(2) * size
            t = 0.0
            points = [(t, *pos)]
        while t < duration:
            dest = rng.random(2) * size
            t += float(np.linalg.norm(dest - pos)) / rng.uniform(low, high)
            points.append((t, *dest))
            if pause > 0:
                t += pause
                points.append((t, *dest))
            pos = dest
        waypoints[node] = points
    return Trajectories(waypoints)


class MobilityDynamics(Dynamics):
    """Links between nodes within radio range, re-evaluated at sampled times.

    Built by :func:`mobility_dynamics`; each epoch keeps numpy arrays (link index pairs,
    costs, liveness, positions, bit error rates, lengths in metres) and becomes a graph
    only when asked for. A link's ``length_m`` is its length at the epoch's first
    sample (under the unit disk an epoch lasts while links and costs stay the same).
    """

    def __init__(self, topo: Topology, epochs: list[float], states: list[tuple],
                 radio: Radio | None = None, inputs: dict | None = None):
        super().__init__(epochs)
        self.topology = topo
        self.radio = radio
        self._states = states
        self._inputs = inputs or {}
        self._nodes = topo.nodes
        self._tables = None     # built by link_table when first asked for

    def with_radio(self, radio, seed) -> "MobilityDynamics":
        """The same movements under ``radio`` (a :class:`~topologies.radio.Radio` or a
        ``[radio]`` table); ``seed`` draws its shadowing."""
        return mobility_dynamics(self.topology, **self._inputs, radio=radio, seed=seed)

    def _build(self, index: int) -> nx.Graph:
        pairs, costs, alive, positions, bers, lengths = self._states[index]
        nodes = self.topology.nodes
        graph = nx.Graph()
        graph.add_nodes_from(
            (node, {"pos": (float(x), float(y)), "alive": bool(up)})
            for node, (x, y), up in zip(nodes, positions, alive))
        adjacency, defaults = self.topology.graph.adj, self.topology.defaults
        links = []
        for (i, j), cost, ber, length in zip(pairs.tolist(), costs.tolist(), bers.tolist(),
                                             lengths.tolist()):
            u, v = nodes[i], nodes[j]
            # Links known to the topology keep their delay/bandwidth/...; new ones
            # (nodes that moved into range) take the topology's link defaults.
            attrs = dict(adjacency[u].get(v, defaults))
            attrs.update(cost=cost, ber=ber, length_m=length)
            links.append((u, v, attrs))
        graph.add_edges_from(links)
        return graph

    def link_table(self, index: int) -> tuple:
        """Epoch ``index`` as arrays, what :class:`emulator.network.NetView` takes:
        ``(nodes, alive, tail, head, attrs)`` with ``tail``/``head`` positions in
        ``nodes`` and one array per link attribute — the same links and values as
        :meth:`snapshot`'s graph, without building it (a 1,000-node epoch's graph costs
        0.1-0.3 s).

        >>> from topologies.generators import line
        >>> dyn = mobility_dynamics(line(3), Trajectories({}), duration=1, radius=1.5)
        >>> nodes, alive, tail, head, attrs = dyn.link_table(0)
        >>> nodes, tail.tolist(), head.tolist(), attrs["cost"].tolist()
        ([0, 1, 2], [0, 1], [1, 2], [1.0, 1.0])
        """
        tables = self._tables
        if tables is None:
            tables = self._tables = self._link_tables()
        tail, head, attrs = tables[index]
        return list(self._nodes), self._states[index][2], tail, head, dict(attrs)

    def _link_tables(self) -> list[tuple]:
        """Every epoch's ``(tail, head, attrs)`` for :meth:`link_table`, built once: the
        attributes a link carries from the topology are looked up for the links of all
        epochs at once (one search over the topology's links, not one per epoch)."""
        states, n = self._states, len(self._nodes)
        pairs = np.concatenate([state[0] for state in states]).reshape(-1, 2)
        known_keys, known_values = self._known_links()
        keys = pairs[:, 0].astype(np.int64) * n + pairs[:, 1]
        at = np.minimum(np.searchsorted(known_keys, keys), max(len(known_keys) - 1, 0))
        known = known_keys[at] == keys if len(known_keys) else np.zeros(len(keys), bool)
        defaults, columns = self.topology.defaults, {}
        for k, name in enumerate(_CARRIED):
            # links known to the topology keep their attributes; new ones take its defaults
            value = known_values[at, k] if len(known_keys) else 0.0
            columns[name] = np.where(known, value, float(defaults[name]))
            # epochs share the column: a caller must not write into an epoch's slice
            columns[name].flags.writeable = False
        ends = np.cumsum([len(state[0]) for state in states]).tolist()
        tables = []
        for (pairs, costs, _, _, bers, lengths), start, end in zip(states, [0] + ends[:-1],
                                                                 ends):
            attrs = {"cost": np.asarray(costs, dtype=float)}
            attrs.update((name, column[start:end]) for name, column in columns.items())
            attrs["ber"], attrs["length_m"] = bers, lengths
            tables.append((pairs[:, 0], pairs[:, 1], attrs))
        return tables

    def __getstate__(self):
        # the link tables are rebuilt, identically, where they are used (as snapshots are)
        state = super().__getstate__()
        state["_tables"] = None
        return state

    def _known_links(self):
        """The topology's links as sorted keys ``i * n + j`` (i < j, positions) and their
        carried attributes, built once."""
        cached = getattr(self, "_known", None)
        if cached is None:
            nodes = self.topology.nodes
            pos = {u: k for k, u in enumerate(nodes)}
            rows = sorted((min(pos[u], pos[v]) * len(nodes) + max(pos[u], pos[v]),
                           [float(d.get(name, LINK_DEFAULTS[name])) for name in _CARRIED])
                          for u, v, d in self.topology.graph.edges(data=True))
            cached = self._known = (np.array([r[0] for r in rows], dtype=np.int64),
                                    np.array([r[1] for r in rows], dtype=float)
                                    .reshape(len(rows), len(_CARRIED)))
        return cached


def mobility_dynamics(topo: Topology, trajectories: Trajectories, *, duration: float,
                      resolution: float = 1.0, radius: float | None = None,
                      link_cost: str | None = None,
                      node_events: Iterable[tuple[float, int, bool]] = (),
                      radio: Radio | Mapping | None = None,
                      seed: int | np.random.Generator | None = None) -> Dynamics:
    """Link epochs from moving nodes.

    Positions are sampled at ``0, resolution, 2 * resolution, ... < duration`` and at the
    times of ``node_events``; nodes at most ``radius`` apart are linked, with the cost
    of ``link_cost``. A sample that changes nothing (same links, costs and liveness)
    adds no epoch. Each link's ``length_m`` is its distance times the radio's
    ``meters_per_unit``.

    With a ``log_distance`` radio, the radio links the nodes instead of ``radius``
    (:meth:`topologies.radio.Radio.links`: where a reference frame's error rate is below
    ``link_fer``) and gives each link its ``ber``, so link quality follows the distance
    at every sample (and so does the shadowing, drawn afresh per sample from ``seed``):
    a sample whose bit error rates moved is an epoch. Cost models that need a range
    (``etx``) take the radio's, :meth:`~topologies.radio.Radio.range_m` in position units.

    Parameters
    ----------
    topo : Topology
        Nodes, their link attributes, and ``radius``/``link_cost`` when not given here.
        Nodes without a trajectory stay at their ``pos``.
    trajectories : Trajectories
    duration, resolution : float
    radius : float, optional
        Radio range (default ``topo.radius``; one of them is needed).
    link_cost : str, optional
        Cost model (default ``topo.link_cost``, else ``"hop"``).
    node_events : iterable of (time, node, alive)
        Nodes leaving (``False``) and joining again (``True``).
    radio : Radio or mapping, optional
        A :class:`~topologies.radio.Radio` or a ``[radio]`` table; none: the unit disk.
    seed : int or numpy.random.Generator, optional
        Draws the radio's shadowing (needed when ``shadowing_db > 0``).

    Examples
    --------
    >>> from topologies.generators import line
    >>> topo = line(2)      # nodes 0 and 1, one unit apart
    >>> tr = Trajectories({1: [(0, 1, 0), (4, 3, 0)]})   # node 1 moves away
    >>> dyn = mobility_dynamics(topo, tr, duration=4, resolution=1, radius=1.6,
    ...                         link_cost="distance")
    >>> dyn.epochs
    [0.0, 1.0, 2.0]
    >>> [sorted(dyn.snapshot(t).edges(data="cost")) for t in dyn.epochs]
    [[(0, 1, 1.0)], [(0, 1, 1.5)], []]

    A log-distance radio, 100 m a unit (its range is 1.95 units): the link's bit error
    rate grows as node 1 moves away, until the link is gone.

    >>> dyn = mobility_dynamics(topo, tr, duration=4, resolution=1,
    ...                         radio={"model": "log_distance", "meters_per_unit": 100})
    >>> [[(f"{d['ber']:.1e}", d["length_m"]) for *_, d in dyn.snapshot(t).edges(data=True)]
    ...  for t in dyn.epochs]
    [[('1.6e-21', 100.0)], [('4.3e-07', 150.0)], []]
    """
    inputs = dict(trajectories=trajectories, duration=duration, resolution=resolution,
                  radius=radius, link_cost=link_cost, node_events=tuple(node_events))
    radio = radio_from_table(radio)
    shadowed = radio.model == "log_distance" and radio.shadowing_db > 0
    rng = as_generator(seed) if shadowed and seed is not None else None
    radius = _link_range(topo, radius, radio)
    model = check_model(link_cost or topo.link_cost or "hop", radius)
    _check_positive(duration=duration, resolution=resolution)
    nodes = topo.nodes
    index = {node: k for k, node in enumerate(nodes)}
    still = _still_positions(topo, trajectories, index)
    events = _checked_node_events(inputs["node_events"], index)
    times = np.unique(np.concatenate([np.arange(0.0, duration, resolution),
                                      [t for t, _, _ in events if t < duration]]))
    # Every sample at once: positions (samples x nodes x 2) and liveness (samples x
    # nodes), then the links of all samples in a few array operations
    # (:func:`_sampled_epochs`) rather than a Python pass per sample.
    positions = np.empty((len(times), len(nodes), 2))
    for node, pos in still.items():
        positions[:, index[node]] = pos
    positions[:, [index[n] for n in trajectories.nodes]] = trajectories.sample(times)
    alive = np.ones((len(times), len(nodes)), dtype=bool)
    for t, node, up in events:   # sorted: a later event of a node overrides an earlier one
        alive[np.searchsorted(times, t, side="left"):, index[node]] = up
    epochs, states = _sampled_epochs(times, positions, alive, radius, model, radio, rng)
    return MobilityDynamics(topo, epochs, states, radio, inputs)


def _link_range(topo: Topology, radius: float | None, radio: Radio) -> float:
    """The range, in position units, that links nodes under the unit disk and that
    range-based costs (``etx``) relate to: the radio's own under ``log_distance``."""
    if radio.model == "log_distance":
        return radio.range_m() / radio.meters_per_unit
    radius = topo.radius if radius is None else radius
    if radius is None:
        raise ValueError("mobility needs a radio range: give radius or a topology radius")
    return radius


def _check_positive(**values: object) -> None:
    """Raise if any of ``values`` (by name) is not a finite number > 0."""
    for name, value in values.items():
        if not (isinstance(value, (int, float)) and np.isfinite(value) and value > 0):
            raise ValueError(f"{name}: expected a number > 0, got {value!r}")


def _still_positions(topo: Topology, trajectories: Trajectories,
                     index: Mapping[int, int]) -> dict:
    """The ``pos`` of each node without a trajectory, after checking that every
    trajectory is of a node in ``index`` (the topology's)."""
    for node in trajectories.nodes:
        if node not in index:
            raise ValueError(f"trajectory of node {node}: not a node of the topology")
    still = {}
    for node in topo.nodes:
        if node not in trajectories.nodes:
            pos = topo.graph.nodes[node].get("pos")
            if pos is None:
                raise ValueError(f"node {node} has neither a trajectory nor a pos")
            still[node] = pos
    return still


def _checked_node_events(node_events: Iterable[tuple[float, int, bool]],
                         index: Mapping[int, int]) -> list[tuple[float, int, bool]]:
    """``node_events`` as sorted ``(time, node, alive)``, each at a time >= 0 and of a
    node in ``index``."""
    events = sorted((float(t), int(n), bool(up)) for t, n, up in node_events)
    for t, node, _ in events:
        if node not in index or not (t >= 0):
            raise ValueError(f"node event ({t}, {node}): expected a time >= 0 and a node "
                             f"of the topology")
    return events


#: Pairs x samples worked on at once by :func:`_sampled_epochs` (a few arrays of this
#: many floats: 8 MB each), so that many nodes over a long run do not need them all.
_BLOCK = 1 << 20


def _sampled_epochs(times: np.ndarray, positions: np.ndarray, alive: np.ndarray,
                    radius: float, model: str, radio: Radio, rng) -> tuple[list, list]:
    """The epochs of :func:`mobility_dynamics` from every sample: ``positions`` (samples
    x nodes x 2) and ``alive`` (samples x nodes) at ``times``. Returns the epoch start
    times and one state per epoch, ``(pairs, costs, alive, positions, bers, lengths)``.

    A sample is an epoch when its links, their costs or bit error rates, or the live
    nodes differ from the sample before it (then also from the last epoch: an unchanged
    sample equals the epoch it continues). Under the unit disk every ber is 0 and a
    length alone makes no epoch. The samples are taken in blocks of at most
    :data:`_BLOCK` pair-samples; shadowing is drawn sample after sample, pair after
    pair, as a pass per sample would draw it.

    >>> times = np.array([0.0, 1.0, 2.0])
    >>> positions = np.array([[[0, 0], [1, 0], [5, 0]]] * 2 + [[[0, 0], [4, 0], [5, 0]]],
    ...                      dtype=float)
    >>> epochs, states = _sampled_epochs(times, positions, np.ones((3, 3), bool), 1.5,
    ...                                  "hop", Radio(model="unit_disk"), None)
    >>> epochs, [s[0].tolist() for s in states]
    ([0.0, 2.0], [[[0, 1]], [[1, 2]]])
    """
    tail, head = np.triu_indices(positions.shape[1], k=1)
    pair_index = np.stack([tail, head], axis=1)
    block = max(1, _BLOCK // max(len(tail), 1))
    epochs, states, last = [], [], None
    for a in range(0, len(times), block):
        b = min(a + block, len(times))
        keep, costs, bers, dist = _sampled_links(positions[a:b], alive[a:b], tail, head,
                                                 radius, model, radio, rng)
        # costs and bers are 0 where there is no link: comparing whole rows compares the
        # links' values once the links are the same
        rows = (keep, costs, bers, alive[a:b])
        changed = np.zeros(b - a, dtype=bool)
        for values in rows:
            changed[1:] |= (values[1:] != values[:-1]).any(axis=1)
        changed[0] = last is None or not all(np.array_equal(before, values[0])
                                             for before, values in zip(last, rows))
        last = tuple(values[-1] for values in rows)
        picked = np.flatnonzero(changed)
        linked = keep[picked]
        sample, column = np.nonzero(linked)   # the epochs' links, row by row, in order
        at = picked[sample]
        pairs, link_costs_, link_bers = pair_index[column], costs[at, column], bers[at, column]
        lengths = dist[at, column] * radio.meters_per_unit
        ends = np.cumsum(np.count_nonzero(linked, axis=1)).tolist()
        # an epoch's liveness and positions are copies: views would hold every sample
        for k, start, end in zip((picked + a).tolist(), [0] + ends[:-1], ends):
            epochs.append(float(times[k]))
            states.append((pairs[start:end], link_costs_[start:end], alive[k].copy(),
                           positions[k].copy(), link_bers[start:end], lengths[start:end]))
    return epochs, states


def _sampled_links(positions: np.ndarray, alive: np.ndarray, tail: np.ndarray,
                   head: np.ndarray, radius: float, model: str, radio: Radio,
                   rng) -> tuple[np.ndarray, ...]:
    """Per sample (rows) and pair ``(tail[k], head[k])`` (columns): ``(linked, costs,
    bers, distances)``, costs and bers 0 where there is no link. A link joins live
    nodes at most ``radius`` apart under the unit disk (the distances as
    :func:`~topologies.generators.geometric_edges` computes them, to the last bit),
    those :meth:`Radio.judge` links (within :meth:`Radio.reach`) under
    ``log_distance``; costs under ``model``."""
    # x and y as (nodes x samples) rows, so that a pair's end is one contiguous row
    # (gathering pairs along the samples' axis costs ten times more); the same
    # operations, bit for bit, as geometric_edges's ((p - q) ** 2).sum(axis=-1)
    x, y = positions[..., 0].T.copy(), positions[..., 1].T.copy()
    dx, dy = x[tail] - x[head], y[tail] - y[head]
    dx *= dx
    dy *= dy
    dx += dy
    dist = np.sqrt(dx, out=dx).T.copy()
    bers = np.zeros(dist.shape)
    if radio.model == "log_distance":
        near = dist <= radio.reach()
        linked, near_bers = radio.judge(dist[near], rng)
        keep = np.zeros(dist.shape, dtype=bool)
        keep[near] = linked
        bers[near] = near_bers
    else:
        keep = dist <= radius
    keep &= alive[:, tail] & alive[:, head]
    bers[~keep] = 0.0
    costs = np.zeros(dist.shape)
    costs[keep] = link_costs(model, dist[keep], radius)
    return keep, costs, bers, dist
