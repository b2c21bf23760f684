"""The ``topology validate`` / ``topology show`` subcommands."""
import argparse
import json
import shutil
from importlib.resources import files

import pytest

from topologies import random_geometric, write_topology
from topologies.cli import add_subcommands
from tests.topologies.grid12 import grid12_doc, write_grid12_graphml, write_grid12_json

DATA = files("topologies") / "data"


def run(argv):
    parser = argparse.ArgumentParser(prog="testbed")
    add_subcommands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def test_validate_topology_summary(tmp_path, capsys):
    path = tmp_path / "net.json"
    topo = random_geometric(30, 0.3, seed=3)
    write_topology(topo, path)
    assert run(["topology", "validate", str(path)]) == 0
    first, *settings = capsys.readouterr().out.splitlines()
    assert first == (f"{path}: topology, 30 nodes, {topo.graph.number_of_edges()} links, "
                     "connected")
    assert settings[:2] == ["  link_cost  none: the costs written on the links",
                            "  radius     0.3       (file)"]
    assert settings[-1] == "  positions  every node"


def test_validate_reports_disconnected(tmp_path, capsys):
    path = tmp_path / "net.json"
    path.write_text(json.dumps({"nodes": [{"id": 0}, {"id": 1}, {"id": 2}],
                                "links": [{"source": 0, "target": 1}]}))
    assert run(["topology", "validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].endswith("3 nodes, 1 links, disconnected (2 components)")
    assert out.endswith("  positions  none\n")


@pytest.mark.parametrize("write", [write_grid12_json, write_grid12_graphml])
def test_validate_prints_the_settings_a_run_uses(tmp_path, capsys, write):
    path = write(tmp_path / ("grid12.json" if write is write_grid12_json else "g.graphml"))
    assert run(["topology", "validate", str(path)]) == 0
    assert capsys.readouterr().out == (
        f"{path}: topology, 12 nodes, 17 links, connected\n"
        "  link_cost  distance  (file)\n"
        "  radius     0.25      (file)\n"
        "  delay      0.02      (file)\n"
        "  jitter     0         (built-in default, for links that give none)\n"
        "  bandwidth  inf       (built-in default, for links that give none)\n"
        "  loss       0         (built-in default, for links that give none)\n"
        "  positions  every node\n")


def test_validate_a_model_without_positions_is_one_line(tmp_path, capsys):
    doc = grid12_doc()
    del doc["nodes"][7]["pos"]
    path = tmp_path / "grid12.json"
    path.write_text(json.dumps(doc))
    assert run(["topology", "validate", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"error: {path}: nodes[7].pos: expected a position "
                            "(graph.link_cost 'distance' needs one on every node)\n")


def test_validate_trace_and_schedule_against_topology(capsys):
    topo = str(DATA / "five_nodes.json")
    assert run(["topology", "validate", str(DATA / "five_nodes.ns_movements"),
                "--topology", topo]) == 0
    out = capsys.readouterr().out
    assert "ns-2 trace, 2 nodes, moving until t=13, nodes checked against" in out
    assert run(["topology", "validate", str(DATA / "five_nodes_schedule.csv")]) == 0
    out = capsys.readouterr().out
    assert "schedule, 7 rows, 3 links, 2 node changes, 7 change times" in out


@pytest.mark.parametrize("name, text, message", [
    ("net.json", '{"nodes": [\n{"id": 0},,\n]}', "net.json: line 2: expected valid JSON"),
    ("moves.tcl", '$node_(0) set X_ 1\n$node_(0) jump\n', "moves.tcl: line 2: expected an"),
    ("s.csv", "time,u,v,cost\n0,0,9,1\n", "s.csv: line 2, v: expected a node of the topology"),
    ("net.yaml", "", "net.yaml: file name: expected one of the extensions"),
])
def test_validate_errors_exit_non_zero_with_location(tmp_path, capsys, name, text, message):
    path = tmp_path / name
    path.write_text(text)
    argv = ["topology", "validate", str(path)]
    if name.endswith(".csv"):
        argv += ["--topology", str(DATA / "five_nodes.json")]
    assert run(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err


def test_validate_missing_file(tmp_path, capsys):
    assert run(["topology", "validate", str(tmp_path / "none.json")]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"error: {tmp_path / 'none.json'}: no such file"


def test_show_writes_png(tmp_path, capsys):
    out = tmp_path / "five.png"
    assert run(["topology", "show", str(DATA / "five_nodes.graphml"), "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out.stat().st_size > 5000
    shutil.copy(DATA / "five_nodes_schedule.csv", tmp_path / "s.csv")
    assert run(["topology", "show", str(tmp_path / "s.csv"), "-o", str(out)]) == 2
    assert "expected a topology file" in capsys.readouterr().err
