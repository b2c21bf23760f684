"""Run folders: written whole or not at all.

A run is written into a hidden temporary sibling (``.tmp-<run_id>-<pid>``) and renamed
into place only when every file is there and ``meta.json`` says ``"status": "complete"``.
An interrupted run leaves at most a hidden temporary folder, never something that looks
complete; a later run of the same spec replaces it.

>>> import tempfile, pandas as pd
>>> root = Path(tempfile.mkdtemp())
>>> d = write_run(root, "demo-0123", {"t.parquet": pd.DataFrame({"a": [1]})},
...               {"meta.json": {"status": "complete"}})
>>> is_complete(d), d.name
(True, 'demo-0123')
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from experiments.spec import _jsonable


def is_complete(run_dir: Path) -> bool:
    """Whether ``run_dir`` holds a finished run."""
    meta = Path(run_dir) / "meta.json"
    if not meta.is_file():
        return False
    try:
        return json.loads(meta.read_text()).get("status") == "complete"
    except json.JSONDecodeError:
        return False


def write_run(root: Path, run_id: str, tables: dict, documents: dict) -> Path:
    """Write DataFrames (``name.parquet``) and JSON documents, then rename into place.

    ``meta.json`` is written last so that a folder is complete exactly when it has one.
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    final = root / run_id
    tmp = root / f".tmp-{run_id}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    for name, frame in tables.items():
        frame.to_parquet(tmp / name, index=False)
    for name in sorted(documents, key=lambda n: n == "meta.json"):
        (tmp / name).write_text(json.dumps(_jsonable(documents[name]), indent=2,
                                           sort_keys=True) + "\n")
    if final.exists():
        shutil.rmtree(final)   # an incomplete or stale folder of the same spec
    os.replace(tmp, final)
    return final
