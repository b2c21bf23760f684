"""Every error the project raises on bad input crosses a process boundary whole: a sweep's
worker process sends it to the sweep (pickled), which prints the same line as a run in
the sweep's own process would."""
from __future__ import annotations

import pickle
import re
from pathlib import Path

import pytest

from analysis.animate import AnimationError
from analysis.pcap import PcapError
from emulator.mininet.control import AgentError
from experiments.spec import SpecError
from experiments.store import RunFolderError
from experiments.sweep_spark import SweepRunError
from spark_nodes.algorithms.enrich.profile import ProfileError
from spark_nodes.runtimes.session import SparkSetupError
from topologies.errors import DisconnectedTopologyError, TopologyFileError
from topologies.schema import FieldError

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("contract", "topologies", "emulator", "spark_nodes", "experiments", "analysis",
            "testbed")

EXAMPLES = [
    SpecError("s.toml", "run.step", "expected a number > 0, got 0"),
    RunFolderError("out/r-1/meta.json", "status", '"complete"'),
    TopologyFileError("net.json", "links[4].cost", "a number >= 0", got="abc"),
    TopologyFileError("net.json", 3, "valid JSON"),
    DisconnectedTopologyError(50, 0.05, 100),
    FieldError("run.step", "expected a number > 0, got 0"),
    ProfileError("p.json", "records[0].key", "expected an integer"),
    SparkSetupError("java not found: install Java 17"),
    SweepRunError("1 of 4 runs failed"),
    AgentError("agent of node 3 crashed"),
    AnimationError("runs/r-1", "RUN_DIR", "not a complete run folder"),
    PcapError("runs/r-1", "capture", "the aodv run kept no capture table"),
]


def test_every_error_class_of_the_project_has_an_example():
    defined = {match for package in PACKAGES for path in (ROOT / package).rglob("*.py")
               for match in re.findall(r"^class (\w+(?:Error|Exception))\(",
                                       path.read_text(), re.MULTILINE)}
    assert defined == {type(e).__name__ for e in EXAMPLES}


@pytest.mark.parametrize("error", EXAMPLES, ids=lambda e: type(e).__name__)
def test_an_error_comes_back_from_pickle_with_its_line_and_fields(error):
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error)
    assert str(back) == str(error)
    assert vars(back) == vars(error)
