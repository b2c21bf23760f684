"""Summary keys every algorithm that uses lookups reports (enrichment, SMJ plans, CTR
routes): what the programs recorded, turned into stall and prefetch figures.

Metrics a program records (source = the algorithm's name): ``need`` (one per item
needed), ``stall`` (the wait of each need that was served), ``lookup`` (an on-demand
request), ``lookup_retry`` (a request sent again after its timeout), ``prefetch`` (a
request sent ahead of need), ``prefetch_arrived``, ``prefetch_used`` (a prefetched item
that served a need), ``served_by_prefetch`` (a need served by a prefetched item: at once
from the cache, or on its arrival while the need waited) and ``cache_eviction`` (an
item pushed out of a full cache).

Examples
--------
>>> import pandas as pd
>>> m = pd.DataFrame({"metric": ["need", "stall", "need", "stall", "lookup"],
...                   "value": [1, 0.0, 1, 0.5, 1]})
>>> s = lookup_summary(m)
>>> s["needs"], s["lookups"], s["stall_time_total"], s["prefetches"]
(2.0, 1.0, 0.5, 0.0)
>>> led = pd.DataFrame({"msg_id": [4, 4, 5], "kind": "prefetch", "size_bytes": [40, 40, 72],
...                     "cost": [1.0, 2.0, 3.0]})
>>> ledger_prefetch(led)
(112.0, 6.0, 2)
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd


def metric_total(mine: pd.DataFrame, metric: str) -> float:
    """Sum of ``metric`` in a metrics frame (0 when absent)."""
    return float(mine.loc[mine["metric"] == metric, "value"].sum()) if len(mine) else 0.0


def lookup_summary(mine: pd.DataFrame) -> dict:
    """``needs, lookups, lookup_retries, stall_time_total/mean/p95, prefetches,
    prefetch_precision`` (used ÷ arrived), ``prefetch_recall`` (needs served by a
    prefetched item ÷ needs) and ``cache_evictions`` from one algorithm's metric rows."""
    stalls = mine.loc[mine["metric"] == "stall", "value"].to_numpy() if len(mine) \
        else np.array([])
    needs = metric_total(mine, "need")
    arrived = metric_total(mine, "prefetch_arrived")
    return {
        "needs": needs,
        "lookups": metric_total(mine, "lookup"),
        "lookup_retries": metric_total(mine, "lookup_retry"),
        "stall_time_total": float(stalls.sum()),
        "stall_time_mean": float(stalls.mean()) if stalls.size else 0.0,
        "stall_time_p95": float(np.quantile(stalls, 0.95)) if stalls.size else 0.0,
        "prefetches": metric_total(mine, "prefetch"),
        "prefetch_precision": metric_total(mine, "prefetch_used") / arrived if arrived
        else math.nan,
        "prefetch_recall": metric_total(mine, "served_by_prefetch") / needs if needs
        else math.nan,
        "cache_evictions": metric_total(mine, "cache_eviction"),
    }


def ledger_prefetch(ledger: pd.DataFrame) -> tuple[float, float, int]:
    """``(bytes, cost, messages)`` of the ``prefetch`` messages in a ledger: each
    message's bytes once (its first hop's row), its cost over every hop."""
    if not len(ledger):
        return 0.0, 0.0, 0
    pre = ledger[ledger["kind"] == "prefetch"]
    first = pre.drop_duplicates("msg_id")
    return float(first["size_bytes"].sum()), float(pre["cost"].sum()), int(len(first))


def ledger_lookup_summary(mine: pd.DataFrame, ledger: pd.DataFrame) -> dict:
    """:func:`lookup_summary` plus ``prefetch_bytes``, ``prefetch_cost``, ``lookup_cost``
    and ``wasted_bytes`` taken from the ledger, for items of varying size (SMJ plans,
    CTR routes): each prefetched item that arrived and served no need is charged the
    mean bytes of a prefetch (request and reply) — the same count as precision's."""
    out = lookup_summary(mine)
    nbytes, cost, _ = ledger_prefetch(ledger)
    prefetches = out["prefetches"]
    unused = metric_total(mine, "prefetch_arrived") - metric_total(mine, "prefetch_used")
    out["prefetch_bytes"] = nbytes
    out["prefetch_cost"] = cost
    out["lookup_cost"] = float(ledger.loc[ledger["kind"] == "lookup", "cost"].sum()) \
        if len(ledger) else 0.0
    out["wasted_bytes"] = unused * nbytes / prefetches if prefetches else 0.0
    return out


def fetch_summary(plan, run, switch: str, modes: tuple[str, str], what: str) -> dict:
    """The summary keys of an operator with a fetch switch (:mod:`.fetcher`): the
    switch, ``<what>_fetch`` and ``<what>_ttl`` (empty and NaN when nothing is
    fetched) and
    :func:`ledger_lookup_summary` of the run's own metrics."""
    m = run.metrics
    mine = m[m["source"] == plan.algorithm] if len(m) else m
    p = plan.params
    fetching = p[switch] == modes[1]
    return {switch: p[switch],
            f"{what}_fetch": p[f"{what}_fetch"] if fetching else "",
            f"{what}_ttl": float(p[f"{what}_ttl"]) if fetching else math.nan,
            **ledger_lookup_summary(mine, run.ledger)}
