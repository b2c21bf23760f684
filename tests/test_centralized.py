"""Centralized join plug-in: programs called directly and whole runs through the driver."""

import pickle

import numpy as np
import pytest

import topologies
from contract.events import DELIVER, FINISH, TUPLE, Event
from contract.messages import Message
from contract.program import run_node_step
from emulator.driver import execute
from spark_nodes.algorithms.centralized import Centralized, CentralizedNode
from spark_nodes.algorithms.multiway import MultiwayJoin
from spark_nodes.algorithms.oracle import exact_groups
from spark_nodes.algorithms.registry import validate_params
from spark_nodes.runtimes.inproc import InprocRuntime
from spark_nodes.workload.tuples import StreamTuple as T
from experiments.planning import make_plan


def line_dynamics(n=5, delay=0.1, jitter=0.0):
    topo = topologies.line(n)
    for u, v in topo.graph.edges:
        topo.graph.edges[u, v].update(cost=2.0, delay=delay, jitter=jitter)
    return topologies.static_dynamics(topo)


def central_plan(dynamics, stream_nodes, query_node, params=None, window=2.0, duration=20.0):
    """The centralized join's plan with the run constants these tests share."""
    return make_plan(dynamics=dynamics, streams=stream_nodes, query_node=query_node,
                     windows=window, algorithm="centralized", params=params, name="central",
                     seed=3, duration=duration, step=0.05)


def random_tuples(stream_nodes, rate=4.0, duration=20.0, keys=5, seed=0, late=0.0):
    rng = np.random.default_rng(seed)
    out = {}
    for s, node in stream_nodes.items():
        ts = np.sort(rng.uniform(0, duration, int(rate * duration)))
        delay = rng.exponential(late, len(ts)) if late > 0 else np.zeros(len(ts))
        out[s] = [T(s, i, float(a), int(k), None, None, node, 1.0, float(a + d))
                  for i, (a, k, d) in enumerate(zip(ts, rng.integers(0, keys, len(ts)), delay))]
    return out


def groups_of(results):
    return list(results["group"])


def test_source_batches_and_query_node_joins_by_hand():
    src = CentralizedNode(query_node=9, join=None, batch=2)
    a = T("A", 0, 0.0, 1, None, None, 4)
    b = T("A", 1, 0.5, 2, None, None, 4)
    out = run_node_step(src, 4, [Event(0.0, 0, TUPLE, a), Event(0.5, 1, TUPLE, b)],
                        0.0, 1.0, None, seed=1)
    (m,) = out.messages
    assert (m.kind, m.dst, m.size_units, m.payload, m.sent_at) == ("data", 9, 2.0, (a, b), 0.5)
    assert src.memory() == (0, 0)

    join = MultiwayJoin(["A", "B"], {"A": 1.0, "B": 1.0}, "equality")
    q = CentralizedNode(query_node=9, join=join)
    c = T("B", 0, 0.7, 2, None, None, 9)
    events = [Event(0.8, 0, DELIVER, Message(1, "data", 4, 9, 0.5, 2.0, 88, (a, b))),
              Event(0.9, 1, TUPLE, c)]
    out = run_node_step(q, 9, events, 0.0, 1.0, None, seed=1)
    # c, produced at the query node, joins at once with b (key 2)
    assert out.messages == []
    assert [(r["group"], r["emitted_at"]) for r in out.results] == [("A:1|B:0", 0.9)]
    assert q.memory() == (3, 96)


def test_finish_flushes_a_partial_batch():
    src = CentralizedNode(query_node=1, join=None, batch=5)
    a = T("A", 0, 0.0, 1, None, None, 0, size=1.5)
    out = run_node_step(src, 0, [Event(0.0, 0, TUPLE, a), Event(1.0, 0, FINISH, None)],
                        0.0, 2.0, None, seed=1)
    assert [(m.sent_at, m.size_units, m.payload) for m in out.messages] == [(1.0, 1.5, (a,))]


def test_unexpected_message_is_an_error():
    src = CentralizedNode(query_node=1, join=None)
    msg = Message(1, "data", 2, 0, 0.0, 1.0, 56, ())
    with pytest.raises(ValueError, match="centralized node 0: unexpected 'data'"):
        run_node_step(src, 0, [Event(0.0, 0, DELIVER, msg)], 0.0, 1.0, None, seed=1)


def test_run_equals_exact_answer_and_costs_tuples_times_path():
    nodes = {"R1": 0, "R2": 2, "R3": 4}      # R2 is produced at the query node
    plan = central_plan(line_dynamics(jitter=0.3), nodes, query_node=2)
    tuples = random_tuples(nodes, late=0.5)
    alg = Centralized()
    progs = alg.programs(plan)
    assert sorted(progs) == [0, 2, 4]
    out = execute(plan, progs, tuples, InprocRuntime())
    got = groups_of(out.results)
    expected = alg.exact_answer(plan, tuples)
    assert len(expected) > 20
    assert len(got) == len(set(got)) and set(got) == expected
    # every tuple crosses its path to node 2 once: 2 hops from 0 and 4, none for R2,
    # at cost 2 per hop
    n = {s: len(v) for s, v in tuples.items()}
    assert out.ledger.cost.sum() == pytest.approx(2.0 * (2 * n["R1"] + 2 * n["R3"]))
    assert set(out.ledger.kind) == {"data"}
    # latency of a group is measured from its last member's entry
    assert (out.results.emitted_at >= out.results.last_entered).all()


def test_batching_cuts_messages_not_cost():
    nodes = {"R1": 0, "R2": 4}
    tuples = random_tuples(nodes, seed=5)
    outs = {}
    for batch in (1, 4):
        plan = central_plan(line_dynamics(), nodes, query_node=2, params={"batch": batch})
        outs[batch] = execute(plan, Centralized().programs(plan), tuples, InprocRuntime())
    assert outs[1].ledger.msg_id.nunique() == 160
    assert outs[4].ledger.msg_id.nunique() == 40
    assert outs[1].ledger.cost.sum() == outs[4].ledger.cost.sum() == 160 * 2 * 2.0
    assert set(groups_of(outs[1].results)) == set(groups_of(outs[4].results))


def test_retention_bounds_memory_and_is_exact_in_order():
    nodes = {"R1": 1, "R2": 3}   # one hop each from node 2, no jitter: arrival in ts order
    tuples = random_tuples(nodes, rate=5.0, seed=2)
    peaks = {}
    for retention in (None, 0.0):
        plan = central_plan(line_dynamics(), nodes, query_node=2,
                            params={"retention": retention})
        progs = Centralized().programs(plan)
        out = execute(plan, progs, tuples, InprocRuntime())
        assert set(groups_of(out.results)) == exact_groups(tuples, plan.query.windows,
                                                           "equality")
        peaks[retention] = progs[2].memory()[0]
    assert peaks[None] == 200                       # everything kept
    assert peaks[0.0] < 40                          # ~ 2 streams x rate 5 x window 2


def test_programs_pickle_and_reject_bad_params():
    plan = central_plan(line_dynamics(), {"R1": 0, "R2": 4}, query_node=0)
    progs = Centralized().programs(plan)
    assert sorted(progs) == [0, 4]
    assert pickle.loads(pickle.dumps(progs[0])).join.streams == ("R1", "R2")
    with pytest.raises(ValueError, match="params.centralized.batch"):
        central_plan(line_dynamics(), {"R1": 0, "R2": 4}, query_node=0, params={"batch": 0})
    with pytest.raises(ValueError, match="params.centralized.bach"):
        validate_params(Centralized(), {"bach": 2})
