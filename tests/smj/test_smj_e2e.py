"""End to end: SMJ specs through experiments.run / sweep and the report section."""

import pandas as pd
import pytest

from analysis.smj_section import reductions, run_info, section
from experiments.runner import run
from experiments.sweep import sweep

SPEC = {"run": {"name": "smj_e2e", "duration": 8.0, "step": 0.01, "seed": 5, "drain": 2.0},
        "topology": {"generator": "complete", "nodes": 8, "cost_range": [1, 10],
                     "delay": 0.01},
        "streams": {"count": 4, "rate": 5.0, "key_domain": 20},
        "query": {"node": 0, "window": 3.0}}


def test_run_gives_full_recall_and_smje_beats_lottery(tmp_path):
    summaries = {}
    for name in ("smj-e", "smj-h", "lottery", "naive"):
        spec = {**SPEC, "algorithm": {"name": name}}
        summaries[name] = run(spec, out=tmp_path).summary
    for name, s in summaries.items():
        assert s["recall"] == 1.0 and s["duplicates"] == 0, name
        assert s["results"] > 0
    e, lot = summaries["smj-e"], summaries["lottery"]
    assert e["comm_cost_total"] <= lot["comm_cost_total"]
    assert e["comm_cost_total"] == pytest.approx(e["synopsis_cost"] + e["data_cost"])
    assert e["data_cost"] == pytest.approx(e["hindsight_cost"])   # static complete graph


@pytest.mark.slow
def test_sweep_and_report_section(tmp_path):
    spec_path = tmp_path / "smj_tiny.toml"
    spec_path.write_text("""
[run]
name = "smj_tiny"
duration = 6.0
step = 0.01
drain = 2.0
[topology]
generator = "complete"
nodes = 6
cost_range = [1, 10]
delay = 0.01
[streams]
count = 3
rate = 4.0
key_domain = 20
[query]
node = 0
window = 3.0
[algorithm]
name = "smj-h"
[sweep]
seeds = [1, 2]
[sweep.grid]
"streams.count" = [2, 3]
"query.window" = [3.0, "none"]
"algorithm.name" = ["smj-e", "smj-h", "lottery", "naive"]
""")
    out = tmp_path / "runs"
    frame = sweep(spec_path, out=out, progress=False)
    assert len(frame) == 32 and (frame["recall"] == 1.0).all()
    runs = pd.read_parquet(out / "runs.parquet")
    dirs = [out / r for r in runs["run_id"]]
    info = run_info(runs, dirs)
    assert set(info["window"].map(lambda w: "none" if w is None else w)) == {3.0, "none"}
    red = reductions(info)
    assert len(red) == 2 * 2 * 3 and (red["seeds"] == 2).all()
    keys = ["streams.count", "query.window", "seed"]
    lot = runs[runs.algorithm == "lottery"][keys + ["comm_cost_per_time"]]
    e = runs[runs.algorithm == "smj-e"].merge(lot, on=keys, suffixes=("", "_lot"))
    e["red"] = 1 - e["comm_cost_per_time"] / e["comm_cost_per_time_lot"]
    want = e.groupby(["streams.count", "query.window"])["red"].mean()
    got = red[red.algorithm == "smj-e"].set_index(["n", "wkey"])["reduction"]
    for (n, w), value in want.items():
        assert got[(n, -1.0 if w == "none" else float(w))] == pytest.approx(value)
    html = section(runs, dirs, tmp_path / "report")
    assert "Figure 1" in html and "Figure 2" in html and "20–40%" in html
    for name in ("smj_fig1_cost_vs_sources.png", "smj_fig2_cost_vs_time.png"):
        assert (tmp_path / "report" / "figures" / name).stat().st_size > 1000
    assert (tmp_path / "report" / "tables" / "smj_breakdown.csv").exists()
