"""A tiny event-by-event driver for the SMJ tests (the real driver lives elsewhere).

It calls :func:`emulator.program.run_node_step` once per event, charges every
message ``size_units × path cost`` at send time (drops it when there is no path), and
delivers it after
``hops × hop_delay`` plus a seeded jitter, so messages may overtake each other.

>>> import networkx as nx
>>> from emulator.network import NetView
>>> g = nx.path_graph(3); nx.set_edge_attributes(g, 2.0, "cost")
>>> net = NetView.from_graph(g)
>>> tuples = make_tuples({"R1": 1, "R2": 2}, rate=3.0, keys=2, duration=4.0, seed=1)
>>> plan = make_plan(net, {"R1": 1, "R2": 2}, query=0, window=None, duration=4.0)
>>> run = run_algorithm("naive", plan, tuples)
>>> run.groups == algorithm("naive").exact_answer(plan, tuples)
True
"""
from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
import pandas as pd

from emulator.events import DELIVER, START, TIMER, TUPLE, Event
from emulator.messages import Message
from emulator.program import run_node_step
from spark_nodes.registry import validate_params
from spark_nodes.tuples import StreamTuple

import spark_nodes.smj.algorithms as smj_algorithms

_RANK = {START: 0, DELIVER: 1, TUPLE: 2, TIMER: 3}


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


def make_plan(net, stream_nodes: dict, query: int, window, duration: float, params=None,
              name="smj-h", seed=0, synopsis_unit=0.25):
    """A stand-in for :class:`experiments.plan.Plan` with the fields SMJ reads."""
    alg = algorithm(name)
    return SimpleNamespace(
        name="t", seed=seed, duration=duration, synopsis_unit=synopsis_unit,
        bytes_per_unit=32, net0=net, algorithm=name,
        params=validate_params(alg, params or {}),
        streams=[SimpleNamespace(name=s, node=v) for s, v in stream_nodes.items()],
        stream_nodes=dict(stream_nodes), stream_names=list(stream_nodes),
        query=SimpleNamespace(node=query, predicate="equality", theta=None,
                              windows={s: window for s in stream_nodes}))


@dataclass
class MiniRun:
    """What :func:`run_algorithm` returns."""

    results: pd.DataFrame
    ledger: pd.DataFrame
    metrics: pd.DataFrame
    duration: float
    groups: set = field(default_factory=set)
    lost: list = field(default_factory=list)


def run_algorithm(name, plan, tuples, nets=None, hop_delay=0.01, jitter=0.005,
                  seed=0) -> MiniRun:
    """Run algorithm ``name`` on ``plan``; ``nets`` = ``[(start, NetView), ...]``."""
    alg = algorithm(name)
    plan.params = validate_params(alg, {k: v for k, v in plan.params.items()
                                        if k in alg.params})
    nets = nets or [(0.0, plan.net0)]
    programs = alg.programs(plan)
    rng = np.random.default_rng(seed)
    order = itertools.count()
    agenda = []

    def push(ev, node):
        heapq.heappush(agenda, ((ev.time, _RANK[ev.kind], ev.order), node, ev))

    for v in programs:
        push(Event(0.0, next(order), START, None), v)
    for s, lst in tuples.items():
        for t in lst:
            push(Event(t.entered_at, next(order), TUPLE, t), plan.stream_nodes[s])
    state = {v: (None, 0) for v in programs}
    results, ledger, metrics, lost, msg_id = [], [], [], [], itertools.count()
    while agenda:
        (now, _, _), node, ev = heapq.heappop(agenda)
        net = [n for start, n in nets if start <= now][-1]
        rng_state, local = state[node]
        out = run_node_step(programs[node], node, [ev], now, now, net, seed=plan.seed,
                            rng_state=rng_state, algorithm=name, next_local_id=local)
        state[node] = (out.rng_state, out.next_local_id)
        results += out.results
        metrics += out.metrics
        for at, tag in out.timers:
            push(Event(at, next(order), TIMER, tag), node)
        for m in out.messages:
            mid = next(msg_id)
            if net.cost(m.src, m.dst) == float("inf"):
                lost.append(m)      # no route: the network drops it, as the backend does
                continue
            cost = m.size_units * net.cost(m.src, m.dst)
            ledger.append((m.sent_at, mid, m.kind, m.src, m.dst, m.size_units, cost))
            arrive = m.sent_at + net.hops(m.src, m.dst) * hop_delay + rng.uniform(0, jitter)
            msg = Message(mid, m.kind, m.src, m.dst, m.sent_at, m.size_units, 0, m.payload)
            push(Event(arrive, next(order), DELIVER, msg), m.dst)
    res = pd.DataFrame(results, columns=["group", "emitted_at", "node", "first_entered",
                                         "last_entered"])
    led = pd.DataFrame(ledger, columns=["time", "msg_id", "kind", "src", "dst",
                                        "size_units", "cost"])
    met = pd.DataFrame(metrics, columns=["time", "node", "source", "metric", "value"])
    return MiniRun(res, led, met, plan.duration, set(res["group"]), lost)
