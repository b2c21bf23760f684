"""Experiment specs: TOML files resolved against defaults and validated before anything runs.

The tables ``[run]``, ``[query]``, ``[algorithm]``, ``[params.*]`` and ``[sweep]`` are
checked here; ``[topology]``, ``[mobility]`` and ``[streams]`` by the builders that own
them (:func:`experiments.runner.build_plan` calls them all before a run starts). Every
error is a :class:`SpecError` naming the file and the dotted field.

Example
-------
>>> spec = resolve({"run": {"name": "demo", "duration": 5}, "query": {"window": "none"}})
>>> spec["run"]["duration"], spec["run"]["step"], spec["query"]["window"]
(5.0, 0.01, None)
>>> resolve({"run": {"duraton": 5}})
Traceback (most recent call last):
...
experiments.spec.SpecError: <spec>: run.duraton: unknown key; valid: backend, bytes_per_unit, drain, duration, header_bytes, memory_interval, name, run_ahead, runtime, seed, spark_master, step, synopsis_unit
"""
from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import tomllib
from pathlib import Path

from emulator.backends import BACKENDS as _BACKEND_REGISTRY
from emulator.transport import MEDIA
from spark_nodes.runtimes import RUNTIMES as _RUNTIME_REGISTRY

BACKENDS = tuple(_BACKEND_REGISTRY.names())
RUNTIMES = tuple(_RUNTIME_REGISTRY.names())
PREDICATES = ("equality", "distance")

#: Sections whose keys this module checks: key -> (kind, default). Kinds: "int", "float",
#: "seed" (int >= 0), "bool", "pos" (float > 0), "nonneg" (float >= 0), "str", "opt_float" (float or none), "opt_pos"
#: (float > 0 or none), "table",
#: or a tuple of allowed strings.
SCHEMA = {
    "run": {
        "name": ("str", "run"),
        "seed": ("seed", 1),
        "duration": ("pos", 10.0),
        "step": ("pos", 0.01),
        "backend": (BACKENDS, "simpy"),
        "runtime": (RUNTIMES, "inproc"),
        "memory_interval": ("pos", 1.0),
        "bytes_per_unit": ("int", 32),
        "header_bytes": ("int", 24),
        "synopsis_unit": ("nonneg", 0.25),
        "drain": ("opt_float", None),
        "spark_master": ("opt_str", None),
        # Nodes that receive nothing run ahead, nodes that send nothing are deferred
        # (emulator.lookahead): the same outputs in fewer runtime calls.
        "run_ahead": ("bool", True),
    },
    "query": {
        "node": ("int", 0),
        "predicate": (PREDICATES, "equality"),
        "theta": ("opt_float", None),
        "window": ("opt_float", None),
        "windows": ("table", {}),
    },
    "algorithm": {"name": ("str", "centralized")},
    # How transmissions share the air (emulator.transport): every directed link its own
    # channel, or one radio channel with the two-hop conflict rule.
    "network": {
        "medium": (MEDIA, "links"),
        "interference_radius": ("opt_pos", None),
    },
}
#: Sections checked by their owners (tables passed through as given).
OWNED_ELSEWHERE = ("topology", "mobility", "streams", "mininet", "trigger")
SECTIONS = tuple(SCHEMA) + OWNED_ELSEWHERE + ("params", "sweep")


class SpecError(ValueError):
    """A spec that cannot run: ``file: field: what was expected``."""

    def __init__(self, source: str, field: str, message: str):
        super().__init__(f"{source}: {field}: {message}")
        self.source, self.field = source, field


def load(path) -> tuple[dict, Path]:
    """Read and resolve a TOML spec; returns ``(spec, directory of the file)``."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SpecError(str(path), "(file)", "no such file") from None
    except IsADirectoryError:
        raise SpecError(str(path), "(file)",
                        "expected a TOML spec file, got a directory") from None
    except UnicodeDecodeError as err:
        raise SpecError(str(path), "(file)", f"expected a UTF-8 text file (byte {err.start} is "
                        "not UTF-8)") from None
    except OSError as err:
        raise SpecError(str(path), "(file)",
                        f"expected a readable file ({err.strerror})") from None
    except tomllib.TOMLDecodeError as err:
        raise SpecError(str(path), "(syntax)", str(err)) from None
    return resolve(raw, source=str(path)), path.parent.resolve()


def resolve(raw: dict, source: str = "<spec>") -> dict:
    """Defaults overlaid with ``raw``; checks this module's sections."""
    unknown = sorted(set(raw) - set(SECTIONS))
    if unknown:
        raise SpecError(source, unknown[0], f"unknown section; valid: {', '.join(SECTIONS)}")
    spec = {}
    for section, fields in SCHEMA.items():
        given = raw.get(section, {})
        if not isinstance(given, dict):
            raise SpecError(source, section, "expected a table")
        bad = sorted(set(given) - set(fields))
        if bad:
            raise SpecError(source, f"{section}.{bad[0]}",
                            f"unknown key; valid: {', '.join(sorted(fields))}")
        spec[section] = {key: _check(source, f"{section}.{key}", kind,
                                     given[key] if key in given else copy.deepcopy(default))
                         for key, (kind, default) in fields.items()}
    for section in OWNED_ELSEWHERE:
        spec[section] = copy.deepcopy(raw.get(section, {}))
        if not isinstance(spec[section], dict):
            raise SpecError(source, section, "expected a table")
    spec["params"] = copy.deepcopy(raw.get("params", {}))
    for name, table in spec["params"].items():
        if not isinstance(table, dict):
            raise SpecError(source, f"params.{name}", "expected a table of parameters")
    for stream, window in spec["query"]["windows"].items():
        spec["query"]["windows"][stream] = _check(source, f"query.windows.{stream}",
                                                  "opt_float", window)
    spec["sweep"] = _check_sweep(source, raw.get("sweep", {}))
    return spec


def _check(source: str, field: str, kind, value):
    def fail(expected):
        raise SpecError(source, field, f"expected {expected}, got {value!r}")

    if isinstance(kind, tuple):
        if value not in kind:
            fail("one of " + ", ".join(kind))
        return value
    if kind in ("opt_float", "opt_str", "opt_pos") and (value is None or value == "none"):
        return None
    if kind == "opt_pos":
        kind = "pos"
    if kind == "opt_str":
        kind = "str"
    if kind in ("int", "seed"):
        if isinstance(value, bool) or not isinstance(value, int):
            fail("an integer")
        if kind == "seed" and value < 0:
            fail("a non-negative integer (numpy seeds cannot be negative)")
        return value
    if kind == "str":
        if not isinstance(value, str) or not value:
            fail("a non-empty string")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            fail("true or false")
        return value
    if kind == "table":
        if not isinstance(value, dict):
            fail("a table")
        return value
    if isinstance(value, str) and value in ("inf", "+inf"):
        value = math.inf  # JSON cannot spell infinity; a resolved spec writes "inf"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        fail("a number" if kind == "opt_float" else "a number > 0" if kind == "pos"
             else "a number >= 0")
    if kind == "pos" and value <= 0:
        fail("a number > 0")
    if kind in ("nonneg", "opt_float") and value < 0:
        fail("a number >= 0")
    return float(value)


def _check_sweep(source: str, sweep) -> dict:
    if not isinstance(sweep, dict):
        raise SpecError(source, "sweep", "expected a table")
    bad = sorted(set(sweep) - {"seeds", "grid"})
    if bad:
        raise SpecError(source, f"sweep.{bad[0]}", "unknown key; valid: grid, seeds")
    seeds = sweep.get("seeds", [])
    if not isinstance(seeds, list) or not all(isinstance(s, int) and not isinstance(s, bool)
                                              for s in seeds):
        raise SpecError(source, "sweep.seeds", f"expected a list of integers, got {seeds!r}")
    grid = sweep.get("grid", {})
    if not isinstance(grid, dict):
        raise SpecError(source, "sweep.grid", "expected a table of dotted paths to lists")
    for path, values in grid.items():
        if not isinstance(values, list) or not values:
            raise SpecError(source, f"sweep.grid.{path}", f"expected a non-empty list, "
                                                          f"got {values!r}")
        section = path.split(".")[0]
        if section not in SECTIONS or section == "sweep" or "." not in path:
            raise SpecError(source, f"sweep.grid.{path}", "expected a dotted path into "
                                                          "a spec section, like streams.count")
    return {"seeds": list(seeds), "grid": dict(grid)}


def set_path(spec: dict, path: str, value) -> None:
    """Set ``spec[a][b][c] = value`` for ``path = "a.b.c"`` (creating tables).

    >>> s = {"streams": {"count": 3}}; set_path(s, "streams.count", 5); s["streams"]["count"]
    5
    """
    *parents, leaf = path.split(".")
    node = spec
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value


def for_run(spec: dict, source: str = "<spec>") -> dict:
    """The spec as one run sees it: only the chosen algorithm's ``params`` and ``trigger``
    tables are kept, so those of other algorithms (there for sweeps) do not change the
    run's id.
    A table naming no known algorithm is an error.

    >>> s = resolve({"algorithm": {"name": "centralized"},
    ...              "params": {"centralized": {"batch": 2}, "naive": {}}})
    >>> for_run(s)["params"]
    {'centralized': {'batch': 2}}
    """
    from spark_nodes import registry

    known = registry.names()
    for section in ("params", "trigger"):
        for name in spec.get(section, {}):
            if name not in known:
                raise SpecError(source, f"{section}.{name}",
                                f"no such algorithm; valid: {', '.join(known)}")
    chosen = spec["algorithm"]["name"]
    out = dict(spec)
    for section in ("params", "trigger"):
        table = spec.get(section, {})
        out[section] = {chosen: table[chosen]} if chosen in table else {}
    return out


def expand(spec: dict, source: str = "<spec>") -> list[tuple[dict, dict]]:
    """The runs of a sweep: ``(run spec, {dotted path: value, "seed": seed})`` for every
    point of the grid times every seed (the spec's own seed when the sweep names none).

    Points that give the same run (they differ only in another algorithm's parameters)
    appear once; in the point, such parameters are ``None``.

    >>> runs = expand(resolve({"sweep": {"seeds": [1, 2], "grid": {"streams.count": [3, 4]}}}))
    >>> [(p["streams.count"], p["seed"]) for _, p in runs]
    [(3, 1), (3, 2), (4, 1), (4, 2)]
    """
    grid = spec["sweep"]["grid"]
    seeds = spec["sweep"]["seeds"] or [spec["run"]["seed"]]
    paths = list(grid)
    runs, seen = [], set()
    for values in itertools.product(*(grid[p] for p in paths)):
        for seed in seeds:
            raw = copy.deepcopy(spec)
            raw["sweep"] = {}
            for path, value in zip(paths, values):
                set_path(raw, path, value)
            raw["run"]["seed"] = seed
            resolved = for_run(resolve(raw, source), source)
            if run_id(resolved) in seen:
                continue
            seen.add(run_id(resolved))
            chosen = resolved["algorithm"]["name"]
            point = {p: (None if p.startswith("params.") and p.split(".")[1] != chosen else v)
                     for p, v in zip(paths, values)}
            point["seed"] = seed
            runs.append((resolved, point))
    return runs


def canonical_json(spec: dict) -> str:
    """The spec as canonical JSON (sorted keys; infinity spelled "inf")."""
    return json.dumps(_jsonable(spec), sort_keys=True, separators=(",", ":"))


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def run_id(spec: dict) -> str:
    """``<name>-<12 hex digits of the spec's hash>``: equal specs, equal folders."""
    digest = hashlib.sha256(canonical_json(spec).encode()).hexdigest()[:12]
    return f"{spec['run']['name']}-{digest}"
