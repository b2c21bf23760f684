"""A topology file's own link_cost, radius and link defaults: used on read, overridden
by a spec's [topology] table only with a warning naming both values (issue 23)."""
import json
import math
import warnings
from importlib.resources import files

import pytest

from topologies import (TopologyFileError, apply_link_cost, parse_topology, read_topology,
                        topology_from_spec, topology_settings)
from tests.topologies.grid12 import (DELAY, RADIUS, grid12_doc, write_grid12_graphml,
                                     write_grid12_json)

DATA = files("topologies") / "data"
WRITERS = {".json": write_grid12_json, ".graphml": write_grid12_graphml}


def costs(topo):
    return {tuple(sorted((u, v))): c for u, v, c in topo.graph.edges(data="cost")}


@pytest.mark.parametrize("suffix", [".json", ".graphml"])
def test_the_files_cost_model_gives_the_costs_on_read(tmp_path, suffix):
    topo = read_topology(WRITERS[suffix](tmp_path / f"grid12{suffix}"))
    assert (topo.link_cost, topo.radius) == ("distance", RADIUS)
    assert costs(topo)[0, 1] == pytest.approx(0.1) and costs(topo)[0, 4] == pytest.approx(0.2)
    assert costs(topo) == costs(apply_link_cost(topo, "distance"))   # they agree exactly
    assert topo.defaults["delay"] == DELAY
    assert {d for *_, d in topo.graph.edges(data="delay")} == {DELAY}
    assert topology_settings(topo) == {
        "nodes": 12, "links": 17, "link_cost": "distance", "radius": RADIUS, "delay": DELAY,
        "jitter": 0.0, "bandwidth": math.inf, "loss": 0.0, "nodes_with_position": 12}


@pytest.mark.parametrize("suffix", [".json", ".graphml"])
def test_without_a_spec_setting_the_file_holds_and_nothing_is_warned(tmp_path, suffix):
    path = WRITERS[suffix](tmp_path / f"grid12{suffix}")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        topo = topology_from_spec({"generator": "file", "file": path.name}, seed=1,
                                  base_dir=tmp_path)
        same = topology_from_spec({"generator": "file", "file": path.name, "radius": RADIUS,
                                   "link_cost": "distance", "delay": DELAY}, seed=1,
                                  base_dir=tmp_path)
    assert topo == read_topology(path)
    assert costs(same) == pytest.approx(costs(topo)) and same.defaults == topo.defaults


@pytest.mark.parametrize("suffix", [".json", ".graphml"])
def test_a_spec_override_is_used_and_warned_naming_both_values(tmp_path, suffix):
    path = WRITERS[suffix](tmp_path / f"grid12{suffix}")
    section = {"generator": "file", "file": path.name, "link_cost": "hop", "radius": 0.5,
               "delay": 0.05}
    with pytest.warns(UserWarning) as caught:
        topo = topology_from_spec(section, seed=1, base_dir=tmp_path)
    assert sorted(str(w.message) for w in caught) == [
        f"topology.delay: 0.05 in the spec overrides 0.02 in grid12{suffix}",
        f'topology.link_cost: "hop" in the spec overrides "distance" in grid12{suffix}',
        f"topology.radius: 0.5 in the spec overrides 0.25 in grid12{suffix}"]
    assert (topo.link_cost, topo.radius, topo.defaults["delay"]) == ("hop", 0.5, 0.05)
    assert set(costs(topo).values()) == {1.0}
    assert {d for *_, d in topo.graph.edges(data="delay")} == {0.05}
    reported = []
    topology_from_spec(section, seed=1, base_dir=tmp_path,
                       warn=lambda field, message: reported.append(field))
    assert sorted(reported) == ["topology.delay", "topology.link_cost", "topology.radius"]


def test_a_links_own_value_beats_every_default(tmp_path):
    doc = grid12_doc()
    doc["links"][0]["delay"] = 0.3
    (tmp_path / "g.json").write_text(json.dumps(doc))
    with pytest.warns(UserWarning, match="topology.delay: 0.05 in the spec overrides 0.02"):
        topo = topology_from_spec({"generator": "file", "file": "g.json", "delay": 0.05},
                                  seed=1, base_dir=tmp_path)
    assert topo.graph.edges[0, 1]["delay"] == 0.3 and topo.graph.edges[1, 2]["delay"] == 0.05


def test_etx_follows_the_radius_in_force(tmp_path):
    path = write_grid12_json(tmp_path / "etx.json", link_cost="etx")
    own = read_topology(path)
    assert costs(own)[0, 1] == pytest.approx(1 / (1 - (0.1 / RADIUS) ** 4) ** 2)
    with pytest.warns(UserWarning, match=r"topology.radius: 0.5 in the spec overrides 0.25"):
        wider = topology_from_spec({"generator": "file", "file": "etx.json", "radius": 0.5},
                                   seed=1, base_dir=tmp_path)
    assert (wider.link_cost, wider.radius) == ("etx", 0.5)
    assert costs(wider)[0, 1] == pytest.approx(1 / (1 - (0.1 / 0.5) ** 4) ** 2)
    assert costs(wider) == costs(apply_link_cost(wider, "etx"))


@pytest.mark.parametrize("graph, where, expected", [
    ({"radius": None, "link_cost": "etx"}, "graph.radius",
     "expected the radio range (graph.link_cost 'etx' needs it)"),
    ({}, "nodes[5].pos", "expected a position (graph.link_cost 'distance' needs one"),
])
def test_a_model_the_file_cannot_follow_is_a_one_line_error(tmp_path, graph, where, expected):
    doc = grid12_doc(**graph)
    doc["graph"] = {k: v for k, v in doc["graph"].items() if v is not None}
    if where.startswith("nodes"):
        del doc["nodes"][5]["pos"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(TopologyFileError) as info:
        read_topology(path)
    assert info.value.where == where
    assert str(info.value).startswith(f"{path}: {where}: {expected}")
    assert len(str(info.value).splitlines()) == 1


def test_graphml_node_without_position_is_named(tmp_path):
    path = write_grid12_graphml(tmp_path / "g.graphml")
    path.write_text(path.read_text().replace(
        '<node id="3"><data key="x">0.30000000000000004</data><data key="y">0.0</data>',
        '<node id="3">'))
    with pytest.raises(TopologyFileError, match=r"g.graphml: node\[3\]: expected a "
                                                r"position \(graph.link_cost 'distance'"):
        read_topology(path)


def test_a_written_cost_must_agree_with_the_files_model(tmp_path):
    doc = grid12_doc()
    doc["links"][4]["cost"] = 1.0            # a row link: the model says 0.1
    doc["links"][0]["cost"] = 0.1            # agrees: kept
    (tmp_path / "g.json").write_text(json.dumps(doc))
    with pytest.raises(TopologyFileError, match=r"g.json: links\[4\].cost: expected 0.1, "
                                                r"the cost graph.link_cost 'distance' gives "
                                                r"this link, got 1.0"):
        read_topology(tmp_path / "g.json")


def test_shipped_samples_keep_their_written_costs():
    # 0.3 as written, not the model's 0.30000000000000004: results do not move
    for name in ("five_nodes.json", "five_nodes.graphml"):
        topo = read_topology(DATA / name)
        assert topo.graph.edges[0, 1]["cost"] == 0.3 and topo.link_cost == "distance"
    assert parse_topology(DATA / "five_nodes.json").settings == {"link_cost": "distance",
                                                                 "radius": 0.5}


def test_caller_defaults_come_before_the_files(tmp_path):
    path = write_grid12_graphml(tmp_path / "g.graphml")
    assert parse_topology(path).defaults == {"delay": DELAY}
    topo = read_topology(path, defaults={"delay": 0.07, "loss": 0.1})
    assert topo.defaults["delay"] == 0.07 and topo.graph.edges[0, 1]["loss"] == 0.1
    bad = path.read_text().replace(f"<default>{DELAY}</default>", "<default>-1</default>")
    (tmp_path / "bad.graphml").write_text(bad)
    with pytest.raises(TopologyFileError, match=r"bad.graphml: key\[4\].default: expected "
                                                r"a number >= 0, got '-1'"):
        read_topology(tmp_path / "bad.graphml")
