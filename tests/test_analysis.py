"""Tests of analysis/: loading, derived metrics, statistics, plots and the report.

Run folders are written here with known numbers (the input); the tests check the values
computed from them.
"""
from __future__ import annotations

import json
import math
import re
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import analysis
import experiments
from analysis import plots
from analysis.families import MissingFamilySection, families_present
from analysis.loading import RunFolderError
from analysis.report import _Loaded, reference_runs, write_report
from analysis.stats import aggregate, ci_halfwidth, t_cdf, t_quantile

SUMMARY_KEYS = ["comm_cost_total", "comm_cost_per_time", "messages", "bytes", "results",
                "expected_results", "recall", "duplicates", "latency_mean", "latency_p50",
                "latency_p95", "latency_p99", "memory_mean_tuples", "memory_peak_tuples",
                "wall_seconds"]


def make_run(root: Path, name: str, algorithm: str = "centralized", seed: int = 1, *,
             duration: float = 10.0, count: int = 3, cost_scale: float = 1.0,
             status: str = "complete", extra_summary: dict | None = None) -> Path:
    """A run folder with small, fully known tables.

    Ledger: one hop per time unit at t = 0.5, 1.5, ..., cost ``cost_scale * (k + 1)``.
    Metrics: nodes 1 and 2 sampled every time unit, node 1 holds ``t`` tuples, node 2
    holds 2. Results: groups g0..g3 (g1 twice) out of expected g0..g4.
    """
    path = root / name
    path.mkdir(parents=True)
    spec = {"run": {"name": name.split("-")[0], "seed": seed, "duration": duration,
                    "step": 0.01},
            "topology": {"generator": "line", "nodes": 3, "cost_range": [1, 10]},
            "streams": {"count": count, "rate": 5.0},
            "query": {"node": 0, "predicate": "equality"},
            "algorithm": {"name": algorithm}, "params": {}}
    (path / "spec.json").write_text(json.dumps(spec))
    (path / "meta.json").write_text(json.dumps({"seed": seed, "status": status,
                                                "git_commit": "abc", "wall_seconds": 0.1}))
    hops = int(duration)
    times = np.arange(hops) + 0.5
    cost = cost_scale * (np.arange(hops) + 1.0)
    pd.DataFrame({"time": times, "msg_id": np.arange(hops),
                  "kind": ["data", "synopsis"] * (hops // 2), "src": 1, "dst": 0,
                  "hop_u": 1, "hop_v": 0, "size_units": cost,
                  "size_bytes": 10 * np.ones(hops, dtype=int), "link_cost": 1.0,
                  "cost": cost, "lost": False}).to_parquet(path / "ledger.parquet")
    sample_t = np.arange(hops + 1, dtype=float)
    pd.DataFrame({"time": np.r_[sample_t, sample_t],
                  "node": [1] * len(sample_t) + [2] * len(sample_t),
                  "source": "testbed", "metric": "tuples",
                  "value": np.r_[sample_t, 2 * np.ones(len(sample_t))]}
                 ).to_parquet(path / "metrics.parquet")
    pd.DataFrame({"group": ["g0", "g1", "g1", "g2", "g3"],
                  "emitted_at": [1.0, 2.0, 2.5, 6.0, 9.0], "node": 0,
                  "first_entered": [0.5, 1.0, 1.0, 5.0, 7.0],
                  "last_entered": [0.8, 1.5, 1.5, 5.5, 8.0]}).to_parquet(path / "results.parquet")
    pd.DataFrame({"group": ["g0", "g1", "g2", "g3", "g4"]}).to_parquet(path / "expected.parquet")
    summary = dict.fromkeys(SUMMARY_KEYS, 0.0)
    summary.update({"comm_cost_total": float(cost.sum()),
                    "comm_cost_per_time": float(cost.sum()) / duration, "recall": 0.8,
                    "results": 5, "expected_results": 5, "duplicates": 1,
                    "memory_mean_tuples": 7.0, "messages": hops, "latency_mean": 0.74})
    summary.update(extra_summary or {})
    (path / "summary.json").write_text(json.dumps(summary))
    return path


@pytest.fixture
def sweep(tmp_path: Path) -> Path:
    """Two algorithms × streams.count in {3, 4} × seeds 1..3; cost scales are known."""
    root = tmp_path / "sweep"
    root.mkdir()
    for algorithm, scale in (("centralized", 1.0), ("flood", 3.0)):
        for count in (3, 4):
            for seed in (1, 2, 3):
                make_run(root, f"{algorithm}-c{count}s{seed}", algorithm, seed, count=count,
                         cost_scale=scale * count * seed)
    return root


# --- statistics ----------------------------------------------------------------------

@pytest.mark.parametrize("df, expected", [(4, 2.776), (9, 2.262), (29, 2.045), (1, 12.706),
                                          (2, 4.303), (100, 1.984)])
def test_t_quantile_matches_tables(df, expected):
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=5e-4)


def test_t_quantile_inverts_cdf_and_is_symmetric():
    for df in (1, 3, 7.5, 40):
        for p in (0.6, 0.9, 0.995):
            q = t_quantile(p, df)
            assert t_cdf(q, df) == pytest.approx(p, abs=1e-10)
            assert t_quantile(1 - p, df) == pytest.approx(-q, rel=1e-9)
    assert t_quantile(0.975, math.inf) == pytest.approx(1.959964, abs=1e-6)
    with pytest.raises(ValueError, match="p must be in"):
        t_quantile(1.0, 3)
    with pytest.raises(ValueError, match="df must be"):
        t_quantile(0.9, 0)


def test_ci_halfwidth_known_values():
    # s = sqrt(2.5), n = 5: 2.7764 * 1.5811 / 2.2361
    assert ci_halfwidth([1, 2, 3, 4, 5]) == pytest.approx(1.96321, abs=1e-4)
    assert ci_halfwidth([1, 2, 3, 4, 5, np.nan]) == pytest.approx(1.96321, abs=1e-4)
    assert math.isnan(ci_halfwidth([7.0]))


def test_aggregate_means_and_ci():
    runs = pd.DataFrame({"algorithm": ["a", "a", "a", "b", "b"], "seed": [1, 2, 3, 1, 2],
                         "streams.count": [3, 3, 3, 3, 3],
                         "cost": [10.0, 12.0, 14.0, 1.0, np.nan], "recall": [1, 1, 1, 0.5, 0.7]})
    agg = aggregate(runs).set_index(["algorithm", "metric"])
    assert list(agg.columns[:1]) == ["streams.count"]
    a = agg.loc[("a", "cost")]
    assert (a["n"], a["mean"], a["std"]) == (3, 12.0, 2.0)
    assert a["ci95"] == pytest.approx(4.303 * 2 / math.sqrt(3), abs=1e-3)
    b = agg.loc[("b", "cost")]
    assert b["n"] == 1 and b["mean"] == 1.0 and math.isnan(b["ci95"])
    assert agg.loc[("b", "recall"), "mean"] == pytest.approx(0.6)
    with pytest.raises(KeyError, match="nope"):
        aggregate(runs, metrics=["nope"])


# --- derived metrics -------------------------------------------------------------------

def test_cost_series_bins_and_sums(tmp_path):
    run = analysis.load_run(make_run(tmp_path, "r-1", duration=10.0))
    series = analysis.cost_series(run.ledger, 2.0, end=run.duration)
    # hops at 0.5..9.5 cost 1..10: bins of two hops each
    assert series["cost"].tolist() == [3.0, 7.0, 11.0, 15.0, 19.0]
    assert series["cost_per_time"].tolist() == [1.5, 3.5, 5.5, 7.5, 9.5]
    assert series["cost"].sum() == run.ledger["cost"].sum() == 55.0
    assert series["hops"].tolist() == [2] * 5
    by_kind = analysis.cost_series(run.ledger, 5.0, by="kind")
    assert by_kind.set_index(["kind", "t_start"])["cost"].to_dict() == {
        ("data", 0.0): 9.0, ("data", 5.0): 16.0, ("synopsis", 0.0): 6.0, ("synopsis", 5.0): 24.0}
    # A hop after the nominal end extends the bins instead of being dropped.
    late = pd.DataFrame({"time": [0.0, 12.0], "cost": [1.0, 2.0], "size_bytes": [1, 1]})
    extended = analysis.cost_series(late, 5.0, end=10.0)
    assert extended["t_end"].iloc[-1] == 15.0 and extended["cost"].sum() == 3.0
    with pytest.raises(ValueError, match="bin width"):
        analysis.cost_series(late, 0.0)


def test_memory_series_carries_samples_forward():
    metrics = pd.DataFrame({"time": [0.0, 1.0, 1.5, 3.0], "node": [1, 2, 1, 2],
                            "source": ["testbed"] * 3 + ["spark"], "metric": "tuples",
                            "value": [4.0, 2.0, 1.0, 9.0]})
    wide = analysis.memory_series(metrics)
    assert wide.index.tolist() == [0.0, 1.0, 1.5]
    assert wide[1].tolist() == [4.0, 4.0, 1.0]
    assert wide[2].tolist() == [0.0, 2.0, 2.0]
    assert wide["total"].tolist() == [4.0, 6.0, 3.0]
    with pytest.raises(ValueError, match="'testbed', 'tuples'"):
        analysis.memory_series(metrics, metric="bytes")


def test_recall_latency_duplicates(tmp_path):
    run = analysis.load_run(make_run(tmp_path, "r-1"))
    recall = analysis.recall_series(run.results, run.expected, 5.0, end=10.0)
    # first emissions g0@1, g1@2, g2@6, g3@9; 5 expected groups
    assert recall["found"].tolist() == [2, 2]
    assert recall["recall"].tolist() == [0.4, 0.4]
    assert recall["cumulative_recall"].iloc[-1] == pytest.approx(0.8)
    assert analysis.duplicates(run.results) == 1
    assert analysis.latencies(run.results).tolist() == pytest.approx([0.2, 0.5, 1.0, 0.5, 1.0])
    stats = analysis.latency_stats(run.results)
    assert stats["latency_mean"] == pytest.approx(0.64)
    assert stats["latency_p50"] == pytest.approx(0.5)


# --- loading ---------------------------------------------------------------------------

def test_load_single_run_folder(tmp_path):
    path = make_run(tmp_path, "quick-0123456789ab", seed=7)
    runs = analysis.load(path)
    assert len(runs) == 1
    row = runs.iloc[0]
    assert (row["run_id"], row["algorithm"], row["seed"]) == (
        "quick-0123456789ab", "centralized", 7)
    assert row["comm_cost_total"] == 55.0
    assert analysis.param_columns(runs) == []


def test_load_scans_complete_runs_and_infers_swept_params(sweep):
    make_run(sweep, "broken-1", status="running")
    make_run(sweep, ".tmp-centralized-x")
    (sweep / "notes").mkdir()
    runs = analysis.load(sweep)
    assert len(runs) == 12
    assert "broken-1" not in set(runs["run_id"])
    assert analysis.param_columns(runs) == ["run.name", "streams.count"]
    assert sorted(runs["streams.count"].unique()) == [3, 4]


def test_load_runs_table_adds_run_dirs(sweep):
    scanned = analysis.load(sweep).drop(columns=["run_dir", "run.name"])
    scanned["topology.cost_range"] = [np.array([1, 10])] * len(scanned)
    scanned.to_parquet(sweep / "runs.parquet")
    runs = analysis.load(sweep)
    assert runs["run_dir"].map(lambda p: Path(p).is_dir()).all()
    assert runs["topology.cost_range"].iloc[0] == "[1, 10]"


TINY_SWEEP = """
[run]
name = "tiny"
duration = 2.0
step = 0.01
drain = 1.0
runtime = "inproc"
[topology]
generator = "complete"
nodes = 4
cost_range = [1, 10]
delay = 0.01
[streams]
count = 2
rate = 3.0
key_domain = 5
[query]
node = 0
window = 1.0
[algorithm]
name = "smj-h"
[sweep]
seeds = [1]
[sweep.grid]
"streams.count" = [2, 3]
"""


def test_sweep_returns_the_frame_load_reads_back(tmp_path):
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY_SWEEP)
    swept = experiments.sweep(spec, out=tmp_path / "out", progress=False)
    loaded = analysis.load(tmp_path / "out")
    assert list(swept.columns) == list(loaded.columns)
    assert swept.columns[-1] == "run_dir" and "run_dir" not in pd.read_parquet(
        tmp_path / "out" / "runs.parquet").columns     # a sweep folder can move
    assert swept["warnings"].iloc[0] == "[]"           # lists as JSON text, as load gives
    pd.testing.assert_frame_equal(swept, loaded)


def test_load_errors_name_the_file(tmp_path):
    with pytest.raises(RunFolderError, match="contents"):
        analysis.load(tmp_path)
    path = make_run(tmp_path, "r-1")
    (path / "summary.json").write_text("{\n  \"recall\": ,\n}")
    with pytest.raises(RunFolderError, match=r"summary.json: line 2"):
        analysis.load(path)
    pd.DataFrame({"time": [0.0]}).to_parquet(path / "ledger.parquet")
    with pytest.raises(RunFolderError, match=r"ledger.parquet: columns \['msg_id'"):
        analysis.load_run(path).ledger
    empty = tmp_path / "empty-sweep"
    empty.mkdir()
    pd.DataFrame(columns=["run_id", "algorithm", "seed"]).to_parquet(empty / "runs.parquet")
    with pytest.raises(RunFolderError, match="runs.parquet: rows"):
        analysis.load(empty)
    unfinished = make_run(tmp_path, "r-2", status="running")
    with pytest.raises(RunFolderError, match="status"):
        analysis.load_run(unfinished)


# --- report ----------------------------------------------------------------------------

def _linked_pngs(report: Path) -> list[Path]:
    links = re.findall(r'src="([^"]+\.png)"', report.read_text())
    assert links, "report links no figure"
    return [report.parent / link for link in links]


def test_report_of_single_run(tmp_path):
    path = make_run(tmp_path, "quick-0123456789ab")
    report = write_report(path)
    assert report == path / "report" / "report.html"
    pngs = _linked_pngs(report)
    names = {p.stem for p in pngs}
    assert {"cost_over_time", "memory_over_time", "recall_over_time", "latency_cdf"} <= names
    for png in pngs:
        assert png.stat().st_size > 1000
        assert png.with_suffix(".pdf").stat().st_size > 1000
    text = report.read_text()
    assert "55" in text and "0.8" in text  # total cost and recall in the summary table
    cost = pd.read_csv(report.parent / "tables" / "cost_over_time.csv")
    assert cost["cost"].sum() == pytest.approx(55.0)


@pytest.mark.slow
# In the full suite (make test-full, CI): make test keeps complete sweep reports checked
# against numbers computed by hand (tests/test_report_any_study.py).
@pytest.mark.full_suite
def test_report_of_sweep(sweep):
    report = write_report(sweep)
    pngs = _linked_pngs(report)
    assert all(p.is_file() and p.stat().st_size > 1000 for p in pngs)
    assert (report.parent / "figures" / "comm_cost_per_time_vs_streams_count.png") in pngs
    agg = pd.read_csv(report.parent / "tables" / "aggregates.csv")
    row = agg[(agg["algorithm"] == "flood") & (agg["streams.count"] == 4)
              & (agg["metric"] == "comm_cost_total")].iloc[0]
    # cost_scale = 3 * 4 * seed, total = 55 * scale: seeds 1..3 -> 660, 1320, 1980
    assert row["mean"] == pytest.approx(1320.0)
    assert row["ci95"] == pytest.approx(4.303 * 660.0 / math.sqrt(3), rel=1e-3)
    # Reference setting: streams.count = 3 for both algorithms, all three seeds.
    rows, captions = reference_runs(analysis.load(sweep), ["streams.count"])
    assert len(rows) == 6 and set(rows["streams.count"]) == {3}
    assert captions["flood"] == "streams.count=3"


def test_report_progress_says_it_reads_only_the_reference_runs(tmp_path, capfd):
    # Two algorithms × two counts × 5 seeds: the reference setting is 10 of the 20 runs.
    for algorithm in ("centralized", "flood"):
        for count in (3, 4):
            for seed in range(1, 6):
                make_run(tmp_path, f"{algorithm}-c{count}s{seed}", algorithm, seed,
                         count=count)
    runs = analysis.load(tmp_path)
    rows, _ = reference_runs(runs, ["streams.count"])
    _Loaded(rows, of=len(runs))
    assert "reading the reference runs (10 of 20): 100%" in capfd.readouterr().err


@pytest.fixture
def small(tmp_path: Path) -> Path:
    """One algorithm, two seeds, nothing swept: the cheapest report."""
    root = tmp_path / "small"
    root.mkdir()
    for seed in (1, 2):
        make_run(root, f"flood-s{seed}", "flood", seed)
    return root


def test_family_section_is_called(small, monkeypatch):
    calls = []

    def section(runs, run_dirs, out_dir):
        calls.append((sorted(set(runs["algorithm"])), len(run_dirs), out_dir))
        (out_dir / "fake_note.txt").write_text("x")
        return "<p>fake family fragment</p>"

    module = types.ModuleType("analysis.fake_section")
    module.section = section
    monkeypatch.setitem(sys.modules, "analysis.fake_section", module)
    report = write_report(small, families={"fake": frozenset({"flood"})})
    # the section wrote into the staging folder that became the report folder
    (algorithms, n, staging), = calls
    assert (algorithms, n) == (["flood"], 2)
    assert staging.parent == report.parent.parent and staging.name.startswith(".report.")
    assert not staging.exists() and not [p for p in small.iterdir() if p.name[0] == "."]
    assert (report.parent / "fake_note.txt").is_file()
    assert "<p>fake family fragment</p>" in report.read_text()


def test_family_section_is_written_once_per_network_medium(tmp_path, monkeypatch):
    """A sweep over network.medium gets the family section once per medium, each in its
    own folder, with its figure links rebased onto the report's folder."""
    root = tmp_path / "media"
    root.mkdir()
    for medium in ("links", "shared"):
        for seed in (1, 2):
            path = make_run(root, f"flood-{medium}{seed}", "flood", seed)
            spec = json.loads((path / "spec.json").read_text())
            spec["network"] = {"medium": medium}
            (path / "spec.json").write_text(json.dumps(spec))
    calls = []

    def section(runs, run_dirs, out_dir):
        calls.append((sorted(set(runs["network.medium"])), len(run_dirs), out_dir))
        (out_dir / "figures").mkdir()
        (out_dir / "figures" / "fam.png").write_bytes(b"png")
        return '<img src="figures/fam.png">'

    module = types.ModuleType("analysis.fake_section")
    module.section = section
    monkeypatch.setitem(sys.modules, "analysis.fake_section", module)
    report = write_report(root, families={"fake": frozenset({"flood"})})
    out = report.parent
    staging = calls[0][2].parent      # renamed to the report folder when complete
    assert calls == [(["links"], 2, staging / "network.medium-links"),
                     (["shared"], 2, staging / "network.medium-shared")]
    text = report.read_text()
    assert "<h3>network.medium = links</h3>" in text
    for medium in ("links", "shared"):
        link = f"network.medium-{medium}/figures/fam.png"
        assert f'src="{link}"' in text and (out / link).is_file()


def test_missing_family_module_raises(small):
    assert families_present(["flood", "smj-h"]) == ["smj", "enrich", "triggers"]
    with pytest.raises(MissingFamilySection, match=r"analysis/nosuch_section.py"):
        write_report(small, families={"nosuch": frozenset({"flood"})})
    assert not (small / "report").exists()


def test_report_from_runs_table_without_run_folders(small, tmp_path):
    table_only = tmp_path / "table-only"
    table_only.mkdir()
    analysis.load(small).drop(columns=["run_dir"]).to_parquet(table_only / "runs.parquet")
    report = write_report(table_only)
    text = report.read_text()
    assert "No run folders beside the runs table" in text
    agg = pd.read_csv(report.parent / "tables" / "aggregates.csv").set_index("metric")
    assert agg.loc["comm_cost_total", "mean"] == 55.0 and agg.loc["comm_cost_total", "n"] == 2
    assert agg.loc["comm_cost_total", "ci95"] == 0.0


def test_metric_vs_param_plots_means_with_ci_in_value_order():
    # Sweeps store mixed-type parameter columns as strings: "10" must follow "2".
    runs = pd.DataFrame({"algorithm": ["a"] * 6, "seed": [1, 2] * 3,
                         "streams.disorder_mean": ["2", "2", "10", "10", "none", "none"],
                         "recall": [0.9, 1.0, 0.5, 0.7, 1.0, 1.0]})
    fig = plots.metric_vs_param(aggregate(runs), "streams.disorder_mean", "recall")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2", "10", "none"]
    line = ax.lines[0]
    assert line.get_ydata().tolist() == pytest.approx([0.95, 0.6, 1.0])
    assert ax.get_ylabel() == "recall [fraction]"


def test_memory_figure_names_every_highlighted_node_visibly():
    """Four nodes, the two largest peaks identical: they share one labelled line instead
    of one hiding the other, and the legend says how many of how many nodes it names."""
    from analysis.plots import memory_per_node
    t = [0.0, 1.0, 2.0]
    wide = pd.DataFrame({1: [0, 9, 3], 2: [0, 9, 3], 3: [0, 5, 1], 4: [0, 1, 0]}, index=t)
    wide["total"] = wide.sum(axis=1)
    fig = memory_per_node(wide, highlight=3)
    bottom = fig.axes[1]
    legend = bottom.get_legend()
    assert [x.get_text() for x in legend.get_texts()] == ["nodes 1, 2", "node 3"]
    assert legend.get_title().get_text() == "largest peaks\n(3 of 4 nodes)"
    colored = [ln for ln in bottom.get_lines() if ln.get_label() in ("nodes 1, 2", "node 3")]
    assert len({ln.get_color() for ln in colored}) == 2


# --- swept axes that change the exact answer -------------------------------------------

def test_answer_changes_compare_within_a_seed_and_the_other_axes():
    """period changes the answer within each seed; batch changes only cost; the seeds'
    answers differ, which alone flags nothing."""
    from analysis.answers import answer_changes, with_cost_per_result

    expected = {(0.5, 1): 177, (1.0, 1): 158, (2.0, 1): 119,
                (0.5, 2): 170, (1.0, 2): 150, (2.0, 2): 110}
    rows = [{"algorithm": "smj-h", "seed": seed, "params.smj-h.period": period,
             "params.smj-h.batch": batch, "expected_results": expected[(period, seed)],
             "results": expected[(period, seed)] - 1,
             "comm_cost_total": 4.0 * batch * (expected[(period, seed)] - 1)}
            for (period, seed) in expected for batch in (1, 2)]
    rows.append({"algorithm": "lottery", "seed": 1, "params.smj-h.period": None,
                 "params.smj-h.batch": None, "expected_results": 90, "results": 0,
                 "comm_cost_total": 50.0})
    runs = pd.DataFrame(rows)
    changes = answer_changes(runs)
    assert [c.axis for c in changes] == ["params.smj-h.period"]
    change = changes[0]
    assert change.expected == (177, 158, 119) and change.values == (0.5, 1.0, 2.0)
    assert (change.changed, change.settings) == (4, 4)   # 2 seeds x 2 batch values
    assert change.message == (
        "axis params.smj-h.period changes the exact answer: expected_results "
        "177 / 158 / 119 at params.smj-h.period = 0.5 / 1 / 2 (smj-h, seed 1, "
        "params.smj-h.batch = 1; it changes in 4 of 4 settings of algorithm, seed and "
        "the other axes); compare cost per result")
    # only the seeds differ: nothing to flag
    assert answer_changes(runs[runs["params.smj-h.period"] == 0.5]) == []
    assert answer_changes(runs.drop(columns=["expected_results"])) == []
    per = with_cost_per_result(runs)
    assert list(per.columns).index("comm_cost_per_result") == \
        list(per.columns).index("comm_cost_total") + 1
    assert per["comm_cost_per_result"].iloc[:4].tolist() == [4.0, 8.0, 4.0, 8.0]
    assert math.isnan(per["comm_cost_per_result"].iloc[-1])   # no results


def test_report_flags_an_axis_that_changes_the_answer_with_cost_per_result(tmp_path,
                                                                          monkeypatch):
    """Fabricated sweep over params.flood.period: the summary, the cost figure and the
    family section say that the answer changes, and show cost per result."""
    root = tmp_path / "periods"
    root.mkdir()
    expected = {0.5: 177, 1.0: 158, 2.0: 119}
    for period, answer in expected.items():
        for seed in (1, 2):
            # cost per result group = 10 * period + seed
            path = make_run(root, f"flood-p{period}s{seed}", "flood", seed, extra_summary={
                "expected_results": answer + seed, "results": answer + seed,
                "comm_cost_total": (10 * period + seed) * (answer + seed)})
            spec = json.loads((path / "spec.json").read_text())
            spec["params"] = {"flood": {"period": period}}
            (path / "spec.json").write_text(json.dumps(spec))
    fragments = []

    def section(runs, run_dirs, out_dir):
        fragments.append(runs["comm_cost_per_result"].tolist())
        return "<p>fake family fragment</p>"

    module = types.ModuleType("analysis.fake_section")
    module.section = section
    monkeypatch.setitem(sys.modules, "analysis.fake_section", module)
    report = write_report(root, families={"fake": frozenset({"flood"})})
    text = report.read_text()
    flag = ("axis params.flood.period changes the exact answer: expected_results "
            "178 / 159 / 120 at params.flood.period = 0.5 / 1 / 2 (flood, seed 1; it "
            "changes in 2 of 2 settings of algorithm, seed and the other axes); compare "
            "cost per result")
    summary = text[text.index('<section id="summary">'):text.index('<section id="parameters">')]
    assert flag in summary and "communication cost per result" in summary
    family = text[text.index('<section id="family-fake">'):]
    assert flag in family and "<p>fake family fragment</p>" in family
    assert sorted(fragments[0]) == [6.0, 7.0, 11.0, 12.0, 21.0, 22.0]
    assert "(params.flood.period changes the exact answer: compare cost per result)" in text
    assert "swept <code>params.flood.period</code>: 0.5, 1.0, 2.0 (changes the exact" in text
    agg = pd.read_csv(report.parent / "tables" / "aggregates.csv")
    per = agg[agg["metric"] == "comm_cost_per_result"].set_index("params.flood.period")
    assert per["mean"].to_dict() == {0.5: 6.5, 1.0: 11.5, 2.0: 21.5}
    assert per["ci95"].iloc[0] == pytest.approx(12.706 * math.sqrt(0.5) / math.sqrt(2),
                                                rel=1e-4)


def test_metrics_vs_param_draws_a_panel_per_metric():
    runs = pd.DataFrame({"algorithm": ["a"] * 4, "seed": [1, 2, 1, 2],
                         "params.a.period": [1.0, 1.0, 2.0, 2.0],
                         "comm_cost_per_time": [10.0, 12.0, 6.0, 6.0],
                         "comm_cost_per_result": [2.0, 2.0, 2.5, 3.5]})
    fig = plots.metrics_vs_param(aggregate(runs), "params.a.period",
                                 ["comm_cost_per_time", "comm_cost_per_result"])
    left, right = fig.axes
    assert left.lines[0].get_ydata().tolist() == pytest.approx([11.0, 6.0])
    assert right.lines[0].get_ydata().tolist() == pytest.approx([2.0, 3.0])
    assert right.get_ylabel().startswith("communication cost per result")
