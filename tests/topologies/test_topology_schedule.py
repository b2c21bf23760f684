"""Link schedule CSV: changes applied at the right epochs, and bad rows."""
import math
from importlib.resources import files

import pytest

from topologies import (TopologyFileError, line, loads_schedule, read_schedule,
                        read_topology, schedule_dynamics)

DATA = files("topologies") / "data"


def edges(graph):
    return {(u, v): c for u, v, c in graph.edges(data="cost")}


def test_sample_schedule_on_sample_topology():
    topo = read_topology(DATA / "five_nodes.json")
    dyn = schedule_dynamics(topo, read_schedule(DATA / "five_nodes_schedule.csv", topo))
    assert dyn.epochs == [0.0, 3.0, 4.0, 6.0, 8.0, 9.0, 12.0]
    assert edges(dyn.snapshot(0.0)) == edges(topo.graph)
    assert dyn.snapshot(2.999).edges[0, 2]["cost"] == 0.5
    assert dyn.snapshot(3.0).edges[0, 2]["cost"] == 2.0
    assert not dyn.snapshot(4.0).has_edge(2, 4)
    assert dyn.snapshot(9.0).edges[2, 4]["cost"] == 0.4     # back with its old cost
    new = dyn.snapshot(6.5).edges[1, 4]
    assert new == {"cost": 0.6, "delay": 0.02, "jitter": 0.0, "bandwidth": 500.0,
                   "loss": 0.05}
    assert not dyn.snapshot(5.0).has_edge(1, 4)
    dead = dyn.snapshot(8.0)
    assert dead.nodes[3]["alive"] is False and dead.degree(3) == 0
    assert dyn.snapshot(12.0).nodes[3]["alive"] is True
    assert dyn.snapshot(12.0).has_edge(0, 3)
    assert dyn.snapshot(8.0).nodes[3]["pos"] == (0.1, 0.5)


def test_empty_cells_keep_values_and_rows_apply_in_time_then_file_order():
    text = ("time,u,v,cost,delay,up\n"
            "5,0,1,,0.5,\n"
            "2,0,1,7,,\n"
            "5,0,1,9,,0\n"
            "6,0,1,,,1\n")
    dyn = schedule_dynamics(line(3), loads_schedule(text, "s.csv"))
    assert dyn.epochs == [0.0, 2.0, 5.0, 6.0]
    assert dyn.snapshot(2).edges[0, 1]["cost"] == 7.0
    assert not dyn.snapshot(5).has_edge(0, 1)
    assert dyn.snapshot(6).edges[0, 1] == {"cost": 9.0, "delay": 0.5, "jitter": 0.0,
                                           "bandwidth": math.inf, "loss": 0.0}


@pytest.mark.parametrize("text, where, expected", [
    ("time,u,v,cost\n1,0,1,abc\n", "line 2, cost", "expected a number >= 0, got 'abc'"),
    ("time,u,v,cost,delay\n1,0,1,2,-1\n", "line 2, delay", "got '-1'"),
    ("time,u,v,cost,up\n1,0,1,2,maybe\n", "line 2, up", "expected 0, 1, true or false"),
    ("time,u,v,cost\nx,0,1,2\n", "line 2, time", "expected a number >= 0, got 'x'"),
    ("time,u,v,cost\n1,a,1,2\n", "line 2, u", "expected an integer, got 'a'"),
    ("time,u,v,cost\n1,0,1\n", "line 2", "expected 4 cells (time,u,v,cost)"),
    ("time,u,v,cost\n1,1,1,2\n", "line 2, v", "expected a node other than u"),
    ("time,u,v\n1,0,1\n", "line 1", "expected a header with time,u,v,cost"),
    ("time,u,v,cost,speed\n", "line 1", "got 'speed'"),
    ("time,u,v,cost,up\n1,0,,2,0\n", "line 2", "expected a node row (empty v)"),
    ("# nothing\n", "line 1", "expected a header line"),
])
def test_bad_rows_name_file_line_and_column(text, where, expected):
    with pytest.raises(TopologyFileError) as info:
        loads_schedule(text, "sched.csv")
    assert info.value.where == where
    assert str(info.value).startswith(f"sched.csv: {where}: ")
    assert expected in str(info.value)


def test_unknown_node_names_file_line_and_node(tmp_path):
    path = tmp_path / "sched.csv"
    path.write_text("time,u,v,cost\n0,0,1,1\n\n3,1,42,1\n")
    with pytest.raises(TopologyFileError) as info:
        read_schedule(path, line(3))
    assert str(info.value) == f"{path}: line 4, v: expected a node of the topology, got 42"
    schedule = read_schedule(path)          # fine without a topology ...
    with pytest.raises(TopologyFileError, match="line 4, v"):
        schedule_dynamics(line(3), schedule)   # ... but not applied to one
