"""QJoin report, figures: the source's Figures 2–4, estimate vs realised recall, and
K(t) / buffers over time."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import plots
from analysis.qjoin_data import ALGORITHMS, PREFIX, SENSITIVITY, variant_label
from analysis.stats import mean_ci
from experiments.store import Run


def _line(ax, x, groups, label, style, linestyle="-"):
    xs, ms, cs = [], [], []
    for xv, vals in sorted(groups.items()):
        m, c, _ = mean_ci(vals)
        xs.append(xv), ms.append(m), cs.append(0.0 if math.isnan(c) else c)
    if xs:
        ax.errorbar(xs, ms, yerr=cs, label=label, color=style["color"],
                    marker=style["marker"], linestyle=linestyle, capsize=2)


def figure_vs_quser(info: pd.DataFrame, out_dir: Path, metrics: list[tuple[str, str]],
                    stem: str, title: str) -> Path | None:
    """One panel per metric: mean ± CI vs Q_user, a line per algorithm variant."""
    data = info[info["q_user"].notna()]
    if data.empty:
        return None
    styles = plots.algorithm_styles(ALGORITHMS)
    fig, axes = plots._figure(1, len(metrics), size=(5.6 * len(metrics), 3.4))
    for ax, (metric, label) in zip(axes[0], metrics):
        for k, (variant, g) in enumerate(data.assign(
                variant=[variant_label(r) for _, r in data.iterrows()]).groupby("variant")):
            alg = g["algorithm"].iloc[0]
            groups = {q: gg[metric] for q, gg in g.groupby("q_user")}
            _line(ax, None, groups, variant, styles.get(alg, styles["qjoin"]),
                  plots._LINESTYLES[k % len(plots._LINESTYLES)])
        if metric == "memory":     # Spark's state rows sit an order of magnitude above
            ax.set_yscale("log")
        plots._style_axes(ax, "Q_user", label, title)
    plots._legend(axes[0, -1], fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return plots.save(fig, out_dir / "figures", f"{PREFIX}_{stem}")


def figure_sensitivity(info: pd.DataFrame, out_dir: Path) -> Path | None:
    """Figure 2: QJoin's mean memory vs each of P, L, b, g that the runs vary."""
    q = info[info["algorithm"] == "qjoin"]
    q = q.drop_duplicates(["scenario", "q_user", *SENSITIVITY, "seed"])
    varied = [p for p in SENSITIVITY if q[p].nunique() > 1]
    if not varied:
        return None
    styles = plots.algorithm_styles(["qjoin"])
    fig, axes = plots._figure(1, len(varied), size=(3.6 * len(varied), 3.2))
    for ax, p in zip(axes[0], varied):
        others = [o for o in SENSITIVITY if o != p]
        # hold the other three at their most common value (the defaults of the sweep)
        sub = q
        for o in others:
            mode = q[o].mode()
            if len(mode):
                sub = sub[np.isclose(sub[o], mode.iloc[0])]
        for k, (qu, g) in enumerate(sub.groupby("q_user")):
            groups = {v: gg["memory"] for v, gg in g.groupby(p)}
            _line(ax, None, groups, f"Q_user={qu:g}", styles["qjoin"],
                  plots._LINESTYLES[k % len(plots._LINESTYLES)])
        ax.set_xscale("log")
        plots._style_axes(ax, f"{p.split('.')[-1]} [s]", "mean buffered tuples", None)
        plots._legend(ax, fontsize=7)
    return plots.save(fig, out_dir / "figures", f"{PREFIX}_fig2_sensitivity")


def figure_estimate(intervals: pd.DataFrame, out_dir: Path) -> Path | None:
    """Realised recall of each L interval vs the estimate Algorithm 1 chose it with."""
    if intervals.empty:
        return None
    fig, axes = plots._figure(1, 1, size=(4.2, 3.6))
    ax = axes[0, 0]
    for k, (L, g) in enumerate(intervals.groupby("L")):
        ax.scatter(g["q_estimate"], g["recall"], s=4, alpha=0.35, label=f"L={L:g}",
                   color=plots.SPARE_COLORS[k % len(plots.SPARE_COLORS)])
    ax.plot([0, 1], [0, 1], color="black", linewidth=0.8)
    ax.set_xlim(min(0.5, intervals["q_estimate"].min()), 1.01)
    ax.set_ylim(min(0.5, intervals["recall"].quantile(0.01)), 1.01)
    plots._style_axes(ax, "estimated Q_L(dx, dy)", "realised recall of the interval", None)
    plots._legend(ax)
    return plots.save(fig, out_dir / "figures", f"{PREFIX}_estimate_vs_realised")


def figure_timeline(info: pd.DataFrame, out_dir: Path) -> Path | None:
    """K(t) of MP-K-slack and QJoin's buffer sizes x + y over time, first seed."""
    rows = info[info["dir"].notna() & info["algorithm"].isin(["qjoin", "mp-k-slack"])]
    if rows.empty:
        return None
    seed = rows["seed"].min()
    fig, axes = plots._figure(1, 2, size=(9.0, 3.2))
    styles = plots.algorithm_styles(ALGORITHMS)
    for _, r in rows[rows["seed"] == seed].drop_duplicates("algorithm").iterrows():
        m = Run(r["dir"]).metrics
        if r["algorithm"] == "qjoin":
            w = m[m["metric"].isin(["dx", "dy"])].pivot_table(index="time", columns="metric",
                                                             values="value")
            axes[0, 0].step(w.index, w["dx"], where="post", label="QJoin dx", color="C4")
            axes[0, 0].step(w.index, w["dy"], where="post", label="QJoin dy", color="C1")
            mem = m[(m["metric"] == "tuples") & (m["source"] == "testbed")]
            mem = mem.groupby("time")["value"].sum()
            axes[0, 1].plot(mem.index, mem.values, label=variant_label(r), **_c(styles, "qjoin"))
        else:
            k = m[m["metric"] == "K"]
            axes[0, 0].step(k["time"], k["value"], where="post", label="MP-K-slack K",
                            color=styles["mp-k-slack"]["color"])
            mem = m[(m["metric"] == "tuples") & (m["source"] == "testbed")]
            mem = mem.groupby("time")["value"].sum()
            axes[0, 1].plot(mem.index, mem.values, label="mp-k-slack",
                            **_c(styles, "mp-k-slack"))
    plots._style_axes(axes[0, 0], "time [s]", "delay allowance / K [s]", f"seed {seed}")
    plots._style_axes(axes[0, 1], "time [s]", "buffered tuples", f"seed {seed}")
    plots._legend(axes[0, 0], fontsize=7)
    plots._legend(axes[0, 1], fontsize=7)
    return plots.save(fig, out_dir / "figures", f"{PREFIX}_timeline")


def _c(styles, alg):
    return {"color": styles[alg]["color"]}
