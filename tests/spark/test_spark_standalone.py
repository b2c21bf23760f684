"""Against a real standalone cluster (master + worker processes on loopback, see conftest):
the spark runtime gives the inproc results; a spark sweep survives a worker killed
mid-sweep and its rerun completes only the missing runs."""
import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from .standalone_cluster import kill_tree
from experiments.runner import run
from experiments.store import is_complete

pytestmark = [pytest.mark.spark, pytest.mark.slow]

RUNTIME_SPEC = """
[run]
name = "on_cluster"
seed = 5
duration = 3.0
step = 0.5
drain = 1.0
memory_interval = 0.5

[topology]
generator = "complete"
nodes = 5
cost_range = [1, 5]
delay = 0.5

[streams]
count = 3
rate = 5.0
key_domain = 4

[query]
node = 0
window = 1.0

[algorithm]
name = "centralized"
"""

SWEEP_SPEC = """
[run]
name = "killsweep"
duration = 30.0
step = 0.05
runtime = "inproc"

[topology]
generator = "random_geometric"
nodes = 20
radius = 0.4
delay = 0.05

[streams]
count = 3
rate = 6.0
key_domain = 10

[query]
node = 0
window = 2.0

[algorithm]
name = "centralized"

[sweep]
seeds = [1, 2, 3, 4, 5, 6]
"""


def cli(*args, cwd):
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    return subprocess.Popen([sys.executable, "-m", "experiments.cli", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish(proc, timeout):
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_tree(proc)
        raise
    return proc.returncode, out


def complete_runs(out):
    return sorted(p.name for p in out.iterdir() if p.is_dir() and is_complete(p))


def test_spark_runtime_on_the_cluster_equals_inproc(standalone, tmp_path):
    """On two one-core workers the state partitions run on both (Spark's status store,
    recorded in meta.json) and the results equal inproc's."""
    spec = tmp_path / "on_cluster.toml"
    spec.write_text(RUNTIME_SPEC)
    second = standalone.start_worker(cores=1)
    try:
        code, log = finish(cli("run", str(spec), "--runtime", "spark", "--spark-master",
                                   standalone.url, "--out", str(tmp_path / "runs"),
                                   cwd=tmp_path), timeout=400)
    finally:   # the other tests expect the one worker of the fixture
        kill_tree(second)
        standalone.workers.remove(second)
    assert code == 0, log[-3000:]
    on_cluster = [p for p in (tmp_path / "runs").iterdir() if is_complete(p)]
    assert len(on_cluster) == 1
    meta = json.loads((on_cluster[0] / "meta.json").read_text())
    assert meta["runtime"] == "spark"
    partitions = meta["backend_info"]["spark_state_partitions"]
    assert sorted(partitions) == ["0", "1"]   # two cores: two state partitions
    executors = {e for ran_on in partitions.values() for e in ran_on}
    assert len(executors) == 2 and "driver" not in executors, partitions
    reference = run(str(spec), out=tmp_path / "ref", runtime="inproc")
    for table in ("ledger", "results"):
        pd.testing.assert_frame_equal(pd.read_parquet(on_cluster[0] / f"{table}.parquet"),
                                      getattr(reference, table))
    assert len(reference.results) > 0
    # A worker launched an executor for the application (the node programs ran there).
    assert any(standalone.root.glob("worker*/app-*/*/stderr"))


def test_sweep_survives_a_killed_worker(standalone, tmp_path):
    spec = tmp_path / "killsweep.toml"
    spec.write_text(SWEEP_SPEC)
    out = tmp_path / "sweep"
    args = ("sweep", str(spec), "--engine", "spark", "--spark-master", standalone.url,
            "--out", str(out))
    driver = cli(*args, cwd=tmp_path)
    worker = standalone.workers[-1]
    deadline = time.monotonic() + 300
    try:
        while not (out.exists() and complete_runs(out)):
            assert driver.poll() is None, driver.communicate()[0][-3000:]
            assert time.monotonic() < deadline, "no run completed in 300 s"
            time.sleep(0.1)
        kill_tree(worker)          # the worker, its executor and the executor's Python
        killed_at = time.time()
        finished = complete_runs(out)
        assert 1 <= len(finished) < 6, "the kill must land mid-sweep"
        before = {r: (out / r / "meta.json").stat().st_mtime_ns for r in finished}
        time.sleep(3)
        # No executor is left: the driver cannot progress and its runs stay as they were.
        assert complete_runs(out) == finished
    finally:
        kill_tree(driver, signal.SIGKILL)

    standalone.start_worker(cores=1)
    code, log = finish(cli(*args, cwd=tmp_path), timeout=400)
    assert code == 0, log[-3000:]
    after = complete_runs(out)
    assert len(after) == 6
    for r in finished:   # finished runs are neither lost nor redone
        assert (out / r / "meta.json").stat().st_mtime_ns == before[r]
    redone = [r for r in after if (out / r / "meta.json").stat().st_mtime > killed_at]
    assert sorted(redone) == sorted(set(after) - set(finished))
    table = pd.read_parquet(out / "runs.parquet")
    assert sorted(table.seed) == [1, 2, 3, 4, 5, 6]
    assert (table.recall == 1.0).all()


def test_master_without_workers_fails_within_the_timeout(tmp_path):
    from .standalone_cluster import Standalone

    lonely = Standalone(tmp_path)
    try:
        lonely.start_master()
        probe = ("from spark_nodes.spark_session import build_session; "
                 f"build_session({lonely.url!r}, timeout=5)")
        started = time.monotonic()
        proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                              timeout=300, env=dict(os.environ, PYSPARK_PYTHON=sys.executable))
        assert proc.returncode != 0
        assert (f"no executor registered with {lonely.url} within 5 s (found 0, need 1); "
                "is a worker running") in proc.stderr
        assert time.monotonic() - started < 120
    finally:
        lonely.stop()
