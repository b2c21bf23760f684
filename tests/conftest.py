"""Suite-wide set-up: a fixed Hypothesis profile on CI; the Spark and Mininet tests kept
in one worker when the suite runs in parallel; each test module gets a fresh Spark world.

``make test`` runs ``pytest -n N --dist loadgroup`` (pytest-xdist, two workers per core: a
third of the suite's time is spent waiting on JVMs and on Mininet's real time, which a
second worker per core fills). The tests that start JVMs or networks form xdist groups,
each run whole by one worker in collection order (:func:`xdist_group`): two Spark groups
``spark-0`` and ``spark-1`` (local sessions: one py4j gateway JVM serves a group, and a
second session in a process starts in seconds where a first can take minutes on a slow
machine; the Spark modules alternate between the two in collection order, as one group
they were the suite's longest path), ``cluster`` (Spark daemons or a driver in a fresh
process) and ``mininet`` (one emulated network at a time). The pure-Python test modules
fill the workers around them.

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


#: Local Spark sessions in parallel: the Spark modules alternate between this many groups.
SPARK_GROUPS = 2

#: The Spark modules in the order they were collected (the same order in every worker).
_spark_modules: dict[str, int] = {}


def xdist_group(item) -> str | None:
    """The xdist group of a test that starts JVMs or networks (None: any worker)."""
    for marker in ("mininet", "cluster", "spark"):   # first match wins
        if item.get_closest_marker(marker):
            if marker == "spark":
                module = item.nodeid.split("::")[0]
                rank = _spark_modules.setdefault(module, len(_spark_modules))
                return f"spark-{rank % SPARK_GROUPS}"
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
