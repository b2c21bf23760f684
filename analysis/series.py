"""Derived metrics of one run: cost, memory, recall over time; latency; duplicates.

Time is binned into half-open windows ``[t_start, t_end)`` of equal width starting at
``start`` (0 by default). The bins always reach the last event, so no row is dropped:
an event exactly on the final edge falls in the last bin.

Definitions (documented choices):

- **cost per time** of a bin = sum of ledger ``cost`` over hops whose ``time`` falls in
  the bin, divided by the bin width. Every attempted hop counts, lost or not: the hop
  used the link.
- **latency** of a result = ``emitted_at - last_entered`` (from the moment its last
  member entered the system to its emission).
- **recall per period**: a result group counts in the period of its *first* emission
  (later emissions are duplicates) if it belongs to the expected answer; the period's
  ``recall`` is that count over the number of expected groups, so the periods add up to
  the run's recall and ``cumulative_recall`` climbs to it. ``expected.parquet`` carries
  no times, which is why expected groups are not binned themselves.
- **duplicates** = result rows beyond the first of each group.

Examples
--------
>>> results = pd.DataFrame({"group": ["R1:0|R2:0", "R1:0|R2:0", "R1:1|R2:1"],
...                         "emitted_at": [1.0, 2.0, 3.0], "last_entered": [0.5, 0.5, 2.0]})
>>> duplicates(results), latencies(results).tolist()
(1, [0.5, 1.5, 1.0])
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd


def _check_columns(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise KeyError(f"{what}: missing columns {missing}; found {list(frame.columns)}")


def bin_edges(width: float, end: float, start: float = 0.0) -> np.ndarray:
    """Edges of equal bins of ``width`` covering ``[start, end]`` (at least one bin).

    Examples
    --------
    >>> bin_edges(0.6, 3.0).tolist()
    [0.0, 0.6, 1.2, 1.8, 2.4, 3.0]
    >>> bin_edges(2.0, 3.0).tolist()
    [0.0, 2.0, 4.0]
    """
    if not width > 0 or math.isinf(width):
        raise ValueError(f"bin width must be a positive finite number, got {width}")
    if end < start:
        raise ValueError(f"bins end {end} before they start at {start}")
    # The tolerance keeps 3.0 / 0.6 = 5.000000000000001 at five bins, not six.
    count = max(1, int(math.ceil((end - start) / width - 1e-9)))
    # Rounding keeps edges printable (1.8, not 1.7999999999999998) and comparable.
    return np.round(start + width * np.arange(count + 1), 12)


def _bin_index(times: np.ndarray, edges: np.ndarray) -> np.ndarray:
    width = edges[1] - edges[0]
    if times.size and times.min() < edges[0]:
        raise ValueError(f"time {times.min()} is before the first bin at {edges[0]}")
    index = np.floor((times - edges[0]) / width).astype(int)
    return np.minimum(index, len(edges) - 2)


def _edges_for(times: np.ndarray, width: float, start: float, end: float | None) -> np.ndarray:
    last = float(times.max()) if times.size else start
    stop = last if end is None else max(end, last)
    return bin_edges(width, stop, start)


def cost_series(ledger: pd.DataFrame, bin: float, *, start: float = 0.0,
                end: float | None = None, by: str | None = None) -> pd.DataFrame:
    """Communication cost per time unit over consecutive time windows.

    Parameters
    ----------
    ledger : DataFrame
        Ledger rows (columns ``time, cost, size_bytes`` and ``by`` if given).
    bin : float
        Window width in time units.
    start, end : float
        Span to cover; ``end`` defaults to the last hop and is extended to it if needed.
    by : str, optional
        A ledger column (e.g. ``"kind"``) to split the series by.

    Returns
    -------
    DataFrame
        ``t_start, t_end, cost, cost_per_time, bytes, hops`` (and the ``by`` column
        first when given), one row per window (per value of ``by``), empty windows
        included with zeros.

    Examples
    --------
    >>> ledger = pd.DataFrame({"time": [0.1, 0.5, 1.2, 2.0], "cost": [1.0, 2.0, 4.0, 8.0],
    ...                        "size_bytes": [10, 10, 20, 20]})
    >>> cost_series(ledger, 1.0)[["t_start", "cost", "cost_per_time", "hops"]]
       t_start  cost  cost_per_time  hops
    0      0.0   3.0            3.0     2
    1      1.0  12.0           12.0     2
    """
    _check_columns(ledger, ["time", "cost", "size_bytes"] + ([by] if by else []),
                   "cost_series(ledger)")
    times = ledger["time"].to_numpy(dtype=float)
    edges = _edges_for(times, bin, start, end)
    index = _bin_index(times, edges)
    count = len(edges) - 1
    cost = ledger["cost"].to_numpy(dtype=float)
    size = ledger["size_bytes"].to_numpy(dtype=float)

    def frame(mask: np.ndarray) -> pd.DataFrame:
        total = np.bincount(index[mask], weights=cost[mask], minlength=count)
        return pd.DataFrame({
            "t_start": edges[:-1], "t_end": edges[1:], "cost": total,
            "cost_per_time": total / bin,
            "bytes": np.bincount(index[mask], weights=size[mask], minlength=count),
            "hops": np.bincount(index[mask], minlength=count)})

    if by is None:
        return frame(np.ones(len(times), dtype=bool))
    keys = ledger[by].to_numpy()
    parts = []
    for value in sorted(pd.unique(keys), key=str):
        part = frame(keys == value)
        part.insert(0, by, value)
        parts.append(part)
    columns = [by, "t_start", "t_end", "cost", "cost_per_time", "bytes", "hops"]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)


def memory_series(metrics: pd.DataFrame, metric: str = "tuples",
                  source: str = "testbed") -> pd.DataFrame:
    """Buffered state over time, one column per node plus ``total``.

    Nodes are sampled independently, so each node's last sample is carried forward to
    the times other nodes were sampled, and a node counts 0 before its first sample.

    Parameters
    ----------
    metrics : DataFrame
        ``metrics.parquet`` rows (``time, node, source, metric, value``).
    metric, source : str
        Which series: ``("tuples", "testbed")`` or ``("bytes", "testbed")`` for the
        testbed's memory samples; algorithms and runtimes add their own.

    Returns
    -------
    DataFrame
        Indexed by ``time``; columns are node ids and ``"total"``.

    Examples
    --------
    >>> metrics = pd.DataFrame({"time": [0.0, 0.0, 1.0, 2.0], "node": [1, 2, 1, 2],
    ...     "source": "testbed", "metric": "tuples", "value": [1.0, 2.0, 5.0, 0.0]})
    >>> memory_series(metrics)["total"].tolist()
    [3.0, 7.0, 5.0]
    """
    _check_columns(metrics, ["time", "node", "source", "metric", "value"],
                   "memory_series(metrics)")
    chosen = metrics[(metrics["metric"] == metric) & (metrics["source"] == source)]
    if chosen.empty:
        pairs = sorted(set(zip(metrics["source"].astype(str), metrics["metric"].astype(str))))
        raise ValueError(f"memory_series: no rows with metric={metric!r} and "
                         f"source={source!r}; (source, metric) pairs present: {pairs}")
    wide = (chosen.pivot_table(index="time", columns="node", values="value", aggfunc="last")
            .sort_index().ffill().fillna(0.0))
    wide.columns = list(wide.columns)
    wide["total"] = wide.sum(axis=1)
    wide.index.name = "time"
    return wide


def step_values(series: pd.Series, grid: np.ndarray) -> np.ndarray:
    """Value of a sampled step function at ``grid`` times (NaN before the first sample).

    Examples
    --------
    >>> s = pd.Series([1.0, 4.0], index=[0.5, 2.0])
    >>> step_values(s, np.array([0.0, 0.5, 1.0, 3.0])).tolist()
    [nan, 1.0, 1.0, 4.0]
    """
    times = series.index.to_numpy(dtype=float)
    values = series.to_numpy(dtype=float)
    position = np.searchsorted(times, grid, side="right") - 1
    out = np.full(len(grid), np.nan)
    valid = position >= 0
    out[valid] = values[position[valid]]
    return out


def latencies(results: pd.DataFrame) -> pd.Series:
    """Latency of each result row: ``emitted_at - last_entered`` (time units)."""
    _check_columns(results, ["emitted_at", "last_entered"], "latencies(results)")
    return (results["emitted_at"].astype(float)
            - results["last_entered"].astype(float)).rename("latency")


def latency_cdf(values: Sequence[float] | pd.Series) -> pd.DataFrame:
    """Empirical CDF: sorted ``latency`` and ``fraction`` of values at or below it.

    Examples
    --------
    >>> latency_cdf([3.0, 1.0, 2.0, 2.0])["fraction"].tolist()
    [0.25, 0.5, 0.75, 1.0]
    """
    ordered = np.sort(np.asarray(values, dtype=float))
    ordered = ordered[~np.isnan(ordered)]
    return pd.DataFrame({"latency": ordered,
                         "fraction": np.arange(1, ordered.size + 1) / max(ordered.size, 1)})


def latency_stats(results: pd.DataFrame) -> dict[str, float]:
    """Mean and 50/95/99th percentiles (linear interpolation) of result latency.

    Examples
    --------
    >>> r = pd.DataFrame({"emitted_at": [1.0, 2.0, 3.0, 4.0], "last_entered": 0.0})
    >>> latency_stats(r)
    {'latency_mean': 2.5, 'latency_p50': 2.5, 'latency_p95': 3.85, 'latency_p99': 3.97}
    """
    values = latencies(results).to_numpy(dtype=float)
    if values.size == 0:
        return {k: math.nan for k in ("latency_mean", "latency_p50", "latency_p95",
                                      "latency_p99")}
    p50, p95, p99 = np.percentile(values, [50, 95, 99])
    return {"latency_mean": float(values.mean()), "latency_p50": round(float(p50), 12),
            "latency_p95": round(float(p95), 12), "latency_p99": round(float(p99), 12)}


def duplicates(results: pd.DataFrame) -> int:
    """Result rows beyond the first of each group."""
    _check_columns(results, ["group"], "duplicates(results)")
    return int(len(results) - results["group"].nunique())


def recall_series(results: pd.DataFrame, expected: pd.DataFrame, period: float, *,
                  start: float = 0.0, end: float | None = None) -> pd.DataFrame:
    """Share of the expected answer first delivered in each period.

    Parameters
    ----------
    results, expected : DataFrame
        ``results.parquet`` (``group, emitted_at``) and ``expected.parquet`` (``group``).
    period : float
        Period length in time units.
    start, end : float
        Span to cover; ``end`` extends to the last emission if needed.

    Returns
    -------
    DataFrame
        ``t_start, t_end, found`` (expected groups first emitted in the period),
        ``spurious`` (groups first emitted in the period that are not expected),
        ``recall`` (``found / len(expected)``) and ``cumulative_recall``. Recall is NaN
        when nothing is expected.

    Examples
    --------
    >>> results = pd.DataFrame({"group": ["a", "b", "a", "x"],
    ...                         "emitted_at": [0.5, 1.5, 1.6, 1.7]})
    >>> expected = pd.DataFrame({"group": ["a", "b", "c", "d"]})
    >>> recall_series(results, expected, 1.0)[["found", "spurious", "recall",
    ...                                        "cumulative_recall"]]
       found  spurious  recall  cumulative_recall
    0      1         0    0.25               0.25
    1      1         1    0.25               0.50
    """
    _check_columns(results, ["group", "emitted_at"], "recall_series(results)")
    _check_columns(expected, ["group"], "recall_series(expected)")
    truth = set(expected["group"])
    first = results.sort_values("emitted_at", kind="stable").drop_duplicates("group")
    times = first["emitted_at"].to_numpy(dtype=float)
    edges = _edges_for(times, period, start, end)
    index = _bin_index(times, edges)
    hit = first["group"].isin(truth).to_numpy()
    count = len(edges) - 1
    found = np.bincount(index[hit], minlength=count)
    spurious = np.bincount(index[~hit], minlength=count)
    total = len(truth)
    with np.errstate(invalid="ignore", divide="ignore"):
        recall = found / total if total else np.full(count, np.nan)
    return pd.DataFrame({"t_start": edges[:-1], "t_end": edges[1:], "found": found,
                         "spurious": spurious, "recall": recall,
                         "cumulative_recall": np.cumsum(recall)})
