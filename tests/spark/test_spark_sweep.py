"""The spark sweep engine in local mode: runs as tasks, idempotent results, errors."""
import copy

import pandas as pd
import pytest

from experiments import spec as specs
from experiments.store import is_complete
from experiments.sweep import sweep
from experiments.sweep_spark import SweepRunError, run_on_spark

pytestmark = pytest.mark.spark

RAW = {"run": {"name": "tasks", "seed": 1, "duration": 4.0, "step": 0.1, "runtime": "inproc"},
       "topology": {"generator": "complete", "nodes": 6, "cost_range": [1, 5], "delay": 0.1},
       "streams": {"count": 3, "rate": 5.0, "key_domain": 5},
       "query": {"node": 0, "window": 1.0},
       "algorithm": {"name": "centralized"}}


def spec(seed, **run):
    raw = copy.deepcopy(RAW)
    raw["run"].update(seed=seed, **run)
    return specs.resolve(raw)


@pytest.fixture(scope="module")
def spark():
    from spark_nodes.runtimes.session import build_session

    return build_session("local[2]", partitions=2)


def test_runs_land_once_in_the_store(spark, tmp_path):
    todo = [spec(s) for s in (1, 2, 3)]
    paths = run_on_spark(todo, tmp_path, spark=spark)
    assert [p.name for p in paths] == [specs.run_id(s) for s in todo]
    assert all(is_complete(p) for p in paths)
    stamps = [(p / "meta.json").stat().st_mtime_ns for p in paths]
    again = run_on_spark(todo + [spec(4)], tmp_path, spark=spark)
    assert again[:3] == paths
    assert [(p / "meta.json").stat().st_mtime_ns for p in paths] == stamps
    assert is_complete(again[3])
    summaries = [pd.read_json(p / "summary.json", typ="series") for p in again]
    assert all(s["recall"] == 1.0 and s["results"] > 0 for s in summaries)


def test_a_failing_run_is_reported_and_the_others_complete(spark, tmp_path):
    bad = copy.deepcopy(RAW)
    bad["run"]["name"] = "broken"
    bad["query"]["node"] = 42
    todo = [spec(1), specs.resolve(bad)]
    with pytest.raises(SweepRunError, match=r"1 of 2 runs failed(.|\n)*--- broken(.|\n)*"
                                            r"query.node: node 42 is not in the topology"):
        run_on_spark(todo, tmp_path, spark=spark)
    assert is_complete(tmp_path / specs.run_id(todo[0]))


def test_spark_runtime_specs_are_refused_before_any_task(spark, tmp_path):
    with pytest.raises(ValueError, match='run.runtime = "spark" cannot run inside a Spark '
                                         'sweep task'):
        run_on_spark([spec(1), spec(2, runtime="spark")], tmp_path, spark=spark)
    assert list(tmp_path.iterdir()) == []
    join = spec(3)
    join["algorithm"] = {"name": "spark-join"}
    with pytest.raises(ValueError, match='algorithm.name = "spark-join" runs a Spark query '
                                         'of its own'):
        run_on_spark([spec(1), join], tmp_path, spark=spark)
    assert list(tmp_path.iterdir()) == []


def test_sweep_command_with_the_spark_engine(spark, tmp_path):
    path = tmp_path / "grid.toml"
    path.write_text("""
[run]
name = "grid"
duration = 3.0
step = 0.1

[topology]
generator = "complete"
nodes = 6
cost_range = [1, 5]
delay = 0.1

[streams]
rate = 5.0
key_domain = 5

[query]
node = 0
window = 1.0

[algorithm]
name = "centralized"

[sweep]
seeds = [1, 2]
[sweep.grid]
"streams.count" = [2, 3]
""")
    frame = sweep(path, out=tmp_path / "out", engine="spark", spark_master="local[2]",
                  progress=False)
    assert len(frame) == 4
    assert sorted(zip(frame["streams.count"], frame.seed)) == [(2, 1), (2, 2), (3, 1), (3, 2)]
    assert (frame.recall == 1.0).all()
    assert (tmp_path / "out" / "runs.parquet").is_file()
