"""Soccer sensor data in the DEBS 2013 Grand Challenge format: generator and loader.

The QJoin experiment (docs/ALGORITHMS.md#qjoin) joins ball sensors (stream R) with player
sensors (stream S) on ``distance <= 5 m`` within 2 s windows. The real data set (several
GB) cannot be fetched here, so :func:`generate_game` synthesises data with its schema and
rates, and :func:`load_debs_csv` reads the real file when one is at hand.

Schema (CSV, no header, 13 integer columns): ``sid, ts, x, y, z, v, a, vx, vy, vz, ax,
ay, az`` with ``ts`` in picoseconds, positions in mm (origin at the field centre),
``v = |v|`` in µm/s, ``a = |a|`` in µm/s², and the direction columns as vectors of
length 10,000. Ball sensors have ids 4, 8, 10, 12 (one ball is in play at a time);
player sensors sample at 200 Hz, ball sensors at 200–2000 Hz.

The synthetic game: players move smoothly on a 105 x 68 m field (velocity driven by a
damped pull towards a home position that wanders, plus noise); the ball is dribbled by
one player (lagging a point a metre ahead of them) for 1–4 s, then passed at 12–25 m/s, lofted on long
passes, to another player, who runs to meet it. So the ball spends most of the game
within 5 m of some player and the distance join has results.

Examples
--------
>>> import numpy as np
>>> game = generate_game(np.random.default_rng(0), duration=1.0, players=3,
...                      ball_hz=100.0, player_hz=20.0)
>>> list(game.columns) == list(COLUMNS), len(game)
(True, 160)
>>> s = soccer_streams(np.random.default_rng(0), duration=1.0, players=3,
...                    ball_hz=100.0, player_hz=20.0)
>>> len(s["R"]), len(s["S"]), s["R"][0].stream, s["S"][0].key in (4, 8, 10, 12)
(100, 60, 'R', False)
"""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pandas as pd

from spark_nodes.workload.tuples import StreamTuple

COLUMNS = ("sid", "ts", "x", "y", "z", "v", "a", "vx", "vy", "vz", "ax", "ay", "az")
BALL_IDS = (4, 8, 10, 12)
REFEREE_IDS = (105, 106)
FIELD_LENGTH = 105.0            # metres, along x
FIELD_WIDTH = 68.0              # metres, along y
PS_PER_S = 10 ** 12
#: Player sensor ids (from the DEBS 2013 metadata: two leg sensors per player; one each
#: is used here, then further ids if more players are asked for).
PLAYER_IDS = (13, 47, 49, 19, 53, 23, 57, 59, 61, 63, 65, 67, 69, 71, 73, 75)

_DT = 0.01                      # motion integration step (s); sensors interpolate
_UNIT = 10_000                  # length of the DEBS direction vectors
_FOLLOW = 1 - math.exp(-_DT / 0.15)   # dribbling: ball lags its target by ~0.15 s


def _player_ids(players: int) -> list[int]:
    ids = list(PLAYER_IDS[:players])
    nxt = 200
    while len(ids) < players:
        ids.append(nxt)
        nxt += 1
    return ids


def _simulate(rng: np.random.Generator, duration: float, players: int):
    """Positions (metres) of the players and the ball (x, y, z) on the ``_DT`` grid."""
    steps = int(math.ceil(duration / _DT)) + 2
    hx, hy = FIELD_LENGTH / 2, FIELD_WIDTH / 2
    home = np.column_stack([rng.uniform(-0.8 * hx, 0.8 * hx, players),
                            rng.uniform(-0.8 * hy, 0.8 * hy, players)])
    pos = home + rng.normal(0, 3, (players, 2))
    vel = np.zeros((players, 2))
    ppos = np.empty((steps, players, 2))
    bpos = np.empty((steps, 3))
    holder = int(rng.integers(players))
    hold_left = rng.uniform(1, 4)
    ball = np.array([*pos[holder], 0.11])
    target = None                               # receiver during a pass
    pass_speed = loft = 0.0
    start = ball[:2].copy()
    for k in range(steps):
        # wandering homes keep players spread over the field but moving
        home += rng.normal(0, 0.3 * math.sqrt(_DT), home.shape)
        np.clip(home, [-0.9 * hx, -0.9 * hy], [0.9 * hx, 0.9 * hy], out=home)
        pull = 0.15 * (home - pos)
        if target is not None:                  # the receiver runs to meet the ball
            pull[target] += 1.5 * (ball[:2] - pos[target])
        # white-noise acceleration: velocity changes ~3 m/s per sqrt(second)
        acc = pull - 0.8 * vel + rng.normal(0, 3.0 / math.sqrt(_DT), vel.shape)
        vel += acc * _DT
        speed = np.linalg.norm(vel, axis=1, keepdims=True)
        vel *= np.minimum(1.0, 8.0 / np.maximum(speed, 1e-9))   # players top out at 8 m/s
        pos += vel * _DT
        # stay on the field: reflect at the lines
        for d, h in ((0, hx), (1, hy)):
            over = np.abs(pos[:, d]) > h
            pos[over, d] = np.sign(pos[over, d]) * (2 * h - np.abs(pos[over, d]))
            vel[over, d] *= -1
        if target is None:
            sp = np.linalg.norm(vel[holder])
            ahead = vel[holder] / sp if sp > 1e-6 else np.zeros(2)
            # the dribbled ball follows a point a metre ahead with a lag, never jumping
            xy = ball[:2] + (pos[holder] + ahead - ball[:2]) * _FOLLOW
            ball = np.array([*xy, ball[2] + (0.11 - ball[2]) * _FOLLOW])
            hold_left -= _DT
            if hold_left <= 0:
                target = int(rng.choice([p for p in range(players) if p != holder])) \
                    if players > 1 else holder
                pass_speed = rng.uniform(12, 25)
                start = ball[:2].copy()
                far = float(np.linalg.norm(pos[target] - start)) > 25
                loft = rng.uniform(0, 4) if far else 0.0
        else:
            to = pos[target] - ball[:2]
            dist = float(np.linalg.norm(to))
            step = pass_speed * _DT
            if dist <= max(step, 1.0):
                holder, target = target, None
                hold_left = rng.uniform(1, 4)
            else:
                xy = ball[:2] + to / dist * step
                # height profile over the distance flown so far + still to go (the
                # receiver moves, so the pass length is only known at the end)
                flown = float(np.linalg.norm(xy - start))
                done = flown / (flown + max(dist - step, 0.0) + 1e-9)
                ball = np.array([*xy, 0.11 + 4 * loft * done * (1 - done)])
        ball[0] = min(max(ball[0], -hx), hx)
        ball[1] = min(max(ball[1], -hy), hy)
        ppos[k] = pos
        bpos[k] = ball
    return ppos, bpos


def _sensor_rows(sid: int, t: np.ndarray, grid_t: np.ndarray, track: np.ndarray,
                 start_ps: int) -> np.ndarray:
    """DEBS rows of one sensor sampled at times ``t`` from a ``(steps, 3)`` track."""
    p = np.column_stack([np.interp(t, grid_t, track[:, d]) for d in range(3)])
    v_grid = np.gradient(track, _DT, axis=0)
    a_grid = np.gradient(v_grid, _DT, axis=0)
    v = np.column_stack([np.interp(t, grid_t, v_grid[:, d]) for d in range(3)])
    a = np.column_stack([np.interp(t, grid_t, a_grid[:, d]) for d in range(3)])

    def direction(vec):
        n = np.linalg.norm(vec, axis=1, keepdims=True)
        return np.round(np.where(n > 0, vec / np.maximum(n, 1e-12), 0.0) * _UNIT), n[:, 0]

    vd, vn = direction(v)
    ad, an = direction(a)
    rows = np.empty((len(t), 13), dtype=np.int64)
    rows[:, 0] = sid
    rows[:, 1] = start_ps + np.round(t * PS_PER_S).astype(np.int64)
    rows[:, 2:5] = np.round(p * 1000)
    rows[:, 5] = np.round(vn * 1e6)
    rows[:, 6] = np.round(an * 1e6)
    rows[:, 7:10] = vd
    rows[:, 10:13] = ad
    return rows


def _sample_times(rng: np.random.Generator, hz: float, duration: float) -> np.ndarray:
    phase = rng.uniform(0, 1 / hz)
    return phase + np.arange(int(math.ceil((duration - phase) * hz))) / hz


def generate_game(rng: np.random.Generator, duration: float = 10.0, players: int = 8,
                  ball_hz: float = 2000.0, player_hz: float = 200.0, ball_sid: int = 4,
                  start_ps: int = 0) -> pd.DataFrame:
    """Synthesise a game in the DEBS 2013 format.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of all randomness (motion, passes, sensor phases).
    duration : float
        Seconds of play.
    players : int
        Player sensors (one per player).
    ball_hz, player_hz : float
        Sampling rates of the ball in play and of each player sensor (DEBS: 2000, 200).
    ball_sid : int
        Id of the ball in play (one of :data:`BALL_IDS`).
    start_ps : int
        Timestamp of time 0, in picoseconds.

    Returns
    -------
    pandas.DataFrame
        One row per sensor reading, int64 columns :data:`COLUMNS`, sorted by ``ts`` then
        ``sid``. Sensors sample regularly from a random phase in ``[0, 1/hz)``.
    """
    if not duration > 0:
        raise ValueError(f"duration must be > 0, got {duration!r}")
    if players < 1:
        raise ValueError(f"players must be >= 1, got {players!r}")
    if not (ball_hz > 0 and player_hz > 0):
        raise ValueError(f"sensor rates must be > 0, got ball_hz={ball_hz!r}, "
                         f"player_hz={player_hz!r}")
    if ball_sid not in BALL_IDS:
        raise ValueError(f"ball_sid must be one of {BALL_IDS}, got {ball_sid!r}")
    ppos, bpos = _simulate(rng, duration, players)
    grid_t = np.arange(len(bpos)) * _DT
    parts = [_sensor_rows(ball_sid, _sample_times(rng, ball_hz, duration), grid_t, bpos,
                          start_ps)]
    for i, sid in enumerate(_player_ids(players)):
        track = np.column_stack([ppos[:, i, :], np.zeros(len(grid_t))])
        parts.append(_sensor_rows(sid, _sample_times(rng, player_hz, duration), grid_t,
                                  track, start_ps))
    rows = np.concatenate(parts)
    rows = rows[np.lexsort((rows[:, 0], rows[:, 1]))]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def load_debs_csv(path, start_ps: int | None = None, end_ps: int | None = None,
                  block_bytes: int = 16 << 20) -> pd.DataFrame:
    """Read a DEBS 2013 sensor file (CSV, no header, 13 integer columns).

    Parameters
    ----------
    path : str or Path
        The file (``full-game`` or a cut of it).
    start_ps, end_ps : int, optional
        Keep rows with ``start_ps <= ts < end_ps`` (read in blocks, so a cut of a
        several-GB file fits in memory).
    block_bytes : int
        Bytes read per block.

    Raises
    ------
    ValueError
        ``"<path>:<line>: ..."`` for a line without 13 integer fields, or an empty file.
        Empty lines are skipped.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> p = os.path.join(d, "g.csv")
    >>> _ = open(p, "w").write("4,10,1,2,3,4,5,6,7,8,9,10,11\\n13,11,1,2,3\\n")
    >>> load_debs_csv(p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ...g.csv:2: expected 13 comma-separated integer fields (sid, ts, x, y, z, v, a, vx, vy, vz, ax, ay, az), got 5
    """
    path = Path(path)
    frames = []
    lineno, rows = 1, 0
    rest = b""
    with open(path, "rb") as f:
        while True:
            data = f.read(block_bytes)
            buf = rest + data
            cut = len(buf) if not data else buf.rfind(b"\n") + 1
            block, rest = buf[:cut], buf[cut:]
            if block:
                df = _parse_block(path, block, lineno)
                rows += len(df)
                if start_ps is not None:
                    df = df[df.ts >= start_ps]
                if end_ps is not None:
                    df = df[df.ts < end_ps]
                frames.append(df)
                lineno += block.count(b"\n")
            if not data:
                break
    if rows == 0:
        raise ValueError(f"{path}: no data (expected CSV rows of {len(COLUMNS)} integers)")
    return pd.concat(frames, ignore_index=True)


def _parse_block(path: Path, block: bytes, first_line: int) -> pd.DataFrame:
    """Rows of a block of whole lines; malformed lines raise naming their number."""
    # pandas' chunked reader silently drops surplus fields, so count commas first
    raw = np.frombuffer(block, dtype=np.uint8)
    starts = np.r_[0, np.flatnonzero(raw == ord("\n")) + 1]
    starts = starts[starts < len(raw)]
    commas = np.add.reduceat(raw == ord(","), starts, dtype=np.int64)
    ends = np.r_[starts[1:], len(raw)]
    length = ends - starts - (raw[ends - 1] == ord("\n")) \
        - ((raw[np.maximum(ends - 2, 0)] == ord("\r")) & (raw[ends - 1] == ord("\n")))
    bad = np.flatnonzero((length > 0) & (commas != len(COLUMNS) - 1))
    if len(bad):
        i = int(bad[0])
        _parse_line(path, first_line + i, block[starts[i]:ends[i]].decode(errors="replace"))
    try:
        df = pd.read_csv(io.BytesIO(block), header=None, names=list(COLUMNS), dtype=np.int64)
    except pd.errors.EmptyDataError:
        return pd.DataFrame({c: pd.Series(dtype=np.int64) for c in COLUMNS})
    except (ValueError, OverflowError, pd.errors.ParserError) as err:
        for i, line in enumerate(block.decode(errors="replace").split("\n")):
            if line.strip("\r"):
                _parse_line(path, first_line + i, line)
        raise ValueError(f"{path}: lines {first_line}..: {err}") from err
    return df


def first_timestamp(path) -> int:
    """``ts`` of the first row of a DEBS file (read without loading the rest).

    Raises
    ------
    ValueError
        The file has no rows, or its first row is malformed (naming file and line).
    """
    path = Path(path)
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            if line.rstrip("\r\n"):
                return _parse_line(path, lineno, line)[1]
    raise ValueError(f"{path}: no data (expected CSV rows of {len(COLUMNS)} integers)")


def _parse_line(path: Path, lineno: int, line: str) -> list[int]:
    fields = line.rstrip("\r\n").split(",")
    if len(fields) != len(COLUMNS):
        raise ValueError(f"{path}:{lineno}: expected {len(COLUMNS)} comma-separated integer "
                         f"fields ({', '.join(COLUMNS)}), got {len(fields)}")
    out = []
    for name, value in zip(COLUMNS, fields):
        try:
            out.append(int(value))
        except ValueError:
            raise ValueError(f"{path}:{lineno}: column {name}: expected an integer, "
                             f"got {value.strip()!r}") from None
    return out


def game_to_streams(game: pd.DataFrame, names: tuple[str, str] = ("R", "S"),
                    origins: tuple[int, int] = (0, 0), t0_ps: int | None = None,
                    duration: float | None = None, ball_ids=BALL_IDS,
                    exclude_ids=REFEREE_IDS, ball_in_field: bool = True,
                    ) -> dict[str, list[StreamTuple]]:
    """Turn DEBS rows into a ball stream and a player stream.

    Parameters
    ----------
    game : pandas.DataFrame
        Rows with :data:`COLUMNS`.
    names : (str, str)
        Names of the ball stream and the player stream.
    origins : (int, int)
        Source node of each stream.
    t0_ps : int, optional
        Timestamp of time 0 (default: the smallest ``ts`` in ``game``).
    duration : float, optional
        Keep tuples with ``ts < duration`` seconds.
    ball_ids, exclude_ids : collections of int
        Ball sensor ids; ids that are neither ball nor player (the referee's).
    ball_in_field : bool
        Drop ball readings outside the 105 x 68 m field (balls not in play lie there).

    Returns
    -------
    dict
        ``{names[0]: ball tuples, names[1]: player tuples}``; ``ts`` in seconds from
        ``t0_ps``, ``x, y`` in metres, ``key`` = sensor id, ``seq`` 0.. in ``(ts, sid)``
        order, ``entered_at = ts``.
    """
    if len(game) == 0:
        return {names[0]: [], names[1]: []}
    t0 = int(game.ts.min()) if t0_ps is None else int(t0_ps)
    df = game.sort_values(["ts", "sid"], kind="stable")
    secs = (df.ts.to_numpy() - t0) / PS_PER_S
    keep = secs >= 0
    if duration is not None:
        keep &= secs < duration
    is_ball = df.sid.isin(list(ball_ids)).to_numpy()
    x = df.x.to_numpy() / 1000.0
    y = df.y.to_numpy() / 1000.0
    if ball_in_field:
        inside = (np.abs(x) <= FIELD_LENGTH / 2) & (np.abs(y) <= FIELD_WIDTH / 2)
        keep &= ~is_ball | inside
    is_player = ~is_ball & ~df.sid.isin(list(exclude_ids)).to_numpy()
    sid = df.sid.to_numpy()
    out = {}
    for name, origin, mask in ((names[0], origins[0], is_ball & keep),
                               (names[1], origins[1], is_player & keep)):
        idx = np.flatnonzero(mask)
        out[name] = [StreamTuple(name, i, float(secs[j]), int(sid[j]), float(x[j]),
                                 float(y[j]), int(origin), 1.0, float(secs[j]))
                     for i, j in enumerate(idx)]
    return out


def soccer_streams(rng: np.random.Generator, duration: float = 10.0, players: int = 8,
                   ball_hz: float = 2000.0, player_hz: float = 200.0,
                   names: tuple[str, str] = ("R", "S"), origins: tuple[int, int] = (0, 0),
                   ) -> dict[str, list[StreamTuple]]:
    """Generate a game (:func:`generate_game`) and return its R (ball) and S (player)
    streams (:func:`game_to_streams`), in seconds and metres."""
    game = generate_game(rng, duration, players, ball_hz, player_hz)
    return game_to_streams(game, names, origins, t0_ps=0, duration=duration)
