"""Measuring a QJoin-family run: recall per period ``P``, per interval ``L``, hindsight.

A result group's *ideal time* is when its later member arrived at the join node — when a
symmetric join with unbounded buffers would emit it. Periods and intervals assign
expected groups by ideal time, whatever the algorithm (a K-slack result emitted later
still counts for the period its tuples arrived in). Arrival times come from the join
node's ``arrival:<stream>`` metric rows (value = ``seq``).

The **hindsight bound** of a period is the smallest buffer model ``(dx + w) Vr +
(dy + w) Vs`` (the objective of Algorithm 1, rates of that period) whose allowances,
held fixed, would have given recall ``>= Q_user`` over the results the unbounded
symmetric join finds on the actual arrival sequence: a result survives allowance ``d``
on its earlier member's stream iff that member is above the horizon when the later one
arrives, i.e. ``d > T - w - u.ts`` (``T - u.ts`` with the literal purge rule).

The **hindsight-minimal buffers** (:func:`hindsight_memory`) are what the same symmetric
join holds when it runs each period with that period's hindsight allowances: its
buffered tuples, sampled at the times QJoin's memory was sampled. QJoin's
``memory_vs_hindsight`` is its own mean buffered tuples after the first period over
this replay's, over the same samples (both counted, not modelled: the model
``(d + w) V`` leaves out the tuples ahead of ``T`` and the late ones still buffered).

Examples
--------
>>> import pandas as pd
>>> m = pd.DataFrame({"time": [0.5, 1.5, 2.5], "node": 0, "source": "qjoin",
...                   "metric": ["arrival:R", "arrival:S", "arrival:S"], "value": [0, 0, 1]})
>>> arr = arrival_times(m)
>>> arr
{'R:0': 0.5, 'S:0': 1.5, 'S:1': 2.5}
>>> ideal_times(["R:0|S:0", "R:0|S:1", "R:0|S:9"], arr).tolist()
[1.5, 2.5, nan]
>>> t = period_recall({"R:0|S:0", "R:0|S:1"}, {"R:0|S:0"}, arr, period=2.0, duration=4.0)
>>> t[["start", "expected", "produced", "recall"]].values.tolist()
[[0.0, 1.0, 1.0, 1.0], [2.0, 1.0, 0.0, 0.0]]
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from spark_nodes.algorithms.qjoin.operator import horizons, join_arrivals

ARRIVAL_PREFIX = "arrival:"


def arrival_times(metrics: pd.DataFrame) -> dict[str, float]:
    """``{"stream:seq": first arrival time at the join node}``."""
    rows = metrics[metrics["metric"].astype(str).str.startswith(ARRIVAL_PREFIX)]
    rows = rows.sort_values("time", kind="stable")
    out: dict[str, float] = {}
    for metric, value, time in zip(rows["metric"], rows["value"], rows["time"]):
        out.setdefault(f"{metric[len(ARRIVAL_PREFIX):]}:{int(value)}", float(time))
    return out


def ideal_times(groups, arrivals: dict[str, float]) -> np.ndarray:
    """Arrival of each group's later member (NaN if a member never arrived)."""
    nan = math.nan
    out = []
    for g in groups:
        latest = -math.inf
        for m in g.split("|"):
            t = arrivals.get(m, nan)
            if not t <= latest:          # a later member, or NaN (never arrived)
                latest = t
                if t != t:
                    break
        out.append(latest)
    return np.asarray(out, dtype=float)


def join_latency(results: pd.DataFrame, arrivals: dict[str, float]) -> np.ndarray:
    """Per result row: ``emitted_at`` minus its later member's arrival at the join node
    (the time the join node itself added, network transit left out).

    >>> r = pd.DataFrame({"group": ["R:0|S:0"], "emitted_at": [2.0]})
    >>> join_latency(r, {"R:0": 0.5, "S:0": 1.5}).tolist()
    [0.5]
    """
    if results.empty:
        return np.empty(0)
    return results["emitted_at"].to_numpy(dtype=float) - ideal_times(results["group"],
                                                                       arrivals)


def _binned(expected, produced, arrivals, width: float, duration: float) -> pd.DataFrame:
    groups = sorted(expected)
    times = ideal_times(groups, arrivals)
    hit = np.array([g in produced for g in groups], dtype=bool)
    n = max(1, int(math.floor(duration / width + 1e-9)))
    ok = np.isfinite(times)
    idx = np.floor(times[ok] / width + 1e-9).astype(np.int64)
    inside = idx < n
    exp = np.bincount(idx[inside], minlength=n)
    got = np.bincount(idx[inside], weights=hit[ok][inside], minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        recall = np.where(exp > 0, got / np.maximum(exp, 1), np.nan)
    return pd.DataFrame({"start": np.arange(n) * width, "expected": exp.astype(float),
                         "produced": got, "recall": recall})


def period_recall(expected: set, produced: set, arrivals: dict, period: float,
                  duration: float) -> pd.DataFrame:
    """Recall of every whole period ``[kP, (k+1)P)`` of the run (one partial period when
    the run is shorter than ``P``)."""
    return _binned(expected, produced, arrivals, period, duration)


def target_met_fraction(table: pd.DataFrame, q_user: float) -> float:
    """Share of periods with expected results whose recall is ``>= q_user``.

    >>> target_met_fraction(pd.DataFrame({"recall": [0.9, 0.95, float("nan")]}), 0.92)
    0.5
    """
    r = table["recall"].dropna()
    return float((r >= q_user - 1e-12).mean()) if len(r) else float("nan")


def interval_quality(metrics: pd.DataFrame, expected: set, produced: set, arrivals: dict,
                     L: float, duration: float) -> pd.DataFrame:
    """Estimated (``q_estimate`` chosen at the interval's start) vs realised recall per L.

    Intervals whose buffers were the largest (``feasible = 0``) carry no estimate.
    """
    table = _binned(expected, produced, arrivals, L, duration)
    m = metrics[metrics["metric"].isin(["q_estimate", "feasible", "q_target"])]
    wide = m.pivot_table(index="time", columns="metric", values="value", aggfunc="last")
    slot = np.floor(wide.index.to_numpy(dtype=float) / L + 1e-9).astype(np.int64)
    est = pd.Series(np.nan, index=table.index)
    target = pd.Series(np.nan, index=table.index)
    for k, (_, row) in zip(slot, wide.iterrows()):
        if 0 <= k < len(table) and row.get("feasible", 0.0) > 0:
            est.iloc[k] = row["q_estimate"]
            target.iloc[k] = row["q_target"]
    table["q_estimate"] = est.to_numpy()
    table["q_target"] = target.to_numpy()
    return table


def arrival_sequence(tuples_by_stream: dict, arrivals: dict, streams: tuple[str, str]):
    """The join node's arrival sequence as arrays, in arrival order.

    Returns ``(side, ts, key, x, y, time)``; tuples that never arrived are left out.
    """
    rows = []
    for k, name in enumerate(streams):
        for t in tuples_by_stream.get(name, ()):
            a = arrivals.get(f"{t.stream}:{t.seq}")
            if a is not None:
                rows.append((a, k, t.seq, t.ts,
                             0 if t.key is None else t.key,
                             np.nan if t.x is None else t.x,
                             np.nan if t.y is None else t.y))
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    a = np.array(rows, dtype=float).reshape(-1, 7)
    return (a[:, 1].astype(np.int8), a[:, 3], a[:, 4].astype(np.int64), a[:, 5], a[:, 6],
            a[:, 0])


def hindsight(seq, w: float, predicate: str, theta, q_user: float, period: float, g: float,
              duration: float, purge: str = "window") -> pd.DataFrame:
    """Per period: the smallest fixed allowances meeting ``q_user`` and their buffer model.

    Parameters
    ----------
    seq : tuple
        :func:`arrival_sequence` output.

    Returns
    -------
    pandas.DataFrame
        ``start, results, dx, dy, tuples`` with ``tuples = (dx + w) Vr + (dy + w) Vs``.

    Examples
    --------
    The late R tuple (ts 0.2) arrives when T = 3: its partner S@0.1 survives only an S
    allowance above ``3 - 1 - 0.1 = 1.9``.

    >>> side = np.array([0, 1, 1, 0, 0], dtype=np.int8)
    >>> ts = np.array([0.0, 0.1, 3.0, 3.0, 0.2])
    >>> seq = (side, ts, np.zeros(5, dtype=np.int64), None, None,
    ...        np.array([0.0, 0.1, 0.2, 0.3, 0.4]))
    >>> h = hindsight(seq, 1.0, "equality", None, 1.0, 1.0, 0.5, 1.0)
    >>> h[["results", "dx", "dy"]].values.tolist()
    [[3.0, 0.0, 2.0]]
    >>> hindsight(seq, 1.0, "equality", None, 0.6, 1.0, 0.5, 1.0)["dy"].tolist()
    [0.0]
    """
    side, ts, key, x, y, time = seq
    later, earlier = join_arrivals(side, ts, w, predicate, key=key, x=x, y=y, theta=theta,
                                   allowance_r=math.inf, allowance_s=math.inf, purge=purge)
    # T at each arrival: the horizon with allowance 0, shifted back
    _, h0_r, _ = horizons(side, ts, w, 0.0, 0.0, purge)
    T = h0_r if purge == "literal" else h0_r + w
    need = T[later] - ts[earlier] - (0.0 if purge == "literal" else w)
    on_r = side[earlier] == 0
    n = max(1, int(math.floor(duration / period + 1e-9)))
    pidx = np.floor(time[later] / period + 1e-9).astype(np.int64)
    arr_p = np.floor(time / period + 1e-9).astype(np.int64)
    rows = []
    for p in range(n):
        sel = pidx == p
        v_r = np.count_nonzero((arr_p == p) & (side == 0)) / period
        v_s = np.count_nonzero((arr_p == p) & (side == 1)) / period
        total = int(sel.sum())
        if total == 0:
            rows.append((p * period, 0, 0.0, 0.0, w * (v_r + v_s)))
            continue
        nr, ns = np.sort(need[sel & on_r]), np.sort(need[sel & ~on_r])
        top = max(nr.max(initial=0.0), ns.max(initial=0.0))
        grid = np.arange(int(math.ceil(max(top, 0.0) / g)) + 2) * g
        # survivors with allowance d: need < d (strict: at the horizon a tuple is purged)
        kr = np.searchsorted(nr, grid, side="left")
        ks = np.searchsorted(ns, grid, side="left")
        ok = kr[:, None] + ks[None, :] >= q_user * total - 1e-9
        cost = np.where(ok, (grid[:, None] + w) * v_r + (grid[None, :] + w) * v_s, np.inf)
        i, j = np.unravel_index(int(np.argmin(cost)), cost.shape)
        rows.append((p * period, total, float(grid[i]), float(grid[j]), float(cost[i, j])))
    return pd.DataFrame(rows, columns=["start", "results", "dx", "dy", "tuples"])


def hindsight_memory(seq, table: pd.DataFrame, w: float, period: float, sample_times,
                     purge: str = "window") -> np.ndarray:
    """Buffered tuples of the symmetric join replayed with the hindsight allowances.

    Every arrival of period ``k`` runs with the allowances ``(dx, dy)`` of row ``k`` of
    ``table`` (:func:`hindsight`); the count at a sample time is that after the last
    arrival at or before it. A tuple is buffered while its timestamp is above its
    stream's horizon (horizons never move back, so a tuple once purged stays purged).

    Examples
    --------
    Two R tuples then two S tuples; the first S makes ``T = 1``, which purges R@0 (at
    or below ``T - w``); the second leaves ``T`` at R's largest timestamp:

    >>> side = np.array([0, 0, 1, 1], dtype=np.int8)
    >>> ts = np.array([0.0, 1.0, 1.5, 3.0])
    >>> seq = (side, ts, None, None, None, np.array([0.0, 1.0, 2.0, 3.0]))
    >>> table = pd.DataFrame({"dx": [0.0], "dy": [0.0]})
    >>> hindsight_memory(seq, table, 1.0, 10.0, [0.5, 1.5, 2.5, 3.5]).tolist()
    [1.0, 2.0, 2.0, 3.0]
    """
    side, ts, _, _, _, time = seq
    sample_times = np.asarray(sample_times, dtype=float)
    if ts.size == 0:
        return np.zeros(sample_times.size)
    pidx = np.minimum(np.floor(time / period + 1e-9).astype(np.int64), len(table) - 1)
    _, h_r, h_s = horizons(side, ts, w, table["dx"].to_numpy(dtype=float)[pidx],
                           table["dy"].to_numpy(dtype=float)[pidx], purge)
    last = np.searchsorted(time, sample_times, side="right") - 1
    out = np.zeros(sample_times.size)
    for k, h in ((0, h_r), (1, h_s)):
        own = side == k
        ts_k = ts[own]
        upto = np.cumsum(own)                       # arrivals of side k up to each index
        for n, i in enumerate(last):
            if i >= 0:
                out[n] += np.count_nonzero(ts_k[:upto[i]] > h[i])
    return out
