"""Suite-wide set-up: a fixed Hypothesis profile on CI; the Spark and Mininet tests kept
in one worker when the suite runs in parallel; each test module gets a fresh Spark world.

``make test`` runs ``pytest -n auto --dist loadgroup`` (pytest-xdist, a worker per core).
The tests that start JVMs or networks form three xdist groups, each run whole by one
worker in collection order (:func:`xdist_group`): ``spark`` (local sessions: one py4j
gateway JVM serves the group, and a second session in a process starts in seconds where a
first can take minutes on a slow machine), ``cluster`` (Spark daemons or a driver in a
fresh process) and ``mininet`` (one emulated network at a time). The pure-Python test
modules fill the workers around them.

Several modules start their own SparkSession (different masters, different settings);
one left running would be reused, or refused, by the next module. Stopping any active
session after every module keeps the modules independent of their order.
"""
import os
import sys

import pytest
from hypothesis import settings

# CI replays the same property-test examples every run (a red CI is then reproducible);
# local runs keep drawing new ones and may find what CI does not.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

# Spark's Python workers must run this interpreter (the project's virtual environment).
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def xdist_group(item) -> str | None:
    """The xdist group of a test that starts JVMs or networks (None: any worker)."""
    for marker in ("mininet", "cluster", "spark"):   # first match wins
        if item.get_closest_marker(marker):
            return marker
    return None


def pytest_itemcollected(item):
    # Marked as each test is collected, before any pytest_collection_modifyitems: xdist
    # reads the groups in its own.
    group = xdist_group(item)
    if group is not None and item.config.pluginmanager.hasplugin("xdist"):
        item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(autouse=True, scope="module")
def _stop_spark_after_module():
    yield
    if "pyspark.sql" in sys.modules:   # else Spark never started: leave it unloaded
        from spark_nodes.runtimes.session import stop_active_session

        stop_active_session()
