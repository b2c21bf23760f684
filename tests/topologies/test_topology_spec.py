"""[topology] and [mobility] spec tables."""
import math
import shutil
import tomllib
from importlib.resources import files

import pytest

from topologies import (DisconnectedTopologyError, TopologyFileError, dynamics_from_spec,
                        line, read_topology, topology_from_spec)

DATA = files("topologies") / "data"


def test_each_generator():
    assert topology_from_spec({"generator": "line", "nodes": 4}, seed=1) == line(4)
    assert len(topology_from_spec({"generator": "grid", "rows": 3, "cols": 2},
                                  seed=1).nodes) == 6
    c = topology_from_spec({"generator": "complete", "nodes": 5, "cost_range": [3, 4]},
                           seed=1)
    assert {x for *_, x in c.graph.edges(data="cost")} <= {3.0, 4.0}
    rg = topology_from_spec({"generator": "random_geometric", "nodes": 15, "radius": 0.5,
                             "link_cost": "distance", "delay": 0.002,
                             "bandwidth": math.inf}, seed=4)
    assert rg.is_connected() and rg.link_cost == "distance" and rg.radius == 0.5
    assert {d for *_, d in rg.graph.edges(data="delay")} == {0.002}
    assert rg == topology_from_spec({"generator": "random_geometric", "nodes": 15,
                                     "radius": 0.5, "link_cost": "distance",
                                     "delay": 0.002, "bandwidth": math.inf}, seed=4)


def test_file_generator_resolves_against_base_dir(tmp_path):
    shutil.copy(DATA / "five_nodes.graphml", tmp_path / "net.graphml")
    with pytest.warns(UserWarning) as caught:
        topo = topology_from_spec({"generator": "file", "file": "net.graphml",
                                   "link_cost": "hop", "radius": 0.7}, seed=1,
                                  base_dir=tmp_path)
    assert [str(w.message) for w in caught] == [
        'topology.link_cost: "hop" in the spec overrides "distance" in net.graphml',
        "topology.radius: 0.7 in the spec overrides 0.5 in net.graphml"]
    assert topo.nodes == [0, 1, 2, 3, 4] and topo.radius == 0.7
    assert {c for *_, c in topo.graph.edges(data="cost")} == {1.0}
    with pytest.raises(FileNotFoundError):
        topology_from_spec({"generator": "file", "file": "net.graphml"}, seed=1)


def test_toml_tables_as_written_in_the_design():
    spec = tomllib.loads("""
[topology]
generator = "random_geometric"
nodes = 30
radius = 0.3
link_cost = "distance"
delay = 0.01
jitter = 0.0
bandwidth = inf
loss = 0.0

[mobility]
model = "random_waypoint"
speed = [0.01, 0.05]
pause = 1.0
resolution = 1.0
""")
    topo = topology_from_spec(spec["topology"], seed=1)
    dyn = dynamics_from_spec(topo, spec["mobility"], duration=30.0, seed=1)
    assert dyn.epochs[0] == 0.0 and len(dyn.epochs) > 1
    first = dyn.snapshot(0.0)
    assert {(u, v) for u, v in first.edges} == {tuple(sorted(e)) for e in topo.graph.edges}


@pytest.mark.parametrize("section, message", [
    ({"generator": "line", "nodes": 3, "colour": 1},
     r"topology.colour: unknown key; valid keys: allow_disconnected, bandwidth, cols"),
    ({"generator": "ring", "nodes": 3}, r"topology.generator: expected one of line"),
    ({"nodes": 3}, r"topology.generator: expected one of line, .*got None"),
    ({"generator": "line", "rows": 3}, r"topology.rows: not used by generator 'line'"),
    ({"generator": "random_geometric", "nodes": 3},
     r"topology.radius: required by generator 'random_geometric'"),
    ({"generator": "line", "nodes": "3"}, r"topology.nodes: expected an integer >= 1"),
    ({"generator": "line", "nodes": 3, "delay": -1}, r"topology.delay: expected a number"),
    ({"generator": "line", "nodes": 3, "link_cost": "fast"},
     r"topology.link_cost: expected one of hop"),
    ({"generator": "line", "nodes": 3, "link_cost": "etx"},
     r"topology.link_cost: link cost model 'etx' needs the radio range"),
    ({"generator": "complete", "nodes": 3, "link_cost": "distance"},
     r"topology.link_cost: .*node 0 has no pos"),
    ({"generator": "complete", "nodes": 3, "cost_range": [5, 1]},
     r"topology.cost_range: expected low <= high"),
    ({"generator": "file", "file": 3}, r"topology.file: expected a file path"),
])
def test_bad_topology_tables(section, message):
    with pytest.raises(ValueError, match=message):
        topology_from_spec(section, seed=1)


def test_disconnected_generator_error_reaches_caller():
    with pytest.raises(DisconnectedTopologyError, match="n=40, radius=0.02"):
        topology_from_spec({"generator": "random_geometric", "nodes": 40, "radius": 0.02},
                           seed=1)


def test_mobility_models_from_files(tmp_path):
    for name in ("five_nodes.json", "five_nodes.ns_movements", "five_nodes_schedule.csv"):
        shutil.copy(DATA / name, tmp_path / name)
    topo = topology_from_spec({"generator": "file", "file": "five_nodes.json"}, seed=1,
                              base_dir=tmp_path)
    ns2 = dynamics_from_spec(topo, {"model": "ns2", "file": "five_nodes.ns_movements",
                                    "resolution": 0.5}, duration=20, seed=1,
                             base_dir=tmp_path)
    assert ns2.snapshot(5.0).nodes[4]["pos"] == pytest.approx((0.5, 0.5))
    assert ns2.snapshot(5.0).has_edge(1, 4)       # 0.4 apart, radius 0.5
    assert not ns2.snapshot(0.0).has_edge(1, 4)
    sched = dynamics_from_spec(topo, {"model": "schedule",
                                      "file": str(tmp_path / "five_nodes_schedule.csv")},
                               duration=20, seed=1)
    assert sched.epochs == [0.0, 3.0, 4.0, 6.0, 8.0, 9.0, 12.0]
    assert dynamics_from_spec(topo, {"model": "none"}, duration=20, seed=1).epochs == [0.0]


def test_random_waypoint_from_spec_is_seeded():
    topo = topology_from_spec({"generator": "grid", "rows": 3, "cols": 3, "radius": 1.5},
                              seed=1)
    section = {"model": "random_waypoint", "speed": [0.1, 0.3], "pause": 0.0}
    a = dynamics_from_spec(topo, section, duration=15, seed=5)
    b = dynamics_from_spec(topo, section, duration=15, seed=5)
    c = dynamics_from_spec(topo, section, duration=15, seed=6)
    assert a.epochs == b.epochs
    assert [sorted(a.snapshot(t).edges) for t in a.epochs] == \
        [sorted(b.snapshot(t).edges) for t in b.epochs]
    assert [a.snapshot(t).nodes[4]["pos"] for t in (5, 10)] != \
        [c.snapshot(t).nodes[4]["pos"] for t in (5, 10)]
    positions = [p for t in a.epochs for _, p in a.snapshot(t).nodes(data="pos")]
    assert all(0 <= x <= 2 and 0 <= y <= 2 for x, y in positions)   # the grid's area


@pytest.mark.parametrize("section, message", [
    ({"model": "random_waypoint", "speed": [0.1, 0.2], "sped": 1},
     r"mobility.sped: unknown key; valid keys: alpha, direction_sd, distance, failures, "
     r"file, group_change_prob, group_size, group_size_sd, groups, max_distance, "
     r"mean_direction, mean_velocity, mode, model, pause, resolution, scale, speed, "
     r"steady_state, time, time_step, velocity_sd"),
    ({"model": "levy"}, r"mobility.model: expected one of none, random_waypoint"),
    ({"model": "schedule", "file": "x.csv", "speed": [1, 2]},
     r"mobility.speed: not used by model 'schedule'"),
    ({"model": "random_waypoint"}, r"mobility.speed: required by model 'random_waypoint'"),
    ({"model": "random_waypoint", "speed": [0, 1]},
     r"mobility.speed\[0\]: expected a number > 0"),
    ({"model": "random_waypoint", "speed": [1, 2], "resolution": 0},
     r"mobility.resolution: expected a number > 0"),
    ({"model": "ns2"}, r"mobility.file: required by model 'ns2'"),
])
def test_bad_mobility_tables(section, message):
    topo = topology_from_spec({"generator": "line", "nodes": 3, "radius": 1.0}, seed=1)
    with pytest.raises(ValueError, match=message):
        dynamics_from_spec(topo, section, duration=10, seed=1)


def test_mobility_needs_radius_and_file_errors_name_the_file(tmp_path):
    with pytest.raises(ValueError, match="needs topology.radius"):
        dynamics_from_spec(line(3), {"model": "random_waypoint", "speed": [1, 2]},
                           duration=5, seed=1)
    (tmp_path / "s.csv").write_text("time,u,v,cost\n1,0,7,1\n")
    with pytest.raises(TopologyFileError, match=r"s.csv: line 2, v: expected a node"):
        dynamics_from_spec(line(3), {"model": "schedule", "file": "s.csv"}, duration=5,
                           seed=1, base_dir=tmp_path)


def test_sample_topology_reads_the_same_through_spec():
    assert topology_from_spec({"generator": "file", "file": str(DATA / "five_nodes.json")},
                              seed=1) == read_topology(DATA / "five_nodes.json")


def test_node_failures_from_a_schedule_while_nodes_move(tmp_path):
    topo = topology_from_spec({"generator": "random_geometric", "nodes": 12,
                               "radius": 0.45}, seed=1)
    (tmp_path / "fail.csv").write_text("time,u,v,cost,up\n2.0,3,,,0\n6.0,3,,,1\n")
    mob = {"model": "random_waypoint", "speed": [0.02, 0.05], "failures": "fail.csv"}
    dyn = dynamics_from_spec(topo, mob, 10.0, 2, tmp_path)
    alive = {t: dyn.snapshot(t).nodes[3]["alive"] for t in dyn.epochs}
    assert alive[1.0] and not alive[2.0] and not alive[5.0] and alive[6.0]
    assert not any(3 in e for e in dyn.snapshot(3.0).edges)
    with pytest.raises(ValueError, match=r"^mobility.failures: no such file: .*none.csv$"):
        dynamics_from_spec(topo, {**mob, "failures": "none.csv"}, 10.0, 2, tmp_path)
    (tmp_path / "links.csv").write_text("time,u,v,cost,up\n2.0,3,4,1.0,0\n")
    with pytest.raises(ValueError, match=r"^mobility.failures: .*expected node rows only"):
        dynamics_from_spec(topo, {**mob, "failures": "links.csv"}, 10.0, 2, tmp_path)
