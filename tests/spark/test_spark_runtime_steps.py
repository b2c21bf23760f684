"""The spark runtime's plumbing: step by step it equals the in-process runtime.

A small script of tuples, deliveries and timers drives both runtimes (each from its own
outputs); every step's StepOutput must be equal node by node, including generator state
and message numbering, across a node that skips steps and a topology epoch change.
"""
import copy
import sys

import pytest
from pyspark import cloudpickle

from contract.messages import Message
from contract.program import DELIVER, START, TIMER, TUPLE, Event, NodeProgram
from contract.state import StateList
from spark_nodes.runtimes.inproc import InprocRuntime
from spark_nodes.runtimes.spark import STATE_BYTES, STATE_ROWS, SparkRuntime, state_summary
from spark_nodes.workload.tuples import StreamTuple
from experiments.planning import make_plan

pytestmark = pytest.mark.spark

# Executors cannot import this test module: its classes travel by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

STEP = 0.01


class FakeNet:
    """Stands in for a NetView: picklable, with an epoch."""

    def __init__(self, epoch_start, label):
        self.epoch_start = epoch_start
        self.label = label


class Gossip(NodeProgram):
    """Buffers tuples, forwards some (random), delivers to itself, ticks on a timer."""

    def __init__(self, peer):
        self.peer = peer
        self.buffer = StateList(rows="tuple")   # a state row per tuple on Spark

    def start(self, ctx):
        ctx.set_timer(0.025, "tick")

    def on_tuple(self, ctx, tup):
        self.buffer.append(tup)
        if ctx.rng.random() < 0.6:
            ctx.send(self.peer, "data", tup, 1.0)
        ctx.send(ctx.node, "control", tup.seq, 0.0)

    def on_message(self, ctx, msg):
        if msg.kind == "data":
            ctx.emit((msg.payload,), via=msg.src, label=ctx.net.label)
        else:
            ctx.record("local", msg.payload)

    def on_timer(self, ctx, tag):
        ctx.record("buffered", len(self.buffer))
        ctx.set_timer(ctx.now + 0.025, tag)

    def memory(self):
        return (len(self.buffer), 40 * len(self.buffer))


class Exploding(NodeProgram):
    def on_tuple(self, ctx, tup):
        raise ValueError(f"boom at {ctx.now}")


#: what a runtime reads of a plan (the script builds no network)
PLAN = make_plan(seed=11, algorithm="gossip")


def programs():
    return {1: Gossip(2), 2: Gossip(1), 3: Gossip(1)}


def tuples_for(step):
    """Node 1 and 2 get a tuple every step; node 3 only every third step."""
    out = {}
    for node in (1, 2, 3):
        if node == 3 and step % 3:
            continue
        ts = step * STEP + 0.001 * node
        out[node] = [StreamTuple(f"R{node}", step, ts, step % 4, None, None, node,
                                 entered_at=ts)]
    return out


def drive(runtime, steps=7):
    """A miniature driver: tuples from the script, deliveries and timers from outputs."""
    runtime.open(PLAN, programs())
    pending = []   # (time, node, kind, payload)
    msg_id = 0
    history = []
    for step in range(steps):
        t0, t1 = step * STEP, (step + 1) * STEP
        net = FakeNet(0.0 if step < 4 else 0.04, "before" if step < 4 else "after")
        events, order = {}, 0
        if step == 0:
            for node in programs():
                events.setdefault(node, []).append(Event(0.0, order, START, None))
                order += 1
        for node, tups in tuples_for(step).items():
            for tup in tups:
                events.setdefault(node, []).append(Event(tup.ts, order, TUPLE, tup))
                order += 1
        due = [p for p in pending if p[0] < t1]
        pending = [p for p in pending if p[0] >= t1]
        for at, node, kind, payload in due:
            events.setdefault(node, []).append(Event(at, order, kind, payload))
            order += 1
        outputs = runtime.run_step(t0, t1, events, net)
        history.append(outputs)
        for node in sorted(outputs):
            for at, tag in outputs[node].timers:
                pending.append((at, node, TIMER, tag))
            for m in outputs[node].messages:
                msg_id += 1
                pending.append((m.sent_at + 1.5 * STEP, m.dst, DELIVER,
                                Message(msg_id, m.kind, m.src, m.dst, m.sent_at, m.size_units,
                                        56, m.payload)))
    return history, runtime.close()


@pytest.fixture(scope="module")
def spark():
    from spark_nodes.runtimes.session import build_session

    return build_session("local[2]", partitions=2)


@pytest.fixture(scope="module")
def both(spark):
    reference, _ = drive(InprocRuntime())
    runtime = SparkRuntime(spark=spark)
    on_spark, metric_rows = drive(runtime)
    return reference, on_spark, metric_rows, runtime


def test_every_step_equals_inproc(both):
    reference, on_spark, _, _ = both
    assert len(on_spark) == len(reference)
    for step, (ref, got) in enumerate(zip(reference, on_spark)):
        assert sorted(got) == sorted(ref), f"step {step}: nodes differ"
        for node in ref:
            assert got[node] == ref[node], f"step {step}, node {node}"


def test_the_script_exercises_state(both):
    reference, _, _, _ = both
    outs = [o for step in reference for o in step.values()]
    assert sum(len(o.results) for o in outs) > 3
    assert {r["label"] for o in outs for r in o.results} == {"before", "after"}
    assert any(m[3] == "buffered" for o in outs for m in o.metrics)
    # Node 3 skips steps yet keeps its buffer: 3 tuples by step 6.
    assert reference[6][3].memory == (3, 120)


def test_state_metrics_per_step(both):
    reference, _, rows, _ = both
    by_metric = {}
    for time, node, source, metric, value in rows:
        assert (node, source) == (-1, "spark")
        by_metric.setdefault(metric, []).append((time, value))
    assert [t for t, _ in by_metric[STATE_ROWS]] == pytest.approx(
        [(s + 1) * STEP for s in range(len(reference))])
    # Three value states (node, scalars, net) per node, three nodes, and a row for every
    # buffered tuple; a step writes only the tuples it buffered.
    memory = {}
    for step in reference:
        memory.update({node: out.memory[0] for node, out in step.items()})
    assert sum(memory.values()) == 17
    assert by_metric[STATE_ROWS][-1][1] == 3 * 3 + 17
    assert [v for _, v in by_metric["state_upserts"]] == [
        len(tuples_for(s)) for s in range(len(reference))]
    assert all(v == 0 for _, v in by_metric["state_removals"])
    assert all(v > 0 for _, v in by_metric[STATE_BYTES])
    summary = state_summary(rows)
    assert summary["spark_state_rows_peak"] == 3 * 3 + 17
    assert summary["spark_state_upserts"] == 17
    assert summary["spark_state_bytes_peak"] == max(v for _, v in by_metric[STATE_BYTES])


def test_where_the_state_partitions_ran_and_the_step_times(both):
    """Spark's status store names the executor of each state partition (local mode: the
    driver), and every step's wall time is split into its parts."""
    from spark_nodes.runtimes.spark import STEP_PARTS

    reference, _, _, runtime = both
    assert runtime.facts["spark_state_partitions"] == {"0": ["driver"], "1": ["driver"]}
    # Node i of the sorted nodes ran on partition i mod 2, as its task reported.
    assert runtime.facts["spark_node_partitions"] == {"1": 0, "2": 1, "3": 0}
    assert len(runtime.step_times) == len(reference)
    for parts in runtime.step_times:
        assert set(parts) == set(STEP_PARTS) | {"wall"}
        assert sum(parts[k] for k in STEP_PARTS) == pytest.approx(parts["wall"])
        assert parts["spark_wal"] > 0 and parts["python_steps"] > 0


def test_program_error_surfaces_with_its_message(spark):
    runtime = SparkRuntime(spark=spark)
    runtime.open(PLAN, {5: Exploding()})
    tup = StreamTuple("R1", 0, 0.003, 1, None, None, 5)
    with pytest.raises(RuntimeError, match="boom at 0.003"):
        runtime.run_step(0.0, STEP, {5: [Event(0.003, 0, TUPLE, tup)]}, FakeNet(0.0, "x"))
    runtime.close()


def test_events_for_a_node_without_program(spark):
    runtime = SparkRuntime(spark=spark)
    runtime.open(PLAN, {1: Gossip(2)})
    with pytest.raises(KeyError, match=r"nodes without a program: \[9\]"):
        runtime.run_step(0.0, STEP, {9: [Event(0.0, 0, START, None)]}, None)
    runtime.close()


def test_programs_are_not_shared_with_the_caller(spark):
    # The caller's program objects stay untouched: state lives in Spark.
    progs = programs()
    before = copy.deepcopy(progs[1].buffer)
    runtime = SparkRuntime(spark=spark)
    runtime.open(PLAN, progs)
    tup = StreamTuple("R1", 0, 0.001, 1, None, None, 1)
    out = runtime.run_step(0.0, STEP, {1: [Event(0.001, 0, TUPLE, tup)]}, FakeNet(0.0, "x"))
    runtime.close()
    assert out[1].memory == (1, 40)
    assert progs[1].buffer == before


def test_work_folder_from_the_environment_is_removed_on_close(spark, tmp_path, monkeypatch):
    monkeypatch.setenv("TESTBED_SPARK_DIR", str(tmp_path))
    runtime = SparkRuntime(spark=spark)
    runtime.open(PLAN, {1: Gossip(2)})
    made = list(tmp_path.iterdir())
    assert len(made) == 1 and made[0].name.startswith("testbed-spark-")
    assert (made[0] / "inbox").is_dir()
    runtime.close()
    assert list(tmp_path.iterdir()) == []


def test_slots_spread_nodes_as_spark_partitions_them(spark):
    """Spark's own hash of the slots puts node i of the sorted nodes on partition i mod P,
    and the Python hash equals Spark's ``hash()`` on int values of every sign."""
    from pyspark.sql import functions as F

    from spark_nodes.runtimes.partitions import balanced_slots, spark_hash_int

    values = [-2**31, -7, -1, 0, 1, 2, 41, 2**20 + 3, 2**31 - 1] + list(range(100, 400))
    frame = spark.createDataFrame([(v,) for v in values], "v int")
    assert [r.h for r in frame.select(F.hash("v").alias("h")).collect()] == [
        spark_hash_int(v) for v in values]
    nodes = [0, 3, 17, 42, 100, 101, 250, 999, 1000, 5]
    for partitions in (1, 2, 3, 7):
        slots = balanced_slots(nodes, partitions)
        assert len(set(slots.values())) == len(nodes)
        frame = spark.createDataFrame(sorted(slots.items()), "node int, slot int")
        got = frame.select("node", F.pmod(F.hash("slot"), F.lit(partitions)).alias("p"))
        assert {r.node: r.p for r in got.collect()} == {
            node: i % partitions for i, node in enumerate(sorted(nodes))}


class RestartedMidRun(SparkRuntime):
    """Stops its query before step 5 and starts it again from the checkpoint, as
    :meth:`SparkRuntime._process` does after a Python worker failed to connect back."""

    def run_step(self, t0, t1, events_by_node, net):
        if self._step == 5:
            self._query.stop()
            self._query = self._start_query()
        return super().run_step(t0, t1, events_by_node, net)


def test_a_query_started_again_from_its_checkpoint_continues_the_run(spark):
    """The state comes back from the checkpoint's changelogs alone (the session takes no
    snapshot after the first commit) and the steps still equal inproc's."""
    reference, _ = drive(InprocRuntime())
    restarted, _ = drive(RestartedMidRun(spark=spark, keep_programs=False))
    assert restarted == reference
