"""Soccer data: generator schema, rates, field bounds, determinism; DEBS CSV loader."""

import numpy as np
import pandas as pd
import pytest

from spark_nodes.algorithms.oracle import count_groups
from spark_nodes.workload.soccer import (BALL_IDS, COLUMNS, FIELD_LENGTH, FIELD_WIDTH,
                                         PS_PER_S, first_timestamp, game_to_streams,
                                         generate_game, load_debs_csv, soccer_streams)


@pytest.fixture(scope="module")
def game():
    return generate_game(np.random.default_rng(11), duration=20.0, players=6,
                         ball_hz=500.0, player_hz=50.0, start_ps=10_629_342_490_369_879)


def test_schema_and_units(game):
    assert list(game.columns) == list(COLUMNS)
    assert all(str(t) == "int64" for t in game.dtypes)
    assert (np.diff(game.ts.to_numpy()) >= 0).all()
    # direction columns are vectors of length 10,000 (or 0 when not moving)
    for cols in (["vx", "vy", "vz"], ["ax", "ay", "az"]):
        norm = np.linalg.norm(game[cols].to_numpy(dtype=float), axis=1)
        assert (np.abs(norm[norm > 0] - 10_000) <= 2).all()
    # speeds in um/s: players top out at 8 m/s, passes at 25 m/s
    players = game[~game.sid.isin(BALL_IDS)]
    ball = game[game.sid == 4]
    assert players.v.max() <= 8.0e6 + 1e3
    assert 12e6 <= ball.v.max() <= 26e6
    assert 1e6 < players.v.median() < 6e6


def test_rates_and_sensor_ids(game):
    counts = game.groupby("sid").size()
    assert counts[4] == 500 * 20                 # regular sampling from a random phase
    players = counts.drop(4)
    assert len(players) == 6 and (players == 50 * 20).all()
    assert not set(players.index) & set(BALL_IDS)
    # one sensor's period is exactly 1/hz in picoseconds
    ts = game[game.sid == 4].ts.to_numpy()
    assert np.allclose(np.diff(ts), PS_PER_S / 500, atol=1)


def test_positions_stay_on_the_field(game):
    assert game.x.abs().max() <= FIELD_LENGTH / 2 * 1000
    assert game.y.abs().max() <= FIELD_WIDTH / 2 * 1000
    # players spread over the field, not stuck in one spot
    players = game[~game.sid.isin(BALL_IDS)]
    assert players.x.max() - players.x.min() > 30_000
    ball = game[game.sid == 4]
    assert ball.z.min() >= 0 and ball.z.max() < 5000


def test_ball_often_near_a_player_so_the_join_has_results():
    s = soccer_streams(np.random.default_rng(3), duration=10.0, players=6, ball_hz=20.0,
                       player_hz=20.0)
    R, S = s["R"], s["S"]
    assert len(R) == 200 and len(S) == 1200
    assert 0 <= min(t.ts for t in R + S) and max(t.ts for t in R + S) < 10.0
    # readings within 0.05 s of each other: most ball samples have a player within 5 m
    near = 0
    for r in R:
        close = [p for p in S if abs(p.ts - r.ts) <= 0.05]
        near += any(np.hypot(r.x - p.x, r.y - p.y) <= 5.0 for p in close)
    assert near / len(R) > 0.5
    n = count_groups(s, {"R": 2.0, "S": 2.0}, "distance", 5.0)
    assert n > len(R) * 10


def test_same_seed_same_game_other_seed_other_game():
    a = generate_game(np.random.default_rng(5), duration=2.0, players=2, ball_hz=50.0,
                      player_hz=10.0)
    b = generate_game(np.random.default_rng(5), duration=2.0, players=2, ball_hz=50.0,
                      player_hz=10.0)
    c = generate_game(np.random.default_rng(6), duration=2.0, players=2, ball_hz=50.0,
                      player_hz=10.0)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)


def test_streams_in_seconds_and_metres(game):
    s = game_to_streams(game, names=("R1", "R2"), origins=(3, 7), duration=5.0)
    r, p = s["R1"], s["R2"]
    assert len(r) == 500 * 5 and len(p) == 6 * 50 * 5
    t0 = game.ts.min()
    first = game.iloc[0]
    assert r[0].ts == pytest.approx((game[game.sid == 4].ts.iloc[0] - t0) / PS_PER_S)
    assert [t.seq for t in r[:3]] == [0, 1, 2] and r[0].origin == 3 and p[0].origin == 7
    row = game[(game.sid == p[0].key)].iloc[0]
    assert (p[0].x, p[0].y) == (row.x / 1000, row.y / 1000)
    assert p[0].entered_at == p[0].ts and first.ts == t0


def test_loader_round_trip_filters_and_referees(tmp_path, game):
    extra = game.iloc[:3].copy()
    extra["sid"] = [105, 106, 8]
    extra.loc[extra.index[2], "x"] = 60_000          # a ball lying off the field
    rows = pd.concat([game.iloc[:400], extra]).sort_values("ts", kind="stable")
    path = tmp_path / "full-game"
    rows.to_csv(path, header=False, index=False)
    loaded = load_debs_csv(path, block_bytes=1000)
    pd.testing.assert_frame_equal(loaded, rows.reset_index(drop=True))
    assert first_timestamp(path) == rows.ts.iloc[0]
    cut = load_debs_csv(path, start_ps=rows.ts.iloc[10], end_ps=rows.ts.iloc[20])
    assert len(cut) == (rows.ts.between(rows.ts.iloc[10], rows.ts.iloc[20] - 1)).sum()
    s = game_to_streams(loaded)
    assert {t.key for t in s["S"]}.isdisjoint({105, 106})     # referees are neither
    assert all(abs(t.x) <= FIELD_LENGTH / 2 for t in s["R"])   # off-field ball dropped
    assert len(s["R"]) + len(s["S"]) == 400


@pytest.mark.parametrize("text, message", [
    ("4,1,2,3,4,5,6,7,8,9,10,11,12\n4,2,2,3,4,5,6,7,8,9,10,11\n",
     ":2: expected 13 comma-separated integer fields"),
    ("4,1,2,3,4,5,6,7,8,9,10,11,12\n\n4,2,2,3,4,5,6,7,8,9,10,11,12,13\n",
     ":3: expected 13 comma-separated integer fields"),
    ("4,1,2,3,4,5,6,7,8,9,10,11,12\n4,2,2,abc,4,5,6,7,8,9,10,11,12\n",
     ":2: column y: expected an integer, got 'abc'"),
    ("4,1,2,3,4,5,6,7,8,9,10,11,12\n4,2.5,2,3,4,5,6,7,8,9,10,11,12\n",
     ":2: column ts: expected an integer, got '2.5'"),
    ("", ": no data"),
])
def test_loader_names_file_and_line_of_a_malformed_row(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    for block_bytes in (7, 1 << 20):      # lines split over blocks, or one block
        with pytest.raises(ValueError) as err:
            load_debs_csv(path, block_bytes=block_bytes)
        assert str(err.value).startswith(str(path)) and message in str(err.value)


def test_loader_accepts_crlf_and_blank_lines(tmp_path):
    path = tmp_path / "crlf.csv"
    path.write_bytes(b"4,1,2,3,4,5,6,7,8,9,10,11,12\r\n\r\n13,2,-2,3,4,5,6,7,8,9,10,11,12")
    df = load_debs_csv(path, block_bytes=5)
    assert df.sid.tolist() == [4, 13] and df.x.tolist() == [2, -2]


@pytest.mark.parametrize("kwargs, match", [
    (dict(duration=0.0), "duration"), (dict(players=0), "players"),
    (dict(ball_hz=0.0), "rates"), (dict(ball_sid=5), "ball_sid"),
])
def test_generator_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        generate_game(np.random.default_rng(0), **kwargs)
