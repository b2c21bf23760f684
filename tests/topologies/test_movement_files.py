"""Movement files from the tools researchers use: BonnMotion's native ``.movements``
(topologies.bonnmotion) and SUMO's FCD output (topologies.sumo_fcd), the latter from a
scenario run by the real SUMO; bad files are one line naming the file, line or element."""
import gzip
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
