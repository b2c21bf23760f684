"""Report section of triggered windows (ALGORITHMS.md §4): what ends an operator's windows.

Written when the runs hold more than the fixed clock (a ``trigger`` summary key other
than ``clock``); otherwise it is empty and the report leaves it out.

* Per trigger variant: windows fired (in all and by kind), recall, latency, memory and
  communication cost, means over seeds with 95 % confidence intervals.
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
from analysis.stats import fmt_ci, mean_ci
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
          ("memory_mean_tuples", "Δ memory vs clock")]


def per_variant(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and CI of :data:`METRICS` and of windows by kind, per algorithm and trigger
    variant, and the :data:`PAIRED` differences from the same algorithm's clock run of
    the same seed (``d_<metric>``)."""
    clock = runs[runs["trigger"] == "clock"].groupby(["algorithm", "seed"])[
        [m for m, _ in PAIRED]].mean()
    rows = []
    for (algorithm, variant), g in runs.groupby(["algorithm", "trigger"], sort=True):
        row = {"algorithm": algorithm, "trigger": variant, "seeds": int(g["seed"].nunique())}
        for m in [m for m, _ in METRICS] + [f"windows_fired_by_{k}" for k in KINDS]:
            if m in g:
                row[m], row[f"{m}_ci95"], _ = mean_ci(g[m])
        for m, _ in PAIRED:
            diffs = [v - clock.loc[(algorithm, seed), m] for seed, v in zip(g["seed"], g[m])
                     if (algorithm, seed) in clock.index]
            row[f"d_{m}"], row[f"d_{m}_ci95"], _ = mean_ci(diffs)
        rows.append(row)
    return pd.DataFrame(rows)


def _table(frame: pd.DataFrame) -> str:
    kinds = [k for k in KINDS if frame.get(f"windows_fired_by_{k}", pd.Series([0])).sum() > 0]
    cols = [("algorithm", "algorithm"), ("trigger", "trigger"), ("seeds", "seeds"), *METRICS,
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
    """When tuples reached the operator: QJoin's ``arrival:<stream>`` rows, else the
    ledger's data messages at their last hop (ATR's diffusion node)."""
    arrivals = metrics.loc[metrics["metric"].str.startswith("arrival:"), "time"]
    if len(arrivals):
        return arrivals.to_numpy()
    led = run.table("ledger")
    data = led[(led["kind"] == "data") & (led["hop_v"] == led["dst"])]
    return data["time"].to_numpy()


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


def figure_timeline(examples: dict[str, Path], out_dir: Path, bin_width: float = 0.5
                    ) -> Path | None:
    """Windows over time against the input rate, one panel per variant."""
    if not examples:
        return None
    with matplotlib.rc_context(plots.STYLE):
        fig = Figure(figsize=(plots.FIGSIZE[0] * 1.6, 1.6 * len(examples) + 0.6),
                     layout="constrained")
        axes = fig.subplots(len(examples), 1, sharex=True, squeeze=False)[:, 0]
        colors = plots.algorithm_styles(list(KINDS) + ["slide"])
        for ax, (variant, path) in zip(axes, sorted(examples.items())):
            run = Run(path)
            m = run.table("metrics")
            arrivals = _input_times(run, m)
            end = max(float(arrivals.max()) if arrivals.size else 1.0, 1.0)
            edges = np.arange(0.0, end + bin_width, bin_width)
            counts, _ = np.histogram(arrivals, edges)
            ax.step(edges[:-1], counts / bin_width, where="post", color="grey",
                    label="input rate")
            for kind, times in fired_times(m).items():
                ax.vlines(times, 0, 1, transform=ax.get_xaxis_transform(), linewidth=0.8,
                          color=colors.get(kind, {"color": "black"})["color"],
                          label=f"window ({kind})")
            ax.set_ylabel("tuples / time unit")
            ax.set_title(variant, fontsize=9)
            ax.legend(fontsize=7, loc="upper right")
        axes[-1].set_xlabel(plots.TIME_LABEL)
    return plots.save(fig, out_dir, f"{PREFIX}_timeline")


def section(runs: pd.DataFrame, run_dirs: list[Path], out_dir: Path) -> str:
    """The triggers fragment ("" when every run uses the fixed clock)."""
    if "trigger" not in runs or set(runs["trigger"].dropna()) <= {"clock"}:
        return ""
    out_dir = Path(out_dir)
    runs = runs[runs["trigger"].notna()]
    frame = per_variant(runs)
    figures = out_dir / "figures"
    dirs = {Path(d).name: Path(d) for d in run_dirs if is_run_folder(d)}
    first = runs.sort_values("seed").drop_duplicates(["algorithm", "trigger"])
    examples = {f"{r['algorithm']}, {r['trigger']}": dirs[r["run_id"]]
                for _, r in first.iterrows() if r["run_id"] in dirs}
    parts = ["<p>What ended each window: the fixed clock, or a trigger (ALGORITHMS.md "
             "§4) — the input rate, its deviation from its history, or exceptions (late "
             "tuples at the operator, messages lost by the sources). A window attributed "
             "to <code>time</code> under a trigger is its fallback clock.</p>",
             _table(frame)]
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
