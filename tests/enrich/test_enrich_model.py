"""The parts of the enrichment model that carry source 003's claims (issue 29): the label
of a need a prefetch serves on arrival, the wait timed on the prefetch's own path,
lineage in the trace, a bounded cache, a table that takes time to serve, rows that
change (stale uses, invalidation), and one-line errors for bad values."""
from __future__ import annotations

import copy
import math
import tomllib
from pathlib import Path

import pytest

from experiments.runner import run
from experiments.spec import SpecError
from spark_nodes.algorithms.enrich.fetcher import Fetcher
from spark_nodes.algorithms.enrich.lookups import Cache
from spark_nodes.algorithms.enrich.profile import prefetch_wait
from spark_nodes.algorithms.enrich.programs import Trigger
from spark_nodes.algorithms.enrich.table import RowClock, ServiceQueue, table_for

SPEC = Path(__file__).resolve().parent / "prefetch_base.toml"


def spec_for(name: str, enrich: dict | None = None, **params) -> dict:
    raw = tomllib.loads(SPEC.read_text())
    raw.pop("sweep")
    raw["run"]["duration"] = 20.0
    raw["algorithm"]["name"] = name
    raw["params"].setdefault(name, {}).update(params)
    if enrich is not None:
        raw["enrich"] = enrich
    return raw


class Ctx:
    """The part of a node context the fetcher uses."""

    def __init__(self, now: float = 0.0):
        self.now, self.metrics, self.timers = now, [], []

    def record(self, metric, value):
        self.metrics.append((metric, value))

    def set_timer(self, at, tag):
        self.timers.append((at, tag))

    def total(self, metric):
        return sum(v for m, v in self.metrics if m == metric)


# -- 1. the label, the path, the lineage ---------------------------------------------------
def test_a_prefetch_arriving_for_a_waiting_need_serves_it_as_a_prefetch():
    f, ctx = Fetcher(ttl=2.0, timeout=1.0), Ctx()
    assert f.park(ctx, 7, "t1")
    f.asked(ctx, 7)
    assert not f.park(ctx, 7, "t2")          # one request in flight for both
    ctx.now = 0.4
    parked = f.arrived(ctx, 7, ("row", 7), prefetch=True, settles=False)
    assert parked == [("t1", 0.0), ("t2", 0.0)]
    assert ctx.total("served_by_prefetch") == 2 and ctx.total("prefetch_used") == 1
    assert 7 in f.requested               # the on-demand request is still in flight


def test_the_run_labels_and_counts_needs_served_by_a_late_prefetch(tmp_path):
    r = run(spec_for("enrich-predicted"), out=tmp_path)
    served = r.results["served"].value_counts()
    late = r.results[(r.results["served"] == "prefetch") & (r.results["stall"] > 0)]
    assert len(late) > 0                  # needs that waited and were answered by a prefetch
    s = r.summary
    assert s["prefetch_recall"] == pytest.approx(served["prefetch"] / s["needs"])


def test_the_wait_is_timed_on_the_prefetch_path():
    # every hop 0.1, the table 0.2, the need 2.0 after the trigger: a path of 5 hops
    # takes 0.7, so the fetch can wait 1.3; a round trip of the training run does not
    # stand in once the hops are known
    record = {"delay_quantiles": [2.0] * 21, "fetch_quantiles": [0.4] * 21,
              "hop_quantiles": [0.1] * 21, "queue_quantiles": [0.2] * 21}
    assert prefetch_wait(record, 0.9, hops=5) == pytest.approx(1.3)
    assert prefetch_wait(record, 0.9, hops=12) == pytest.approx(0.6)
    assert prefetch_wait(record, 0.9) == pytest.approx(1.6)          # round trips
    trigger = Trigger(record, 0.0, confidence=0.9)
    assert trigger.wait(5) == pytest.approx(1.3) and trigger.wait(-1) == pytest.approx(1.6)
    assert Trigger(record, 0.0).wait(5) == 0.0                          # eager: at once


def test_prefetches_carry_their_own_path_and_the_profile_its_parts(tmp_path):
    r = run(spec_for("enrich-predicted", trace=True), out=tmp_path)
    fetches = r.table("trace_fetches")
    pre, demand = fetches[fetches["prefetch"]], fetches[~fetches["prefetch"]]
    assert len(pre) > 0 and (pre["hops"] > 0).all()
    assert (demand["hops"] % 2 == 0).all()          # a round trip: there and back
    profile = r.spec["params"]["enrich-predicted"]["profile"]
    for rec in profile["records"]:
        assert len(rec["hop_quantiles"]) == len(rec["queue_quantiles"]) == 21
        assert rec["queue_quantiles"] == [0.0] * 21          # the table answers at once
        assert 0 < rec["hop_quantiles"][0] <= rec["hop_quantiles"][-1]


def test_an_enriched_tuple_has_its_input_as_parent(tmp_path):
    r = run(spec_for("enrich-on-demand", trace=True), out=tmp_path)
    seen = r.table("trace_tuples")
    made = seen[seen["parents"] != ""]
    assert len(made) == r.summary["needs"] > 100
    assert (made["location"] == "enrich").all()
    assert list(made["tuple_id"]) == [f"{p}+table" for p in made["parents"]]
    assert list(made["type"]) == [f"{p.split(':')[0]}+table" for p in made["parents"]]
    sources = set(seen.loc[seen["location"].str.startswith("source:"), "tuple_id"])
    assert set(made["parents"]) <= sources


# -- 2. a bounded cache --------------------------------------------------------------------
def test_the_cache_evicts_the_least_recently_used_row():
    c = Cache(ttl=10.0, capacity=2)
    c.put(1, "a", 0.0, prefetched=False)
    c.put(2, "b", 0.0, prefetched=True)
    c.get(1, 1.0)
    c.put(3, "c", 2.0, prefetched=True)         # 2 is the least recently used
    assert c.keys() == [1, 3] and c.evictions == 1
    assert [e.key for e in c.unused_prefetches()] == [2, 3]   # 2 evicted unused: wasted
    c.put(3, "c2", 3.0, prefetched=False)       # a key already held evicts nothing
    assert c.evictions == 1 and len(c) == 2
    assert Cache(ttl=1.0).capacity is None


def test_a_small_cache_evicts_and_stalls_more(tmp_path):
    free = run(spec_for("enrich-on-demand"), out=tmp_path).summary
    small = run(spec_for("enrich-on-demand", cache_rows=3), out=tmp_path).summary
    big = run(spec_for("enrich-on-demand", cache_rows=1000), out=tmp_path).summary
    assert free["cache_evictions"] == big["cache_evictions"] == 0
    assert big["stall_time_total"] == free["stall_time_total"]
    # every on-demand reply but the first three made room for itself (a retry's reply
    # may find its row still held)
    replies = small["lookups"] + small["lookup_retries"]
    assert 0 < small["lookups"] - 3 <= small["cache_evictions"] <= replies - 3
    assert small["stall_time_total"] > free["stall_time_total"]
    assert small["results"] == small["expected_results"]


# -- 3. the table serves ----------------------------------------------------------------------
def test_the_table_queue_is_first_come_first_served():
    q = ServiceQueue(servers=2, service_time=1.0)
    assert [q.admit(t) for t in (0.0, 0.0, 0.0, 0.5, 3.0)] == [1.0, 1.0, 2.0, 2.0, 4.0]
    assert q.in_system(1.5) == 3 and q.in_system(2.0) == 1      # admitted, not answered
    assert table_for(10, (3,)) == 3 and [table_for(k, (3, 8, 5)) for k in range(4)] == \
        [3, 8, 5, 3]


def test_a_slow_table_queues_requests_and_stalls_tuples(tmp_path):
    at_once = run(spec_for("enrich-on-demand"), out=tmp_path).summary
    slow = run(spec_for("enrich-on-demand", enrich={"table": {"service_time": 0.05}}),
               out=tmp_path).summary
    two = run(spec_for("enrich-on-demand", enrich={"table": {"service_time": 0.05,
                                                               "servers": 2}}),
              out=tmp_path).summary
    assert at_once["table_wait_mean"] == at_once["table_queue_peak"] == 0
    assert slow["table_queue_peak"] >= 1 and slow["table_wait_mean"] >= 0
    assert slow["stall_time_total"] > at_once["stall_time_total"]
    assert two["table_wait_mean"] <= slow["table_wait_mean"]
    assert slow["results"] == slow["expected_results"]


def test_several_tables_split_the_keys(tmp_path):
    r = run(spec_for("enrich-on-demand", enrich={"table": {"nodes": [5, 9]}}), out=tmp_path)
    lookups = r.ledger[(r.ledger["kind"] == "lookup") & (r.ledger["src"] == 0)]
    first = lookups.drop_duplicates("msg_id")
    assert set(first["dst"]) == {5, 9}
    assert r.summary["results"] == r.summary["expected_results"]


# -- 4. rows that change ---------------------------------------------------------------------
def test_row_versions_advance_at_the_update_rate():
    rows = RowClock(rate=2.0, seed=4)
    v0 = rows.version(11, 0.0)
    assert [rows.version(11, t) - v0 for t in (0.0, 5.0, 10.0)] in ([0, 10, 20], [0, 10, 20])
    t = rows.next_update(11, 3.0)
    assert 3.0 < t <= 3.5 and rows.version(11, t) == rows.version(11, 3.0) + 1
    assert RowClock(0.0, 4).version(11, 99.0) == 0
    assert math.isinf(RowClock(0.0, 4).next_update(11, 1.0))


def test_changing_rows_make_stale_uses_and_invalidation_cuts_them(tmp_path):
    still = run(spec_for("enrich-on-demand"), out=tmp_path).summary
    changing = {"table": {"update_rate": 0.5}}
    stale = run(spec_for("enrich-on-demand", enrich=changing), out=tmp_path).summary
    pushed = run(spec_for("enrich-on-demand", enrich={"table": {
        "update_rate": 0.5, "invalidate": True}}), out=tmp_path).summary
    assert still["stale_uses"] == still["updates_pushed"] == 0
    assert stale["stale_uses"] > 10 and stale["updates_pushed"] == 0
    assert pushed["updates_pushed"] > 0 and pushed["stale_uses"] < stale["stale_uses"] / 2
    assert pushed["results"] == pushed["expected_results"]


# -- bad values -----------------------------------------------------------------------------
@pytest.mark.parametrize("enrich, params, message", [
    (None, {"cache_rows": 0},
     r"params\.enrich-on-demand\.cache_rows: expected an integer >= 1 or none, got 0"),
    ({"table": {"service_time": -0.5}}, {},
     r"enrich\.table\.service_time: expected a number >= 0, got -0\.5"),
    ({"table": {"update_rate": -1}}, {},
     r"enrich\.table\.update_rate: expected a number >= 0, got -1"),
    ({"table": {"servers": 0}}, {}, r"enrich\.table\.servers: expected an integer >= 1, got 0"),
    ({"table": {"nodes": []}}, {}, r"enrich\.table\.nodes: expected a non-empty list"),
    ({"table": {"nodes": [99]}}, {}, r"enrich\.table\.nodes: expected nodes of the topology"),
    ({"table": {"service": 1}}, {}, r"enrich\.table\.service: unknown key"),
])
def test_bad_table_and_cache_values_are_one_line_naming_the_field(tmp_path, enrich, params,
                                                                    message):
    with pytest.raises(ValueError, match=message) as err:
        run(spec_for("enrich-on-demand", enrich=enrich, **params), out=tmp_path)
    assert "\n" not in str(err.value)


def test_specs_without_an_enrich_table_keep_their_run_ids():
    from experiments import spec as specs

    plain = specs.resolve({})
    assert "enrich" not in plain
    given = specs.resolve({"enrich": {"table": {"service_time": 0.1}}})
    assert given["enrich"]["table"]["servers"] == 1
    assert specs.unknown_path("enrich.table.servers") is None
    assert "valid: invalidate" in specs.unknown_path("enrich.table.server")
    with pytest.raises(SpecError, match=r"^s\.toml: enrich\.table\.servers: "):
        specs.resolve({"enrich": {"table": {"servers": 1.5}}}, "s.toml")
    assert copy.deepcopy(plain) == plain


# -- 6. the in-order operator behind the enrichment node -------------------------------------
def test_a_stall_backs_up_the_in_order_operator(tmp_path):
    r = run(spec_for("enrich-on-demand", trace=True), out=tmp_path)
    s = r.summary
    # replay the operator from the trace: places in arrival order, each released once
    # every tuple before it was enriched
    seen = r.table("trace_tuples")
    arrived = seen.loc[(seen["location"] == "enrich") & (seen["parents"] == ""), "tuple_id"]
    done = dict(zip(r.results["group"], r.results["emitted_at"]))
    release, waits = -1.0, []
    for tid in arrived:
        release = max(release, done[tid])
        waits.append(release - done[tid])
    assert s["downstream_wait_total"] == pytest.approx(sum(waits))
    assert s["downstream_wait_total"] > 0 and s["downstream_buffer_peak"] >= 1
    m = r.metrics
    assert (m["metric"] == "downstream_wait").sum() == s["results"]   # each tuple once
    eager = run(spec_for("enrich-eager"), out=tmp_path).summary
    assert eager["downstream_wait_total"] < s["downstream_wait_total"]
    assert eager["downstream_buffer_peak"] <= s["downstream_buffer_peak"]


# -- 8. the profile: time of day, refreshed during the run ------------------------------------
def test_a_profile_conditions_on_the_time_of_day():
    import pandas as pd

    from spark_nodes.algorithms.enrich.profile import build_profile

    times = [0.5 + 2.0 * i for i in range(20)]                 # two days of 20 time units
    ids = [f"R1:{i}" for i in range(20)]
    seen = pd.DataFrame({"time": times, "node": 4, "location": "source:R1",
                         "tuple_id": ids, "type": "R1", "key": 3, "parents": ""})
    early = [t for t, when in zip(ids, times) if when % 20.0 < 6.0]   # mornings only
    needs = pd.DataFrame({"time": 1.0, "node": 0, "location": "enrich", "tuple_id": early,
                          "type": "R1", "source": "table", "key": 3, "stall": 0.1,
                          "served": "demand", "need_time": 1.0})
    fetches = pd.DataFrame(columns=["time", "node", "key", "latency", "prefetch", "hops",
                                    "queued"])
    topology = {"generator": "line", "nodes": 5}
    record = build_profile(seen, needs, fetches, topology=topology, day=20.0)["records"][0]
    assert record["probability"] == pytest.approx(0.3)
    assert [(r["lo"], r["hi"], r["probability"]) for r in record["time_ranges"]] == [
        (0.0, 6.0, 1.0), (6.0, 20.0, 0.0)]
    trigger = Trigger(record, 0.5, day=20.0)
    tup = lambda: __import__("spark_nodes.workload.tuples", fromlist=["x"]).StreamTuple(
        "R1", 0, 0.0, 3, None, None, 4)
    assert trigger.fires(tup(), 42.0) and not trigger.fires(tup(), 50.0)
    assert not Trigger(record, 0.5).fires(tup(), 42.0)          # no day: the overall 0.3
    no_day = build_profile(seen, needs, fetches, topology=topology)
    assert no_day["day"] is None and no_day["records"][0]["time_ranges"] == []


def test_a_trained_profile_carries_its_day(tmp_path):
    r = run(spec_for("enrich-predicted", day=10.0), out=tmp_path)
    profile = r.spec["params"]["enrich-predicted"]["profile"]
    assert profile["day"] == 10.0
    assert all(isinstance(rec["time_ranges"], list) for rec in profile["records"])
    assert r.summary["results"] == r.summary["expected_results"]


def test_a_refresh_corrects_a_profile_that_predicts_nothing(tmp_path):
    trained = run(spec_for("enrich-predicted"), out=tmp_path)
    profile = copy.deepcopy(trained.spec["params"]["enrich-predicted"]["profile"])
    for record in profile["records"]:
        record.update(probability=0.0, key_ranges=[])         # no tuple seems to need one
    stale = run(spec_for("enrich-predicted", profile=profile), out=tmp_path)
    fresh = run(spec_for("enrich-predicted", profile=profile, refresh_every=5.0),
                out=tmp_path)
    assert stale.summary["prefetches"] == 0 and stale.summary["profile_refreshes"] == 0
    s = fresh.summary
    # at 5, 10, 15 and 20 the enrichment node tells each of the three sources
    assert s["profile_refreshes"] == 12
    profile_messages = fresh.ledger[fresh.ledger["kind"] == "profile"]
    assert profile_messages["msg_id"].nunique() <= 12
    assert s["prefetches"] > 0.5 * trained.summary["prefetches"]
    assert s["stall_time_total"] < stale.summary["stall_time_total"]
    assert s["results"] == s["expected_results"]


@pytest.mark.parametrize("params, message", [
    ({"day": 0.0}, r"params\.enrich-predicted\.day: expected a number > 0 or none, got 0\.0"),
    ({"refresh_every": -1.0},
     r"params\.enrich-predicted\.refresh_every: expected a number > 0 or none, got -1\.0"),
])
def test_bad_profile_options_are_one_line_naming_the_field(tmp_path, params, message):
    with pytest.raises(ValueError, match=message) as err:
        run(spec_for("enrich-predicted", **params), out=tmp_path)
    assert "\n" not in str(err.value)
