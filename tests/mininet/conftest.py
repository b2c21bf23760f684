"""Shared set-up of the Mininet backend tests (root and Debian's mininet needed)."""
import copy
import os
import tomllib
from pathlib import Path

import pytest

SPECS = Path(__file__).resolve().parents[2] / "experiments" / "specs"


def _mininet_available() -> bool:
    try:
        import mininet.net  # noqa: F401
    except ImportError:
        return False
    return True


def pytest_collection_modifyitems(config, items):
    if os.geteuid() == 0 and _mininet_available():
        return
    skip = pytest.mark.skip(reason="the mininet backend needs root and Debian's mininet")
    for item in items:
        if "mininet" in item.keywords:
            item.add_marker(skip)


def smoke_spec(**changes) -> dict:
    """experiments/specs/mininet_smoke.toml with absolute file paths and ``changes``
    (``{"section.key": value}``)."""
    raw = tomllib.loads((SPECS / "mininet_smoke.toml").read_text())
    raw = copy.deepcopy(raw)
    raw["topology"]["file"] = str(SPECS / raw["topology"]["file"])
    raw["mobility"]["file"] = str(SPECS / raw["mobility"]["file"])
    for path, value in changes.items():
        section, key = path.split(".")
        raw.setdefault(section, {})[key] = value
    return raw
