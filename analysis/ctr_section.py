"""Report section of the ATR/CTR family (docs/ALGORITHMS.md#atr-and-ctr): ATR vs CTR vs one host.

* Overhead — extra tuples per time unit, measured vs predicted (Theorem B for ATR,
  Theorem D for CTR with the measured ``M_i``, ``M_ik`` and selectivities).
* Communication cost, per-host load imbalance (max/mean of join work), memory per host,
  results per time unit and recall, per configuration; cost per result group too when a
  swept axis changes the exact answer (:mod:`analysis.answers`).
* Figure: communication cost per time unit vs number of hosts, one panel per (streams,
  window), single host as the reference.
* The source's rule of thumb — ATR for one fast stream with small windows, CTR for
  similar rates and large windows — checked on communication cost per configuration,
  once per CTR storage mode (``params.ctr.store``: the source's ``cover`` and the
  reconstructed ``llf``) when the runs hold both.

CTR runs are labelled by their storage mode (``ctr (cover)``, ``ctr (llf)``) wherever
the runs hold more than one; otherwise simply ``ctr``.

Runs that differ only in the parameter table of another algorithm (the sweep is a
cartesian product) are the same run: rows are averaged per configuration and seed first.

Example
-------
>>> rule_class(skew=4.0, window=0.5, small=1.0)
'atr'
>>> rule_class(skew=1.0, window=4.0, small=1.0), rule_class(skew=1.0, window=0.5, small=1.0)
('ctr', None)
>>> ctr_label("ctr", "llf", several=True), ctr_label("atr", None, several=True)
('ctr (llf)', 'atr')
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
from analysis.algorithm_params import run_param
from analysis.answers import COST_PER_RESULT, answer_changes, with_cost_per_result
from analysis.axes import report_axes, sort_by_axes
from experiments.store import Run, is_run_folder

PREFIX = "ctr"
ALGORITHMS = ("atr", "ctr", "single-host")
#: A rate ratio (fastest / slowest) above this counts as "one fast stream".
SKEWED = 2.0
CONFIG = ["n", "window", "skew", "hosts"]


def _e(x) -> str:
    return html.escape(str(x))


def _median(values: pd.Series) -> float:
    """Median of the values present; NaN (and no numpy warning) when none is.

    >>> _median(pd.Series([np.nan, 2.0, 4.0])), _median(pd.Series([np.nan]))
    (3.0, nan)
    """
    values = values.dropna()
    return float(values.median()) if len(values) else math.nan


def _num(x, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, float) and math.isinf(x):
        return "∞"
    return f"{x:.{digits}g}" if isinstance(x, float) else str(x)


def rule_class(skew: float, window: float, small: float) -> str | None:
    """Which scheme the source's rule of thumb recommends, or None if it says nothing.

    ``small``: the largest window that counts as small.
    """
    if skew >= SKEWED and window <= small:
        return "atr"
    if skew < SKEWED and window > small:
        return "ctr"
    return None


def ctr_label(algorithm: str, store: str | None, several: bool) -> str:
    """The scheme a run belongs to: CTR split by storage mode when ``several`` are run."""
    return f"{algorithm} ({store})" if algorithm == "ctr" and several and store else algorithm


def _is_ctr(label: str) -> bool:
    return label == "ctr" or label.startswith("ctr (")


def _spec_of(run_dir: Path | None) -> dict:
    if run_dir is None or not is_run_folder(run_dir):
        return {}
    return Run(run_dir).spec


def run_info(runs: pd.DataFrame, run_dirs: list[Path]) -> pd.DataFrame:
    """``runs`` plus ``n`` (streams), ``window`` (largest), ``skew`` (rate ratio),
    ``hosts`` (hosts used; 1 for single-host) and ``store`` (CTR's storage mode), from
    swept columns or ``spec.json``; CTR's ``algorithm`` is labelled by :func:`ctr_label`."""
    dirs = {Path(d).name: Path(d) for d in run_dirs}
    rows = []
    for _, r in runs.iterrows():
        folder = dirs.get(r["run_id"])
        spec = _spec_of(folder)
        resolved = Run(folder).resolved if spec else {}
        store = r["params.ctr.store"] if "params.ctr.store" in runs.columns else \
            run_param(resolved, spec, "ctr", "store")
        streams = spec.get("streams", {})
        n = r["streams.count"] if "streams.count" in runs.columns else streams.get("count")
        if "query.window" in runs.columns:
            w = r["query.window"]
        else:
            q = spec.get("query", {})
            w = max([v for v in q.get("windows", {}).values() if v is not None]
                    + [q.get("window")] if q.get("window") is not None else [math.inf])
        w = math.inf if w is None or w == "none" else float(w)
        rate = streams.get("rate", 1.0)
        skew = max(rate) / min(rate) if isinstance(rate, list) else 1.0
        if "rate_skew" in runs.columns and not pd.isna(r["rate_skew"]):
            skew = float(r["rate_skew"])
        hosts = r["hosts_used"] if "hosts_used" in runs.columns and \
            not pd.isna(r.get("hosts_used")) else 1
        rows.append({"n": None if n is None else int(n), "window": w, "skew": float(skew),
                     "hosts": int(hosts), "store": store if r["algorithm"] == "ctr" else None})
    info = pd.concat([runs.reset_index(drop=True), pd.DataFrame(rows)], axis=1)
    several = info.loc[info["algorithm"] == "ctr", "store"].nunique() > 1
    info["algorithm"] = [ctr_label(a, st, several)
                         for a, st in zip(info["algorithm"], info["store"])]
    return info


METRICS = ["overhead_measured", "overhead_predicted", "overhead_predicted_from_spec",
           "ctr_M_mean", "ctr_M_predicted", "comm_cost_per_time", COST_PER_RESULT,
           "host_load_imbalance", "host_memory_mean_tuples", "host_memory_peak_tuples",
           "results_per_time", "recall", "duplicates", "late_tuples", "wall_seconds"]


def other_axes(runs: pd.DataFrame) -> list[str]:
    """The swept axes beyond the source's configuration (streams, window, CTR's store,
    the algorithm): a study's own (a variant, mobility, the radio, ...), held apart in
    every table of the section."""
    return [a for a in report_axes(runs)
            if a not in ("algorithm.name", "streams.count", "query.window")
            and not a.startswith("params.ctr.")]


def configurations(info: pd.DataFrame, others: list[str] = ()) -> pd.DataFrame:
    """Mean of :data:`METRICS` per (algorithm, configuration, value of each of
    ``others``), after merging repeats of the same run (same configuration and seed)."""
    present = [m for m in METRICS if m in info.columns]
    keys = ["algorithm", *CONFIG, *others]
    per_seed = info.groupby([*keys, "seed"], dropna=False)[present].mean()
    out = per_seed.groupby(keys, dropna=False).mean()
    out["seeds"] = per_seed.groupby(keys, dropna=False).size()
    return out.reset_index()


def _table(frame: pd.DataFrame, columns: list[tuple[str, str]]) -> str:
    head = "".join(f"<th>{_e(label)}</th>" for _, label in columns)
    body = []
    for _, r in frame.iterrows():
        body.append("<tr>" + "".join(f"<td>{_e(_num(r[c]) if c in r else '–')}</td>"
                                     for c, _ in columns) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def rule_of_thumb(conf: pd.DataFrame, ctr: str = "ctr",
                  others: list[str] = ()) -> tuple[pd.DataFrame, float]:
    """Per (streams, window, skew, hosts, value of each of ``others``): ATR's and the CTR
    scheme ``ctr``'s cost and overhead, the winner (lower communication cost), the
    rule's recommendation and whether it held. Returns ``(table, small)``; ``small`` is
    the smallest window in the runs."""
    windows = sorted(w for w in conf["window"].unique() if math.isfinite(w))
    small = windows[0] if windows else 0.0
    rows = []
    both = conf[conf["algorithm"].isin(["atr", ctr])]
    for key, g in both.groupby([*CONFIG, *others], dropna=False):
        n, w, skew, hosts = key[:4]
        by = g.set_index("algorithm")
        if not {"atr", ctr} <= set(by.index):
            continue
        cost, over = by["comm_cost_per_time"], by["overhead_measured"]
        winner = "atr" if cost["atr"] <= cost[ctr] else "ctr"
        rec = rule_class(skew, w, small)
        rows.append({"n": n, "window": w, "skew": skew, "hosts": hosts,
                     **dict(zip(others, key[4:])), "atr_cost": cost["atr"], "ctr_cost": cost[ctr],
                     "atr_overhead": over["atr"], "ctr_overhead": over[ctr],
                     "winner": winner, "rule": rec or "(no claim)",
                     "holds": "–" if rec is None else ("yes" if rec == winner else "no")})
    return pd.DataFrame(rows), small


def figure_cost_vs_hosts(conf: pd.DataFrame, out_dir: Path) -> Path:
    """Communication cost per time unit vs hosts, one panel per (streams, window)."""
    panels = sorted({(n, w) for n, w in zip(conf["n"], conf["window"])},
                    key=lambda p: (p[0], p[1]))
    schemes = [a for a in sorted(conf["algorithm"].unique()) if a != "single-host"]
    styles = plots.algorithm_styles(schemes)
    with matplotlib.rc_context(plots.STYLE):
        fig = Figure(figsize=(plots.FIGSIZE[0] * len(panels), plots.FIGSIZE[1]),
                     layout="constrained")
        axes = fig.subplots(1, len(panels), squeeze=False, sharey=True)[0]
        for ax, (n, w) in zip(axes, panels):
            sub = conf[(conf["n"] == n) & (conf["window"] == w)]
            for alg in schemes:
                g = sub[sub["algorithm"] == alg].groupby("hosts")["comm_cost_per_time"].mean()
                if len(g):
                    ax.plot(g.index, g.values, label=alg, **styles[alg])
            single = sub[sub["algorithm"] == "single-host"]["comm_cost_per_time"]
            if len(single):
                ax.axhline(float(single.mean()), color="grey", linestyle=":", label="one host")
            ax.set_xscale("log", base=2)
            ax.set_xlabel("hosts")
            ax.set_ylabel("cost per time unit")
            ax.set_title(f"{n} streams, window {w:g}")
            ax.legend()
    return plots.save(fig, out_dir, f"{PREFIX}_cost_vs_hosts")


def section(runs: pd.DataFrame, run_dirs: list[Path], out_dir: Path) -> str:
    """The ATR/CTR family's HTML fragment (figures written into ``out_dir/figures``)."""
    out_dir = Path(out_dir)
    runs = with_cost_per_result(runs)
    info = run_info(runs, run_dirs)
    others = other_axes(info)
    conf = configurations(info, others)
    parts = [("<p>Overhead = extra tuples per time unit beyond the input (replicated "
              "base tuples; for CTR also intermediate results). Predicted: Theorem B for "
              "ATR, Theorem D for CTR with measured M<sub>i</sub>, M<sub>ik</sub> and "
              "selectivities, and Theorem D from the spec alone. M = copies of a base "
              "tuple. Imbalance = max/mean over hosts.</p>")]
    cols = [("algorithm", "algorithm"), ("n", "streams"), ("window", "window"),
            ("skew", "rate skew"), ("hosts", "hosts"), *[(a, a) for a in others],
            ("seeds", "seeds"),
            ("overhead_measured", "overhead measured"),
            ("overhead_predicted", "overhead predicted (measured M)"),
            ("overhead_predicted_from_spec", "overhead predicted (spec)"),
            ("ctr_M_mean", "M measured"), ("ctr_M_predicted", "M predicted"),
            ("comm_cost_per_time", "cost / time"),
            *([(COST_PER_RESULT, "cost / result")] if answer_changes(runs) else []),
            ("host_load_imbalance", "load imbalance"),
            ("host_memory_mean_tuples", "memory / host (mean)"),
            ("host_memory_peak_tuples", "memory / host (peak)"),
            ("results_per_time", "results / time"), ("recall", "recall"),
            ("duplicates", "duplicates"), ("late_tuples", "late tuples")]
    ordered = sort_by_axes(conf, ["n", "window", "skew", *others, "algorithm", "hosts"])
    parts.append("<h3>Per configuration</h3>" + _table(ordered, cols))
    schemes = [a for a in sorted(conf["algorithm"].unique()) if a != "single-host"]
    dist = conf[conf["algorithm"].isin(schemes)]
    if len(dist) and "overhead_predicted" in dist:
        ratio = (dist["overhead_measured"] / dist["overhead_predicted"]).replace(
            [np.inf, -np.inf], np.nan)
        parts.append("<p>Measured / predicted overhead: " + ", ".join(
            f"{alg} median {_num(_median(ratio[dist['algorithm'] == alg]))}"
            for alg in schemes) + ".</p>")
    prior = (dist["overhead_measured"] / dist["overhead_predicted_from_spec"]).replace(
        [np.inf, -np.inf], np.nan) if "overhead_predicted_from_spec" in dist else None
    # runs the spec-based model does not cover (e.g. triggered segments) have no ratio
    predicted = [a for a in schemes if _is_ctr(a) and prior is not None
                 and prior[dist["algorithm"] == a].notna().any()]
    if predicted:
        parts.append(
            "<p>CTR's Theorem D above uses M<sub>i</sub> and M<sub>ik</sub> measured in the "
            "same run, so its agreement is partly circular. Predicted before the run from "
            "the spec alone (rates, windows, σ of the key distribution, segment length, "
            "host count and a placement model, see "
            "<code>spark_nodes/algorithms/ctr/overhead.py</code>)"
            ", measured / predicted: " + ", ".join(
                f"{alg} median {_num(float(prior[dist['algorithm'] == alg].median()))}"
                f" (range {_num(float(prior[dist['algorithm'] == alg].min()))}–"
                f"{_num(float(prior[dist['algorithm'] == alg].max()))})"
                for alg in predicted) + ".</p>")
    if conf["n"].notna().any() and "comm_cost_per_time" in conf:
        png = figure_cost_vs_hosts(conf, out_dir / "figures")
        rel = png.relative_to(out_dir).as_posix()
        pooled = f" Means over {', '.join(others)}." if others else ""
        parts.append(f'<figure><img src="{_e(rel)}" alt="cost vs hosts">'
                     "<figcaption>Communication cost per time unit vs hosts."
                     f"{_e(pooled)}</figcaption></figure>")
    for ctr in (a for a in schemes if _is_ctr(a)):
        parts.append(_rule_html(conf, ctr, others))
    return "\n".join(parts)


def _rule_html(conf: pd.DataFrame, ctr: str, others: list[str] = ()) -> str:
    """The rule-of-thumb table of ATR against the CTR scheme ``ctr``."""
    parts = []
    rule, small = rule_of_thumb(conf, ctr, others)
    if len(rule):
        title = "Rule of thumb" + (f" — ATR vs {ctr}" if ctr != "ctr" else "")
        parts.append(f"<h3>{_e(title)}</h3><p>ATR for one fast stream (rate skew ≥ "
                     f"{SKEWED:g}) with small windows (≤ {small:g}); CTR for similar rates "
                     "with large windows. Winner = lower communication cost.</p>")
        claims = rule[rule["holds"] != "–"]
        if len(claims):
            parts.append(f"<p>The rule held in {int((claims['holds'] == 'yes').sum())} of "
                         f"{len(claims)} configurations where it makes a claim.</p>")
        parts.append(_table(rule, [("n", "streams"), ("window", "window"),
                                   ("skew", "rate skew"), ("hosts", "hosts"),
                                   *[(a, a) for a in others],
                                   ("atr_cost", "ATR cost / time"),
                                   ("ctr_cost", "CTR cost / time"),
                                   ("atr_overhead", "ATR overhead"),
                                   ("ctr_overhead", "CTR overhead"), ("winner", "winner"),
                                   ("rule", "rule says"), ("holds", "holds")]))
    return "\n".join(parts)
