"""The spark runtime names each micro-batch as it starts it (the progress bar shows it)."""
import sys

import pytest
from pyspark import cloudpickle

from contract.program import START, Event, NodeProgram
from spark_nodes.runtimes.spark import SparkRuntime
from experiments.planning import make_plan

pytestmark = pytest.mark.spark

# Executors cannot import this test module: its classes travel by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


class Idle(NodeProgram):
    """Does nothing: each step is only the micro-batch around it."""


@pytest.fixture(scope="module")
def spark():
    from spark_nodes.runtimes.session import build_session

    return build_session("local[2]", partitions=2)


def test_every_micro_batch_is_reported_once(spark):
    notes = []
    runtime = SparkRuntime(spark=spark)
    runtime.on_phase = notes.append
    runtime.open(make_plan(), {1: Idle(), 2: Idle()})
    for step in range(3):
        runtime.run_step(step * 0.1, (step + 1) * 0.1, {1: [Event(step * 0.1, 0, START, None)]},
                         None)
    runtime.close()
    # the session was given: no JVM start to report
    assert notes == ["micro-batch 1 (warm-up)", "micro-batch 2", "micro-batch 3"]
