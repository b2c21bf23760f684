"""What a run's figures leave out under ``[run] warmup = W`` (docs/DESIGN.md, "Warm-up").

The protocols, the mobility and the sources run from t = 0 as always; the summary
measures the run over ``[W, end]``:

- a result group counts when **every member entered at or after W** (a result row's
  ``first_entered``; for the exact answer, each member tuple's ``entered_at``), so the
  exact answer and the results are cut by the same rule and recall compares like with
  like;
- ledger rows (hops, control packets) count when their ``time`` is at or after W, and
  cost per time divides by the measured span ``duration - W``;
- metric samples (memory) count when their ``time`` is at or after W;
- the network's delivery figures count the data messages sent at or after W
  (:mod:`emulator.measured`).

The run folder keeps every row (``ledger.parquet``, ``results.parquet``,
``metrics.parquet``); ``expected.parquet`` holds the measured exact answer. With W = 0
every function here returns its input as it is.

Example
-------
>>> import pandas as pd
>>> from spark_nodes.workload.tuples import StreamTuple
>>> t = {"R": [StreamTuple("R", 0, 1.0, 1, None, None, 0, 1.0, 1.0),
...            StreamTuple("R", 1, 3.0, 2, None, None, 0, 3.0, 3.0)],
...      "S": [StreamTuple("S", 0, 2.5, 1, None, None, 1, 2.5, 2.5),
...            StreamTuple("S", 1, 3.5, 2, None, None, 1, 3.5, 3.5)]}
>>> sorted(measured_groups({"R:0|S:0", "R:1|S:1"}, t, warmup=2.0))
['R:1|S:1']
>>> res = pd.DataFrame({"group": ["R:0|S:0", "R:1|S:1"], "first_entered": [1.0, 3.0]})
>>> after_warmup(res, "first_entered", 2.0)["group"].tolist()
['R:1|S:1']
"""
from __future__ import annotations

import pandas as pd


def measured_groups(groups, tuples_by_stream: dict, warmup: float) -> set:
    """The groups of ``groups`` (``"R:0|S:4"``) whose members all entered at or after
    ``warmup`` (``tuples_by_stream``: the run's tuples, with ``entered_at``)."""
    groups = set(groups)
    if warmup <= 0:
        return groups
    early = {f"{t.stream}:{t.seq}" for stream in tuples_by_stream.values() for t in stream
             if t.entered_at < warmup}
    return {g for g in groups if not early.intersection(g.split("|"))}


def after_warmup(frame: pd.DataFrame, column: str, warmup: float) -> pd.DataFrame:
    """The rows of ``frame`` whose ``column`` (a time) is at or after ``warmup``; the
    frame itself when there is no warm-up."""
    if warmup <= 0 or frame.empty:
        return frame
    return frame[frame[column] >= warmup]
