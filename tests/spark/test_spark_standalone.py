"""Against a real standalone cluster (master + worker processes on loopback, see conftest):
a master without workers fails within its timeout; the spark runtime gives the inproc
results; a spark sweep survives its workers killed mid-sweep and its rerun completes only
the missing runs."""
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
from experiments.sweep import sweep
from spark_nodes.runtimes.session import build_session, stop_active_session, wait_for_executors

pytestmark = [pytest.mark.spark, pytest.mark.cluster, pytest.mark.slow]

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
    return subprocess.Popen([sys.executable, "-m", "testbed.cli", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def complete_runs(out):
    # a run being written sits in a hidden .tmp-<run>-<pid> folder until it is renamed:
    # a driver killed then leaves one behind, complete-looking but not a run
    return sorted(p.name for p in out.iterdir()
                  if p.is_dir() and not p.name.startswith(".") and is_complete(p))


# The tests run in file order on one master (see conftest). Every JVM costs a start (a
# minute or more on a slow machine), so drivers run in this process wherever a test does
# not need to kill one: the first test before any worker exists, then two workers.

@pytest.mark.full_suite   # make test keeps the runtime on the cluster below
def test_master_without_workers_fails_within_the_timeout(standalone):
    from spark_nodes.runtimes.session import SparkSetupError, build_session

    assert standalone.workers == []
    stop_active_session()
    started = time.monotonic()
    with pytest.raises(SparkSetupError, match=(
            f"no executor registered with {standalone.url} within 5 s \\(found 0, need 1\\); "
            "is a worker running")):
        build_session(standalone.url, timeout=5)
    assert time.monotonic() - started < 120


def test_spark_runtime_on_the_cluster_equals_inproc(standalone, tmp_path):
    """On two one-core workers the state partitions run on both (Spark's status store,
    recorded in meta.json) and the results equal inproc's."""
    spec = tmp_path / "on_cluster.toml"
    spec.write_text(RUNTIME_SPEC)
    for _ in range(2 - len(standalone.workers)):
        standalone.start_worker(cores=1)
    stop_active_session()
    try:
        # The run reuses this session. A session waits for one executor; both must have
        # registered before the first micro-batch, else its two tasks may both go to
        # the first one (and the state partitions stay where they were first loaded).
        spark = build_session(standalone.url, timeout=300)
        assert wait_for_executors(spark, count=2, timeout=300) == 2
        on_cluster = run(str(spec), out=tmp_path / "runs", runtime="spark",
                         spark_master=standalone.url)
    finally:   # a standalone master gives an idle application's cores to no one else
        stop_active_session()
    assert is_complete(on_cluster.path)
    meta = json.loads((on_cluster.path / "meta.json").read_text())
    assert meta["runtime"] == "spark"
    partitions = meta["backend_info"]["spark_state_partitions"]
    assert sorted(partitions) == ["0", "1"]   # two cores: two state partitions
    executors = {e for ran_on in partitions.values() for e in ran_on}
    assert len(executors) == 2 and "driver" not in executors, partitions
    nodes_on = meta["backend_info"]["spark_node_partitions"]
    assert sorted(set(nodes_on.values())) == [0, 1]   # both partitions ran nodes
    assert abs(sum(p == 0 for p in nodes_on.values()) * 2 - len(nodes_on)) <= 1
    reference = run(str(spec), out=tmp_path / "ref", runtime="inproc")
    for table in ("ledger", "results"):
        pd.testing.assert_frame_equal(getattr(on_cluster, table), getattr(reference, table))
    assert len(reference.results) > 0
    # A worker launched an executor for the application (the node programs ran there).
    assert any(standalone.root.glob("worker*/app-*/*/stderr"))


# In the full suite (make test-full, CI): make test keeps a sweep resumed after kill -9
# (tests/test_sweep_jobs.py) and the spark sweep engine (tests/spark/test_spark_sweep.py).
@pytest.mark.full_suite
def test_sweep_survives_a_killed_worker(standalone, tmp_path):
    """A sweep driver in its own process loses every worker mid-sweep and is killed; the
    rerun (in this process, on a fresh worker) completes only the missing runs."""
    spec = tmp_path / "killsweep.toml"
    spec.write_text(SWEEP_SPEC)
    out = tmp_path / "sweep"
    if not standalone.workers:
        standalone.start_worker(cores=1)
    driver = cli("sweep", str(spec), "--engine", "spark", "--spark-master", standalone.url,
                 "--out", str(out), cwd=tmp_path)
    deadline = time.monotonic() + 600
    try:
        while not (out.exists() and complete_runs(out)):
            assert driver.poll() is None, driver.communicate()[0][-3000:]
            assert time.monotonic() < deadline, "no run completed in 600 s"
            time.sleep(0.1)
        while standalone.workers:  # each worker, its executor and the executor's Python
            kill_tree(standalone.workers.pop())
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
    stop_active_session()
    try:
        frame = sweep(str(spec), out=out, engine="spark", spark_master=standalone.url)
    finally:
        stop_active_session()
    after = complete_runs(out)
    assert len(after) == 6
    for r in finished:   # finished runs are neither lost nor redone
        assert (out / r / "meta.json").stat().st_mtime_ns == before[r]
    redone = [r for r in after if (out / r / "meta.json").stat().st_mtime > killed_at]
    assert sorted(redone) == sorted(set(after) - set(finished))
    table = pd.read_parquet(out / "runs.parquet")
    assert sorted(table.seed) == [1, 2, 3, 4, 5, 6]
    assert sorted(frame.seed) == [1, 2, 3, 4, 5, 6]
    assert (table.recall == 1.0).all()
