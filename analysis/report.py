"""HTML report of a run folder or a sweep folder.

:func:`write_report` writes ``report.html`` (self-contained: inline style, images by
relative links), ``figures/*.png`` and ``*.pdf``, and ``tables/*.csv`` into
``DIR/report`` (or ``out``). It is written into a staging folder and renamed when
complete; a section that cannot apply to the runs (or fails on them) is one line saying
why, never the end of the report. Axes are listed and tabulated in value order (2
before 10); a list-valued axis (a speed range) is compared along its number
``<path>_mean`` (:mod:`analysis.axes`). Sections:

1. overview (runs, algorithms, seeds, swept parameters; the warm-up left out of the
   metrics when the runs have one);
2. summary table per algorithm × swept parameters, mean ± 95 % CI half-width over
   seeds (``tables/aggregates.csv`` has every numeric metric with mean, std, n, CI),
   headed by a flag for each swept axis that changes the exact answer
   (:mod:`analysis.answers`), with cost per result beside total cost then;
   then the comparison of the algorithms (or named variants), paired by seed along
   every swept axis, for each headline metric (:mod:`analysis.compare`);
3. each plotted metric against each swept parameter (or per algorithm when nothing is
   swept); along an axis that changes the exact answer, the cost figure has a second
   panel with cost per result;
4. over time — communication cost per time, buffered tuples, cumulative recall — and the
   latency CDF, from the raw tables of each algorithm's *reference setting*: the first
   combination of swept parameter values in sorted order, over all its seeds (mean and
   95 % band). A single run shows cost per message kind and memory per node instead;
5. one section per algorithm family present (see :mod:`analysis.families`), headed by
   the flags of its own runs; its runs carry ``comm_cost_per_result``;
6. the sections of swept axes (:data:`analysis.families.AXIS_SECTIONS`: the network's
   routing and link order, the sweep's named variants), over every run;
7. the sections of what the runs measured (:data:`analysis.families.SUMMARY_SECTIONS`:
   energy and lifetime), once per variant of the network.

Run it as ``python -m analysis DIR``.

Examples
--------
>>> nice_step(0.61), nice_step(3.0), nice_step(0.0004)
(1.0, 5.0, 0.0005)
"""
from __future__ import annotations

import html
import itertools
import json
import logging
import math
import os
import re
import shutil
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd
from tqdm import tqdm

from analysis import compare, plots
from analysis.answers import (COST_PER_RESULT, AnswerChange, answer_changes, flags_html,
                              with_cost_per_result)
from analysis.axes import axis_values, report_axes, sort_by_axes
from analysis.families import (AXIS_SECTIONS, SUMMARY_SECTIONS, axis_sections_present,
                               families_present, section_families, section_module,
                               summary_sections_present)
from analysis.loading import PROGRESS_MIN_RUNS, Run, RunFolderError, load, load_run, run_paths
from analysis.series import (cost_series, latencies, memory_series, recall_series,
                             step_values)
from analysis.stats import aggregate, mean_band
from experiments.sweep import RANGE_MEAN

log = logging.getLogger(__name__)

TABLE_METRICS = ["comm_cost_per_time", "comm_cost_total", "messages", "bytes", "results",
                 "expected_results", "recall", "duplicates", "latency_mean", "latency_p95",
                 "memory_mean_tuples", "memory_peak_tuples", "wall_seconds"]
PLOT_METRICS = ["comm_cost_per_time", "memory_mean_tuples", "memory_peak_tuples", "recall",
                "latency_mean", "latency_p95", "duplicates"]
TIME_BINS = 50          # windows over the run for cost and recall series
MEMORY_POINTS = 200     # grid on which memory samples of different runs are compared

CSS = """
body{font-family:Helvetica,Arial,sans-serif;margin:2em auto;max-width:70em;color:#222}
h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ccc;padding-bottom:.2em}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
.figs{display:flex;flex-wrap:wrap;gap:1em}
figure{margin:0;flex:0 1 31em}figure img{width:100%}
figcaption{font-size:.85em;color:#444}.note{color:#666;font-size:.9em}
pre{background:#f7f7f7;padding:.5em;overflow:auto;font-size:.8em}
.flag{background:#fff4e0;border-left:4px solid #e69500;padding:.4em .8em;margin:.5em 0}
"""


def nice_step(raw: float) -> float:
    """Smallest of 1, 2, 5 × 10^k that is >= ``raw`` (readable bin widths)."""
    if not raw > 0:
        raise ValueError(f"nice_step: need a positive number, got {raw}")
    power = 10.0 ** math.floor(math.log10(raw))
    for factor in (1.0, 2.0, 5.0, 10.0):
        if factor * power >= raw * (1 - 1e-12):
            return float(f"{factor * power:.12g}")
    raise AssertionError("unreachable: 10 * power >= raw")


def _fmt(value: float) -> str:
    """Four significant digits; whole numbers from 1000 up with thousands separators.

    >>> _fmt(23520.0), _fmt(0.16544), _fmt(float("nan"))
    ('23,520', '0.1654', '–')
    """
    if math.isnan(value):
        return "–"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def _mean_ci(mean: float, half: float) -> str:
    if math.isnan(mean):
        return "–"
    return _fmt(mean) if math.isnan(half) else f"{_fmt(mean)} ± {_fmt(half)}"


def _e(text: Any) -> str:
    return html.escape(str(text))


def _figure_html(png: Path, out: Path, caption: str) -> str:
    rel = png.relative_to(out).as_posix()
    pdf = png.with_suffix(".pdf").relative_to(out).as_posix()
    return (f'<figure><img src="{_e(rel)}" alt="{_e(caption)}">'
            f'<figcaption>{_e(caption)} (<a href="{_e(pdf)}">PDF</a>)</figcaption></figure>')


def _present(runs: pd.DataFrame, metrics: list[str]) -> list[str]:
    return [m for m in metrics if m in runs.columns and runs[m].notna().any()]


def _table_metrics(runs: pd.DataFrame, changes: list[AnswerChange]) -> list[str]:
    """:data:`TABLE_METRICS` present in ``runs``, with cost per result after total cost
    when an axis changes the exact answer."""
    metrics = list(TABLE_METRICS)
    if changes:
        metrics.insert(metrics.index("comm_cost_total") + 1, COST_PER_RESULT)
    return _present(runs, metrics)


def _overview(directory: Path, runs: pd.DataFrame, params: list[str],
              changes: list[AnswerChange]) -> str:
    counts = runs.groupby("algorithm").size()
    items = [f"<li>source: <code>{_e(directory)}</code></li>",
             f"<li>{len(runs)} run(s); algorithms: "
             + ", ".join(f"{_e(a)} ({n})" for a, n in counts.items()) + "</li>",
             f"<li>seeds: {_e(', '.join(map(str, sorted(runs['seed'].unique()))))}</li>"]
    changing = {c.axis for c in changes}
    for p in params:
        values = axis_values(runs, p)
        note = " (changes the exact answer, see the summary)" if p in changing else ""
        ranges = p.removesuffix(RANGE_MEAN)
        if ranges != p and ranges in runs.columns:
            note += (f" (the mean of each range of {ranges}: "
                     f"{', '.join(map(str, axis_values(runs, ranges)))})")
        items.append(f"<li>swept <code>{_e(p)}</code>: {_e(', '.join(map(str, values)))}"
                     f"{_e(note)}</li>")
    warmup = warmup_of(runs)
    if warmup > 0:
        items.append(f"<li>metrics leave out tuples that entered before t = {warmup:g} "
                     f"(<code>run.warmup</code>)</li>")
    body = "<ul>" + "".join(items) + "</ul>"
    if len(runs) == 1 and isinstance(runs["run_dir"].iloc[0], str):
        run = Run(Path(runs["run_dir"].iloc[0]))
        body += ("<details><summary>resolved spec</summary><pre>"
                 + _e(json.dumps(run.spec, indent=2)) + "</pre></details>")
    body += '<p>All rows: <a href="tables/runs.csv">tables/runs.csv</a>.</p>'
    return body


def warmup_of(runs: pd.DataFrame) -> float:
    """The largest ``run.warmup`` of the runs (the summary's ``warmup``, else a swept
    ``run.warmup`` column, else each run's spec); 0 when none has one.

    >>> warmup_of(pd.DataFrame({"warmup": [0.0, 5.0]})), warmup_of(pd.DataFrame({"a": [1]}))
    (5.0, 0.0)
    """
    for column in ("warmup", "run.warmup"):
        if column in runs.columns:
            values = pd.to_numeric(runs[column], errors="coerce").dropna()
            if len(values):
                return float(values.max())
    found = [Run(Path(d)).spec.get("run", {}).get("warmup")
             for d in runs.get("run_dir", ()) if isinstance(d, str)]
    numbers = [float(w) for w in found if isinstance(w, (int, float))]
    return max(numbers, default=0.0)


def _summary_table(agg: pd.DataFrame, by: list[str], metrics: list[str]) -> str:
    if not metrics:
        return '<p class="note">No summary metrics in these runs.</p>'
    rows = agg[agg["metric"].isin(metrics)]
    records = []
    # agg comes in value order of the axes (10 after 2): keep it
    for key, group in rows.groupby(by, dropna=False, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        record = dict(zip(by, key))
        record["seeds"] = int(group["n"].max())
        per_metric = group.set_index("metric")
        for m in metrics:
            record[m] = _mean_ci(float(per_metric.at[m, "mean"]),
                                 float(per_metric.at[m, "ci95"]))
        records.append(record)
    table = pd.DataFrame(records)
    table.columns = [plots.metric_label(c) if c in metrics else c for c in table.columns]
    return (table.to_html(index=False, escape=True, na_rep="–", border=0)
            + '<p class="note">mean ± half-width of the 95 % Student-t confidence interval '
              'over seeds (no ± with one seed). Every metric with std and n: '
              '<a href="tables/aggregates.csv">tables/aggregates.csv</a>.</p>')


def _param_figures(agg: pd.DataFrame, params: list[str], metrics: list[str],
                   figures: Path, out: Path, changes: list[AnswerChange]) -> str:
    changing = {c.axis for c in changes}
    parts = []
    for param in params:
        for metric in metrics:
            # along an axis that changes the answer, cost is also shown per result
            beside = metric == "comm_cost_per_time" and param in changing \
                and (agg["metric"] == COST_PER_RESULT).any()
            panels = [metric, COST_PER_RESULT] if beside else [metric]
            fig = plots.metrics_vs_param(agg, param, panels)
            png = plots.save(fig, figures, f"{metric}_vs_{param}".replace(".", "_"))
            caption = " and ".join(plots.metric_label(m) for m in panels)
            note = (f" ({param} changes the exact answer: compare cost per result)"
                    if beside else "")
            parts.append(_figure_html(png, out, f"{caption} vs {param}; mean over seeds, "
                                      f"bars: 95 % CI{note}"))
    return '<div class="figs">' + "".join(parts) + "</div>"


def _bar_figures(agg: pd.DataFrame, metrics: list[str], figures: Path, out: Path) -> str:
    parts = []
    for metric in metrics:
        png = plots.save(plots.bars(agg, metric), figures, f"{metric}_by_algorithm")
        parts.append(_figure_html(png, out, f"{plots.metric_label(metric)} per algorithm; "
                                  "bars: 95 % CI over seeds"))
    return '<div class="figs">' + "".join(parts) + "</div>"


def reference_runs(runs: pd.DataFrame, params: list[str]) -> tuple[pd.DataFrame, dict[str, str]]:
    """Rows of each algorithm's first parameter combination (all seeds), with captions.

    Only rows with a run folder count. Parameters an algorithm lacks (missing) are
    ignored for it.
    """
    chosen, captions = [], {}
    with_dirs = runs[runs["run_dir"].map(lambda p: isinstance(p, str))]
    for algorithm, rows in with_dirs.groupby("algorithm", sort=True):
        mine = [p for p in params if rows[p].notna().any()]
        if mine:
            first = rows.sort_values(mine, key=lambda s: s.map(plots.value_order)).iloc[0]
            mask = np.ones(len(rows), dtype=bool)
            for p in mine:
                mask &= (rows[p] == first[p]).to_numpy()
            rows = rows[mask]
            captions[algorithm] = ", ".join(f"{p}={first[p]}" for p in mine)
        else:
            captions[algorithm] = ""
        chosen.append(rows)
    frame = pd.concat(chosen) if chosen else with_dirs.iloc[0:0]
    return frame, captions


def _step_curve(t_start: np.ndarray, t_end: np.ndarray, mean: np.ndarray,
                half: np.ndarray | None = None) -> pd.DataFrame:
    # A window's value holds until its end: repeat the last value at the final edge.
    frame = pd.DataFrame({"time": np.r_[t_start, t_end[-1:]], "mean": np.r_[mean, mean[-1:]]})
    if half is not None:
        frame["half"] = np.r_[half, half[-1:]]
    return frame


class _Loaded:
    """Raw tables of the reference runs (``rows``, chosen among ``of`` runs), read once,
    with a common time span."""

    def __init__(self, rows: pd.DataFrame, of: int):
        paths = [Path(p) for p in rows["run_dir"]]
        self.runs: dict[str, list[Run]] = {}
        # The bar counts the reference runs only: it says so, lest 40 look like 240.
        for algorithm, path in tqdm(list(zip(rows["algorithm"], paths)),
                                    desc=f"reading the reference runs ({len(paths)} of {of})",
                                    unit="run", disable=len(paths) < PROGRESS_MIN_RUNS):
            run = load_run(path)
            _ = run.ledger, run.results, run.expected, run.metrics
            self.runs.setdefault(algorithm, []).append(run)
        all_runs = [r for rs in self.runs.values() for r in rs]
        duration = max(r.duration for r in all_runs)
        # Traffic and results may continue after the nominal end (flushes, messages in
        # flight); the series reach them, each only as far as its own data goes.
        self.cost_end = max([duration] + [float(r.ledger["time"].max())
                                          for r in all_runs if len(r.ledger)])
        self.end = max([duration] + [float(r.results["emitted_at"].max())
                                     for r in all_runs if len(r.results)])
        self.bin = nice_step(duration / TIME_BINS)

    @property
    def single(self) -> Run | None:
        runs = [r for rs in self.runs.values() for r in rs]
        return runs[0] if len(runs) == 1 else None


def _cost_section(loaded: _Loaded, figures: Path, tables: Path, out: Path) -> str:
    per_run = {algorithm: [cost_series(run.ledger, loaded.bin, end=loaded.cost_end)
                           for run in runs] for algorithm, runs in loaded.runs.items()}
    pd.concat([s.assign(algorithm=a, run_id=run.run_id)
               for a, runs in loaded.runs.items() for run, s in zip(runs, per_run[a])],
              ignore_index=True).to_csv(tables / "cost_over_time.csv", index=False)
    ylabel = plots.with_unit("cost per time", "data units·link cost / time unit")
    single = loaded.single
    if single is not None:
        total = next(iter(per_run.values()))[0]
        curves = {"all messages": _step_curve(total["t_start"].to_numpy(),
                                              total["t_end"].to_numpy(),
                                              total["cost_per_time"].to_numpy())}
        colors = {"all messages": "black"}
        by_kind = cost_series(single.ledger, loaded.bin, end=loaded.cost_end, by="kind")
        spare = itertools.cycle(plots.SPARE_COLORS)
        kinds = by_kind.groupby("kind", sort=True)
        # One kind only would draw a second copy of the total exactly on top of it.
        for kind, part in (kinds if kinds.ngroups > 1 else []):
            curves[str(kind)] = _step_curve(part["t_start"].to_numpy(),
                                            part["t_end"].to_numpy(),
                                            part["cost_per_time"].to_numpy())
            colors[str(kind)] = next(spare)
        fig = plots.time_bands(curves, ylabel, colors=colors, step=True)
        caption = (f"Communication cost per time unit over windows of {loaded.bin:g} "
                   "time units")
        if kinds.ngroups > 1:
            caption += ", in total and per message kind"
        elif kinds.ngroups == 1:
            caption += f" (all messages are of kind {by_kind['kind'].iloc[0]})"
    else:
        curves = {}
        for algorithm, series in per_run.items():
            mean, half = mean_band(np.vstack([s["cost_per_time"].to_numpy() for s in series]))
            curves[algorithm] = _step_curve(series[0]["t_start"].to_numpy(),
                                            series[0]["t_end"].to_numpy(), mean, half)
        fig = plots.time_bands(curves, ylabel, step=True)
        caption = (f"Communication cost per time unit over windows of {loaded.bin:g} time "
                   "units; mean over seeds, band: 95 % CI")
    png = plots.save(fig, figures, "cost_over_time")
    return _figure_html(png, out, caption)


def _memory_section(loaded: _Loaded, figures: Path, out: Path) -> str:
    single = loaded.single
    try:
        if single is not None:
            wide = memory_series(single.metrics)
            png = plots.save(plots.memory_per_node(wide), figures, "memory_over_time")
            return _figure_html(png, out, "Buffered tuples over time, in total and per node "
                                "(testbed samples)")
        runs = [r for rs in loaded.runs.values() for r in rs]
        end = max(float(r.metrics["time"].max()) if len(r.metrics) else r.duration
                  for r in runs)
        grid = np.linspace(0.0, end, MEMORY_POINTS)
        curves = {}
        for algorithm, runs in loaded.runs.items():
            matrix = np.vstack([step_values(memory_series(r.metrics)["total"], grid)
                                for r in runs])
            mean, half = mean_band(matrix)
            curves[algorithm] = pd.DataFrame({"time": grid, "mean": mean, "half": half})
    except ValueError as exc:
        log.warning("memory plot skipped: %s", exc)
        return f'<p class="note">No memory samples: {_e(exc)}</p>'
    fig = plots.time_bands(curves, "buffered tuples, all nodes [tuples]", step=True)
    png = plots.save(fig, figures, "memory_over_time")
    return _figure_html(png, out, "Buffered tuples over time, summed over nodes; mean over "
                        "seeds, band: 95 % CI")


def _recall_section(loaded: _Loaded, figures: Path, tables: Path, out: Path) -> str:
    rows = []

    matrices: dict[str, list[np.ndarray]] = {}
    for algorithm, runs in loaded.runs.items():
        for run in runs:
            s = recall_series(run.results, run.expected, loaded.bin, end=loaded.end)
            rows.append(s.assign(algorithm=algorithm, run_id=run.run_id))
            matrices.setdefault(algorithm, []).append(s["cumulative_recall"].to_numpy())
    # Cumulative recall is reached at the end of each window, starting from 0.
    t = np.r_[rows[0]["t_start"].iloc[0], rows[0]["t_end"].to_numpy()]
    curves = {}
    for algorithm, series in matrices.items():
        mean, half = mean_band(np.vstack([np.r_[0.0, s] for s in series]))
        curves[algorithm] = pd.DataFrame({"time": t, "mean": mean, "half": half})
    pd.concat(rows, ignore_index=True).to_csv(tables / "recall_over_time.csv", index=False)
    fig = plots.time_bands(curves, "cumulative recall [fraction]")
    fig.axes[0].set_ylim(0, 1.05)
    png = plots.save(fig, figures, "recall_over_time")
    return _figure_html(png, out, "Cumulative recall: distinct expected result groups "
                        "emitted so far / all expected groups" +
                        ("" if loaded.single else "; mean over seeds, band: 95 % CI"))


def _latency_section(loaded: _Loaded, figures: Path, out: Path) -> str:
    samples = {a: np.concatenate([latencies(r.results).to_numpy(dtype=float) for r in runs])
               for a, runs in loaded.runs.items()}
    if not any(len(v) for v in samples.values()):
        return '<p class="note">No results, so no latency distribution.</p>'
    fig = plots.cdf(samples, "latency: emitted − last member entered [time units]")
    png = plots.save(fig, figures, "latency_cdf")
    return _figure_html(png, out, "Latency distribution of result groups (pooled over seeds)")


def _time_sections(runs: pd.DataFrame, params: list[str], figures: Path, tables: Path,
                   out: Path) -> str:
    rows, captions = reference_runs(runs, params)
    if rows.empty:
        return '<p class="note">No run folders beside the runs table: no series over time.</p>'
    loaded = _Loaded(rows, of=len(runs))
    settings = "; ".join(f"{_e(a)}: {_e(c)}" for a, c in captions.items() if c)
    intro = (f'<p class="note">Reference setting per algorithm — {settings}.</p>'
             if settings else "")
    blocks = [_cost_section(loaded, figures, tables, out), _memory_section(loaded, figures, out),
              _recall_section(loaded, figures, tables, out),
              _latency_section(loaded, figures, out)]
    return intro + '<div class="figs">' + "".join(blocks) + "</div>"


#: Swept spec keys that change what a family's figures mean (the network model, or a
#: named variant of the sweep): a family section is written once per value, so that no
#: figure or table mixes them.
VARIANT_KEYS = ("variant", "network.medium", "network.interference_radius",
                "network.routing", "network.reorder")


def variants(runs: pd.DataFrame, keys=VARIANT_KEYS) -> list[tuple[str | None, pd.DataFrame]]:
    """``runs`` split on the ``keys`` swept in them: ``[(label, part)]``, or
    ``[(None, runs)]`` when none is swept.

    >>> r = pd.DataFrame({"algorithm": ["a", "a"], "network.medium": ["links", "shared"]})
    >>> [(label, len(part)) for label, part in variants(r)]
    [('network.medium = links', 1), ('network.medium = shared', 1)]
    """
    keys = [k for k in keys if k in runs.columns and runs[k].nunique(dropna=False) > 1]
    if not keys:
        return [(None, runs)]
    out = []
    for values, part in runs.groupby(keys, dropna=False, sort=True):
        values = values if isinstance(values, tuple) else (values,)
        out.append((", ".join(f"{k} = {v}" for k, v in zip(keys, values)), part))
    return out


def slug(label: str) -> str:
    """A folder name for a variant label.

    >>> slug("network.medium = shared")
    'network.medium-shared'
    """
    return re.sub(r"[^A-Za-z0-9._-]+", "-", label.replace(" = ", "-")).strip("-")


def rebase_links(fragment: str, prefix: str) -> str:
    """Prefix the relative ``src``/``href`` links of an HTML fragment with ``prefix``.

    >>> rebase_links('<img src="figures/a.png"><a href="#x">', "v")
    '<img src="v/figures/a.png"><a href="#x">'
    """
    return re.sub(r'((?:src|href)=["\'])(?![a-z]+:|/|#)', lambda m: f"{m.group(1)}{prefix}/",
                  fragment)


def _page(title: str, sections: list[tuple[str, str, str]]) -> str:
    toc = "".join(f'<li><a href="#{_e(i)}">{_e(h)}</a></li>' for i, h, _ in sections)
    body = "".join(f'<section id="{_e(i)}"><h2>{_e(h)}</h2>{b}</section>'
                   for i, h, b in sections)
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{_e(title)}'
            f'</title><style>{CSS}</style></head><body><h1>{_e(title)}</h1>'
            f'<ul>{toc}</ul>{body}</body></html>\n')


def write_report(directory: Any, out: Any = None, *,
                 families: Mapping[str, frozenset[str]] | None = None,
                 animate: bool = False) -> Path:
    """Write the HTML report of a run folder or a sweep folder.

    The report is written into a staging folder beside ``out`` and renamed to ``out``
    when complete (replacing an older report), so that a report folder is never left
    half-written. A section that cannot apply to these runs, or fails on them, is one
    line in the report saying why (and a logged warning); the rest is still written.

    Parameters
    ----------
    directory : path-like
        Anything :func:`analysis.load` accepts.
    out : path-like, optional
        Report folder; default ``directory/report``.
    families : mapping, optional
        Family name -> algorithm names; a family present in the runs needs the module
        ``analysis.<family>_section``. Default: the registry's
        (:func:`analysis.families.section_families`).
    animate : bool
        Also draw every run as an animated GIF (:mod:`analysis.animate`), shown in a
        section of its own (some seconds a run).

    Returns
    -------
    Path
        The written ``report.html``.

    Raises
    ------
    analysis.families.MissingFamilySection
        Before anything is written, if a present family has no section module.
    experiments.store.RunFolderError
        Before anything is written, if ``out`` holds the runs or other files than an
        earlier report (replacing it would delete them).
    """
    directory = Path(directory)
    out = directory / "report" if out is None else Path(out)
    _check_replaceable(out, directory)
    runs = with_cost_per_result(load(directory))
    families = section_families() if families is None else families
    present = families_present(runs["algorithm"], families)
    modules = {family: section_module(family) for family in present}
    axis_modules = {name: section_module(name) for name in axis_sections_present(runs)}
    summary_modules = {name: section_module(name) for name in summary_sections_present(runs)}
    staging = out.parent / f".{out.name}.partial-{os.getpid()}"
    if staging.exists():
        shutil.rmtree(staging)
    try:
        _write(directory, runs, staging, families, modules, axis_modules, summary_modules,
               animate)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if out.exists():
        old = out.parent / f".{out.name}.old-{os.getpid()}"
        out.rename(old)
        staging.rename(out)
        shutil.rmtree(old)
    else:
        staging.rename(out)
    report = out / "report.html"
    log.info("wrote %s", report)
    return report


def _check_replaceable(out: Path, directory: Path) -> None:
    """Refuse a report folder whose replacement would delete what is not a report: the
    runs' folder or one that holds it, or a folder with other contents than an earlier
    report (``directory/report`` is always the report's own)."""
    runs_inside = directory.resolve().is_relative_to(out.resolve())
    ours = out == directory / "report" or (out / "report.html").is_file()
    if runs_inside or (out.is_dir() and not ours and any(out.iterdir())):
        raise RunFolderError(out, "report folder", "a new or empty folder or an earlier "
                             "report (it would be replaced), not one holding the runs or "
                             "other files")


def _write(directory: Path, runs: pd.DataFrame, out: Path,
           families: Mapping[str, frozenset[str]], modules: dict, axis_modules: dict,
           summary_modules: dict, animate: bool = False) -> None:
    """Every part of the report into ``out`` (the staging folder), report.html last."""
    figures, tables = out / "figures", out / "tables"
    figures.mkdir(parents=True, exist_ok=True)
    tables.mkdir(parents=True, exist_ok=True)
    log.info("writing report of %d run(s) from %s", len(runs), directory)

    # named variants ([sweep.variants]) are an axis like a swept path; a list-valued
    # path (a speed range) is its number <path>_mean where that tells values apart
    params = report_axes(runs)
    by = ["algorithm", *params]
    runs.to_csv(tables / "runs.csv", index=False)
    agg = sort_by_axes(aggregate(runs, by=by), by)
    agg.to_csv(tables / "aggregates.csv", index=False)

    changes = answer_changes(runs, params)
    for change in changes:
        log.info("%s", change.message)
    sections = [("overview", "Overview", _overview(directory, runs, params, changes)),
                ("summary", "Summary", flags_html(changes) + _guarded(
                    "summary table", _summary_table, agg, by,
                    _table_metrics(runs, changes)))]
    sections.append(("comparison", "Comparison, paired by seed along every swept axis",
                     _guarded("comparison", compare.section, runs, params, figures, tables,
                              out)))
    plotted = _present(runs, PLOT_METRICS)
    if params:
        log.info("plotting %d metrics against %s", len(plotted), params)
        sections.append(("parameters", "Metrics vs swept parameters", _guarded(
            "metrics vs swept parameters", _param_figures, agg, params, plotted, figures,
            out, changes)))
    elif runs["algorithm"].nunique() > 1:
        sections.append(("algorithms", "Metrics per algorithm", _guarded(
            "metrics per algorithm", _bar_figures, agg, plotted, figures, out)))
    log.info("plotting series over time")
    sections.append(("time", "Over time", _guarded(
        "series over time", _time_sections, runs, params, figures, tables, out)))
    for family, module in modules.items():
        mine = runs[runs["algorithm"].isin(families[family])]
        parts = [_variant_html(module, family, label, part, params, out)
                 for label, part in variants(mine)]
        if any(parts):
            sections.append((f"family-{family}", f"{family} family", "\n".join(parts)))
    for name, module in axis_modules.items():
        heading, own = AXIS_SECTIONS[name]
        # split by the other network keys only: the section compares its own
        keys = [k for k in VARIANT_KEYS if k not in own]
        parts = [_variant_html(module, name, label, part, params, out)
                 for label, part in variants(runs, keys)]
        if any(parts):
            sections.append((name, heading, "\n".join(parts)))
    for name, module in summary_modules.items():
        parts = [_variant_html(module, name, label, part, params, out)
                 for label, part in variants(runs)]
        if any(parts):
            sections.append((name, SUMMARY_SECTIONS[name][0], "\n".join(parts)))
    if animate:
        sections.append(("animations", "The runs, animated",
                         _guarded("animations", _animations, runs, out)))

    (out / "report.html").write_text(_page(f"Report: {directory.name}", sections),
                                     encoding="utf-8")


def _animations(runs: pd.DataFrame, out: Path) -> str:
    """Each run drawn as a GIF into ``out/animations`` (:func:`analysis.animate.animate`),
    shown one below the other with the run's name."""
    from analysis.animate import animate

    folder = out / "animations"
    folder.mkdir(exist_ok=True)
    parts = []
    for run_dir in run_paths(runs):
        gif = animate(run_dir, folder / f"{run_dir.name}.gif", frames=40)
        parts.append(f'<figure><img src="animations/{_e(gif.name)}" alt="{_e(run_dir.name)}">'
                     f"<figcaption>{_e(run_dir.name)}: data (blue), control (orange), one "
                     "flow's route (green), batteries as colours</figcaption></figure>")
    return "\n".join(parts)


def _guarded(name: str, draw, *args) -> str:
    """``draw(*args)``, or one line saying why the part ``name`` is not in the report
    (also logged as a warning): a part that cannot apply never stops the report."""
    try:
        return draw(*args)
    except Exception as exc:    # noqa: BLE001 - any failure of one part is reported as such
        why = f"{type(exc).__name__}: {exc}".splitlines()[0]
        log.warning("report part %s skipped: %s", name, why)
        return f'<p class="note">{_e(name)} skipped: {_e(why)}</p>'


def _variant_html(module, family: str, label: str | None, part: pd.DataFrame,
                  params: list[str], out: Path) -> str:
    """One variant's part of a family section (``module.section`` on the runs ``part``),
    headed by the flags of its own answer-changing axes and, for a labelled variant, by
    its label; "" when the family has nothing to show, one line saying why when the
    section cannot apply to these runs."""
    # each variant's section writes into its own folder; its links are rebased
    where = out if label is None else out / slug(label)
    where.mkdir(parents=True, exist_ok=True)
    dirs = [Path(p) for p in part["run_dir"] if isinstance(p, str)]
    log.info("family section %s%s: %d runs", family,
             "" if label is None else f" ({label})", len(part))
    name = f"section {family}" + ("" if label is None else f" ({label})")
    fragment = _guarded(name, _section_fragment, module, part, dirs, where)
    if fragment and not fragment.startswith('<p class="note">'):
        # the family's own comparisons: flag the axes that change their answer
        fragment = flags_html(answer_changes(part, [p for p in params
                                                    if part[p].nunique() > 1])) + fragment
    if label is not None and fragment:
        fragment = f"<h3>{_e(label)}</h3>" + rebase_links(
            fragment, where.relative_to(out).as_posix())
    return fragment


def _section_fragment(module, part: pd.DataFrame, dirs: list[Path], where: Path) -> str:
    fragment = module.section(part.reset_index(drop=True), dirs, where)
    if not isinstance(fragment, str):
        raise TypeError(f"{module.__name__}.section returned "
                        f"{type(fragment).__name__}, expected an HTML fragment (str)")
    return fragment
