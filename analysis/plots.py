"""Figures for papers: metric vs parameter, quantities over time, latency CDF.

Every function returns a :class:`matplotlib.figure.Figure` built without pyplot (no
global state, no GUI backend); :func:`save` writes it as a 150 dpi PNG and a PDF.
Colors and markers are fixed per algorithm name so a given algorithm looks the same in
every figure and every report.

Examples
--------
>>> algorithm_styles(["smj-h", "my-join"])["smj-h"]["color"]
'#d62728'
"""
from __future__ import annotations

import itertools
from pathlib import Path
from typing import Mapping, Sequence

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

DPI = 150
FIGSIZE = (5.0, 3.2)  # inches: one column of a two-column paper at readable scale

STYLE = {
    "font.size": 9, "axes.titlesize": 9, "axes.labelsize": 9, "legend.fontsize": 8,
    "xtick.labelsize": 8, "ytick.labelsize": 8, "axes.spines.top": False,
    "axes.spines.right": False, "axes.grid": True, "grid.alpha": 0.3,
    "grid.linewidth": 0.5, "lines.linewidth": 1.4, "lines.markersize": 4.5,
    "legend.frameon": False, "pdf.fonttype": 42,
}

# Fixed per algorithm so colors agree across figures and reports; families get
# contrasting hues because they are compared with each other.
ALGORITHM_COLORS = {
    "centralized": "#000000",
    "smj-e": "#1f77b4", "smj-h": "#d62728", "lottery": "#2ca02c", "naive": "#7f7f7f",
    "qjoin": "#9467bd", "k-slack": "#ff7f0e", "mp-k-slack": "#8c564b",
    "no-buffer": "#bcbd22", "spark-join": "#17becf",
    "atr": "#e377c2", "ctr": "#1f4e79", "single-host": "#a6761d",
}
SPARE_COLORS = ["#66a61e", "#e7298a", "#7570b3", "#d95f02", "#1b9e77", "#666666"]
_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "*"]
_LINESTYLES = ["-", "--", ":", "-."]

TIME_LABEL = "time [time units]"

# metric -> (axis label, unit)
METRIC_LABELS: dict[str, tuple[str, str]] = {
    "comm_cost_per_time": ("communication cost per time", "data units·link cost / time unit"),
    "comm_cost_total": ("total communication cost", "data units·link cost"),
    "comm_cost_per_result": ("communication cost per result",
                             "data units·link cost / result group"),
    "messages": ("messages", "count"),
    "bytes": ("bytes on the wire", "B"),
    "results": ("result groups", "count"),
    "expected_results": ("expected result groups", "count"),
    "recall": ("recall", "fraction"),
    "duplicates": ("duplicate results", "count"),
    "latency_mean": ("mean latency", "time units"),
    "latency_p50": ("median latency", "time units"),
    "latency_p95": ("95th percentile latency", "time units"),
    "latency_p99": ("99th percentile latency", "time units"),
    "memory_mean_tuples": ("mean buffered tuples", "tuples"),
    "memory_peak_tuples": ("peak buffered tuples", "tuples"),
    "wall_seconds": ("wall-clock time", "s"),
    "precision": ("precision", "fraction"),
    "false_results": ("false result groups", "count"),
    "hops": ("message hops", "count"),
    "lost_messages": ("lost messages", "count"),
    "memory_peak_bytes": ("peak buffered bytes", "B"),
    "delivery_ratio": ("delivery ratio", "fraction"),
    "energy_total_j": ("energy, all nodes", "J"),
    "first_node_death": ("first node death", "time units"),
}

# Swept spec path -> (axis label, unit); other paths are shown as they are.
PARAM_LABELS: dict[str, tuple[str, str]] = {
    "streams.count": ("number of streams", ""),
    "streams.rate": ("stream rate", "tuples / time unit"),
    "streams.key_domain": ("key domain size", "keys"),
    "streams.disorder_mean": ("mean disorder delay", "time units"),
    "query.window": ("window length", "time units"),
    "query.theta": ("distance threshold", "distance units"),
    "topology.nodes": ("network size", "nodes"),
    "topology.radius": ("radio range", "unit-square widths"),
    "topology.loss": ("loss probability per hop", ""),
    "topology.delay": ("link delay", "time units"),
    "topology.bandwidth": ("link bandwidth", "B / time unit"),
    "run.duration": ("run length", "time units"),
    # the mean of each swept speed range (experiments.sweep.with_range_means)
    "mobility.speed_mean": ("mean node speed", "unit-square widths / time unit"),
}


def metric_label(metric: str) -> str:
    """Axis label with unit for a summary metric; unknown metrics keep their name.

    Long labels put the unit on a second line so they fit beside a figure.

    >>> metric_label("recall"), metric_label("K_mean")
    ('recall [fraction]', 'K_mean')
    >>> print(metric_label("comm_cost_per_time"))
    communication cost per time
    [data units·link cost / time unit]
    """
    if metric in METRIC_LABELS:
        name, unit = METRIC_LABELS[metric]
        return with_unit(name, unit)
    return metric


def param_label(path: str) -> str:
    """Axis label for a swept spec path: a name with unit, followed by the path.

    >>> param_label("query.window"), param_label("streams.count")
    ('window length [time units] (query.window)', 'number of streams (streams.count)')
    >>> param_label("params.qjoin.L")
    'params.qjoin.L'
    """
    if path in PARAM_LABELS:
        name, unit = PARAM_LABELS[path]
        return f"{name} [{unit}] ({path})" if unit else f"{name} ({path})"
    return path


def with_unit(name: str, unit: str, width: int = 32) -> str:
    """``name [unit]``, on two lines when longer than ``width`` characters.

    >>> with_unit("latency", "time units")
    'latency [time units]'
    """
    label = f"{name} [{unit}]"
    return label if len(label) <= width else f"{name}\n[{unit}]"


def algorithm_styles(names: Sequence[str]) -> dict[str, dict[str, str]]:
    """Color and marker per algorithm: fixed for known names, then spare colors by name.

    Parameters
    ----------
    names : sequence of str

    Returns
    -------
    dict
        ``{name: {"color": ..., "marker": ...}}``.
    """
    known = list(ALGORITHM_COLORS)
    spare = itertools.cycle(SPARE_COLORS)
    styles = {}
    unknown = sorted(n for n in set(names) if n not in ALGORITHM_COLORS)
    for name in sorted(set(names), key=lambda n: (n not in ALGORITHM_COLORS, n)):
        if name in ALGORITHM_COLORS:
            color, rank = ALGORITHM_COLORS[name], known.index(name)
        else:
            color, rank = next(spare), len(known) + unknown.index(name)
        styles[name] = {"color": color, "marker": _MARKERS[rank % len(_MARKERS)]}
    return styles


def _figure(nrows: int = 1, ncols: int = 1, size: tuple[float, float] = FIGSIZE,
            **kwargs) -> tuple[Figure, np.ndarray]:
    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=size, layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=False, **kwargs)
    return fig, axes


def save(fig: Figure, out_dir: Path, stem: str) -> Path:
    """Write ``stem.png`` (150 dpi) and ``stem.pdf`` into ``out_dir``; return the PNG."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    png = out_dir / f"{stem}.png"
    with matplotlib.rc_context(STYLE):
        fig.savefig(png, dpi=DPI)
        # the constrained layout is solved: the PDF keeps it (its axes stay where the
        # PNG's are) instead of solving it again
        engine = fig.get_layout_engine()
        fig.set_layout_engine("none")
        fig.savefig(out_dir / f"{stem}.pdf")
        fig.set_layout_engine(engine)
    return png


def _style_axes(ax, xlabel: str, ylabel: str, title: str | None) -> None:
    with matplotlib.rc_context(STYLE):
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if title:
            ax.set_title(title)


def _legend(ax, **kwargs) -> None:
    handles, _ = ax.get_legend_handles_labels()
    if handles:
        with matplotlib.rc_context(STYLE):
            ax.legend(**kwargs)


def value_order(value) -> tuple:
    """Sort key for parameter values: numbers (also numeric strings) first, numerically.

    Sweeps store mixed-type columns as strings, so ``"10"`` must still follow ``"2"``.

    >>> sorted(["10", "none", "2", 3.5], key=value_order)
    ['2', 3.5, '10', 'none']
    """
    if isinstance(value, bool):
        return (1, 0.0, str(value))
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(value))


def _is_numeric(values: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(values)) and not pd.api.types.is_bool_dtype(values)


def metric_vs_param(agg: pd.DataFrame, param: str, metric: str, *,
                    ci: str = "ci95", title: str | None = None) -> Figure:
    """Mean of ``metric`` against ``param``, one line per algorithm, CI error bars.

    Parameters
    ----------
    agg : DataFrame
        Output of :func:`analysis.stats.aggregate` grouped by ``algorithm``, ``param``
        and possibly other parameters; those give separate lines (line style).
    param, metric : str
        x column and metric name.
    ci : str
        CI half-width column.

    Returns
    -------
    Figure
    """
    return metrics_vs_param(agg, param, [metric], ci=ci, title=title)


def metrics_vs_param(agg: pd.DataFrame, param: str, metrics: Sequence[str], *,
                     ci: str = "ci95", title: str | None = None) -> Figure:
    """One panel per metric, side by side, each drawn as :func:`metric_vs_param` draws
    its one (the legend in the first panel)."""
    fig, axes = _figure(1, len(metrics), size=(FIGSIZE[0] * len(metrics), FIGSIZE[1]))
    for k, (ax, metric) in enumerate(zip(axes[0], metrics)):
        _draw_vs_param(ax, agg, param, metric, ci)
        _style_axes(ax, param_label(param), metric_label(metric), title)
        if k == 0:
            _legend(ax)
    return fig


def _draw_vs_param(ax, agg: pd.DataFrame, param: str, metric: str, ci: str) -> None:
    rows = agg[agg["metric"] == metric]
    if rows.empty:
        raise ValueError(f"metric_vs_param: no aggregate rows for metric {metric!r}")
    others = [c for c in rows.columns
              if c not in {"algorithm", param, "metric", "n", "mean", "std", ci}
              and rows[c].nunique(dropna=True) > 1]
    numeric = _is_numeric(rows[param].dropna())
    categories = sorted(rows[param].dropna().unique(), key=value_order) if not numeric else []
    styles = algorithm_styles(rows["algorithm"].unique())
    combos = rows[others].drop_duplicates().sort_values(
        others, key=lambda s: s.map(value_order)).itertuples(index=False) if others else [()]
    line_of = {tuple(c): _LINESTYLES[i % len(_LINESTYLES)] for i, c in enumerate(combos)}
    algorithms = sorted(rows["algorithm"].unique(), key=lambda a: list(styles).index(a))
    width = 0.8 / max(len(algorithms), 1)
    for a, algorithm in enumerate(algorithms):
        mine = rows[(rows["algorithm"] == algorithm) & rows[param].notna()]
        groups = mine.groupby(others, dropna=False, sort=True) if others else [((), mine)]
        for key, line in groups:
            key = key if isinstance(key, tuple) else (key,)
            line = line.sort_values(param, key=None if numeric else lambda s: s.map(value_order))
            if numeric:
                x = line[param].to_numpy(dtype=float)
            else:
                # Side by side within a category so error bars do not overlap.
                offset = (a - (len(algorithms) - 1) / 2) * width
                x = np.array([categories.index(v) for v in line[param]]) + offset
            label = algorithm + ("" if not others else
                                 " (" + ", ".join(f"{o}={v}" for o, v in zip(others, key)) + ")")
            style = styles[algorithm]
            with matplotlib.rc_context(STYLE):
                ax.errorbar(x, line["mean"].to_numpy(dtype=float),
                            yerr=np.nan_to_num(line[ci].to_numpy(dtype=float)),
                            color=style["color"], marker=style["marker"], capsize=3,
                            linestyle=line_of.get(tuple(key), "-") if numeric else "none",
                            label=label)
    if not numeric:
        ax.set_xticks(range(len(categories)), [str(c) for c in categories])
    else:
        values = np.sort(rows[param].dropna().unique().astype(float))
        # Few swept values: tick exactly those (no 2.5 streams between 2 and 3).
        if len(values) <= 12:
            ax.set_xticks(values, [f"{v:g}" for v in values])


def time_bands(curves: Mapping[str, pd.DataFrame], ylabel: str, *,
               title: str | None = None, colors: Mapping[str, str] | None = None,
               step: bool = False) -> Figure:
    """Lines over time with shaded confidence bands.

    Parameters
    ----------
    curves : mapping
        label -> DataFrame with ``time, mean`` and optional ``half`` (CI half-width;
        no band where it is NaN or absent).
    ylabel : str
        y axis label with unit.
    colors : mapping, optional
        label -> color; default: algorithm colors, spare colors for other labels.
    step : bool
        Draw as a step function (for values that hold over a window).

    Returns
    -------
    Figure
    """
    fig, axes = _figure()
    ax = axes[0, 0]
    styles = algorithm_styles(list(curves))
    for label, curve in curves.items():
        color = (colors or {}).get(label, styles[label]["color"])
        t = curve["time"].to_numpy(dtype=float)
        mean = curve["mean"].to_numpy(dtype=float)
        where = "post" if step else None
        with matplotlib.rc_context(STYLE):
            if step:
                ax.step(t, mean, where="post", color=color, label=label)
            else:
                ax.plot(t, mean, color=color, label=label)
            if "half" in curve and np.isfinite(curve["half"].to_numpy(dtype=float)).any():
                half = curve["half"].to_numpy(dtype=float)
                ax.fill_between(t, mean - half, mean + half, color=color, alpha=0.2,
                                linewidth=0, step=where)
    _style_axes(ax, TIME_LABEL, ylabel, title)
    ax.set_xlim(left=0)
    _legend(ax)
    return fig


def memory_per_node(wide: pd.DataFrame, *, unit: str = "tuples", highlight: int = 3,
                    title: str | None = None) -> Figure:
    """Total buffered state over time (top) and per node (bottom) for one run.

    Parameters
    ----------
    wide : DataFrame
        :func:`analysis.series.memory_series` output.
    unit : str
        Unit of the values (``tuples`` or ``B``).
    highlight : int
        Nodes with the highest peak drawn in color and labelled; the rest in grey. Nodes
        whose series are identical share one line and one label (``nodes 3, 5``), so no
        named node hides under another.

    Returns
    -------
    Figure
    """
    fig, axes = _figure(2, 1, size=(FIGSIZE[0], FIGSIZE[1] * 1.5), sharex=True)
    top, bottom = axes[0, 0], axes[1, 0]
    t = wide.index.to_numpy(dtype=float)
    nodes = [c for c in wide.columns if c != "total"]
    peaks = wide[nodes].max().sort_values(ascending=False)
    loud = list(peaks.index[:highlight])
    colors = itertools.cycle(SPARE_COLORS)
    with matplotlib.rc_context(STYLE):
        top.step(t, wide["total"].to_numpy(dtype=float), where="post", color="black",
                 label="all nodes")
        for node in nodes:
            if node not in loud:
                bottom.step(t, wide[node].to_numpy(dtype=float), where="post",
                            color="#bbbbbb", linewidth=0.7)
        for group in _identical_groups(wide, loud):
            label = ("node " if len(group) == 1 else "nodes ") + ", ".join(map(str, group))
            bottom.step(t, wide[group[0]].to_numpy(dtype=float), where="post",
                        color=next(colors), label=label)
    _style_axes(top, "", f"buffered, total [{unit}]", title)
    _style_axes(bottom, TIME_LABEL, f"buffered per node [{unit}]", None)
    bottom.set_xlim(left=0)
    _legend(bottom, title=f"largest peaks\n({len(loud)} of {len(nodes)} nodes)",
            title_fontsize=8,
            loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def _identical_groups(wide: pd.DataFrame, columns: Sequence) -> list[list]:
    """``columns`` grouped by identical series, in order of first appearance.

    >>> w = pd.DataFrame({1: [0, 2], 2: [0, 1], 3: [0, 2]})
    >>> _identical_groups(w, [1, 2, 3])
    [[1, 3], [2]]
    """
    groups: dict[tuple, list] = {}
    for c in columns:
        groups.setdefault(tuple(wide[c].to_numpy(dtype=float).tolist()), []).append(c)
    return list(groups.values())


def cdf(samples: Mapping[str, Sequence[float]], xlabel: str, *,
        title: str | None = None) -> Figure:
    """Empirical CDFs, one step line per label (algorithm colors).

    Parameters
    ----------
    samples : mapping
        label -> values (NaN ignored; empty series are skipped).
    xlabel : str
        x axis label with unit.

    Returns
    -------
    Figure
    """
    fig, axes = _figure()
    ax = axes[0, 0]
    styles = algorithm_styles(list(samples))
    for label, values in samples.items():
        ordered = np.sort(np.asarray(values, dtype=float))
        ordered = ordered[~np.isnan(ordered)]
        if ordered.size == 0:
            continue
        fraction = np.arange(1, ordered.size + 1) / ordered.size
        with matplotlib.rc_context(STYLE):
            ax.step(np.r_[ordered[0], ordered], np.r_[0.0, fraction], where="post",
                    color=styles[label]["color"], label=f"{label} (n={ordered.size})")
    _style_axes(ax, xlabel, "fraction of results [–]", title)
    ax.set_ylim(0, 1.02)
    _legend(ax, loc="lower right")
    return fig


def bars(agg: pd.DataFrame, metric: str, *, ci: str = "ci95",
         title: str | None = None) -> Figure:
    """One bar per algorithm (mean over seeds) with CI error bars.

    Parameters
    ----------
    agg : DataFrame
        :func:`analysis.stats.aggregate` output grouped by ``algorithm``.
    metric : str

    Returns
    -------
    Figure
    """
    rows = agg[agg["metric"] == metric]
    if rows.empty:
        raise ValueError(f"bars: no aggregate rows for metric {metric!r}")
    styles = algorithm_styles(rows["algorithm"].unique())
    rows = rows.sort_values("algorithm", key=lambda s: s.map(list(styles).index))
    fig, axes = _figure()
    ax = axes[0, 0]
    x = np.arange(len(rows))
    with matplotlib.rc_context(STYLE):
        ax.bar(x, rows["mean"].to_numpy(dtype=float),
               yerr=np.nan_to_num(rows[ci].to_numpy(dtype=float)), capsize=3,
               color=[styles[a]["color"] for a in rows["algorithm"]], width=0.6)
        ax.set_xticks(x, list(rows["algorithm"]))
    ax.grid(axis="x", visible=False)
    _style_axes(ax, "algorithm", metric_label(metric), title)
    return fig
