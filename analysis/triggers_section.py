"""Report section of triggered windows (docs/ALGORITHMS.md#triggers): what ends an operator's windows.

Written when the runs hold more than the fixed clock (a ``trigger`` summary key other
than ``clock``); otherwise it is empty and the report leaves it out.

Algorithms: QJoin (a window runs its adaptation step), ATR and CTR (it cuts a segment),
the SMJ family (it ends a period).

* Per trigger variant: windows fired (in all and by kind), recall, latency, memory and
  communication cost, means over seeds with 95 % confidence intervals; cost per result
  group too when a swept axis changes the exact answer (:mod:`analysis.answers`).
* What the source leads one to expect beside what was measured: bursts answered sooner
  (:mod:`analysis.triggers_reaction`, paired with the clock run of the same seed).
* Figure: recall, latency and cost per variant with their CIs.
* Figure: windows over time against the input rate, one panel per variant (first seed).

Example
-------
>>> fired_times(pd.DataFrame({"metric": ["window_fired:rate", "arrival:R1"],
...                           "time": [2.5, 1.0], "value": [1.0, 0.0]}))
{'rate': [2.5]}
"""
from __future__ import annotations

import html
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from analysis import plots
from analysis.answers import COST_PER_RESULT, answer_changes, with_cost_per_result
from analysis.axes import report_axes
from analysis.stats import fmt_ci, mean_ci
from analysis.triggers_reaction import burst_onsets, reaction, while_down
from experiments.store import Run, is_run_folder

PREFIX = "triggers"
KINDS = ("count", "time", "rate", "deviation", "exception")
METRICS = [("windows_fired", "windows"), ("recall", "recall"),
           ("latency_mean", "latency, mean"), ("memory_mean_tuples", "memory, mean"),
           ("comm_cost_per_time", "cost / time")]


def fired_times(metrics: pd.DataFrame) -> dict[str, list[float]]:
    """``{kind: [times]}`` of the windows a run fired (its ``window_fired:<kind>`` rows)."""
    rows = metrics[metrics["metric"].str.startswith("window_fired:")]
    return {m.split(":", 1)[1]: sorted(g["time"].tolist()) for m, g in rows.groupby("metric")}


#: Compared with the fixed clock of the same seed (the seeds differ far more than the
#: triggers do, so unpaired intervals would hide the effect).
PAIRED = [("recall", "Δ recall vs clock"), ("latency_mean", "Δ latency vs clock"),
          ("memory_mean_tuples", "Δ memory vs clock"),
          ("comm_cost_per_time", "Δ cost / time vs clock")]


def per_variant(runs: pd.DataFrame, metrics=METRICS) -> pd.DataFrame:
    """Mean and CI of ``metrics`` and of windows by kind, per algorithm and trigger
    variant, and the :data:`PAIRED` differences from the same algorithm's clock run of
    the same seed at the same value of every other swept axis (``d_<metric>``; pairs
    by :func:`pair_keys`)."""
    keys = pair_keys(runs)
    rows = []
    for (algorithm, variant), g in runs.groupby(["algorithm", "trigger"], sort=True):
        row = {"algorithm": algorithm, "trigger": variant, "seeds": int(g["seed"].nunique())}
        for m in [m for m, _ in metrics] + [f"windows_fired_by_{k}" for k in KINDS]:
            if m in g:
                row[m], row[f"{m}_ci95"], _ = mean_ci(g[m])
        for m, _ in PAIRED:
            row[f"d_{m}"], row[f"d_{m}_ci95"], _ = mean_ci(_from_clock(runs, g, keys, m))
        rows.append(row)
    return pd.DataFrame(rows)


def pair_keys(runs: pd.DataFrame) -> list[str]:
    """What pairs a run with its clock run: the algorithm, the seed and every swept axis
    that does not itself choose the trigger (one that does takes one value per
    algorithm and trigger).

    >>> runs = pd.DataFrame({"algorithm": ["a"] * 4, "seed": [1] * 4,
    ...                      "trigger": ["clock", "rate"] * 2,
    ...                      "trigger.kind": ["clock", "rate"] * 2,
    ...                      "mobility.speed_mean": [0.1, 0.1, 0.2, 0.2]})
    >>> pair_keys(runs)
    ['algorithm', 'seed', 'mobility.speed_mean']
    """
    by_trigger = runs.groupby(["algorithm", "trigger"], dropna=False)
    return ["algorithm", "seed"] + [a for a in report_axes(runs)
                                    if by_trigger[a].nunique(dropna=False).max() > 1]


def _from_clock(runs: pd.DataFrame, rows: pd.DataFrame, keys: list[str],
                metric: str) -> pd.Series:
    """``metric`` of ``rows`` minus that of the clock run with the same ``keys``."""
    clock = runs.loc[runs["trigger"] == "clock", [*keys, metric]]
    merged = rows[[*keys, metric]].merge(clock, on=keys, suffixes=("", "_clock"))
    return (pd.to_numeric(merged[metric], errors="coerce")
            - pd.to_numeric(merged[f"{metric}_clock"], errors="coerce")).dropna()


def _table(frame: pd.DataFrame, metrics=METRICS) -> str:
    kinds = [k for k in KINDS if frame.get(f"windows_fired_by_{k}", pd.Series([0])).sum() > 0]
    cols = [("algorithm", "algorithm"), ("trigger", "trigger"), ("seeds", "seeds"), *metrics,
            *[(f"windows_fired_by_{k}", f"by {k}") for k in kinds],
            *[(f"d_{m}", label) for m, label in PAIRED]]
    head = "".join(f"<th>{html.escape(label)}</th>" for _, label in cols)
    body = []
    for _, r in frame.iterrows():
        cells = [fmt_ci(r[c], r.get(f"{c}_ci95")) if isinstance(r[c], float)
                 else html.escape(str(r[c])) for c, _ in cols]
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _input_times(run: Run, metrics: pd.DataFrame):
    """When tuples reached the operator: the ``arrival:<stream>`` rows (QJoin's join
    node, SMJ's sites), else the data messages that reached the diffusion node (ATR,
    CTR; its parts and segments to the hosts are not input)."""
    arrivals = metrics.loc[metrics["metric"].str.startswith("arrival:"), "time"]
    if len(arrivals):
        return np.sort(arrivals.to_numpy())
    led = run.table("ledger")
    data = led[(led["kind"] == "data") & (led["hop_v"] == led["dst"])]
    if "diffusion_node" in run.summary:
        data = data[data["dst"] == run.summary["diffusion_node"]]
    return np.sort(data["time"].to_numpy())


#: Per-run measures of how windows answer bursts and faults (``reactions``): the time
#: from a burst's onset to the next window, windows per time unit while some node is
#: down / while all are up, and the same for windows fired by exceptions.
RESPONSES = ("reaction", "fired_down", "fired_up", "exception_down", "exception_up")


def reactions(runs: pd.DataFrame, dirs: dict) -> pd.DataFrame:
    """Per algorithm and trigger: the mean and CI over seeds of each of
    :data:`RESPONSES`, and of its difference from the clock run of the same seed
    (``d_<name>``; paired by :func:`pair_keys`)."""
    keys = pair_keys(runs)
    rows = []
    for _, r in runs.iterrows():
        if r["run_id"] not in dirs:
            continue
        run = Run(dirs[r["run_id"]])
        m = run.table("metrics")
        by_kind = fired_times(m)
        fired = [t for times in by_kind.values() for t in times]
        outages = run.meta.get("node_outages", [])
        down, up = while_down(fired, outages, run.duration)
        exc_down, exc_up = while_down(by_kind.get("exception", []), outages, run.duration)
        rows.append({**{k: r[k] for k in keys}, "trigger": r["trigger"],
                     "reaction": reaction(burst_onsets(_input_times(run, m)), fired),
                     "fired_down": down, "fired_up": up,
                     "exception_down": exc_down, "exception_up": exc_up})
    if not rows:
        return pd.DataFrame()
    each = pd.DataFrame(rows)
    out = []
    for (algorithm, variant), g in each.groupby(["algorithm", "trigger"], sort=True):
        row = {"algorithm": algorithm, "trigger": variant}
        for name in RESPONSES:
            row[name], row[f"{name}_ci95"], _ = mean_ci(g[name].dropna())
            row[f"d_{name}"], row[f"d_{name}_ci95"], _ = mean_ci(
                _from_clock(each, g, keys, name))
        out.append(row)
    return pd.DataFrame(out)


def _faults(r: pd.DataFrame) -> str:
    """Windows while a node is down against while all are up, per trigger."""
    if not len(r) or r["fired_down"].isna().all():
        return "no node fails in these runs"
    parts = [f"{t}: {fmt_ci(r.loc[t, 'fired_down'], r.loc[t, 'fired_down_ci95'])} while "
             f"down vs {fmt_ci(r.loc[t, 'fired_up'], r.loc[t, 'fired_up_ci95'])} while up"
             + ("" if t != "exception" else
                f" (by exceptions {fmt_ci(r.loc[t, 'exception_down'], r.loc[t, 'exception_down_ci95'])}"
                f" vs {fmt_ci(r.loc[t, 'exception_up'], r.loc[t, 'exception_up_ci95'])})")
             for t in r.index]
    return ("windows per time unit while some node is down vs while all are up — "
            + "; ".join(parts) + ". No variant here suppresses windows on faults: an "
            "exception trigger can only add windows")


def _expectations(frame: pd.DataFrame, react: pd.DataFrame) -> str:
    """The source's expectations beside what the runs show, per algorithm."""
    rows = []
    for algorithm in sorted(frame["algorithm"].unique()):
        r = react[react["algorithm"] == algorithm].set_index("trigger") if len(react) \
            else pd.DataFrame()
        burst = "; ".join(
            f"{t}: {fmt_ci(r.loc[t, 'reaction'], r.loc[t, 'reaction_ci95'])}"
            + ("" if t == "clock" else
               f" (vs clock {fmt_ci(r.loc[t, 'd_reaction'], r.loc[t, 'd_reaction_ci95'])})")
            for t in r.index) if len(r) else "–"
        rows.append((algorithm, "bursts are answered sooner by a rate or deviation "
                     "trigger than by the clock", f"time from a burst's onset to the next "
                     f"window — {burst}"))
        rows.append((algorithm, "work is skipped while an upstream operator fails (an "
                     "exception trigger answers the faults)", _faults(r)))
    head = "<tr><th>algorithm</th><th>the source leads one to expect</th>" \
        "<th>measured (mean ± 95 % CI over seeds)</th></tr>"
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row)
                   + "</tr>" for row in rows)
    return f"<table>{head}{body}</table>"


def figure_metrics(frame: pd.DataFrame, out_dir: Path) -> Path:
    """Recall, latency and cost per trigger variant, with 95 % CIs."""
    shown = [("recall", "recall"), ("latency_mean", "mean latency [time units]"),
             ("comm_cost_per_time", "cost per time unit")]
    with matplotlib.rc_context(plots.STYLE):
        fig = Figure(figsize=(plots.FIGSIZE[0] * 1.8, plots.FIGSIZE[1]), layout="constrained")
        axes = fig.subplots(1, len(shown))
        x = np.arange(len(frame))
        for ax, (m, label) in zip(axes, shown):
            ax.errorbar(x, frame[m], yerr=frame[f"{m}_ci95"].fillna(0.0), fmt="o",
                        capsize=3, color="black")
            ax.set_xticks(x, [f"{a}\n{t}" for a, t in zip(frame["algorithm"],
                                                          frame["trigger"])], rotation=30)
            ax.set_ylabel(label)
    return plots.save(fig, out_dir, f"{PREFIX}_metrics")


def figure_timeline(examples: dict[tuple[str, str], Path], out_dir: Path,
                    bin_width: float = 0.5) -> Path | None:
    """Windows over time against the input rate: a panel per ``(algorithm, variant)``,
    one column per algorithm, one row per variant."""
    if not examples:
        return None
    algorithms = sorted({a for a, _ in examples})
    variants = sorted({v for _, v in examples})
    with matplotlib.rc_context(plots.STYLE):
        fig = Figure(figsize=(plots.FIGSIZE[0] * 0.9 * len(algorithms) + 1.0,
                              1.6 * len(variants) + 0.6), layout="constrained")
        grid = fig.subplots(len(variants), len(algorithms), sharex=True, squeeze=False)
        colors = plots.algorithm_styles(list(KINDS))
        for (algorithm, variant), path in sorted(examples.items()):
            ax = grid[variants.index(variant), algorithms.index(algorithm)]
            run = Run(path)
            m = run.table("metrics")
            arrivals = _input_times(run, m)
            end = max(float(arrivals.max()) if arrivals.size else 1.0, 1.0)
            edges = np.arange(0.0, end + bin_width, bin_width)
            counts, _ = np.histogram(arrivals, edges)
            ax.step(edges[:-1], counts / bin_width, where="post", color="grey",
                    label="input rate")
            for kind, times in fired_times(m).items():
                ax.vlines(times, 0, 1, transform=ax.get_xaxis_transform(), linewidth=0.6,
                          color=colors.get(kind, {"color": "black"})["color"],
                          label=f"window ({kind})")
            ax.set_title(f"{algorithm}, {variant}", fontsize=8)
            ax.legend(fontsize=6, loc="upper right")
        for row in grid:
            row[0].set_ylabel("tuples / time unit")
        for ax in grid[-1]:
            ax.set_xlabel(plots.TIME_LABEL)
    return plots.save(fig, out_dir, f"{PREFIX}_timeline")


def section(runs: pd.DataFrame, run_dirs: list[Path], out_dir: Path) -> str:
    """The triggers fragment ("" when every run uses the fixed clock)."""
    if "trigger" not in runs or set(runs["trigger"].dropna()) <= {"clock"}:
        return ""
    out_dir = Path(out_dir)
    runs = with_cost_per_result(runs[runs["trigger"].notna()])
    # a trigger may end an operator's windows differently, and so change its answer
    metrics = METRICS + ([(COST_PER_RESULT, "cost / result")]
                         if COST_PER_RESULT in runs and answer_changes(runs) else [])
    frame = per_variant(runs, metrics)
    figures = out_dir / "figures"
    dirs = {Path(d).name: Path(d) for d in run_dirs if is_run_folder(d)}
    first = runs.sort_values("seed").drop_duplicates(["algorithm", "trigger"])
    examples = {(r["algorithm"], r["trigger"]): dirs[r["run_id"]]
                for _, r in first.iterrows() if r["run_id"] in dirs}
    parts = ["<p>What ended each window: the fixed clock, or a trigger "
             "(docs/ALGORITHMS.md#triggers) — the input rate, its deviation from its history, or exceptions (late "
             "tuples at the operator, messages lost by the sources). A window attributed "
             "to <code>time</code> under a trigger is its fallback clock. A window is a "
             "QJoin adaptation step, an ATR or CTR segment, an SMJ period.</p>",
             _table(frame, metrics), _expectations(frame, reactions(runs, dirs))]
    png = figure_metrics(frame, figures)
    parts.append(f'<figure><img src="{png.relative_to(out_dir).as_posix()}" alt="metrics">'
                 "<figcaption>Recall, latency and cost per trigger; bars: 95 % CI over "
                 "seeds</figcaption></figure>")
    tl = figure_timeline(examples, figures)
    if tl is not None:
        parts.append(f'<figure><img src="{tl.relative_to(out_dir).as_posix()}" '
                     'alt="windows over time"><figcaption>Windows over time against the '
                     "input rate at the operator (first seed)</figcaption></figure>")
    return "\n".join(parts)
