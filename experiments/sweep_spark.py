"""The spark sweep engine: every run of a sweep is one Spark task.

Each task calls :func:`experiments.runner.run_spec`, which writes its run folder whole (a
hidden temporary folder renamed when complete) and returns an existing complete folder
untouched. So results land idempotently in the store: a task that Spark retries after
losing an executor, or a sweep started again after being stopped, only runs what is
missing, and a run that finished before a worker died is never lost or redone.

On a cluster, ``out`` and the spec's files must be on a file system every executor sees
(their absolute paths are sent to the tasks), and ``PYSPARK_PYTHON`` must name an
interpreter with this project installed on every worker.

Runs use the spec's runtime inside the task; ``runtime = "spark"`` cannot, since a task
cannot start a SparkSession of its own, nor can the ``spark-join`` baseline, whose Spark
query runs after the run (see :func:`check_runnable`).

>>> check_runnable([{"run": {"name": "a", "runtime": "inproc"}}])
>>> check_runnable([{"run": {"name": "b", "runtime": "spark"}}])
Traceback (most recent call last):
...
ValueError: run b: run.runtime = "spark" cannot run inside a Spark sweep task; sweep it with --engine local, or set run.runtime = "inproc"
>>> check_runnable([{"run": {"name": "c"}, "algorithm": {"name": "spark-join"}}])
Traceback (most recent call last):
...
ValueError: run c: algorithm.name = "spark-join" runs a Spark query of its own after the run, which a Spark sweep task cannot start; sweep it with --engine local
"""
from __future__ import annotations

import logging
import traceback
from pathlib import Path

log = logging.getLogger(__name__)


class SweepRunError(RuntimeError):
    """Some runs of a sweep failed; the others are complete in the store."""


def check_runnable(specs: list[dict]) -> None:
    """Raise ``ValueError`` for a spec a Spark task cannot run."""
    for spec in specs:
        if spec["run"].get("runtime") == "spark":
            raise ValueError(f"run {spec['run']['name']}: run.runtime = \"spark\" cannot run "
                             f"inside a Spark sweep task; sweep it with --engine local, or set "
                             f"run.runtime = \"inproc\"")
        if spec.get("algorithm", {}).get("name") == "spark-join":
            raise ValueError(f"run {spec['run']['name']}: algorithm.name = \"spark-join\" runs "
                             "a Spark query of its own after the run, which a Spark sweep "
                             "task cannot start; sweep it with --engine local")


def _run_task(item):
    """Body of one Spark task: run one spec (or return the complete folder it already has).

    Errors are returned rather than raised, so that one bad run neither fails the job nor
    makes Spark retry a deterministic failure.
    """
    index, spec, out, base_dir, source = item
    from experiments.runner import run_spec

    try:
        path = run_spec(spec, Path(out), Path(base_dir), source)
        return index, str(path), None
    except Exception:   # noqa: BLE001  (reported to the driver with its traceback)
        return index, None, traceback.format_exc()


def run_on_spark(specs: list[dict], out, base_dir=".", source: str = "<sweep>",
                 master: str | None = None, spark=None) -> list[Path]:
    """Run ``specs`` as Spark tasks (one task per run); return their run folders in order.

    Parameters
    ----------
    specs : list of dict
        Resolved specs (see :func:`experiments.sweep.plan_sweep`).
    out : path
        The sweep folder; each run lands in ``out/<run_id>``.
    base_dir : path
        Folder the specs' relative file names are relative to.
    master : str, optional
        Spark master URL; default ``local[*]`` (one task per core).
    spark : SparkSession, optional
        An existing session to use.

    Raises
    ------
    SweepRunError
        If a run failed; every other run is complete in ``out``.
    """
    if not specs:
        return []
    check_runnable(specs)
    if spark is None:
        from spark_nodes.runtimes.session import build_session

        spark = build_session("local[*]" if master is None else master,
                              app_name="testbed-sweep")
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    items = [(i, spec, str(out), str(Path(base_dir).resolve()), source)
             for i, spec in enumerate(specs)]
    sc = spark.sparkContext
    sc.setJobDescription(f"sweep {source}: {len(items)} runs")
    # One partition per run: a lost executor costs only the runs it was running.
    done = sc.parallelize(items, numSlices=len(items)).map(_run_task).collect()
    failures = [(specs[i]["run"]["name"], err) for i, _, err in done if err is not None]
    if failures:
        detail = "\n".join(f"--- {name}\n{err}" for name, err in failures)
        raise SweepRunError(f"{len(failures)} of {len(specs)} runs failed (the others are "
                            f"complete in {out}):\n{detail}")
    paths = [Path(path) for _, path, _ in sorted(done)]
    log.info("%s: %d runs complete on %s", source, len(paths), sc.master)
    return paths
