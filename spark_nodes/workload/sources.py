"""Stream sources: the ``[streams]`` table of a spec turned into placed, timed tuples.

The table (docs/DESIGN.md, "Spec format") is validated here: unknown keys, wrong types
and values, and keys that the chosen generator does not use raise a ``ValueError``
naming ``streams.<key>``.

Generators:

- ``keys``: streams ``R1..Rn``; arrivals of ``rate`` tuples per time unit (Poisson, or
  bursty: ``pattern`` = onoff | mmpp, see :mod:`spark_nodes.workload.arrivals`) on
  ``[0, duration)`` (``rate`` may be a list with one rate per stream, for skewed rates); keys ``uniform`` on ``0..key_domain-1`` or ``zipf`` (bounded,
  ``P(key = k) ~ (k + 1) ** -zipf_s``); positions ``x, y`` uniform on the square
  ``[0, key_domain)^2`` so that a distance query also has data.
- ``soccer``: two streams, ``R1`` = the ball, ``R2`` = the players, from
  :func:`spark_nodes.workload.soccer.generate_game` with :data:`SOCCER_PLAYERS` players;
  ``rate`` is each stream's rate (tuples per second): the ball samples at ``rate`` Hz and each
  player at ``rate / players`` Hz. (The real game has 2000 Hz for the ball and 200 Hz per
  player sensor: set ``rate`` accordingly.)
- ``csv``: the same two streams read from ``file`` in the DEBS 2013 format
  (:func:`spark_nodes.workload.soccer.load_debs_csv`; relative to the spec's folder); time 0 is
  the first row's timestamp.

Every tuple then gets a disorder delay from its stream's model
(:func:`emulator.disorder.make_disorder`): ``entered_at = ts + delay``; or, with
``disorder = "collector"``, lagging sensor clocks and a batching collector
(:mod:`spark_nodes.workload.collector`). Randomness comes
from ``numpy.random.SeedSequence(seed)`` spawned per stream (and per purpose within a
stream), so adding a stream never changes the others.

Examples
--------
>>> cfg = {"count": 2, "rate": 4.0, "key_domain": 5}
>>> nodes = place_streams(cfg, list(range(10)), exclude=[0], seed=1)
>>> sorted(nodes), 0 in nodes.values()
(['R1', 'R2'], False)
>>> data = generate_streams(cfg, nodes, duration=10.0, seed=1)
>>> t = data["R1"][0]
>>> (t.stream, t.seq, t.origin == nodes["R1"], 0 <= t.key < 5, t.entered_at == t.ts)
('R1', 0, True, True, True)
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from emulator.disorder import MODELS, make_disorder
from spark_nodes.workload import collector, soccer
from spark_nodes.workload.arrivals import arrivals as arrival_times
from spark_nodes.workload.arrivals import PATTERNS, check_pattern
from spark_nodes.workload.tuples import StreamTuple
from topologies.schema import Field

GENERATORS = ("keys", "soccer", "csv")
KEY_DISTRIBUTIONS = ("uniform", "zipf")
SOCCER_PLAYERS = 8
#: spawn key of the soccer game's own generator, far from the per-stream keys 0..n-1
_GAME = 1_000_000

#: The ``[streams]`` table: every key with its kind, range, default and meaning
#: (checked in :func:`resolve_streams`; ``docs/SPEC.md`` is generated from it).
STREAMS_SCHEMA = {
    "count": Field("integer", None, low=1, none=True,
                   doc="number of streams; none: 3 for keys, 2 for soccer / csv"),
    "nodes": Field("list", None, none=True,
                   doc="a node id per stream; none: placed at random (never the query node)"),
    "rate": Field("number", 5.0, low=0, low_open=True,
                  doc="tuples per time unit per stream; keys: or a list, one rate per stream"),
    "keys": Field("choice", "uniform", choices=KEY_DISTRIBUTIONS,
                  doc="key distribution (keys generator)"),
    "key_domain": Field("integer", 20, low=1, doc="keys are 0 .. key_domain - 1; positions "
                                                  "on [0, key_domain)^2"),
    "zipf_s": Field("number", 1.2, low=0, low_open=True,
                    doc="zipf exponent: P(key = k) ~ (k + 1) ** -zipf_s"),
    "disorder": Field("choice", "none", choices=tuple(sorted((*MODELS, "collector"))),
                      doc="model of each tuple's delay before it enters the system "
                          "(collector: sensor clocks and a batching collector, soccer "
                          "and csv only)"),
    "disorder_mean": Field("number", 0.0, low=0, doc="mean disorder delay"),
    "disorder_options": Field("table", {}, doc="shape options of the disorder model "
                                               "(sigma, alpha, burst_*)"),
    "generator": Field("choice", "keys", choices=GENERATORS,
                       doc="synthetic keyed streams, a soccer game, or a DEBS 2013 csv"),
    "file": Field("str", None, none=True, doc="csv generator: the file, relative to the "
                                              "spec's folder"),
    "pattern": Field("choice", "poisson", choices=PATTERNS,
                     doc="arrival process of the keys generator"),
    "pattern_options": Field("table", {}, doc="options of the arrival pattern (onoff: on, "
                                              "off; mmpp: low_time, high_time, burst)"),
}
# key -> default (checked in resolve_streams)
_DEFAULTS = {key: rule.default for key, rule in STREAMS_SCHEMA.items()}
#: Every key a ``[streams]`` table may hold.
STREAMS_KEYS = tuple(_DEFAULTS)
#: keys meaningful only for some generators (given for another one: an error)
_ONLY_FOR = {
    "keys": ("keys",), "key_domain": ("keys",), "zipf_s": ("keys",),
    "rate": ("keys", "soccer"), "file": ("csv",),
    "pattern": ("keys",), "pattern_options": ("keys",),
}


def _int(field, v, least):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < least:
        raise ValueError(f"{field}: expected an integer >= {least}, got {v!r}")
    return int(v)


def _number(field, v, positive):
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
            or not math.isfinite(v) or (v <= 0 if positive else v < 0):
        raise ValueError(f"{field}: expected a finite number {'> 0' if positive else '>= 0'}, "
                         f"got {v!r}")
    return float(v)


def _choice(field, v, valid):
    if v not in valid:
        raise ValueError(f"{field}: expected one of {', '.join(valid)}, got {v!r}")
    return v


def _rates(rate, count: int, generator: str) -> list[float]:
    """One rate per stream from ``streams.rate``: a number, or (keys) a list of ``count``.

    >>> _rates([1, 8.0], 2, "keys")
    [1.0, 8.0]
    """
    if isinstance(rate, (list, tuple)):
        if generator != "keys":
            raise ValueError(f"streams.rate: generator {generator!r} takes one number, "
                             f"got a list")
        if len(rate) != count:
            raise ValueError(f"streams.rate: expected {count} rates (one per stream), "
                             f"got {len(rate)}")
        return [_number(f"streams.rate[{i}]", r, positive=True) for i, r in enumerate(rate)]
    return [_number("streams.rate", rate, positive=True)] * count


def resolve_streams(cfg: dict) -> dict:
    """Return the ``[streams]`` table with defaults filled in, checked.

    Raises
    ------
    ValueError
        Naming ``streams.<key>`` (or ``streams.nodes[i]``) and what was expected.

    Examples
    --------
    >>> resolve_streams({"generator": "soccer"})["count"]
    2
    >>> resolve_streams({"rates": 5})
    Traceback (most recent call last):
    ...
    ValueError: streams.rates: unknown key; valid: count, disorder, disorder_mean, disorder_options, file, generator, key_domain, keys, nodes, pattern, pattern_options, rate, zipf_s
    """
    if not isinstance(cfg, dict):
        raise ValueError(f"streams: expected a table, got {type(cfg).__name__}")
    unknown = sorted(set(cfg) - set(_DEFAULTS))
    if unknown:
        raise ValueError(f"streams.{unknown[0]}: unknown key; valid: {', '.join(sorted(_DEFAULTS))}")
    out = dict(_DEFAULTS)
    out.update(cfg)
    gen = _choice("streams.generator", out["generator"], STREAMS_SCHEMA["generator"].choices)
    for key, gens in _ONLY_FOR.items():
        if key in cfg and gen not in gens:
            raise ValueError(f"streams.{key}: not used by generator {gen!r} "
                             f"(only by {', '.join(gens)})")
    out["keys"] = _choice("streams.keys", out["keys"], STREAMS_SCHEMA["keys"].choices)
    out["pattern_options"] = check_pattern(out["pattern"], out["pattern_options"])
    out["key_domain"] = _int("streams.key_domain", out["key_domain"], 1)
    out["zipf_s"] = _number("streams.zipf_s", out["zipf_s"], positive=True)
    out["disorder"] = _choice("streams.disorder", out["disorder"],
                              STREAMS_SCHEMA["disorder"].choices)
    out["disorder_mean"] = _number("streams.disorder_mean", out["disorder_mean"], positive=False)
    if not isinstance(out["disorder_options"], dict):
        raise ValueError(f"streams.disorder_options: expected a table, "
                         f"got {out['disorder_options']!r}")
    if out["disorder"] == "collector" and gen == "keys":
        raise ValueError("streams.disorder: 'collector' needs sensor ids, i.e. generator "
                         "'soccer' or 'csv'")
    try:   # check the options now, not when the first stream is drawn
        if out["disorder"] == "collector":
            collector.check_options(out["disorder_mean"], **out["disorder_options"])
        else:
            make_disorder(out["disorder"], out["disorder_mean"], np.random.default_rng(0),
                          **out["disorder_options"])
    except ValueError as err:
        raise ValueError(f"streams.disorder_options: {err}") from None
    if out["count"] is None:
        out["count"] = 3 if gen == "keys" else 2
    out["count"] = _int("streams.count", out["count"], 1)
    out["rates"] = _rates(out["rate"], out["count"], gen)
    if gen != "keys" and out["count"] != 2:
        raise ValueError(f"streams.count: generator {gen!r} has 2 streams (R1 = ball, "
                         f"R2 = players), got {out['count']}")
    if gen == "csv" and not isinstance(out["file"], str):
        raise ValueError(f"streams.file: generator 'csv' needs a file name, got {out['file']!r}")
    nodes = out["nodes"]
    if nodes is not None:
        if not isinstance(nodes, (list, tuple)):
            raise ValueError(f"streams.nodes: expected a list of node ids, got {nodes!r}")
        if len(nodes) != out["count"]:
            raise ValueError(f"streams.nodes: expected {out['count']} node ids (one per "
                             f"stream), got {len(nodes)}")
        out["nodes"] = [_int(f"streams.nodes[{i}]", v, 0) for i, v in enumerate(nodes)]
    return out


def stream_names(cfg: dict) -> list[str]:
    """Names of the streams the table describes: ``R1..Rn``.

    Examples
    --------
    >>> stream_names({"count": 3})
    ['R1', 'R2', 'R3']
    """
    return [f"R{i + 1}" for i in range(resolve_streams(cfg)["count"])]


def place_streams(streams_cfg: dict, nodes, exclude=(), seed: int = 0) -> dict[str, int]:
    """Choose the node of every stream.

    Parameters
    ----------
    streams_cfg : dict
        The ``[streams]`` table (checked completely here, so a bad table fails before a
        run starts).
    nodes : sequence of int
        The topology's nodes.
    exclude : collection of int
        Nodes not to pick at random (e.g. the query node); explicit ``nodes`` may use them.
    seed : int
        Seed of the random placement.

    Returns
    -------
    dict
        ``{stream name: node}``: the table's ``nodes`` if given, else distinct random
        nodes outside ``exclude``.

    Raises
    ------
    ValueError
        ``streams.nodes[i]`` names a node that does not exist (the message gives the
        valid ones), or there are fewer free nodes than streams.

    Examples
    --------
    >>> place_streams({"count": 2, "nodes": [3, 1]}, range(5))
    {'R1': 3, 'R2': 1}
    >>> place_streams({"count": 2, "nodes": [3, 9]}, range(5))
    Traceback (most recent call last):
    ...
    ValueError: streams.nodes[1]: node 9 does not exist; valid nodes: 0..4
    """
    cfg = resolve_streams(streams_cfg)
    names = [f"R{i + 1}" for i in range(cfg["count"])]
    nodes = sorted(int(n) for n in nodes)
    if cfg["nodes"] is not None:
        valid = set(nodes)
        for i, n in enumerate(cfg["nodes"]):
            if n not in valid:
                raise ValueError(f"streams.nodes[{i}]: node {n} does not exist; "
                                 f"valid nodes: {_describe(nodes)}")
        return dict(zip(names, cfg["nodes"]))
    free = [n for n in nodes if n not in set(exclude)]
    if len(free) < len(names):
        raise ValueError(f"streams.count: {len(names)} streams need {len(names)} distinct "
                         f"nodes, but only {len(free)} are free ({_describe(free)}; "
                         f"excluded: {sorted(exclude)})")
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    chosen = rng.choice(len(free), size=len(names), replace=False)
    return {name: free[int(i)] for name, i in zip(names, chosen)}


def _describe(nodes: list[int]) -> str:
    if not nodes:
        return "none"
    if nodes == list(range(nodes[0], nodes[-1] + 1)):
        return f"{nodes[0]}..{nodes[-1]}"
    return ", ".join(map(str, nodes))


def _stream_seeds(seed: int, i: int):
    """(arrivals, values, disorder) seed sequences of stream number ``i``."""
    return np.random.SeedSequence(seed, spawn_key=(i,)).spawn(3)


def key_probabilities(cfg: dict) -> np.ndarray:
    """``P(key = k)`` for ``k = 0..key_domain-1`` of a resolved ``keys`` table.

    >>> key_probabilities({"keys": "uniform", "key_domain": 4}).tolist()
    [0.25, 0.25, 0.25, 0.25]
    """
    m = cfg["key_domain"]
    if cfg["keys"] == "uniform":
        return np.full(m, 1.0 / m)
    p = np.arange(1, m + 1, dtype=float) ** -cfg["zipf_s"]
    return p / p.sum()


def _keys(cfg: dict, rng: np.random.Generator, n: int) -> np.ndarray:
    m = cfg["key_domain"]
    if cfg["keys"] == "uniform":
        return rng.integers(0, m, n)
    return rng.choice(m, size=n, p=key_probabilities(cfg))


def _key_stream(cfg, name, node, rate, duration, seeds) -> list[StreamTuple]:
    times, values = (np.random.default_rng(s) for s in seeds[:2])
    ts = arrival_times(cfg["pattern"], rate, duration, times, cfg["pattern_options"])
    n = len(ts)
    keys = _keys(cfg, values, n)
    side = float(cfg["key_domain"])
    xy = values.uniform(0.0, side, (n, 2))
    return [StreamTuple(name, i, float(ts[i]), int(keys[i]), float(xy[i, 0]),
                        float(xy[i, 1]), node, 1.0, float(ts[i])) for i in range(n)]


def _soccer_streams(cfg, names, stream_nodes, duration, seed, base_dir):
    origins = (stream_nodes[names[0]], stream_nodes[names[1]])
    if cfg["generator"] == "soccer":
        game_rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(_GAME,)))
        game = soccer.generate_game(game_rng, duration, SOCCER_PLAYERS, ball_hz=cfg["rates"][0],
                                    player_hz=cfg["rates"][0] / SOCCER_PLAYERS)
        return soccer.game_to_streams(game, tuple(names), origins, t0_ps=0, duration=duration)
    path = Path(cfg["file"])
    if not path.is_absolute():
        path = Path(base_dir) / path
    if not path.is_file():
        raise ValueError(f"streams.file: no such file {str(path)!r}")
    t0 = soccer.first_timestamp(path)
    game = soccer.load_debs_csv(path, start_ps=t0,
                                end_ps=t0 + int(math.ceil(duration * soccer.PS_PER_S)))
    return soccer.game_to_streams(game, tuple(names), origins, t0_ps=t0, duration=duration)


def generate_streams(streams_cfg: dict, stream_nodes: dict[str, int], duration: float,
                     seed: int, base_dir=".") -> dict[str, list[StreamTuple]]:
    """Generate every stream's tuples over ``[0, duration)``.

    Parameters
    ----------
    streams_cfg : dict
        The ``[streams]`` table.
    stream_nodes : dict
        ``{stream name: node}`` (from :func:`place_streams`).
    duration : float
        Length of the run in time units.
    seed : int
        Seed of all draws.
    base_dir : str or Path
        Folder that a relative ``file`` is read from.

    Returns
    -------
    dict
        ``{name: tuples}``, each list in ``ts`` order with ``seq`` 0.., ``origin`` the
        stream's node and ``entered_at = ts + disorder delay``.

    Raises
    ------
    ValueError
        A bad table, or ``stream_nodes`` not naming exactly the table's streams.
    """
    cfg = resolve_streams(streams_cfg)
    names = [f"R{i + 1}" for i in range(cfg["count"])]
    if sorted(stream_nodes) != sorted(names):
        raise ValueError(f"stream_nodes: expected nodes for {names}, got {sorted(stream_nodes)}")
    if not duration > 0:
        raise ValueError(f"duration must be > 0, got {duration!r}")
    seeds = [_stream_seeds(seed, i) for i in range(len(names))]
    if cfg["generator"] == "keys":
        data = {name: _key_stream(cfg, name, int(stream_nodes[name]), cfg["rates"][i],
                                  duration, seeds[i])
                for i, name in enumerate(names)}
    else:
        data = _soccer_streams(cfg, names, stream_nodes, duration, seed, base_dir)
    for i, name in enumerate(names):
        if cfg["disorder"] == "collector":
            opts = collector.check_options(cfg["disorder_mean"], **cfg["disorder_options"])
            data[name] = collector.collector_disorder(
                data[name], np.random.default_rng(seeds[i][2]), cfg["disorder_mean"], **opts)
            continue
        draw = make_disorder(cfg["disorder"], cfg["disorder_mean"],
                             np.random.default_rng(seeds[i][2]), **cfg["disorder_options"])
        tuples = data[name]
        delays = draw(len(tuples))
        data[name] = [t._replace(entered_at=t.ts + float(d)) for t, d in zip(tuples, delays)]
    return data
