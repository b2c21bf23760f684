"""Report section of the SMJ family: the paper's figures and claims beside ours.

* Figure 1 — communication cost per time unit vs number of sources, one panel per
  window (with / without), mean and 95 % CI over seeds; a second row with cost per
  result group when a swept axis changes the exact answer (:mod:`analysis.answers`),
  and cost per result in the breakdown table then too.
* Figure 2 — cost per time unit vs time for the largest number of sources of each
  window, mean and 95 % band over seeds.
* Reductions vs Lottery (paired by seed) beside the source's claims, with the gap.
* SMJE's and SMJH's cost relative to the hindsight bound (every block on the order that
  is cheapest given exact join sizes), and the cost breakdown.

Example
-------
>>> claims_text("smj-h", None)
'20–40%'
"""
from __future__ import annotations

import html
import math
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from analysis import plots
from analysis.answers import COST_PER_RESULT, answer_changes, with_cost_per_result
from analysis.axes import report_axes, sort_by_axes
from analysis.compare import pairs
from experiments.store import Run
from analysis.stats import ci_halfwidth, mean_band

ALGORITHMS = ("smj-e", "smj-h", "lottery", "naive")
#: Cost reduction vs Lottery claimed by the source: (no window, window), as fractions.
CLAIMS = {"smj-h": ((0.20, 0.40), (0.50, 0.70)), "smj-e": ((0.40, 0.60), (0.60, 0.85))}
PREFIX = "smj"


def claims_text(algorithm: str, window) -> str:
    """The source's claimed reduction range for ``algorithm`` with/without a window."""
    lo, hi = CLAIMS[algorithm][0 if window is None else 1]
    return f"{lo:.0%}–{hi:.0%}".replace("%–", "–")


def _e(x) -> str:
    return html.escape(str(x))


def _window_label(w) -> str:
    return "no window" if w is None else f"window {w:g}"


def run_info(runs: pd.DataFrame, run_dirs: list[Path]) -> pd.DataFrame:
    """``runs`` with columns ``n`` (sources), ``window`` (None = none) and ``dir``.

    Swept columns are used where present, else each run's ``spec.json``."""
    dirs = {Path(d).name: Path(d) for d in run_dirs}
    rows = []
    for _, r in runs.iterrows():
        d = dirs.get(r["run_id"])
        spec = Run(d).spec if d is not None else {}
        n = r.get("streams.count", spec.get("streams", {}).get("count"))
        w = r["query.window"] if "query.window" in runs.columns \
            else spec.get("query", {}).get("window")
        if isinstance(w, str):
            w = None if w == "none" else float(w)
        elif w is not None and (isinstance(w, float) and math.isnan(w)):
            w = None
        rows.append({"n": None if n is None else int(n), "window": w, "dir": d})
    info = pd.DataFrame(rows, index=runs.index)
    info["window"] = pd.Series([r["window"] for r in rows], index=runs.index, dtype=object)
    out = pd.concat([runs.drop(columns=["n", "window", "dir"], errors="ignore"), info], axis=1)
    out["wkey"] = out["window"].map(lambda w: -1.0 if w is None else float(w))
    return out


def _mean_ci(values) -> tuple[float, float]:
    arr = np.asarray(list(values), dtype=float)
    arr = arr[~np.isnan(arr)]
    return (float(arr.mean()) if arr.size else math.nan), ci_halfwidth(arr)


def figure_cost_vs_sources(info: pd.DataFrame, out_dir: Path,
                           per_result: bool = False) -> Path:
    """Figure 1: cost per time unit vs sources, one panel per window; with
    ``per_result``, a second row of cost per result group."""
    windows = sorted(info["wkey"].unique(), reverse=True)
    styles = plots.algorithm_styles(list(info["algorithm"].unique()))
    rows = [("comm_cost_per_time", "cost per time unit")]
    if per_result:
        rows.append((COST_PER_RESULT, "cost per result group"))
    with matplotlib.rc_context(plots.STYLE):
        fig = Figure(figsize=(plots.FIGSIZE[0] * len(windows), plots.FIGSIZE[1] * len(rows)),
                     layout="constrained")
        grid = fig.subplots(len(rows), len(windows), squeeze=False)
        for axes, (metric, ylabel) in zip(grid, rows):
            for ax, wk in zip(axes, windows):
                part = info[info["wkey"] == wk]
                for alg in [a for a in ALGORITHMS if a in set(part["algorithm"])]:
                    g = part[part["algorithm"] == alg].groupby("n")[metric]
                    stats = g.agg(lambda v: _mean_ci(v)[0]), g.agg(lambda v: _mean_ci(v)[1])
                    ax.errorbar(stats[0].index, stats[0].values,
                                yerr=stats[1].fillna(0).values, label=alg, capsize=3,
                                **styles[alg])
                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
                ax.set_xlabel("number of sources")
                ax.set_ylabel(ylabel)
                ax.set_yscale("log")
                ax.set_title(_window_label(None if wk < 0 else wk))
                ax.legend()
    return plots.save(fig, out_dir / "figures", f"{PREFIX}_fig1_cost_vs_sources")


def cost_over_time(ledger: pd.DataFrame, end: float, width: float = 1.0) -> np.ndarray:
    """Cost per time unit in bins of ``width`` over ``[0, end)``.

    >>> cost_over_time(pd.DataFrame({"time": [0.5, 0.7, 2.1], "cost": [1., 2., 4.]}), 3.0)
    array([3., 0., 4.])
    """
    edges = np.arange(0.0, end + 1e-9, width)
    sums, _ = np.histogram(ledger["time"], bins=edges, weights=ledger["cost"])
    return sums / width


def figure_cost_vs_time(info: pd.DataFrame, out_dir: Path) -> tuple[Path, list[str]]:
    """Figure 2: cost per time unit vs time (largest n of each window)."""
    windows = sorted(info["wkey"].unique(), reverse=True)
    styles = plots.algorithm_styles(list(info["algorithm"].unique()))
    notes = []
    with matplotlib.rc_context(plots.STYLE):
        fig = Figure(figsize=(plots.FIGSIZE[0] * len(windows), plots.FIGSIZE[1]),
                     layout="constrained")
        axes = fig.subplots(1, len(windows), squeeze=False)[0]
        for ax, wk in zip(axes, windows):
            part = info[(info["wkey"] == wk) & info["dir"].notna()]
            if part.empty:
                continue
            n = int(part["n"].max())
            part = part[part["n"] == n]
            notes.append(f"{_window_label(None if wk < 0 else wk)}: {n} sources")
            for alg in [a for a in ALGORITHMS if a in set(part["algorithm"])]:
                rows = part[part["algorithm"] == alg]
                ledgers = [Run(d).table("ledger", ["time", "cost"])
                           for d in rows["dir"]]
                # the last period's blocks travel after the run's duration: keep them
                end = max([float(rows["duration"].max())]
                          + [math.ceil(float(x["time"].max())) for x in ledgers if len(x)])
                curves = [cost_over_time(x, end) for x in ledgers]
                mean, half = mean_band(np.vstack(curves))
                x = np.arange(len(mean)) + 0.5
                ax.plot(x, mean, label=alg, color=styles[alg]["color"])
                ax.fill_between(x, mean - np.nan_to_num(half), mean + np.nan_to_num(half),
                                color=styles[alg]["color"], alpha=0.2)
            ax.set_xlabel(plots.TIME_LABEL)
            ax.set_ylabel("cost per time unit [cost / time unit]")
            ax.set_ylim(bottom=0)
            ax.set_title(f"{_window_label(None if wk < 0 else wk)}, {n} sources")
            ax.legend()
    return plots.save(fig, out_dir / "figures", f"{PREFIX}_fig2_cost_vs_time"), notes


#: The paper's own axes (the number of sources and the window): every other swept axis
#: is held too when SMJ's runs are paired with Lottery's.
PAPER_AXES = ("streams.count", "query.window")

#: A paired recall change below this (half a percentage point) is a fall: a saving
#: bought with lost results is never said to be within the claim.
RECALL_FELL = -0.005


def other_axes(info: pd.DataFrame) -> list[str]:
    """The swept axes of ``info`` besides the paper's (and the algorithm's name), in
    column order.

    >>> other_axes(pd.DataFrame({"algorithm": ["a", "b"], "streams.count": [2, 3],
    ...                          "mobility.speed_mean": [0.1, 0.2]}))
    ['mobility.speed_mean']
    """
    return [a for a in report_axes(info) if a not in PAPER_AXES]


def reductions(info: pd.DataFrame) -> pd.DataFrame:
    """Per (window, n, every other swept axis, algorithm): mean and CI of
    ``1 - cost / cost_lottery`` paired by seed at the same value of every axis, and the
    mean paired change of recall (``recall_change``; NaN without recall)."""
    axes = ["wkey", "n", *other_axes(info)]
    cost = pairs(info, "algorithm", "lottery", axes, "comm_cost_per_time")
    cost = cost[cost["base"] > 0].assign(reduction=lambda t: 1.0 - t["value"] / t["base"])
    recall = pairs(info, "algorithm", "lottery", axes, "recall") \
        if "recall" in info.columns else None
    rows = []
    for key, g in cost.groupby([*axes, "algorithm"], dropna=False, sort=False):
        record = dict(zip([*axes, "algorithm"], key))
        m, h = _mean_ci(g["reduction"])
        change = math.nan
        if recall is not None:
            mask = recall["algorithm"] == record["algorithm"]
            for a in axes:
                mask &= (recall[a] == record[a]) | (recall[a].isna() & pd.isna(record[a]))
            change = float(recall.loc[mask, "diff"].mean()) if mask.any() else math.nan
        rows.append({**record, "reduction": m, "ci95": h, "seeds": len(g),
                     "recall_change": change})
    table = pd.DataFrame(rows, columns=[*axes, "algorithm", "reduction", "ci95", "seeds",
                                        "recall_change"])
    return sort_by_axes(table, [*axes, "algorithm"]).reset_index(drop=True)


def _setting(row, axes: list[str]) -> str:
    """``n=3`` and the other axes' values of a reductions row."""
    return ", ".join([f"n={int(row['n'])}"] + [f"{a}={row[a]}" for a in axes])


def _pct(x) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.0f}%"


def claims_table(red: pd.DataFrame) -> tuple[str, list[str]]:
    """HTML table of our reduction ranges beside the source's, and sentences on gaps.

    A range inside the claim is called "within the claim" only when recall did not fall
    against Lottery (:data:`RECALL_FELL`); else the fall is named beside it."""
    lines, notes = [], []
    axes = [c for c in red.columns if c not in ("wkey", "n", "algorithm", "reduction",
                                                 "ci95", "seeds", "recall_change")]
    for wk in sorted(red["wkey"].unique(), reverse=True):
        window = None if wk < 0 else wk
        for alg in ("smj-h", "smj-e"):
            part = red[(red["wkey"] == wk) & (red["algorithm"] == alg)]
            if part.empty:
                continue
            lo, hi = float(part["reduction"].min()), float(part["reduction"].max())
            plo, phi = CLAIMS[alg][0 if window is None else 1]
            fell = float(part["recall_change"].min())
            fell = fell if fell < RECALL_FELL else None
            if lo > phi:
                gap = f"above the claim by {100 * (lo - phi):.0f}–{100 * (hi - phi):.0f} points"
            elif hi < plo:
                gap = f"below the claim by {100 * (plo - hi):.0f}–{100 * (plo - lo):.0f} points"
            elif lo >= plo and hi <= phi:
                gap = "within the claim" if fell is None else "in the claimed range"
            else:
                gap = (f"overlaps the claim (ours {100 * (lo - plo):+.0f} points at the low "
                       f"end, {100 * (hi - phi):+.0f} at the high end)")
            if fell is not None:
                gap += (f", but recall fell by up to {100 * -fell:.0f} points against "
                        "Lottery: not a like-for-like saving")
            per_n = ", ".join(f"{_setting(r, axes)}: {_pct(r['reduction'])}"
                              for _, r in part.iterrows())
            lines.append(f"<tr><td>{_e(alg)}</td><td>{_e(_window_label(window))}</td>"
                         f"<td>{claims_text(alg, window)}</td><td>{_pct(lo)}–{_pct(hi)}</td>"
                         f"<td>{_e(gap)}</td><td style='text-align:left'>{_e(per_n)}</td></tr>")
            notes.append(f"{alg}, {_window_label(window)}: ours {_pct(lo)}–{_pct(hi)} vs the "
                         f"source's {claims_text(alg, window)} — {gap}.")
    over = " and ".join(["n", *axes])
    head = ("<tr><th>algorithm</th><th>window</th><th>source claims</th><th>ours (range "
            f"over {_e(over)})</th><th>difference</th><th>ours per setting (mean over "
            "seeds)</th></tr>")
    return f"<table>{head}{''.join(lines)}</table>", notes


def _table(frame: pd.DataFrame) -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in frame.columns)
    body = "".join("<tr>" + "".join(f"<td>{_e(v)}</td>" for v in row) + "</tr>"
                   for row in frame.itertuples(index=False))
    return f"<table><tr>{head}</tr>{body}</table>"


def _fmt(m, h) -> str:
    if m is None or math.isnan(m):
        return "–"
    return f"{m:.3g}" if math.isnan(h) else f"{m:.3g} ± {h:.2g}"


def breakdown(info: pd.DataFrame, per_result: bool = False) -> pd.DataFrame:
    """Mean ± CI per (window, n, every other swept axis, algorithm) of cost parts and
    the hindsight ratios (and of cost per result group, with ``per_result``)."""
    extra = (COST_PER_RESULT,) if per_result else ()
    cols = [c for c in ("comm_cost_per_time", *extra, "synopsis_cost", "data_cost", "report_cost",
                        "filtered_tuples", "center_moves", "cost_to_hindsight",
                        "data_cost_to_hindsight", "recall") if c in info.columns]
    others = other_axes(info)
    rows = []
    for key, g in info.groupby(["wkey", "n", *others, "algorithm"], dropna=False):
        wk, n, *values, alg = key
        row = {"window": _window_label(None if wk < 0 else wk), "n": int(n),
               **dict(zip(others, values)), "algorithm": alg}
        for c in cols:
            row[c] = _fmt(*_mean_ci(pd.to_numeric(g[c], errors="coerce")))
        rows.append(row)
    return pd.DataFrame(rows)


WHY = """
<p><b>Why our numbers differ from the source's.</b> (1) Synopsis traffic is counted in
full: every site sends one synopsis message per period even when its block is empty (the
center needs it to close the period), and every non-empty block gets a filter-and-order
reply; the source's figures do not break this traffic out. (2) Our synopses are exact
(the center processes a period only when all sites have reported), so SMJE's data cost
equals the hindsight bound on a static network and the rest of its cost is synopsis
traffic. (3) Lottery's result-count reports are charged (<i>report_cost</i>) at one
synopsis entry each. (4) Costs are least path costs (a complete graph with uniform 1..10
link costs has shortcuts through other nodes) and the final results' hop to the query
node counts for every algorithm. (5) Without a window the join grows as
20·7.5<sup>n</sup> result tuples, so that sweep stops at 5 sources; every order must then
carry the whole final result to the query node, which bounds what any order can save
over Lottery (see the bound below). (6) SMJH follows the one-step look-ahead of
docs/ALGORITHMS.md#smjh, which sees the query hop only at the last stage; when partial results
grow from hop to hop (no window) it chooses no better than Lottery. Option
<code>lookahead</code> of smj-h looks further (n−1 = exact).</p>
"""


def explanations(info: pd.DataFrame) -> list[str]:
    """Sentences with this sweep's numbers behind the differences: the synopsis share of
    SMJ's cost, SMJE's distance to the hindsight bound, and the most any order could save
    over Lottery (``1 - bound / Lottery's cost``, paired by seed)."""
    out = []
    for wk in sorted(info["wkey"].unique(), reverse=True):
        label = _window_label(None if wk < 0 else wk)
        part = info[info["wkey"] == wk]
        e = part[part["algorithm"] == "smj-e"]
        if e.empty or "hindsight_cost" not in e.columns:
            continue
        share = (e["synopsis_cost"] / e["comm_cost_total"]).groupby(e["n"]).mean()
        ratio = e.groupby("n")["cost_to_hindsight"].mean()
        text = (f"{label}: synopsis traffic is {_pct(share.min())}–{_pct(share.max())} of "
                f"SMJE's cost; SMJE's total cost is {ratio.min():.2f}–{ratio.max():.2f}× "
                f"the hindsight bound")
        # SMJE's hindsight bound against Lottery's cost, paired like the reductions
        both = part[part["algorithm"].isin(["smj-e", "lottery"])]
        bound = both.assign(_bound=np.where(both["algorithm"] == "smj-e",
                                            both["hindsight_cost"], both["comm_cost_total"]))
        paired = pairs(bound, "algorithm", "lottery", ["n", *other_axes(info)], "_bound")
        paired = paired[paired["base"] > 0]
        if len(paired):
            cap = (1 - paired["value"] / paired["base"]).groupby(paired["n"]).mean()
            text += (f"; the most any order could save over Lottery (the bound, synopses "
                     f"free) is {_pct(cap.min())}–{_pct(cap.max())}")
        out.append(text + ".")
    return out


def section(runs: pd.DataFrame, run_dirs: list[Path], out_dir: Path) -> str:
    """The SMJ family's HTML fragment; files go to ``out_dir/figures`` and ``tables``."""
    out_dir = Path(out_dir)
    runs = with_cost_per_result(runs)
    # cost per result beside cost when a swept axis changes the exact answer
    per_result = COST_PER_RESULT in runs.columns and bool(answer_changes(runs))
    info = run_info(runs, run_dirs)
    if "duration" not in info.columns:
        info["duration"] = [Run(d).duration
                            if d is not None else 30.0 for d in info["dir"]]
    parts = ["<p>SMJ family: cost of the multi-way join per time unit (sum over every "
             "hop of size × link cost, divided by the run's duration), means over seeds "
             "with 95 % confidence intervals.</p>"]
    others = other_axes(info)
    if others:
        parts.append(f'<p class="note">Besides the paper\'s axes this sweep varies '
                     f'{_e(", ".join(others))}: Figures 1 and 2 pool its values; the '
                     "reductions and the breakdown hold them, each run paired with "
                     "Lottery's of the same seed and values.</p>")
    fig1 = figure_cost_vs_sources(info, out_dir, per_result)
    also = " (and per result)" if per_result else ""
    parts.append(f"<h3>Figure 1 — cost per time unit{also} vs number of sources</h3>"
                 f"<img src='{fig1.relative_to(out_dir).as_posix()}' alt='figure 1'>")
    if info["dir"].notna().any():
        fig2, notes = figure_cost_vs_time(info, out_dir)
        parts.append(f"<h3>Figure 2 — cost per time unit vs time</h3>"
                     f"<p>{_e('; '.join(notes))}; 95 % band over seeds.</p>"
                     f"<img src='{fig2.relative_to(out_dir).as_posix()}' alt='figure 2'>")
    tables = out_dir / "tables"
    tables.mkdir(parents=True, exist_ok=True)
    if "lottery" in set(info["algorithm"]):
        red = reductions(info)
        red.to_csv(tables / f"{PREFIX}_reductions_vs_lottery.csv", index=False)
        table, notes = claims_table(red)
        parts.append("<h3>Cost reduction vs Lottery (paired by seed)</h3>" + table
                     + "<ul>" + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>")
    bd = breakdown(info, per_result)
    bd.to_csv(tables / f"{PREFIX}_breakdown.csv", index=False)
    parts.append("<h3>Cost parts and the hindsight bound</h3><p><i>cost_to_hindsight</i> "
                 "= total cost / the cost if every block took the order cheapest given "
                 "exact join sizes (at the cost matrix of its decision); "
                 "<i>data_cost_to_hindsight</i> leaves synopsis traffic out.</p>"
                 + _table(bd))
    parts.append(WHY)
    parts.append("<ul>" + "".join(f"<li>{_e(x)}</li>" for x in explanations(info))
                 + "</ul>")
    return "\n".join(parts)
