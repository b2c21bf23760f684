"""The report of any study (issue 57): sweeps built with the real runner over the axes a
newcomer sweeps, checked against numbers computed by hand from ``runs.parquet``."""
from __future__ import annotations

import json
import re
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import smj_section
from analysis.report import write_report
from analysis.stats import ci_halfwidth
from experiments.store import RunFolderError
from experiments.sweep import sweep
from tests.test_analysis import make_run

NEWCOMER = """
[run]
name = "newcomer"
seed = 1
duration = 6.0
step = 0.01
memory_interval = 1.0
drain = 2.0

[topology]
generator = "random_geometric"
nodes = 8
radius = 0.45
link_cost = "distance"
delay = 0.01
bandwidth = 125000.0

[mobility]
model = "random_waypoint"
speed = [0.01, 0.02]
pause = 1.0
resolution = 1.0

[network]
routing = "aodv"
medium = "shared"

[energy]
model = "first_order"
battery_j = 0.5

[streams]
count = 3
rate = 3.0
keys = "uniform"
key_domain = 10

[query]
node = 0
predicate = "equality"
window = 2.0

[algorithm]
name = "smj-h"

[sweep]
seeds = [1, 2]
[sweep.grid]
"mobility.speed" = [[0.03, 0.05], [0.001, 0.002]]
"algorithm.name" = ["smj-h", "lottery"]
"""

#: Every kind of axis a spec allows, with every algorithm family: the grid sweeps the
#: algorithm and the trigger in force; the variants change a topology field, mobility,
#: the radio, batteries, routing and an algorithm's parameter (one variant holds them
#: all: each variant is a figure's worth of report time).
EVERY_AXIS = """
[run]
name = "every"
seed = 1
duration = 6.0
step = 0.01
memory_interval = 1.0
drain = 2.0

[topology]
generator = "random_geometric"
nodes = 8
radius = 0.6
link_cost = "distance"
delay = 0.01
bandwidth = 125000.0

[streams]
count = 2
rate = 3.0
keys = "uniform"
key_domain = 5

[query]
node = 0
predicate = "equality"
window = 2.0

[enrich.table]
service_time = 0.05

[algorithm]
name = "smj-h"

[trigger.atr]
use = "clock"

[trigger.atr.rate]
conditions = [{kind = "rate", above = 2.0, interval = 0.5}, {kind = "time", above = 2.0}]

[sweep]
seeds = [1]

[sweep.grid]
"algorithm.name" = ["smj-h", "lottery", "qjoin", "mp-k-slack", "atr", "ctr",
                    "enrich-on-demand", "centralized"]
"trigger.atr.use" = ["clock", "rate"]

[sweep.variants.plain]

[sweep.variants.manet]
"topology.nodes" = 9
"mobility.model" = "random_waypoint"
"mobility.speed" = [0.01, 0.03]
"radio.model" = "log_distance"
"radio.meters_per_unit" = 300.0
"radio.shadowing_db" = 2.0
"energy.model" = "first_order"
"energy.battery_j" = 5.0
"network.routing" = "aodv"
"params.smj-h.period" = 0.5
"""


def _sweep(tmp_path: Path, name: str, text: str) -> tuple[Path, pd.DataFrame]:
    spec = tmp_path / f"{name}.toml"
    spec.write_text(text)
    out = tmp_path / name
    sweep(spec, out=out, progress=False)
    return out, pd.read_parquet(out / "runs.parquet")


def _skipped(report: Path) -> list[str]:
    return re.findall(r'class="note">([^<]*skipped[^<]*)', report.read_text())


def _paired_by_hand(runs: pd.DataFrame, keys: list[str], contender: str, base: str,
                    metric: str) -> pd.DataFrame:
    mine = runs[runs["algorithm"] == contender][[*keys, metric]]
    theirs = runs[runs["algorithm"] == base][[*keys, metric]]
    both = mine.merge(theirs, on=keys, suffixes=("", "_base"))
    return both.assign(diff=both[metric] - both[f"{metric}_base"])


@pytest.mark.slow
def test_newcomer_study_reports_paired_by_speed(tmp_path):
    """SMJ-H against Lottery over a speed range, 2 seeds: the report is complete, the
    range is a number in runs.parquet, and every paired table holds the speed."""
    out, runs = _sweep(tmp_path, "newcomer", NEWCOMER)
    assert sorted(runs["mobility.speed_mean"].round(4).unique()) == [0.0015, 0.04]
    report = write_report(out)
    assert _skipped(report) == []
    assert not [p for p in out.iterdir() if p.name.startswith(".report")]
    text = report.read_text()
    assert "swept <code>mobility.speed_mean</code>: 0.0015, 0.04 (the mean of each range" in text
    tables = report.parent / "tables"

    # the generic comparison: smj-h − lottery at each speed, paired by seed, by hand
    got = pd.read_csv(tables / "compare_comm_cost_per_time.csv")
    assert got["mobility.speed_mean"].tolist() == sorted(got["mobility.speed_mean"])
    want = _paired_by_hand(runs, ["mobility.speed_mean", "seed"], "smj-h", "lottery",
                           "comm_cost_per_time")
    for speed, part in want.groupby("mobility.speed_mean"):
        row = got[(got["algorithm"] == "smj-h") & np.isclose(got["mobility.speed_mean"], speed)]
        assert len(row) == 1 and int(row["pairs"].iloc[0]) == 2
        assert row["diff_mean"].iloc[0] == pytest.approx(part["diff"].mean())
        assert row["diff_ci95"].iloc[0] == pytest.approx(ci_halfwidth(part["diff"]))
        base = got[(got["algorithm"] == "lottery") & np.isclose(got["mobility.speed_mean"], speed)]
        assert np.isnan(base["diff_mean"].iloc[0])

    # the SMJ section's reductions are paired by the speed too
    red = pd.read_csv(tables / "smj_reductions_vs_lottery.csv")
    want["reduction"] = 1 - want["comm_cost_per_time"] / want["comm_cost_per_time_base"]
    assert len(red) == 2
    for speed, part in want.groupby("mobility.speed_mean"):
        row = red[np.isclose(red["mobility.speed_mean"], speed)]
        assert row["reduction"].iloc[0] == pytest.approx(part["reduction"].mean())
    assert (report.parent / "figures" / "compare_vs_mobility_speed_mean.png").is_file()


@pytest.mark.slow
def test_every_kind_of_axis_with_every_family_gives_a_complete_report(tmp_path):
    out, runs = _sweep(tmp_path, "every", EVERY_AXIS)
    assert set(runs["algorithm"]) == {"smj-h", "lottery", "qjoin", "mp-k-slack", "atr", "ctr",
                                      "enrich-on-demand", "centralized"}
    report = write_report(out)
    text = report.read_text()
    assert _skipped(report) == []
    for section in ("comparison", "family-smj", "family-qjoin", "family-ctr", "family-enrich",
                    "family-triggers", "variants", "energy"):
        assert f'<section id="{section}">' in text, section
    # QJoin ran without a [params.qjoin] table: its section read the registry's defaults
    assert "QJoin vs MP-K-slack" in text
    got = pd.read_csv(report.parent / "tables" / "compare_recall.csv")
    assert list(got.columns[:2]) == ["variant", "trigger.atr.use"]
    assert got["variant"].tolist() == sorted(got["variant"])      # by value
    # qjoin − lottery per variant, by hand (only ATR has a trigger: not a pairing key)
    want = _paired_by_hand(runs, ["variant", "seed"], "qjoin", "lottery", "recall")
    assert set(want["variant"]) == {"manet", "plain"}
    for variant, part in want.groupby("variant"):
        row = got[(got["algorithm"] == "qjoin") & (got["variant"] == variant)]
        assert row["diff_mean"].iloc[0] == pytest.approx(part["diff"].mean())
    # ATR's trigger is held in the table: one row per trigger and variant
    atr = got[got["algorithm"] == "atr"]
    assert sorted(atr["trigger.atr.use"]) == ["clock", "clock", "rate", "rate"]
    # Lottery ignores ATR's trigger (the sweep ran it once): its run pairs with both
    assert (atr["pairs"] == 1).all()
    for (variant, trigger), part in runs[runs["algorithm"] == "atr"].groupby(
            ["variant", "trigger.atr.use"]):
        lottery = runs[(runs["algorithm"] == "lottery") & (runs["variant"] == variant)]
        row = atr[(atr["variant"] == variant) & (atr["trigger.atr.use"] == trigger)]
        assert row["diff_mean"].iloc[0] == pytest.approx(
            part["recall"].iloc[0] - lottery["recall"].iloc[0])


def _fake_family(monkeypatch, section):
    module = types.ModuleType("analysis.fake_section")
    module.section = section
    monkeypatch.setitem(sys.modules, "analysis.fake_section", module)


def test_a_failing_section_is_one_line_and_the_report_is_still_written(tmp_path, monkeypatch):
    root = tmp_path / "runs"
    for seed in (1, 2):
        make_run(root, f"flood-s{seed}", "flood", seed)

    def section(runs, run_dirs, out_dir):
        raise TypeError("cannot convert the series to <class 'float'>\nmore lines")

    _fake_family(monkeypatch, section)
    report = write_report(root, families={"fake": frozenset({"flood"})})
    assert _skipped(report)[-1] == ("section fake skipped: TypeError: cannot convert the "
                                    "series to &lt;class &#x27;float&#x27;&gt;")
    assert '<section id="summary">' in report.read_text()


def test_a_report_that_fails_leaves_the_older_one_as_it_was(tmp_path, monkeypatch):
    root = tmp_path / "runs"
    make_run(root, "flood-s1", "flood", 1)
    first = write_report(root)
    before = first.read_text()

    def broken(*args):
        raise RuntimeError("disk full")

    monkeypatch.setattr("analysis.report._page", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        write_report(root)
    assert first.read_text() == before
    assert sorted(p.name for p in root.iterdir()) == ["flood-s1", "report"]


def test_the_overview_names_the_warm_up(tmp_path):
    root = tmp_path / "runs"
    path = make_run(root, "flood-s1", "flood", 1)
    spec = json.loads((path / "spec.json").read_text())
    spec["run"]["warmup"] = 2.5
    (path / "spec.json").write_text(json.dumps(spec))
    text = write_report(root).read_text()
    assert "metrics leave out tuples that entered before t = 2.5" in text


def test_a_saving_with_fallen_recall_is_never_within_the_claim():
    red = pd.DataFrame({"wkey": [3.0, 3.0], "n": [3, 4], "algorithm": ["smj-h"] * 2,
                        "reduction": [0.55, 0.6], "ci95": [0.01, 0.01], "seeds": [2, 2],
                        "recall_change": [0.0, -0.2]})
    table, notes = smj_section.claims_table(red)
    assert "within the claim" not in table and "within the claim" not in notes[0]
    assert "recall fell by up to 20 points" in notes[0]
    kept = red.assign(recall_change=[0.0, 0.001])
    assert "within the claim." in smj_section.claims_table(kept)[1][0]


def test_a_report_folder_that_holds_other_things_is_refused(tmp_path):
    root = tmp_path / "runs"
    make_run(root, "flood-s1", "flood", 1)
    other = tmp_path / "notes"
    other.mkdir()
    (other / "mine.txt").write_text("keep")
    for out in (root, tmp_path, other):
        with pytest.raises(RunFolderError, match="report folder: expected a new or empty"):
            write_report(root, out=out)
    assert (other / "mine.txt").read_text() == "keep" and (root / "flood-s1").is_dir()
    assert write_report(root, out=tmp_path / "elsewhere").is_file()
    assert write_report(root, out=tmp_path / "elsewhere").is_file()   # an earlier report
