"""Small SMJ runs for the tests, through the real step driver and the simpy backend.

Graphs carry ``cost`` per link; every hop takes ``hop_delay`` plus a seeded
``U(0, jitter)``, so messages may overtake each other.

>>> import networkx as nx
>>> g = nx.path_graph(3); nx.set_edge_attributes(g, 2.0, "cost")
>>> tuples = make_tuples({"R1": 1, "R2": 2}, rate=3.0, keys=2, duration=4.0, seed=1)
>>> plan = make_plan(g, {"R1": 1, "R2": 2}, query=0, window=None, duration=4.0)
>>> run = run_algorithm("naive", plan, tuples)
>>> run.groups == algorithm("naive").exact_answer(plan, tuples)
True
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import networkx as nx
import numpy as np
import pandas as pd

from contract.plan import Plan
from emulator.driver import execute
from spark_nodes.algorithms.registry import validate_params
from spark_nodes.runtimes.inproc import InprocRuntime
from spark_nodes.workload.tuples import StreamTuple
from experiments import planning

import spark_nodes.algorithms.smj.algorithms as smj_algorithms


def algorithm(name):
    """The registered SMJ-family algorithm ``name``."""
    return next(a for a in smj_algorithms.ALGORITHMS if a.name == name)


def make_tuples(stream_nodes: dict, rate: float, keys: int, duration: float, seed: int,
                disorder: float = 0.0) -> dict:
    """Poisson streams with keys uniform in ``1..keys``; ``entered_at = ts + Exp``."""
    rng = np.random.default_rng(seed)
    out = {}
    for s, node in stream_nodes.items():
        n = rng.poisson(rate * duration)
        ts = np.sort(rng.uniform(0, duration, n))
        ks = rng.integers(1, keys + 1, n)
        lag = rng.exponential(disorder, n) if disorder > 0 else np.zeros(n)
        out[s] = [StreamTuple(s, i, float(t), int(k), None, None, node, 1.0,
                              float(min(t + d, duration)))
                  for i, (t, k, d) in enumerate(zip(ts, ks, lag))]
    return out


class Epochs:
    """Dynamics made of graphs that take over at given times: ``[(start, graph), ...]``."""

    def __init__(self, graphs, hop_delay: float, jitter: float):
        self.epochs = [float(start) for start, _ in graphs]
        self._graphs = []
        for _, g in graphs:
            g = nx.Graph(g)
            nx.set_edge_attributes(g, hop_delay, "delay")
            nx.set_edge_attributes(g, jitter, "jitter")
            self._graphs.append(nx.freeze(g))

    def snapshot(self, t: float) -> nx.Graph:
        k = max(i for i, start in enumerate(self.epochs) if start <= t) if t >= 0 else 0
        return self._graphs[k]


def make_plan(graph, stream_nodes: dict, query: int, window, duration: float, params=None,
              name="smj-h", seed=0, synopsis_unit=0.25, nets=None, hop_delay=0.01,
              jitter=0.005) -> Plan:
    """A plan on ``graph`` (or on the epochs ``nets = [(start, graph), ...]``)."""
    return planning.make_plan(dynamics=Epochs(nets or [(0.0, graph)], hop_delay, jitter),
                           streams=stream_nodes, query_node=query, windows=window,
                           algorithm=name, params=params, seed=seed, duration=duration,
                           step=hop_delay, synopsis_unit=synopsis_unit)


@dataclass
class SmjRun:
    """What :func:`run_algorithm` returns."""

    results: pd.DataFrame
    ledger: pd.DataFrame
    metrics: pd.DataFrame
    duration: float
    groups: set = field(default_factory=set)
    lost: dict = field(default_factory=dict)


def run_algorithm(name, plan, tuples) -> SmjRun:
    """Run algorithm ``name`` on ``plan`` through the step driver."""
    alg = algorithm(name)
    params = validate_params(alg, {k: v for k, v in plan.params.items() if k in alg.params})
    plan = replace(plan, algorithm=name, params=params)
    out = execute(plan, alg.programs(plan), tuples, InprocRuntime())
    return SmjRun(out.results, out.ledger, out.metrics, plan.duration,
                  set(out.results["group"]), out.info["lost"])
