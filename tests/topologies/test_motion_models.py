"""The ns-3 mobility models beside random waypoint, and random waypoint's steady state:
inside the area, seeded, the speeds their parameters imply, one-line errors, and a run."""
import json
import math

import numpy as np
import pytest

import experiments
from topologies.mobility import random_waypoint
from topologies.motion_models import gauss_markov, random_direction, random_walk
from topologies.spec import dynamics_from_spec, topology_from_spec

MODELS = {
    "gauss_markov": lambda seed: gauss_markov(20, 60.0, 0.05, seed, alpha=0.7,
                                              velocity_sd=0.01, direction_sd=0.5),
    "random_walk_time": lambda seed: random_walk(20, 60.0, (0.02, 0.1), seed, mode="time",
                                                 time=3.0),
    "random_walk_distance": lambda seed: random_walk(20, 60.0, (0.02, 0.1), seed,
                                                     distance=0.2),
    "random_direction": lambda seed: random_direction(20, 60.0, (0.02, 0.1), 1.0, seed),
}


def _speeds(trajectories, times):
    """Each node's speed between consecutive ``times`` (samples x nodes)."""
    xy = trajectories.sample(times)
    return np.linalg.norm(np.diff(xy, axis=0), axis=2) / np.diff(times)[:, None]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_each_model_stays_in_the_area_and_is_seeded(name):
    a, b, c = MODELS[name](1), MODELS[name](1), MODELS[name](2)
    times = np.linspace(0.0, 60.0, 601)
    xy = a.sample(times)
    assert xy.min() >= 0.0 and xy.max() <= 1.0
    assert a.end >= 60.0
    assert np.array_equal(xy, b.sample(times))
    assert not np.array_equal(xy, c.sample(times))
    assert np.ptp(xy[:, :, 0], axis=0).min() > 0     # every node moves


def test_random_walk_speeds_lie_in_their_range_and_its_steps_last_time():
    tr = random_walk(10, 50.0, (0.02, 0.04), 3, mode="time", time=2.0)
    speeds = _speeds(tr, np.arange(0.0, 50.0, 0.5))
    # a sample that spans a reflection is shorter than the path: only upper-bounded
    assert speeds.max() <= 0.04 + 1e-9
    assert np.median(speeds) >= 0.02
    assert all(t % 2.0 < 1e-9 or min(x, y, 1 - x, 1 - y) < 1e-9
               for node in tr.nodes for t, x, y in tr.waypoints(node))


def test_random_direction_turns_only_at_edges_and_rests_there():
    tr = random_direction(5, 40.0, (0.05, 0.1), 2.0, seed=4)
    for node in tr.nodes:
        points = tr.waypoints(node)[1:]
        assert all(min(x, y, 1 - x, 1 - y) < 1e-9 for _, x, y in points)
        rests = [b[0] - a[0] for a, b in zip(points, points[1:]) if a[1:] == b[1:]]
        assert rests and all(r == pytest.approx(2.0) for r in rests)


def test_gauss_markov_with_alpha_one_keeps_a_constant_speed():
    tr = gauss_markov(10, 40.0, 0.03, seed=5, alpha=1.0, velocity_sd=0.02)
    speeds = _speeds(tr, np.arange(0.0, 41.0, 1.0))
    assert np.allclose(speeds, 0.03)


def test_gauss_markov_with_alpha_zero_draws_independent_speeds():
    tr = gauss_markov(200, 100.0, 0.03, seed=6, alpha=0.0, velocity_sd=0.005,
                      direction_sd=0.3, area=(50.0, 50.0))
    speeds = _speeds(tr, np.arange(0.0, 101.0, 1.0))
    assert speeds.mean() == pytest.approx(0.03, rel=0.02)
    assert speeds.std() == pytest.approx(0.005, rel=0.05)
    lag = np.corrcoef(speeds[:-1].ravel(), speeds[1:].ravel())[0, 1]
    assert abs(lag) < 0.05


def _mean_speed(steady: bool, times) -> np.ndarray:
    tr = random_waypoint(300, times[-1], (0.005, 0.1), 0.0, seed=7, steady_state=steady)
    return _speeds(tr, times).mean(axis=1)


def test_steady_state_random_waypoint_keeps_its_mean_speed_where_plain_decays():
    times = np.arange(0.0, 601.0, 1.0)
    stationary = (0.1 - 0.005) / math.log(0.1 / 0.005)     # 0.0317
    plain, steady = _mean_speed(False, times), _mean_speed(True, times)
    assert plain[:10].mean() > 1.3 * plain[-100:].mean()   # from (low + high) / 2
    assert steady[:10].mean() == pytest.approx(stationary, rel=0.15)
    assert steady[-100:].mean() == pytest.approx(stationary, rel=0.15)


@pytest.mark.parametrize("section, message", [
    ({"model": "gauss_markov", "mean_velocity": 0.1, "alpha": -0.1},
     r"^mobility\.alpha: expected a number >= 0 and <= 1, got -0\.1$"),
    ({"model": "gauss_markov", "mean_velocity": 0},
     r"^mobility\.mean_velocity: expected a number > 0, got 0$"),
    ({"model": "gauss_markov", "mean_velocity": 0.1, "time_step": 0},
     r"^mobility\.time_step: expected a number > 0, got 0$"),
    ({"model": "random_walk", "speed": [0, 0.1]},
     r"^mobility\.speed\[0\]: expected a number > 0, got 0$"),
    ({"model": "random_walk", "speed": [0.1, 0.2], "mode": "steps"},
     r"^mobility\.mode: expected one of distance, time, got 'steps'$"),
    ({"model": "random_direction", "speed": [0.1, 0.2], "alpha": 0.5},
     r"^mobility\.alpha: not used by model 'random_direction'"),
    ({"model": "random_waypoint", "speed": [0.1, 0.2], "steady_state": "yes"},
     r"^mobility\.steady_state: expected true or false, got 'yes'$"),
])
def test_bad_parameters_give_one_line_errors(section, message):
    check_one_line_error(section, message)


def check_one_line_error(section: dict, message: str) -> None:
    """A ``[mobility]`` table on three nodes in a line fails with one line matching
    ``message``."""
    topo = topology_from_spec({"generator": "line", "nodes": 3, "radius": 1.0}, seed=1)
    with pytest.raises(ValueError, match=message) as err:
        dynamics_from_spec(topo, section, duration=10, seed=1)
    assert "\n" not in str(err.value)


def test_the_other_modes_key_warns_and_leaves_the_run_id_alone():
    base = {"run": {"name": "walk"},
            "mobility": {"model": "random_walk", "speed": [0.1, 0.2]}}
    extra = json.loads(json.dumps(base))
    extra["mobility"]["time"] = 5.0                  # unread under mode "distance"
    with pytest.warns(UserWarning, match=r"mobility: time does nothing under "
                                         r'mobility\.mode = "distance"'):
        warned = experiments.spec.warn_inert(experiments.spec.resolve(extra))
    assert warned
    ids = [experiments.spec.run_id(experiments.spec.for_run(experiments.spec.resolve(s)))
           for s in (base, extra)]
    assert ids[0] == ids[1]


SMALL = {
    "run": {"name": "moving", "seed": 3, "duration": 4.0, "step": 0.05},
    "topology": {"generator": "random_geometric", "nodes": 10, "radius": 0.5,
                 "delay": 0.05},
    "streams": {"count": 2, "rate": 3.0, "keys": "uniform", "key_domain": 5},
    "query": {"node": 0, "window": 1.5},
    "algorithm": {"name": "centralized"},
}


@pytest.mark.parametrize("mobility", [
    {"model": "gauss_markov", "mean_velocity": 0.05, "velocity_sd": 0.01},
    {"model": "random_walk", "speed": [0.02, 0.08], "mode": "time", "time": 1.0},
    {"model": "random_direction", "speed": [0.02, 0.08], "pause": 0.5},
    {"model": "random_waypoint", "speed": [0.02, 0.08], "steady_state": True},
])
def test_a_small_run_with_each_model_completes(tmp_path, mobility):
    run = experiments.run({**SMALL, "mobility": {**mobility, "resolution": 0.5}},
                          out=tmp_path)
    assert run.meta["status"] == "complete"
    assert run.summary["recall"] == pytest.approx(1.0)
    assert run.summary["expected_results"] > 0
    resolved = json.loads((run.path / "spec.json").read_text())["resolved"]["mobility"]
    assert resolved["model"] == mobility["model"] and resolved["resolution"] == 0.5
