"""What a backend hands back after a run: the raw tables, before any summary."""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

#: Columns of metrics.parquet (long form).
METRIC_COLUMNS = ("time", "node", "source", "metric", "value")
#: Columns every results table starts with.
RESULT_COLUMNS = ("group", "emitted_at", "node", "first_entered", "last_entered")


@dataclass
class RunOutput:
    """Ledger, metrics and results of one run, plus backend facts for ``meta.json``."""

    ledger: pd.DataFrame
    metrics: pd.DataFrame
    results: pd.DataFrame
    info: dict = field(default_factory=dict)
    #: ``{name: rows}`` of the run's trace tables (``NodeContext.trace``), written as
    #: ``trace_<name>.parquet``.
    traces: dict = field(default_factory=dict)
    #: The packets kept for a capture (``[run] capture``), written as ``capture``; None
    #: without one.
    capture: pd.DataFrame | None = None


def trace_frames(traces: dict) -> dict[str, pd.DataFrame]:
    """``{"trace_<name>": DataFrame}`` of trace rows, each sorted by time then node.

    >>> trace_frames({"lookups": [{"time": 2.0, "node": 1}, {"time": 1.0, "node": 3}]}
    ...              )["trace_lookups"]["node"].tolist()
    [3, 1]
    """
    return {f"trace_{name}": pd.DataFrame(rows).sort_values(["time", "node"], kind="stable")
            .reset_index(drop=True) for name, rows in sorted(traces.items()) if rows}


def metrics_frame(rows) -> pd.DataFrame:
    """Metric rows ``(time, node, source, metric, value)`` as a typed DataFrame.

    >>> metrics_frame([(0.0, 1, "testbed", "tuples", 3)]).dtypes["value"].name
    'float64'
    """
    df = pd.DataFrame(list(rows), columns=list(METRIC_COLUMNS))
    return df.astype({"time": "float64", "node": "int64", "source": "string",
                      "metric": "string", "value": "float64"})


def results_frame(rows: list[dict]) -> pd.DataFrame:
    """Result rows as a DataFrame with the common columns first, sorted by emission."""
    df = pd.DataFrame(rows)
    if df.empty:
        df = pd.DataFrame(columns=list(RESULT_COLUMNS))
    df = df.astype({"group": "string", "emitted_at": "float64", "node": "int64",
                    "first_entered": "float64", "last_entered": "float64"})
    extra = [c for c in df.columns if c not in RESULT_COLUMNS]
    df = df[list(RESULT_COLUMNS) + extra]
    return df.sort_values(["emitted_at", "node", "group"], kind="stable").reset_index(drop=True)
