"""The report's comparison of a sweep's algorithms (or named variants), paired by seed
along every swept axis.

The model is seaborn's ``relplot`` and OMNeT++'s scave: the section takes the runs
frame and the swept axes and knows nothing of the experiment that made them. The
*contenders* are the algorithms, or the named variants when one algorithm runs them
all; one is the *baseline* (:data:`BASELINES`, else the first by name). A contender's
run is paired with the baseline's run of the same seed at the same value of every
swept axis along which the baseline varies (an axis it does not vary along — one
algorithm's own parameter, or a setting the baseline ignores so that the sweep ran it
once — is not a pairing key: the baseline's run stands for every value of it), and
the paired difference ``contender − baseline`` is averaged with its 95 % Student-t
interval.

For each headline metric present (:data:`HEADLINE`) the section writes a table holding
every swept axis at each of its values (``tables/compare_<metric>.csv``) and, per axis,
a figure with a row per metric whose points pool every seed and every value of the
other axes (marginalised; the caption names them).

Examples
--------
>>> runs = pd.DataFrame({"algorithm": ["a", "a", "b", "b"], "seed": [1, 2, 1, 2],
...                      "speed": [1, 1, 1, 1], "recall": [0.9, 0.7, 0.5, 0.6]})
>>> p = pairs(runs, "algorithm", "b", ["speed"], "recall")
>>> p[["algorithm", "seed", "value", "base", "diff"]].round(2).values.tolist()
[['a', 1, 0.9, 0.5, 0.4], ['a', 2, 0.7, 0.6, 0.1]]
"""
from __future__ import annotations

import html
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from analysis import plots
from analysis.axes import axis_values, sort_by_axes
from analysis.stats import fmt_ci, mean_ci

#: The headline metrics, in table order: summary key -> what the text calls it.
HEADLINE = {
    "comm_cost_per_time": "communication cost",
    "recall": "recall",
    "latency_mean": "latency",
    "memory_mean_tuples": "memory",
    "delivery_ratio": "delivery ratio",
    "energy_total_j": "energy",
    "first_node_death": "first death",
}

#: Algorithms that are the baseline when present, first match wins: the papers'
#: reference algorithms, then the exact centralized join.
BASELINES = ("lottery", "mp-k-slack", "k-slack", "centralized", "no-buffer", "naive",
             "single-host")


def contenders(runs: pd.DataFrame) -> str | None:
    """The column whose values are compared: ``algorithm`` when more than one runs,
    else ``variant`` when named variants differ, else None (nothing to compare)."""
    if runs["algorithm"].nunique() > 1:
        return "algorithm"
    if "variant" in runs.columns and runs["variant"].nunique() > 1:
        return "variant"
    return None


def baseline(names) -> str:
    """The baseline among ``names``: the first of :data:`BASELINES` present, else the
    first by name.

    >>> baseline(["smj-h", "lottery"]), baseline(["b-variant", "a-variant"])
    ('lottery', 'a-variant')
    """
    names = set(names)
    return next((b for b in BASELINES if b in names), min(names, key=str))


def metric_values(runs: pd.DataFrame, metric: str) -> pd.Series:
    """``runs[metric]`` as floats, an infinite value (no node died) as missing."""
    values = pd.to_numeric(runs[metric], errors="coerce").astype(float)
    return values.where(np.isfinite(values))


def pairs(runs: pd.DataFrame, by: str, base: str, axes: list[str],
          metric: str) -> pd.DataFrame:
    """Every contender run paired with the baseline's run of its seed and axis values.

    Returns
    -------
    DataFrame
        Columns ``by``, ``seed``, the ``axes`` (the contender's value, or the
        baseline's where the contender has none), ``value``, ``base`` and
        ``diff = value - base``; pairs with a missing value are left out.
    """
    frame = runs.assign(_value=metric_values(runs, metric))
    mine = frame[frame[by] != base]
    theirs = frame[frame[by] == base]
    out = []
    for name, rows in mine.groupby(by, sort=True):
        # an axis along which the baseline does not vary (one algorithm's own parameter,
        # a setting the baseline ignores, so that the sweep ran it once) does not pair:
        # the baseline's run stands for every value of it
        keys = ["seed"] + [a for a in axes
                           if rows[a].notna().any() and theirs[a].nunique(dropna=True) > 1]
        rest = [a for a in axes if a not in keys]
        merged = rows[[by, *keys, *rest, "_value"]].merge(
            theirs[[*keys, *rest, "_value"]], on=keys, suffixes=("", "_base"))
        for a in rest:
            merged[a] = merged[a].where(merged[a].notna(), merged[f"{a}_base"])
        merged = merged.rename(columns={"_value": "value", "_value_base": "base"})
        out.append(merged[[by, "seed", *axes, "value", "base"]])
    if not out:
        return pd.DataFrame(columns=[by, "seed", *axes, "value", "base", "diff"])
    result = pd.concat(out, ignore_index=True).dropna(subset=["value", "base"])
    return result.assign(diff=result["value"] - result["base"]).reset_index(drop=True)


def held_table(runs: pd.DataFrame, by: str, base: str, axes: list[str],
               metric: str) -> pd.DataFrame:
    """Per contender and value of every axis: mean and 95 % CI of ``metric`` over seeds,
    and of the paired difference against ``base`` (NaN for the baseline itself).

    Columns: the ``axes``, ``by``, ``n``, ``mean``, ``ci95``, ``diff_mean``,
    ``diff_ci95``, ``pairs``; rows in value order of the axes.
    """
    values = runs.assign(_value=metric_values(runs, metric))
    pair = pairs(runs, by, base, axes, metric)
    rows = []
    for key, group in values.groupby([*axes, by], dropna=False, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        record = dict(zip([*axes, by], key))
        mean, ci, n = mean_ci(group["_value"])
        mask = pair[by] == record[by]
        for a in axes:
            mask &= (pair[a] == record[a]) | (pair[a].isna() & pd.isna(record[a]))
        d_mean, d_ci, d_n = mean_ci(pair.loc[mask, "diff"])
        rows.append({**record, "n": n, "mean": mean, "ci95": ci, "diff_mean": d_mean,
                     "diff_ci95": d_ci, "pairs": d_n})
    table = pd.DataFrame(rows, columns=[*axes, by, "n", "mean", "ci95", "diff_mean",
                                        "diff_ci95", "pairs"])
    return sort_by_axes(table, [*axes, by]).reset_index(drop=True)


def marginal(runs: pd.DataFrame, by: str, base: str, axes: list[str], axis: str,
             metric: str) -> pd.DataFrame:
    """Per contender and value of ``axis``, the other axes marginalised: mean and CI of
    ``metric`` over every run there, and of the paired difference over every pair.

    Columns: ``axis``, ``by``, ``mean``, ``ci95``, ``diff_mean``, ``diff_ci95``,
    ``pairs``.
    """
    values = runs.assign(_value=metric_values(runs, metric))
    pair = pairs(runs, by, base, axes, metric)
    rows = []
    for (value, name), group in values.groupby([axis, by], sort=False):
        mean, ci, _ = mean_ci(group["_value"])
        diff = pair.loc[(pair[axis] == value) & (pair[by] == name), "diff"]
        d_mean, d_ci, d_n = mean_ci(diff)
        rows.append({axis: value, by: name, "mean": mean, "ci95": ci, "diff_mean": d_mean,
                     "diff_ci95": d_ci, "pairs": d_n})
    table = pd.DataFrame(rows, columns=[axis, by, "mean", "ci95", "diff_mean", "diff_ci95",
                                        "pairs"])
    return sort_by_axes(table, [axis, by]).reset_index(drop=True)


def _positions(values: list) -> tuple[dict, list | None]:
    """x position of each axis value: the number itself, or its rank for text."""
    try:
        return {v: float(v) for v in values}, None
    except (TypeError, ValueError):
        return {v: float(i) for i, v in enumerate(values)}, [str(v) for v in values]


def figure(lines: dict[str, pd.DataFrame], by: str, base: str, axis: str) -> Figure:
    """Along ``axis``, one row per metric (``lines``: metric -> :func:`marginal`'s
    table): the metric per contender, and the paired difference of each contender
    against ``base``; bars are 95 % CIs."""
    values = axis_values(pd.concat(lines.values()), axis)
    where, labels = _positions(values)
    names = sorted({str(n) for t in lines.values() for n in t[by].unique()})
    styles = plots.algorithm_styles(names)
    with matplotlib.rc_context(plots.STYLE):
        fig = Figure(figsize=(2 * plots.FIGSIZE[0], 0.8 * plots.FIGSIZE[1] * len(lines)),
                     layout="constrained")
        grid = fig.subplots(len(lines), 2, squeeze=False, sharex=True)
        for (left, right), (metric, table) in zip(grid, lines.items()):
            for name, rows in table.groupby(by, sort=True):
                style = styles[str(name)]
                x = rows[axis].map(where).to_numpy(dtype=float)
                left.errorbar(x, rows["mean"], yerr=rows["ci95"].fillna(0), label=str(name),
                              capsize=3, **style)
                if name != base:
                    right.errorbar(x, rows["diff_mean"], yerr=rows["diff_ci95"].fillna(0),
                                   label=f"{name} − {base}", capsize=3, **style)
            right.axhline(0.0, color="grey", linewidth=0.8)
            left.set_ylabel(plots.metric_label(metric), fontsize="small")
            right.set_ylabel(f"− {base}", fontsize="small")
        for ax in grid[-1]:
            ax.set_xlabel(plots.param_label(axis))
            if labels is not None:
                ax.set_xticks(range(len(labels)), labels, rotation=20)
        # one legend per column, outside the panels (placing it "best" is slow)
        for ax in grid[0]:
            ax.legend(fontsize="small", loc="lower left", bbox_to_anchor=(0.0, 1.02),
                      ncols=3, frameon=False)
    return fig


def _table_html(table: pd.DataFrame, by: str, base: str, axes: list[str]) -> str:
    shown = pd.DataFrame({**{a: table[a] for a in axes}, by: table[by],
                          "seeds": table["n"],
                          "mean ± 95 % CI": [fmt_ci(m, c) for m, c in
                                             zip(table["mean"], table["ci95"])],
                          f"− {base}, paired ± 95 % CI": [
                              "baseline" if name == base else fmt_ci(m, c)
                              for name, m, c in zip(table[by], table["diff_mean"],
                                                    table["diff_ci95"])],
                          "pairs": ["–" if name == base else int(n)
                                    for name, n in zip(table[by], table["pairs"])]})
    return shown.to_html(index=False, escape=True, na_rep="–", border=0)


def section(runs: pd.DataFrame, axes: list[str], figures: Path, tables: Path,
            out: Path) -> str:
    """The comparison's HTML fragment; tables and figures go to ``tables``/``figures``
    (``out`` is the report folder the links are relative to). One line says why when
    there is nothing to compare or no headline metric."""
    by = contenders(runs)
    if by is None:
        return ('<p class="note">Comparison skipped: one algorithm and no named variants '
                'in these runs, so nothing to compare.</p>')
    axes = [a for a in axes if a != by]
    metrics = [m for m in HEADLINE if m in runs.columns and metric_values(runs, m).notna().any()]
    if not metrics:
        return '<p class="note">Comparison skipped: no headline metric in these runs.</p>'
    base = baseline(runs[by].dropna().unique())
    names = ", ".join(map(str, sorted(runs[by].dropna().unique(), key=str)))
    held = (", ".join(f"<code>{html.escape(a)}</code>" for a in axes) if axes else "none")
    parts = [f"<p>{html.escape(by)}s compared: {html.escape(names)}; baseline "
             f"<b>{html.escape(str(base))}</b>. Each run is paired with the baseline's run of "
             f"the same seed at the same value of every swept axis the baseline varies along "
             f"(axes: {held}); "
             f"differences are <i>contender − baseline</i>, mean ± half-width of the 95 % "
             f"Student-t interval over the pairs. Tables hold every axis at each of its "
             f"values; figures marginalise the other axes, as their captions say.</p>"]
    skipped = [HEADLINE[m] for m in HEADLINE if m not in metrics]
    if skipped:
        parts.append(f'<p class="note">Not in these runs: {html.escape(", ".join(skipped))}.'
                     '</p>')
    for metric in metrics:
        table = held_table(runs, by, base, axes, metric)
        csv = tables / f"compare_{metric}.csv"
        table.to_csv(csv, index=False)
        parts.append(f"<h3>{html.escape(HEADLINE[metric])} "
                     f"(<code>{html.escape(metric)}</code>)</h3>"
                     + _table_html(table, by, base, axes)
                     + f'<p class="note">All digits: <a href="{csv.relative_to(out).as_posix()}">'
                       f'{csv.relative_to(out).as_posix()}</a>.</p>')
    for axis in [a for a in axes if runs[a].nunique(dropna=True) > 1]:
        others = [a for a in axes if a != axis]
        lines = {m: marginal(runs, by, base, axes, axis, m) for m in metrics}
        png = plots.save(figure(lines, by, base, axis), figures,
                         f"compare_vs_{axis}".replace(".", "_"))
        how = (f"marginalised over {', '.join(others)} (each point pools every seed and "
               f"every value of them)" if others else "mean over seeds")
        caption = (f"Headline metrics vs {axis}, {how}; right: paired difference against "
                   f"{base}; bars: 95 % CI")
        rel = png.relative_to(out).as_posix()
        parts.append(f'<figure><img src="{html.escape(rel)}" alt="{html.escape(caption)}">'
                     f'<figcaption>{html.escape(caption)}</figcaption></figure>')
    return "\n".join(parts)
