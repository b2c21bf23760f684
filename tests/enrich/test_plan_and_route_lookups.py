"""SMJ plans and CTR routes fetched as lookups: on a loss-free multi-hop network every
fetching mode gives exactly the answer of the pushed / carried protocol; only when
blocks and partial results move, and what the lookups cost, differ."""
from __future__ import annotations

import copy
import tomllib
from pathlib import Path

import pytest

from experiments.runner import run
from experiments.spec import SpecError

SWEEP = Path(__file__).resolve().parents[2] / "experiments" / "specs" / "prefetch_smj_ctr.toml"
#: A static (hence loss-free) multi-hop network: 20 nodes, radio range 0.4.
BASE = {
    "run": {"name": "lookups", "seed": 3, "duration": 15.0, "step": 0.02, "drain": 5.0,
            "memory_interval": 1.0},
    "topology": {"generator": "random_geometric", "nodes": 20, "radius": 0.4,
                 "link_cost": "distance", "delay": 0.02, "jitter": 0.01},
    "streams": {"count": 3, "rate": 5.0, "key_domain": 10},
    "query": {"node": 0, "predicate": "equality", "window": 2.0},
}


def spec(name: str, **params) -> dict:
    s = copy.deepcopy(BASE)
    s["algorithm"] = {"name": name}
    s["params"] = {name: params}
    return s


@pytest.fixture(scope="module")
def smj(tmp_path_factory):
    out = tmp_path_factory.mktemp("smj")
    modes = {"push": {},
             "on-demand": {"plan": "lookup"},
             "on-demand-ttl": {"plan": "lookup", "plan_ttl": 1.5},
             "eager": {"plan": "lookup", "plan_fetch": "eager", "plan_ttl": 1.5}}
    return {m: run(spec("smj-h", period=1.0, **p), out=out) for m, p in modes.items()}


@pytest.fixture(scope="module")
def ctr(tmp_path_factory):
    out = tmp_path_factory.mktemp("ctr")
    modes = {"carried": {}, "on-demand": {"routes": "lookup"},
             "eager": {"routes": "lookup", "route_fetch": "eager"}}
    return {m: run(spec("ctr", hosts=6, **p), out=out) for m, p in modes.items()}


def groups(r) -> list:
    return sorted(r.results["group"])


def assert_same_answers(runs: dict, base: str, at_least: int) -> None:
    """Run ``base`` is complete (> ``at_least`` results, nothing lost) and every run
    gives exactly its groups, without duplicates."""
    first = runs[base]
    assert first.summary["results"] == first.summary["expected_results"] > at_least
    assert not first.ledger["lost"].any()
    for mode, r in runs.items():
        assert groups(r) == groups(first), mode
        assert r.summary["duplicates"] == 0 and r.summary["recall"] == 1.0, mode


def test_smj_plan_lookups_give_the_pushed_answer(smj):
    assert_same_answers(smj, "push", 50)
    for mode, r in smj.items():
        assert r.summary["needs"] == smj["push"].summary["needs"] > 10, mode


def test_smj_plan_lookup_costs_and_stalls(smj):
    s = {m: r.summary for m, r in smj.items()}
    push, demand, ttl, eager = s["push"], s["on-demand"], s["on-demand-ttl"], s["eager"]
    assert push["lookups"] == push["prefetches"] == 0 and push["plan"] == "push"
    # each block fetches its own, filtered plan: the data moves exactly as when pushed
    assert demand["lookups"] == demand["needs"] and demand["lookup_cost"] > 0
    assert demand["data_cost"] == pytest.approx(push["data_cost"])
    assert demand["filtered_tuples"] == push["filtered_tuples"] > 0
    # a cached plan serves later blocks at once, unfiltered: fewer lookups and stalls,
    # more data
    assert 0 < ttl["lookups"] < demand["lookups"]
    assert ttl["stall_time_total"] < demand["stall_time_total"]
    assert ttl["data_cost"] > demand["data_cost"]
    # eager refreshes every period: one prefetch per block, almost no stall
    assert eager["prefetches"] == eager["needs"] and eager["lookups"] == 0
    assert eager["stall_time_total"] < ttl["stall_time_total"]
    assert 0.5 < eager["prefetch_precision"] <= 1 and eager["prefetch_recall"] > 0.5
    assert eager["prefetch_bytes"] > 0 and 0 <= eager["wasted_bytes"] < eager["prefetch_bytes"]
    # the kinds in the ledger: requests and replies, no pushed filters
    kinds = set(smj["on-demand"].ledger["kind"])
    assert "lookup" in kinds and "filter" not in kinds
    assert "prefetch" in set(smj["eager"].ledger["kind"])


def test_the_report_tabulates_each_plan_mode_and_checks_the_answers(smj):
    from analysis.enrich_section import per_mode, same_answers
    from analysis.report import write_report

    runs = analysis_runs(smj)
    frame = per_mode(runs).set_index("mode")
    assert list(frame.index) == ["push", "on-demand", "on-demand, ttl 1.5", "eager, ttl 1.5"]
    stalls = {m: r.summary["stall_time_total"] for m, r in smj.items()}
    assert frame.loc["eager, ttl 1.5", "stall_time_total"] == pytest.approx(stalls["eager"])
    assert frame.loc["on-demand", "stall_reduction"] == 0.0
    assert frame.loc["on-demand, ttl 1.5", "stall_reduction"] == pytest.approx(
        1 - stalls["on-demand-ttl"] / stalls["on-demand"])
    assert same_answers(runs, "push") == {m: True for m in frame.index}
    text = write_report(smj["push"].path.parent).read_text()
    assert "smj-h: plans fetched as lookups" in text
    assert "every run&#x27;s result groups equal the push run&#x27;s of its seed" in text


def analysis_runs(by_mode: dict):
    import analysis

    return analysis.load(next(iter(by_mode.values())).path.parent)


def test_ctr_route_lookups_give_the_carried_answer(ctr):
    assert_same_answers(ctr, "carried", 20)


def test_ctr_route_lookups_stall_partial_results(ctr):
    s = {m: r.summary for m, r in ctr.items()}
    carried, demand, eager = s["carried"], s["on-demand"], s["eager"]
    assert carried["needs"] == carried["lookups"] == 0 and carried["routes"] == "carried"
    assert demand["lookups"] == demand["needs"] > 10 and demand["route_fetch"] == "on-demand"
    assert demand["stall_time_total"] > 0 and demand["latency_mean"] > carried["latency_mean"]
    # segments carry one hop instead of the whole route; the rest comes as replies
    assert demand["lookup_cost"] > 0
    # eager asks when the segment arrives: a hop-1 probe never waits longer than on demand
    assert eager["prefetches"] > 0 and eager["lookups"] == 0
    assert eager["needs"] == demand["needs"]
    assert eager["stall_time_total"] <= demand["stall_time_total"]
    assert eager["prefetch_precision"] == 1.0


@pytest.mark.parametrize("name, params, message", [
    ("smj-h", {"plan": "pull"}, r"params\.smj-h\.plan: expected one of push, lookup, "
                                r"got 'pull'"),
    ("smj-e", {"plan": "lookup", "plan_fetch": "soon"},
     r"params\.smj-e\.plan_fetch: expected one of on-demand, eager, got 'soon'"),
    ("smj-h", {"plan": "lookup", "plan_ttl": -1.0},
     r"params\.smj-h\.plan_ttl: expected a number >= 0 \(or inf\), got -1\.0"),
    ("smj-h", {"plan": "lookup", "plan_timeout": 0.0},
     r"params\.smj-h\.plan_timeout: expected a number > 0, got 0\.0"),
    ("ctr", {"routes": "ask"}, r"params\.ctr\.routes: expected one of carried, lookup, "
                               r"got 'ask'"),
    ("ctr", {"routes": "lookup", "route_ttl": -2.0},
     r"params\.ctr\.route_ttl: expected a number >= 0 \(or inf\), got -2\.0"),
    ("ctr", {"routes": "lookup", "route_timeout": 0.0},
     r"params\.ctr\.route_timeout: expected a number > 0, got 0\.0"),
])
def test_bad_lookup_options_are_one_line_naming_the_field(tmp_path, name, params, message):
    with pytest.raises(SpecError, match=message) as err:
        run(spec(name, **params), out=tmp_path)
    assert "\n" not in str(err.value)


def test_plan_lookups_follow_the_center_when_it_moves(tmp_path):
    """On the mobile sweep's network the synopsis center moves; the plans it kept and the
    requests waiting at it move with it, and requests that reach a node it left are
    passed on: nothing is lost, and the answer stays the pushed one."""
    raw = tomllib.loads(SWEEP.read_text())
    raw.pop("sweep")
    raw["run"]["duration"] = 20.0
    by_mode = {}
    for mode, params in {"push": {}, "on-demand": {"plan": "lookup"},
                         "eager": {"plan": "lookup", "plan_fetch": "eager",
                                   "plan_ttl": 1.5}}.items():
        s = copy.deepcopy(raw)
        s["params"]["smj-h"].update(params)
        by_mode[mode] = run(s, out=tmp_path)
    push = by_mode["push"]
    for mode, r in by_mode.items():
        assert r.summary["center_moves"] >= 2 and r.summary["lost_messages"] == 0, mode
        assert groups(r) == groups(push), mode
    assert by_mode["on-demand"].summary["lookups"] >= by_mode["on-demand"].summary["needs"]
