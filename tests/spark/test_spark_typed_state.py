"""Typed Spark state: a node's buffered tuples are rows of Spark state, a step writes only
the rows it changed, and the rows alone carry a run (every program rebuilt from them at
every step gives the in-process run)."""
import pytest

from experiments.runner import run

pytestmark = [pytest.mark.spark, pytest.mark.slow]

# The centralized join: sources forward each tuple at once (nothing stays buffered), the
# query node buffers every tuple it receives and expires it one time unit past its window.
# One micro-batch per step (no run-ahead) and a memory sample at every step's end, so
# Spark's rows and the buffered tuples are compared at the same instants.
SPEC = {"run": {"name": "typed_state", "seed": 3, "duration": 4.0, "step": 0.5,
                "drain": 1.0, "memory_interval": 0.5, "run_ahead": False,
                "spark_master": "local[2]"},
        "topology": {"generator": "complete", "nodes": 5, "cost_range": [1, 3],
                     "delay": 0.5},
        "streams": {"count": 3, "rate": 4.0, "key_domain": 3},
        "query": {"node": 0, "predicate": "equality", "window": 0.5},
        "algorithm": {"name": "centralized"},
        "params": {"centralized": {"retention": 0.5}}}


@pytest.fixture(scope="module")
def spark():
    from spark_nodes.runtimes.session import build_session

    return build_session("local[2]", partitions=1)


def spec(runtime: str, algorithm: str = "centralized") -> dict:
    out = {k: dict(v) for k, v in SPEC.items()}
    out["run"]["runtime"] = runtime
    if algorithm != "centralized":      # QJoin joins two streams, with its own params
        out["algorithm"] = {"name": algorithm}
        out["streams"]["count"] = 2
        del out["params"]
    return out


def state_beside_buffers(result):
    """Spark's state metrics per micro-batch joined with the tuples the programs
    buffered at the same instants (memory samples)."""
    metrics = result.metrics
    state = metrics[metrics.source == "spark"].pivot(index="time", columns="metric",
                                                      values="value")
    buffered = (metrics[(metrics.source == "testbed") & (metrics.metric == "tuples")]
                .groupby("time").value.sum())
    return state.join(buffered.rename("buffered"), how="inner")


def test_rows_alone_carry_the_run_and_count_every_buffered_tuple(spark, tmp_path,
                                                                  monkeypatch):
    import pandas as pd

    inproc = run(spec("inproc"), out=tmp_path)
    monkeypatch.setenv("TESTBED_SPARK_REBUILD", "1")     # no program kept in a worker
    on_spark = run(spec("spark"), out=tmp_path)
    pd.testing.assert_frame_equal(on_spark.ledger, inproc.ledger)
    pd.testing.assert_frame_equal(on_spark.results, inproc.results)
    assert len(inproc.results) > 0

    both = state_beside_buffers(on_spark)
    assert len(both) >= 5 and both.buffered.max() > 5
    # a row per buffered tuple, and the same few value rows (node, scalars, net) of
    # each node beside them: no row outlives its tuple
    assert (both.state_rows >= both.buffered).all(), both
    assert (both.state_rows - both.buffered).nunique() == 1, both

    # What a step writes: each tuple once when the query node buffers it, once when it
    # expires; never the whole buffer again.
    data = on_spark.ledger[(on_spark.ledger.kind == "data") & (on_spark.ledger.hop_v == 0)]
    arrived = int((~data.lost).sum())
    summary = on_spark.summary
    assert summary["spark_state_upserts"] == arrived
    assert 0 < summary["spark_state_removals"] <= arrived
    assert summary["spark_state_upserts"] - summary["spark_state_removals"] == \
        both.buffered.iloc[-1]


def test_qjoin_buffers_are_rows(spark, tmp_path):
    """QJoin's live tuples are rows of Spark state at every sample (by default: the
    Python workers keep their programs between steps)."""
    import pandas as pd

    inproc = run(spec("inproc", "qjoin"), out=tmp_path)
    on_spark = run(spec("spark", "qjoin"), out=tmp_path)
    pd.testing.assert_frame_equal(on_spark.results, inproc.results)
    both = state_beside_buffers(on_spark)
    assert len(both) >= 5 and both.buffered.max() > 5
    assert (both.state_rows >= both.buffered).all(), both
    assert on_spark.summary["spark_state_upserts"] > 0
    assert on_spark.summary["spark_state_removals"] > 0
