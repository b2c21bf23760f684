"""``testbed sweep --jobs N``: runs in worker processes give the runs, folders and table of
``--jobs 1``; a warning every run raises is said once with a count; a run's error stops
the sweep with the line ``--jobs 1`` prints, and the other workers with it; a sweep
killed with SIGKILL (``--jobs 1`` or 2) leaves no worker behind and nothing half-written
that looks complete, and its rerun gives the table of a clean sweep."""
from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from experiments.store import is_complete
from experiments.sweep import local_workers
from testbed.cli import main

# 6 runs of a fraction of a second each; the radius warns at every point under the
# log-distance radio (the radio decides the links)
SPEC = """
[run]
name = "jobs"
duration = 6.0
step = 0.05
[topology]
generator = "random_geometric"
nodes = 10
radius = 0.6
delay = 0.05
jitter = 0.03
[radio]
model = "log_distance"
meters_per_unit = 200
[mobility]
model = "random_waypoint"
speed = [0.02, 0.08]
pause = 0.5
resolution = 0.5
[streams]
count = 3
rate = 4.0
key_domain = 6
[query]
node = 0
window = 1.5
[algorithm]
name = "centralized"
[sweep]
seeds = [1, 2]
[sweep.grid]
"streams.rate" = [3.0, 4.0, 5.0]
"""
RUNS = 6
#: columns of runs.parquet that time the run rather than say what it did
TIMING = ["wall_seconds"]


def frame_hash(frame: pd.DataFrame) -> str:
    return hashlib.sha256(pd.util.hash_pandas_object(frame, index=False).values).hexdigest()


def folders(out: Path) -> dict[str, dict]:
    """What each complete run folder holds that does not depend on the clock."""
    found = {}
    for run in sorted(p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")):
        assert is_complete(run), f"{run} looks like a run but is not complete"
        summary = json.loads((run / "summary.json").read_text())
        found[run.name] = {
            "spec": (run / "spec.json").read_text(),
            "summary": {k: v for k, v in summary.items() if k not in TIMING},
            **{table: frame_hash(pd.read_parquet(run / f"{table}.parquet"))
               for table in ("ledger", "results", "metrics", "expected")}}
    return found


def table(out: Path) -> pd.DataFrame:
    return pd.read_parquet(out / "runs.parquet").drop(columns=TIMING)


@pytest.fixture(scope="module")
def spec(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("spec") / "jobs.toml"
    path.write_text(SPEC)
    return path


@pytest.fixture(scope="module")
def one_at_a_time(spec, tmp_path_factory) -> Path:
    """The sweep run with --jobs 1: the reference."""
    out = tmp_path_factory.mktemp("jobs1") / "sweep"
    assert main(["sweep", str(spec), "--out", str(out), "--jobs", "1"]) == 0
    return out


def radius_warnings(recwarn) -> list[str]:
    return [str(w.message) for w in recwarn.list if "topology.radius" in str(w.message)]


@pytest.mark.slow
def test_two_workers_give_the_runs_and_table_of_one(spec, one_at_a_time, tmp_path, capfd,
                                                    recwarn, caplog):
    out = tmp_path / "sweep"
    assert main(["-v", "sweep", str(spec), "--out", str(out), "--jobs", "2"]) == 0
    captured = capfd.readouterr()
    # -v: each run's log lines, from the workers, reach this process's loggers
    finished = {r.getMessage().split(":")[0] for r in caplog.records
                if r.name == "experiments.runner" and r.process != os.getpid()
                and ": recall " in r.getMessage()}
    assert finished == set(folders(one_at_a_time))
    assert captured.out.splitlines()[-1] == f"{out / 'runs.parquet'}: {RUNS} runs"
    pd.testing.assert_frame_equal(table(out), table(one_at_a_time))
    assert len(table(out)) == RUNS
    assert folders(out) == folders(one_at_a_time)
    assert len(folders(out)) == RUNS
    # the radius warning of every run, once, counted (the workers' included: they print
    # nothing of their own)
    said = radius_warnings(recwarn)
    assert len(said) == 1 and said[0].endswith(f"(all {RUNS} runs)"), said
    assert "topology.radius" not in captured.err and "Traceback" not in captured.err


def test_a_warning_of_every_run_is_said_once_with_a_count(spec, tmp_path, recwarn):
    spec_3 = tmp_path / "three.toml"   # 3 runs, in this process
    spec_3.write_text(SPEC.replace('"streams.rate" = [3.0, 4.0, 5.0]', '"streams.rate" = [3.0]')
                      .replace("seeds = [1, 2]", "seeds = [1, 2, 3]"))
    assert main(["sweep", str(spec_3), "--out", str(tmp_path / "sweep"), "--jobs", "1"]) == 0
    said = radius_warnings(recwarn)
    assert len(said) == 1 and said[0].endswith("(all 3 runs)"), said


def test_jobs_is_an_integer_of_at_least_one(spec, tmp_path, capsys):
    for bad in ("0", "-1", "two", "1.5"):
        with pytest.raises(SystemExit) as stop:
            main(["sweep", str(spec), "--out", str(tmp_path), "--jobs", bad])
        assert stop.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()[-1]
        assert err.endswith(f"argument --jobs: expected an integer >= 1 (runs at once), "
                            f"got '{bad}'")
    assert main(["sweep", str(spec), "--jobs", "2", "--engine", "spark"]) == 2
    assert capsys.readouterr().err.startswith("error: --jobs: the spark engine runs")
    assert not any(tmp_path.iterdir())


def test_mininet_and_spark_runs_run_one_at_a_time(recwarn):
    def runs(backend="simpy", runtime="inproc", algorithm="centralized"):
        spec = {"run": {"backend": backend, "runtime": runtime},
                "algorithm": {"name": algorithm}}
        return [(spec, "seed 1"), (spec, "seed 2"), (spec, "seed 3")]

    assert local_workers(None, runs(), "s.toml") == min(os.cpu_count(), 3)
    assert local_workers(2, runs(), "s.toml") == 2
    assert local_workers(8, runs(), "s.toml") == 3    # no more workers than runs
    assert not recwarn.list
    assert local_workers(None, runs(backend="mininet"), "s.toml") == 1
    assert not recwarn.list    # nobody asked for more
    for alone, field in ((runs(backend="mininet"), "run.backend"),
                         (runs(runtime="spark"), "run.runtime"),
                         (runs(algorithm="spark-join"), "algorithm.name")):
        assert local_workers(2, alone, "s.toml") == 1
        said = str(recwarn.pop().message)
        assert said.startswith(f"s.toml: {field}: ")
        assert said.endswith("the sweep runs one run at a time, not 2")


# The enrich run's table node is checked when its programs are made, in the run (a
# worker); the centralized run after it takes several seconds (few results: keys rarely
# match), and is stopped mid-run (--jobs 2) or never started (--jobs 1).
FAILING = """
[run]
name = "fails"
duration = 300.0
step = 0.05
[topology]
generator = "line"
nodes = 4
delay = 0.05
[streams]
count = 2
rate = 20.0
key_domain = 100000
[query]
node = 0
[enrich.table]
nodes = [9]
[algorithm]
name = "enrich-on-demand"
[sweep]
seeds = [1]
[sweep.grid]
"algorithm.name" = ["enrich-on-demand", "centralized"]
"""


@pytest.mark.slow
def test_a_run_failing_in_a_worker_stops_the_sweep_with_the_line_of_jobs_1(tmp_path, capfd):
    spec = tmp_path / "fails.toml"
    spec.write_text(FAILING)
    errors = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"jobs{jobs}"
        assert main(["sweep", str(spec), "--out", str(out), "--jobs", jobs]) == 2
        errors[jobs] = capfd.readouterr().err.strip().splitlines()[-1]
        assert not any(is_complete(p) for p in out.iterdir()), list(out.iterdir())
    assert errors["1"] == errors["2"]
    assert errors["2"] == (f"error: {spec}: params.enrich-on-demand: enrich.table.nodes: "
                           "expected nodes of the topology, got 9")


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_sweep_killed_mid_way_leaves_nothing_running_and_resumes(spec, one_at_a_time,
                                                                  tmp_path, jobs):
    out = tmp_path / "sweep"
    sweep = subprocess.Popen([sys.executable, "-m", "testbed", "sweep", str(spec), "--out",
                              str(out), "--jobs", jobs], cwd=tmp_path,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    try:
        while not (out.exists() and any(is_complete(p) for p in out.iterdir())):
            assert sweep.poll() is None, sweep.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "no run completed in 300 s"
            time.sleep(0.02)
        workers = children(sweep.pid)
        sweep.send_signal(signal.SIGKILL)
        sweep.wait(timeout=30)
    finally:
        if sweep.poll() is None:
            sweep.kill()
        sweep.stderr.close()
    done = [p.name for p in out.iterdir() if is_complete(p)]
    assert 1 <= len(done) < RUNS, "the kill must land mid-sweep"
    # the workers end with their sweep (a second or so), the runs they had under way lost
    deadline = time.monotonic() + 30
    while any(running(pid) for pid in workers):
        assert time.monotonic() < deadline, [pid for pid in workers if running(pid)]
        time.sleep(0.1)
    # nothing half-written looks like a run: every visible folder is complete
    assert all(is_complete(p) for p in out.iterdir() if not p.name.startswith("."))
    before = {name: (out / name / "meta.json").stat().st_mtime_ns for name in done}
    # the rerun in this process (the store is the same whatever ran the runs before)
    assert main(["sweep", str(spec), "--out", str(out), "--jobs", "1"]) == 0
    for name, mtime in before.items():   # complete runs are not run again
        assert (out / name / "meta.json").stat().st_mtime_ns == mtime
    assert not [p for p in out.iterdir() if p.name.startswith(".tmp-")]
    pd.testing.assert_frame_equal(table(out), table(one_at_a_time))
    assert folders(out) == folders(one_at_a_time)


def test_the_folder_of_a_run_whose_process_ended_unreaped_is_abandoned(tmp_path):
    """A worker killed with its sweep may stay a zombie (ended, not reaped) for a while:
    its temporary folder is abandoned all the same."""
    from experiments.store import remove_abandoned

    ended = subprocess.Popen(["true"])
    deadline = time.monotonic() + 30
    while running(ended.pid):        # ended, not reaped: a zombie
        assert time.monotonic() < deadline
        time.sleep(0.01)
    (tmp_path / f".tmp-r-0123-{ended.pid}").mkdir()
    (tmp_path / f".tmp-r-0123-{os.getpid()}").mkdir()
    assert [p.name for p in remove_abandoned(tmp_path)] == [f".tmp-r-0123-{ended.pid}"]
    ended.wait()
