"""Summary keys of a triggered run: what fired its windows.

>>> import pandas as pd
>>> m = pd.DataFrame({"metric": ["window_fired:rate", "window_fired:time",
...                              "window_fired:rate"], "value": [1.0, 1.0, 1.0]})
>>> out = windows_fired(m, None)
>>> out["trigger"], out["windows_fired"], out["windows_fired_by_rate"]
('clock', 3, 2)
"""
from __future__ import annotations

import pandas as pd

from spark_nodes.algorithms.triggers.conditions import KINDS


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
