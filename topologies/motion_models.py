"""Mobility models beside random waypoint, as ns-3 defines them: Gauss-Markov, random walk
and random direction, each a :class:`~topologies.mobility.Trajectories` on
``[0, area[0]] x [0, area[1]]``.

Each function takes the nodes, the time to cover, the model's parameters (named as
ns-3's attributes are), a seed, the area and optional start positions, as
:func:`~topologies.mobility.random_waypoint` does; nodes without a start position start
uniform in the area. The draws follow ns-3's order within a node (speed, then direction)
from one generator, so a seed gives one movement.

- :func:`gauss_markov`: ns-3's GaussMarkovMobilityModel in the plane (pitch 0).
- :func:`random_walk`: ns-3's RandomWalk2dMobilityModel (mode time or distance,
  reflected at the area's edges).
- :func:`random_direction`: ns-3's RandomDirection2dMobilityModel (to the edge, rest,
  a new direction away from that edge).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np

from topologies.mobility import Trajectories, _positive_pair, _speed_range
from topologies.rng import as_generator
from topologies.values import BadValue, check_float

#: How a random walk decides when to draw a new speed and direction (ns-3's Mode).
WALK_MODES = ("distance", "time")


def _number(name: str, value: object, **rule) -> float:
    """``value`` checked by :func:`~topologies.values.check_float` under ``rule``; a
    failure is a one-line ``ValueError`` naming ``name``."""
    try:
        return check_float(value, **rule)
    except BadValue as bad:
        raise ValueError(f"{name}: {bad}") from None


def _start_positions(nodes: int | Iterable[int], duration: float, area, start,
                     rng: np.random.Generator) -> tuple[list[int], np.ndarray, np.ndarray]:
    """The node ids, the area as an array and each node's first position (``start``'s,
    else uniform in the area, drawn node after node), after checking ``duration`` and
    ``area``."""
    node_ids = list(range(nodes)) if isinstance(nodes, int) else sorted(nodes)
    _number("duration", duration, low=0.0, low_open=True)
    size = np.array(_positive_pair("area", area))
    first = np.empty((len(node_ids), 2))
    for k, node in enumerate(node_ids):
        given = start is not None and node in start
        first[k] = np.asarray(start[node], dtype=float) if given else rng.random(2) * size
    return node_ids, size, first


def gauss_markov(nodes: int | Iterable[int], duration: float, mean_velocity: float,
                 seed: int | np.random.Generator, *, alpha: float = 0.85,
                 time_step: float = 1.0, mean_direction: float | None = None,
                 velocity_sd: float = 0.0, direction_sd: float = 1.0,
                 area: tuple[float, float] = (1.0, 1.0),
                 start: Mapping[int, tuple[float, float]] | None = None) -> Trajectories:
    """Gauss-Markov movement (Liang & Haas; ns-3's GaussMarkovMobilityModel, in 2D).

    Every ``time_step`` each node's speed ``s`` and direction ``d`` become
    ``alpha * s + (1 - alpha) * mean + sqrt(1 - alpha**2) * N(0, sd)``, starting at the
    means and updated once at ``t = 0``, as ns-3 does. A step that would leave the area
    reverses the velocity's crossing component for that step and turns the mean
    direction as a reflection would (``pi - mean`` at a vertical edge, ``-mean`` at a
    horizontal one), the direction jumping to it; positions are kept in the area.
    ``alpha = 1`` keeps the velocity (straight lines, reflected); ``alpha = 0`` draws
    each step's speed and direction afresh around the means. A speed drawn negative
    moves the node backwards, as in ns-3.

    Parameters
    ----------
    nodes : int or iterable of int
    duration : float
        Time to cover (> 0).
    mean_velocity : float
        Mean speed (> 0), position units per time unit.
    seed : int or numpy.random.Generator
    alpha : float
        Memory, in ``[0, 1]``.
    time_step : float
        Time between updates (> 0).
    mean_direction : float, optional
        Mean direction in radians; none: uniform in ``[0, 2 pi)`` per node (ns-3's
        default).
    velocity_sd, direction_sd : float
        Standard deviations (>= 0) of the Gaussian draws (ns-3's NormalVelocity and
        NormalDirection).
    area, start
        As :func:`~topologies.mobility.random_waypoint`'s.

    Examples
    --------
    >>> tr = gauss_markov(2, 5.0, 0.1, seed=1, alpha=1.0, mean_direction=0.0,
    ...                   start={0: (0.2, 0.5), 1: (0.95, 0.5)})
    >>> [tr.position(0, t) for t in (0.0, 2.0)]      # constant velocity
    [(0.2, 0.5), (0.4, 0.5)]
    >>> [round(tr.position(1, t)[0], 3) for t in (0.0, 1.0, 2.0)]   # turned at x = 1
    [0.95, 0.85, 0.75]
    """
    rng = as_generator(seed)
    node_ids, size, pos = _start_positions(nodes, duration, area, start, rng)
    mean_velocity = _number("mean_velocity", mean_velocity, low=0.0, low_open=True)
    alpha = _number("alpha", alpha, low=0.0, high=1.0)
    step = _number("time_step", time_step, low=0.0, low_open=True)
    velocity_sd = _number("velocity_sd", velocity_sd, low=0.0)
    direction_sd = _number("direction_sd", direction_sd, low=0.0)
    n = len(node_ids)
    if mean_direction is None:
        mean_dir = rng.uniform(0.0, 2.0 * math.pi, n)
    else:
        mean_dir = np.full(n, _number("mean_direction", mean_direction))
    speed, direction = np.full(n, mean_velocity), mean_dir.copy()
    keep = math.sqrt(1.0 - alpha * alpha)
    steps = max(1, math.ceil(duration / step))
    track = np.empty((steps + 1, n, 2))
    track[0] = pos
    for k in range(steps):
        speed = (alpha * speed + (1.0 - alpha) * mean_velocity
                 + keep * rng.normal(0.0, velocity_sd, n))
        direction = (alpha * direction + (1.0 - alpha) * mean_dir
                     + keep * rng.normal(0.0, direction_sd, n))
        velocity = speed[:, None] * np.stack([np.cos(direction), np.sin(direction)], axis=1)
        ahead = pos + velocity * step
        # ns-3 checks where the step would end, and turns before taking it
        across = (ahead < 0.0) | (ahead > size)
        velocity[across] *= -1.0
        mean_dir = np.where(across[:, 0], math.pi - mean_dir, mean_dir)
        mean_dir = np.where(across[:, 1], -mean_dir, mean_dir)
        turned = across.any(axis=1)
        direction = np.where(turned, mean_dir, direction)
        pos = np.clip(pos + velocity * step, 0.0, size)
        track[k + 1] = pos
    times = np.arange(steps + 1) * step
    return Trajectories({node: np.column_stack([times, track[:, k]])
                         for k, node in enumerate(node_ids)})


def _edge_time(pos: np.ndarray, velocity: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Per axis, the time until ``pos`` moving at ``velocity`` reaches the area's edge
    (inf along an axis it does not move on)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        edge = np.where(velocity > 0, size, 0.0)
        return np.where(velocity != 0, np.maximum((edge - pos) / velocity, 0.0), np.inf)


def _reflected_leg(points: list, t: float, pos: np.ndarray, velocity: np.ndarray,
                   length: float, size: np.ndarray) -> tuple[float, np.ndarray]:
    """Move ``length`` time units from ``pos`` at ``velocity``, reflected at the area's
    edges (each reflection a waypoint appended to ``points``); the time and position
    reached."""
    velocity = velocity.copy()
    while length > 0:
        to_edge = _edge_time(pos, velocity, size)
        hit = float(to_edge.min())
        if hit >= length:
            pos, t = pos + velocity * length, t + length
            points.append((t, *pos))
            break
        pos, t = np.clip(pos + velocity * hit, 0.0, size), t + hit
        points.append((t, *pos))
        velocity[to_edge == hit] *= -1.0
        length -= hit
    return t, pos


def random_walk(nodes: int | Iterable[int], duration: float, speed: tuple[float, float],
                seed: int | np.random.Generator, *, mode: str = "distance",
                time: float = 1.0, distance: float = 0.1,
                area: tuple[float, float] = (1.0, 1.0),
                start: Mapping[int, tuple[float, float]] | None = None) -> Trajectories:
    """Random walk (ns-3's RandomWalk2dMobilityModel).

    Each node draws a speed uniform in ``speed`` and a direction uniform in
    ``[0, 2 pi)``, and keeps them for ``time`` time units (``mode = "time"``) or until it
    has gone ``distance`` (``mode = "distance"``, ns-3's default), reflected at the
    area's edges; then draws again.

    Examples
    --------
    >>> tr = random_walk(3, 20.0, (0.05, 0.1), seed=2, mode="time", time=2.0)
    >>> tr.end >= 20.0, all(0 <= v <= 1 for n in tr.nodes for _, *xy in tr.waypoints(n)
    ...                     for v in xy)
    (True, True)
    """
    rng = as_generator(seed)
    node_ids, size, first = _start_positions(nodes, duration, area, start, rng)
    low, high = _speed_range(speed)
    if mode not in WALK_MODES:
        raise ValueError(f"mode: expected one of {', '.join(WALK_MODES)}, got {mode!r}")
    time = _number("time", time, low=0.0, low_open=True)
    distance = _number("distance", distance, low=0.0, low_open=True)
    waypoints = {}
    for node, pos in zip(node_ids, first):
        t, points = 0.0, [(0.0, *pos)]
        while t < duration:
            now = rng.uniform(low, high)
            heading = rng.uniform(0.0, 2.0 * math.pi)
            velocity = now * np.array([math.cos(heading), math.sin(heading)])
            length = time if mode == "time" else distance / now
            t, pos = _reflected_leg(points, t, pos, velocity, length, size)
        waypoints[node] = points
    return Trajectories(waypoints)


#: Where a new direction of :func:`random_direction` starts, by the edge the node is
#: nearest: right, left, top, bottom (ns-3: a direction in ``[0, pi)`` plus this).
_TURN_FROM = np.array([math.pi / 2, -math.pi / 2, math.pi, 0.0])


def random_direction(nodes: int | Iterable[int], duration: float,
                     speed: tuple[float, float], pause: float,
                     seed: int | np.random.Generator, *,
                     area: tuple[float, float] = (1.0, 1.0),
                     start: Mapping[int, tuple[float, float]] | None = None) -> Trajectories:
    """Random direction (ns-3's RandomDirection2dMobilityModel).

    Each node goes in a direction (uniform in ``[0, 2 pi)`` at first) at a speed
    uniform in ``speed`` until it reaches the area's edge, rests ``pause``, then draws a
    direction uniform over the half-plane away from the edge it is nearest, and a speed.
    Unlike random waypoint, the nodes do not gather in the area's middle.

    Examples
    --------
    >>> tr = random_direction(2, 30.0, (0.1, 0.2), 1.0, seed=5)
    >>> edges = [min(x, y, 1 - x, 1 - y) for _, x, y in tr.waypoints(0)[1:]]
    >>> max(edges) < 1e-9        # every waypoint after the start is on an edge
    True
    """
    rng = as_generator(seed)
    node_ids, size, first = _start_positions(nodes, duration, area, start, rng)
    low, high = _speed_range(speed)
    pause = _number("pause", pause, low=0.0)
    waypoints = {}
    for node, pos in zip(node_ids, first):
        t, points = 0.0, [(0.0, *pos)]
        heading = rng.uniform(0.0, 2.0 * math.pi)
        while t < duration:
            velocity = rng.uniform(low, high) * np.array([math.cos(heading),
                                                           math.sin(heading)])
            hit = float(_edge_time(pos, velocity, size).min())
            pos, t = np.clip(pos + velocity * hit, 0.0, size), t + hit
            points.append((t, *pos))
            if pause > 0:
                t += pause
                points.append((t, *pos))
            nearest = int(np.argmin([size[0] - pos[0], pos[0], size[1] - pos[1], pos[1]]))
            heading = rng.uniform(0.0, math.pi) + _TURN_FROM[nearest]
        waypoints[node] = points
    return Trajectories(waypoints)
