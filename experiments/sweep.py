"""Sweeps: a grid of spec values times seeds, run only where a result is missing.

Each point runs into its own folder (named by the hash of its resolved spec), so a sweep
that is stopped and started again only runs what is missing. ``runs.parquet`` gets one
row per run: ``run_id``, ``algorithm``, ``seed``, every swept dotted path, and every
summary key.

Every missing point's plan is built before the first run starts (:func:`check_points`),
so that a spec error in any point — a typo in a grid path, a value one point cannot run
with — stops the sweep before its progress bar shows, naming the field and the point.
"""
from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd
from tqdm.auto import tqdm

from experiments import spec as specs
from experiments.runner import build_plan, run_spec
from experiments.store import Run, is_complete, write_runs_table

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
    :func:`experiments.runner.build_plan` checks) without running anything.

    Raises
    ------
    experiments.spec.SpecError
        For the first point that cannot run, naming the field and the point.
    """
    for spec, point in points:
        try:
            build_plan(spec, base_dir, source)
        except specs.SpecError as err:
            what = str(err).removeprefix(f"{err.source}: {err.field}: ")
            raise specs.SpecError(err.source, err.field,
                                  f"{what} (sweep point {point_text(point)})") from None


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


def sweep(spec_path, out=None, engine: str = "local", spark_master: str | None = None,
          progress: bool = True) -> pd.DataFrame:
    """Run every missing point of the sweep in ``spec_path``; return ``runs.parquet``'s frame.

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
    frame = run_table(out, points)
    write_runs_table(out, frame)
    return frame
