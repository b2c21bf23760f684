"""Spark's built-in stream-stream join on an arrival sequence (real local Spark)."""
import math
import os
import sys

import numpy as np
import pytest

from spark_nodes.algorithms.qjoin.operator import join_arrivals

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture(scope="module")
def spark():
    """One embedded session for the module (its start dominates the run time)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from spark_nodes.runtimes.session import build_session

    return build_session("local[1]")


def _data(n=120, seed=5, delay=0.3):
    rng = np.random.default_rng(seed)
    side = rng.integers(0, 2, n).astype(np.int8)
    ts = np.sort(rng.uniform(0, 6, n))
    time = ts + rng.exponential(delay, n)
    o = np.argsort(time, kind="stable")
    return side[o], ts[o], time[o], rng.integers(0, 3, n)[o], rng.uniform(0, 10, n)[o], \
        rng.uniform(0, 10, n)[o]


def _pairs(later, earlier, side):
    return {(min(a, b) if side[min(a, b)] == 0 else max(a, b),
             max(a, b) if side[min(a, b)] == 0 else min(a, b))
            for a, b in zip(later.tolist(), earlier.tolist())}


# The watermark tests in the full suite: make test keeps the baseline's pass over a run
# (the last test), the same query over a run's arrivals.
@pytest.mark.full_suite
def test_generous_watermark_equals_unbounded_join(spark):
    from spark_nodes.algorithms.qjoin.spark_join import spark_stream_join

    side, ts, time, key, x, y = _data()
    res, ends, state = spark_stream_join(side, ts, time, 0.5, "equality", key=key,
                                         watermark=30.0, trigger=2.0, spark=spark)
    later, earlier = join_arrivals(side, ts, 0.5, key=key, allowance_r=math.inf,
                                   allowance_s=math.inf)
    assert {(int(r), int(s)) for r, s, _ in res} == _pairs(later, earlier, side)
    # a result is emitted at the end of the batch holding its later member
    arrived = np.maximum(time[res[:, 0]], time[res[:, 1]])
    emitted = np.array(ends)[res[:, 2]]
    assert np.all(emitted >= arrived) and np.all(emitted - arrived <= 2.0 + 1e-9)
    # nothing is behind a 30 s watermark: Spark's state holds every row at the end
    assert len(state) == len(ends) and state[-1][1] == len(ts)

    res_d, _, _ = spark_stream_join(side, ts, time, 0.5, "distance", x=x, y=y, theta=3.0,
                                    watermark=30.0, trigger=2.0, spark=spark)
    later, earlier = join_arrivals(side, ts, 0.5, "distance", x=x, y=y, theta=3.0,
                                   allowance_r=math.inf, allowance_s=math.inf)
    assert {(int(r), int(s)) for r, s, _ in res_d} == _pairs(later, earlier, side)


@pytest.mark.full_suite
def test_tight_watermark_drops_late_results(spark):
    from spark_nodes.algorithms.qjoin.spark_join import spark_stream_join

    side, ts, time, key, x, y = _data(delay=1.0)
    res, _, state = spark_stream_join(side, ts, time, 0.5, "equality", key=key,
                                      watermark=0.0, trigger=2.0, spark=spark)
    later, _ = join_arrivals(side, ts, 0.5, key=key, allowance_r=math.inf,
                             allowance_s=math.inf)
    assert 0 < len(res) < len(later)
    # state is cleaned up behind the watermark: far fewer rows than the 30 s watermark
    assert max(s[1] for s in state) < 0.6 * len(ts)


def test_spark_join_pass_emits_at_batch_ends(spark, tmp_path):
    """The join node records its arrivals; the pass joins them and emits at batch ends,
    keeping its scratch files under the given folder and removing nothing else."""
    import pandas as pd

    from contract.messages import Message
    from contract.program import DELIVER, FINISH, START, Event, run_node_step
    from spark_nodes.algorithms.qjoin.spark_join import ARRIVALS, SparkJoinNode, join_pass
    from spark_nodes.workload.tuples import StreamTuple
    from experiments.planning import make_plan

    side, ts, time, key, _, _ = _data(n=60)
    tups = [StreamTuple("RS"[s], i, float(t), int(k), None, None, 0, 1.0, float(t))
            for i, (s, t, k) in enumerate(zip(side, ts, key))]
    events = [Event(0.0, 0, START, None)]
    events += [Event(float(a), i + 1, DELIVER, Message(i, "data", 0, 9, 0.0, 1.0, 56, t))
               for i, (a, t) in enumerate(zip(time, tups))]
    events.append(Event(20.0, 999, FINISH, None))
    node = SparkJoinNode(("R", "S"))
    out = run_node_step(node, 9, events, 0.0, 21.0, None, seed=1, algorithm="spark-join")
    assert out.results == [] and node.memory() == (0, 0)
    arrivals = pd.DataFrame([row for table, row in out.traces if table == ARRIVALS])
    assert arrivals["seq"].tolist() == list(range(len(tups)))
    plan = make_plan(streams=dict.fromkeys("RS", 0), windows=0.5, duration=20.0,
                     algorithm="spark-join", params={"watermark": 30.0, "trigger": 4.0,
                                                     "master": "local[1]", "cache": False})
    scratch = tmp_path / "scratch"
    results, metrics, blob = join_pass(plan, arrivals, None, scratch)
    later, earlier = join_arrivals(side, ts, 0.5, key=key, allowance_r=math.inf,
                                   allowance_s=math.inf)
    want = {"|".join(sorted(f"{tups[j].stream}:{j}" for j in (a, b)))
            for a, b in zip(later.tolist(), earlier.tolist())}
    assert {r["group"] for r in results} == want
    assert {r["emitted_at"] for r in results} <= {4.0, 8.0, 12.0}
    assert {r["node"] for r in results} == {9}
    rows = [m for m in metrics if m[3] == "spark_state_rows"]
    assert rows and rows[-1][4] == len(tups)
    assert scratch.is_dir() and not any(scratch.iterdir())   # its query's files are gone
    # The output file answers the same input again (cache) without Spark.
    previous = tmp_path / "spark_join.npz"
    previous.write_bytes(blob)
    plan.params["cache"] = True
    again = join_pass(plan, arrivals, previous, tmp_path / "unused")
    assert again[0] == results and again[1] == metrics
    assert not (tmp_path / "unused").exists()
