"""ATR's master segments and CTR's grid segments cut by a window initiator: still
exactly the oracle's groups."""
import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_nodes.algorithms import registry
from spark_nodes.algorithms.triggers.spec import trigger_spec
from tests.ctr.ctr_harness import make_plan, make_streams, run_plan
from topologies import random_geometric

TOPO = random_geometric(16, 0.45, seed=3, defaults={"delay": 0.01, "jitter": 0.01})
TRIGGERS = [
    [{"kind": "count", "above": 5}],
    [{"kind": "rate", "above": 4.0, "interval": 0.5}, {"kind": "time", "above": 0.7}],
    [{"kind": "rate", "below": 2.0, "interval": 0.5}],
]


def triggered_plan(n, windows, nodes, rates, segment, trigger, seed, hosts=4,
                   algorithm="atr", **extra):
    plan = make_plan(algorithm, dict(extra, slack=0.6, hosts=hosts, segment=segment), TOPO,
                     nodes, windows, duration=9.0, seed=seed)
    spec = trigger_spec({"use": "cut", "cut": {"conditions": trigger}},
                        f"trigger.{algorithm}", [f"R{i + 1}" for i in range(n)])
    return dataclasses.replace(plan, trigger=spec)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(n=st.integers(2, 4), w=st.sampled_from([0.3, 0.8, 1.5]),
       segment=st.sampled_from([0.7, 1.0, 2.0]), which=st.integers(0, len(TRIGGERS) - 1),
       hosts=st.integers(1, 8), seed=st.integers(0, 10_000),
       algorithm=st.sampled_from(["atr", "ctr"]))
def test_cut_segments_keep_the_exact_answer(n, w, segment, which, hosts, seed, algorithm):
    names = [f"R{i + 1}" for i in range(n)]
    nodes = list(np.random.default_rng(seed).integers(0, 16, n))
    rng = np.random.default_rng(seed)
    tuples = make_streams(rng, names, nodes, [2.0] * n, 6.0, key_domain=6, disorder=0.2)
    plan = triggered_plan(n, [w] * n, nodes, [2.0] * n, segment, TRIGGERS[which], seed,
                          hosts, algorithm)
    programs = registry.ALGORITHMS.get(algorithm).programs(plan)
    out, expected, run = run_plan(plan, tuples, programs)
    got = list(out.results["group"])
    assert len(got) == len(set(got)) and set(got) == expected
    summary = registry.ALGORITHMS.get(algorithm).summarize(plan, run)
    assert summary["late_tuples"] == 0
    assert all(p.host.memory() == (0, 0) for p in programs.values()
               if getattr(p, "host", None))


def test_a_count_trigger_cuts_ctr_segments_for_every_stream():
    names, nodes = ["R1", "R2", "R3"], [3, 7, 11]
    tuples = make_streams(np.random.default_rng(2), names, nodes, [3.0] * 3, 6.0,
                          key_domain=6, disorder=0.2)
    fixed = make_plan("ctr", dict(slack=0.6, hosts=4, segment=2.0), TOPO, nodes, [1.0] * 3,
                      duration=9.0, seed=2)
    cut = triggered_plan(3, [1.0] * 3, nodes, [3.0] * 3, 2.0, TRIGGERS[0], 2,
                         algorithm="ctr")
    s = {}
    for name, plan in (("fixed", fixed), ("cut", cut)):
        out, expected, run = run_plan(plan, tuples)
        assert sorted(out.results["group"]) == sorted(expected)
        s[name] = registry.ALGORITHMS.get("ctr").summarize(plan, run)
        m = out.metrics
        s[name]["cuts"] = float(m.loc[m.metric == "segment_cut:grid", "value"].sum())
    # ticks at 2k + slack close [0, 2) .. [6, 8) before the run ends at 9
    assert s["fixed"]["windows_fired"] == s["fixed"]["windows_fired_by_time"] == 4
    assert s["fixed"]["cuts"] == 0
    # a window of 5 tuples out of ~9 per time unit: segments end far sooner than T = 2
    assert s["cut"]["windows_fired_by_count"] > 6 and s["cut"]["cuts"] < -3.0
    assert s["cut"]["trigger"] == "cut" and s["fixed"]["trigger"] == "clock"


def test_a_count_trigger_cuts_segments_and_records_them():
    n, names, nodes = 3, ["R1", "R2", "R3"], [3, 7, 11]
    tuples = make_streams(np.random.default_rng(1), names, nodes, [3.0] * 3, 6.0,
                          key_domain=6, disorder=0.2)
    fixed = make_plan("atr", dict(slack=0.6, hosts=4, segment=2.0), TOPO, nodes, [1.0] * 3,
                      duration=9.0, seed=1)
    cut = triggered_plan(n, [1.0] * 3, nodes, [3.0] * 3, 2.0, TRIGGERS[0], 1)
    s = {}
    for name, plan in (("fixed", fixed), ("cut", cut)):
        out, expected, run = run_plan(plan, tuples)
        assert set(out.results["group"]) == expected
        s[name] = registry.ALGORITHMS.get("atr").summarize(plan, run)
        s[name]["fired"] = int(out.metrics.metric.str.startswith("window_fired:count").sum())
        s[name]["cuts"] = int(out.metrics.metric.str.startswith("segment_cut:").sum())
        s[name]["clock"] = int((out.metrics.metric == "window_fired:time").sum())
    assert s["fixed"]["fired"] == s["fixed"]["cuts"] == 0
    assert s["cut"]["fired"] == s["cut"]["cuts"] > 0
    # every segment but the last ends a window: by its length or by a cut
    for v in s.values():
        assert v["clock"] + v["fired"] == v["atr_segments"] - 1
    assert s["cut"]["atr_segments"] > s["fixed"]["atr_segments"]
    assert s["cut"]["atr_segment_mean"] < s["fixed"]["atr_segment_mean"] == pytest.approx(2.0)


def test_ctr_measures_its_trigger_at_the_diffusion_node():
    with pytest.raises(ValueError, match=r"^trigger.ctr: CTR's trigger measures at the "
                                         r"diffusion node only"):
        registry.ALGORITHMS.get("ctr").programs(triggered_plan(
            2, [1.0, 1.0], [3, 7], [2.0, 2.0], 1.0,
            [{"kind": "rate", "above": 3.0, "at": "sources"}], 1, algorithm="ctr"))


def test_a_trigger_and_segment_adaptation_do_not_mix():
    with pytest.raises(ValueError, match=r"^params.atr.adapt: expected false when a trigger "
                                         r"cuts segments"):
        registry.ALGORITHMS.get("atr").programs(triggered_plan(
            2, [1.0, 1.0], [3, 7], [2.0, 2.0], 1.0, TRIGGERS[0], 1, adapt=True))


def test_a_ctr_trigger_that_never_fires_makes_no_tuple_late():
    """Under a trigger the diffusion node also routes at its polls; their watermark is
    the last segment boundary, so a tuple still in time on the clock is in time here."""
    names, nodes = ["R1", "R2", "R3"], [3, 7, 11]
    tuples = make_streams(np.random.default_rng(5), names, nodes, [3.0] * 3, 6.0,
                          key_domain=6, disorder=0.9)       # disorder beyond slack
    fixed = make_plan("ctr", dict(slack=0.6, hosts=4, segment=2.0), TOPO, nodes,
                      [1.0] * 3, duration=9.0, seed=5)
    never = triggered_plan(3, [1.0] * 3, nodes, [3.0] * 3, 2.0,
                           [{"kind": "rate", "above": 1000.0}], 5, algorithm="ctr")
    late, groups = {}, {}
    for name, plan in (("fixed", fixed), ("never", never)):
        out, _, run = run_plan(plan, tuples)
        late[name] = registry.ALGORITHMS.get("ctr").summarize(plan, run)["late_tuples"]
        groups[name] = set(out.results["group"])
    assert late["fixed"] > 0 and late["never"] == late["fixed"]
    assert groups["never"] == groups["fixed"]


@pytest.mark.parametrize("fetch", ["on-demand", "eager"])
def test_cut_ctr_segments_with_route_lookups_stay_exact(fetch):
    """A count trigger cuts CTR's segments while hosts fetch their routes as lookups:
    still exactly the oracle's groups, and the hosts did ask."""
    names, nodes = ["R1", "R2", "R3"], [3, 7, 11]
    tuples = make_streams(np.random.default_rng(5), names, nodes, [3.0] * 3, 6.0,
                          key_domain=6, disorder=0.2)
    plan = triggered_plan(3, [1.0] * 3, nodes, [3.0] * 3, 2.0, TRIGGERS[0], 5,
                          algorithm="ctr", routes="lookup", route_fetch=fetch)
    out, expected, run = run_plan(plan, tuples)
    got = list(out.results["group"])
    assert len(got) == len(set(got)) and set(got) == expected
    summary = registry.ALGORITHMS.get("ctr").summarize(plan, run)
    assert summary["windows_fired_by_count"] > 0 and summary["needs"] > 0
    assert summary["lookups" if fetch == "on-demand" else "prefetches"] > 0
