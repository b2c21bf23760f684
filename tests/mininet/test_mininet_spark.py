"""Spark on the emulated network: what is refused before any host or JVM starts. (The
cluster itself, executors in a worker host and traffic over the links, is checked by
``test_mininet_spark_runtime.py`` on one cluster.)"""
import pytest

from emulator.mininet.options import MininetOptions
from experiments.planning import make_plan
from topologies import line

pytestmark = [pytest.mark.mininet, pytest.mark.spark, pytest.mark.slow]


def line_plan(n):
    return make_plan(topology=line(n, defaults={"delay": 0.002}), name="spark-line",
                     duration=1.0, step=0.002, backend="mininet", runtime="spark",
                     algorithm="none", spec={"run": {"drain": None}})


def test_spark_options_are_checked():
    with pytest.raises(ValueError, match="mininet.spark_workers"):
        MininetOptions.from_table({"spark_workers": [1]})


def test_a_spark_runtime_on_the_mininet_backend_is_refused_not_ignored():
    from emulator import mininet
    from spark_nodes.runtimes.spark import SparkRuntime

    with pytest.raises(ValueError, match="run.runtime: the mininet backend runs node "
                                         "programs in its agents"):
        mininet.run(line_plan(3), {}, {}, SparkRuntime(master="local[1]"))
