"""Suite-wide set-up: a fixed Hypothesis profile on CI; each test module gets a fresh
Spark world.

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


@pytest.fixture(autouse=True, scope="module")
def _stop_spark_after_module():
    yield
    if "pyspark.sql" in sys.modules:   # else Spark never started: leave it unloaded
        from spark_nodes.spark_session import stop_active_session

        stop_active_session()
