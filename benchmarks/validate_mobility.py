"""The testbed's mobility models against ns-3's, for the same parameters.

For each model, ns-3 (the ``ns3`` Python package: ``from ns import ns``) and
:mod:`topologies.motion_models` move the same number of nodes on a 100 m x 100 m area
for the same time, sampled every second from t = 1 s. Three distributions are compared: speed (the
distance between consecutive samples), node position (distance from the area's
centre) and link duration (how long a pair stays within ``RANGE`` m; runs cut by the
run's ends left out). A row passes when the means are within 10 % and a two-sample
Kolmogorov-Smirnov test (on samples thinned to one per node every ``THIN`` s, so
that they are close to independent) does not reject equal shapes at 1 %.

Run::

    PYTHONPATH=$PWD python benchmarks/validate_mobility.py [--nodes 100] [--duration 2000]
"""
from __future__ import annotations

import argparse
import math

import numpy as np

from topologies.mobility import random_waypoint
from topologies.motion_models import gauss_markov, random_direction, random_walk

AREA = 100.0
RANGE = 20.0
THIN = 50


def _ns3_positions(model: str, attributes: list, nodes: int, duration: int,
                   seed: int) -> np.ndarray:
    """Positions (seconds x nodes x 2) of ``nodes`` under ns-3's ``model``."""
    from ns import ns

    ns.RngSeedManager.SetSeed(seed)
    container = ns.NodeContainer()
    container.Create(nodes)
    helper = ns.MobilityHelper()
    helper.SetMobilityModel(model, *attributes)
    uniform = ns.StringValue(f"ns3::UniformRandomVariable[Min=0|Max={AREA}]")
    helper.SetPositionAllocator("ns3::RandomRectanglePositionAllocator", "X", uniform,
                                "Y", uniform)
    helper.Install(container)
    models = [container.Get(k).GetObject[ns.MobilityModel]() for k in range(nodes)]
    out = np.empty((duration + 1, nodes, 2))
    for t in range(duration + 1):
        if t:
            ns.Simulator.Stop(ns.Seconds(1.0))
            ns.Simulator.Run()
        for k, m in enumerate(models):
            p = m.GetPosition()
            out[t, k] = (p.x, p.y)
    ns.Simulator.Destroy()
    return out


def _scenarios():
    """Per model: ns-3's type and attributes, and the testbed's trajectories."""
    from ns import ns

    box = ns.BoxValue(ns.Box(0, AREA, 0, AREA, 0, 0))
    rect = ns.RectangleValue(ns.Rectangle(0, AREA, 0, AREA))
    area = (AREA, AREA)
    return {
        "gauss_markov": (
            "ns3::GaussMarkovMobilityModel",
            ["Bounds", box, "TimeStep", ns.TimeValue(ns.Seconds(1.0)),
             "Alpha", ns.DoubleValue(0.85),
             "MeanVelocity", ns.StringValue("ns3::ConstantRandomVariable[Constant=3.0]"),
             "MeanPitch", ns.StringValue("ns3::ConstantRandomVariable[Constant=0.0]"),
             "NormalVelocity",
             ns.StringValue("ns3::NormalRandomVariable[Mean=0|Variance=0.25|Bound=10]"),
             "NormalDirection",
             ns.StringValue("ns3::NormalRandomVariable[Mean=0|Variance=0.25|Bound=10]"),
             "NormalPitch",
             ns.StringValue("ns3::NormalRandomVariable[Mean=0|Variance=0|Bound=0]")],
            lambda n, d, s: gauss_markov(n, d, 3.0, s, alpha=0.85, velocity_sd=0.5,
                                         direction_sd=0.5, area=area)),
        "random_walk": (
            "ns3::RandomWalk2dMobilityModel",
            ["Bounds", rect, "Mode", ns.StringValue("Time"),
             "Time", ns.TimeValue(ns.Seconds(5.0)),
             "Speed", ns.StringValue("ns3::UniformRandomVariable[Min=2|Max=4]")],
            lambda n, d, s: random_walk(n, d, (2.0, 4.0), s, mode="time", time=5.0,
                                        area=area)),
        "random_direction": (
            "ns3::RandomDirection2dMobilityModel",
            ["Bounds", rect,
             "Speed", ns.StringValue("ns3::UniformRandomVariable[Min=2|Max=4]"),
             "Pause", ns.StringValue("ns3::ConstantRandomVariable[Constant=2.0]")],
            lambda n, d, s: random_direction(n, d, (2.0, 4.0), 2.0, s, area=area)),
        "random_waypoint steady_state": (
            "ns3::SteadyStateRandomWaypointMobilityModel",
            ["MinSpeed", ns.DoubleValue(0.5), "MaxSpeed", ns.DoubleValue(5.0),
             "MinPause", ns.DoubleValue(2.0), "MaxPause", ns.DoubleValue(2.0),
             "MinX", ns.DoubleValue(0.0), "MaxX", ns.DoubleValue(AREA),
             "MinY", ns.DoubleValue(0.0), "MaxY", ns.DoubleValue(AREA)],
            lambda n, d, s: random_waypoint(n, d, (0.5, 5.0), 2.0, s, area=area,
                                            steady_state=True)),
    }


def _speeds(xy: np.ndarray) -> np.ndarray:
    return np.linalg.norm(np.diff(xy, axis=0), axis=2)


def _centre_distances(xy: np.ndarray) -> np.ndarray:
    return np.linalg.norm(xy - AREA / 2, axis=2)


def _link_durations(xy: np.ndarray) -> np.ndarray:
    """Lengths (s) of the runs of samples in which a pair is within RANGE, runs
    touching the first or last sample left out (their length is unknown)."""
    tail, head = np.triu_indices(xy.shape[1], k=1)
    near = np.linalg.norm(xy[:, tail] - xy[:, head], axis=2) <= RANGE
    padded = np.zeros((near.shape[0] + 2, near.shape[1]), dtype=np.int8)
    padded[1:-1] = near
    edges = np.diff(padded, axis=0)
    out = []
    for pair in range(near.shape[1]):
        ups, downs = np.flatnonzero(edges[:, pair] == 1), np.flatnonzero(edges[:, pair] == -1)
        keep = (ups > 0) & (downs < near.shape[0])
        out.append(downs[keep] - ups[keep])
    return np.concatenate(out).astype(float)


def ks_test(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Two-sample Kolmogorov-Smirnov statistic and its asymptotic p-value.

    >>> rng = np.random.default_rng(1)
    >>> d, p = ks_test(rng.random(500), rng.random(500)); p > 0.01
    True
    """
    a, b = np.sort(a), np.sort(b)
    both = np.concatenate([a, b])
    d = float(np.abs(np.searchsorted(a, both, side="right") / len(a)
                     - np.searchsorted(b, both, side="right") / len(b)).max())
    n = len(a) * len(b) / (len(a) + len(b))
    lam = (math.sqrt(n) + 0.12 + 0.11 / math.sqrt(n)) * d
    p = 2 * sum((-1) ** (k - 1) * math.exp(-2 * k * k * lam * lam) for k in range(1, 101))
    return d, min(1.0, max(0.0, p))


def compare(nodes: int, duration: int, seed: int) -> list[tuple]:
    """One row per model and measure: (model, measure, ns-3 mean, testbed mean,
    mean difference in %, KS D, KS p, passed)."""
    rows = []
    times = np.arange(duration + 1, dtype=float)
    for name, (model, attributes, ours) in _scenarios().items():
        # from t = 1 s: the helper's position allocator places ns-3's steady-state
        # nodes at t = 0, before the model moves them to its own first positions
        theirs = _ns3_positions(model, attributes, nodes, duration, seed)[1:]
        mine = ours(nodes, float(duration), seed).sample(times)[1:]
        for measure, values, thin in (("speed m/s", _speeds, THIN),
                                      ("distance to centre m", _centre_distances, THIN),
                                      ("link duration s", _link_durations, 1)):
            a, b = values(theirs), values(mine)
            if a.ndim == 2:
                a, b = a[::thin].ravel(), b[::thin].ravel()
            diff = 100.0 * (b.mean() - a.mean()) / a.mean()
            d, p = ks_test(a, b)
            rows.append((name, measure, a.mean(), b.mean(), diff, d, p,
                         abs(diff) <= 10.0 and p > 0.01))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--duration", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rows = compare(args.nodes, args.duration, args.seed)
    print(f"{args.nodes} nodes, {args.duration} s, {AREA:g} m square, range {RANGE:g} m")
    print(f"| model | measure | ns-3 mean | testbed mean | diff % | KS D | KS p | pass |")
    print("|---|---|---|---|---|---|---|---|")
    for name, measure, a, b, diff, d, p, ok in rows:
        print(f"| {name} | {measure} | {a:.3g} | {b:.3g} | {diff:+.1f} | {d:.3f} | "
              f"{p:.3g} | {'yes' if ok else 'no'} |")


if __name__ == "__main__":
    main()
