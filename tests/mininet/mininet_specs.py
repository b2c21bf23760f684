"""The mininet smoke spec, loaded for the tests with absolute file paths."""
import copy
import tomllib
from pathlib import Path

SPECS = Path(__file__).resolve().parents[2] / "experiments" / "specs"


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
