"""The oracle's schedule: every prefetch timed, in hindsight, to arrive just before use.

The oracle is a bound, not an algorithm a node could run. It learns from a traced
*hindsight run* of the same seed in which every source prefetches every tuple's row at
the tuple's birth (the :data:`EVERY` profile): that run measures, for each tuple, its
need time ``T`` at the enrichment node, its birth ``b`` at its source and the latency
``L`` of its own prefetch on the real path (source -> table -> enrichment node). The
oracle's run then prefetches, for each tuple it keeps, ``wait = max(0, T - b - L -
lead)`` after its birth, so the row arrives ``lead`` before use (never earlier than a
fetch at birth could). Its own traced trial runs then check it: while its tuples wait
longer in all than in hindsight, those that waited longer are fetched at birth; if that
does not bring the total down to the hindsight run's, the oracle is the hindsight run's
fetch-all-at-birth (:func:`build_oracle`). Hindsight timing is exact only up to what the
schedule itself changes: fewer prefetches leave the data a less loaded network, so it
arrives sooner than it did in hindsight.

"Exactly the rows that will be used": a tuple is dropped from the schedule when the row
an earlier kept tuple of the same key brings will still be cached, fresh and current
when it is needed (it arrives ``lead`` before that tuple's need, expires ``cache_ttl``
after arriving, and the row did not change in between); with a bounded cache every
tuple is kept, since another row may have evicted it.

Example
-------
>>> import pandas as pd
>>> seen = pd.DataFrame({"time": [0.0, 0.5, 4.0], "location": "source:R1",
...                      "tuple_id": ["R1:0", "R1:1", "R1:2"], "key": [3, 3, 3]})
>>> needs = pd.DataFrame({"tuple_id": ["R1:0", "R1:1", "R1:2"], "need_time": [1.0, 1.6, 5.0]})
>>> fetches = pd.DataFrame({"time": [0.4, 0.9, 4.5], "key": [3, 3, 3],
...                         "latency": [0.4, 0.4, 0.5], "prefetch": True})
>>> s = oracle_schedule(seen, needs, fetches, ttl=2.0, lead=0.1)
>>> s["tuples"], {t: round(w, 3) for t, w in s["waits"].items()}
(['R1:0', 'R1:2'], {'R1:0': 0.5, 'R1:2': 0.4})
"""
from __future__ import annotations

import math

import pandas as pd

from spark_nodes.algorithms.enrich.profile import VERSION

#: Trial runs of a schedule before the oracle falls back to fetching all at birth.
ROUNDS = 4
#: The hindsight run's profile: prefetch for every tuple at its birth (fits any run).
EVERY = {"version": VERSION, "kind": "oracle", "tuples": "every"}


def _prefetch_latency(seen: pd.DataFrame, fetches: pd.DataFrame) -> dict:
    """``{tuple_id: latency}`` of each tuple's own prefetch: the one of its key that
    left when the tuple was born (a source sends it at once in the hindsight run)."""
    pre = fetches[fetches["prefetch"].astype(bool)]
    sent = {(int(k), round(t - lat, 9)): lat
            for k, t, lat in zip(pre["key"], pre["time"], pre["latency"])}
    return {tid: sent[(int(k), round(b, 9))]
            for tid, k, b in zip(seen["tuple_id"], seen["key"], seen["time"])
            if (int(k), round(b, 9)) in sent}


def oracle_schedule(seen: pd.DataFrame, needs: pd.DataFrame, fetches: pd.DataFrame, *,
                    ttl: float, lead: float, rows=None, dedupe: bool = True) -> dict:
    """``{"tuples": [kept ids], "waits": {id: wait}}`` from a hindsight run's traces
    (see the module docstring): ``seen`` the tuples at their sources (``time,
    tuple_id, key``), ``needs`` each tuple's ``need_time``, ``fetches`` the arrivals
    (``time, key, latency, prefetch``); ``rows`` a :class:`~.table.RowClock` (None:
    rows never change); ``dedupe`` False keeps every tuple."""
    seen = seen[seen["location"].str.startswith("source:")]
    birth = dict(zip(seen["tuple_id"], seen["time"]))
    key = dict(zip(seen["tuple_id"], seen["key"]))
    latency = _prefetch_latency(seen, fetches)
    need = dict(zip(needs["tuple_id"], needs["need_time"]))
    kept, waits = [], {}
    arrived: dict = {}                            # key -> planned arrival of its last kept
    for tid in sorted(need, key=lambda t: (need[t], t)):
        if tid not in birth:
            continue
        k, t_need = key[tid], need[tid]
        last = arrived.get(k)
        if dedupe and last is not None and last <= t_need - lead and \
                t_need + lead < last + ttl and (
                rows is None or rows.version(k, last) == rows.version(k, t_need)):
            continue                              # the row kept for an earlier need serves
        lat = latency.get(tid, math.nan)
        wait = max(0.0, t_need - birth[tid] - lat - lead) if math.isfinite(lat) else 0.0
        kept.append(tid)
        waits[tid] = wait
        arrived[k] = birth[tid] + wait + (lat if math.isfinite(lat) else 0.0)
    return {"tuples": sorted(kept), "waits": waits}


def refine(schedule: dict, trial: pd.DataFrame, bound: pd.DataFrame) -> tuple[dict, int]:
    """``(schedule, late)``: ``schedule`` with every tuple that stalled longer in a
    traced ``trial`` run of it than in the hindsight run (``bound``; both
    ``trace_lookups``) fetched at birth instead, and how many there were.

    Timing in hindsight is exact only up to what the schedule itself changes (jitter
    drawn in another order, a later fetch meeting another route), so the oracle's run
    is checked against the bound and corrected until no tuple waits longer.

    >>> s = {"tuples": ["R1:0"], "waits": {"R1:0": 0.5}}
    >>> trial = pd.DataFrame({"tuple_id": ["R1:0", "R1:1"], "stall": [0.2, 0.1]})
    >>> bound = pd.DataFrame({"tuple_id": ["R1:0", "R1:1"], "stall": [0.0, 0.1]})
    >>> refine(s, trial, bound)
    ({'tuples': ['R1:0'], 'waits': {'R1:0': 0.0}}, 1)
    """
    best = dict(zip(bound["tuple_id"], bound["stall"]))
    late = sorted(t for t, stall in zip(trial["tuple_id"], trial["stall"])
                  if stall > best.get(t, 0.0) + 1e-9)
    waits = {**schedule["waits"], **{t: 0.0 for t in late}}
    return {"tuples": sorted(set(schedule["tuples"]) | set(late)), "waits": waits}, len(late)


def oracle_profile(schedule: dict, run) -> dict:
    """The oracle profile of ``schedule``, learnt from the hindsight ``run``."""
    return {"version": VERSION, "kind": "oracle", "topology": None, **schedule,
            "built_from": {"run_id": run.path.name, "seed": run.spec["run"]["seed"]}}


def build_oracle(run_first, hindsight: dict, trial_of, *, ttl: float, lead: float,
                 rows=None, dedupe: bool = True, rounds: int = ROUNDS) -> dict:
    """The oracle profile of a spec: run the traced ``hindsight`` spec (the
    :data:`EVERY` profile), schedule from it (:func:`oracle_schedule`), then run
    ``trial_of(profile)`` (the spec with that profile, traced) and :func:`refine` until
    the tuples wait no longer in all than in hindsight, at most ``rounds`` times; if
    they still do, every tuple is fetched at birth (:data:`EVERY`, the hindsight run
    itself). So the oracle never stalls more than fetching every row at birth, which
    no mode that triggers at the sources can start earlier."""
    first = run_first(hindsight)
    bound = first.table("trace_lookups")
    schedule = oracle_schedule(first.table("trace_tuples"), bound,
                               first.table("trace_fetches"), ttl=ttl, lead=lead, rows=rows,
                               dedupe=dedupe)
    best, least = EVERY, float(bound["stall"].sum())
    for _ in range(rounds):
        profile = oracle_profile(schedule, first)
        trial = run_first(trial_of(profile)).table("trace_lookups")
        if trial["stall"].sum() <= least:
            return profile
        schedule, late = refine(schedule, trial, bound)
        if not late:
            break
    return best
