"""Contract: SMJ plan lookups and CTR route lookups give the same results, ledger,
metrics and summary on ``--runtime spark`` as in-process (the caches, waiting blocks
and requests in flight live in the node programs, hence in Spark state)."""
from __future__ import annotations

import copy

import pandas as pd
import pytest

from experiments.runner import run
from tests.spark.test_spark_equivalence import BASE, RUNTIME_KEYS, nan_equal

pytestmark = [pytest.mark.spark, pytest.mark.slow]

#: One fetching run per family on the equivalence test's small network.
LOOKUPS = {
    "smj-h": {"period": 0.5, "grace": 0.5, "plan": "lookup", "plan_fetch": "eager",
              "plan_ttl": 0.75},
    "ctr": {"routes": "lookup"},
}


@pytest.fixture(scope="module")
def spark():
    from spark_nodes.runtimes.session import build_session

    # One state partition: a micro-batch then runs one stateful task (one state store to
    # open and commit) instead of two, much of a small micro-batch's cost; results do
    # not depend on it (each node's state is its own), and
    # tests/spark/test_spark_runtime_steps.py checks a run over two partitions.
    return build_session("local[2]", partitions=1)


def spec_for(name: str, runtime: str) -> dict:
    spec = copy.deepcopy(BASE)
    spec["run"]["runtime"] = runtime
    spec["run"]["drain"] = 4.0           # time for replies and the blocks that waited
    spec["algorithm"] = {"name": name}
    spec["params"] = {name: dict(LOOKUPS[name])}
    return spec


# In the full suite (make test-full, CI), as the enrichment model's lookups below: make
# test keeps the enrichment model on Spark in the contract suite.
@pytest.mark.full_suite
@pytest.mark.parametrize("name", ["smj-h", "ctr"])
def test_lookup_runs_on_spark_equal_inproc(name, spark, tmp_path):
    inproc = run(spec_for(name, "inproc"), out=tmp_path)
    on_spark = run(spec_for(name, "spark"), out=tmp_path)
    fetched = inproc.summary["lookups"] + inproc.summary["prefetches"]
    assert fetched > 0 and inproc.summary["results"] > 0, "the spec must fetch and join"
    pd.testing.assert_frame_equal(on_spark.ledger, inproc.ledger)
    pd.testing.assert_frame_equal(on_spark.results, inproc.results)
    ours = on_spark.metrics[on_spark.metrics.source != "spark"].reset_index(drop=True)
    pd.testing.assert_frame_equal(ours, inproc.metrics)
    same = {k: v for k, v in inproc.summary.items() if k not in RUNTIME_KEYS}
    assert nan_equal({k: on_spark.summary[k] for k in same}) == nan_equal(same)


#: The enrichment model's parts that keep state in the node programs (issue 29): a
#: bounded cache, a table's queue and the rows it sent (for invalidation), the
#: in-order buffer, the oracle's per-tuple waits.
ENRICH = {"table": {"service_time": 0.3, "update_rate": 1.0, "invalidate": True}}


# In the full suite too: make test keeps the enrichment model on Spark in the contract
# suite (tests/spark/test_spark_equivalence.py, enrich-predicted).
@pytest.mark.full_suite
@pytest.mark.parametrize("name", ["enrich-on-demand", "enrich-oracle"])
def test_the_enrichment_model_on_spark_equals_inproc(name, spark, tmp_path):
    def spec(runtime: str) -> dict:
        s = copy.deepcopy(BASE)
        s["run"]["runtime"] = runtime
        s["run"]["drain"] = 4.0
        s["algorithm"] = {"name": name}
        s["params"] = {name: {"cache_rows": 2, "cache_ttl": 1.5}}
        s["enrich"] = copy.deepcopy(ENRICH)
        return s

    inproc = run(spec("inproc"), out=tmp_path)
    on_spark = run(spec("spark"), out=tmp_path)
    s = inproc.summary
    assert s["cache_evictions"] > 0 and s["updates_pushed"] > 0 and s["table_wait_mean"] > 0
    pd.testing.assert_frame_equal(on_spark.ledger, inproc.ledger)
    pd.testing.assert_frame_equal(on_spark.results, inproc.results)
    ours = on_spark.metrics[on_spark.metrics.source != "spark"].reset_index(drop=True)
    pd.testing.assert_frame_equal(ours, inproc.metrics)
    same = {k: v for k, v in s.items() if k not in RUNTIME_KEYS}
    assert nan_equal({k: on_spark.summary[k] for k in same}) == nan_equal(same)
