"""A run on a topology file that names its own cost model (issue 23): the file's
settings are used, a spec override is warned about naming both values, and spec.json
records what the run used without changing the run's id."""
import json

import pytest

import experiments
from experiments import spec as specs
from tests.topologies.grid12 import DELAY, RADIUS, write_grid12_json

SPEC = """
[run]
name = "grid12"
seed = 2
duration = 4.0
step = 0.02

[topology]
generator = "file"
file = "grid12.json"
{extra}

[streams]
count = 2
nodes = [11, 8]
rate = 4.0
key_domain = 4

[query]
node = 0
window = 1.0
"""


def run_grid12(tmp_path, extra=""):
    write_grid12_json(tmp_path / "grid12.json")
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.format(extra=extra))
    return experiments.run(spec, out=tmp_path / "runs"), spec


@pytest.fixture(scope="module")
def grid12_run(tmp_path_factory):
    return run_grid12(tmp_path_factory.mktemp("grid12"))[0]


def test_the_files_distance_costs_are_what_the_run_pays(grid12_run):
    ledger = grid12_run.ledger
    assert len(ledger) > 0
    assert sorted(ledger.link_cost.round(9).unique()) == [0.1, 0.2]
    assert grid12_run.summary["recall"] == 1.0


def test_spec_json_records_the_resolved_topology(grid12_run):
    written = json.loads((grid12_run.path / "spec.json").read_text())
    assert written["resolved"]["topology"] == {
        "nodes": 12, "links": 17, "link_cost": "distance", "radius": RADIUS, "delay": DELAY,
        "jitter": 0.0, "bandwidth": "inf", "loss": 0.0, "nodes_with_position": 12}
    assert written["topology"] == {"generator": "file", "file": "grid12.json"}   # as given
    assert grid12_run.resolved == written["resolved"]
    # Run.spec is the spec as hashed: the folder's id still comes from it alone
    assert "resolved" not in grid12_run.spec
    assert specs.run_id(grid12_run.spec) == grid12_run.run_id


def test_spec_json_records_the_streams_params_and_windows_the_run_used(grid12_run):
    resolved = grid12_run.resolved
    assert resolved["streams"]["placed_at"] == {"R1": 11, "R2": 8}
    assert resolved["streams"]["keys"] == "uniform" and resolved["streams"]["zipf_s"] == 1.2
    assert resolved["params"] == {"centralized": {"batch": 1, "retention": None}}
    assert resolved["windows"] == {"R1": 1.0, "R2": 1.0}


def test_a_spec_warning_is_said_once_and_kept_in_the_summary(tmp_path):
    write_grid12_json(tmp_path / "grid12.json")
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.format(extra="").replace("window = 1.0", "window = 9.0"))
    with pytest.warns(specs.SpecWarning) as caught:
        run = experiments.run(spec, out=tmp_path / "runs")
    expected = (f"{spec}: query.window: 9 is longer than the run (run.duration = 4): "
                "every tuple stays in the window to the end")
    assert [str(w.message) for w in caught] == [expected]
    assert run.summary["warnings"] == [expected]


def test_a_spec_override_is_warned_naming_both_and_used(tmp_path):
    with pytest.warns(specs.SpecWarning) as caught:
        run, source = run_grid12(tmp_path, extra='link_cost = "hop"')
    assert [str(w.message) for w in caught] == [
        f'{source}: topology.link_cost: "hop" in the spec overrides "distance" in '
        "grid12.json"]
    assert set(run.ledger.link_cost) == {1.0}
    assert run.resolved["topology"]["link_cost"] == "hop"
    assert run.resolved["topology"]["radius"] == RADIUS       # still the file's
