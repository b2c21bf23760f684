"""SMJE equals brute-force enumeration; SMJH never beats it; programs pickle."""
import dataclasses
import itertools
import pickle
import types

import numpy as np
import pytest

from spark_nodes.algorithms.smj.lottery import LotteryCounters
from spark_nodes.algorithms.smj.orders import OrderProblem, smje, smjh
from spark_nodes.algorithms.triggers.spec import trigger_spec
from .smj_harness import algorithm, make_plan, make_tuples, run_algorithm
from .test_smj_exact import random_net


def brute_force(p):
    best = None
    for order in itertools.permutations(p.others):   # lexicographic order
        c = p.cost(order)
        if best is None or c < best[0] - 1e-9:
            best = (c, order)
    return best


@pytest.mark.parametrize("seed", range(40))
def test_smje_equals_enumeration_and_bounds_smjh(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 7))
    m = int(rng.integers(1, 12))
    s = rng.poisson(1.0, (n, m)).astype(float)
    w = rng.integers(1, 11, (n + 1, n + 1)).astype(float)
    if seed % 5 == 0:
        w[:] = 3.0                                # all ties: lexicographic order wins
    x = rng.poisson(1.5, m).astype(float)
    p = OrderProblem(x, s, w, origin=int(rng.integers(n)), final=bool(seed % 2))
    cost, order = smje(p)
    bf = brute_force(p)
    assert cost == pytest.approx(bf[0]) and order == bf[1]
    assert smjh(p)[0] >= cost - 1e-9
    assert smjh(p, lookahead=max(1, n - 1))[0] == pytest.approx(cost)   # full depth: exact


def test_unreachable_site_costs_inf_only_if_data_must_cross():
    w = np.full((3, 3), 1.0)
    w[0, 1] = w[1, 0] = np.inf
    p = OrderProblem(np.array([1.0]), np.array([[1.0], [0.0]]), w, origin=0)
    assert p.cost((1,)) == np.inf
    p = OrderProblem(np.array([0.0]), np.array([[1.0], [0.0]]), w, origin=0)
    assert smje(p) == (0.0, (1,))


def test_lottery_proportional_draw_follows_sf():
    c = LotteryCounters()
    c.sent_to(0, 2); c.reported(0, 2)      # sf 1
    c.sent_to(1, 6); c.reported(1, 2)      # sf 3
    rng = np.random.default_rng(0)
    picks = [c.choose([0, 1], rng, "proportional") for _ in range(4000)]
    assert np.mean(np.array(picks) == 1) == pytest.approx(0.75, abs=0.03)
    c.sent_to(2, 1)                        # sent, nothing back: sf = inf, always first
    assert {c.choose([0, 1, 2], rng, "proportional") for _ in range(50)} == {2}


@pytest.mark.parametrize("triggered", [False, True])
@pytest.mark.parametrize("name", ["smj-e", "smj-h", "lottery", "naive"])
def test_programs_pickle_mid_run(name, triggered):
    net = random_net(6, 1)
    streams = {"R1": 0, "R2": 3, "R3": 5}
    plan = make_plan(net, streams, 2, 2.0, 4.0, name=name)
    if triggered:       # a window initiator at each site, tuples whose period is open
        plan = dataclasses.replace(plan, trigger=trigger_spec(
            {"use": "r", "r": {"conditions": [{"kind": "rate", "above": 3.0,
                                                "at": "sources"}]}},
            f"trigger.{name}", list(streams)))
    tuples = make_tuples(streams, 2.0, 3, 4.0, 1)
    programs = algorithm(name).programs(plan)
    for v, prog in programs.items():
        for lst in tuples.values():
            for t in lst:
                if t.origin == v:
                    ctx = types.SimpleNamespace(now=t.entered_at, record=lambda *a: None,
                                                signal=lambda *a, **k: 0)
                    prog.on_tuple(ctx, t)
        clone = pickle.loads(pickle.dumps(prog))
        assert clone.memory() == prog.memory()
        if triggered and prog.sites:
            assert clone.memory()[0] > 0 and clone.signals.initiator.obs.everything


def test_summary_keys_and_smje_not_above_smjh_data_cost():
    net = random_net(9, 4)
    streams = {f"R{k + 1}": v for k, v in enumerate([0, 2, 4, 6, 8])}
    tuples = make_tuples(streams, 5.0, 20, 8.0, 4)
    out = {}
    for name in ("smj-e", "smj-h", "lottery"):
        plan = make_plan(net, streams, 1, 3.0, 8.0, name=name)
        run = run_algorithm(name, plan, tuples)
        out[name] = algorithm(name).summarize(plan, run)
    e, h = out["smj-e"], out["smj-h"]
    assert e["data_cost"] == pytest.approx(e["hindsight_cost"])   # exact synopses, static W
    assert h["data_cost"] >= e["data_cost"] - 1e-9
    assert e["filtered_tuples"] > 0 and e["synopsis_cost"] > 0
    assert "hindsight_cost" not in out["lottery"] and out["lottery"]["report_cost"] > 0
