"""Lookup profiles: built offline from a traced run, loaded and checked by a later run.

A traced run writes ``trace_tuples`` (a tuple seen at an operator: ``time, node,
location, tuple_id, type, key, parents``), ``trace_lookups`` (a tuple that needed an
item, written when it was served: ``time, location, tuple_id, type, source, key, stall,
served, need_time``) and
``trace_fetches`` (an item that arrived: ``time, key, latency, prefetch, hops, queued``:
``hops`` of the request's whole trip when it left, ``queued`` its time at the table).

:func:`build_profile` follows the source (docs/ALGORITHMS.md#profiles, Fig. 12): group the lookups
that went remote by (operator, tuple type, data source); walk back to every earlier
location where the same tuple or one of its ancestors was seen (the candidate trigger
locations); for each, write a record with the number of tuples of that type seen there,
the number that later needed the lookup (their ratio is the probability), the key ranges
where the probability is clearly higher or lower (and, given the length of a ``day``, the
times of day: the source's external state variable), and the distributions of the delay from the
trigger to the need and of the fetch latency (as quantiles), the latter also split into
a latency per hop and the time at the table, so that a prefetch can be timed on its own
path (source -> table -> need), which the training run's round trips do not travel. An
*oracle* profile instead lists exact tuples (and, built by :mod:`.oracle`, when to fetch
for each): perfect foresight, for comparison.

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
...                         "latency": [0.4, 0.2], "prefetch": False, "hops": 4,
...                         "queued": 0.0})
>>> p = build_profile(seen, needs, fetches, topology={"generator": "line", "nodes": 5})
>>> r = p["records"][0]
>>> r["trigger"], r["tuples"], r["lookups"], r["probability"], r["key_ranges"]
('source:R1', 4, 2, 0.5, [{'lo': 1, 'hi': 1, 'tuples': 2, 'probability': 0.0}, {'lo': 9, 'hi': 9, 'tuples': 2, 'probability': 1.0}])
>>> round(prefetch_wait(r, 0.9), 3)          # delays 0.8 and 1.0, latencies 0.2 .. 0.4
0.48
>>> round(prefetch_wait(r, 0.9, hops=6), 3)  # six hops at 0.05 .. 0.1 each: start sooner
0.305
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
#: A key range is "clearly higher" (lower) when its probability is at least this times
#: (at most one over this times) the record's and it holds at least MIN_RANGE_TUPLES
#: tuples.
CLEARLY = 1.5
MIN_RANGE_TUPLES = 2


class ProfileError(ValueError):
    """A profile file that cannot be used: names the file and the field."""

    def __init__(self, source: str, field: str, expected: str):
        super().__init__(f"{source}: {field}: {expected}")
        self.source, self.field, self.expected = source, field, expected

    def __reduce__(self):
        return (type(self), (self.source, self.field, self.expected))


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
    """Contiguous key ranges whose lookup probability clearly differs from
    ``probability``: above it (at least :data:`CLEARLY` times) or below it (at most
    1 / :data:`CLEARLY` times), the source's embodiment of values "significantly
    different, greater or less" — frequent keys that stay cached are as telling as
    rare ones that always miss.

    ``keys``: the keys of the tuples seen at the trigger; ``needed``: whether each later
    needed the lookup. Keys are cut into ``bins`` equal-width bins; adjacent bins on the
    same side merge into one range.

    >>> keys = pd.Series([0, 0, 1, 1, 5, 5, 9, 9])
    >>> needed = pd.Series([False, False, False, True, True, True, True, True])
    >>> [(r["lo"], r["hi"], r["probability"]) for r in key_ranges(keys, needed, 0.625)]
    [(0, 0, 0.0), (5, 5, 1.0), (9, 9, 1.0)]
    """
    if keys.empty or keys.isna().all():
        return []
    lo, hi = int(keys.min()), int(keys.max())
    width = max(1, math.ceil((hi - lo + 1) / bins))
    which = (keys.astype(int) - lo) // width
    return _clear_bins(which, needed, probability,
                       lambda b: (lo + b * width, min(hi, lo + (b + 1) * width - 1)), step=1)


def time_ranges(times: pd.Series, needed: pd.Series, probability: float, day: float,
                bins: int = 10) -> list[dict]:
    """Ranges of the time of day (``time % day``, the source's external state variable)
    whose lookup probability clearly differs from ``probability``, as
    :func:`key_ranges` finds them, over ``bins`` equal parts of the day.

    >>> times = pd.Series([0.5, 1.5, 5.5, 6.5, 10.5, 11.5, 15.5, 16.5])
    >>> needed = times % 10 < 2                 # lookups early in the day only
    >>> [(r["lo"], r["hi"], r["probability"]) for r in time_ranges(times, needed, 0.5, 10.0)]
    [(0.0, 2.0, 1.0), (5.0, 7.0, 0.0)]
    """
    width = day / bins
    which = ((times.astype(float) % day) // width).astype(int)
    return _clear_bins(which, needed, probability, lambda b: (b * width, (b + 1) * width),
                       step=0)


def _clear_bins(which: pd.Series, needed: pd.Series, probability: float, bounds,
                step: float) -> list[dict]:
    """Merged ranges of the bins (``which``: each tuple's) whose probability clearly
    differs from ``probability``; ``bounds(b)`` is bin ``b``'s ``(lo, hi)``, and two
    ranges touch when one's ``hi + step`` is the other's ``lo``."""
    stats = pd.DataFrame({"bin": which, "need": needed.astype(int)}).groupby("bin")["need"]
    count, hits = stats.size(), stats.sum()
    ranges: list[dict] = []
    for b in sorted(count.index):
        p = hits[b] / count[b]
        higher = p >= CLEARLY * probability and p > probability
        lower = p <= probability / CLEARLY and p < probability
        if count[b] >= MIN_RANGE_TUPLES and (higher or lower):
            start, end = bounds(b)
            if ranges and ranges[-1]["hi"] + step == start and \
                    (ranges[-1]["probability"] > probability) == higher:
                r = ranges[-1]
                n, h = r["tuples"] + int(count[b]), r["probability"] * r["tuples"] + hits[b]
                r.update(hi=end, tuples=n, probability=float(h / n))
            else:
                ranges.append({"lo": start, "hi": end, "tuples": int(count[b]),
                               "probability": float(p)})
    return ranges


def build_profile(tuples: pd.DataFrame, lookups: pd.DataFrame, fetches: pd.DataFrame, *,
                  topology: dict, oracle: bool = False, day: float | None = None) -> dict:
    """The profile of a traced run (see the module docstring); ``topology`` is what the
    run was on (``generator`` and ``nodes``), checked when the profile is loaded;
    ``day``: the length of a day, to condition on the time of day (none: not)."""
    needs = lookups[lookups["served"] == "demand"] if len(lookups) else lookups
    if oracle:
        return {"version": VERSION, "kind": "oracle", "topology": topology,
                "tuples": sorted(set(needs["tuple_id"])) if len(needs) else []}
    parents = _ancestors(tuples) if len(tuples) else {}
    demand = fetches[~fetches["prefetch"].astype(bool)] if len(fetches) else fetches
    latency = demand["latency"] if len(demand) else pd.Series(dtype=float)
    per_hop, queued = _path_parts(demand)
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
                "time_ranges": [] if day is None else time_ranges(seen["time"], needed, p, day),
                "delay_quantiles": _quantiles(delay), "fetch_quantiles": _quantiles(latency),
                "hop_quantiles": _quantiles(per_hop), "queue_quantiles": _quantiles(queued)})
    return {"version": VERSION, "kind": "predicted", "topology": topology, "day": day,
            "records": records}


def _path_parts(demand: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """``(latency per hop, time at the table)`` of the on-demand fetches whose hops are
    known (traces written before hops were traced have none: both empty)."""
    if not len(demand) or "hops" not in demand or "queued" not in demand:
        return pd.Series(dtype=float), pd.Series(dtype=float)
    known = demand[demand["hops"] > 0]
    queued = known["queued"].astype(float)
    return (known["latency"] - queued) / known["hops"], queued


#: Columns of the trace tables (an empty one is built with them).
TRACE_COLUMNS = {
    "trace_tuples": ["time", "node", "location", "tuple_id", "type", "key", "parents"],
    "trace_lookups": ["time", "node", "location", "tuple_id", "type", "source", "key",
                      "stall", "served", "need_time"],
    "trace_fetches": ["time", "node", "key", "latency", "prefetch", "hops", "queued"],
}


def profile_from_run(run, oracle: bool = False, day: float | None = None) -> dict:
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
                            oracle=oracle, day=day)
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
    # an oracle built in hindsight from this very spec (topology none) fits by making
    if profile.get("topology") != topology and not (kind == "oracle" and
                                                    profile.get("topology") is None):
        raise ProfileError(source, "topology", f"built on {profile.get('topology')}, this "
                           f"run is on {topology}")
    if kind == "oracle":
        return _check_oracle(profile, source)
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
        for name in ("hop_quantiles", "queue_quantiles"):   # absent from older profiles
            if name in r:
                _number_list(source, f"{at}.{name}", r[name])
        times = r.get("time_ranges", [])
        if not isinstance(times, list) or not all(
                isinstance(k, dict) and {"lo", "hi", "probability"} <= set(k) for k in times):
            raise ProfileError(source, f"{at}.time_ranges", "expected a list of "
                               "{lo, hi, probability} objects")
        ranges = r.get("key_ranges")
        if not isinstance(ranges, list) or not all(
                isinstance(k, dict) and {"lo", "hi", "probability"} <= set(k) for k in ranges):
            raise ProfileError(source, f"{at}.key_ranges", "expected a list of "
                               "{lo, hi, probability} objects")
    return profile


def _check_oracle(profile: dict, source: str) -> dict:
    """An oracle profile: ``tuples`` a list of ids (or ``"every"``), ``waits`` (if
    any) a table of non-negative waits."""
    ids = profile.get("tuples")
    if ids != "every" and (not isinstance(ids, list) or
                           not all(isinstance(t, str) for t in ids)):
        raise ProfileError(source, "tuples", "expected a list of tuple ids")
    waits = profile.get("waits", {})
    if not isinstance(waits, dict) or not all(
            isinstance(w, (int, float)) and not isinstance(w, bool) and w >= 0
            for w in waits.values()):
        raise ProfileError(source, "waits", "expected a table of waits >= 0")
    return profile


def prefetch_wait(record: dict, confidence: float, hops: int | None = None) -> float:
    """How long after the trigger to start the fetch so that it arrives before the need
    with probability ``confidence`` (0 when even an immediate fetch is late that often).

    The ``(1 - c)`` quantile of ``delay - latency`` over all pairs of the stored
    distributions (taken as independent). The latency is that of the prefetch's own
    path of ``hops`` (trigger -> table -> need): ``hops`` x the latency per hop plus the
    time at the table; without ``hops`` (or a record without the split), the training
    run's on-demand round trips stand in.
    """
    delay = np.asarray(record["delay_quantiles"], dtype=float)
    latency = np.asarray(record["fetch_quantiles"], dtype=float)
    per_hop = np.asarray(record.get("hop_quantiles", []), dtype=float)
    queued = np.asarray(record.get("queue_quantiles", []), dtype=float)
    if hops is not None and per_hop.size and queued.size:
        latency = (hops * per_hop[:, None] + queued[None, :]).ravel()
    if delay.size == 0 or latency.size == 0:
        return 0.0
    slack = (delay[:, None] - latency[None, :]).ravel()
    return max(0.0, float(np.quantile(slack, 1.0 - confidence)))


def record_probability(record: dict, key, now: float | None = None,
                       day: float | None = None) -> float:
    """The lookup probability of a tuple with ``key`` seen at ``now`` at the record's
    trigger: that of the key range holding it, else that of the time-of-day range
    holding ``now % day``, else the record's overall one.

    >>> r = {"probability": 0.4, "key_ranges": [{"lo": 5, "hi": 9, "probability": 1.0}],
    ...      "time_ranges": [{"lo": 0.0, "hi": 2.0, "probability": 0.9}]}
    >>> [record_probability(r, 7), record_probability(r, 1, 21.5, 10.0),
    ...  record_probability(r, 1, 25.0, 10.0), record_probability(r, 1, 21.5)]
    [1.0, 0.9, 0.4, 0.4]
    """
    if key is not None:
        for r in record["key_ranges"]:
            if r["lo"] <= key <= r["hi"]:
                return float(r["probability"])
    if now is not None and day is not None:
        tod = now % day
        for r in record.get("time_ranges", []):
            if r["lo"] <= tod < r["hi"]:
                return float(r["probability"])
    return float(record["probability"])
