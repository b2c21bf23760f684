"""The layers' import rules (docs/DESIGN.md): the contract sits at the bottom."""
import ast
import doctest
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ("contract", "emulator", "topologies", "spark_nodes", "experiments", "analysis")
#: What the algorithms' examples (doctests) import of the emulator: a NetView to place
#: operators on. Their code imports nothing of it; they see the network through the
#: contract (``ctx.net``, ``plan.net0``).
ALGORITHM_EXAMPLES_USE = {"emulator.network"}


def imported_modules(source: str) -> set[str]:
    """Every module a piece of code imports, at any depth."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def example_modules(source: str) -> set[str]:
    """Every module the examples in a file's docstrings import."""
    parser, found = doctest.DocTestParser(), set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            text = ast.get_docstring(node, clean=False) or ""
            examples = parser.get_examples(text)
            found |= imported_modules("\n".join(e.source for e in examples))
    return found


def offenders(package: str, forbidden, examples: bool = False) -> dict[str, list[str]]:
    """``{file: [modules]}`` of the files under ``package`` that import a module for
    which ``forbidden(module)`` holds (in their code, and with ``examples`` in their
    doctests too)."""
    out = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        source = path.read_text()
        modules = imported_modules(source) | (example_modules(source) if examples else set())
        bad = sorted(m for m in modules if forbidden(m))
        if bad:
            out[str(path.relative_to(ROOT))] = bad
    return out


def test_the_contract_imports_nothing_of_the_project():
    assert offenders("contract", lambda m: m.split(".")[0] in PROJECT
                     and m.split(".")[0] != "contract", examples=True) == {}


@pytest.mark.parametrize("package", ["emulator", "topologies"])
def test_nothing_below_spark_nodes_imports_it(package):
    above = ("spark_nodes", "experiments", "analysis")
    assert offenders(package, lambda m: m.split(".")[0] in above) == {}


def test_the_algorithms_import_no_emulator_internals():
    assert offenders("spark_nodes/algorithms",
                     lambda m: m.split(".")[0] == "emulator") == {}
    assert offenders("spark_nodes/algorithms",
                     lambda m: m.split(".")[0] == "emulator"
                     and m not in ALGORITHM_EXAMPLES_USE, examples=True) == {}


def test_the_command_line_is_the_top_floor():
    # experiments sits below analysis; only the command line reaches every layer, and
    # nothing imports the command line
    assert offenders("experiments", lambda m: m.split(".")[0] == "analysis") == {}
    for package in ("contract", "topologies", "emulator", "spark_nodes", "experiments",
                    "analysis"):
        assert offenders(package, lambda m: m.split(".")[0] == "testbed") == {}


def test_only_the_run_store_names_run_folder_files():
    names = [f"{q}{name}{q}" for q in "\"'" for name in (
        "summary.json", "meta.json", "spec.json", "ledger.parquet", "metrics.parquet",
        "results.parquet", "expected.parquet", "runs.parquet", "spark.log", "_prepared")]
    naming = [str(p.relative_to(ROOT)) for package in ("experiments", "analysis")
              for p in (ROOT / package).rglob("*.py")
              if p.name != "store.py" and any(n in p.read_text() for n in names)]
    assert naming == []
