"""The swept axes a report compares along, and their values in value order.

A sweep's runs table names each swept spec path as a column (:mod:`analysis.loading`);
a list-valued one (a speed range ``[0.01, 0.02]``) also has the number
``<path>_mean`` beside it (:func:`experiments.sweep.with_range_means`). The report's
axes are the named variants (``variant``, when they differ) and the swept paths, with
a list-valued path replaced by its number wherever that number tells its values apart.

Examples
--------
>>> runs = pd.DataFrame({"algorithm": ["a"] * 3,
...                      "mobility.speed": ["[0.1, 0.2]", "[0.01, 0.02]", "[0.1, 0.2]"],
...                      "mobility.speed_mean": [0.15, 0.015, 0.15]})
>>> report_axes(runs)
['mobility.speed_mean']
>>> axis_values(runs, "mobility.speed")
['[0.01, 0.02]', '[0.1, 0.2]']
"""
from __future__ import annotations

import pandas as pd

from analysis.loading import swept_params
from analysis.plots import value_order
from experiments.sweep import RANGE_MEAN


def report_axes(runs: pd.DataFrame) -> list[str]:
    """``variant`` (when named variants differ) and the swept spec paths of ``runs``,
    each list-valued path given once: as its ``<path>_mean`` when each mean stands for
    one list, else as the list's text (two ranges with one mean stay apart)."""
    swept = swept_params(runs)
    axes = ["variant"] if "variant" in runs.columns and runs["variant"].nunique() > 1 else []
    for path in swept:
        twin = f"{path}{RANGE_MEAN}"
        if twin in swept:
            one_to_one = runs.groupby(twin, dropna=True)[path].nunique().max() <= 1
            axes.append(twin if one_to_one else path)
        elif path.endswith(RANGE_MEAN) and path.removesuffix(RANGE_MEAN) in swept:
            continue        # decided with its list above
        else:
            axes.append(path)
    return axes


def axis_values(runs: pd.DataFrame, axis: str) -> list:
    """The distinct values of ``axis`` in ``runs``, by value (numbers, also numeric
    text, numerically; then text), never by name."""
    return sorted(runs[axis].dropna().unique(), key=value_order)


def sort_by_axes(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """``frame`` sorted on ``columns`` by value (:func:`analysis.plots.value_order`).

    >>> sort_by_axes(pd.DataFrame({"w": ["10", "2", "none"]}), ["w"])["w"].tolist()
    ['2', '10', 'none']
    """
    if not columns or frame.empty:
        return frame
    return frame.sort_values(list(columns), key=lambda s: s.map(value_order),
                             kind="stable")
