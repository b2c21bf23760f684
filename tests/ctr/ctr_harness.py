"""Building and running small ATR/CTR plans for the tests."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from emulator.driver import execute
from spark_nodes.algorithms import registry
from spark_nodes.algorithms.oracle import exact_groups
from spark_nodes.runtimes.inproc import InprocRuntime
from spark_nodes.workload.tuples import StreamTuple
from experiments import planning


def make_streams(rng, names, nodes, rates, horizon, key_domain=4, positions=False,
                 disorder=0.0):
    """Poisson streams with ``ts < horizon``; ``entered_at = ts + U(0, disorder)``."""
    out = {}
    for name, node, rate in zip(names, nodes, rates):
        n = rng.poisson(rate * horizon)
        ts = np.sort(rng.uniform(0.0, horizon, n))
        tups = []
        for seq, t in enumerate(ts):
            key = None if positions else int(rng.integers(key_domain))
            x, y = (float(v) for v in rng.uniform(0, 3, 2)) if positions else (None, None)
            lag = float(rng.uniform(0.0, disorder))
            tups.append(StreamTuple(name, seq, float(t), key, x, y, node, 1.0, float(t) + lag))
        out[name] = tups
    return out


def make_plan(algorithm, params, topo, stream_nodes, windows, predicate="equality",
              theta=None, duration=20.0, step=0.01, seed=1, query_node=None):
    """Streams ``R1..Rn`` at ``stream_nodes`` with ``windows``; the query at the
    topology's first node unless ``query_node``."""
    names = [f"R{i + 1}" for i in range(len(stream_nodes))]
    return planning.make_plan(
        topology=topo, streams=dict(zip(names, stream_nodes)),
        query_node=topo.nodes[0] if query_node is None else query_node,
        windows=dict(zip(names, windows)), predicate=predicate, theta=theta,
        algorithm=algorithm, params=params, seed=seed, duration=duration, step=step)


def run_plan(plan, tuples, programs=None):
    """Run ``plan`` (its algorithm's programs, or ``programs``); return (output, expected
    groups, run namespace for summarize)."""
    alg = registry.ALGORITHMS.get(plan.algorithm)
    programs = alg.programs(plan) if programs is None else programs
    out = execute(plan, programs, tuples, InprocRuntime())
    q = plan.query
    expected = exact_groups(tuples, q.windows, q.predicate, q.theta)
    run = SimpleNamespace(ledger=out.ledger, metrics=out.metrics, results=out.results,
                          duration=plan.duration)
    return out, expected, run


