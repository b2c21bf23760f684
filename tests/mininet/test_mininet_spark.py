"""Spark on the emulated network: executors run inside the hosts, traffic crosses links."""
import os
import sys

import pytest

from emulator.mininet.options import MininetOptions
from emulator.mininet.spark_cluster import emulated_spark
from emulator.network import Network
from experiments.plan import Plan, QuerySpec
from topologies import line, static_dynamics

pytestmark = [pytest.mark.mininet, pytest.mark.spark, pytest.mark.slow]


def line_plan(n):
    topo = line(n, defaults={"delay": 0.002})
    dyn = static_dynamics(topo)
    return Plan(name="spark-line", seed=1, duration=1.0, step=0.002, backend="mininet",
                runtime="spark", memory_interval=1.0, bytes_per_unit=32, header_bytes=24,
                synopsis_unit=0.25, topology=topo, dynamics=dyn, streams=(),
                query=QuerySpec(0, "equality", None, {}), algorithm="none", params={},
                net0=Network(dyn).view(0.0), spec={"run": {"drain": None}})


def test_spark_tasks_run_in_a_worker_host_and_cross_the_emulated_links(monkeypatch):
    monkeypatch.setenv("PYSPARK_PYTHON", os.environ.get("PYSPARK_PYTHON",
                                                        sys.executable))
    options = MininetOptions.from_table({"spark_master": 0, "spark_workers": [2]})
    with emulated_spark(line_plan(3), options) as cluster:
        em = cluster.em
        before = em.tx_bytes()
        spark = cluster.session()
        try:
            where = (spark.sparkContext.parallelize(range(4), 2)
                     .map(lambda _: __import__("os").readlink("/proc/self/ns/net"))
                     .distinct().collect())
        finally:
            spark.stop()
        assert cluster.java_processes()                 # the daemons, marked
        after = em.tx_bytes()
        worker_ns = os.readlink(f"/proc/{em.hosts[2].pid}/ns/net")
        assert where == [worker_ns]
        # Driver (root, behind node 0) <-> executor (node 2): both hops carried it.
        assert after[(0, 1)] - before[(0, 1)] > 10_000
        assert after[(2, 1)] - before[(2, 1)] > 10_000
    assert cluster.java_processes() == []


def test_spark_options_are_checked():
    with pytest.raises(ValueError, match="mininet.spark_workers"):
        MininetOptions.from_table({"spark_workers": [1]})


def test_a_spark_runtime_on_the_mininet_backend_is_refused_not_ignored():
    from emulator import mininet
    from spark_nodes.runtime_spark import SparkRuntime

    with pytest.raises(ValueError, match="run.runtime: the mininet backend runs node "
                                         "programs in its agents"):
        mininet.run(line_plan(3), {}, {}, SparkRuntime(master="local[1]"))
