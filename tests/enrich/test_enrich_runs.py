"""The enrichment pipeline end to end: every mode gives the exact answer, prefetching
cuts stalls at the price of bytes, profiles are learnt from a training run and checked
when loaded."""
from __future__ import annotations

import copy
import json
import tomllib
from pathlib import Path

import pytest

from experiments.runner import run
from experiments.spec import SpecError
from experiments.store import PREPARED_DIR, Run

SPEC = Path(__file__).resolve().parent / "prefetch_base.toml"
MODES = ("enrich-on-demand", "enrich-predicted", "enrich-eager", "enrich-oracle")


def spec_for(name: str, **params) -> dict:
    raw = tomllib.loads(SPEC.read_text())
    raw.pop("sweep")
    raw["run"]["duration"] = 30.0
    raw["algorithm"]["name"] = name
    raw["params"].setdefault(name, {}).update(params)
    return raw


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("enrich")
    return out, {name: run(spec_for(name), out=out) for name in MODES}


def test_every_mode_gives_the_exact_answer_once(runs):
    _, by_mode = runs
    groups = None
    for name, r in by_mode.items():
        s = r.summary
        assert s["results"] == s["expected_results"] == s["needs"] > 100, name
        assert s["duplicates"] == 0 and s["recall"] == 1.0
        mine = set(r.results["group"])
        assert groups is None or mine == groups
        groups = mine


def test_prefetching_cuts_stalls_for_bytes(runs):
    _, by_mode = runs
    s = {name: r.summary for name, r in by_mode.items()}
    base = s["enrich-on-demand"]
    assert base["prefetches"] == 0 and base["lookups"] > 50 and base["stall_time_total"] > 0
    for name in MODES[1:]:
        assert s[name]["prefetches"] > 0 and s[name]["prefetch_bytes"] > 0
        assert s[name]["stall_time_total"] < 0.5 * base["stall_time_total"], name
        assert s[name]["lookups"] < base["lookups"], name
        assert 0 < s[name]["prefetch_precision"] <= 1 and 0 < s[name]["prefetch_recall"] <= 1
        assert 0 <= s[name]["wasted_bytes"] < s[name]["prefetch_bytes"]
    # eager fetches for every tuple: the most bytes, the most wasted (predicted at the
    # default threshold 0.5 fetches for every tuple too on this short run: every type's
    # lookup probability is above one half)
    assert s["enrich-eager"]["prefetches"] == s["enrich-eager"]["needs"]
    assert s["enrich-eager"]["wasted_bytes"] >= s["enrich-predicted"]["wasted_bytes"]
    # the oracle: never more bytes nor stall than eager (on this network it falls back to
    # fetching every row at birth, which is eager's schedule: tests/enrich/test_oracle.py)
    assert s["enrich-eager"]["wasted_bytes"] >= s["enrich-oracle"]["wasted_bytes"]
    assert s["enrich-eager"]["stall_time_total"] >= s["enrich-oracle"]["stall_time_total"]


def test_a_higher_threshold_trades_stalls_for_fewer_and_surer_prefetches(runs, tmp_path):
    _, by_mode = runs
    eager = by_mode["enrich-eager"].summary
    picky = run(spec_for("enrich-predicted", threshold=0.8), out=tmp_path).summary
    assert 0 < picky["prefetches"] < eager["prefetches"]
    assert picky["prefetch_precision"] > eager["prefetch_precision"]
    assert picky["wasted_bytes"] < eager["wasted_bytes"]
    assert picky["stall_time_total"] > eager["stall_time_total"]


def test_the_profile_comes_from_a_traced_training_run(runs):
    out, by_mode = runs
    prepared = sorted((out / PREPARED_DIR).iterdir())
    seeds = sorted(Run(p).spec["run"]["seed"] for p in prepared)
    # oracle: a hindsight run of the same seed and its trials; predicted/eager: training
    assert seeds.count(1000) == 1 and set(seeds) == {1, 1000}
    profile = by_mode["enrich-predicted"].spec["params"]["enrich-predicted"]["profile"]
    assert profile["built_from"]["seed"] == 1000
    triggers = {r["trigger"] for r in profile["records"]}
    assert triggers == {"source:R1", "source:R2", "source:R3"}
    for r in profile["records"]:
        assert 0 < r["probability"] < 1 and r["lookups"] <= r["tuples"]
        assert len(r["delay_quantiles"]) == len(r["fetch_quantiles"]) == 21
        for k in r["key_ranges"]:          # clearly higher or clearly lower
            assert k["probability"] >= 1.5 * r["probability"] or \
                k["probability"] <= r["probability"] / 1.5


def test_a_higher_confidence_fetches_earlier(tmp_path):
    waits = {}
    for c in (0.5, 0.99):
        r = run(spec_for("enrich-predicted", confidence=c), out=tmp_path)
        waits[c] = r.summary["stall_time_total"]
    assert waits[0.99] <= waits[0.5]


@pytest.mark.parametrize("edit, message", [
    (lambda p: "not json", r"expected a JSON profile"),
    (lambda p: {**p, "topology": {"generator": "grid", "nodes": 9}},
     r"topology: built on \{'generator': 'grid', 'nodes': 9\}"),
    (lambda p: {**p, "records": [{**p["records"][0], "trigger": "source:R9"}]},
     r"records\[0\]\.trigger: no operator 'source:R9' in this run"),
    (lambda p: {**p, "records": [{**p["records"][0], "probability": 2}]},
     r"records\[0\]\.probability: expected a number in \[0, 1\]"),
])
def test_a_bad_profile_file_is_one_line_naming_the_field(runs, tmp_path, edit, message):
    _, by_mode = runs
    good = by_mode["enrich-predicted"].spec["params"]["enrich-predicted"]["profile"]
    path = tmp_path / "profile.json"
    bad = edit(copy.deepcopy(good))
    path.write_text(bad if isinstance(bad, str) else json.dumps(bad))
    field = r"params.enrich-predicted.profile: \S*profile.json: (\(file\): )?"
    with pytest.raises(SpecError, match=field + message):
        run(spec_for("enrich-predicted", profile=str(path)), out=tmp_path)


def test_a_confidence_outside_zero_one_is_refused(tmp_path):
    with pytest.raises((SpecError, ValueError),
                       match=r"params.enrich-predicted.confidence: expected a number in \(0, 1\)"):
        run(spec_for("enrich-predicted", confidence=1.0), out=tmp_path)


def test_testbed_profile_writes_the_file_a_later_run_loads(runs, tmp_path, capsys):
    """The training run's profile written by the CLI drives a predicted run exactly as
    the profile the sweep built in memory."""
    from testbed.cli import main

    out, by_mode = runs
    training = next(p for p in (out / PREPARED_DIR).iterdir()
                    if Run(p).spec["run"]["seed"] == 1000)
    path = tmp_path / "learnt.json"
    assert main(["profile", str(training), "-o", str(path)]) == 0
    assert capsys.readouterr().out.strip() == f"{path}: predicted profile, 3 records"
    from_file = run(spec_for("enrich-predicted", profile=str(path)), out=tmp_path)
    inline = by_mode["enrich-predicted"]
    assert from_file.summary["stall_time_total"] == inline.summary["stall_time_total"]
    assert from_file.summary["prefetches"] == inline.summary["prefetches"]
    # an untraced run has nothing to learn from
    plain = by_mode["enrich-on-demand"].path
    assert main(["profile", str(plain), "-o", str(tmp_path / "x.json")]) == 2
    assert "trace_tuples: expected a traced run" in capsys.readouterr().err
