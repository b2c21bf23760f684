"""Sweeps: a grid of spec values times seeds, run only where a result is missing.

Each point runs into its own folder (named by the hash of its resolved spec), so a sweep
that is stopped and started again only runs what is missing. ``runs.parquet`` gets one
row per run: ``run_id``, ``algorithm``, ``seed``, every swept dotted path (a list-valued
one, such as a speed range, also as the number ``<path>_mean``), and every summary key.
:func:`sweep` returns that table as :func:`analysis.load` reads it back
(:func:`runs_frame`), so the two give the same frame.

Every missing point's plan is built before the first run starts (:func:`check_points`),
so that a spec error in any point — a typo in a grid path, a value one point cannot run
with — stops the sweep before its progress bar shows, naming the field and the point.
"""
from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm   # the text bar: tqdm.auto wants ipywidgets in Jupyter

from experiments import spec as specs
from experiments.planning import build_plan
from experiments.runner import run_spec
from experiments.inputs import is_current
from experiments.store import Run, is_complete, is_run_folder, write_runs_table
from experiments.sweep_pool import one_at_a_time, run_in_workers
from experiments.sweep_warnings import WarningTally

log = logging.getLogger(__name__)


def plan_sweep(spec_path) -> tuple[list[tuple[dict, dict]], Path, str]:
    """``([(resolved spec, swept values)], base_dir, source)`` of a sweep spec file."""
    spec, base_dir = specs.load(spec_path)
    return specs.expand(spec, str(spec_path)), base_dir, str(spec_path)


def point_text(point: dict) -> str:
    """A sweep point as the error messages name it.

    >>> point_text({"params.smj-h.period": 0.5, "params.lottery.period": None, "seed": 2})
    'params.smj-h.period = 0.5, seed 2'
    """
    parts = [f"{path} = {value}" for path, value in point.items()
             if path != "seed" and value is not None]
    if "seed" in point:
        parts.append(f"seed {point['seed']}")
    return ", ".join(parts)


def check_points(points: list[tuple[dict, dict]], base_dir: Path, source: str) -> None:
    """Build the plan of every point (topology, streams, parameters: everything
    :func:`experiments.planning.build_plan` checks) without running anything.

    Raises
    ------
    experiments.spec.SpecError
        For the first point that cannot run, naming the field and the point.
    """
    for spec, point in points:
        try:
            build_plan(spec, base_dir, source)
        except specs.SpecError as err:
            raise specs.SpecError(err.source, err.field,
                                  f"{err.message} (sweep point {point_text(point)})") from None


def run_table(out: Path, points: list[tuple[dict, dict]]) -> pd.DataFrame:
    """One row per complete run among ``points`` (swept values + summary)."""
    rows = []
    for spec, point in points:
        run_dir = Path(out) / specs.run_id(spec)
        if not is_complete(run_dir):
            continue
        row = {"run_id": run_dir.name, "algorithm": spec["algorithm"]["name"],
               **{k: v for k, v in point.items()}, **Run(run_dir).summary}
        row["seed"] = spec["run"]["seed"]
        rows.append(row)
    frame = pd.DataFrame(rows)
    for column in frame.columns:   # swept values may mix types (3.0 and "none")
        values = frame[column]
        if values.dtype == object and values.dropna().map(type).nunique() > 1:
            frame[column] = values.map(lambda v: v if v is None else str(v))
    return with_range_means(frame)


#: Suffix of the numeric column beside a swept axis whose values are lists of numbers
#: (a range such as ``mobility.speed = [0.01, 0.02]``): each list's mean, so that a
#: figure or a table can put the axis on a number line.
RANGE_MEAN = "_mean"


def _numbers(value) -> list[float] | None:
    """The numbers of a list value (a list, an array, or its JSON text), else None.

    >>> _numbers("[0.01, 0.03]"), _numbers([1, 2]), _numbers("none"), _numbers(3.0)
    ([0.01, 0.03], [1.0, 2.0], None, None)
    """
    if isinstance(value, str):
        if not value.startswith("["):
            return None
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if not isinstance(value, (list, tuple, np.ndarray)) or len(value) == 0:
        return None
    if not all(isinstance(v, (int, float, np.number)) and not isinstance(v, bool)
               for v in value):
        return None
    return [float(v) for v in value]


def with_range_means(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` plus ``<column>_mean`` beside each dotted (spec path) column whose values
    are all lists of numbers: the mean of each list. Columns that have one already are
    left as they are.

    >>> t = with_range_means(pd.DataFrame({"mobility.speed": [[0.01, 0.03], [0.1, 0.2]],
    ...                                    "recall": [1.0, 0.5]}))
    >>> t["mobility.speed_mean"].round(3).tolist()
    [0.02, 0.15]
    """
    for column in [c for c in frame.columns if isinstance(c, str) and "." in c
                   and not c.endswith(RANGE_MEAN)]:
        if f"{column}{RANGE_MEAN}" in frame.columns or frame[column].dtype != object:
            continue
        present = frame[column].dropna()
        lists = [_numbers(v) for v in present]
        if not lists or any(v is None for v in lists):
            continue
        means = pd.Series([float(np.mean(v)) for v in lists], index=present.index)
        frame = frame.assign(**{f"{column}{RANGE_MEAN}": means.reindex(frame.index)})
    return frame


def runs_frame(sweep_dir, runs: pd.DataFrame) -> pd.DataFrame:
    """``runs.parquet``'s rows as :func:`sweep` and :func:`analysis.load` return them.

    Adds ``run_dir``, last (the run's folder beside the table, or None where there is
    none; ``runs.parquet`` does not store it, so a sweep folder can move), the numeric
    ``<path>_mean`` of list-valued axes where an older table lacks it
    (:func:`with_range_means`), and turns list values into JSON text (groupby needs
    scalars).

    >>> runs_frame("nowhere", pd.DataFrame({"run_id": ["r-1"], "cost_range": [[1, 10]]}))
      run_id cost_range run_dir
    0    r-1    [1, 10]    None
    """
    runs = with_range_means(runs.copy())   # a table written before it had them
    if "run_dir" not in runs.columns:
        folders = [Path(sweep_dir) / str(rid) for rid in runs.get("run_id", ())]
        runs["run_dir"] = [str(f) if is_run_folder(f) else None for f in folders]
    for column in runs.columns:
        if runs[column].dtype == object and runs[column].map(
                lambda v: isinstance(v, (list, tuple, np.ndarray))).any():
            runs[column] = runs[column].map(
                lambda v: json.dumps(np.asarray(v).tolist())
                if isinstance(v, (list, tuple, np.ndarray)) else v)
    return runs


def sweep(spec_path, out=None, engine: str = "local", spark_master: str | None = None,
          progress: bool = True, jobs: int | None = None) -> pd.DataFrame:
    """Run every missing point of the sweep in ``spec_path``; return ``runs.parquet``'s
    frame, the one ``analysis.load(out)`` gives (with ``run_dir``).

    Parameters
    ----------
    engine : {"local", "spark"}
        ``"local"`` runs the points on this machine, ``"spark"`` as Spark tasks on a
        cluster (see :mod:`experiments.sweep_spark`).
    jobs : int, optional
        How many runs of the local engine run at once, each in a worker process (see
        :mod:`experiments.sweep_pool`); default: the machine's cores
        (``os.cpu_count()``). ``1`` runs them one after another in this process, and
        so does a sweep with a run on Mininet or on Spark, whatever ``jobs`` says
        (:func:`experiments.sweep_pool.one_at_a_time`; a warning says so when ``jobs``
        asked for more).

    The run ids, the run folders and the table are the same for any ``jobs``. Warnings
    are said once each, with how many runs gave them (:mod:`experiments.sweep_warnings`).
    """
    check_jobs(jobs, engine)
    points, base_dir, source = plan_sweep(spec_path)
    out = Path(out) if out is not None else Path("runs") / Path(spec_path).stem
    # one point per run id: two points of one run (a swept key that changes nothing)
    # would run it twice, and two workers must never write the same folder
    missing = list({specs.run_id(s): (s, p) for s, p in points
                    if not is_current(out / specs.run_id(s), s, base_dir)}.values())
    log.info("%s: %d runs, %d missing, engine %s", source, len(points), len(missing), engine)
    tally = WarningTally(len(missing))
    try:
        for spec, point in missing:   # before the bar, and before any folder
            with tally.records(point_text(point)):
                check_points([(spec, point)], base_dir, source)
        tally.say()
        out.mkdir(parents=True, exist_ok=True)
        if engine == "spark":
            from experiments.sweep_spark import run_on_spark

            run_on_spark([s for s, _ in missing], out, base_dir, source, master=spark_master)
        else:
            runs = [(spec, point_text(point)) for spec, point in missing]
            _run_locally(runs, out, base_dir, source, local_workers(jobs, runs, source),
                         tally, progress)
    finally:
        tally.say()
    table = write_runs_table(out, run_table(out, points))
    # Read back, so that values come as Parquet gives them to analysis.load (lists as arrays).
    return runs_frame(out, pd.read_parquet(table))


def _run_locally(runs: list[tuple[dict, str]], out: Path, base_dir: Path, source: str,
                 workers: int, tally: WarningTally, progress: bool) -> None:
    """Run ``runs`` (spec, point) here one after another, or in ``workers`` worker
    processes; the bar advances as runs complete, ``tally`` gets their warnings."""
    with tqdm(total=len(runs), desc=Path(source).stem, unit="run",
              disable=not progress) as bar:
        if workers == 1:
            for spec, point in runs:
                with tally.records(point):
                    run_spec(spec, out, base_dir, source)
                bar.update()
            return

        def done(point, said):
            tally.given(point, said)
            bar.update()

        run_in_workers(runs, out, base_dir, source, workers, done)


def check_jobs(jobs, engine: str) -> None:
    """Refuse a ``jobs`` that is not a whole number >= 1, or one given to another engine
    than ``"local"``, or an unknown engine.

    >>> check_jobs(None, "local"), check_jobs(2, "local"), check_jobs(None, "spark")
    (None, None, None)
    >>> check_jobs(0, "local")
    Traceback (most recent call last):
    ...
    ValueError: jobs: expected an integer >= 1 (runs at once), got 0
    >>> check_jobs(2, "spark")
    Traceback (most recent call last):
    ...
    ValueError: jobs: the spark engine runs one task per run on the cluster's cores; jobs is for the local engine
    """
    if engine not in ("local", "spark"):
        raise ValueError(f"unknown sweep engine {engine!r}; valid: local, spark")
    if jobs is None:
        return
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs: expected an integer >= 1 (runs at once), got {jobs!r}")
    if engine != "local":
        raise ValueError(f"jobs: the {engine} engine runs one task per run on the cluster's "
                         "cores; jobs is for the local engine")


def local_workers(jobs: int | None, runs: list[tuple[dict, str]], source: str) -> int:
    """How many runs of ``runs`` the local engine runs at once: ``jobs`` (default: the
    machine's cores), no more than there are runs, and 1 if a run must run alone (a
    warning says so when ``jobs`` asked for more).
    """
    asked = (os.cpu_count() or 1) if jobs is None else jobs
    workers = min(asked, len(runs))
    if workers <= 1:
        return 1
    for spec, _ in runs:
        alone = one_at_a_time(spec)
        if alone is None:
            continue
        field, why = alone
        if jobs is None:   # nobody asked for more: no warning
            log.info("%s: %s: %s; the sweep runs one run at a time", source, field, why)
        else:
            specs.warn(source, field, f"{why}: the sweep runs one run at a time, not {jobs}")
        return 1
    return workers
