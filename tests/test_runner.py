"""End to end: spec → run folder, determinism, atomic writes, bad input, the CLI."""
import json
import subprocess
import sys

import pandas as pd
import pytest

import experiments
from experiments import spec as specs
from testbed.cli import main
from experiments.runner import run_spec
from experiments.spec import SpecError
from experiments.store import is_complete

SMALL = {
    "run": {"name": "small", "seed": 3, "duration": 6.0, "step": 0.05, "memory_interval": 1.0},
    "topology": {"generator": "random_geometric", "nodes": 12, "radius": 0.45,
                 "link_cost": "distance", "delay": 0.05, "jitter": 0.03},
    "mobility": {"model": "random_waypoint", "speed": [0.02, 0.08], "pause": 0.5,
                 "resolution": 0.5},
    "streams": {"count": 3, "rate": 4.0, "keys": "uniform", "key_domain": 6},
    "query": {"node": 0, "predicate": "equality", "window": 1.5},
    "algorithm": {"name": "centralized"},
}


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    return experiments.run(SMALL, out=tmp_path_factory.mktemp("runs"))


def test_run_folder_holds_every_table_and_a_complete_summary(small_run):
    path = small_run.path
    for name in ("spec.json", "meta.json", "ledger.parquet", "metrics.parquet",
                 "results.parquet", "expected.parquet", "summary.json"):
        assert (path / name).is_file(), name
    s = small_run.summary
    for key in ("comm_cost_total", "comm_cost_per_time", "messages", "bytes", "results",
                "expected_results", "recall", "duplicates", "latency_mean", "latency_p50",
                "latency_p95", "latency_p99", "memory_mean_tuples", "memory_peak_tuples",
                "wall_seconds"):
        assert key in s, key
    meta = json.loads((path / "meta.json").read_text())
    assert meta["status"] == "complete" and meta["seed"] == 3
    assert meta["versions"]["simpy"] and meta["versions"]["pyspark"]


def test_centralized_join_is_exact_and_costs_what_the_ledger_says(small_run):
    s, ledger = small_run.summary, small_run.ledger
    assert s["expected_results"] > 0
    assert s["recall"] == 1.0 and s["duplicates"] == 0 and s["false_results"] == 0
    assert s["comm_cost_total"] == pytest.approx((ledger.size_units * ledger.link_cost).sum())
    assert s["comm_cost_per_time"] == pytest.approx(s["comm_cost_total"] / 6.0)
    assert s["messages"] == ledger.msg_id.nunique() == s["tuples_generated"]
    assert set(small_run.results.group) == set(small_run.expected.group)
    assert (small_run.results.emitted_at >= small_run.results.last_entered).all()


def test_same_spec_and_seed_give_identical_ledger_and_results(small_run, tmp_path):
    again = experiments.run(SMALL, out=tmp_path, force=True)
    assert again.run_id == small_run.run_id
    pd.testing.assert_frame_equal(again.ledger, small_run.ledger)
    pd.testing.assert_frame_equal(again.results, small_run.results)
    other = experiments.run(SMALL, out=tmp_path, seed=4)
    assert other.run_id != small_run.run_id
    assert not other.ledger.equals(small_run.ledger)


def test_a_complete_run_is_not_run_again(small_run):
    before = (small_run.path / "meta.json").stat().st_mtime_ns
    experiments.run(SMALL, out=small_run.path.parent)
    assert (small_run.path / "meta.json").stat().st_mtime_ns == before


def test_an_interrupted_run_leaves_nothing_that_looks_complete(tmp_path, monkeypatch):
    import experiments.store as store

    def crash(*args, **kwargs):
        raise KeyboardInterrupt

    spec = specs.resolve(SMALL)
    monkeypatch.setattr(store.os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        run_spec(spec, tmp_path)
    monkeypatch.undo()
    assert not is_complete(tmp_path / specs.run_id(spec))
    assert not any(p.name == specs.run_id(spec) for p in tmp_path.iterdir())
    assert is_complete(run_spec(spec, tmp_path))    # a rerun completes and replaces it


@pytest.mark.parametrize("change, field", [
    ({"streams": {"count": 2, "nodes": [1, 99]}}, "streams.nodes[1]"),
    ({"query": {"node": 40}}, "query.node"),
    ({"topology": {"generator": "random_geometric", "nodes": 30, "radius": 0.01}}, "topology"),
    ({"algorithm": {"name": "smj-x"}}, "algorithm.name"),
    ({"params": {"centralized": {"bach": 3}}}, "params.centralized.bach"),
    ({"query": {"predicate": "distance"}}, "query.theta"),
])
def test_bad_specs_fail_before_running_naming_the_field(tmp_path, change, field):
    raw = {**SMALL, **change}
    with pytest.raises(SpecError) as err:
        experiments.run(raw, out=tmp_path)
    assert err.value.field == field
    assert not any(tmp_path.iterdir())


def test_stream_at_missing_node_message_names_the_node(tmp_path):
    with pytest.raises(SpecError, match="99"):
        experiments.run({**SMALL, "streams": {"count": 2, "nodes": [1, 99]}}, out=tmp_path)


def test_cli_run_and_bad_spec_exit_codes(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text('[run]\nname = "cli"\nduration = 2.0\nstep = 0.05\n'
                    '[topology]\ngenerator = "line"\nnodes = 4\ndelay = 0.05\n'
                    '[streams]\ncount = 2\nrate = 3.0\nkey_domain = 3\n'
                    '[query]\nnode = 0\nwindow = 1.0\n')
    assert main(["run", str(spec), "--out", str(tmp_path / "runs")]) == 0
    assert "recall 1.000" in capsys.readouterr().out
    spec.write_text('[run]\nname = "cli"\ndurration = 2.0\n')
    assert main(["run", str(spec), "--out", str(tmp_path / "runs")]) == 2
    assert "s.toml: run.durration: unknown key" in capsys.readouterr().err


def test_console_script_is_installed():
    out = subprocess.run([sys.executable, "-m", "testbed.cli", "--help"],
                         capture_output=True, text=True, check=True).stdout
    assert "sweep" in out and "topology" in out


def small_bandwidth_spec(medium, **network):
    return {"run": {"name": "medium", "duration": 4.0, "step": 0.05},
            "topology": {"generator": "line", "nodes": 5, "delay": 0.05, "bandwidth": 2000.0},
            "streams": {"count": 2, "rate": 3.0, "key_domain": 3, "nodes": [3, 4]},
            "query": {"node": 0, "window": 1.0},
            "network": {"medium": medium, **network}}


def test_the_shared_medium_delays_but_never_changes_answers(tmp_path):
    links = experiments.run(small_bandwidth_spec("links"), out=tmp_path)
    shared = experiments.run(small_bandwidth_spec("shared"), out=tmp_path)
    assert links.summary["recall"] == shared.summary["recall"] == 1.0
    assert set(links.results["group"]) == set(shared.results["group"])
    # neighbours wait for each other on the shared channel: later results, same cost
    assert shared.summary["latency_mean"] > links.summary["latency_mean"]
    assert shared.summary["comm_cost_total"] == pytest.approx(links.summary["comm_cost_total"])


def test_an_interference_radius_needs_positions(tmp_path):
    with pytest.raises(SpecError, match="network.interference_radius: a topology whose "
                                        "nodes have positions"):
        spec = small_bandwidth_spec("shared", interference_radius=0.3)
        spec["topology"] = {"generator": "complete", "nodes": 5}
        experiments.run(spec, out=tmp_path)


def spec_file(tmp_path, text):
    path = tmp_path / "spec.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, message", [
    ('[topology]\ngenerator = "line"\nnodes = 5\n[params.centralized]\nx = 1\n',
     "spec.toml: params.centralized.x: unknown parameter"),
    ('[topology]\ngenerator = "line"\nnodes = 5\n[streams]\nrate = -1\n',
     "spec.toml: streams.rate: expected a finite number > 0"),
    ('[topology]\ngenerator = "file"\nfile = "nope.json"\n',
     "spec.toml: topology.file: no such file: "),
])
def test_spec_errors_name_the_field_once(tmp_path, capsys, text, message):
    assert main(["run", str(spec_file(tmp_path, text)), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Errno" not in err


@pytest.mark.parametrize("folder", ["missing", "empty"])
def test_report_on_a_folder_without_runs_is_one_line(tmp_path, capsys, folder):
    path = tmp_path / folder
    if folder == "empty":
        path.mkdir()
    assert main(["report", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {path}") and len(err.splitlines()) == 1


def two_islands(tmp_path):
    path = tmp_path / "islands.json"
    path.write_text(json.dumps({"nodes": [{"id": i} for i in range(4)],
                                "links": [{"source": 0, "target": 1},
                                          {"source": 2, "target": 3}]}))
    return {**SMALL, "topology": {"generator": "file", "file": str(path)}, "mobility": {},
            "streams": {"count": 2, "nodes": [1, 3]}, "query": {"node": 0}}


def test_a_stream_cut_off_from_the_query_node_is_refused_by_name(tmp_path):
    with pytest.raises(SpecError, match=r"topology: stream node\(s\) \[3\] cannot reach the "
                                        r"query node 0"):
        experiments.run(two_islands(tmp_path), out=tmp_path / "runs")
    spec = two_islands(tmp_path)
    spec["topology"]["allow_disconnected"] = True
    summary = experiments.run(spec, out=tmp_path / "runs").summary
    assert summary["results"] == 0 < summary["expected_results"]
    assert summary["warnings"][0].startswith("no results although the exact answer has")


def metres_trace(tmp_path):
    """Five nodes moving over a 1,000 m square (the units of a BonnMotion export)."""
    start = [(100, 100), (400, 150), (300, 450), (700, 500), (900, 900)]
    lines = [f"$node_({i}) set {axis}_ {v}" for i, (x, y) in enumerate(start)
             for axis, v in (("X", x), ("Y", y))]
    lines += [f'$ns_ at 2.0 "$node_({i}) setdest {y} {x} 20.0"'
              for i, (x, y) in enumerate(start)]
    path = tmp_path / "walk.ns_movements"
    path.write_text("\n".join(lines) + "\n")
    return {**SMALL, "topology": {"generator": "random_geometric", "nodes": 5, "radius": 0.5},
            "mobility": {"model": "ns2", "file": str(path)},
            "streams": {"count": 2, "nodes": [1, 3], "rate": 4.0}, "query": {"node": 0}}


def test_a_trace_in_metres_on_a_unit_topology_is_refused_with_the_scale_that_fits(tmp_path):
    with pytest.raises(SpecError, match=r"mobility.file: .*walk.ns_movements: "
                                        r"coordinates span 800 x 800 but the topology spans "
                                        r"1 x 1 \(radius 0.5\); .*set mobility.scale = 0.00125"):
        experiments.run(metres_trace(tmp_path), out=tmp_path / "runs")
    spec = metres_trace(tmp_path)
    spec["mobility"]["scale"] = 0.001
    summary = experiments.run(spec, out=tmp_path / "runs").summary
    assert summary["expected_results"] > 0
    assert summary["results"] == summary["expected_results"]


def test_a_stored_run_whose_movement_file_changed_is_run_again(tmp_path):
    """The run id hashes the spec, which names the file; the file's content is recorded
    with the run, and a changed file makes the stored run stale."""
    moves = tmp_path / "walk.movements"
    # node 1 sits beside the query node 0; node 2 is the stream's, in range of node 1
    moves.write_text("0 0 0\n0 0.3 0\n0 0.6 0\n")
    (tmp_path / "spec.toml").write_text(
        '[run]\nname = "moved"\nduration = 10.0\n'
        '[topology]\ngenerator = "line"\nnodes = 3\nradius = 0.35\n'
        '[mobility]\nmodel = "bonnmotion"\nfile = "walk.movements"\n'
        '[streams]\ncount = 2\nnodes = [2, 2]\nrate = 5.0\n'
        '[query]\nnode = 0\nwindow = 1.0\n[algorithm]\nname = "centralized"\n')
    first = experiments.run(tmp_path / "spec.toml", out=tmp_path / "runs")
    assert not first.skipped and first.summary["recall"] == 1.0
    digest = first.meta["inputs"]["mobility.file"]
    again = experiments.run(tmp_path / "spec.toml", out=tmp_path / "runs")
    assert again.skipped and again.run_id == first.run_id
    # node 2 walks out of range at t = 5: what it sends after is lost
    moves.write_text("0 0 0\n0 0.3 0\n0 0.6 0 5 5.0 0\n")
    changed = experiments.run(tmp_path / "spec.toml", out=tmp_path / "runs")
    assert not changed.skipped and changed.run_id == first.run_id
    assert changed.summary["recall"] < 0.8
    assert changed.meta["inputs"]["mobility.file"] != digest
