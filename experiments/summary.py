"""The summary of a run: the figures every report starts from (docs/DESIGN.md).

>>> import pandas as pd
>>> led = pd.DataFrame({"cost": [2.0, 4.0], "size_bytes": [50, 50], "msg_id": [0, 0]})
>>> res = pd.DataFrame({"group": ["a", "a", "b"], "emitted_at": [2.0, 3.0, 4.0],
...                     "last_entered": [1.0, 1.0, 3.5]})
>>> s = common_summary(led, res, {"a", "c"}, pd.DataFrame(columns=["time", "metric", "value"]),
...                    duration=3.0, messages=1)
>>> s["comm_cost_per_time"], s["recall"], s["duplicates"], s["false_results"]
(2.0, 0.5, 1, 1)
"""
from __future__ import annotations

import numpy as np
import pandas as pd


def common_summary(ledger: pd.DataFrame, results: pd.DataFrame, expected: set,
                   metrics: pd.DataFrame, duration: float, messages: int) -> dict:
    """Cost, traffic, recall, duplicates, latency and memory figures of one run.

    Cost, hops and bytes are the algorithm's traffic: a routing protocol's control
    packets (ledger rows of ``kind = "routing"``) are counted apart
    (:func:`emulator.backends.network_summary`)."""
    if "kind" in ledger and (ledger["kind"] == "routing").any():
        ledger = ledger[ledger["kind"] != "routing"]
    groups = results["group"]
    distinct = set(groups)
    latency = (results["emitted_at"] - results["last_entered"]).to_numpy(dtype=float)
    total = float(ledger["cost"].sum())
    memory = metrics[(metrics["metric"] == "tuples")]
    if "source" in memory:
        memory = memory[memory["source"] == "testbed"]
    per_sample = memory.groupby("time")["value"].sum()

    def pct(q):
        return float(np.percentile(latency, q)) if latency.size else float("nan")

    return {
        "comm_cost_total": total,
        "comm_cost_per_time": total / duration,
        "messages": int(messages),
        "hops": int(len(ledger)),
        "bytes": int(ledger["size_bytes"].sum()),
        "results": int(len(distinct)),
        "result_rows": int(len(groups)),
        "expected_results": int(len(expected)),
        "recall": len(distinct & expected) / len(expected) if expected else 1.0,
        "precision": len(distinct & expected) / len(distinct) if distinct else 1.0,
        "false_results": int(len(distinct - expected)),
        "duplicates": int(len(groups) - len(distinct)),
        "latency_mean": float(latency.mean()) if latency.size else float("nan"),
        "latency_p50": pct(50),
        "latency_p95": pct(95),
        "latency_p99": pct(99),
        "memory_mean_tuples": float(per_sample.mean()) if len(per_sample) else 0.0,
        "memory_peak_sampled_tuples": float(per_sample.max()) if len(per_sample) else 0.0,
    }
