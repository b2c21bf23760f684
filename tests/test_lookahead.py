"""Run-ahead and deferred nodes (emulator.lookahead): the same run in fewer runtime calls."""

import pandas as pd
import pytest

import emulator.lookahead
import topologies
from emulator.driver import execute
from experiments import spec as specs
from experiments.planning import build_plan
from spark_nodes.algorithms import registry
from spark_nodes.runtimes.inproc import InprocRuntime
from spark_nodes.workload import sources
from experiments.planning import make_plan
from tests.test_driver import Collect, Forward, chain_dynamics, tuples


class Source(Forward):
    """A pure source: sends each tuple, and a note on a timer after every fourth."""

    def receives_messages(self):
        return False

    def on_tuple(self, ctx, tup):
        ctx.send(self.sink, "data", tup, 1.0)
        if tup.seq % 4 == 0:
            ctx.set_timer(ctx.now + 0.33, "note")

    def on_timer(self, ctx, tag):
        ctx.send(self.sink, "data", None, 0.5)


class Sink(Collect):
    """A pure sink: emits what arrives, draws a number, ticks a timer every unit."""

    def sends_messages(self):
        return False

    def on_message(self, ctx, msg):
        self.seen.append(msg.payload)
        self.draws.append(float(ctx.rng.random()))
        ctx.emit((msg.payload,) if msg.payload else (), hops=ctx.net.hops(msg.src, ctx.node))
        ctx.record("got", 1.0)


def two_sources():
    out = tuples(30)
    out["S"] = [t._replace(origin=1, stream="S") for t in tuples(17)["R"]]
    return out


def run_both(dynamics, step=0.1, programs=None, stream=None):
    """The run step by step and with lookahead: (stepped, ahead) outputs."""
    outs = []
    for run_ahead in (False, True):
        progs = programs() if programs else {0: Source(3), 1: Source(3), 3: Sink()}
        outs.append(execute(make_plan(dynamics=dynamics, step=step), progs,
                            stream() if stream else two_sources(), InprocRuntime(),
                            run_ahead=run_ahead))
    return outs


def assert_same(stepped, ahead):
    for table in ("ledger", "results"):
        pd.testing.assert_frame_equal(getattr(stepped, table), getattr(ahead, table))
    # Spark's own state figures (source "spark", one pair per micro-batch) aside
    own = [m[m.source != "spark"].reset_index(drop=True)
           for m in (stepped.metrics, ahead.metrics)]
    pd.testing.assert_frame_equal(*own)
    assert stepped.info["memory_peak_total_tuples"] == ahead.info["memory_peak_total_tuples"]


@pytest.mark.parametrize("delay,step", [(0.1, 0.1), (0.1, 0.05), (0.25, 0.1), (0.0, 0.1)])
def test_sources_ahead_and_sink_deferred_give_the_stepped_run(delay, step):
    stepped, ahead = run_both(chain_dynamics(delay=delay, jitter=0.03), step=step)
    assert_same(stepped, ahead)
    assert ahead.info["run_ahead_nodes"] == [0, 1] and ahead.info["deferred_nodes"] == [3]
    # 47 tuples and 8 + 5 timer notes, all delivered; the sink's timer ticked every unit
    assert len(ahead.results) == 60
    assert (ahead.metrics.metric == "got").sum() == 60


def test_sink_timers_fire_in_windows_the_driver_never_ran():
    # one tuple (and its note): the sink ticks at 1, 2, 3, 4, 5 in windows with nothing else
    stepped, ahead = run_both(chain_dynamics(), stream=lambda: tuples(1),
                              programs=lambda: {0: Source(3), 3: Sink()})
    assert_same(stepped, ahead)
    memory = ahead.metrics[(ahead.metrics.node == 3) & (ahead.metrics.metric == "tuples")]
    assert memory.time.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert memory.value.tolist() == [0.0, 2.0, 2.0, 2.0, 2.0, 2.0]


def test_spans_shorter_than_the_run(monkeypatch):
    topo = topologies.random_geometric(6, 0.7, seed=3)
    moves = topologies.random_waypoint(topo.nodes, 5.0, (0.05, 0.1), 0.2, seed=4,
                                       start=topo.positions)
    dynamics = topologies.mobility_dynamics(topo, moves, duration=5.0, resolution=0.25,
                                            link_cost="distance")
    assert len(dynamics.epochs) > 6
    monkeypatch.setattr(emulator.lookahead, "SPAN_EPOCHS", 3)
    stepped, ahead = run_both(dynamics)
    assert_same(stepped, ahead)


def test_a_node_that_goes_down_runs_step_by_step():
    topo = topologies.line(4)
    for u, v in topo.graph.edges:
        topo.graph.edges[u, v].update(cost=1.0, delay=0.1)
    # source 1 is down from 1 to 2 (its tuples then are dropped): it runs step by step
    schedule = topologies.loads_schedule("time,u,v,cost,up\n1,1,,,0\n2,1,,,1\n")
    stepped, ahead = run_both(topologies.schedule_dynamics(topo, schedule))
    assert_same(stepped, ahead)
    assert ahead.info["run_ahead_nodes"] == [0] and ahead.info["deferred_nodes"] == [3]
    assert ahead.info["dropped"] == {"tuples_at_dead_node": 7}   # S at 1.0, 1.1, ..., 1.6


class Talker(Forward):
    """Says it receives nothing, and is sent to."""

    def receives_messages(self):
        return False


class Replier(Collect):
    """Says it sends nothing, and replies."""

    def sends_messages(self):
        return False

    def on_message(self, ctx, msg):
        ctx.send(msg.src, "ack", None, 0.1)


def test_a_wrong_declaration_is_a_clear_error():
    with pytest.raises(RuntimeError, match=r"node 3: .*sends_messages\(\) is False.*sent one"):
        execute(make_plan(dynamics=chain_dynamics()), {0: Forward(3), 3: Replier()},
                tuples(3), InprocRuntime())
    with pytest.raises(RuntimeError, match=r"node 3: .*receives_messages\(\) is False.*a "
                                           r"message reached it"):
        execute(make_plan(dynamics=chain_dynamics()), {0: Forward(3), 3: Talker(0)},
                tuples(3), InprocRuntime())


def bundled(path: str, run_ahead: bool, runtime, **fields):
    """A bundled spec's first run with ``fields`` set (dotted paths), executed."""
    spec = specs.expand(specs.load(path)[0], path)[0][0]
    for field, value in fields.items():
        specs.set_path(spec, field.replace("__", "."), value)
    spec = specs.for_run(spec)
    spec["run"]["run_ahead"] = run_ahead
    plan = build_plan(spec)
    tuples_by_stream = sources.generate_streams(spec["streams"], plan.stream_nodes,
                                                plan.duration, 5)
    programs = registry.ALGORITHMS.get(plan.algorithm).programs(plan)
    return execute(plan, programs, tuples_by_stream, runtime, run_ahead=run_ahead)


def quickstart(run_ahead: bool, runtime):
    return bundled("experiments/specs/quickstart.toml", run_ahead, runtime, run__duration=8.0)


def test_quickstart_ahead_equals_stepped_in_process():
    stepped, ahead = quickstart(False, InprocRuntime()), quickstart(True, InprocRuntime())
    assert_same(stepped, ahead)
    assert len(ahead.info["run_ahead_nodes"]) == 3 and ahead.info["deferred_nodes"] == [0]
    assert len(ahead.results) > 10


@pytest.mark.parametrize("algorithm", ["qjoin", "k-slack", "no-buffer"])
def test_qjoin_family_ahead_equals_stepped(algorithm):
    runs = [bundled("experiments/specs/qjoin_soccer.toml", run_ahead, InprocRuntime(),
                    run__duration=12.0, algorithm__name=algorithm, params__qjoin__P=4.0)
            for run_ahead in (False, True)]
    assert_same(*runs)
    assert runs[1].info["deferred_nodes"] == [0] and runs[1].info["run_ahead_nodes"]
    assert len(runs[1].results) > 10


@pytest.fixture(scope="module")
def spark():
    from spark_nodes.runtimes.session import build_session

    return build_session("local[2]", partitions=2)


@pytest.mark.spark
def test_quickstart_on_spark_runs_in_two_micro_batches(spark):
    from spark_nodes.runtimes.spark import SparkRuntime

    runtime = SparkRuntime(spark=spark)
    on_spark = quickstart(True, runtime)
    assert_same(quickstart(False, InprocRuntime()), on_spark)
    # the sources for the whole run, then the query node's steps: two micro-batches
    assert len(runtime.step_times) == 2
