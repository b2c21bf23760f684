"""The oracle is a bound: no mode stalls less, on any seed, and it never fetches more
than eager (issue 29)."""
from __future__ import annotations

import pandas as pd
import pytest

from experiments.runner import run
from experiments.store import PREPARED_DIR, Run
from spark_nodes.algorithms.enrich.oracle import EVERY, oracle_schedule, refine
from tests.enrich.test_enrich_model import spec_for

MODES = [("enrich-on-demand", {}), ("enrich-predicted", {"confidence": 0.5}),
         ("enrich-predicted", {"confidence": 0.9}), ("enrich-predicted", {"confidence": 0.99}),
         ("enrich-eager", {})]
#: A table that takes time to answer: wasted fetches queue ahead of needed ones.
SLOW = {"table": {"service_time": 0.06}}


def summaries(tmp_path, seed: int, enrich) -> dict:
    out = {}
    for name, params in MODES + [("enrich-oracle", {})]:
        spec = spec_for(name, enrich=enrich, **params)
        spec["run"]["seed"] = seed
        out[(name, params.get("confidence"))] = run(spec, out=tmp_path).summary
    return out


@pytest.mark.parametrize("seed, enrich", [(1, None), (2, None), (1, SLOW), (2, SLOW)])
def test_no_mode_stalls_less_than_the_oracle(tmp_path, seed, enrich):
    s = summaries(tmp_path, seed, enrich)
    oracle = s[("enrich-oracle", None)]
    assert oracle["results"] == oracle["expected_results"]
    for mode, summary in s.items():
        assert oracle["stall_time_total"] <= summary["stall_time_total"], mode
    assert oracle["prefetch_bytes"] <= s[("enrich-eager", None)]["prefetch_bytes"]


def test_behind_a_slow_table_the_oracle_fetches_fewer_rows_just_in_time(tmp_path):
    s = summaries(tmp_path, 1, SLOW)
    oracle, eager = s[("enrich-oracle", None)], s[("enrich-eager", None)]
    # eager's wasted fetches queue at the table ahead of the needed ones
    assert oracle["prefetches"] < 0.75 * eager["prefetches"]
    assert oracle["stall_time_total"] < 0.75 * eager["stall_time_total"]
    assert oracle["prefetch_precision"] > eager["prefetch_precision"]
    oracle_runs = [Run(p).spec["params"] for p in (tmp_path / PREPARED_DIR).iterdir()]
    profiles = [p["enrich-oracle"]["profile"] for p in oracle_runs if "enrich-oracle" in p]
    assert profiles.count(EVERY) == 1           # one hindsight run, then its trials
    assert all(p["tuples"] != "every" for p in profiles if p != EVERY)


def test_the_schedule_times_each_fetch_on_its_own_path():
    seen = pd.DataFrame({"time": [0.0, 1.0, 1.0], "location": "source:R1",
                         "tuple_id": ["R1:0", "R1:1", "R1:2"], "key": [3, 4, 5]})
    needs = pd.DataFrame({"tuple_id": ["R1:0", "R1:1", "R1:2"],
                          "need_time": [2.0, 1.5, 3.0]})
    fetches = pd.DataFrame({"time": [0.5, 2.0, 1.25], "key": [3, 4, 5],
                            "latency": [0.5, 1.0, 0.25], "prefetch": True})
    s = oracle_schedule(seen, needs, fetches, ttl=2.0, lead=0.25)
    # R1:0: 2.0 - 0.5 - 0.25; R1:1 cannot arrive in time: at birth; R1:2: 3 - 1 - 0.25 - 0.25
    assert s["waits"] == {"R1:0": 1.25, "R1:1": 0.0, "R1:2": 1.5}
    assert s["tuples"] == ["R1:0", "R1:1", "R1:2"]


def test_a_row_that_changed_is_fetched_again():
    from spark_nodes.algorithms.enrich.table import RowClock

    seen = pd.DataFrame({"time": [0.0, 0.2], "location": "source:R1",
                         "tuple_id": ["R1:0", "R1:1"], "key": [3, 3]})
    needs = pd.DataFrame({"tuple_id": ["R1:0", "R1:1"], "need_time": [1.0, 1.8]})
    fetches = pd.DataFrame({"time": [0.4, 0.6], "key": [3, 3], "latency": [0.4, 0.4],
                            "prefetch": True})
    assert oracle_schedule(seen, needs, fetches, ttl=5.0, lead=0.1)["tuples"] == ["R1:0"]
    changing = RowClock(rate=50.0, seed=1)          # many updates between the two needs
    assert oracle_schedule(seen, needs, fetches, ttl=5.0, lead=0.1,
                           rows=changing)["tuples"] == ["R1:0", "R1:1"]
    assert oracle_schedule(seen, needs, fetches, ttl=5.0, lead=0.1,
                           dedupe=False)["tuples"] == ["R1:0", "R1:1"]


def test_refining_moves_late_tuples_to_birth():
    schedule = {"tuples": ["R1:0", "R1:2"], "waits": {"R1:0": 0.4, "R1:2": 0.3}}
    trial = pd.DataFrame({"tuple_id": ["R1:0", "R1:1", "R1:2"], "stall": [0.0, 0.2, 0.1]})
    bound = pd.DataFrame({"tuple_id": ["R1:0", "R1:1", "R1:2"], "stall": [0.0, 0.0, 0.1]})
    new, late = refine(schedule, trial, bound)
    assert late == 1 and new["tuples"] == ["R1:0", "R1:1", "R1:2"]
    assert new["waits"] == {"R1:0": 0.4, "R1:1": 0.0, "R1:2": 0.3}
