"""experiments/specs/prefetch.toml discriminates between the modes (issue 29): lookup
probabilities spread, finite bandwidth, a table with service time, waits > 0 at every
swept confidence, and figures that differ per mode."""
from __future__ import annotations

import copy
import math
import tomllib
from pathlib import Path

import pytest

from experiments import spec as specs
from experiments.runner import run

SPEC = Path(__file__).resolve().parents[2] / "experiments" / "specs" / "prefetch.toml"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    raw = tomllib.loads(SPEC.read_text())
    raw.pop("sweep")
    out = tmp_path_factory.mktemp("prefetch")
    by_mode = {}
    for name, c in [("enrich-on-demand", None), ("enrich-predicted", 0.5),
                    ("enrich-predicted", 0.75), ("enrich-predicted", 0.9),
                    ("enrich-eager", None)]:
        s = copy.deepcopy(raw)
        s["algorithm"]["name"] = name
        if c is not None:
            s["params"][name]["confidence"] = c
        by_mode[(name, c)] = run(s, out=out)
    return by_mode


def test_the_spec_has_a_slow_table_finite_bandwidth_and_a_bounded_cache():
    resolved, _ = specs.load(SPEC)
    assert resolved["topology"]["bandwidth"] < math.inf
    assert resolved["enrich"]["table"]["service_time"] > 0
    assert resolved["enrich"]["table"]["update_rate"] > 0
    confidences = resolved["sweep"]["grid"]["params.enrich-predicted.confidence"]
    points = specs.expand(resolved)
    assert {s["algorithm"]["name"] for s, _ in points} == {
        "enrich-on-demand", "enrich-predicted", "enrich-eager", "enrich-oracle"}
    assert len(points) == (3 + len(confidences)) * 5
    for s, _ in points:
        assert s["params"][s["algorithm"]["name"]]["cache_rows"] == 40


def test_lookup_probabilities_spread_from_rare_to_certain(runs):
    r = runs[("enrich-predicted", 0.9)]
    p = r.spec["params"]["enrich-predicted"]
    for record in p["profile"]["records"]:
        assert record["probability"] < p["threshold"]              # a type as a whole: no
        assert max(k["probability"] for k in record["key_ranges"]) >= 0.8    # rare keys: yes
    assert 0 < r.summary["prefetches"] < 0.5 * runs[("enrich-eager", None)].summary["prefetches"]


@pytest.mark.parametrize("c", [0.5, 0.75, 0.9])
def test_every_swept_confidence_waits_before_fetching(runs, c):
    assert runs[("enrich-predicted", c)].summary["prefetch_wait_mean"] > 0


def test_the_modes_differ_in_every_reported_figure(runs):
    s = {k: r.summary for k, r in runs.items()}
    demand, eager = s[("enrich-on-demand", None)], s[("enrich-eager", None)]
    predicted = s[("enrich-predicted", 0.9)]
    for summary in s.values():
        assert summary["results"] == summary["expected_results"] > 500
    assert demand["stall_time_total"] > predicted["stall_time_total"] > \
        eager["stall_time_total"]
    assert eager["wasted_bytes"] > 5 * predicted["wasted_bytes"] > 0
    assert demand["stale_uses"] > eager["stale_uses"] > 0
    assert min(x["cache_evictions"] for x in s.values()) > 0
    assert demand["table_wait_mean"] > eager["table_wait_mean"] > 0
    assert demand["downstream_buffer_peak"] > 5 * eager["downstream_buffer_peak"]
