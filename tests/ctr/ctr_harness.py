"""Building and running small ATR/CTR plans for the tests."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from emulator.network import Network
from experiments.plan import Plan, QuerySpec, StreamSpec
from spark_nodes import registry
from emulator.driver import execute
from spark_nodes.oracle import exact_groups
from spark_nodes.runtime_inproc import InprocRuntime
from spark_nodes.tuples import StreamTuple
from topologies import static_dynamics


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
    names = [f"R{i + 1}" for i in range(len(stream_nodes))]
    dyn = static_dynamics(topo)
    alg = registry.get(algorithm)
    return Plan(
        name="t", seed=seed, duration=duration, step=step, backend="simpy",
        runtime="inproc", memory_interval=1.0, bytes_per_unit=32, header_bytes=24,
        synopsis_unit=0.25, topology=topo, dynamics=dyn,
        streams=tuple(StreamSpec(n, u) for n, u in zip(names, stream_nodes)),
        query=QuerySpec(topo.nodes[0] if query_node is None else query_node, predicate,
                        theta, dict(zip(names, windows))),
        algorithm=algorithm, params=registry.validate_params(alg, params),
        net0=Network(dyn).view(0.0), spec={})


def run_plan(plan, tuples, programs=None):
    """Run ``plan`` (its algorithm's programs, or ``programs``); return (output, expected
    groups, run namespace for summarize)."""
    alg = registry.get(plan.algorithm)
    programs = alg.programs(plan) if programs is None else programs
    out = execute(plan, programs, tuples, InprocRuntime())
    q = plan.query
    expected = exact_groups(tuples, q.windows, q.predicate, q.theta)
    run = SimpleNamespace(ledger=out.ledger, metrics=out.metrics, results=out.results,
                          duration=plan.duration)
    return out, expected, run


