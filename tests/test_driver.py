"""The step driver: iterated steps, determinism, dead nodes, memory samples, drain."""
import networkx as nx
import pytest

import topologies
from contract.program import NodeProgram
from emulator.driver import execute
from spark_nodes.runtimes.inproc import InprocRuntime
from spark_nodes.workload.tuples import StreamTuple
from experiments.planning import make_plan


def chain_dynamics(delay=0.1, jitter=0.0, n=4):
    topo = topologies.line(n)
    for u, v in topo.graph.edges:
        topo.graph.edges[u, v].update(cost=1.0, delay=delay, jitter=jitter)
    return topologies.static_dynamics(topo)


def tuples(n, origin=0, rate=10.0):
    return {"R": [StreamTuple("R", i, i / rate, i % 3, None, None, origin, 1.0, i / rate)
                  for i in range(n)]}


class Forward(NodeProgram):
    """Source: sends every tuple to ``sink``, and a local note to itself."""

    def __init__(self, sink):
        self.sink, self.local = sink, 0

    def on_tuple(self, ctx, tup):
        ctx.send(self.sink, "data", tup, 1.0)
        ctx.send(ctx.node, "control", None, 0.0)

    def on_message(self, ctx, msg):
        self.local += 1


class Collect(NodeProgram):
    """Sink: emits each tuple, draws a random number per tuple, ticks a timer each unit."""

    def __init__(self):
        self.seen, self.draws, self.ticks = [], [], []

    def start(self, ctx):
        ctx.set_timer(1.0, "tick")

    def on_message(self, ctx, msg):
        self.seen.append(msg.payload)
        self.draws.append(float(ctx.rng.random()))
        ctx.emit((msg.payload,), hops=ctx.net.hops(msg.src, ctx.node))

    def on_timer(self, ctx, tag):
        self.ticks.append(ctx.now)
        ctx.set_timer(ctx.now + 1.0, tag)

    def memory(self):
        return (len(self.seen), 32 * len(self.seen))


def run(dynamics, step=0.1, seed=1, n=20):
    progs = {0: Forward(3), 3: Collect()}
    out = execute(make_plan(dynamics=dynamics, step=step, seed=seed), progs, tuples(n),
                  InprocRuntime())
    return out, progs


def test_every_tuple_arrives_with_its_latency_and_hops():
    out, progs = run(chain_dynamics())
    assert len(out.results) == 20 and progs[0].local == 20
    latency = out.results.emitted_at - out.results.last_entered
    assert latency.to_numpy() == pytest.approx([0.3] * 20)     # 3 hops x 0.1
    assert set(out.results.hops) == {3}
    assert len(out.ledger) == 60 and out.ledger.cost.sum() == 60.0
    assert progs[3].ticks == [1.0, 2.0, 3.0, 4.0, 5.0]          # none after the end


def test_zero_delay_links_are_iterated_within_a_step():
    out, _ = run(chain_dynamics(delay=0.0))
    assert (out.results.emitted_at == out.results.last_entered).all()


def test_same_seed_same_ledger_and_results():
    a, pa = run(chain_dynamics(jitter=0.05), seed=5)
    b, pb = run(chain_dynamics(jitter=0.05), seed=5)
    c, _ = run(chain_dynamics(jitter=0.05), seed=6)
    assert a.ledger.equals(b.ledger) and a.results.equals(b.results)
    assert pa[3].draws == pb[3].draws
    assert not a.ledger.equals(c.ledger)


def test_memory_is_sampled_every_interval():
    out, _ = run(chain_dynamics())
    sink = out.metrics[(out.metrics.node == 3) & (out.metrics.metric == "tuples")]
    assert sink.time.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert sink.value.iloc[-1] == 20
    assert out.info["memory_peak_total_tuples"] == 20


class DeadSink:
    """Node 3 is down during [0.5, 1.5)."""

    def __init__(self):
        self.base = chain_dynamics()
        self.epochs = [0.0, 0.5, 1.5]

    def snapshot(self, t):
        g = nx.Graph(self.base.snapshot(0.0))
        for u in g:
            g.nodes[u]["alive"] = not (u == 3 and 0.5 <= t < 1.5)
        return g


def test_messages_to_a_dead_node_are_counted_lost_and_timers_wait():
    out, progs = run(DeadSink(), n=20)
    lost = sum(out.info["lost"].values())   # "no_route" while 3 is down, "dead_node" in flight
    assert lost > 0 and len(out.results) + lost == 20
    assert progs[3].ticks[0] == 1.5      # the tick due at 1.0 waited for the node


class FreezeWatcher(NodeProgram):
    """Records how many objects the collector skips while the run is on."""

    frozen_during_run: list = []

    def start(self, ctx):
        import gc

        FreezeWatcher.frozen_during_run.append(gc.get_freeze_count())


def test_a_run_leaves_earlier_objects_out_of_collections_and_undoes_it_after():
    import gc

    assert gc.get_freeze_count() == 0
    FreezeWatcher.frozen_during_run.clear()
    execute(make_plan(dynamics=chain_dynamics(), duration=1.0), {0: FreezeWatcher()}, {},
            InprocRuntime())
    assert FreezeWatcher.frozen_during_run[0] > 10_000   # the imported libraries at least
    assert gc.get_freeze_count() == 0
