"""Load run folders and sweep tables into pandas.

A *run folder* ``<name>-<hash12>/`` holds ``spec.json``, ``meta.json``,
``summary.json`` and the parquet tables ``ledger``, ``metrics``, ``results`` and
``expected`` (see ``docs/DESIGN.md``). A *sweep folder* holds many run folders and,
once the sweep has finished, ``runs.parquet`` with one row per run.

:func:`load` turns either into one row per run; :func:`load_run` gives lazy access to
one run's tables.

Examples
--------
>>> flatten({"run": {"seed": 1}, "streams": {"nodes": [3, 7]}})
{'run.seed': 1, 'streams.nodes': '[3, 7]'}
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

log = logging.getLogger(__name__)

RUNS_TABLE = "runs.parquet"
STATUS_COMPLETE = "complete"
# Below this many candidate folders a progress bar is only noise.
PROGRESS_MIN_RUNS = 10

TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "ledger": ("time", "msg_id", "kind", "src", "dst", "hop_u", "hop_v", "size_units",
               "size_bytes", "link_cost", "cost", "lost"),
    "metrics": ("time", "node", "source", "metric", "value"),
    "results": ("group", "emitted_at", "node", "first_entered", "last_entered"),
    "expected": ("group",),
}

# Spec paths that are columns of their own (``algorithm``, ``seed``), never parameters.
NOT_PARAMETERS = frozenset({"algorithm.name", "run.seed"})


class RunFolderError(ValueError):
    """A run folder, sweep folder or one of their files is not what was expected.

    Parameters
    ----------
    path : path-like
        The offending file or folder.
    field : str
        Field, column or line within it.
    expected : str
        What was expected there.

    Examples
    --------
    >>> str(RunFolderError("out/r-1/meta.json", "status", '"complete"'))
    'out/r-1/meta.json: status: expected "complete"'
    """

    def __init__(self, path: Any, field: str, expected: str):
        self.path = Path(path)
        self.field = field
        self.expected = expected
        super().__init__(f"{path}: {field}: expected {expected}")


def _read_json(path: Path) -> dict:
    if not path.is_file():
        raise RunFolderError(path, "file", "a JSON file (missing)")
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise RunFolderError(path, f"line {exc.lineno} column {exc.colno}",
                             f"valid JSON ({exc.msg})") from exc
    if not isinstance(data, dict):
        raise RunFolderError(path, "top level", f"a JSON object, got {type(data).__name__}")
    return data


def _read_table(path: Path, columns: tuple[str, ...]) -> pd.DataFrame:
    if not path.is_file():
        raise RunFolderError(path, "file", "a parquet table (missing)")
    frame = pd.read_parquet(path)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise RunFolderError(path, f"columns {missing}",
                             f"columns {list(columns)}; found {list(frame.columns)}")
    return frame


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


def is_run_folder(path: Path) -> bool:
    """True if ``path`` looks like a run folder (has ``meta.json``)."""
    return (Path(path) / "meta.json").is_file()


@dataclass(eq=True)
class Run:
    """One run folder; JSON files and tables are read on first access and kept.

    Attributes
    ----------
    path : Path
        The run folder.
    spec, meta, summary : dict
        ``spec.json``, ``meta.json``, ``summary.json``.
    ledger, metrics, results, expected : DataFrame
        The parquet tables; their contract columns are checked when read.
    """

    path: Path

    @property
    def run_id(self) -> str:
        """Folder name, ``<name>-<hash12>``."""
        return self.path.name

    @cached_property
    def spec(self) -> dict:
        return _read_json(self.path / "spec.json")

    @cached_property
    def meta(self) -> dict:
        return _read_json(self.path / "meta.json")

    @cached_property
    def summary(self) -> dict:
        return _read_json(self.path / "summary.json")

    @cached_property
    def ledger(self) -> pd.DataFrame:
        return _read_table(self.path / "ledger.parquet", TABLE_COLUMNS["ledger"])

    @cached_property
    def metrics(self) -> pd.DataFrame:
        return _read_table(self.path / "metrics.parquet", TABLE_COLUMNS["metrics"])

    @cached_property
    def results(self) -> pd.DataFrame:
        return _read_table(self.path / "results.parquet", TABLE_COLUMNS["results"])

    @cached_property
    def expected(self) -> pd.DataFrame:
        return _read_table(self.path / "expected.parquet", TABLE_COLUMNS["expected"])

    @property
    def algorithm(self) -> str:
        """``spec["algorithm"]["name"]``."""
        try:
            return str(self.spec["algorithm"]["name"])
        except (KeyError, TypeError) as exc:
            raise RunFolderError(self.path / "spec.json", "algorithm.name",
                                 "the algorithm's name") from exc

    @property
    def duration(self) -> float:
        """``spec["run"]["duration"]`` in time units."""
        try:
            return float(self.spec["run"]["duration"])
        except (KeyError, TypeError, ValueError) as exc:
            raise RunFolderError(self.path / "spec.json", "run.duration",
                                 "a number of time units") from exc

    @property
    def seed(self) -> int:
        """The run's seed (``meta.json``, else ``spec.run.seed``)."""
        seed = self.meta.get("seed")
        if seed is None:
            seed = self.spec.get("run", {}).get("seed")
        if seed is None:
            raise RunFolderError(self.path / "meta.json", "seed", "the run's seed")
        return int(seed)


def load_run(run_dir: Any) -> Run:
    """Open one complete run folder.

    Parameters
    ----------
    run_dir : path-like
        A run folder.

    Returns
    -------
    Run
        Lazily reads its files.

    Raises
    ------
    RunFolderError
        If the folder has no ``meta.json`` or its status is not ``"complete"``.
    """
    path = Path(run_dir)
    if not path.is_dir():
        raise RunFolderError(path, "path", "a run folder (directory does not exist)")
    run = Run(path)
    status = run.meta.get("status")
    if status != STATUS_COMPLETE:
        raise RunFolderError(path / "meta.json", "status",
                             f'"{STATUS_COMPLETE}", got {status!r} (run did not finish)')
    return run


def _run_row(run: Run) -> tuple[dict, dict]:
    row = {"run_id": run.run_id, "algorithm": run.algorithm, "seed": run.seed,
           "run_dir": str(run.path)}
    for key, value in run.summary.items():
        if key in row:
            if value != row[key]:
                raise RunFolderError(run.path / "summary.json", key,
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
                raise RunFolderError(runs[0].path / "spec.json", path,
                                     "a spec path that does not clash with a summary key")
            frame[path] = values
    return frame


def _hashable(frame: pd.DataFrame) -> pd.DataFrame:
    # runs.parquet may store list-valued parameters as arrays; groupby needs scalars.
    for column in frame.columns:
        if frame[column].dtype == object and frame[column].map(
                lambda v: isinstance(v, (list, tuple, np.ndarray))).any():
            frame[column] = frame[column].map(
                lambda v: json.dumps(np.asarray(v).tolist())
                if isinstance(v, (list, tuple, np.ndarray)) else v)
    return frame


def load(directory: Any) -> pd.DataFrame:
    """Load runs into a DataFrame, one row per run.

    Parameters
    ----------
    directory : path-like
        A sweep folder with ``runs.parquet`` (returned as is, plus ``run_dir``), a
        single run folder (one row), or a folder of run folders (scanned: complete run
        folders only; incomplete ones and folders starting with ``.`` are skipped).

    Returns
    -------
    DataFrame
        Columns ``run_id, algorithm, seed, run_dir`` (folder path, or None when a row
        of ``runs.parquet`` has no folder beside it), every summary key, and one column
        per swept parameter named by its dotted spec path. When scanning folders, the
        swept parameters are the spec paths whose values differ between runs.

    Raises
    ------
    RunFolderError
        If ``directory`` does not exist or holds no complete run.
    """
    root = Path(directory)
    if not root.is_dir():
        raise RunFolderError(root, "path", "a run or sweep folder (directory does not exist)")
    table = root / RUNS_TABLE
    if table.is_file():
        runs = pd.read_parquet(table)
        if runs.empty:
            raise RunFolderError(table, "rows", "at least one run (the sweep has none yet)")
        missing = [c for c in ("run_id", "algorithm", "seed") if c not in runs.columns]
        if missing:
            raise RunFolderError(table, f"columns {missing}",
                                 "run_id, algorithm, seed and the summary keys")
        if "run_dir" not in runs.columns:
            runs["run_dir"] = [str(root / rid) if is_run_folder(root / str(rid)) else None
                               for rid in runs["run_id"]]
        log.info("loaded %d runs from %s", len(runs), table)
        return _hashable(runs)
    if is_run_folder(root):
        log.info("loading single run folder %s", root)
        return _frame([load_run(root)])
    complete: list[Run] = []
    for path in sorted(p for p in root.iterdir() if p.is_dir()):
        if path.name.startswith("."):
            log.debug("skipping temporary folder %s", path)
            continue
        if not is_run_folder(path):
            log.debug("skipping %s: not a run folder", path)
            continue
        status = _read_json(path / "meta.json").get("status")
        if status != STATUS_COMPLETE:
            log.warning("skipping %s: status %r, not %r", path, status, STATUS_COMPLETE)
            continue
        complete.append(Run(path))
    if not complete:
        raise RunFolderError(root, "contents",
                             f"{RUNS_TABLE}, a run folder, or complete run folders")
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


def run_paths(runs: pd.DataFrame) -> list[Path]:
    """Folders of the rows that have one (``run_dir`` not missing), in row order."""
    if "run_dir" not in runs.columns:
        return []
    return [Path(p) for p in runs["run_dir"] if isinstance(p, (str, Path))]
