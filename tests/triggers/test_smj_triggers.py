"""SMJ's periods ended by a window trigger: every variant still gives exactly the
family's answer, now over the periods the run ended (no message is lost here)."""
import dataclasses

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_nodes.algorithms.smj.semantics import FiredPeriods, exact_groups
from spark_nodes.algorithms.triggers.spec import trigger_spec
from tests.smj.smj_harness import algorithm, make_plan, make_tuples, run_algorithm
from tests.smj.test_smj_exact import VARIANTS, random_setup

SMJ_PLACES = algorithm("smj-h").trigger_places
TRIGGERS = {
    "rate": [{"kind": "rate", "above": 4.0, "interval": 0.5, "at": "sources"},
             {"kind": "time", "above": 1.5}],
    "count": [{"kind": "count", "above": 4, "at": "sources"}],
    "fall": [{"kind": "rate", "below": 1.0, "interval": 0.5, "at": "sources"},
             {"kind": "time", "above": 0.8}],
    "time": [{"kind": "time", "above": 0.7}],
    "burst": [{"kind": "rate", "above": 8.0, "interval": 0.5, "at": "sources"},
              {"kind": "time", "above": 1.5}],
}


def triggered(plan, which, signal="network"):
    spec = trigger_spec({"use": which, "signal": signal, which: {"conditions": TRIGGERS[which]}},
                        f"trigger.{plan.algorithm}", [s.name for s in plan.streams],
                        places=SMJ_PLACES)
    return dataclasses.replace(plan, trigger=spec)


def closes(run):
    m = run.metrics
    return sorted(m.loc[m["metric"] == "period_close", "value"])


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(n=st.integers(2, 5), keys=st.integers(1, 4), window=st.sampled_from([None, 0.8, 2.0]),
       which=st.sampled_from(["rate", "count", "fall", "time"]), signal=st.sampled_from(["network", "free"]),
       disorder=st.sampled_from([0.0, 0.3]), seed=st.integers(0, 10_000))
def test_triggered_periods_keep_every_variant_exact(n, keys, window, which, signal,
                                                    disorder, seed):
    net, streams, query = random_setup(n, seed)
    tuples = make_tuples(streams, 2.5, keys + 2 * max(0, n - 3), 5.0, seed, disorder)
    for name, params in VARIANTS:
        plan = triggered(make_plan(net, streams, query, window, 5.0, dict(params),
                                   name=name, seed=seed), which, signal)
        run = run_algorithm(name, plan, tuples)
        expected = algorithm(name).exact_answer_of_run(plan, tuples, run.metrics)
        assert run.groups == expected, (name, params)
        assert not run.results["group"].duplicated().any(), (name, params)
        ends = closes(run)
        assert ends and ends == sorted(set(ends)) and ends[-1] <= 5.0


def test_a_rate_trigger_ends_periods_at_bursts_and_stays_exact():
    """Two sites, a burst of R1 in [2, 3): the rate condition at R1's site ends a period
    inside the burst; the answer over the fired periods is exact and not empty."""
    g = nx.path_graph(4)
    nx.set_edge_attributes(g, 1.0, "cost")
    streams = {"R1": 1, "R2": 3}
    rng = np.random.default_rng(4)
    tuples = make_tuples(streams, 1.0, 3, 6.0, seed=4)
    from spark_nodes.workload.tuples import StreamTuple
    burst = [StreamTuple("R1", 100 + i, t, int(rng.integers(1, 4)), None, None, 1, 1.0, t)
             for i, t in enumerate(np.linspace(2.0, 2.95, 12))]
    tuples["R1"] = sorted(tuples["R1"] + burst, key=lambda t: t.entered_at)
    plan = triggered(make_plan(g, streams, 0, 3.0, 6.0, name="smj-h"), "burst")
    run = run_algorithm("smj-h", plan, tuples)
    m = run.metrics
    fired = m[m["metric"].str.startswith("window_fired:")]
    rate = fired[fired["metric"] == "window_fired:rate"]
    assert len(rate) >= 1 and (rate["time"].between(2.0, 3.2)).all()
    # the last period ends with the run (duration - margin), counted as time
    assert closes(run)[-1] == 6.0 and len(fired) == len(closes(run))
    expected = algorithm("smj-h").exact_answer_of_run(plan, tuples, run.metrics)
    assert run.groups == expected and len(expected) > 10
    # the periods matter: the clock's answer is another set of groups
    clock = exact_groups(tuples, ["R1", "R2"], {"R1": 3.0, "R2": 3.0}, 1.0, 6)
    assert clock != expected
    assert exact_groups(tuples, ["R1", "R2"], {"R1": 3.0, "R2": 3.0},
                        FiredPeriods(closes(run)), len(closes(run))) == expected
    # a signal crosses the network as a control message of kind trigger
    assert (run.ledger["kind"] == "trigger").sum() > 0


def test_the_answer_of_a_triggered_plan_needs_its_run():
    g = nx.path_graph(3)
    nx.set_edge_attributes(g, 1.0, "cost")
    plan = triggered(make_plan(g, {"R1": 1, "R2": 2}, 0, None, 4.0, name="naive"), "time")
    with pytest.raises(ValueError, match=r"^trigger.naive: the periods are those the run"):
        algorithm("naive").exact_answer(plan, {})


@pytest.mark.parametrize("name", ["smj-h", "smj-e"])
@pytest.mark.parametrize("fetch", ["on-demand", "eager"])
def test_triggered_periods_with_plan_lookups_stay_exact(name, fetch):
    """A rate trigger ends the periods and sites fetch their plans as lookups: the two
    options compose, and the answer is still exact over the periods the run closed."""
    for seed in (2, 4):
        net, streams, query = random_setup(4, seed)
        tuples = make_tuples(streams, 2.5, 3, 5.0, seed, 0.0)
        plan = triggered(make_plan(net, streams, query, 2.0, 5.0,
                                   {"plan": "lookup", "plan_fetch": fetch},
                                   name=name, seed=seed), "rate")
        run = run_algorithm(name, plan, tuples)
        assert run.groups == algorithm(name).exact_answer_of_run(plan, tuples, run.metrics)
        m = run.metrics
        assert (m["metric"] == "period_close").sum() > 0


def test_an_unanswered_plan_request_is_a_peer_timeout_at_the_site():
    """With plan lookups and a timeout shorter than the center takes to answer, sites
    see peer timeouts; an exception trigger measured at the sites turns them into
    windows (ended periods) recorded as ``exception``."""
    net, streams, query = random_setup(4, 2)
    tuples = make_tuples(streams, 2.5, 3, 5.0, 2, 0.0)
    plan = make_plan(net, streams, query, 2.0, 5.0,
                     {"plan": "lookup", "plan_timeout": 0.05}, name="smj-h", seed=2)
    # poll 0.02: the query node absorbs a signal within one poll of the last close,
    # and the timeouts come 0.05 after a close here
    spec = trigger_spec({"use": "faults", "poll": 0.02, "faults": {"conditions": [
        {"kind": "exception", "type": "peer_timeout", "above": 1, "at": "sources"},
        {"kind": "time", "above": 1.0}]}}, "trigger.smj-h",
        [s.name for s in plan.streams], places=SMJ_PLACES)
    run = run_algorithm("smj-h", dataclasses.replace(plan, trigger=spec), tuples)
    m = run.metrics
    retries = int((m["metric"] == "lookup_retry").sum())
    by_exception = int((m["metric"] == "window_fired:exception").sum())
    assert retries > 0 and 0 < by_exception <= retries
    assert run.groups == algorithm("smj-h").exact_answer_of_run(
        dataclasses.replace(plan, trigger=spec), tuples, m)
