"""The run store: the one module that knows what a run folder and a sweep folder hold.

A run folder ``<name>-<hash12>/`` holds ``spec.json`` (the spec, plus a ``resolved`` table
of what the run made of its omitted keys and files), ``meta.json``, ``summary.json``
and the Parquet tables ``ledger``, ``metrics``, ``results`` and ``expected`` (plus any
tables an algorithm adds, and ``spark_join.npz``, the output of a ``spark-join`` run's
Spark pass). A sweep folder holds run folders and ``runs.parquet``, one row
per run; an output folder may hold ``_prepared/`` (the runs other runs depend on) and
``spark.log``. Everything that writes or reads these files goes through here.

A run is written into a hidden temporary sibling (``.tmp-<run_id>-<pid>``) and renamed
into place only when every file is there and ``meta.json`` says ``"status": "complete"``.
An interrupted run leaves at most a hidden temporary folder, never something that looks
complete; the next run written into the same folder removes every temporary folder whose
process is gone (:func:`remove_abandoned`).

>>> import tempfile
>>> root = Path(tempfile.mkdtemp())
>>> d = write_run(root, "demo-0123", {"ledger": pd.DataFrame({"a": [1]})},
...               {"summary": {"recall": 1.0}, "meta": {"status": "complete"}})
>>> is_complete(d), d.name, Run(d).summary["recall"]
(True, 'demo-0123', 1.0)
>>> Run(d).ledger  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
experiments.store.RunFolderError: .../demo-0123/ledger.parquet: columns ['time', 'msg_id', 'kind', 'src', 'dst', 'hop_u', 'hop_v', 'size_units', 'size_bytes', 'link_cost', 'cost', 'lost']: expected the contract's columns; found ['a']
"""
from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from experiments.spec import _jsonable

#: The sweep's table, one row per run.
RUNS_TABLE = "runs.parquet"
#: Where the runs other runs depend on (training runs) go, inside the output folder.
PREPARED_DIR = "_prepared"
#: The JVM's console output of a run that started Spark, in the output folder (the whole
#: log) and in the run folder (the part written during that run).
SPARK_LOG = "spark.log"
#: ``spec.json``'s table of the values the run resolved (the topology's cost model,
#: radius, link defaults, size); not part of the spec the run's id hashes.
RESOLVED = "resolved"
#: ``meta.json``'s status of a finished run.
STATUS_COMPLETE = "complete"
#: The contract columns of each table a run folder holds (checked when read).
TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "ledger": ("time", "msg_id", "kind", "src", "dst", "hop_u", "hop_v", "size_units",
               "size_bytes", "link_cost", "cost", "lost"),
    "metrics": ("time", "node", "source", "metric", "value"),
    "results": ("group", "emitted_at", "node", "first_entered", "last_entered"),
    "expected": ("group",),
    "capture": ("msg_id", "type", "port", "ip_ttl", "payload"),
}


class RunFolderError(ValueError):
    """A run folder, sweep folder or one of their files is not what was expected.

    >>> str(RunFolderError("out/r-1/meta.json", "status", '"complete"'))
    'out/r-1/meta.json: status: expected "complete"'
    """

    def __init__(self, path: Any, field: str, expected: str):
        self.path = Path(path)
        self.field = field
        self.expected = expected
        super().__init__(f"{path}: {field}: expected {expected}")

    def __reduce__(self):   # the fields, not only the line (sent by sweep workers)
        return (type(self), (self.path, self.field, self.expected))


def read_json(path: Path) -> dict:
    """A JSON object from ``path``; a missing or malformed file is a RunFolderError."""
    path = Path(path)
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


def read_table(path: Path, required: tuple[str, ...] = (),
               columns: list[str] | None = None) -> pd.DataFrame:
    """A Parquet table from ``path`` (only ``columns``, if given) that must have the
    ``required`` columns; a missing or unreadable file is a RunFolderError.

    >>> import tempfile
    >>> bad = Path(tempfile.mkdtemp()) / "runs.parquet"; _ = bad.write_text("garbage")
    >>> read_table(bad)   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    experiments.store.RunFolderError: ...runs.parquet: file: expected a parquet table (...)
    """
    path = Path(path)
    if not path.is_file():
        raise RunFolderError(path, "file", "a parquet table (missing)")
    try:
        found = pq.read_schema(path).names
    except pa.ArrowInvalid as exc:   # not Parquet: truncated, or another file renamed
        raise RunFolderError(path, "file", f"a parquet table ({exc})") from None
    missing = [c for c in list(required) + list(columns or ()) if c not in found]
    if missing:
        raise RunFolderError(path, f"columns {list(dict.fromkeys(missing))}",
                             f"the contract's columns; found {found}")
    return pd.read_parquet(path, columns=columns)


def is_run_folder(path: Path) -> bool:
    """True if ``path`` looks like a run folder (has ``meta.json``)."""
    return (Path(path) / "meta.json").is_file()


def is_complete(run_dir: Path) -> bool:
    """Whether ``run_dir`` holds a finished run."""
    try:
        return read_json(Path(run_dir) / "meta.json").get("status") == STATUS_COMPLETE
    except RunFolderError:
        return False


@dataclass(eq=True)
class Run:
    """One run folder; JSON files and tables are read on first access and kept.

    ``spec``, ``meta``, ``summary`` are its JSON documents (``spec`` without the
    ``resolved`` table of ``spec.json``, which is :attr:`resolved`); ``ledger``,
    ``metrics``, ``results``, ``expected`` its contract tables (columns checked when
    read); any other table by :meth:`table`.
    """

    path: Path
    #: True when ``experiments.run`` found the run complete already and did not run it
    skipped: bool = field(default=False, compare=False)

    def __post_init__(self):
        self.path = Path(self.path)

    @property
    def run_id(self) -> str:
        """Folder name, ``<name>-<hash12>``."""
        return self.path.name

    def document_path(self, name: str) -> Path:
        """Where the JSON document ``name`` lives (for messages about it)."""
        return self.path / f"{name}.json"

    def document(self, name: str) -> dict:
        """The JSON document ``name`` (``spec``, ``meta``, ``summary``)."""
        return read_json(self.document_path(name))

    def table(self, name: str, columns: list[str] | None = None) -> pd.DataFrame:
        """The table ``name``, whole (its contract columns checked, where it has some) or
        only ``columns``."""
        required = TABLE_COLUMNS.get(name, ()) if columns is None else ()
        return read_table(self.path / f"{name}.parquet", required, columns)

    def has_table(self, name: str) -> bool:
        """Whether the run wrote table ``name``."""
        return (self.path / f"{name}.parquet").is_file()

    @cached_property
    def spec(self) -> dict:
        """The spec as the run was given it (the one its id hashes)."""
        return {k: v for k, v in self.document("spec").items() if k != RESOLVED}

    @cached_property
    def resolved(self) -> dict:
        """What the run resolved, e.g. ``resolved["topology"]["link_cost"]`` (``{}`` for a
        run written before spec.json held it)."""
        return self.document("spec").get(RESOLVED, {})

    @cached_property
    def meta(self) -> dict:
        return self.document("meta")

    @cached_property
    def summary(self) -> dict:
        """The run's summary; an infinite figure (JSON has no infinity: the file spells
        it ``"inf"``, e.g. the energy per result of a run without results) as a float."""
        return {k: float(v) if v in ("inf", "-inf") else v
                for k, v in self.document("summary").items()}

    @cached_property
    def ledger(self) -> pd.DataFrame:
        return self.table("ledger")

    @cached_property
    def capture(self) -> pd.DataFrame | None:
        """The packets kept for a capture (``[run] capture``), None if the run kept
        none."""
        return self.table("capture") if self.has_table("capture") else None

    @cached_property
    def metrics(self) -> pd.DataFrame:
        return self.table("metrics")

    @cached_property
    def results(self) -> pd.DataFrame:
        return self.table("results")

    @cached_property
    def expected(self) -> pd.DataFrame:
        return self.table("expected")

    @property
    def algorithm(self) -> str:
        """``spec["algorithm"]["name"]``."""
        try:
            return str(self.spec["algorithm"]["name"])
        except (KeyError, TypeError) as exc:
            raise RunFolderError(self.document_path("spec"), "algorithm.name",
                                 "the algorithm's name") from exc

    @property
    def duration(self) -> float:
        """``spec["run"]["duration"]`` in time units."""
        try:
            return float(self.spec["run"]["duration"])
        except (KeyError, TypeError, ValueError) as exc:
            raise RunFolderError(self.document_path("spec"), "run.duration",
                                 "a number of time units") from exc

    @property
    def seed(self) -> int:
        """The run's seed (``meta.json``, else ``spec.run.seed``)."""
        seed = self.meta.get("seed")
        if seed is None:
            seed = self.spec.get("run", {}).get("seed")
        if seed is None:
            raise RunFolderError(self.document_path("meta"), "seed", "the run's seed")
        return int(seed)


def load_run(run_dir: Any) -> Run:
    """Open one complete run folder; an incomplete one is a RunFolderError."""
    path = Path(run_dir)
    if not path.is_dir():
        why = "a file, not a directory" if path.exists() else "no such directory"
        raise RunFolderError(path, "path", f"a run folder ({why})")
    run = Run(path)
    status = run.meta.get("status")
    if status != STATUS_COMPLETE:
        raise RunFolderError(path / "meta.json", "status",
                             f'"{STATUS_COMPLETE}", got {status!r} (run did not finish)')
    return run


def remove_abandoned(root: Path) -> list[Path]:
    """Remove the ``.tmp-<run_id>-<pid>`` folders in ``root`` whose process has ended
    (runs that were interrupted); returns them. Folders of live processes stay.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / ".tmp-demo-0123-999999999").mkdir()
    >>> (root / f".tmp-demo-0123-{os.getpid()}").mkdir()
    >>> [p.name for p in remove_abandoned(root)]
    ['.tmp-demo-0123-999999999']
    """
    removed = []
    for path in sorted(Path(root).glob(".tmp-*-*")):
        pid = path.name.rsplit("-", 1)[-1]
        if path.is_dir() and pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)   # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        pass              # it exists, it is someone else's
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """Whether ``pid`` has ended but is not reaped yet (Linux's ``/proc`` tells; elsewhere
    never): a sweep's worker killed with its sweep stays one until its new parent reaps
    it, which some containers' init never does.

    >>> _zombie(os.getpid())
    False
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] == "Z"   # the state follows "(name)"


def write_run(root: Path, run_id: str, tables: dict, documents: dict,
              files: dict | None = None) -> Path:
    """Write DataFrames (``name.parquet``), JSON documents (``name.json``) and other files
    (``{file name: bytes}``, e.g. ``spark.log``), then rename the folder into place.
    ``meta`` is written last, so a folder is complete exactly when it has one."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    remove_abandoned(root)
    final = root / run_id
    tmp = root / f".tmp-{run_id}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    for name, frame in tables.items():
        frame.to_parquet(tmp / f"{name}.parquet", index=False)
    for name, data in (files or {}).items():
        (tmp / name).write_bytes(data)
    for name in sorted(documents, key=lambda n: n == "meta"):
        (tmp / f"{name}.json").write_text(json.dumps(_jsonable(documents[name]), indent=2,
                                                     sort_keys=True) + "\n")
    if final.exists():
        shutil.rmtree(final)   # an incomplete or stale folder of the same spec
    os.replace(tmp, final)
    return final


#: The output of a run's ``spark-join`` pass (Spark's results and state per batch, with
#: the hash of its input), kept in the run folder.
def after_run_paths(root: Path, run_id: str, output: str) -> tuple[Path, Path]:
    """Where an algorithm's pass after run ``run_id`` finds what a run of the same spec
    kept (``<run_id>/<output>``) and keeps its scratch files (a hidden
    ``.tmp-pass-<run_id>-<pid>`` folder, removed after the pass, or as abandoned once its
    process is gone).

    >>> previous, scratch = after_run_paths(Path("out"), "r-1", "spark_join.npz")
    >>> str(previous), scratch.name == f".tmp-pass-r-1-{os.getpid()}"
    ('out/r-1/spark_join.npz', True)
    """
    root = Path(root)
    return root / run_id / output, root / f".tmp-pass-{run_id}-{os.getpid()}"


def write_runs_table(out: Path, frame: pd.DataFrame) -> Path:
    """Write a sweep's ``runs.parquet`` atomically."""
    path = Path(out) / RUNS_TABLE
    tmp = path.with_name(f".runs-{os.getpid()}.parquet")
    frame.to_parquet(tmp, index=False)
    os.replace(tmp, path)
    return path


def runs_table_path(sweep_dir: Path) -> Path:
    """Where a sweep folder keeps its ``runs.parquet``."""
    return Path(sweep_dir) / RUNS_TABLE


def complete_runs(folder: Path) -> tuple[list[Run], list[tuple[Path, str]]]:
    """The complete run folders directly inside ``folder`` (sorted), and the unfinished
    ones with why. Hidden (temporary) folders and other folders are passed over."""
    complete, skipped = [], []
    for path in sorted(p for p in Path(folder).iterdir() if p.is_dir()):
        if path.name.startswith(".") or not is_run_folder(path):
            continue
        status = read_json(path / "meta.json").get("status")
        if status != STATUS_COMPLETE:
            skipped.append((path, f"status {status!r}, not {STATUS_COMPLETE!r}"))
            continue
        complete.append(Run(path))
    return complete, skipped
