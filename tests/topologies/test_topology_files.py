"""JSON node-link and GraphML files: round trips and every kind of bad input."""
import json
import math
from importlib.resources import files

import networkx as nx
import pytest

from topologies import (Topology, TopologyFileError, complete, parse_topology,
                        random_geometric, read_topology, write_topology)

DATA = files("topologies") / "data"


def test_sample_files_hold_the_same_topology():
    topo = read_topology(DATA / "five_nodes.json")
    assert topo == read_topology(DATA / "five_nodes.graphml")
    assert topo.nodes == [0, 1, 2, 3, 4]
    assert topo.graph.edges[0, 2] == {"cost": 0.5, "delay": 0.02, "jitter": 0.005,
                                      "bandwidth": 1000.0, "loss": 0.01}
    assert topo.graph.edges[2, 4]["bandwidth"] == math.inf
    assert topo.graph.nodes[4]["pos"] == (0.8, 0.5)
    assert (topo.radius, topo.link_cost) == (0.5, "distance")


@pytest.mark.parametrize("suffix", [".json", ".graphml"])
@pytest.mark.parametrize("make", [
    lambda: random_geometric(25, 0.35, seed=5),
    lambda: complete(6, (1, 10), seed=2),
    lambda: read_topology(DATA / "five_nodes.json"),
])
def test_round_trip_equality(tmp_path, suffix, make):
    topo = make()
    path = tmp_path / f"net{suffix}"
    write_topology(topo, path)
    back = read_topology(path)
    assert back == topo
    assert dict(back.graph.edges) == dict(topo.graph.edges)


def test_json_round_trip_keeps_link_defaults(tmp_path):
    topo = complete(3, seed=1, defaults={"delay": 0.3, "bandwidth": 50})
    write_topology(topo, tmp_path / "net.json")
    assert read_topology(tmp_path / "net.json").defaults["delay"] == 0.3
    with pytest.raises(ValueError, match="GraphML cannot hold non-default link defaults"):
        write_topology(topo, tmp_path / "net.graphml")


def test_missing_attributes_take_caller_defaults(tmp_path):
    path = tmp_path / "net.json"
    path.write_text(json.dumps({"nodes": [{"id": 1}, {"id": 2}],
                                "links": [{"source": 1, "target": 2, "cost": 3}]}))
    topo = read_topology(path, defaults={"delay": 0.25})
    assert topo.graph.edges[1, 2] == {"cost": 3.0, "delay": 0.25, "jitter": 0.0,
                                      "bandwidth": math.inf, "loss": 0.0}


def test_reads_what_networkx_writes(tmp_path):
    g = nx.Graph()
    g.add_edge(3, 7, cost=2.5, delay=0.1)
    g.add_edge(7, 9, cost=1.0)
    nx.write_graphml(g, tmp_path / "nx.graphml")
    topo = read_topology(tmp_path / "nx.graphml")
    assert topo.nodes == [3, 7, 9]
    assert topo.graph.edges[3, 7]["cost"] == 2.5 and topo.graph.edges[3, 7]["delay"] == 0.1
    (tmp_path / "nx.json").write_text(json.dumps(nx.node_link_data(g, edges="edges")))
    assert read_topology(tmp_path / "nx.json") == topo
    # and networkx reads what we write
    write_topology(topo, tmp_path / "ours.graphml")
    assert nx.read_graphml(tmp_path / "ours.graphml", node_type=int).edges[3, 7]["cost"] == 2.5


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_malformed_json_reports_line(tmp_path):
    path = write(tmp_path, "net.json", '{\n "nodes": [\n  {"id": 0}\n  {"id": 1}\n ]\n}\n')
    with pytest.raises(TopologyFileError) as info:
        read_topology(path)
    assert info.value.where == "line 4"
    assert str(info.value).startswith(f"{path}: line 4: expected valid JSON")


GOOD_NODES = [{"id": 0, "pos": [0, 0]}, {"id": 1, "pos": [1, 0]}, {"id": 2}]


@pytest.mark.parametrize("doc, where, expected", [
    ({"nodes": GOOD_NODES, "links": [{"source": 0, "target": 1},
                                     {"source": 1, "target": 2, "cost": "abc"}]},
     "links[1].cost", "expected a number >= 0, got 'abc'"),
    ({"nodes": GOOD_NODES, "links": [{"source": 0, "target": 1, "cost": -2}]},
     "links[0].cost", "expected a number >= 0, got -2"),
    ({"nodes": GOOD_NODES, "links": [{"source": 0, "target": 5}]},
     "links[0].target", "expected a node listed in nodes, got 5"),
    ({"nodes": GOOD_NODES, "links": [{"source": 0}]},
     "links[0].target", "expected a node id"),
    ({"nodes": GOOD_NODES + [{"id": 1}], "links": []},
     "nodes[3].id", "expected a node id not used before, got 1"),
    ({"nodes": [{"id": "a"}], "links": []}, "nodes[0].id", "expected an integer, got 'a'"),
    ({"nodes": [{"id": 0, "pos": [1]}], "links": []}, "nodes[0].pos", "expected a position"),
    ({"nodes": GOOD_NODES, "links": [{"source": 0, "target": 1, "cots": 1}]},
     "links[0].cots", "expected one of the keys bandwidth, cost"),
    ({"nodes": GOOD_NODES, "links": [{"source": 0, "target": 1},
                                     {"source": 1, "target": 0}]},
     "links[1]", "expected one link per node pair"),
    ({"nodes": GOOD_NODES, "links": [{"source": 0, "target": 1, "loss": 1.5}]},
     "links[0].loss", "expected a number >= 0 and <= 1, got 1.5"),
    ({"nodes": GOOD_NODES, "links": [{"source": 0, "target": 1, "bandwidth": 0}]},
     "links[0].bandwidth", "expected a number > 0 (or inf), got 0"),
    ({"directed": True, "nodes": GOOD_NODES, "links": []}, "directed", "expected false"),
    ({"nodes": GOOD_NODES, "graph": {"link_cost": "far"}}, "graph.link_cost",
     "expected one of hop"),
    ({"nodes": "all"}, "nodes", "expected a list of nodes"),
])
def test_bad_json_fields_are_named(tmp_path, doc, where, expected):
    path = write(tmp_path, "net.json", json.dumps(doc))
    with pytest.raises(TopologyFileError) as info:
        read_topology(path)
    assert info.value.where == where
    assert f"{path}: {where}: {expected}" in str(info.value)


GRAPHML_HEAD = """<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="c" for="edge" attr.name="cost" attr.type="double"/>
  <graph edgedefault="undirected">
"""


def test_malformed_graphml_reports_line(tmp_path):
    path = write(tmp_path, "net.graphml",
                 GRAPHML_HEAD + '    <node id="0">\n    <node id="1"/>\n  </graph>\n</graphml>\n')
    with pytest.raises(TopologyFileError) as info:
        read_topology(path)
    assert info.value.where == "line 7"   # the </graph> that closes nothing
    assert "expected well-formed GraphML XML (mismatched tag" in str(info.value)


@pytest.mark.parametrize("body, where, expected", [
    ('<node id="0"/><node id="1"/><edge source="0" target="1"><data key="c">abc</data>'
     '</edge>', "edge[0].cost", "expected a number >= 0, got 'abc'"),
    ('<node id="0"/><node id="1"/><edge source="0" target="2"/>', "edge[0].target",
     "expected the id of a <node>, got '2'"),
    ('<node id="0"/><node id="0"/>', "node[1].id", "expected a node id not used before"),
    ('<node id="n0"/>', "node[0].id", "expected an integer, got 'n0'"),
    ('<node id="0"/><node id="1"/><edge source="0" target="1"><data key="w">1</data>'
     '</edge>', "edge[0].data", "expected a key declared by <key>, got 'w'"),
])
def test_bad_graphml_fields_are_named(tmp_path, body, where, expected):
    path = write(tmp_path, "net.graphml", GRAPHML_HEAD + body + "</graph></graphml>")
    with pytest.raises(TopologyFileError) as info:
        read_topology(path)
    assert info.value.where == where
    assert expected in str(info.value)


def test_graphml_unknown_attribute_and_directed_graph(tmp_path):
    path = write(tmp_path, "a.graphml", GRAPHML_HEAD.replace('"cost"', '"weight"')
                 + "</graph></graphml>")
    with pytest.raises(TopologyFileError, match=r"key\[0\].attr.name: expected edge "
                                                r"attribute named one of bandwidth"):
        read_topology(path)
    path = write(tmp_path, "b.graphml", GRAPHML_HEAD.replace("undirected", "directed")
                 + "</graph></graphml>")
    with pytest.raises(TopologyFileError, match="graph.edgedefault: expected 'undirected'"):
        read_topology(path)


@pytest.mark.parametrize("got", [None, "abc"])
def test_file_error_survives_pickling(got):
    import pickle
    err = TopologyFileError("net.json", "links[4].cost", "a number >= 0", got=got)
    back = pickle.loads(pickle.dumps(err))
    assert str(back) == str(err)
    assert str(err) == f"net.json: links[4].cost: expected a number >= 0, got {got!r}"
    assert (back.path, back.where, back.got) == ("net.json", "links[4].cost", got)
    bare = pickle.loads(pickle.dumps(TopologyFileError("net.json", 3, "valid JSON")))
    assert str(bare) == "net.json: line 3: expected valid JSON"


def test_unknown_extension(tmp_path):
    with pytest.raises(TopologyFileError, match=r"file name: expected a .json"):
        read_topology(tmp_path / "net.yaml")
    with pytest.raises(TopologyFileError):
        write_topology(Topology(nx.Graph([(0, 1)])), tmp_path / "net.txt")


# networkx reads the GraphML: what it would get wrong on its own (bare exceptions, values
# converted by attr.type, edges out of document order, repeated nodes merged) must not leak.

def test_graphml_places_are_in_document_order(tmp_path):
    # networkx orders edges by node (0-1, 0-2, 2-3); errors and neighbours follow the file.
    keys = ('<key id="d" for="edge" attr.name="delay" attr.type="boolean"/>'
            '<key id="t" for="edge" attr.name="cost" attr.type="int"/>')
    edges = ('<node id="0"/><node id="1"/><node id="2"/><node id="3"/>'
             '<edge source="0" target="1"><data key="t">2.5</data></edge>'
             '<edge source="2" target="3"/><edge source="0" target="2"/>')
    path = write(tmp_path, "ok.graphml", GRAPHML_HEAD.replace("<graph ", keys + "<graph ")
                 + edges + "</graph></graphml>")
    topo = read_topology(path)
    assert topo.graph.edges[0, 1]["cost"] == 2.5           # attr.type="int" is not int()
    assert list(parse_topology(path).graph.adj[2]) == [3, 0]
    bad = path.read_text().replace('target="2"/>', 'target="2"><data key="d">true</data>'
                                   '</edge>')
    path = write(tmp_path, "bad.graphml", bad)
    with pytest.raises(TopologyFileError) as info:
        read_topology(path)
    assert str(info.value) == (f"{path}: edge[2].delay: expected a number >= 0, "
                               f"got 'true'")


@pytest.mark.parametrize("body, where, expected", [
    ('<node id="0"/><node id="00"/>', "node[1].id",
     "expected a node id not used before, got '00'"),
    ('<node id="a"/><node id="b"/><edge source="a" target="b"/>', "node[0].id",
     "expected an integer, got 'a'"),
    ('<node id="0"><data key="c">1</data></node>', "node[0].data",
     "expected node attribute named one of x, y, got 'cost'"),
    ('<node id="0"/><node id="1"/><edge source="0" target="1" directed="true"/>',
     "edge[0].directed", "expected 'false', got 'true'"),
    ('<node id="0"/><node id="1"/><edge source="0" target="1"/><edge source="1" '
     'target="0"/>', "edge[1]", "expected one edge per node pair (1, 0 repeats)"),
    ('<hyperedge><endpoint node="0"/></hyperedge>', "graph",
     "expected GraphML networkx can read (GraphML reader doesn't support hyperedges)"),
])
def test_graphml_errors_networkx_would_not_place(tmp_path, body, where, expected):
    path = write(tmp_path, "net.graphml", GRAPHML_HEAD + body + "</graph></graphml>")
    with pytest.raises(TopologyFileError) as info:
        read_topology(path)
    assert info.value.where == where
    assert str(info.value) == f"{path}: {where}: {expected}"


@pytest.mark.parametrize("text, where", [
    (b"\x00\xff\xfegarbage{{[[", "line 1"),
    (GRAPHML_HEAD.encode(), "line 5"),                       # cut short
    (b"<graphml><graph/><graph/></graphml>", "graph"),
    (b'<topology xmlns="http://graphml.graphdrawing.org/xmlns"/>', "root element"),
])
def test_malformed_graphml_is_one_line_naming_the_file(tmp_path, text, where):
    path = tmp_path / "net.graphml"
    path.write_bytes(text)
    with pytest.raises(TopologyFileError) as info:
        read_topology(path)
    assert info.value.where == where
    assert str(info.value).startswith(f"{path}: {where}: expected ")
    assert len(str(info.value).splitlines()) == 1


def test_graphml_without_namespace_or_key_types_reads_quietly(tmp_path, recwarn):
    path = write(tmp_path, "net.graphml",
                 '<graphml><key id="c" for="edge" attr.name="cost"><default>2</default>'
                 '</key><key id="r" attr.name="radius"/><graph><data key="r">0.4</data>'
                 '<node id="0"/><node id="1"/><edge source="0" target="1"/></graph>'
                 '</graphml>')
    stated = parse_topology(path)
    assert (stated.defaults, stated.radius) == ({"cost": 2.0}, 0.4)
    assert read_topology(path).graph.edges[0, 1]["cost"] == 2.0
    assert not recwarn.list
