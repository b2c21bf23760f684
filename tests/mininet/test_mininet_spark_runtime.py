"""The spark runtime with its executors on emulated nodes gives the in-process results."""
import os
import sys

import pandas as pd
import pytest

import experiments
from .mininet_specs import smoke_spec

pytestmark = [pytest.mark.mininet, pytest.mark.spark, pytest.mark.slow]


def test_spark_runtime_on_an_emulated_cluster_equals_inproc(tmp_path, monkeypatch):
    monkeypatch.setenv("PYSPARK_PYTHON", os.environ.get("PYSPARK_PYTHON", sys.executable))
    spec = smoke_spec(**{"run.backend": "simpy", "run.duration": 1.0,
                         "algorithm.name": "centralized"})
    spec["mininet"] = {"spark_master": 0, "spark_workers": [4]}
    on_cluster = experiments.run(spec, out=tmp_path, runtime="spark")
    reference = experiments.run(spec, out=tmp_path, runtime="inproc")
    meta = pd.read_json(on_cluster.path / "meta.json", typ="series")
    assert meta["backend_info"]["spark_cluster"] == {"master": 0, "workers": [4]}
    assert on_cluster.summary["results"] == reference.summary["results"] > 0
    pd.testing.assert_frame_equal(on_cluster.results, reference.results)
    pd.testing.assert_frame_equal(on_cluster.ledger, reference.ledger)
