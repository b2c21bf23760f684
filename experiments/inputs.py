"""The files a run reads beside its spec, and digests of their contents.

A run's id is the hash of its spec, which names its files (a topology, a movement trace,
a schedule, a streams csv, a profile) but does not hold them: a researcher who
regenerates ``fcd.xml`` under the same name keeps the same run id. So a run records the
SHA-256 of each file it read (``meta.json``'s ``inputs``), and a stored run whose files
have changed since is not taken as complete: it is run again (:func:`stale_inputs`).
Runs stored before this was recorded have no ``inputs`` and are trusted as they are.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "moves.tcl").write_text("$node_(0) set X_ 1.0\\n")
>>> spec = {"mobility": {"model": "ns2", "file": "moves.tcl"}, "run": {"name": "x"}}
>>> digests = input_digests(spec, d)
>>> list(digests), len(digests["mobility.file"])
(['mobility.file'], 64)
>>> _ = (d / "moves.tcl").write_text("$node_(0) set X_ 2.0\\n")
>>> changed_inputs({"inputs": digests}, spec, d)
['mobility.file']
"""
from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from pathlib import Path

#: The keys, in any table, whose string value names a file relative to the spec's
#: folder (values that are not files, as a profile's "train", are not inputs).
FILE_KEYS = frozenset({"file", "failures", "profile"})


def input_digests(spec: Mapping, base_dir) -> dict[str, str]:
    """``{"table.key": sha256 hex}`` of every file ``spec`` names that exists."""
    found = {}

    def walk(table: Mapping, prefix: str) -> None:
        for key, value in table.items():
            field = f"{prefix}{key}"
            if isinstance(value, Mapping):
                walk(value, f"{field}.")
            elif key in FILE_KEYS and isinstance(value, str):
                path = Path(base_dir) / value
                if path.is_file():
                    stat = path.stat()
                    found[field] = _digest(str(path.resolve()), stat.st_mtime_ns,
                                           stat.st_size)

    walk(spec, "")
    return found


def changed_inputs(meta: Mapping, spec: Mapping, base_dir) -> list[str]:
    """The fields whose file differs from the one a stored run (its ``meta``) read;
    none when the run recorded no inputs (stored before they were recorded)."""
    recorded = meta.get("inputs")
    if recorded is None:
        return []
    now = input_digests(spec, base_dir)
    return sorted(field for field in set(recorded) | set(now)
                  if recorded.get(field) != now.get(field))


@functools.lru_cache(maxsize=256)
def _digest(path: str, mtime_ns: int, size: int) -> str:
    """A file's SHA-256 (cached by path, modification time and size: a sweep asks for
    the same files once per point)."""
    sha = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def stale_inputs(run_dir, spec: Mapping, base_dir) -> list[str]:
    """The fields whose file changed since the run stored in ``run_dir`` read it."""
    from experiments.store import Run, RunFolderError

    try:
        meta = Run(Path(run_dir)).meta
    except RunFolderError:
        return []
    return changed_inputs(meta, spec, base_dir)


def is_current(run_dir, spec: Mapping, base_dir) -> bool:
    """A complete run of ``spec`` whose input files are those it read: nothing to redo."""
    from experiments.store import is_complete

    return is_complete(run_dir) and not stale_inputs(run_dir, spec, base_dir)
