"""QJoin report, statistics: means with 95 % confidence intervals over seeds, paired
reductions against MP-K-slack, K-slack and hindsight tables, context figures."""
from __future__ import annotations


import numpy as np
import pandas as pd

from analysis.axes import report_axes
from analysis.qjoin_data import is_nan, variant_label
from analysis.stats import mean_ci
from experiments.store import Run


def summary_table(info: pd.DataFrame) -> pd.DataFrame:
    """Per variant and Q_user: mean and CI of the headline metrics."""
    metrics = ["recall", "recall_period_mean", "recall_period_min",
               "recall_target_met_fraction", "latency_join_mean", "latency_join_p95",
               "latency_mean", "latency_p95", "memory", "memory_steady", "memory_peak_tuples",
               "memory_vs_hindsight", "q_estimate_error_mean"]
    info = info.assign(variant=[variant_label(r) for _, r in info.iterrows()])
    rows = []
    for (scn, variant, q), g in info.groupby(["scenario", "variant", "q_user"], dropna=False,
                                             sort=True):
        row = {"scenario": scn, "variant": variant, "q_user": q,
               "seeds": int(g["seed"].nunique())}
        for m in metrics:
            if m in g.columns:
                mean, ci, _ = mean_ci(g[m])
                row[m] = mean
                row[f"{m}_ci95"] = ci
        rows.append(row)
    return pd.DataFrame(rows)


def reductions(info: pd.DataFrame) -> pd.DataFrame:
    """QJoin's reduction vs MP-K-slack, paired by seed at the same value of every other
    swept axis (and Q_user): ``1 - qjoin/mp``.

    For every QJoin variant (``L``, ``spend``) and ``Q_user``, the MP-K-slack run of the
    same seed and ``Q_user`` (its figures do not depend on ``Q_user``; the grid just
    repeats it). ``latency_join`` is the source's measure (at the join node),
    ``latency`` end to end.
    """
    q = info[info["algorithm"] == "qjoin"]
    mp = info[info["algorithm"] == "mp-k-slack"]
    if q.empty or mp.empty:
        return pd.DataFrame()
    others = other_axes(info)
    keys = ["scenario", *others, "seed"]
    mp_by_seed = mp.groupby(keys, dropna=False)[["latency_mean", "latency_join_mean",
                                                 "memory", "memory_steady"]].mean()
    q = q.assign(variant=[variant_label(r) for _, r in q.iterrows()])
    rows = []
    for key, g in q.groupby(["scenario", *others, "variant", "params.qjoin.L", "q_user"],
                            dropna=False):
        scn, *values, variant, L, qu = key
        paired = g.join(mp_by_seed, on=keys, rsuffix="_mp", how="inner")
        if paired.empty:
            continue
        row = {"scenario": scn, **dict(zip(others, values)), "variant": variant, "L": L,
               "q_user": qu, "pairs": len(paired)}
        for name, col in (("latency", "latency_mean"), ("latency_join", "latency_join_mean"),
                          ("memory", "memory"), ("memory_steady", "memory_steady")):
            red = 1 - paired[col] / paired[f"{col}_mp"]
            row[f"{name}_reduction"], row[f"{name}_reduction_ci95"], _ = mean_ci(red)
        rows.append(row)
    return pd.DataFrame(rows)


def other_axes(info: pd.DataFrame) -> list[str]:
    """The swept axes every QJoin table holds apart (the radio, the mobility, ...): the
    report splits its named variants before this section, and parameters are the
    algorithms' own."""
    return [a for a in report_axes(info) if a != "variant" and not a.startswith("params.")]


def kslack_table(info: pd.DataFrame) -> pd.DataFrame:
    """K-slack's recall, latency and memory for each K and value of every other swept
    axis (:func:`other_axes`, columns of the table), over seeds."""
    k = info[info["algorithm"] == "k-slack"]
    others = other_axes(info)
    rows = []
    for key, g in k.groupby([*others, "params.k-slack.K"], dropna=False):
        # one row per seed: a grid over Q_user repeats the same K-slack run
        g = g.groupby("seed")[["recall", "recall_period_min", "latency_mean",
                               "latency_join_mean", "memory"]].mean().reset_index()
        row = {**dict(zip(others, key[:-1])), "K": key[-1],
               "seeds": int(g["seed"].nunique())}
        for m in ("recall", "recall_period_min", "latency_mean", "latency_join_mean", "memory"):
            row[m], row[f"{m}_ci95"], _ = mean_ci(g[m])
        rows.append(row)
    return pd.DataFrame(rows)


def hindsight_table(info: pd.DataFrame) -> pd.DataFrame:
    """QJoin's memory after the first period over the hindsight-minimal buffers', per
    disorder, variant and Q_user."""
    q = info[info["algorithm"] == "qjoin"]
    if "memory_vs_hindsight" not in q.columns:
        return pd.DataFrame()
    q = q.assign(variant=[variant_label(r) for _, r in q.iterrows()])
    rows = []
    for (scn, variant, qu), g in q.groupby(["scenario", "variant", "q_user"], dropna=False):
        row = {"scenario": scn, "variant": variant, "q_user": qu}
        for m in ("memory_steady", "hindsight_memory_tuples", "memory_vs_hindsight",
                  "recall_target_met_fraction", "recall_period_min"):
            if m in g.columns:
                row[m], row[f"{m}_ci95"], _ = mean_ci(g[m])
        rows.append(row)
    return pd.DataFrame(rows)


def context_numbers(info: pd.DataFrame) -> dict:
    """Figures that explain the gaps: network transit, the window's share of memory,
    MP-K-slack's final K (means over runs, one per seed and algorithm)."""
    out = {}
    runs = info.drop_duplicates("run_id")
    q = runs[runs["algorithm"] == "qjoin"]
    mp = runs[runs["algorithm"] == "mp-k-slack"]
    if not q.empty:
        out["transit"] = float((q["latency_mean"] - q["latency_join_mean"]).mean())
    floors = []
    for _, r in runs[runs["dir"].notna()].iterrows():
        spec = Run(r["dir"]).spec
        w, dur = spec["query"]["window"], spec["run"]["duration"]
        if w is not None and "tuples_arrived" in r and not is_nan(r["tuples_arrived"]):
            floors.append(w * r["tuples_arrived"] / dur)
    if floors:
        out["floor"] = float(np.mean(floors))
    if not mp.empty:
        out["mp_memory"] = float(mp["memory"].mean())
        if "K_final" in mp.columns:
            out["mp_k"] = float(pd.to_numeric(mp["K_final"], errors="coerce").mean())
    if not q.empty:
        out["q_memory"] = float(q["memory"].mean())
    return out
