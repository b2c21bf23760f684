"""Sweeps: a grid of spec values times seeds, run only where a result is missing.

Each point runs into its own folder (named by the hash of its resolved spec), so a sweep
that is stopped and started again only runs what is missing. ``runs.parquet`` gets one
row per run: ``run_id``, ``algorithm``, ``seed``, every swept dotted path, and every
summary key. :func:`sweep` returns that table as :func:`analysis.load` reads it back
(:func:`runs_frame`), so the two give the same frame.

Every missing point's plan is built before the first run starts (:func:`check_points`),
so that a spec error in any point — a typo in a grid path, a value one point cannot run
with — stops the sweep before its progress bar shows, naming the field and the point.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm   # the text bar: tqdm.auto wants ipywidgets in Jupyter

from experiments import spec as specs
from experiments.planning import build_plan
from experiments.runner import run_spec
from experiments.store import Run, is_complete, is_run_folder, write_runs_table

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
    return frame


def runs_frame(sweep_dir, runs: pd.DataFrame) -> pd.DataFrame:
    """``runs.parquet``'s rows as :func:`sweep` and :func:`analysis.load` return them.

    Adds ``run_dir``, last (the run's folder beside the table, or None where there is
    none; ``runs.parquet`` does not store it, so a sweep folder can move), and turns
    list values into JSON text (groupby needs scalars).

    >>> runs_frame("nowhere", pd.DataFrame({"run_id": ["r-1"], "cost_range": [[1, 10]]}))
      run_id cost_range run_dir
    0    r-1    [1, 10]    None
    """
    runs = runs.copy()
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
          progress: bool = True) -> pd.DataFrame:
    """Run every missing point of the sweep in ``spec_path``; return ``runs.parquet``'s
    frame, the one ``analysis.load(out)`` gives (with ``run_dir``).

    ``engine="spark"`` runs the points as Spark tasks (see ``experiments.sweep_spark``).
    """
    points, base_dir, source = plan_sweep(spec_path)
    out = Path(out) if out is not None else Path("runs") / Path(spec_path).stem
    missing = [(s, p) for s, p in points if not is_complete(out / specs.run_id(s))]
    log.info("%s: %d runs, %d missing, engine %s", source, len(points), len(missing), engine)
    check_points(missing, base_dir, source)   # before the bar, and before any folder
    out.mkdir(parents=True, exist_ok=True)
    if engine == "spark":
        from experiments.sweep_spark import run_on_spark

        run_on_spark([s for s, _ in missing], out, base_dir, source, master=spark_master)
    elif engine == "local":
        for spec, _ in tqdm(missing, desc=Path(source).stem, unit="run", disable=not progress):
            run_spec(spec, out, base_dir, source)
    else:
        raise ValueError(f"unknown sweep engine {engine!r}; valid: local, spark")
    table = write_runs_table(out, run_table(out, points))
    # Read back, so that values come as Parquet gives them to analysis.load (lists as arrays).
    return runs_frame(out, pd.read_parquet(table))
