"""Summary keys of a triggered run: what fired its windows, and the work a gate let
through (``evaluations``) or skipped.

>>> import pandas as pd
>>> m = pd.DataFrame({"metric": ["window_fired:rate", "window_fired:time",
...                              "window_fired:rate"], "value": [1.0, 1.0, 1.0]})
>>> out = windows_fired(m, None)
>>> out["trigger"], out["windows_fired"], out["windows_fired_by_rate"]
('clock', 3, 2)
"""
from __future__ import annotations

import math

import pandas as pd

from spark_nodes.algorithms.triggers.conditions import KINDS
from spark_nodes.algorithms.triggers.gate import EVALUATION_KEYS


def windows_fired(metrics: pd.DataFrame, trigger) -> dict:
    """``trigger`` (the variant in force), ``windows_fired`` and ``windows_fired_by_<kind>``
    for every kind of :data:`~spark_nodes.algorithms.triggers.conditions.KINDS`, from the
    ``window_fired:<kind>`` metric rows (a fixed clock fires ``time`` windows)."""
    rows = metrics[metrics["metric"].str.startswith("window_fired:")] if len(metrics) \
        else metrics
    by = rows.groupby("metric")["value"].sum() if len(rows) else pd.Series(dtype=float)
    out = {"trigger": "clock" if trigger is None or trigger.clock else trigger.variant,
           "windows_fired": int(by.sum())}
    for kind in KINDS:
        out[f"windows_fired_by_{kind}"] = int(by.get(f"window_fired:{kind}", 0))
    return out


def evaluations(metrics: pd.DataFrame) -> dict:
    """``evaluations``, ``evaluations_skipped`` (ints, 0 when not recorded) and
    ``gate_closed_time`` (NaN: no gate), summed over the nodes that recorded them.

    >>> m = pd.DataFrame({"metric": ["evaluations", "evaluations_skipped",
    ...                              "gate_closed_time"], "value": [40.0, 5.0, 2.5]})
    >>> evaluations(m)
    {'evaluations': 40, 'evaluations_skipped': 5, 'gate_closed_time': 2.5}
    >>> evaluations(m[m["metric"] == "evaluations"])["gate_closed_time"]
    nan
    """
    rows = metrics[metrics["metric"].isin(EVALUATION_KEYS)] if len(metrics) else metrics
    by = rows.groupby("metric")["value"].sum() if len(rows) else pd.Series(dtype=float)
    return {"evaluations": int(by.get("evaluations", 0)),
            "evaluations_skipped": int(by.get("evaluations_skipped", 0)),
            "gate_closed_time": float(by.get("gate_closed_time", math.nan))}
