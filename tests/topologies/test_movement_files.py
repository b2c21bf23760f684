"""Movement files from the tools researchers use: BonnMotion's native ``.movements``
(topologies.bonnmotion) and SUMO's FCD output (topologies.sumo_fcd), the latter from a
scenario run by the real SUMO; bad files are one line naming the file, line or element."""
import gzip
import json
import xml.etree.ElementTree as ElementTree

import pytest

from topologies import line
from topologies.bonnmotion import loads_movements, read_movements
from topologies.errors import TopologyFileError
from topologies.sumo_fcd import read_fcd
from topologies.sumo_scenario import run_grid

MOVES = "0 0 0 10 100 0 20 100 50\n0 50 50\n\n5 0 0 15 0 100\n"


def test_bonnmotion_nodes_move_between_their_waypoints_and_stay_at_the_last():
    tr = loads_movements(MOVES, "s.movements")
    assert tr.nodes == [0, 1, 3]                     # line 3 is empty: node 2 has none
    assert tr.position(0, 5.0) == (50.0, 0.0) and tr.position(0, 15.0) == (100.0, 25.0)
    assert tr.position(0, 99.0) == (100.0, 50.0) and tr.position(1, 7.0) == (50.0, 50.0)
    assert tr.position(3, 0.0) == (0.0, 0.0) and tr.position(3, 10.0) == (0.0, 50.0)


def test_a_gzipped_movements_file_reads_the_same(tmp_path):
    path = tmp_path / "s.movements.gz"
    with gzip.open(path, "wt") as f:
        f.write(MOVES)
    assert read_movements(path).waypoints(0) == loads_movements(MOVES).waypoints(0)


@pytest.mark.parametrize("text, where, expected", [
    ("0 0 0 10 5 x\n", "line 1, waypoint 2, y", "expected a finite number, got 'x'"),
    ("0 0 0 10 5 5 8 1 1\n", "line 1, waypoint 3, t", "expected a time >= the waypoint "
                                                       "before's 10"),
    ("-1 0 0\n", "line 1, waypoint 1, t", "expected a time >= 0"),
    ("0 0 0\n0 1 1 5\n", "line 2", "whole 't x y' triples"),
    ("", "line 1", "one line of waypoints"),
])
def test_a_bad_movements_file_is_one_line_naming_line_and_field(text, where, expected):
    with pytest.raises(TopologyFileError) as err:
        loads_movements(text, "s.movements")
    assert str(err.value).startswith(f"s.movements: {where}: ") and expected in str(err.value)
    assert "\n" not in str(err.value)


def test_movements_for_nodes_the_topology_lacks_are_refused():
    with pytest.raises(TopologyFileError, match=r"s.movements: line 3: expected at most 2 "
                                                r"lines, one per node"):
        loads_movements("0 0 0\n0 1 1\n0 2 2\n", "s.movements", line(2))


def _fcd(tmp_path, body: str):
    path = tmp_path / "fcd.xml"
    path.write_text(f"<fcd-export>\n{body}\n</fcd-export>\n")
    return path


@pytest.mark.parametrize("body, where, expected", [
    ('<timestep time="2"><vehicle id="a" x="0" y="0"/></timestep>\n'
     '<timestep time="1"><vehicle id="a" x="1" y="0"/></timestep>', "timestep 2, time",
     "a time >= the timestep before's 2"),
    ('<timestep time="0"><vehicle id="a" x="0"/></timestep>',
     "timestep 1 (time 0), vehicle 'a', y", "expected a number, got None"),
    ('<timestep time="0"></timestep>', "timestep", "at least one <vehicle>"),
    ('<timestep time="0"><vehicle id="a" x="0" y="0"></timestep>', "line 2",
     "well-formed XML"),
])
def test_a_bad_fcd_file_is_one_line_naming_the_element(tmp_path, body, where, expected):
    with pytest.raises(TopologyFileError) as err:
        read_fcd(_fcd(tmp_path, body))
    message = str(err.value)
    assert message.startswith(f"{tmp_path / 'fcd.xml'}: {where}: ") and expected in message
    assert "\n" not in message


def test_more_vehicles_than_nodes_are_refused(tmp_path):
    body = ('<timestep time="0"><vehicle id="a" x="0" y="0"/><vehicle id="b" x="1" y="0"/>'
            '</timestep>')
    with pytest.raises(TopologyFileError, match="at most 1 vehicles, one per node"):
        read_fcd(_fcd(tmp_path, body), line(1))


def test_an_fcd_file_from_the_real_sumo_is_read_sample_for_sample(tmp_path):
    files = run_grid(tmp_path, seconds=60, seed=3)
    fcd = read_fcd(files.fcd)
    # the file read again with the standard library: every vehicle's samples
    samples = {}
    for step in ElementTree.parse(files.fcd).getroot().iter("timestep"):
        for v in step.iter("vehicle"):
            samples.setdefault(v.get("id"), []).append(
                (float(step.get("time")), float(v.get("x")), float(v.get("y"))))
    assert sorted(fcd.vehicles.values()) == sorted(samples) and len(samples) >= 5
    for node, vehicle in fcd.vehicles.items():
        assert fcd.trajectories.waypoints(node) == samples[vehicle]
    # a vehicle is up from its first sample to one period after its last
    ups = {node: t for t, node, up in fcd.node_events if up}
    downs = {node: t for t, node, up in fcd.node_events if not up and t > 0}
    for node, vehicle in fcd.vehicles.items():
        first, last = samples[vehicle][0][0], samples[vehicle][-1][0]
        assert ups.get(node, 0.0) == first
        if last < 60.0 - 1:
            assert downs[node] == last + 1.0
    assert files.ns2.read_text().count("setdest") > 0     # its ns-2 export, for ns-3


# --- as [mobility] models: bonnmotion and sumo_fcd ---------------------------------------

def _links(dyn, times):
    return [sorted(map(sorted, dyn.snapshot(t).edges())) for t in times]


def test_a_bonnmotion_file_moves_nodes_as_the_same_ns2_trace_does(tmp_path):
    from topologies.spec import dynamics_from_spec
    topo = _with_radius(line(3), 1.5)           # nodes at x = 0, 1, 2
    (tmp_path / "s.movements").write_text("0 0 0 10 5 0\n0 1 0\n0 2 0\n")
    (tmp_path / "s.tcl").write_text(
        "$node_(0) set X_ 0.0\n$node_(0) set Y_ 0.0\n"
        '$ns_ at 0.0 "$node_(0) setdest 5.0 0.0 0.5"\n')
    common = dict(duration=12.0, seed=1, base_dir=tmp_path)
    bonn = dynamics_from_spec(topo, {"model": "bonnmotion", "file": "s.movements"}, **common)
    ns2 = dynamics_from_spec(topo, {"model": "ns2", "file": "s.tcl"}, **common)
    times = [0.0, 2.0, 3.0, 5.0, 11.0]
    assert _links(bonn, times) == _links(ns2, times)
    # node 0 passes node 1 (x = 1 at t = 2), is beside node 2 at t = 4..7, then leaves
    assert _links(bonn, [0.0, 11.0]) == [[[0, 1], [1, 2]], [[1, 2]]]


def _with_radius(topo, radius):
    from topologies.model import Topology
    return Topology(topo.graph, defaults=topo.defaults, link_cost=topo.link_cost,
                    radius=radius)


def test_an_fcd_vehicle_is_in_the_network_only_while_on_the_map(tmp_path):
    from topologies.spec import dynamics_from_spec
    body = ('<timestep time="0"><vehicle id="a" x="0" y="0"/></timestep>'
            '<timestep time="1"><vehicle id="a" x="10" y="0"/><vehicle id="b" x="20" y="0"/>'
            '</timestep><timestep time="2"><vehicle id="a" x="20" y="0"/>'
            '<vehicle id="b" x="25" y="0"/></timestep>'
            '<timestep time="3"><vehicle id="a" x="30" y="0"/></timestep>'
            '<timestep time="4"><vehicle id="a" x="40" y="0"/></timestep>')
    path = _fcd(tmp_path, body)
    topo = _with_radius(line(2), 15.0)
    dyn = dynamics_from_spec(topo, {"model": "sumo_fcd", "file": path.name, "resolution": 0.5},
                             duration=5.0, seed=1, base_dir=tmp_path)
    # b enters at 1 and leaves one FCD period after its last sample (2): up over [1, 3)
    assert _links(dyn, [0.5, 1.0, 2.0, 2.5, 3.0, 4.0]) == [[], [[0, 1]], [[0, 1]], [[0, 1]],
                                                           [], []]


def test_movement_files_in_a_spec_are_refused_in_one_line(tmp_path):
    from topologies.spec import dynamics_from_spec
    topo = _with_radius(line(2), 15.0)
    (tmp_path / "bad.movements").write_text("0 0 0 5 1\n")
    with pytest.raises(TopologyFileError, match=r"bad.movements: line 1: expected waypoints"):
        dynamics_from_spec(topo, {"model": "bonnmotion", "file": "bad.movements"},
                           duration=5.0, seed=1, base_dir=tmp_path)
    with pytest.raises(ValueError, match="mobility.file: required by model 'sumo_fcd'"):
        dynamics_from_spec(topo, {"model": "sumo_fcd"}, duration=5.0, seed=1)
    with pytest.raises(ValueError, match="mobility.speed: not used by model 'bonnmotion'"):
        dynamics_from_spec(topo, {"model": "bonnmotion", "file": "x", "speed": [1, 2]},
                           duration=5.0, seed=1)


def test_topology_validate_reads_each_movement_format(tmp_path):
    from topologies.cli import describe_file
    (tmp_path / "s.movements").write_text(MOVES)
    with gzip.open(tmp_path / "s.movements.gz", "wt") as f:
        f.write(MOVES)
    fcd = _fcd(tmp_path, '<timestep time="0"><vehicle id="a" x="0" y="0"/></timestep>'
                         '<timestep time="1"><vehicle id="b" x="1" y="0"/></timestep>')
    assert "BonnMotion movements, 3 nodes, moving until t=20" in describe_file(
        str(tmp_path / "s.movements"))
    assert "BonnMotion movements, 3 nodes" in describe_file(str(tmp_path / "s.movements.gz"))
    assert "SUMO FCD, 2 nodes, moving until t=1, 3 arrivals and departures" in describe_file(
        str(fcd))


def test_the_vanet_example_files_are_what_sumo_makes(tmp_path):
    """experiments/specs/vanet_sumo_*: regenerated by the real SUMO, the same cars on the
    same paths, and the roadside units where the spec's comments say."""
    from pathlib import Path

    from topologies.files import read_topology
    from topologies.sumo_scenario import VANET_ROADSIDE, write_vanet_example
    shipped = Path(__file__).resolve().parents[2] / "experiments" / "specs"
    fcd, topo = write_vanet_example(tmp_path)
    ours, theirs = read_fcd(fcd), read_fcd(shipped / fcd.name)
    assert ours.vehicles == theirs.vehicles and len(ours.vehicles) == 60
    for node in ours.vehicles:
        assert ours.trajectories.waypoints(node) == theirs.trajectories.waypoints(node)
    assert topo.read_text() == (shipped / topo.name).read_text()
    positions = read_topology(shipped / topo.name).positions
    assert [positions[60 + k] for k in range(5)] == list(VANET_ROADSIDE)


def test_the_vanet_example_joins_over_the_cars(tmp_path):
    """vanet_sumo.toml, 70 s of it: reports cross the cars to the centre unit, and what
    is lost is lost for want of a route (the city has gaps), nothing else."""
    import experiments
    from experiments import spec as specs
    from pathlib import Path
    shipped = Path(__file__).resolve().parents[2] / "experiments" / "specs" / "vanet_sumo.toml"
    spec, base_dir = specs.load(shipped)
    spec["run"]["duration"] = 70.0
    # a dict spec's files are relative to the working folder: name them in full
    run = experiments.run({**spec, "topology": {**spec["topology"],
                                                "file": str(base_dir / spec["topology"]["file"])},
                           "mobility": {**spec["mobility"],
                                        "file": str(base_dir / spec["mobility"]["file"])}},
                          out=tmp_path / "runs")
    summary = run.summary
    assert summary["expected_results"] > 50
    assert 0.3 < summary["recall"] < 1.0
    lost = json.loads(summary["drops_by_reason"])
    assert set(lost) == {"no_route"}
    hops = run.ledger.groupby("msg_id").size()
    assert hops.min() >= 3          # corner -> car -> car -> centre at the least
