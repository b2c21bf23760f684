"""Disorder models and QJoin-style delay statistics."""

import numpy as np
import pytest

from emulator.disorder import Bursts, arrival_delays, delay_statistics, make_disorder


def rng(seed=0):
    return np.random.default_rng(seed)


@pytest.mark.parametrize("name, opts", [
    ("exponential", {}), ("lognormal", {"sigma": 0.5}), ("pareto", {"alpha": 3.0}),
    ("bursts", {"burst_prob": 0.02, "burst_len": 5}),
])
def test_models_have_the_requested_mean(name, opts):
    d = make_disorder(name, 0.8, rng(1), **opts)(200_000)
    assert d.min() >= 0
    assert d.mean() == pytest.approx(0.8, rel=0.05)


def test_none_and_zero_mean_give_no_delay():
    assert make_disorder("none", 5.0, rng())(4).tolist() == [0.0] * 4
    for name in ("exponential", "lognormal", "pareto", "bursts"):
        assert make_disorder(name, 0.0, rng())(3).tolist() == [0.0] * 3


def test_pareto_is_heavier_tailed_than_exponential():
    e = make_disorder("exponential", 1.0, rng(2))(100_000)
    p = make_disorder("pareto", 1.0, rng(2), alpha=2.2)(100_000)
    assert np.percentile(p, 99.9) > 2 * np.percentile(e, 99.9)
    assert np.median(p) < np.median(e)


def test_bursts_are_runs_of_equal_delay():
    d = make_disorder("bursts", 0.0, rng(3), burst_prob=0.01, burst_len=4, burst_delay=2.5)(5000)
    late = d > 0
    assert set(np.unique(d)) == {0.0, 2.5}
    # every run of late tuples is a multiple of 4 long (back-to-back bursts merge),
    # except possibly one cut by the end
    runs = np.diff(np.flatnonzero(np.diff(np.r_[0, late.astype(int), 0])))[::2]
    assert all(r % 4 == 0 for r in runs[:-1])
    # derived delay: long-run late fraction 4 / (4 + 99) with p = 0.01
    b = Bursts(mean=1.0, burst_prob=0.01, burst_len=4)
    assert b.late_fraction() == pytest.approx(4 / 103)
    assert b.delay() == pytest.approx(103 / 4)


def test_same_generator_state_same_delays():
    a = make_disorder("lognormal", 1.0, rng(9))(10)
    b = make_disorder("lognormal", 1.0, rng(9))(10)
    assert a.tolist() == b.tolist()


@pytest.mark.parametrize("name, mean, opts, match", [
    ("uniform", 1.0, {}, "unknown disorder model 'uniform'; expected one of: bursts, "
                         "exponential, lognormal, none, pareto"),
    ("exponential", -1.0, {}, "mean must be a finite number >= 0"),
    ("pareto", 1.0, {"alpha": 1.0}, "alpha must be > 1"),
    ("lognormal", 1.0, {"alpha": 2.0}, r"unknown option\(s\) \['alpha'\]; valid options: \['sigma'\]"),
    ("none", 0.0, {"sigma": 1.0}, "valid options: none"),
    ("bursts", 1.0, {"burst_len": 0}, "burst_len must be an integer >= 1"),
    ("bursts", 1.0, {"burst_prob": 1.5}, r"burst_prob must be in \[0, 1\]"),
])
def test_bad_models_raise(name, mean, opts, match):
    with pytest.raises(ValueError, match=match):
        make_disorder(name, mean, rng(), **opts)


def test_delay_statistics_on_a_handmade_arrival_order():
    # stream A arrives as ts 1, 4, 2, 3, 6, 5 ; stream B as ts 10, 8, 9
    ts = [1, 2, 3, 4, 5, 6, 8, 9, 10]
    arrival = [0.0, 2.0, 3.0, 1.0, 5.0, 4.0, 1.5, 2.5, 0.5]
    streams = ["A"] * 6 + ["B"] * 3
    s = delay_statistics(ts, arrival, streams)
    # A: 1 ->0, 4 ->0, 2 ->2, 3 ->1, 6 ->0, 5 ->1 ; B: 10 ->0, 8 ->2, 9 ->1
    assert s["delays"].tolist() == [0, 2, 1, 0, 1, 0, 2, 1, 0]
    assert s["mean"] == pytest.approx(7 / 9)
    assert s["p50"] == 1.0 and s["max"] == 2.0
    assert s["p95"] == pytest.approx(2.0)
    assert s["out_of_order"] == pytest.approx(5 / 9)
    # measured on one merged stream the same arrivals look different
    # (B's ts 10 arrives at 0.5, before most of A)
    assert arrival_delays(ts, arrival).tolist() == [0, 8, 7, 6, 5, 4, 2, 1, 0]


def test_delay_statistics_of_generated_disorder():
    ts = np.arange(10_000) * 0.01
    none = delay_statistics(ts, ts)
    assert none["max"] == 0.0 and none["out_of_order"] == 0.0
    d = make_disorder("exponential", 0.5, rng(4))(len(ts))
    s = delay_statistics(ts, ts + d)
    assert 0.5 < s["out_of_order"] < 1.0
    assert 0 < s["mean"] < s["p95"] <= s["max"]


def test_delay_statistics_rejects_mismatched_input_and_handles_empty():
    with pytest.raises(ValueError, match="equal length"):
        delay_statistics([1, 2], [1])
    assert np.isnan(delay_statistics([], [])["mean"])
