"""Contract: every registered operator gives the same results, ledger, metrics and summary
on ``--runtime spark`` as on ``--runtime inproc`` for the same spec and seed."""
import copy
import math

import pandas as pd
import pytest

from experiments.runner import run
from spark_nodes.algorithms import registry

pytestmark = [pytest.mark.spark, pytest.mark.slow]

#: Operators whose programs cannot run inside a Spark task, and why (none today: the
#: spark-join baseline's own Spark query runs in the driver after the run).
EXCLUDED: dict[str, str] = {}
#: Three operators run in ``make test``: SMJ's (a synopsis centre and its plans), QJoin's
#: (typed buffers) and the enrichment model's (a cache and a table's queue), the
#: families whose programs keep the most state of their own; the others (ATR and CTR,
#: the centralized baseline, the same families' other policies) in the full suite
#: (``make test-full``, CI), each Spark run being tens of seconds on two cores.
IN_MAKE_TEST = {"smj-h", "qjoin", "enrich-predicted"}

# Few steps (step = link delay = 0.5, 3 + 1 time units) keep the Spark side short; rates
# and key domain are chosen so that every family exchanges data and most emit results.
BASE = {"run": {"name": "equivalence", "seed": 7, "duration": 3.0, "step": 0.5, "drain": 1.0,
                "memory_interval": 0.5, "spark_master": "local[2]"},
        "topology": {"generator": "complete", "nodes": 6, "cost_range": [1, 5], "delay": 0.5},
        "streams": {"count": 3, "rate": 5.0, "key_domain": 4},
        "query": {"node": 0, "predicate": "equality", "window": 1.0}}
FAMILY_PARAMS = {"smj": {"period": 0.5, "grace": 0.5}}
#: Summary keys that legitimately differ between runtimes.
RUNTIME_KEYS = {"wall_seconds", "spark_state_rows_peak", "spark_state_bytes_peak",
                "spark_state_bytes_mean"}
#: Metrics that are Spark's own memory accounting (RocksDB's memory use varies between
#: two runs of the same query): compared by time and sign only.
SPARK_MEASURED = ("spark_state_bytes",)


def spec_for(name: str, runtime: str) -> dict:
    algorithm = registry.ALGORITHMS.get(name)
    spec = copy.deepcopy(BASE)
    spec["run"]["runtime"] = runtime
    spec["algorithm"] = {"name": name}
    if algorithm.family in FAMILY_PARAMS:
        spec["params"] = {name: dict(FAMILY_PARAMS[algorithm.family])}
    if algorithm.family == "qjoin":   # the QJoin family joins two streams
        spec["streams"]["count"] = 2
    return spec


def operator_names():
    """Every registered operator, those outside :data:`IN_MAKE_TEST` marked full_suite."""
    params = []
    for name in registry.ALGORITHMS.names():
        marks = [] if name in IN_MAKE_TEST else [pytest.mark.full_suite]
        if name in EXCLUDED:
            marks.append(pytest.mark.skip(reason=EXCLUDED[name]))
        params.append(pytest.param(name, marks=marks))
    return params


@pytest.fixture(scope="module")
def spark():
    from spark_nodes.runtimes.session import build_session

    # One state partition: a micro-batch then runs one stateful task (one state store to
    # open and commit) instead of two, much of a small micro-batch's cost; results do
    # not depend on it (each node's state is its own), and
    # tests/spark/test_spark_runtime_steps.py checks a run over two partitions.
    return build_session("local[2]", partitions=1)


@pytest.fixture(autouse=True)
def rebuild_every_step(monkeypatch):
    """Every program is rebuilt from its Spark state rows at every step (no worker keeps
    one), so equality shows that the typed state alone carries each operator."""
    monkeypatch.setenv("TESTBED_SPARK_REBUILD", "1")


@pytest.mark.parametrize("name", operator_names())
def test_spark_runtime_equals_inproc(name, spark, tmp_path):
    inproc = run(spec_for(name, "inproc"), out=tmp_path)
    on_spark = run(spec_for(name, "spark"), out=tmp_path)
    assert on_spark.run_id != inproc.run_id
    assert len(inproc.ledger) > 0, "the spec must make the operator use the network"
    pd.testing.assert_frame_equal(on_spark.ledger, inproc.ledger)
    pd.testing.assert_frame_equal(on_spark.results, inproc.results)
    pd.testing.assert_frame_equal(on_spark.expected, inproc.expected)
    spark_metrics = on_spark.metrics
    ours = spark_metrics[spark_metrics.source != "spark"].reset_index(drop=True)
    measured = ours.metric.isin(SPARK_MEASURED)
    pd.testing.assert_frame_equal(ours[~measured], inproc.metrics[~measured])
    pd.testing.assert_frame_equal(ours[measured].drop(columns="value"),
                                  inproc.metrics[measured].drop(columns="value"))
    assert (ours[measured].value >= 0).all() and (inproc.metrics[measured].value >= 0).all()
    state = spark_metrics[spark_metrics.source == "spark"]
    assert set(state.metric) == {"state_rows", "state_bytes", "state_upserts",
                                 "state_removals"}
    assert (state[state.metric == "state_rows"].value > 0).all()
    same = {k: v for k, v in inproc.summary.items() if k not in RUNTIME_KEYS}
    got = {k: on_spark.summary[k] for k in same}
    assert nan_equal(got) == nan_equal(same)
    if name == "spark-join":   # its Spark pass keeps its output in the run folder only
        assert (on_spark.path / "spark_join.npz").is_file()
        assert not list(tmp_path.glob(".tmp-*"))


def nan_equal(summary: dict) -> dict:
    """NaN (e.g. the latency of a run without results) made comparable to NaN."""
    return {k: "nan" if isinstance(v, float) and math.isnan(v) else v for k, v in summary.items()}


@pytest.mark.full_suite   # the backend's own deaths and losses: the radio test below
def test_spark_runtime_equals_inproc_under_aodv(spark, tmp_path):
    """The routing protocol lives in the backend: a run whose messages wait for AODV's
    route discoveries, whose losses reach senders by notices, is the same on Spark."""
    def spec(runtime):
        s = spec_for("centralized", runtime)
        s["topology"] = {"generator": "random_geometric", "nodes": 8, "radius": 0.5,
                         "delay": 0.5}
        s["network"] = {"routing": "aodv"}
        return s

    inproc = run(spec("inproc"), out=tmp_path)
    on_spark = run(spec("spark"), out=tmp_path)
    assert inproc.summary["routing_control_messages"] > 0
    assert inproc.summary["route_discovery_latency_mean"] > 0
    assert_same_run(on_spark, inproc)


def assert_same_run(on_spark, inproc) -> None:
    """Ledger, results, the testbed's and the network's metrics and the summary equal
    (Spark's own state accounting and wall times aside)."""
    pd.testing.assert_frame_equal(on_spark.ledger, inproc.ledger)
    pd.testing.assert_frame_equal(on_spark.results, inproc.results)
    ours = on_spark.metrics[on_spark.metrics.source != "spark"].reset_index(drop=True)
    measured = ours.metric.isin(SPARK_MEASURED)
    pd.testing.assert_frame_equal(ours[~measured], inproc.metrics[~measured])
    same = {k: v for k, v in inproc.summary.items() if k not in RUNTIME_KEYS}
    assert nan_equal({k: on_spark.summary[k] for k in same}) == nan_equal(same)


def test_spark_runtime_equals_inproc_on_a_radio_with_batteries(spark, tmp_path):
    """Log-distance radio (loss by distance and frame size) and batteries that run out:
    the deaths are the backend's, the operators' work is charged by the driver, so a
    run whose relays die is the same on Spark."""
    def spec(runtime):
        s = spec_for("centralized", runtime)
        s["topology"] = {"generator": "random_geometric", "nodes": 8, "radius": 0.5,
                         "delay": 0.5}
        s["radio"] = {"model": "log_distance", "meters_per_unit": 300.0}
        s["energy"] = {"model": "first_order", "battery_j": 0.004, "idle_w": 0.001,
                       "cpu_j_per_tuple": 2e-5}
        return s

    inproc = run(spec("inproc"), out=tmp_path)
    on_spark = run(spec("spark"), out=tmp_path)
    assert inproc.summary["nodes_dead_at_end"] > 0
    assert inproc.summary["first_node_death"] < 3.0   # inside the run: it shapes results
    assert_same_run(on_spark, inproc)
