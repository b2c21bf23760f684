"""``[run] warmup``: what the run's figures leave out, ``deliver(warmup=...)``, and the
hints of runs that lose their messages for want of a route (docs/DESIGN.md, "Warm-up")."""
import json

import networkx as nx
import pandas as pd
import pytest

import experiments
from emulator.deliver import deliver
from experiments import spec as specs
from experiments.hints import Fates, Timers, traffic_hints
from experiments.runner import run_warnings
from experiments.spec import SpecError

W = 2.0
SPEC = {
    "run": {"name": "warm", "seed": 4, "duration": 6.0, "step": 0.05, "memory_interval": 0.5},
    "topology": {"generator": "line", "nodes": 5, "delay": 0.05},
    "streams": {"count": 2, "rate": 4.0, "key_domain": 3},
    "query": {"node": 0, "window": 1.0},
}


def with_warmup(spec: dict, warmup: float) -> dict:
    return {**spec, "run": {**spec["run"], "warmup": warmup}}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    return experiments.run(SPEC, out=out), experiments.run(with_warmup(SPEC, W), out=out)


def test_the_exact_answer_leaves_out_exactly_the_groups_with_a_member_before_warmup(runs):
    whole, warm = runs
    assert whole.summary["recall"] == 1.0   # every group is in results.parquet
    first = whole.results.groupby("group")["first_entered"].min()
    all_groups = set(whole.expected["group"])
    kept = {g for g in all_groups if first[g] >= W}
    assert 0 < len(kept) < len(all_groups)
    assert set(warm.expected["group"]) == kept
    assert warm.summary["expected_results"] == len(kept)
    assert warm.summary["results"] == len(kept) and warm.summary["recall"] == 1.0


def test_the_run_folder_keeps_every_row_and_the_summary_counts_those_after_warmup(runs):
    whole, warm = runs
    # the same run: the warm-up changes what is measured, not what happens
    pd.testing.assert_frame_equal(whole.ledger, warm.ledger)
    pd.testing.assert_frame_equal(whole.results, warm.results)
    late = warm.ledger[warm.ledger["time"] >= W]
    assert 0 < len(late) < len(warm.ledger)
    s = warm.summary
    assert s["warmup"] == W and whole.summary["warmup"] == 0.0
    assert s["comm_cost_total"] == pytest.approx(late["cost"].sum())
    assert s["comm_cost_per_time"] == pytest.approx(late["cost"].sum() / (6.0 - W))
    assert s["hops"] == len(late) and s["bytes"] == late["size_bytes"].sum()
    rows = warm.results[warm.results["first_entered"] >= W]
    assert s["result_rows"] == len(rows)
    assert s["latency_mean"] == pytest.approx(
        (rows["emitted_at"] - rows["last_entered"]).mean())
    memory = warm.metrics[(warm.metrics["metric"] == "tuples")
                          & (warm.metrics["time"] >= W)].groupby("time")["value"].sum()
    assert s["memory_mean_tuples"] == pytest.approx(memory.mean())
    # the backend's messages and delivery: those sent at or after the warm-up
    measured = warm.meta["backend_info"]["measured"]
    assert s["messages"] == measured["messages"] < whole.summary["messages"]
    assert s["delivery_ratio"] == measured["delivered"] / measured["sent"] == 1.0


def test_warmup_zero_keeps_the_run_id_and_a_warmup_changes_it():
    plain = specs.for_run(specs.resolve(SPEC))
    assert "warmup" not in specs.canonical_json(SPEC)
    zero = specs.for_run(specs.resolve(with_warmup(SPEC, 0)))
    assert specs.run_id(zero) == specs.run_id(plain)
    assert specs.run_id(specs.for_run(specs.resolve(with_warmup(SPEC, W)))) \
        != specs.run_id(plain)


@pytest.mark.parametrize("warmup, message", [
    (6.0, "expected a warm-up < run.duration (6)"),
    (-1.0, "expected a number >= 0"),
])
def test_a_warmup_that_leaves_nothing_to_measure_is_refused_by_name(warmup, message):
    with pytest.raises(SpecError, match=r"^s\.toml: run\.warmup: ") as err:
        specs.resolve(with_warmup(SPEC, warmup), "s.toml")
    assert message in str(err.value) and "\n" not in str(err.value)


def line_graph(n: int = 5) -> nx.Graph:
    g = nx.path_graph(n)
    for e in g.edges:
        g.edges[e].update(cost=1.0, delay=0.01, bandwidth=10_000.0)
    return g


def test_deliver_with_warmup_has_olsr_routes_for_messages_sent_at_zero():
    msgs = pd.DataFrame({"msg_id": [0, 1, 2], "src": [0, 4, 1], "dst": [4, 0, 3],
                         "sent_at": [0.0, 0.0, 0.5], "size_bytes": [50, 50, 50]})
    cold = deliver(line_graph(), msgs, routing="olsr")
    assert cold["loss_reason"].tolist() == ["no_route"] * 3
    warm = deliver(line_graph(), msgs, routing="olsr", warmup=20.0)
    assert not warm["lost"].any()
    # on the messages' clock: 4 hops of 0.01 s + 0.005 s airtime, 2 hops for the third
    assert warm["arrived_at"].tolist() == pytest.approx([0.06, 0.06, 0.53])
    control = warm.attrs["control"]
    assert control["time"].min() < 0 and (control["time"] < 0).sum() > 10


def test_deliver_with_warmup_on_the_oracle_gives_the_same_arrivals():
    msgs = pd.DataFrame({"msg_id": [0, 1], "src": [0, 1], "dst": [4, 3],
                         "sent_at": [0.0, 0.25], "size_bytes": [50, 50]})
    plain, warm = deliver(line_graph(), msgs), deliver(line_graph(), msgs, warmup=3.0)
    assert warm["arrived_at"].tolist() == pytest.approx(plain["arrived_at"].tolist())


def test_a_run_losing_most_messages_for_want_of_a_route_says_so_and_names_warmup():
    fates = Fates(sent=120, delivered=90, drops={"no_route": 28, "link_loss": 2})
    [hint] = traffic_hints(fates, Timers("olsr", 5.0, 30.0, 0.0, "tc_interval"))
    assert hint.startswith("28 of 120 data messages sent across the network (23 %) were "
                           "lost for want of a route (no_route): olsr's routes were not "
                           "ready; measure after them with [run] warmup")
    assert "tc_interval, is 5 time units" in hint
    # a few losses among many deliveries are no hint
    assert traffic_hints(Fates(sent=120, delivered=117, drops={"no_route": 3}),
                         Timers("olsr", 5.0, 30.0, 0.0, "tc_interval")) == []


def test_slow_timers_and_messages_waiting_for_a_route_are_named_not_lost_zero():
    # routing.seconds_per_unit = 0.01: AODV's HELLO every 100 time units in a run of 30
    fates = Fates(sent=40, delivered=0, drops={})
    timers = Timers("aodv", 100.0, 30.0, 0.0, "hello_interval", 0.01)
    said = run_warnings({"results": 0, "expected_results": 15, "lost_messages": 0},
                        fates, timers)
    assert said[0] == ("no results although the exact answer has 15 groups (of 40 data "
                       "messages sent across the network: 0 delivered, 0 lost, 40 still "
                       "in flight or waiting for a route at the end)")
    assert said[1].startswith("40 of 40 data messages sent across the network (100 %) were "
                              "still in flight or waiting for a route at the end: aodv's "
                              "timers are long against the run")
    assert "routing.seconds_per_unit = 0.01" in said[1]


def test_timers_are_read_from_the_resolved_spec():
    spec = specs.resolve({"network": {"routing": "olsr"}, "run": {"duration": 30.0,
                                                                  "warmup": 10.0}})
    t = Timers.of(spec)
    assert (t.routing, t.slowest_name, t.slowest, t.span, t.warmup) == \
        ("olsr", "tc_interval", 5.0, 20.0, 10.0)
    assert Timers.of(specs.resolve({"routing": {"seconds_per_unit": 0.5}, "network": {
        "routing": "aodv"}})).slowest == 2.0


def test_an_olsr_run_measured_after_its_warmup_finds_every_group(tmp_path):
    spec = {"run": {"name": "olsr", "duration": 30.0, "step": 0.01, "drain": 5.0},
            "topology": {"generator": "line", "nodes": 6, "delay": 0.01},
            "network": {"routing": "olsr"},
            "streams": {"count": 2, "rate": 2.0, "key_domain": 5},
            "query": {"node": 0, "window": 1.0}}
    cold = experiments.run(spec, out=tmp_path).summary
    assert cold["recall"] < 0.8
    assert any("no_route" in w and "[run] warmup" in w for w in cold["warnings"])
    warm_run = experiments.run(with_warmup(spec, 10.0), out=tmp_path)
    warm = warm_run.summary
    assert warm["recall"] == 1.0 and warm["warnings"] == []
    assert json.loads(warm["drops_by_reason"]) == {}
    # control traffic after the warm-up: the ledger's routing rows and the counts by type
    routing = warm_run.ledger[warm_run.ledger["kind"] == "routing"]
    late = routing[routing["time"] >= 10.0]
    assert warm["routing_control_messages"] == len(late) < len(routing)
    by_type = warm_run.meta["backend_info"]["measured"]["control_sent"]
    assert set(by_type) == {"HELLO", "TC"} and sum(by_type.values()) == len(late)


def test_a_long_wait_for_the_first_route_is_named():
    timers = Timers("aodv", 1.0, 30.0, 0.0, "hello_interval")
    [hint] = traffic_hints(Fates(sent=50, delivered=50, first_wait=6.0), timers)
    assert hint.startswith("a flow's first packet waited 6 time units for a route on "
                           "average (20 % of the measured run): aodv's routes were not "
                           "ready; measure after them with [run] warmup")
    assert traffic_hints(Fates(sent=50, delivered=50, first_wait=0.3), timers) == []
