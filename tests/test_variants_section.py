"""The report's sections of sweep variants (analysis.variants_section) and of batteries
(analysis.energy_section): paired changes against the baseline variant with their
confidence intervals, the lifetime facts of a run, residual energy on the topology, and
both sections through the real sweep and report path."""
from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest

from analysis import energy_section as es
from analysis import variants_section as vs
from analysis.families import axis_sections_present, summary_sections_present
from analysis.stats import t_quantile
from experiments.runner import run
from experiments.store import Run
from testbed.cli import main
from tests.test_energy import smoke


# -- paired changes on a synthetic runs table ------------------------------------------
def synthetic() -> pd.DataFrame:
    """Two algorithms x three seeds x two variants; manet raises a's cost by 10, 20 and
    30 % and b's by 50 % each seed, takes 0.1 of recall, and alone has batteries."""
    rows = []
    for algorithm, raise_ in (("a", [0.10, 0.20, 0.30]), ("b", [0.5, 0.5, 0.5])):
        for seed, up in zip((1, 2, 3), raise_):
            base = 10.0 * seed
            rows.append({"run_id": f"{algorithm}-i-{seed}", "algorithm": algorithm,
                         "seed": seed, "variant": "ideal", "comm_cost_per_time": base,
                         "recall": 1.0, "latency_mean": 0.5, "run_dir": None})
            rows.append({"run_id": f"{algorithm}-m-{seed}", "algorithm": algorithm,
                         "seed": seed, "variant": "manet",
                         "comm_cost_per_time": base * (1 + up), "recall": 0.9,
                         "latency_mean": 0.5, "energy_total_j": 2.0 + seed,
                         "first_node_death": 10.0 * seed, "run_dir": None})
    return pd.DataFrame(rows)


def test_paired_changes_per_algorithm_with_student_t_intervals():
    frame = vs.compare(synthetic(), "ideal").set_index("algorithm")
    a, b = frame.loc["a"], frame.loc["b"]
    assert a["seeds"] == 3 and a["variant"] == "manet"
    assert a["d_comm_cost_per_time"] == pytest.approx(20.0)
    # sd of (10, 20, 30) is 10: the half-width is t(0.975, 2) * 10 / sqrt(3)
    assert a["d_comm_cost_per_time_ci95"] == pytest.approx(t_quantile(0.975, 2) * 10 / 3 ** 0.5)
    assert b["d_comm_cost_per_time"] == pytest.approx(50.0)
    assert b["d_comm_cost_per_time_ci95"] == pytest.approx(0.0)
    assert a["base_comm_cost_per_time"] == pytest.approx(20.0)
    assert a["d_recall"] == pytest.approx(-0.1)          # a difference, not a ratio
    assert a["d_latency_mean"] == pytest.approx(0.0)
    # the baseline has no batteries: no change, but the variant's own mean and CI
    assert math.isnan(a["d_energy_total_j"])
    assert a["own_energy_total_j"] == pytest.approx(4.0)
    assert a["own_first_node_death"] == pytest.approx(20.0)
    # numbers no run has are not there at all
    assert "d_memory_mean_tuples" not in frame and "own_latency_p95" not in frame


def test_the_section_writes_a_table_a_figure_and_why_sentences(tmp_path):
    runs = synthetic()
    html_text = vs.section(runs, [], tmp_path)
    assert "manet against ideal" in html_text
    assert (tmp_path / "figures" / "variants_manet_changes.png").is_file()
    assert (tmp_path / "figures" / "variants_manet_changes.pdf").is_file()
    table = pd.read_csv(tmp_path / "tables" / "variants_paired.csv")
    assert sorted(table["algorithm"]) == ["a", "b"]
    header = [h.removesuffix(" (baseline → this)")
              for h in re.findall(r"<th>([^<]*)</th>", html_text)]
    assert header[:3] == ["algorithm", "variant", "seeds"]
    assert "cost / time: Δ %" in header and "recall: Δ" in header
    assert "energy [J]: Δ %" in header and "first death: Δ" in header
    assert not any(h.startswith(("memory", "latency p95", "dead at end")) for h in header)
    assert "20 ± 25 (20 → 24.7)" in html_text            # a's cost, both means in brackets
    assert "– → 4 ± 2.5" in html_text                     # a's energy, manet alone
    # the sentence compares the means: (24.7 - 20) / 20
    assert "a, ideal → manet: cost +23 % (20 → 24.7 per time unit)" in html_text
    assert "recall -0.100" in html_text


def test_the_baseline_is_ideal_when_present_else_the_first_variant():
    assert vs.baseline_of(pd.Series(["manet", "ideal", "manet"])) == "ideal"
    assert vs.baseline_of(pd.Series(["dense", "sparse"])) == "dense"


def test_sections_are_called_for_by_the_variant_column_and_by_energy():
    runs = synthetic()
    assert "variants" in axis_sections_present(runs)
    assert "variants" not in axis_sections_present(runs[runs["variant"] == "manet"])
    assert summary_sections_present(runs) == ["energy"]
    assert summary_sections_present(runs.drop(columns=["energy_total_j"])) == []
    assert vs.section(runs[runs["variant"] == "ideal"], [], "unused") == ""


def test_an_infinite_summary_figure_reads_back_as_a_number(tmp_path):
    import json

    from experiments.store import Run

    (tmp_path / "summary.json").write_text(json.dumps({"energy_per_result_j": "inf",
                                                       "results": 0, "store": "llf"}))
    summary = Run(tmp_path).summary
    assert math.isinf(summary["energy_per_result_j"]) and summary["store"] == "llf"


# -- lifetime ---------------------------------------------------------------------------
def test_the_sink_is_cut_off_when_a_source_dies_or_its_last_path_does():
    path = {0: {1}, 1: {0, 2}, 2: {1, 3}, 3: {2}}            # 3 - 2 - 1 - 0 (the sink)
    # the relay 1 dies at 4: both sources lose the sink at once
    assert es.cut_times([(0.0, path)], 0, [2, 3], {1: 4.0}) == (4.0, 4.0)
    # source 3 dies at 2, then the relay 2 at 6: cut off at 2, isolated at 6
    assert es.cut_times([(0.0, path)], 0, [2, 3], {3: 2.0, 2: 6.0}) == (2.0, 6.0)
    # an epoch that breaks the link 2-1 at 5 (no death)
    broken = {0: {1}, 1: {0}, 2: {3}, 3: {2}}
    assert es.cut_times([(0.0, path), (5.0, broken)], 0, [2, 3], {}) == (5.0, 5.0)
    cut, isolated = es.cut_times([(0.0, path)], 0, [2, 3], {})
    assert math.isnan(cut) and math.isnan(isolated)


def test_a_lifetime_gain_is_judged_against_what_the_saving_predicts():
    assert es.expected_gain(50.0) == pytest.approx(100.0)
    assert es.expected_gain(20.0) == pytest.approx(25.0)
    assert es.gain_verdict(50.0, 100.0, 30.0) == "as large as the saving predicts"
    assert es.gain_verdict(50.0, 40.0, 30.0) == "smaller than the saving predicts"
    assert es.gain_verdict(20.0, 80.0, 30.0) == "larger than the saving predicts"


@pytest.fixture(scope="module")
def dying_run(tmp_path_factory) -> Run:
    """16 nodes for 6 time units on small batteries under AODV: some nodes die."""
    return run(smoke(battery=0.004, routing="aodv"), out=tmp_path_factory.mktemp("energy"))


def test_a_runs_energy_facts_come_from_its_deaths_results_and_ledger(dying_run):
    summary, meta = dying_run.summary, dying_run.meta
    deaths = {int(u): t for u, t in meta["backend_info"]["energy"]["deaths"].items()}
    assert deaths and summary["first_node_death"] == pytest.approx(min(deaths.values()))
    facts = es.run_energy(dying_run, summary)
    first = summary["first_node_death"]
    groups = dying_run.results.groupby("group")["emitted_at"].min()
    assert facts["results_before_first_death"] == (groups < first).sum()
    assert facts["results_per_joule"] == pytest.approx(
        summary["results"] / summary["energy_total_j"])
    assert facts["lifetime"] == first
    ledger = dying_run.ledger
    data = ledger[(ledger["kind"] != "routing") & (ledger["time"] < first)]
    assert facts["cost_per_time_all_alive"] == pytest.approx(data["cost"].sum() / first)
    sources = set(meta["stream_nodes"].values())
    assert facts["sources_dead_at_end"] == len(sources & set(deaths))
    # a source that died cuts the query off no later than its death
    if sources & set(deaths):
        assert facts["sink_cut_at"] <= min(deaths[s] for s in sources & set(deaths))
    assert facts["sink_cut_at"] >= 0.0


def test_residual_energy_is_drawn_on_the_topology_with_the_dead_and_mains_marked(dying_run):
    fig = es.topology_figure([("smoke", dying_run)])
    ax = fig.axes[0]
    energy = dying_run.meta["backend_info"]["energy"]
    dead = {int(u) for u in energy["deaths"]}
    alive = [c for c in ax.collections if c.get_array() is not None][0]
    # every live battery node coloured by its residual share of the battery
    plan = es.plan_of(dying_run)
    live = [u for u in sorted(plan.topology.graph.nodes) if u not in dead and u != 0]
    first = es._initial(dying_run)
    expected = [energy["residual_j"][str(u)] / first[u] for u in live]
    assert np.asarray(alive.get_array(), dtype=float) == pytest.approx(expected)
    pos = plan.dynamics.snapshot(float(plan.duration)).nodes(data="pos")
    assert alive.get_offsets().tolist() == pytest.approx([list(pos[u]) for u in live])
    crosses = [c for c in ax.collections if c.get_array() is None
               and len(c.get_offsets()) == 1 and tuple(c.get_offsets()[0]) in
               {tuple(pos[u]) for u in dead}]
    assert len(crosses) == len(dead) == dying_run.summary["nodes_dead_at_end"]
    assert f"{len(dead)} dead" in ax.get_title()


def test_residual_energy_over_time_starts_full_and_its_minimum_reaches_zero(dying_run):
    grid = np.linspace(0.0, float(dying_run.metrics["time"].max()), 13)
    mean, low = es.residual_series(dying_run, grid)
    assert mean[0] == pytest.approx(0.004) and low[0] == pytest.approx(0.004)
    assert (low <= mean + 1e-12).all() and low[-1] == pytest.approx(0.0)
    assert (np.diff(mean) <= 1e-12).all()


# -- through the CLI ---------------------------------------------------------------------
SPEC = """
[run]
name = "two_networks"
duration = 6.0
step = 0.1
memory_interval = 0.5
drain = 2.0
[topology]
generator = "random_geometric"
nodes = 16
radius = 0.4
link_cost = "distance"
delay = 0.1
[streams]
count = 2
rate = 4.0
key_domain = 5
[query]
node = 0
window = 1.0
[algorithm]
name = "centralized"
[sweep]
seeds = [3, 4]
[sweep.grid]
"algorithm.name" = ["centralized", "naive"]
[sweep.variants.ideal]
[sweep.variants.manet]
"network.routing" = "aodv"
"energy.model" = "first_order"
"energy.battery_j" = 0.004
"energy.idle_w" = 0.0005
"""


# In the full suite (make test-full, CI): make test keeps a report of variants swept
# with every family (tests/test_report_any_study.py) and this module's other tests.
@pytest.mark.full_suite
def test_a_sweep_with_two_variants_reports_both_sections(tmp_path, capsys):
    spec = tmp_path / "two.toml"
    spec.write_text(SPEC)
    out = tmp_path / "sweep"
    assert main(["sweep", str(spec), "--out", str(out), "--report"]) == 0
    runs = pd.read_parquet(out / "runs.parquet")
    assert sorted(runs.groupby("variant").size().items()) == [("ideal", 4), ("manet", 4)]
    report = (out / "report" / "report.html").read_text()
    assert '<section id="variants">' in report and '<section id="energy">' in report
    paired = pd.read_csv(out / "report" / "tables" / "variants_paired.csv")
    assert sorted(paired["algorithm"]) == ["centralized", "naive"]
    assert (paired["seeds"] == 2).all() and (paired["variant"] == "manet").all()
    # the paired change is the mean of the two seeds' changes, from runs.parquet
    assert runs["comm_cost_per_time"].dtype == float
    for algorithm, row in paired.set_index("algorithm").iterrows():
        mine = runs[runs["algorithm"] == algorithm].set_index(["variant", "seed"])
        changes = [100 * (mine.loc[("manet", s), "comm_cost_per_time"]
                          / mine.loc[("ideal", s), "comm_cost_per_time"] - 1) for s in (3, 4)]
        assert row["d_comm_cost_per_time"] == pytest.approx(np.mean(changes))
        assert row["d_routing_packets_per_time"] > 0      # AODV's packets, none ideally
    # the energy section is written for the variant with batteries only
    energy = pd.read_csv(out / "report" / "variant-manet" / "tables" / "energy_settings.csv")
    assert sorted(energy["algorithm"]) == ["centralized", "naive"]
    deaths = runs[runs["variant"] == "manet"].groupby("algorithm")["first_node_death"].mean()
    assert deaths.notna().all()
    assert energy.set_index("algorithm")["first_node_death"].to_dict() == pytest.approx(
        deaths.to_dict())
    assert (out / "report" / "variant-manet" / "figures" / "energy_topology.png").is_file()
    assert not (out / "report" / "variant-ideal" / "tables" / "energy_settings.csv").exists()
    # family sections are written once per variant
    assert "<h3>variant = manet</h3>" in report
    summary = json.loads((out / next(iter(runs["run_id"])) / "summary.json").read_text())
    assert "recall" in summary


# -- the specs --------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["smj_adhoc", "qjoin_soccer", "triggers_bursty", "prefetch"])
def test_a_manet_spec_is_its_ideal_spec_beside_a_realistic_network(name):
    from experiments import spec as specs

    def first(path, variant=None):
        resolved, _ = specs.load(f"experiments/specs/{path}.toml")
        return next(s for s, p in specs.expand(resolved) if p.get("variant") == variant)

    original, ideal = first(name), first(f"{name}_manet", "ideal")
    for table in ("topology", "mobility", "streams", "query", "network", "radio", "energy"):
        assert ideal[table] == original[table], table
    manet = first(f"{name}_manet", "manet")
    assert manet["network"] == {**ideal["network"], "routing": "aodv", "medium": "shared"}
    assert manet["radio"]["model"] == "log_distance" and manet["radio"]["meters_per_unit"] == 500
    assert manet["energy"]["model"] == "first_order" and manet["energy"]["battery_j"] > 0
    assert manet["topology"]["bandwidth"] is not None


def test_the_lifetime_spec_compares_smj_with_lottery_and_ctrs_two_stores_over_five_seeds():
    from experiments import spec as specs

    resolved, _ = specs.load("experiments/specs/lifetime.toml")
    runs = specs.expand(resolved)
    settings = {(s["algorithm"]["name"], p.get("params.ctr.store")) for s, p in runs}
    assert settings == {("smj-e", None), ("smj-h", None), ("lottery", None),
                        ("ctr", "llf"), ("ctr", "cover")}
    assert len(runs) == 25 and {s["energy"]["model"] for s, _ in runs} == {"first_order"}


#: The first point of each _manet spec's ideal and manet variants and its run id from
#: before the manet_mac variant (issue 58): adding a variant must not move them.
PINNED = {
    "smj_adhoc_manet": ("smj_adhoc_manet-2300dde54452", "smj_adhoc_manet-ce3870bfe182"),
    "qjoin_soccer_manet": ("qjoin_soccer_manet-85bd09c965ed",
                           "qjoin_soccer_manet-3447b09776d0"),
    "triggers_bursty_manet": ("triggers_bursty_manet-6836b6e572f3",
                              "triggers_bursty_manet-4af441f649ba"),
    "prefetch_manet": ("prefetch_manet-5b6bca74a1d6", "prefetch_manet-977feada3d9c"),
}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_a_manet_specs_mac_variant_is_its_manet_variant_under_dcf_decoding_its_links(name):
    from emulator.mac.config import decode_range_m, mac_from_table
    from experiments import spec as specs
    from topologies.radio import radio_from_table

    resolved, _ = specs.load(f"experiments/specs/{name}.toml")
    points = specs.expand(resolved)
    first = {v: next(s for s, p in points if p["variant"] == v)
             for v in ("ideal", "manet", "manet_mac")}
    assert (specs.run_id(first["ideal"]), specs.run_id(first["manet"])) == PINNED[name]
    manet, mac = first["manet"], first["manet_mac"]
    assert {k: v for k, v in mac.items() if k not in ("mac", "sweep")} == \
        {k: v for k, v in manet.items() if k not in ("mac", "sweep")}
    assert mac["mac"]["model"] == "802.11" and mac["mac"]["data_rate"] == 1e6
    # every link the radio makes is one the MAC decodes (else routes cross no frame)
    radio = radio_from_table(mac["radio"])
    assert decode_range_m(mac_from_table(mac["mac"]), radio) >= radio.range_m()
    assert specs.spec_warnings(mac) == []


def test_smj_adhoc_shared_keeps_its_two_media_and_adds_dcf_on_the_shared_one():
    from experiments import spec as specs

    resolved, _ = specs.load("experiments/specs/smj_adhoc_shared.toml")
    points = specs.expand(resolved)
    assert len(points) == 4 * 4 * 3 * 5
    first = {v: next(s for s, p in points if p["variant"] == v)
             for v in ("links", "shared", "shared_mac")}
    assert specs.run_id(first["links"]) == "smj_adhoc_shared-9b77ac9f5e8c"
    assert specs.run_id(first["shared"]) == "smj_adhoc_shared-dd61fcbf5f4e"
    assert first["shared_mac"]["network"]["medium"] == "shared"
    assert first["shared_mac"]["mac"]["model"] == "802.11"
