"""Report section of sweep variants: the same experiment on other networks, beside the
first.

Written when a runs table has a ``variant`` column with more than one value
(``[sweep.variants]``, :data:`analysis.families.AXIS_SECTIONS`). The baseline is the
variant named ``ideal`` when there is one, else the first variant of the runs table
(the order of the spec). For every other variant, per setting (algorithm and every other
swept axis), paired by seed with the baseline's run of the same setting:

* how each headline number moves (:data:`HEADLINE`): mean and 95 % CI of the change (%
  where relative, else the difference), beside the two means; a number the baseline
  does not have (energy, deaths: an ideal network has no batteries) is the variant's
  mean and CI alone;
* a figure of the relative changes (:data:`BARS`), one group of bars per setting;
* one sentence per algorithm that says why, from the runs: routing packets, drops by
  reason (``drops_by_reason``), the wait for a route, message delay, deaths.

Example
-------
>>> baseline_of(pd.Series(["dense", "manet", "ideal"]))
'ideal'
>>> baseline_of(pd.Series(["dense", "manet"]))
'dense'
"""
from __future__ import annotations

import html
import math
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from analysis import plots
from analysis.energy_section import numeric
from analysis.loading import swept_params
from analysis.network_section import (DROP_REASONS, _tables, paired, paired_change_cell,
                                      paired_table, run_facts)
from analysis.report import _figure_html
from analysis.stats import fmt_ci, mean_ci

PREFIX = "variants"
VARIANT = "variant"
#: The variant the others are judged against, when present.
BASELINE = "ideal"
#: (column, label, relative change?) compared with the baseline.
HEADLINE = [("comm_cost_per_time", "cost / time", True),
            ("memory_mean_tuples", "memory", True),
            ("recall", "recall", False),
            ("latency_mean", "latency", True),
            ("latency_p95", "latency p95", True),
            ("delivery_ratio", "delivery ratio", False),
            ("routing_packets_per_time", "routing packets / time", False),
            ("energy_per_result_j", "energy / result [J]", True),
            ("energy_total_j", "energy [J]", True),
            ("first_node_death", "first death", False),
            ("nodes_dead_at_end", "dead at end", False)]
#: Drawn as bars of relative change (recall and delivery ratio: their difference in
#: percentage points).
BARS = ["comm_cost_per_time", "memory_mean_tuples", "recall", "latency_mean",
        "latency_p95", "delivery_ratio"]
BAR_COLORS = dict(zip(BARS, ["#1f77b4", "#9467bd", "#2ca02c", "#ff7f0e", "#d62728",
                             "#7f7f7f"]))


def _e(x) -> str:
    return html.escape(str(x))


def baseline_of(variants: pd.Series) -> str:
    """:data:`BASELINE` when present, else the first variant in order of appearance."""
    names = list(dict.fromkeys(variants.dropna()))
    return BASELINE if BASELINE in names else names[0]


def setting_columns(facts: pd.DataFrame) -> list[str]:
    """The algorithm and every swept axis that takes more than one value."""
    return ["algorithm"] + [p for p in swept_params(facts)
                            if facts[p].nunique(dropna=False) > 1]


def compare(facts: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Per variant and setting: the paired changes of :data:`HEADLINE` against
    ``baseline`` (:func:`analysis.network_section.paired`), plus the variant's own mean
    and CI of each number (``own_<metric>``, ``own_<metric>_ci95``) for the numbers the
    baseline lacks."""
    by = setting_columns(facts)
    present = [h for h in HEADLINE if h[0] in facts]
    frame = paired(facts, VARIANT, baseline, present, by=by)
    if frame.empty:
        return frame
    own = []
    for key, g in facts[facts[VARIANT] != baseline].groupby(by + [VARIANT], dropna=False,
                                                            sort=True):
        row = dict(zip(by + [VARIANT], key if isinstance(key, tuple) else (key,)))
        for m, _, _ in present:
            row[f"own_{m}"], row[f"own_{m}_ci95"], _ = mean_ci(g[m])
        own.append(row)
    return frame.merge(pd.DataFrame(own), on=by + [VARIANT], how="left")


def _setting_label(row, by: list[str]) -> str:
    return "\n".join(str(row[c]) if c == "algorithm" else f"{c.split('.')[-1]} = {row[c]:g}"
                     if isinstance(row[c], float) else f"{c.split('.')[-1]} = {row[c]}"
                     for c in by)


def bar_figure(frame: pd.DataFrame, by: list[str]) -> Figure:
    """Relative change of each :data:`BARS` metric (recall and delivery ratio: points),
    one group per setting, error bars 95 % CI over seeds."""
    metrics = [m for m in BARS if f"d_{m}" in frame and frame[f"d_{m}"].notna().any()]
    labels = [_setting_label(r, by) for _, r in frame.iterrows()]
    width = 0.8 / max(len(metrics), 1)
    scale = {m: 1.0 if dict((h[0], h[2]) for h in HEADLINE)[m] else 100.0 for m in metrics}
    names = {m: label for m, label, _ in HEADLINE}
    with matplotlib.rc_context(plots.STYLE):
        fig = Figure(figsize=(max(plots.FIGSIZE[0], 0.9 * len(labels) + 1.5), plots.FIGSIZE[1]),
                     layout="constrained")
        ax = fig.subplots()
        x = np.arange(len(labels))
        for k, m in enumerate(metrics):
            ax.bar(x + (k - (len(metrics) - 1) / 2) * width,
                   frame[f"d_{m}"].to_numpy(float) * scale[m], width,
                   yerr=np.nan_to_num(frame[f"d_{m}_ci95"].to_numpy(float)) * scale[m],
                   capsize=2, color=BAR_COLORS[m],
                   label=names[m] + (" (points)" if scale[m] != 1.0 else ""))
        ax.axhline(0.0, color="black", linewidth=0.6)
        # one wide interval (a few seeds, a mean near zero) must not flatten the rest:
        # the axis spans the means with room, an interval beyond it is cut
        means = np.concatenate([frame[f"d_{m}"].to_numpy(float) * scale[m] for m in metrics])
        means = means[np.isfinite(means)]
        if means.size:
            low, high = min(means.min(), 0.0), max(means.max(), 0.0)
            room = 0.4 * (high - low or 1.0)
            ax.set_ylim(low - room, high + room)
        ax.set_xticks(x, labels)
        ax.set_ylabel("change against the baseline [%]")
        ax.legend(ncols=3, fontsize=7)
    return fig


def _cell(r, m: str) -> str:
    """The paired change where the baseline has the number, else the variant's own."""
    if not pd.isna(r.get(f"d_{m}", math.nan)):
        return paired_change_cell(r, m)
    if not pd.isna(r.get(f"own_{m}", math.nan)):
        return f"– → {fmt_ci(r[f'own_{m}'], r[f'own_{m}_ci95'])}"
    return "–"


def _table_html(frame: pd.DataFrame) -> str:
    return (paired_table(frame, HEADLINE, cell=_cell, shown=lambda m: any(
                c in frame and frame[c].notna().any() for c in (f"d_{m}", f"own_{m}")))
            + '<p class="note">Δ: mean ± 95 % CI over seeds of the change against the '
              "baseline's run of the same seed and setting (relative in %, recall, "
              "delivery ratio, routing packets, deaths as differences); in brackets the "
              "two means. \"– → x\": the baseline has no such number (no batteries, no "
              "routing protocol); x is this variant's mean ± CI. Energy per result: runs "
              "with at least one result.</p>")


def _mean(g: pd.DataFrame, column: str) -> float:
    return float(pd.to_numeric(g[column], errors="coerce").mean()) if column in g else math.nan


def why(facts: pd.DataFrame, baseline: str, variant: str, algorithm: str) -> str:
    """One sentence on why ``algorithm``'s numbers move from ``baseline`` to ``variant``,
    from the runs of both (means over every setting and seed of the algorithm)."""
    base = facts[(facts[VARIANT] == baseline) & (facts["algorithm"] == algorithm)]
    mine = facts[(facts[VARIANT] == variant) & (facts["algorithm"] == algorithm)]
    if base.empty or mine.empty:
        return ""
    parts = []
    cost_b, cost_v = _mean(base, "comm_cost_per_time"), _mean(mine, "comm_cost_per_time")
    if cost_b > 0 and not math.isnan(cost_v):
        parts.append(f"cost {100 * (cost_v - cost_b) / cost_b:+.0f} % "
                     f"({cost_b:.3g} → {cost_v:.3g} per time unit)")
    control = _mean(mine, "routing_packets_per_time") - _mean(base, "routing_packets_per_time")
    if control > 0:
        parts.append(f"{control:.3g} routing packets per time unit more on the medium")
    delivery = _mean(mine, "delivery_ratio")
    drops = {r: _mean(mine, f"drops_{r}") for r in DROP_REASONS}
    drops = {r: n for r, n in drops.items() if n > 0}
    if drops:
        top = sorted(drops.items(), key=lambda kv: -kv[1])[:3]
        parts.append(f"delivery {delivery:.3g}, drops per run: "
                     + ", ".join(f"{n:.3g} {r}" for r, n in top))
    recall = _mean(mine, "recall") - _mean(base, "recall")
    if not math.isnan(recall) and abs(recall) >= 0.005:
        parts.append(f"recall {recall:+.3f}")
    delay_b, delay_v = _mean(base, "message_delay_mean"), _mean(mine, "message_delay_mean")
    if not math.isnan(delay_v):
        wait = _mean(mine, "route_discovery_latency_mean")
        parts.append(f"message delay {delay_b:.3g} → {delay_v:.3g}"
                     + (f" (first packet waits {wait:.3g} for a route)"
                        if wait > 0 else ""))
    dead = _mean(mine, "nodes_dead_at_end")
    if dead > 0:
        first = _mean(mine, "first_node_death")
        parts.append(f"{dead:.3g} nodes dead at the end, the first at t = {first:.3g}")
    if not parts:
        return ""
    return f"{algorithm}, {baseline} → {variant}: " + "; ".join(parts) + "."


def section(runs: pd.DataFrame, run_dirs: list[Path], out_dir: Path) -> str:
    """The variants section's HTML fragment (figures into ``out_dir/figures``)."""
    out_dir = Path(out_dir)
    if VARIANT not in runs or runs[VARIANT].nunique() < 2:
        return ""
    facts = numeric(run_facts(runs, run_dirs), [m for m, _, _ in HEADLINE])
    baseline = baseline_of(facts[VARIANT])
    by = setting_columns(facts)
    frame = compare(facts, baseline)
    if frame.empty:
        return ""
    frame.to_csv(_tables(out_dir) / f"{PREFIX}_paired.csv", index=False)
    parts = [f"<p>{len(facts)} runs in {facts[VARIANT].nunique()} variants; each against "
             f"<b>{_e(baseline)}</b>, paired by seed and setting.</p>"]
    for variant, part in frame.groupby(VARIANT, sort=False):
        part = part.reset_index(drop=True)
        parts.append(f"<h3>{_e(variant)} against {_e(baseline)}</h3>")
        parts.append(_table_html(part))
        png = plots.save(bar_figure(part, by), out_dir / "figures",
                         f"{PREFIX}_{variant}_changes")
        parts.append('<div class="figs">' + _figure_html(
            png, out_dir, f"{variant} against {baseline}: change of each headline number "
            "per setting (relative in %; recall and delivery ratio: difference in points); "
            "mean over seeds, bars: 95 % CI (cut at the axis)") + "</div>")
        sentences = [why(facts, baseline, variant, a) for a in sorted(part["algorithm"].unique())]
        parts.append("".join(f"<p>{_e(s)}</p>" for s in sentences if s))
    return "\n".join(parts)
