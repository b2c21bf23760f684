"""Random waypoint's steady state: where a node is, and how fast it goes, once the model
has run for a long time (Navidi & Camp, "Stationary distributions for the random
waypoint mobility model", IEEE TMC 2004; ns-3's SteadyStateRandomWaypointMobilityModel).

Started from uniform positions and uniform speeds, random waypoint slows down over the
run: slow legs last longer, so more nodes are on one at any time, and the mean speed
decays towards ``(high - low) / ln(high / low)``. Drawing the first leg from the
stationary distribution instead keeps it there from ``t = 0``.
"""
from __future__ import annotations

import math

import numpy as np


def mean_leg_length(width: float, height: float) -> float:
    """Mean distance between two points uniform in a ``width x height`` rectangle
    (the formula ns-3's steady-state model uses).

    >>> round(mean_leg_length(1.0, 1.0), 4)     # the unit square's 0.5214
    0.5214
    """
    a, b = float(width), float(height)
    diagonal = math.hypot(a, b)
    logs = (b * b / a * math.log(diagonal / b + a / b)
            + a * a / b * math.log(diagonal / a + b / a)) / 6.0
    return (logs + (a ** 3 / b ** 2 + b ** 3 / a ** 2) / 15.0
            - diagonal * (a * a / (b * b) + b * b / (a * a) - 3.0) / 15.0)


def mean_inverse_speed(low: float, high: float) -> float:
    """``E[1 / V]`` for a speed uniform in ``[low, high]``: a leg's mean duration per
    unit of length.

    >>> mean_inverse_speed(2.0, 2.0), round(mean_inverse_speed(1.0, math.e), 4)
    (0.5, 0.582)
    """
    return 1.0 / low if high == low else math.log(high / low) / (high - low)


def stationary_start(rng: np.random.Generator, size: np.ndarray,
                     speed: tuple[float, float], pause: float) -> list[tuple]:
    """A node's first waypoints ``(t, x, y)`` drawn from the stationary distribution,
    as ns-3 draws them: paused with probability ``pause / (pause + E[leg time])``, at a
    uniform point for a uniform share of ``pause``; else on a leg whose two ends are
    drawn with a density proportional to their distance, at a uniform point of it,
    with a speed of density proportional to ``1 / v`` on ``speed``, then resting
    ``pause`` at its end. The node's walk goes on from the last waypoint returned.

    >>> rng = np.random.default_rng(3)
    >>> points = stationary_start(rng, np.array([1.0, 1.0]), (0.1, 0.2), 0.0)
    >>> len(points), points[0][0], all(0 <= v <= 1 for p in points for v in p[1:])
    (2, 0.0, True)
    """
    low, high = speed
    width, height = float(size[0]), float(size[1])
    leg_time = mean_leg_length(width, height) * mean_inverse_speed(low, high)
    if rng.random() < pause / (pause + leg_time):
        here = rng.random(2) * size
        return [(0.0, *here), (float(rng.random()) * pause, *here)]
    diagonal = math.hypot(width, height)
    while True:   # rejection: a pair is kept with probability distance / diagonal
        first, second = rng.random(2) * size, rng.random(2) * size
        if rng.random() < float(np.linalg.norm(second - first)) / diagonal:
            break
    share = rng.random()
    here = share * first + (1.0 - share) * second
    # inverse CDF of the density ~ 1 / v on [low, high]
    speed_now = low * (high / low) ** rng.random()
    arrival = float(np.linalg.norm(second - here)) / speed_now
    points = [(0.0, *here), (arrival, *second)]
    if pause > 0:
        points.append((arrival + pause, *second))
    return points
