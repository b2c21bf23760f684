"""A real Spark standalone cluster on loopback: a master started from the installed
pyspark's ``bin/spark-class`` as a local process, workers started by the tests that need
them, all stopped by pid."""
import pytest

from .standalone_cluster import Standalone


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    cluster = Standalone(tmp_path_factory.mktemp("standalone"))
    try:
        cluster.start_master()
        yield cluster
    finally:
        cluster.stop()
