"""Load run folders and sweep tables into pandas.

What a run folder and a sweep folder hold is the run store's knowledge
(:mod:`experiments.store`); this module reads through it. :func:`load` turns a sweep
folder, a run folder or a folder of run folders into one row per run;
:func:`load_run` (from the store) gives lazy access to one run's tables.

Examples
--------
>>> flatten({"run": {"seed": 1}, "streams": {"nodes": [3, 7]}})
{'run.seed': 1, 'streams.nodes': '[3, 7]'}
"""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm   # the text bar: tqdm.auto wants ipywidgets in Jupyter

from experiments.store import (Run, RunFolderError, complete_runs, is_run_folder,  # noqa: F401
                               load_run, read_table, runs_table_path)
from experiments.sweep import runs_frame, with_range_means

log = logging.getLogger(__name__)

# Below this many candidate folders a progress bar is only noise.
PROGRESS_MIN_RUNS = 10

# Spec paths that are columns of their own (``algorithm``, ``seed``), never parameters.
NOT_PARAMETERS = frozenset({"algorithm.name", "run.seed"})


def flatten(tree: dict, prefix: str = "") -> dict[str, Any]:
    """Flatten nested spec tables to dotted paths; lists become JSON strings.

    Lists are stored as strings so that every value can be grouped on and compared.

    Parameters
    ----------
    tree : dict
        Nested mapping (a resolved spec).
    prefix : str
        Dotted path of ``tree`` itself.

    Returns
    -------
    dict
        ``{"table.key": value}``.
    """
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, f"{path}."))
        elif isinstance(value, (list, tuple)):
            flat[path] = json.dumps(value)
        else:
            flat[path] = value
    return flat


def _run_row(run: Run) -> tuple[dict, dict]:
    row = {"run_id": run.run_id, "algorithm": run.algorithm, "seed": run.seed,
           "run_dir": str(run.path)}
    for key, value in run.summary.items():
        if key in row:
            if value != row[key]:
                raise RunFolderError(run.document_path("summary"), key,
                                     f"{row[key]!r} as in spec.json/meta.json, got {value!r}")
            continue
        row[key] = json.dumps(value) if isinstance(value, (list, dict)) else value
    flat = {k: v for k, v in flatten(run.spec).items() if k not in NOT_PARAMETERS}
    return row, flat


def _frame(runs: list[Run]) -> pd.DataFrame:
    rows, specs = [], []
    for run in tqdm(runs, desc="loading runs", unit="run",
                    disable=len(runs) < PROGRESS_MIN_RUNS):
        row, flat = _run_row(run)
        rows.append(row)
        specs.append(flat)
    frame = pd.DataFrame(rows)
    # Without runs.parquet the swept parameters are unknown: take every spec path whose
    # value differs between the runs (a single run therefore has none).
    paths = sorted({p for flat in specs for p in flat})
    for path in paths:
        values = [flat.get(path) for flat in specs]
        if len({json.dumps(v, sort_keys=True, default=str) for v in values}) > 1:
            if path in frame.columns:
                raise RunFolderError(runs[0].document_path("spec"), path,
                                     "a spec path that does not clash with a summary key")
            frame[path] = values
    return with_range_means(frame)


def load(directory: Any) -> pd.DataFrame:
    """Load runs into a DataFrame, one row per run.

    Parameters
    ----------
    directory : path-like
        A sweep folder with ``runs.parquet`` (returned as is, plus ``run_dir``: the
        frame :func:`experiments.sweep.sweep` returned), a single run folder (one row),
        or a folder of run folders (scanned: complete run folders only; incomplete ones
        and folders starting with ``.`` are skipped).

    Returns
    -------
    DataFrame
        Columns ``run_id, algorithm, seed, run_dir`` (folder path, or None when a row
        of ``runs.parquet`` has no folder beside it), every summary key, and one column
        per swept parameter named by its dotted spec path (a list-valued one also as
        the number ``<path>_mean``). When scanning folders, the swept parameters are the
        spec paths whose values differ between runs.

    Raises
    ------
    RunFolderError
        If ``directory`` does not exist or holds no complete run.
    """
    root = Path(directory)
    if not root.is_dir():
        why = "a file, not a directory" if root.exists() else "no such directory"
        raise RunFolderError(root, "path", f"a run or sweep folder ({why})")
    table = runs_table_path(root)
    if table.is_file():
        runs = read_table(table)
        if runs.empty:
            raise RunFolderError(table, "rows", "at least one run (the sweep has none yet)")
        missing = [c for c in ("run_id", "algorithm", "seed") if c not in runs.columns]
        if missing:
            raise RunFolderError(table, f"columns {missing}",
                                 "run_id, algorithm, seed and the summary keys")
        log.info("loaded %d runs from %s", len(runs), table)
        return runs_frame(root, runs)
    if is_run_folder(root):
        log.info("loading single run folder %s", root)
        return _frame([load_run(root)])
    complete, skipped = complete_runs(root)
    for path, why in skipped:
        log.warning("skipping %s: %s", path, why)
    if not complete:
        raise RunFolderError(root, "contents",
                             f"{table.name}, a run folder, or complete run folders")
    log.info("loading %d complete run folders from %s", len(complete), root)
    return _frame(complete)


def param_columns(runs: pd.DataFrame) -> list[str]:
    """Swept-parameter columns of a runs table: dotted spec paths, in column order.

    ``algorithm.name`` and ``run.seed`` are left out: they are the ``algorithm`` and
    ``seed`` columns.

    Examples
    --------
    >>> runs = pd.DataFrame(columns=["run_id", "algorithm", "streams.count", "recall"])
    >>> param_columns(runs)
    ['streams.count']
    """
    return [c for c in runs.columns
            if isinstance(c, str) and "." in c and c not in NOT_PARAMETERS]


def swept_params(runs: pd.DataFrame) -> list[str]:
    """Parameter columns that take more than one value in ``runs``.

    >>> swept_params(pd.DataFrame({"algorithm": ["a", "a"], "streams.count": [3, 4],
    ...                            "query.window": [2.0, 2.0]}))
    ['streams.count']
    """
    return [c for c in param_columns(runs) if runs[c].nunique(dropna=True) > 1]


def run_paths(runs: pd.DataFrame) -> list[Path]:
    """Folders of the rows that have one (``run_dir`` not missing), in row order."""
    if "run_dir" not in runs.columns:
        return []
    return [Path(p) for p in runs["run_dir"] if isinstance(p, (str, Path))]


def run_with_ledger(run_dir: Path, error: type, why: str) -> Run:
    """The complete run in ``run_dir`` that kept its ledger, for a command that reads
    it; else ``error`` (a :class:`~experiments.spec.SpecError` class) naming the folder
    and what is missing, ``why`` saying what that leaves the command without.

    >>> import tempfile
    >>> from experiments.spec import SpecError
    >>> run_with_ledger(Path(tempfile.mkdtemp()), SpecError, "")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    experiments.spec.SpecError: /...: RUN_DIR: not a complete run folder (testbed run writes one)
    """
    if not is_run_folder(run_dir):
        raise error(str(run_dir), "RUN_DIR", "not a complete run folder (testbed run "
                    "writes one)")
    run = Run(run_dir)
    if not run.has_table("ledger"):
        raise error(str(run_dir), "ledger", f"the run kept no ledger, so {why}")
    return run
