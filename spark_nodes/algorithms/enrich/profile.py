"""Lookup profiles: built offline from a traced run, loaded and checked by a later run.

A traced run writes ``trace_tuples`` (a tuple seen at an operator: ``time, node,
location, tuple_id, type, key, parents``), ``trace_lookups`` (a tuple that needed an
item, written when it was served: ``time, location, tuple_id, type, source, key, stall,
served, need_time``) and
``trace_fetches`` (an item that arrived: ``time, key, latency, prefetch``).

:func:`build_profile` follows the source (docs/ALGORITHMS.md#profiles, Fig. 12): group the lookups
that went remote by (operator, tuple type, data source); walk back to every earlier
location where the same tuple or one of its ancestors was seen (the candidate trigger
locations); for each, write a record with the number of tuples of that type seen there,
the number that later needed the lookup (their ratio is the probability), the key ranges
where the probability is clearly higher, and the distributions of the delay from the
trigger to the need and of the fetch latency (as quantiles). An *oracle* profile instead
lists the exact tuples that needed a remote lookup (perfect foresight, for comparison).

:func:`prefetch_wait` turns a record into how long to wait at the trigger before
fetching: as late as possible while the item still arrives before the need with
probability ``c`` (delay and latency taken as independent).

Examples
--------
>>> import pandas as pd
>>> seen = pd.DataFrame({"time": [0.0, 0.1, 0.2, 0.3], "node": 4,
...     "location": "source:R1", "tuple_id": ["R1:0", "R1:1", "R1:2", "R1:3"],
...     "type": "R1", "key": [1, 1, 9, 9], "parents": ""})
>>> needs = pd.DataFrame({"time": [1.0, 1.3], "node": 0, "location": "enrich",
...     "tuple_id": ["R1:2", "R1:3"], "type": "R1", "source": "table", "key": [9, 9],
...     "stall": [0.4, 0.2], "served": "demand", "need_time": [1.0, 1.3]})
>>> fetches = pd.DataFrame({"time": [1.4, 1.5], "node": 0, "key": [9, 9],
...                         "latency": [0.4, 0.2], "prefetch": False})
>>> p = build_profile(seen, needs, fetches, topology={"generator": "line", "nodes": 5})
>>> r = p["records"][0]
>>> r["trigger"], r["tuples"], r["lookups"], r["probability"], r["key_ranges"]
('source:R1', 4, 2, 0.5, [{'lo': 9, 'hi': 9, 'tuples': 2, 'probability': 1.0}])
>>> round(prefetch_wait(r, 0.9), 3)          # delays 0.8 and 1.0, latencies 0.2 .. 0.4
0.48
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

VERSION = 1
#: Quantile levels at which the delay and latency distributions are stored.
LEVELS = np.linspace(0.0, 1.0, 21)
#: A key range is "clearly higher" when its probability is at least this times the
#: record's and it holds at least MIN_RANGE_TUPLES tuples.
CLEARLY = 1.5
MIN_RANGE_TUPLES = 2


class ProfileError(ValueError):
    """A profile file that cannot be used: names the file and the field."""

    def __init__(self, source: str, field: str, expected: str):
        super().__init__(f"{source}: {field}: {expected}")


def _quantiles(values) -> list[float]:
    v = np.asarray(list(values), dtype=float)
    v = v[np.isfinite(v)]
    return [] if v.size == 0 else [float(q) for q in np.quantile(v, LEVELS)]


def _ancestors(tuples: pd.DataFrame) -> dict[str, list[str]]:
    parents = {}
    for tid, par in zip(tuples["tuple_id"], tuples["parents"].fillna("")):
        if par:
            parents.setdefault(tid, []).extend(p for p in par.split("|") if p)
    return parents


def _lineage(tid: str, parents: dict) -> set[str]:
    out, todo = {tid}, [tid]
    while todo:
        for p in parents.get(todo.pop(), []):
            if p not in out:
                out.add(p)
                todo.append(p)
    return out


def key_ranges(keys: pd.Series, needed: pd.Series, probability: float, bins: int = 10
               ) -> list[dict]:
    """Contiguous key ranges whose lookup probability is clearly above ``probability``.

    ``keys``: the keys of the tuples seen at the trigger; ``needed``: whether each later
    needed the lookup. Keys are cut into ``bins`` equal-width bins; adjacent bins above
    :data:`CLEARLY` × ``probability`` merge into one range.
    """
    if keys.empty or keys.isna().all():
        return []
    lo, hi = int(keys.min()), int(keys.max())
    width = max(1, math.ceil((hi - lo + 1) / bins))
    which = (keys.astype(int) - lo) // width
    stats = pd.DataFrame({"bin": which, "need": needed.astype(int)}).groupby("bin")["need"]
    count, hits = stats.size(), stats.sum()
    ranges: list[dict] = []
    for b in sorted(count.index):
        p = hits[b] / count[b]
        if count[b] >= MIN_RANGE_TUPLES and p >= CLEARLY * probability and p > probability:
            start, end = lo + b * width, min(hi, lo + (b + 1) * width - 1)
            if ranges and ranges[-1]["hi"] == start - 1:
                r = ranges[-1]
                n, h = r["tuples"] + int(count[b]), r["probability"] * r["tuples"] + hits[b]
                r.update(hi=end, tuples=n, probability=float(h / n))
            else:
                ranges.append({"lo": start, "hi": end, "tuples": int(count[b]),
                               "probability": float(p)})
    return ranges


def build_profile(tuples: pd.DataFrame, lookups: pd.DataFrame, fetches: pd.DataFrame, *,
                  topology: dict, oracle: bool = False) -> dict:
    """The profile of a traced run (see the module docstring); ``topology`` is what the
    run was on (``generator`` and ``nodes``), checked when the profile is loaded."""
    needs = lookups[lookups["served"] == "demand"] if len(lookups) else lookups
    if oracle:
        return {"version": VERSION, "kind": "oracle", "topology": topology,
                "tuples": sorted(set(needs["tuple_id"])) if len(needs) else []}
    parents = _ancestors(tuples) if len(tuples) else {}
    latency = fetches.loc[~fetches["prefetch"].astype(bool), "latency"] if len(fetches) \
        else pd.Series(dtype=float)
    records = []
    groups = needs.groupby(["location", "type", "source"]) if len(needs) else []
    for (need_at, typ, source), group in groups:
        need_time = {}
        for tid, t in zip(group["tuple_id"], group["need_time"]):
            for a in _lineage(tid, parents):
                need_time.setdefault(a, t)
        earlier = tuples[(tuples["location"] != need_at) & (tuples["type"] == typ)]
        for trigger, seen in earlier.groupby("location"):
            needed = seen["tuple_id"].map(lambda t: t in need_time)
            hits = seen[needed]
            delay = [need_time[t] - s for t, s in zip(hits["tuple_id"], hits["time"])]
            p = float(needed.mean())
            records.append({
                "trigger": trigger, "type": typ, "need": need_at, "source": source,
                "tuples": int(len(seen)), "lookups": int(needed.sum()), "probability": p,
                "key_ranges": key_ranges(seen["key"], needed, p),
                "delay_quantiles": _quantiles(delay), "fetch_quantiles": _quantiles(latency)})
    return {"version": VERSION, "kind": "predicted", "topology": topology,
            "records": records}


#: Columns of the trace tables (an empty one is built with them).
TRACE_COLUMNS = {
    "trace_tuples": ["time", "node", "location", "tuple_id", "type", "key", "parents"],
    "trace_lookups": ["time", "node", "location", "tuple_id", "type", "source", "key",
                      "stall", "served", "need_time"],
    "trace_fetches": ["time", "node", "key", "latency", "prefetch"],
}


def profile_from_run(run, oracle: bool = False) -> dict:
    """The profile of a finished traced enrichment run (an ``experiments.store.Run``);
    a run that is not one is a :class:`ProfileError` naming its folder."""
    where = str(run.path)
    if "profile_topology" not in run.summary:
        raise ProfileError(where, "algorithm", "expected a run of an enrich-* algorithm, "
                           f"got {run.spec.get('algorithm', {}).get('name')!r}")
    if not run.has_table("trace_tuples"):
        raise ProfileError(where, "trace_tuples", "expected a traced run (set "
                           "params.<algorithm>.trace = true)")

    def table(name: str) -> pd.DataFrame:   # a run with no lookup writes no such table
        return run.table(name) if run.has_table(name) else pd.DataFrame(
            columns=TRACE_COLUMNS[name])

    profile = build_profile(table("trace_tuples"), table("trace_lookups"),
                            table("trace_fetches"),
                            topology=json.loads(run.summary["profile_topology"]),
                            oracle=oracle)
    profile["built_from"] = {"run_id": run.path.name, "seed": run.spec["run"]["seed"]}
    return profile


def save_profile(profile: dict, path) -> Path:
    """Write ``profile`` as JSON (written aside, then renamed into place)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(profile, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def read_profile(path) -> dict:
    """Read a profile file (checked by :func:`check_profile` against a run)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ProfileError(str(path), "(file)", "no such file") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ProfileError(str(path), "(file)", f"expected a JSON profile ({err})") from None


def _number_list(source, field, value) -> list[float]:
    if not isinstance(value, list) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            for v in value):
        raise ProfileError(source, field, "expected a list of numbers")
    if any(b < a for a, b in zip(value, value[1:])):
        raise ProfileError(source, field, "expected non-decreasing quantiles")
    return value


def check_profile(profile, source: str, *, operators: set[str], types: set[str],
                  topology: dict) -> dict:
    """Check ``profile`` against the run that loads it; every problem is a
    :class:`ProfileError` naming ``source`` and the field.

    ``operators``: the locations of this run (``source:R1``, ``enrich``, ...); ``types``:
    its tuple types (stream names); ``topology``: its ``generator`` and ``nodes``.
    """
    if not isinstance(profile, dict):
        raise ProfileError(source, "(file)", "expected a JSON object")
    if profile.get("version") != VERSION:
        raise ProfileError(source, "version", f"expected {VERSION}, got "
                           f"{profile.get('version')!r}")
    kind = profile.get("kind")
    if kind not in ("predicted", "oracle"):
        raise ProfileError(source, "kind", f"expected 'predicted' or 'oracle', got {kind!r}")
    if profile.get("topology") != topology:
        raise ProfileError(source, "topology", f"built on {profile.get('topology')}, this "
                           f"run is on {topology}")
    if kind == "oracle":
        ids = profile.get("tuples")
        if not isinstance(ids, list) or not all(isinstance(t, str) for t in ids):
            raise ProfileError(source, "tuples", "expected a list of tuple ids")
        return profile
    records = profile.get("records")
    if not isinstance(records, list):
        raise ProfileError(source, "records", "expected a list")
    for i, r in enumerate(records):
        at = f"records[{i}]"
        if not isinstance(r, dict):
            raise ProfileError(source, at, "expected an object")
        for name in ("trigger", "need"):
            if r.get(name) not in operators:
                raise ProfileError(source, f"{at}.{name}", f"no operator {r.get(name)!r} in "
                                   f"this run (operators: {', '.join(sorted(operators))})")
        if r.get("type") not in types:
            raise ProfileError(source, f"{at}.type", f"no tuple type {r.get('type')!r} in "
                               f"this run (types: {', '.join(sorted(types))})")
        p = r.get("probability")
        if not isinstance(p, (int, float)) or isinstance(p, bool) or not 0 <= p <= 1:
            raise ProfileError(source, f"{at}.probability", f"expected a number in [0, 1], "
                               f"got {p!r}")
        for name in ("delay_quantiles", "fetch_quantiles"):
            _number_list(source, f"{at}.{name}", r.get(name))
        ranges = r.get("key_ranges")
        if not isinstance(ranges, list) or not all(
                isinstance(k, dict) and {"lo", "hi", "probability"} <= set(k) for k in ranges):
            raise ProfileError(source, f"{at}.key_ranges", "expected a list of "
                               "{lo, hi, probability} objects")
    return profile


def prefetch_wait(record: dict, confidence: float) -> float:
    """How long after the trigger to start the fetch so that it arrives before the need
    with probability ``confidence`` (0 when even an immediate fetch is late that often).

    The ``(1 - c)`` quantile of ``delay - latency`` over all pairs of the two stored
    distributions (taken as independent).
    """
    delay = np.asarray(record["delay_quantiles"], dtype=float)
    latency = np.asarray(record["fetch_quantiles"], dtype=float)
    if delay.size == 0 or latency.size == 0:
        return 0.0
    slack = (delay[:, None] - latency[None, :]).ravel()
    return max(0.0, float(np.quantile(slack, 1.0 - confidence)))


def record_probability(record: dict, key) -> float:
    """The lookup probability of a tuple with ``key`` at the record's trigger: that of
    the key range holding it, else the record's overall one."""
    if key is not None:
        for r in record["key_ranges"]:
            if r["lo"] <= key <= r["hi"]:
                return float(r["probability"])
    return float(record["probability"])
