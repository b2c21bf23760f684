"""Report section of the enrichment family (docs/ALGORITHMS.md#lookups): lookups fetched ahead of need.

* Per mode (on-demand; predicted at each confidence; eager; oracle): stall time, lookups,
  prefetches, bytes spent and wasted, precision and recall, the wait before a prefetch,
  stale uses, cache evictions, the table's queueing and the in-order downstream
  operator's buffer, means over seeds with 95 % confidence intervals, and the stall
  reduction against on-demand paired by seed.
* Figure: total stall time vs prefetch bytes per mode (both with CIs).
* Figure: prefetch precision vs recall per mode.
* The source's claim — stalls cut at the price of some mispredicted fetches — beside ours,
  and whether every mode gave on-demand's answer.
* Cost per result group beside cost in the tables when a swept axis changes the exact
  answer (:mod:`analysis.answers`).
* Lookups in the join algorithms (``experiments/specs/prefetch_smj_ctr.toml``): SMJ
  sites fetching their plans (``plan = "lookup"``) and CTR hosts fetching routes
  (``routes = "lookup"``), each against its pushed / carried protocol: the same table
  per mode, the stall cut against on-demand fetching paired by seed, and whether every
  run's result groups equal the pushed / carried run's of its seed. Shown only when a
  run fetches (the family also holds smj-e, smj-h and ctr for this).

Example
-------
>>> mode_label(pd.Series({"mode": "predicted", "confidence": 0.9}))
'predicted (c=0.9)'
>>> mode_label(pd.Series({"algorithm": "smj-h", "plan": "lookup", "plan_fetch": "eager",
...                       "plan_ttl": 1.5}))
'eager, ttl 1.5'
"""
from __future__ import annotations

import html
import math
from pathlib import Path

import matplotlib
import pandas as pd
from matplotlib.figure import Figure

from analysis import plots
from analysis.answers import COST_PER_RESULT, answer_changes, with_cost_per_result
from analysis.axes import report_axes
from analysis.stats import fmt_ci, mean_ci

PREFIX = "enrich"
#: Summary keys tabulated per mode.
METRICS = [("stall_time_total", "stall time, total"), ("stall_time_p95", "stall p95"),
           ("lookups", "on-demand lookups"), ("prefetches", "prefetches"),
           ("prefetch_bytes", "prefetch bytes"), ("wasted_bytes", "wasted bytes"),
           ("prefetch_precision", "precision"), ("prefetch_recall", "recall"),
           ("comm_cost_per_time", "cost / time")]
#: The enrichment model's own figures (issue 29), tabulated for the enrich-* modes only.
MODEL_METRICS = [("prefetch_wait_mean", "wait before a prefetch"),
                 ("stale_uses", "stale uses"), ("cache_evictions", "cache evictions"),
                 ("table_wait_mean", "table queueing"),
                 ("downstream_buffer_peak", "downstream buffer peak"),
                 ("downstream_wait_total", "downstream held time")]
ORDER = {"push": -1, "carried": -1, "on-demand": 0, "predicted": 1, "eager": 2, "oracle": 3}


#: Join operators that may fetch: their switch, its default (the source's protocol),
#: and the name of their fetch options (``<what>_fetch``, ``<what>_ttl``).
FETCHING = {"smj-e": ("plan", "push", "plan"), "smj-h": ("plan", "push", "plan"),
            "ctr": ("routes", "carried", "route")}
#: Extra columns of the join operators' tables.
JOIN_METRICS = [("recall", "answer recall"), ("latency_mean", "latency"),
                ("data_cost", "data cost")]


def mode_label(row: pd.Series) -> str:
    """The mode of a run as the report names it (predicted runs with their confidence;
    a join operator's fetch mode, with its cache time when plans are reused)."""
    if row.get("algorithm") in FETCHING:
        switch, default, what = FETCHING[row["algorithm"]]
        if row.get(switch) == default:
            return default
        ttl = row.get(f"{what}_ttl")
        reused = what == "plan" and not pd.isna(ttl) and ttl > 0
        return f"{row[f'{what}_fetch']}, ttl {ttl:g}" if reused else str(row[f"{what}_fetch"])
    if row["mode"] == "predicted" and not pd.isna(row.get("confidence")):
        return f"predicted (c={row['confidence']:g})"
    return str(row["mode"])


def _with_labels(runs: pd.DataFrame) -> pd.DataFrame:
    runs = runs.copy()
    runs["label"] = [mode_label(r) for _, r in runs.iterrows()]
    confidence = runs["confidence"] if "confidence" in runs else pd.Series(math.nan, runs.index)
    # "on-demand, ttl 1.5" sorts with on-demand
    runs["order"] = [(ORDER.get(lab.split(" ")[0].rstrip(","), 9), 0.0 if pd.isna(c) else c, lab)
                     for c, lab in zip(confidence, runs["label"])]
    # push / carried runs ignore the fetch options: a sweep repeats them, keep one a seed
    # (and a value of every other swept axis: those runs are not repeats)
    return runs.drop_duplicates(["label", *_pair_keys(runs)])


def _pair_keys(runs: pd.DataFrame) -> list[str]:
    """What pairs runs of two modes: the seed and every swept axis that is not an
    algorithm parameter (the parameters make the modes)."""
    return ["seed", *[a for a in report_axes(runs) if not a.startswith("params.")]]


def per_mode(runs: pd.DataFrame, metrics=METRICS, base_label: str = "on-demand"
             ) -> pd.DataFrame:
    """Mean and CI of ``metrics`` per mode and value of every other swept axis (held
    apart, never pooled: the frame's ``attrs["others"]`` names them, ``where`` says
    them), and the stall reduction against ``base_label``'s runs paired by seed and
    those axes (``stall_reduction``, a fraction)."""
    runs = _with_labels(runs)
    keys = _pair_keys(runs)
    others = [k for k in keys if k != "seed"]
    base = runs.loc[runs["label"] == base_label, [*keys, "stall_time_total"]]
    rows = []
    groups = runs.groupby(["label", *others], dropna=False)
    for key, g in sorted(groups, key=lambda kv: (kv[1]["order"].iloc[0],
                                                  *map(plots.value_order, kv[0][1:]))):
        values = dict(zip(others, key[1:]))
        row = {"mode": key[0], **values, "seeds": int(g["seed"].nunique()),
               "where": ", ".join(f"{a} = {v}" for a, v in values.items())}
        for m, _ in metrics:
            if m in g:
                row[m], row[f"{m}_ci95"], _ = mean_ci(g[m])
        paired = g[[*keys, "stall_time_total"]].merge(base, on=keys, suffixes=("", "_base"))
        paired = paired[paired["stall_time_total_base"] > 0]
        row["stall_reduction"], row["stall_reduction_ci95"], _ = mean_ci(
            1.0 - paired["stall_time_total"] / paired["stall_time_total_base"])
        row["exact"] = bool((g["results"] == g["expected_results"]).all()
                            and (g["duplicates"] == 0).all())
        rows.append(row)
    frame = pd.DataFrame(rows)
    frame.attrs["others"] = others
    return frame


def _table(frame: pd.DataFrame, metrics=METRICS) -> str:
    cols = [("mode", "mode"), *[(a, a) for a in frame.attrs.get("others", [])],
            ("seeds", "seeds"), *metrics,
            ("stall_reduction", "stall cut vs on-demand")]
    head = "".join(f"<th>{html.escape(label)}</th>" for _, label in cols)
    body = []
    for _, r in frame.iterrows():
        cells = []
        for c, _ in cols:
            v = r.get(c)
            if c == "stall_reduction":
                cells.append(fmt_ci(100 * v, 100 * r[f"{c}_ci95"], 3) + " %"
                             if not pd.isna(v) else "–")
            elif isinstance(v, float):
                cells.append(fmt_ci(v, r.get(f"{c}_ci95")))
            else:
                cells.append(html.escape(str(v)))
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _scatter(frame: pd.DataFrame, x: str, y: str, xlabel: str, ylabel: str, stem: str,
             out_dir: Path) -> Path:
    styles = plots.algorithm_styles(list(frame["mode"]))
    with matplotlib.rc_context(plots.STYLE):
        fig = Figure(figsize=plots.FIGSIZE, layout="constrained")
        ax = fig.subplots()
        for _, r in frame.iterrows():
            if pd.isna(r.get(x)) or pd.isna(r.get(y)):
                continue
            ax.errorbar(r[x], r[y], xerr=_finite(r.get(f"{x}_ci95")),
                        yerr=_finite(r.get(f"{y}_ci95")), fmt=styles[r["mode"]]["marker"],
                        color=styles[r["mode"]]["color"], label=_mode_at(r), capsize=3)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=7)
    return plots.save(fig, out_dir, f"{PREFIX}_{stem}")


def _mode_at(row) -> str:
    """A mode and, when the study sweeps other axes, where: ``on-demand (variant = a)``."""
    return f"{row['mode']} ({row['where']})" if row.get("where") else row["mode"]


def _finite(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v


def _figure(png: Path, out_dir: Path, caption: str) -> str:
    rel = png.relative_to(out_dir).as_posix()
    return (f'<figure><img src="{html.escape(rel)}" alt="{html.escape(caption)}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>")


def claim_html(frame: pd.DataFrame) -> str:
    """The source's claim beside our numbers for each prefetching mode."""
    items = []
    for _, r in frame[frame["mode"] != "on-demand"].iterrows():
        if pd.isna(r.get("stall_reduction")):
            continue
        wasted = r["wasted_bytes"] / r["prefetch_bytes"] if r.get("prefetch_bytes") else 0.0
        items.append(f"<li>{html.escape(_mode_at(r))}: stalls cut by "
                     f"{fmt_ci(100 * r['stall_reduction'], 100 * r['stall_reduction_ci95'])} %"
                     f", precision {r['prefetch_precision']:.2f}: {100 * wasted:.0f} % of the "
                     f"prefetch bytes fetched rows nobody used</li>")
    exact = "every mode gave on-demand's exact answer in every run" if frame["exact"].all() \
        else "some runs did not give the exact answer (see the table)"
    return ("<p>The source's claim: fetching predicted lookups ahead of need cuts the "
            "stalls of the tuples that need them, at the price of some mispredicted "
            "fetches. Ours, against on-demand fetching paired by seed:</p>"
            f"<ul>{''.join(items)}</ul><p>Prefetching changes timing, never answers: {exact}."
            "</p>")


def same_answers(runs: pd.DataFrame, default: str) -> dict[str, bool]:
    """Per mode: whether every run's result groups equal those of the ``default`` mode's
    run of the same seed and value of every other swept axis (read from the run folders;
    runs without one are skipped)."""
    from experiments.store import Run

    runs = _with_labels(runs)
    have = runs[runs["run_dir"].map(lambda p: isinstance(p, str))] if "run_dir" in runs \
        else runs.iloc[0:0]
    keys = _pair_keys(runs)
    groups = {(r["label"], *(r[k] for k in keys)): set(Run(Path(r["run_dir"])).results["group"])
              for _, r in have.iterrows()}
    out = {}
    for (label, *key), g in groups.items():
        ref = groups.get((default, *key))
        out[label] = out.get(label, True) and ref is not None and g == ref
    return out


def _per_result(metrics: list, runs: pd.DataFrame) -> list:
    """``metrics`` with cost per result after cost per time when a swept axis of
    ``runs`` changes the exact answer."""
    if COST_PER_RESULT not in runs or not answer_changes(runs):
        return metrics
    at = [m for m, _ in metrics].index("comm_cost_per_time") + 1
    return [*metrics[:at], (COST_PER_RESULT, "cost / result"), *metrics[at:]]


def join_section(runs: pd.DataFrame, algorithm: str, out_dir: Path) -> str:
    """The part on one join operator's lookups ("" when none of its runs fetches)."""
    switch, default, what = FETCHING[algorithm]
    mine = with_cost_per_result(runs[runs["algorithm"] == algorithm])
    if switch not in mine or not (mine[switch] != default).any():
        return ""
    metrics = _per_result([m for m in METRICS if m[0] != "comm_cost_per_time"]
                          + JOIN_METRICS + [("comm_cost_per_time", "cost / time")], mine)
    frame = per_mode(mine, metrics)
    same = same_answers(mine, default)
    checked = [m for m in frame["mode"] if m in same]
    verdict = (f"every run's result groups equal the {default} run's of its seed"
               if checked and all(same[m] for m in checked) else
               "some runs' result groups differ from the " + default + " run's of their "
               "seed: " + ", ".join(m for m in checked if not same[m]))
    what_text = {"plan": "SMJ sites fetch their block's plan (filter and visiting order) "
                 "from the synopsis center instead of having it pushed. Stall = how long "
                 "a closed block waited for its plan (pushed plans too)",
                 "route": "CTR hop-1 hosts fetch the rest of a segment's route from the "
                 "diffusion node instead of the segment carrying it. Stall = how long a "
                 "hop-1 probe's partial results waited for the route"}[what]
    stem = f"{algorithm}_stall_vs_cost"
    fig = _figure(_scatter(frame, "comm_cost_per_time", "stall_time_total",
                           "communication cost per time unit", "stall time, total",
                           stem, Path(out_dir) / "figures"), Path(out_dir),
                  f"{algorithm}: total stall time vs communication cost per mode; "
                  "bars: 95 % CI over seeds")
    return (f"<h3>{html.escape(algorithm)}: {what}s fetched as lookups</h3>"
            f"<p>{html.escape(what_text)}.</p>" + _table(frame, metrics) +
            f"<p>Fetching changes timing, never answers: {html.escape(verdict)}.</p>" + fig)


def section(runs: pd.DataFrame, run_dirs: list[Path], out_dir: Path) -> str:
    """The enrichment family's HTML fragment (figures written into ``out_dir/figures``)."""
    out_dir = Path(out_dir)
    joins = [join_section(runs, a, out_dir) for a in sorted(FETCHING)
             if a in set(runs["algorithm"])]
    runs = with_cost_per_result(runs[runs["algorithm"].str.startswith("enrich-")])
    if runs.empty:
        return "\n".join(j for j in joins if j)
    metrics = _per_result(METRICS, runs) + [m for m in MODEL_METRICS if m[0] in runs]
    frame = per_mode(runs, metrics)
    parts = ["<p>Each tuple is enriched with a row of a table held at a remote node. "
             "Stall = how long a tuple waited for its row at the enrichment node. Prefetch "
             "bytes count each request and reply once; wasted bytes are those of prefetched "
             "rows never used. Precision = used ÷ arrived prefetches; recall = tuples served "
             "by a prefetched row ÷ tuples. A stale use enriched a tuple with a row the "
             "table had since updated; the downstream buffer holds tuples enriched behind "
             "an earlier one still waiting (an in-order operator).</p>",
             _table(frame, metrics), claim_html(frame)]
    figures = out_dir / "figures"
    parts.append(_figure(_scatter(frame, "prefetch_bytes", "stall_time_total",
                                  "prefetch bytes per run [B]", "stall time, total [time units]",
                                  "stall_vs_bytes", figures), out_dir,
                         "Total stall time vs prefetch bytes per mode; bars: 95 % CI over seeds"))
    if frame["prefetch_precision"].notna().any():
        parts.append(_figure(_scatter(frame, "prefetch_recall", "prefetch_precision",
                                      "recall (tuples served by a prefetch)",
                                      "precision (prefetches used)", "precision_recall",
                                      figures), out_dir,
                             "Prefetch precision vs recall per mode; bars: 95 % CI over seeds"))
    return "\n".join(parts + [j for j in joins if j])
