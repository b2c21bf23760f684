"""Join node programs driven through contract.program.run_node_step."""
import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from contract.messages import Message
from contract.program import DELIVER, FINISH, START, Event, run_node_step
from spark_nodes.algorithms.qjoin.algorithms import QJoin
from spark_nodes.algorithms.qjoin.operator import join_arrivals
from spark_nodes.algorithms.qjoin.programs import (NoBufferNode, QJoinNode, SlackJoinNode,
                                                   make_slack)
from spark_nodes.algorithms.registry import validate_params
from spark_nodes.workload.tuples import StreamTuple
from experiments.planning import make_plan

STREAMS = ("R", "S")


def _arrivals(n=600, rate=20.0, delay=0.05, seed=0, keys=4):
    """Two streams, Poisson-ish times, exponential network delays; in arrival order."""
    rng = np.random.default_rng(seed)
    out = []
    for k, name in enumerate(STREAMS):
        ts = np.cumsum(rng.exponential(1 / rate, n))
        arr = ts + rng.exponential(delay, n)
        key = rng.integers(0, keys, n)
        for i in range(n):
            out.append((float(arr[i]), StreamTuple(name, i, float(ts[i]), int(key[i]), None,
                                                   None, k, 1.0, float(ts[i]))))
    out.sort(key=lambda a: (a[0], a[1].stream, a[1].seq))
    return out


def _drive(program, arrivals, end):
    events = [Event(0.0, 0, START, None)]
    for i, (t, tup) in enumerate(arrivals):
        events.append(Event(t, i + 1, DELIVER, Message(i, "data", tup.origin, 9, 0.0, 1.0,
                                                       56, tup)))
    events.append(Event(end, len(events), FINISH, None))
    return run_node_step(program, 9, events, 0.0, end + 1.0, None, seed=1, algorithm="x")


def _groups(out):
    return [r["group"] for r in out.results]


def _qjoin_params(**over):
    return validate_params(QJoin(), {"P": 4.0, "L": 0.5, **over})


def _unbounded(arrivals, w):
    side = [STREAMS.index(t.stream) for _, t in arrivals]
    later, earlier = join_arrivals(side, [t.ts for _, t in arrivals], w,
                                   key=[t.key for _, t in arrivals], allowance_r=math.inf,
                                   allowance_s=math.inf)
    tups = [t for _, t in arrivals]
    return {"|".join(sorted(f"{tups[a].stream}:{tups[a].seq}" for a in (i, j)))
            for i, j in zip(later, earlier)}


def test_qjoin_near_full_recall_when_user_wants_everything():
    arr = _arrivals()
    truth = _unbounded(arr, 1.0)
    prog = QJoinNode(STREAMS, 1.0, "equality", None,
                     _qjoin_params(q_user=1.0, evict_over_size=False))
    out = _drive(prog, arr, 40.0)
    got = set(_groups(out))
    # only delays beyond the largest one seen so far can lose results
    assert got <= truth and len(got) >= 0.995 * len(truth)
    assert len(_groups(out)) == len(got)
    # emitted at the arrival of the later member
    times = {t.stream + ":" + str(t.seq): a for a, t in arr}
    for r in out.results[:50]:
        assert r["emitted_at"] == max(times[m] for m in r["group"].split("|"))


def test_size_limit_costs_recall():
    arr = _arrivals(delay=0.2)
    truth = _unbounded(arr, 1.0)
    got = {}
    for evict in (True, False):
        prog = QJoinNode(STREAMS, 1.0, "equality", None,
                         _qjoin_params(q_user=0.9, evict_over_size=evict))
        got[evict] = set(_groups(_drive(prog, arr, 40.0)))
        assert got[evict] <= truth
    assert len(got[True]) < len(got[False])


def test_qjoin_adapts_after_first_period_and_saves_memory():
    arr = _arrivals(n=800, delay=0.2)
    loose = QJoinNode(STREAMS, 1.0, "equality", None, _qjoin_params(q_user=0.8))
    strict = QJoinNode(STREAMS, 1.0, "equality", None, _qjoin_params(q_user=1.0))
    mem = {}
    for name, prog in (("loose", loose), ("strict", strict)):
        out = _drive(prog, arr, 40.0)
        recs = pd.DataFrame(out.metrics, columns=["time", "node", "source", "metric", "value"])
        fe = recs[recs.metric == "feasible"]
        assert (fe[fe.time < 4.0 - 1e-9].value == 0).all()          # first P: largest
        if name == "loose":      # q_user = 1 is infeasible after any loss
            assert (fe[fe.time >= 4.0 - 1e-9].value == 1).mean() > 0.5
        dx = recs[recs.metric == "dx"].value.to_numpy()
        mem[name] = (dx.mean(), len(set(_groups(out))))
    assert mem["loose"][0] < mem["strict"][0]
    assert mem["loose"][1] < mem["strict"][1]
    truth = len(_unbounded(arr, 1.0))
    assert mem["loose"][1] >= 0.8 * truth * 0.97


def test_no_buffer_loses_late_results_and_k_slack_recovers_them():
    arr = _arrivals(delay=0.3)
    truth = _unbounded(arr, 0.2)
    nb = set(_groups(_drive(NoBufferNode(STREAMS, 0.2, "equality", None), arr, 40.0)))
    ks_prog = SlackJoinNode(STREAMS, 0.2, "equality", None, make_slack("k-slack", 5.0))
    ks_out = _drive(ks_prog, arr, 40.0)
    ks = set(_groups(ks_out))
    assert nb < truth and len(nb) < 0.9 * len(truth)
    assert ks == truth
    lat = [r["emitted_at"] - r["last_entered"] for r in ks_out.results]
    assert min(lat) >= 0 and np.mean(lat) > 1.0


def test_mp_k_slack_node_releases_worked_sequence():
    seq = [1, 2, 5, 3, 4, 6, 8, 7, 9]
    arr = [(float(i), StreamTuple("R", i, float(ts), 0, None, None, 0, 1.0, float(ts)))
           for i, ts in enumerate(seq)]
    prog = SlackJoinNode(STREAMS, 1.0, "equality", None, make_slack("mp-k-slack"))
    out = _drive(prog, arr, 20.0)
    recs = [(m[0], m[4]) for m in out.metrics if m[3] == "K"]
    assert recs == [(0.0, 0.0), (5.0, 2.0)]
    assert prog.memory() == (9, 288)      # no S ever came: T is -inf, nothing is purged


def test_summarize_period_recall_and_hindsight():
    arr = _arrivals(n=400, delay=0.2)
    plan = make_plan(streams=dict.fromkeys(STREAMS, 0), windows=1.0, algorithm="qjoin",
                     params={"P": 4.0, "L": 0.5, "q_user": 0.9})
    prog = QJoinNode(STREAMS, 1.0, "equality", None, plan.params)
    out = _drive(prog, arr, 20.0)
    metrics = pd.DataFrame(out.metrics, columns=["time", "node", "source", "metric", "value"])
    mem = pd.DataFrame({"time": np.arange(0, 20, 0.5), "node": 9, "source": "testbed",
                        "metric": "tuples", "value": 50.0})
    metrics = pd.concat([metrics, mem])
    truth = _unbounded(arr, 1.0)
    run = SimpleNamespace(metrics=metrics, results=pd.DataFrame(out.results),
                          expected=truth, duration=20.0,
                          tuples={n: [t for _, t in arr if t.stream == n] for n in STREAMS})
    s = QJoin().summarize(plan, run)
    assert s["periods"] == 5 and s["tuples_arrived"] == 800
    assert 0 <= s["recall_target_met_fraction"] <= 1
    assert s["recall_period_min"] <= s["recall_period_mean"] <= 1
    assert s["intervals_estimated"] > 0 and abs(s["q_estimate_error_mean"]) < 0.3
    assert s["hindsight_memory_tuples"] > 0
    assert s["memory_vs_hindsight"] == pytest.approx(50.0 / s["hindsight_memory_tuples"])
