"""Reference Point Group Mobility: members within max_distance of their reference point,
reference points moving by random waypoint, links within groups outlasting links across
them, group sizes, seeds, one-line errors, and a run."""
import json

import numpy as np
import pytest

import experiments
from topologies.group_motion import group_sizes, rpgm
from tests.topologies.test_motion_models import check_one_line_error


def _contact_lengths(near: np.ndarray) -> np.ndarray:
    """Lengths (in samples) of the runs of True in each column of ``near``, runs cut by
    the first or last sample left out."""
    padded = np.zeros((near.shape[0] + 2, near.shape[1]), dtype=np.int8)
    padded[1:-1] = near
    out = []
    for col in np.diff(padded, axis=0).T:
        ups, downs = np.flatnonzero(col == 1), np.flatnonzero(col == -1)
        keep = (ups > 0) & (downs < near.shape[0])
        out.append(downs[keep] - ups[keep])
    return np.concatenate(out)


def test_every_member_stays_within_max_distance_of_its_reference_point():
    tr = rpgm(30, 300.0, (0.01, 0.04), 0.06, seed=5, pause=3.0, group_size=4.0,
              group_size_sd=1.5, group_change_prob=0.5)
    changes = sum(len(joined) - 1 for joined in tr.membership.values())
    assert changes > 5                      # members do change group here
    times = np.linspace(0.0, 300.0, 6001)   # every 0.05 time units
    xy = tr.sample(times)
    gap = np.linalg.norm(xy - tr.reference_positions(times), axis=2)
    assert gap.max() <= 0.06 + 1e-12
    assert gap.mean() > 0.03                # spread over the disk, not on the point
    assert xy.min() >= 0.0 and xy.max() <= 1.0


def test_reference_points_move_by_random_waypoint_with_its_speeds_and_pauses():
    tr = rpgm(12, 3000.0, (0.02, 0.05), 0.05, seed=7, pause=2.0, groups=12)
    speeds, rests = [], []
    for group in tr.references.nodes:
        points = np.array(tr.references.waypoints(group))
        length = np.linalg.norm(np.diff(points[:, 1:], axis=0), axis=1)
        spent = np.diff(points[:, 0])
        moving = length > 0
        speeds += list(length[moving] / spent[moving])
        rests += list(spent[~moving])
    speeds = np.array(speeds)
    assert len(speeds) > 500
    assert speeds.min() >= 0.02 - 1e-12 and speeds.max() <= 0.05 + 1e-12
    # a leg's speed is uniform on [low, high]: mean 0.035, quartiles 0.0275 and 0.0425
    assert speeds.mean() == pytest.approx(0.035, abs=0.001)
    assert np.quantile(speeds, [0.25, 0.75]) == pytest.approx([0.0275, 0.0425], abs=0.0015)
    assert np.allclose(rests, 2.0)


def test_links_within_a_group_outlast_links_across_groups():
    tr = rpgm(40, 600.0, (0.01, 0.03), 0.05, seed=4, groups=8, group_change_prob=0.0)
    xy = tr.sample(np.arange(0.0, 601.0))
    tail, head = np.triu_indices(len(tr.nodes), k=1)
    near = np.linalg.norm(xy[:, tail] - xy[:, head], axis=2) <= 0.06
    same = np.array([tr.group_of(a, 0.0) == tr.group_of(b, 0.0)
                     for a, b in zip(tail, head)])
    within, across = _contact_lengths(near[:, same]), _contact_lengths(near[:, ~same])
    assert len(within) > 100 and len(across) > 1000
    # measured: 88 s within against 3.8 s across (range 0.06, max_distance 0.05)
    assert within.mean() > 10 * across.mean()
    assert near[:, same].mean() > 0.8 > 0.05 > near[:, ~same].mean()


def test_group_sizes_fixed_or_drawn_around_the_mean():
    assert group_sizes(7, np.random.default_rng(0), groups=3) == [3, 2, 2]
    assert group_sizes(5, np.random.default_rng(0), groups=5) == [1] * 5
    sizes = group_sizes(20000, np.random.default_rng(1), group_size=5.0, group_size_sd=1.0)
    assert sum(sizes) == 20000 and min(sizes) >= 1
    assert np.mean(sizes[:-1]) == pytest.approx(5.0, abs=0.05)
    assert np.std(sizes[:-1]) == pytest.approx(1.08, abs=0.05)   # rounding adds 1/12
    tr = rpgm(12, 10.0, (0.1, 0.2), 0.1, seed=1, group_size=3.0, group_size_sd=0.0)
    assert tr.groups == 4 and [tr.group_of(n, 0.0) for n in (0, 2, 3, 11)] == [0, 0, 1, 3]


def test_a_seed_gives_one_movement():
    a, b, c = (rpgm(15, 50.0, (0.02, 0.05), 0.08, seed=s) for s in (2, 2, 3))
    times = np.linspace(0.0, 50.0, 101)
    assert np.array_equal(a.sample(times), b.sample(times))
    assert a.membership == b.membership
    assert not np.array_equal(a.sample(times), c.sample(times))


@pytest.mark.parametrize("section, message", [
    ({"model": "rpgm", "speed": [0.1, 0.2]},
     r"^mobility\.max_distance: required by model 'rpgm'$"),
    ({"model": "rpgm", "speed": [0.1, 0.2], "max_distance": 0},
     r"^mobility\.max_distance: expected a number > 0, got 0$"),
    ({"model": "rpgm", "speed": [0.1, 0.2], "max_distance": 0.5},
     r"^mobility\.max_distance: expected less than half the area's shorter side "
     r"\(0\.5\), got 0\.5$"),
    ({"model": "rpgm", "speed": [0.1, 0.2], "max_distance": 0.1, "groups": 4},
     r"^mobility\.groups: expected an integer from 1 to the 3 nodes, got 4$"),
    ({"model": "rpgm", "speed": [0.1, 0.2], "max_distance": 0.1, "groups": 0},
     r"^mobility\.groups: expected an integer >= 1 or none, got 0$"),
    ({"model": "rpgm", "speed": [0.1, 0.2], "max_distance": 0.1, "groups": 2,
      "group_size": 2}, r"^mobility\.groups: give groups or group_size / group_size_sd, "
                        r"not both"),
    ({"model": "rpgm", "speed": [0.1, 0.2], "max_distance": 0.1, "group_size": 0.5},
     r"^mobility\.group_size: expected a number >= 1, got 0\.5$"),
    ({"model": "rpgm", "speed": [0.1, 0.2], "max_distance": 0.1, "group_size_sd": -1},
     r"^mobility\.group_size_sd: expected a number >= 0, got -1$"),
    ({"model": "rpgm", "speed": [0.1, 0.2], "max_distance": 0.1,
      "group_change_prob": 1.5},
     r"^mobility\.group_change_prob: expected a number >= 0 and <= 1, got 1\.5$"),
    ({"model": "rpgm", "speed": [0.2, 0.1], "max_distance": 0.1},
     r"^mobility\.speed: expected low <= high, got \[0\.2, 0\.1\]$"),
    ({"model": "random_waypoint", "speed": [0.1, 0.2], "max_distance": 0.1},
     r"^mobility\.max_distance: not used by model 'random_waypoint'"),
])
def test_bad_parameters_give_one_line_errors(section, message):
    check_one_line_error(section, message)


def test_a_small_run_with_groups_completes(tmp_path):
    spec = {
        "run": {"name": "groups", "seed": 3, "duration": 4.0, "step": 0.05},
        "topology": {"generator": "random_geometric", "nodes": 10, "radius": 1.5,
                     "delay": 0.05},
        "mobility": {"model": "rpgm", "speed": [0.02, 0.08], "max_distance": 0.1,
                     "groups": 3, "resolution": 0.5},
        "streams": {"count": 2, "rate": 3.0, "keys": "uniform", "key_domain": 5},
        "query": {"node": 0, "window": 1.5},
        "algorithm": {"name": "centralized"},
    }
    run = experiments.run(spec, out=tmp_path)   # a radius over the diagonal: connected
    assert run.meta["status"] == "complete"
    assert run.summary["recall"] == pytest.approx(1.0)
    resolved = json.loads((run.path / "spec.json").read_text())["resolved"]["mobility"]
    assert resolved == {"failures": None, "group_change_prob": 0.01, "group_size": 3.0,
                        "group_size_sd": 2.0, "groups": 3, "max_distance": 0.1,
                        "model": "rpgm", "pause": 0.0, "resolution": 0.5,
                        "speed": [0.02, 0.08]}
