"""A real Spark standalone cluster on loopback: master and workers started from the
installed pyspark's ``bin/spark-class`` as local processes and stopped by pid."""
import pytest

from .standalone_cluster import Standalone


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    cluster = Standalone(tmp_path_factory.mktemp("standalone"))
    try:
        cluster.start_master()
        cluster.start_worker(cores=1)
        yield cluster
    finally:
        cluster.stop()
