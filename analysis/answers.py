"""Swept axes that change the exact answer, and cost per result to compare along them.

Most axes of a sweep leave the exact answer (``expected_results``) alone: an option of an
algorithm changes what the answer costs, not what the query asks. Some axes do change
it — SMJ's period (blocks are joined per period), the number of streams, the window —
and then total cost along such an axis sets different answers against each other.
:func:`answer_changes` finds them: an axis changes the answer when two runs with the
same algorithm, seed and values of every other swept axis, but different values of this
axis, expect a different number of result groups. (Across seeds the answer differs
anyway: the input differs.) Cost per result group, ``comm_cost_per_result`` =
``comm_cost_total / results``, is then the figure to compare.

Every report section uses this module: :func:`analysis.report.write_report` adds the
column to the runs it hands to the family sections and puts :func:`flags_html` at the
top of the summary and of each family section.

Examples
--------
>>> runs = pd.DataFrame({"algorithm": ["smj-h"] * 3, "seed": [1] * 3,
...                      "params.smj-h.period": [0.5, 1.0, 2.0],
...                      "expected_results": [177, 158, 119], "results": [177, 158, 0],
...                      "comm_cost_total": [354.0, 316.0, 40.0]})
>>> [change] = answer_changes(runs)
>>> print(change.message)  # doctest: +NORMALIZE_WHITESPACE
axis params.smj-h.period changes the exact answer: expected_results 177 / 158 / 119 at
params.smj-h.period = 0.5 / 1 / 2 (smj-h, seed 1; it changes in 1 of 1 settings of
algorithm, seed and the other axes); compare cost per result
>>> with_cost_per_result(runs)[COST_PER_RESULT].tolist()
[2.0, 2.0, nan]
"""
from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from analysis.loading import swept_params
from analysis.plots import value_order

#: The derived metric beside ``comm_cost_total`` where an axis changes the answer.
COST_PER_RESULT = "comm_cost_per_result"
EXPECTED = "expected_results"
#: Held fixed besides the other swept axes: an answer is compared within one algorithm
#: (an algorithm may define its own exact answer) and one seed (one input).
HELD = ("algorithm", "seed")


def with_cost_per_result(runs: pd.DataFrame) -> pd.DataFrame:
    """``runs`` with ``comm_cost_per_result`` (``comm_cost_total / results``; NaN without
    results) right after ``comm_cost_total``; unchanged without those two columns."""
    if not {"comm_cost_total", "results"} <= set(runs.columns):
        return runs
    total = pd.to_numeric(runs["comm_cost_total"], errors="coerce")
    results = pd.to_numeric(runs["results"], errors="coerce")
    per = (total / results.where(results > 0)).astype(float)
    out = runs.drop(columns=[COST_PER_RESULT], errors="ignore")
    out.insert(out.columns.get_loc("comm_cost_total") + 1, COST_PER_RESULT, per.to_numpy())
    return out


def _text(value) -> str:
    if isinstance(value, (float, np.floating)):
        return f"{value:g}"
    return str(value)


@dataclass(frozen=True)
class AnswerChange:
    """A swept axis along which the exact answer changes, with one setting as example."""

    axis: str
    #: The axis' values in the example setting, in value order.
    values: tuple
    #: ``expected_results`` at those values.
    expected: tuple
    #: The example setting held fixed: algorithm, seed and other axes.
    setting: str
    #: In how many settings the answer changes along the axis ...
    changed: int
    #: ... of those with two or more of the axis' values.
    settings: int

    @property
    def message(self) -> str:
        """One sentence for the report."""
        return (f"axis {self.axis} changes the exact answer: expected_results "
                f"{' / '.join(map(_text, self.expected))} at {self.axis} = "
                f"{' / '.join(map(_text, self.values))} ({self.setting}; it changes in "
                f"{self.changed} of {self.settings} settings of algorithm, seed and the "
                "other axes); compare cost per result")


def _setting(keys: Sequence[str], values: tuple) -> str:
    parts = []
    for key, value in zip(keys, values):
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        parts.append(_text(value) if key == "algorithm" else
                     f"seed {_text(value)}" if key == "seed" else f"{key} = {_text(value)}")
    return ", ".join(parts)


def answer_changes(runs: pd.DataFrame, axes: Sequence[str] | None = None
                   ) -> list[AnswerChange]:
    """The axes among ``axes`` along which ``expected_results`` changes.

    Parameters
    ----------
    runs : DataFrame
        One row per run, as :func:`analysis.load` returns it.
    axes : list of str, optional
        Swept columns; default every parameter column that takes more than one value
        (:func:`analysis.loading.swept_params`).

    Returns
    -------
    list of AnswerChange
        In ``axes`` order; empty without an ``expected_results`` column. Rows where the
        axis is missing (another algorithm's parameter) are left out for that axis.
    """
    axes = swept_params(runs) if axes is None else list(axes)
    if EXPECTED not in runs.columns or not axes:
        return []
    changes = []
    for axis in axes:
        held = [c for c in HELD if c in runs.columns]
        keys = held + [a for a in axes if a != axis]
        # the example comes from the first algorithm and seed; axes may mix types, so
        # only the held columns are sorted on
        rows = runs[runs[axis].notna() & runs[EXPECTED].notna()]
        rows = rows.sort_values(held, kind="stable") if held else rows
        settings, changed, example = 0, 0, None
        groups = rows.groupby(keys, dropna=False, sort=False) if keys else [((), rows)]
        for key, group in groups:
            by_value = {}
            for value, expected in zip(group[axis], group[EXPECTED]):
                by_value.setdefault(value, expected)
            if len(by_value) < 2:
                continue
            settings += 1
            if len(set(by_value.values())) > 1:
                changed += 1
                if example is None:
                    ordered = sorted(by_value, key=value_order)
                    key = key if isinstance(key, tuple) else (key,)
                    example = (tuple(ordered), tuple(int(by_value[v]) for v in ordered),
                               _setting(keys, key))
        if example is not None:
            changes.append(AnswerChange(axis, *example, changed=changed, settings=settings))
    return changes


def flags_html(changes: Sequence[AnswerChange]) -> str:
    """The flags as an HTML fragment ("" without any)."""
    if not changes:
        return ""
    items = "".join(f"<li>{html.escape(c.message)}</li>" for c in changes)
    return (f'<div class="flag"><b>Different exact answers along a swept axis.</b> Total '
            f"cost along such an axis compares different answers; the tables and figures "
            f"show cost per result group ({COST_PER_RESULT} = comm_cost_total / results) "
            f"beside it.<ul>{items}</ul></div>")
