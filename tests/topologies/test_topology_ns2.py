"""ns-2 / BonnMotion movement traces: positions at times and bad lines."""
from importlib.resources import files

import pytest

from topologies import TopologyFileError, line, loads_ns2_trace, read_ns2_trace, \
    read_topology

DATA = files("topologies") / "data"


def test_sample_trace_positions_at_times():
    topo = read_topology(DATA / "five_nodes.json")
    tr = read_ns2_trace(DATA / "five_nodes.ns_movements", topo)
    assert tr.nodes == [0, 4]
    # node 4: (0.8, 0.5) -> at t=2 heads to (0.2, 0.5) at 0.1 (arrives t=8),
    # at t=10 heads back to (0.8, 0.5) at 0.2 (arrives t=13).
    expected = {0.0: 0.8, 2.0: 0.8, 5.0: 0.5, 8.0: 0.2, 9.0: 0.2, 11.5: 0.5, 13.0: 0.8,
                50.0: 0.8}
    for t, x in expected.items():
        assert tr.position(4, t) == pytest.approx((x, 0.5)), t
    # node 0: at t=5 heads from (0.1, 0.1) to (0.1, 0.3) at 0.05 (arrives t=9).
    assert tr.position(0, 7.0) == pytest.approx((0.1, 0.2))
    assert tr.position(0, 9.5) == pytest.approx((0.1, 0.3))
    assert tr.end == pytest.approx(13.0)


def test_new_destination_while_moving_starts_from_current_position():
    tr = loads_ns2_trace("""
        $node_(0) set X_ 0
        $node_(0) set Y_ 0
        $ns_ at 0.0 "$node_(0) setdest 10 0 1"
        $ns_ at 4.0 "$node_(0) setdest 4 3 1"
    """)
    assert tr.position(0, 4.0) == pytest.approx((4.0, 0.0))
    assert tr.position(0, 5.5) == pytest.approx((4.0, 1.5))
    assert tr.position(0, 7.0) == pytest.approx((4.0, 3.0))


def test_jumps_zero_speed_god_lines_comments_and_time_order():
    tr = loads_ns2_trace("""# CMU setdest scenario
$node_(1) set X_ 1.0
$node_(1) set Y_ 1.0
$node_(1) set Z_ 0.0
$god_ set-dist 0 1 1
$ns_ at 6.0 "$node_(1) set X_ 9.0"
$ns_ at 2.0 "$node_(1) setdest 5.0 1.0 1.0"
$ns_ at 4.0 "$node_(1) setdest 7.0 7.0 0.0"
$ns_ at 5.0 "$god_ set-dist 0 1 2"
""")
    assert tr.position(1, 3.0) == pytest.approx((2.0, 1.0))
    assert tr.position(1, 4.0) == pytest.approx((3.0, 1.0))   # speed 0: stops here
    assert tr.position(1, 5.9) == pytest.approx((3.0, 1.0))
    assert tr.position(1, 6.0) == pytest.approx((9.0, 1.0))   # jump
    assert tr.position(1, 99.0) == pytest.approx((9.0, 1.0))


def test_nodes_without_initial_lines_start_at_topology_position():
    tr = loads_ns2_trace('$ns_ at 1.0 "$node_(2) setdest 2.0 1.0 1.0"', "m.tcl", line(3))
    assert tr.position(2, 0.0) == (2.0, 0.0)
    assert tr.position(2, 2.0) == pytest.approx((2.0, 1.0))


@pytest.mark.parametrize("text, where, expected", [
    ('$node_(0) set X_ 1\n$node_(0) set Y_ 1\n$node_(0) move 3 4\n', "line 3",
     "expected an ns-2 movement line"),
    ('$node_(0) set X_ 1\n$node_(0) set Y_ abc\n', "line 2, Y_", "expected a number, got 'abc'"),
    ('$node_(0) set X_ 1\n$node_(0) set Y_ 1\n$ns_ at -1 "$node_(0) setdest 1 1 1"\n',
     "line 3, time", "expected a number >= 0, got '-1'"),
    ('$node_(0) set X_ 1\n$node_(0) set Y_ 1\n$ns_ at 1 "$node_(0) setdest 1 1 -2"\n',
     "line 3, speed", "expected a number >= 0, got '-2'"),
    ('$ns_ at 1 "$node_(0) setdest 1 1 1"\n$node_(0) set X_ 1\n', "line 1",
     "(node 0 has no start position)"),
    ('$ns_ at 1 "$node_(0) setdest 1 1 1\n', "line 1", "expected an ns-2 movement line"),
])
def test_bad_lines_name_file_and_line(text, where, expected):
    with pytest.raises(TopologyFileError) as info:
        loads_ns2_trace(text, "moves.ns_movements")
    assert info.value.where == where
    assert str(info.value).startswith(f"moves.ns_movements: {where}: ")
    assert expected in str(info.value)


def test_trace_naming_a_node_not_in_topology(tmp_path):
    path = tmp_path / "moves.ns_movements"
    path.write_text('$node_(0) set X_ 0\n$node_(0) set Y_ 0\n$node_(7) set X_ 1\n')
    with pytest.raises(TopologyFileError) as info:
        read_ns2_trace(path, line(3))
    assert str(info.value) == (f"{path}: line 3, node: expected a node of the topology, "
                               f"got 7")
