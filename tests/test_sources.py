"""Stream sources: validation, placement, Poisson arrivals, keys, disorder, seeds."""

import numpy as np
import pytest

from emulator.disorder import delay_statistics
from spark_nodes.workload.soccer import generate_game
from spark_nodes.workload.sources import (generate_streams, place_streams, resolve_streams,
                                          stream_names)


def test_defaults_and_names():
    cfg = resolve_streams({})
    assert (cfg["count"], cfg["rate"], cfg["keys"], cfg["key_domain"], cfg["disorder"],
            cfg["generator"], cfg["nodes"]) == (3, 5.0, "uniform", 20, "none", "keys", None)
    assert stream_names({"count": 4}) == ["R1", "R2", "R3", "R4"]
    assert stream_names({"generator": "soccer"}) == ["R1", "R2"]


@pytest.mark.parametrize("cfg, match", [
    ({"rates": 5}, r"streams\.rates: unknown key; valid: count, disorder"),
    ({"count": 0}, r"streams\.count: expected an integer >= 1, got 0"),
    ({"count": 2.0}, r"streams\.count: expected an integer"),
    ({"rate": -1}, r"streams\.rate: expected a finite number > 0"),
    ({"rate": True}, r"streams\.rate"),
    ({"keys": "normal"}, r"streams\.keys: expected one of uniform, zipf, got 'normal'"),
    ({"key_domain": 0}, r"streams\.key_domain"),
    ({"zipf_s": 0}, r"streams\.zipf_s"),
    ({"disorder": "gamma"}, r"streams\.disorder: expected one of bursts, collector, exponential"),
    ({"disorder_mean": -0.5}, r"streams\.disorder_mean: expected a finite number >= 0"),
    ({"generator": "file"}, r"streams\.generator: expected one of keys, soccer, csv"),
    ({"generator": "csv"}, r"streams\.file: generator 'csv' needs a file name"),
    ({"file": "x.csv"}, r"streams\.file: not used by generator 'keys' \(only by csv\)"),
    ({"generator": "soccer", "key_domain": 5}, r"streams\.key_domain: not used by generator 'soccer'"),
    ({"generator": "soccer", "count": 3}, r"streams\.count: generator 'soccer' has 2 streams"),
    ({"count": 2, "nodes": [1]}, r"streams\.nodes: expected 2 node ids"),
    ({"count": 2, "nodes": [1, -2]}, r"streams\.nodes\[1\]: expected an integer >= 0"),
    ({"nodes": "1,2,3"}, r"streams\.nodes: expected a list"),
])
def test_bad_tables_name_the_field(cfg, match):
    with pytest.raises(ValueError, match=match):
        resolve_streams(cfg)


def test_explicit_placement_is_validated():
    assert place_streams({"count": 3, "nodes": [2, 2, 0]}, range(4), exclude=[0]) == \
        {"R1": 2, "R2": 2, "R3": 0}
    with pytest.raises(ValueError, match=r"streams\.nodes\[2\]: node 7 does not exist; "
                                         r"valid nodes: 0\.\.3"):
        place_streams({"count": 3, "nodes": [0, 1, 7]}, range(4))
    with pytest.raises(ValueError, match=r"valid nodes: 1, 5, 9"):
        place_streams({"count": 1, "nodes": [2]}, [9, 5, 1])


def test_random_placement_is_distinct_seeded_and_avoids_excluded():
    cfg = {"count": 5}
    a = place_streams(cfg, range(12), exclude=[0, 3], seed=4)
    assert a == place_streams(cfg, range(12), exclude=[0, 3], seed=4)
    assert len(set(a.values())) == 5 and not {0, 3} & set(a.values())
    seen = {tuple(place_streams(cfg, range(12), exclude=[0], seed=s).values()) for s in range(10)}
    assert len(seen) > 5
    with pytest.raises(ValueError, match=r"streams\.count: 5 streams need 5 distinct nodes, "
                                         r"but only 4 are free"):
        place_streams(cfg, range(5), exclude=[0], seed=1)


def test_poisson_arrivals_keys_and_tuple_fields():
    cfg = {"count": 2, "rate": 5.0, "key_domain": 4}
    data = generate_streams(cfg, {"R1": 3, "R2": 8}, duration=2000.0, seed=7)
    for name, node in (("R1", 3), ("R2", 8)):
        tuples = data[name]
        ts = np.array([t.ts for t in tuples])
        assert abs(len(ts) - 10_000) < 4 * 100           # Poisson(10000): sd 100
        assert [t.seq for t in tuples] == list(range(len(tuples)))
        assert (np.diff(ts) >= 0).all() and 0 <= ts[0] and ts[-1] < 2000.0
        gaps = np.diff(ts)
        assert gaps.mean() == pytest.approx(0.2, rel=0.03)        # exponential gaps:
        assert gaps.std() == pytest.approx(0.2, rel=0.05)         # sd = mean
        keys = np.array([t.key for t in tuples])
        assert set(keys) == {0, 1, 2, 3}
        assert np.bincount(keys) / len(keys) == pytest.approx([0.25] * 4, abs=0.02)
        assert all(t.origin == node and t.size == 1.0 and t.entered_at == t.ts
                   and 0 <= t.x < 4 and 0 <= t.y < 4 and t.stream == name for t in tuples)


def test_zipf_keys_follow_the_power_law():
    data = generate_streams({"count": 1, "keys": "zipf", "key_domain": 5, "zipf_s": 1.0,
                             "rate": 10.0}, {"R1": 0}, duration=2000.0, seed=1)
    freq = np.bincount([t.key for t in data["R1"]], minlength=5) / len(data["R1"])
    expected = (1 / np.arange(1, 6)) / (1 / np.arange(1, 6)).sum()
    assert freq == pytest.approx(expected, abs=0.01)


def test_disorder_sets_entered_at_and_makes_streams_out_of_order():
    cfg = {"count": 2, "rate": 10.0, "disorder": "exponential", "disorder_mean": 0.5}
    data = generate_streams(cfg, {"R1": 0, "R2": 1}, duration=500.0, seed=3)
    for tuples in data.values():
        ts = np.array([t.ts for t in tuples])
        entered = np.array([t.entered_at for t in tuples])
        assert (entered >= ts).all()
        assert (entered - ts).mean() == pytest.approx(0.5, rel=0.05)
        stats = delay_statistics(ts, entered)
        assert stats["out_of_order"] > 0.3 and stats["max"] > 1.0


def test_same_seed_same_streams_and_streams_independent_of_count():
    cfg3 = {"count": 3, "disorder": "lognormal", "disorder_mean": 0.2}
    cfg4 = dict(cfg3, count=4)
    nodes3 = {"R1": 0, "R2": 1, "R3": 2}
    a = generate_streams(cfg3, nodes3, 50.0, seed=11)
    assert a == generate_streams(cfg3, nodes3, 50.0, seed=11)
    b = generate_streams(cfg4, dict(nodes3, R4=3), 50.0, seed=11)
    assert all(a[s] == b[s] for s in nodes3)
    c = generate_streams(cfg3, nodes3, 50.0, seed=12)
    assert a["R1"] != c["R1"]
    assert a["R1"] != [t._replace(stream="R1") for t in a["R2"]]


def test_stream_nodes_must_match_the_table():
    with pytest.raises(ValueError, match=r"stream_nodes: expected nodes for \['R1', 'R2'\]"):
        generate_streams({"count": 2}, {"R1": 0}, 10.0, seed=1)


def test_soccer_generator_streams():
    cfg = {"generator": "soccer", "rate": 40.0, "disorder": "exponential",
           "disorder_mean": 0.05}
    data = generate_streams(cfg, {"R1": 4, "R2": 6}, duration=5.0, seed=2)
    ball, players = data["R1"], data["R2"]
    assert len(ball) == 200 and len(players) == 200           # 8 players at 5 Hz
    assert {t.origin for t in ball} == {4} and {t.origin for t in players} == {6}
    assert {t.key for t in ball} == {4} and len({t.key for t in players}) == 8
    assert all(abs(t.x) <= 52.5 and abs(t.y) <= 34 for t in ball + players)
    assert any(t.entered_at > t.ts for t in ball)
    assert data == generate_streams(cfg, {"R1": 4, "R2": 6}, duration=5.0, seed=2)


def test_csv_generator_reads_a_debs_file_relative_to_the_spec(tmp_path):
    game = generate_game(np.random.default_rng(0), duration=3.0, players=2, ball_hz=20.0,
                         player_hz=10.0, start_ps=5 * 10 ** 12)
    game.to_csv(tmp_path / "game.csv", header=False, index=False)
    cfg = {"generator": "csv", "file": "game.csv"}
    data = generate_streams(cfg, {"R1": 0, "R2": 1}, duration=2.0, seed=1, base_dir=tmp_path)
    t0 = game.ts.iloc[0]
    expect_ball = ((game.sid == 4) & (game.ts < t0 + 2 * 10 ** 12)).sum()
    assert len(data["R1"]) == expect_ball and data["R1"][0].ts >= 0
    assert max(t.ts for t in data["R2"]) < 2.0
    with pytest.raises(ValueError, match=r"streams\.file: no such file"):
        generate_streams(dict(cfg, file="missing.csv"), {"R1": 0, "R2": 1}, 2.0, seed=1,
                         base_dir=tmp_path)


def test_a_list_of_rates_skews_the_streams():
    from spark_nodes.workload.sources import generate_streams, resolve_streams

    cfg = {"count": 3, "rate": [1.0, 10.0, 1.0], "key_domain": 4}
    data = generate_streams(cfg, {"R1": 1, "R2": 2, "R3": 3}, duration=200.0, seed=2)
    assert 150 < len(data["R1"]) < 250 and 1800 < len(data["R2"]) < 2200
    with pytest.raises(ValueError, match=r"streams.rate: expected 3 rates"):
        resolve_streams({"count": 3, "rate": [1.0, 2.0]})
    with pytest.raises(ValueError, match=r"streams.rate\[1\]"):
        resolve_streams({"count": 2, "rate": [1.0, -2.0]})


def test_disorder_options_reach_the_model_and_are_checked():
    from spark_nodes.workload.sources import generate_streams, resolve_streams

    cfg = {"count": 1, "rate": 50.0, "disorder": "bursts", "disorder_mean": 0.0,
           "disorder_options": {"burst_prob": 1.0, "burst_len": 1, "burst_delay": 2.0}}
    data = generate_streams(cfg, {"R1": 1}, duration=2.0, seed=1)
    assert all(t.entered_at - t.ts == pytest.approx(2.0) for t in data["R1"])
    with pytest.raises(ValueError, match="streams.disorder_options: .*unknown option"):
        resolve_streams({"disorder": "pareto", "disorder_mean": 1.0,
                         "disorder_options": {"sigma": 2.0}})
