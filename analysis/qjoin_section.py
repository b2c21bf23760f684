"""Report section of the QJoin family: the source's figures and claims beside ours.

* Figure 2 — QJoin's mean memory (buffered tuples) vs ``P``, ``L``, ``b`` and ``g``,
  one line per ``Q_user`` (panels for the parameters the runs vary).
* Figure 3 — mean tuple latency vs ``Q_user``: at the join node (emission minus the
  later member's arrival there, the source's measure) and end to end (emission minus
  entry at the source).
* Figure 4 — mean memory vs ``Q_user`` (Spark's join: its own state rows).
* Reductions vs MP-K-slack, paired by seed, beside the source's claims (latency 80–95 %
  lower, memory 50–80 % lower at ``Q_user >= 0.85``), with the gap: the latency claim
  against the join-node latency, end to end beside it.
* Recall per period and the share of periods meeting ``Q_user``; QJoin's memory relative
  to the hindsight bound; estimated vs realised recall per ``L``; ``K(t)`` and QJoin's
  buffer sizes over time; K-slack's recall/latency trade-off over ``K``.

All means are over seeds with 95 % confidence intervals (Student t).

The section is assembled here from its parts: reading (:mod:`analysis.qjoin_data`),
statistics (:mod:`analysis.qjoin_stats`), figures (:mod:`analysis.qjoin_figures`) and
text (:mod:`analysis.qjoin_text`).
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis.axes import report_axes
from analysis.qjoin_data import PREFIX, at_usual_settings, interval_table, run_info
from analysis.qjoin_figures import (figure_estimate, figure_sensitivity, figure_timeline,
                                    figure_vs_quser)
from analysis.qjoin_stats import (context_numbers, hindsight_table, kslack_table, other_axes,
                                  reductions, summary_table)
from analysis.qjoin_text import WHY, claims_html, escape, html_table, numbers_html


def section(runs: pd.DataFrame, run_dirs: list[Path], out_dir: Path) -> str:
    """The QJoin family's HTML fragment; files go to ``out_dir/figures`` and ``tables``."""
    out_dir = Path(out_dir)
    tables = out_dir / "tables"
    tables.mkdir(parents=True, exist_ok=True)
    everything = run_info(runs, run_dirs)
    compared = _compared(everything)
    # figures show the most common disorder scenario; tables show every scenario
    main = compared["scenario"].mode().iloc[0]
    info = compared[compared["scenario"] == main]
    parts = ["<p>QJoin family: a two-stream window join at the join node of tuples that "
             "crossed the emulated network; means over seeds with 95 % confidence "
             "intervals. Memory is the testbed's count of buffered tuples (Spark's join: "
             f"its own state rows). Figures: disorder scenario <i>{escape(main)}</i>.</p>"]
    summary = summary_table(compared)
    summary.to_csv(tables / f"{PREFIX}_summary.csv", index=False)
    parts.append("<h3>Overview</h3>" + html_table(summary, [
        "scenario", "variant", "q_user", "seeds", "recall", "recall_target_met_fraction",
        "recall_period_min", "latency_join_mean", "latency_join_p95", "latency_mean",
        "memory_steady", "memory", "memory_vs_hindsight"]))
    parts += _source_figures(everything, info, out_dir)
    red = reductions(compared)
    if not red.empty:
        red.to_csv(tables / f"{PREFIX}_reductions_vs_mpkslack.csv", index=False)
    parts.append("<h3>QJoin vs MP-K-slack (paired by seed) beside the source's claims</h3>"
                 + claims_html(red))
    hs = hindsight_table(info)
    if not hs.empty:
        hs.to_csv(tables / f"{PREFIX}_hindsight.csv", index=False)
        parts.append(_hindsight_html(hs))
    intervals = interval_table(info)
    if not intervals.empty:
        intervals.to_csv(tables / f"{PREFIX}_intervals.csv", index=False)
        parts.append(_estimate_html(intervals, out_dir))
    tl = figure_timeline(info, out_dir)
    if tl is not None:
        parts.append(_figure_html("K(t), QJoin's allowances and buffered tuples over time",
                                  tl, out_dir, "timeline"))
    ks = kslack_table(info)
    if not ks.empty:
        ks.to_csv(tables / f"{PREFIX}_kslack.csv", index=False)
        parts.append("<h3>K-slack over K</h3>" + html_table(
            ks, [*other_axes(info), "K", "seeds", "recall", "recall_period_min", "latency_mean",
                 "latency_join_mean", "memory"]))
    parts.append(WHY)
    parts.append(numbers_html(context_numbers(info)))
    return "\n".join(parts)


def _compared(everything: pd.DataFrame) -> pd.DataFrame:
    """The runs every view but Figure 2 compares: QJoin at its usual settings (Figure 2
    varies P, b, g and L), each configuration and seed once (a sensitivity sweep's
    default point comes from several sweeps)."""
    compared = at_usual_settings(everything)
    # runs at another value of any other swept axis (the radio, ...) are not repeats
    others = [a for a in report_axes(compared) if not a.startswith("params.")]
    return compared.drop_duplicates(["scenario", "algorithm", "params.qjoin.L",
                                     "params.qjoin.spend", "params.k-slack.K", "q_user",
                                     *others, "seed"])


def _figure_html(title: str, path: Path, out_dir: Path, alt: str) -> str:
    """A heading and the figure at ``path``, linked relative to ``out_dir``."""
    return f"<h3>{title}</h3><img src='{path.relative_to(out_dir).as_posix()}' alt='{alt}'>"


def _source_figures(everything: pd.DataFrame, info: pd.DataFrame, out_dir: Path) -> list[str]:
    """The source's Figures 2 (over ``everything``), 3 and 4 (over ``info``) that the
    runs can draw, as HTML."""
    parts = []
    fig2 = figure_sensitivity(everything, out_dir)
    if fig2 is not None:
        parts.append(_figure_html("Figure 2 — QJoin's memory vs P, L, b, g", fig2, out_dir,
                                  "figure 2"))
    fig3 = figure_vs_quser(info, out_dir, [("latency_join_mean",
                                            "mean latency at the join node [s]"),
                                           ("latency_mean", "mean latency, end to end [s]")],
                           "fig3_latency", None)
    if fig3 is not None:
        parts.append(_figure_html("Figure 3 — latency vs Q_user", fig3, out_dir, "figure 3"))
    fig4 = figure_vs_quser(info, out_dir, [("memory", "mean buffered tuples"),
                                           ("recall", "recall")], "fig4_memory", None)
    if fig4 is not None:
        parts.append(_figure_html("Figure 4 — memory (and recall) vs Q_user", fig4, out_dir,
                                  "figure 4"))
    return parts


def _hindsight_html(hs: pd.DataFrame) -> str:
    """QJoin's memory beside the hindsight bound (:func:`hindsight_table`), as HTML."""
    return ("<h3>QJoin's memory relative to the hindsight-minimal buffers</h3><p>"
            "Hindsight-minimal: the symmetric join replayed on the run's arrivals with, "
            "in each period, the cheapest fixed allowances (dx, dy) (by Algorithm 1's "
            "objective) that meet Q_user over that period's results, chosen knowing "
            "them; its buffered tuples counted at QJoin's memory samples. Both means "
            "are after the first period P, where QJoin runs with the largest buffers "
            "by design.</p>"
            + html_table(hs, list(hs.columns[:3]) + [
                c for c in ("memory_steady", "hindsight_memory_tuples",
                            "memory_vs_hindsight", "recall_target_met_fraction",
                            "recall_period_min")
                if c in hs.columns]))


def _estimate_html(intervals: pd.DataFrame, out_dir: Path) -> str:
    """Estimated vs realised recall per interval (:func:`interval_table`): its figure,
    drawn into ``out_dir``, and the gap, as HTML."""
    fig = figure_estimate(intervals, out_dir)
    gap = intervals["q_estimate"] - intervals["recall"]
    below = (intervals["recall"] < intervals["q_target"]).mean()
    return ("<h3>Estimated vs realised recall per interval L</h3>"
            f"<p>{len(intervals)} intervals; estimate minus realised: mean "
            f"{gap.mean():+.3f}, mean absolute {gap.abs().mean():.3f}; realised "
            f"below the target in {below:.0%} of them.</p>"
            f"<img src='{fig.relative_to(out_dir).as_posix()}' alt='estimate vs realised'>")
