"""The spark runtime with its executors on emulated nodes gives the in-process results,
and Spark's own traffic crosses the emulated links.

One emulated cluster (master, worker and executor JVMs) serves every check: on a slow
machine each JVM start costs minutes."""
import os
import sys

import pandas as pd
import pytest

import experiments
from emulator.mininet.naming import all_pids, process_argv
from .mininet_specs import smoke_spec

#: The JVM option that marks an emulated run's Java processes (``Names.java_marker``).
JAVA_MARK = "-Dadhoc.testbed.run="

# In the full suite (an emulated cluster of three JVMs, 90 s): make test keeps the spark
# runtime on a standalone cluster and the Mininet runs of every family.
pytestmark = [pytest.mark.mininet, pytest.mark.spark, pytest.mark.slow,
              pytest.mark.full_suite]


def test_spark_runtime_on_an_emulated_cluster_equals_inproc(tmp_path, monkeypatch):
    monkeypatch.setenv("PYSPARK_PYTHON", os.environ.get("PYSPARK_PYTHON", sys.executable))
    spec = smoke_spec(**{"run.backend": "simpy", "run.duration": 1.0,
                         "algorithm.name": "centralized"})
    spec["mininet"] = {"spark_master": 0, "spark_workers": [4]}
    on_cluster = experiments.run(spec, out=tmp_path, runtime="spark")
    reference = experiments.run(spec, out=tmp_path, runtime="inproc")
    meta = pd.read_json(on_cluster.path / "meta.json", typ="series")
    cluster = meta["backend_info"]["spark_cluster"]
    assert (cluster["master"], cluster["workers"]) == (0, [4])
    # the node programs ran in the executor the worker host started, bound to its address
    assert cluster["executor_nodes"] == [4]
    partitions = meta["backend_info"]["spark_state_partitions"]
    assert partitions and all("driver" not in ids for ids in partitions.values())
    # driver (root namespace, behind node 0) <-> executor (node 4): both ends sent over
    # emulated links
    sent = {node: sum(b for link, b in cluster["link_bytes"].items()
                      if link.split("-")[0] == str(node)) for node in (0, 4)}
    assert sent[0] > 10_000 and sent[4] > 10_000, cluster["link_bytes"]
    # the daemons and the executor are gone with the run
    assert [p for p in all_pids() if any(a.startswith(JAVA_MARK) for a in
                                         (process_argv(p) or []))] == []
    assert on_cluster.summary["results"] == reference.summary["results"] > 0
    pd.testing.assert_frame_equal(on_cluster.results, reference.results)
    pd.testing.assert_frame_equal(on_cluster.ledger, reference.ledger)
