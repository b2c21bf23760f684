"""Spark on the emulated network: executors run inside the hosts, traffic crosses links."""
import os

import networkx as nx
import pytest

from emulator.mininet.emulation import Emulation, LinkSetting, next_hops
from emulator.mininet.spark_cluster import SparkCluster

pytestmark = [pytest.mark.mininet, pytest.mark.spark, pytest.mark.slow]


def test_spark_tasks_run_in_a_worker_host_and_cross_the_emulated_links(monkeypatch):
    monkeypatch.setenv("PYSPARK_PYTHON", os.environ.get("PYSPARK_PYTHON",
                                                        "/tmp/venv0/bin/python"))
    g = nx.path_graph(3)
    paths = {(u, v): nx.shortest_path(g, u, v) for u in g for v in g if u != v}
    with Emulation(g.nodes, g.edges, time_scale=1.0, seed=1) as em:
        em.apply({(u, v): LinkSetting(delay=0.002) for u in g for v in g if abs(u - v) == 1},
                 next_hops(paths))
        before = em.tx_bytes()
        with SparkCluster(em, master=0, workers=[2]) as cluster:
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
