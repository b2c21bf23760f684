"""The layers' import rules (docs/DESIGN.md): the contract sits at the bottom."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at any depth of its code."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


@pytest.mark.parametrize("package", ["emulator", "topologies"])
def test_nothing_below_spark_nodes_imports_it(package):
    offenders = {str(p.relative_to(ROOT)): sorted(m for m in imported_modules(p)
                                                   if m.split(".")[0] in ("spark_nodes",
                                                                          "experiments",
                                                                          "analysis"))
                 for p in (ROOT / package).rglob("*.py")}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_only_the_run_store_names_run_folder_files():
    names = ('"summary.json"', '"meta.json"', '"spec.json"', '"ledger.parquet"',
             '"metrics.parquet"', '"results.parquet"', '"expected.parquet"')
    offenders = [str(p.relative_to(ROOT)) for package in ("experiments", "analysis")
                 for p in (ROOT / package).rglob("*.py")
                 if p.name != "store.py" and any(n in p.read_text() for n in names)]
    assert offenders == []
