"""Algorithm families and their report sections.

A family ``f`` contributes a section to the report through the module
``analysis.<f>_section``, which provides::

    section(runs: DataFrame, run_dirs: list[Path], out_dir: Path) -> str

``runs`` holds only the family's rows (as returned by :func:`analysis.load`),
``run_dirs`` the folders of those rows that have one, and ``out_dir`` is the report
folder (where ``report.html`` lives): the section writes its files there, named with
its family as prefix, and links them in the returned HTML fragment by paths relative to
``out_dir``. The module is imported only when the family's algorithms are present; a
section with nothing to say returns ``""`` and the report leaves it out.

Examples
--------
>>> families_present(["smj-h", "centralized", "lottery", "single-host"])
['smj', 'ctr', 'enrich', 'triggers']
>>> families_present(["centralized", "single-host"])
['ctr']
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Iterable, Mapping

FAMILIES: dict[str, frozenset[str]] = {
    "smj": frozenset({"smj-e", "smj-h", "lottery", "naive"}),
    "qjoin": frozenset({"qjoin", "k-slack", "mp-k-slack", "no-buffer", "spark-join"}),
    "ctr": frozenset({"atr", "ctr", "single-host"}),
    # with the join algorithms that may fetch plans / routes as lookups (the section
    # leaves them out when none of their runs fetches)
    "enrich": frozenset({"enrich-on-demand", "enrich-predicted", "enrich-eager",
                         "enrich-oracle", "smj-e", "smj-h", "ctr"}),
    # not a family of its own: the algorithms whose windows a [trigger] table can drive
    # (the section is empty, and left out, when every run uses the fixed clock)
    "triggers": frozenset({"qjoin", "atr", "ctr", "smj-e", "smj-h", "lottery", "naive"}),
}


class MissingFamilySection(ImportError):
    """The section module of a family whose algorithms are in the runs is missing."""


def families_present(algorithms: Iterable[str],
                     families: Mapping[str, frozenset[str]] = FAMILIES) -> list[str]:
    """Families with at least one algorithm in ``algorithms``, in ``families`` order."""
    names = set(algorithms)
    return [family for family, members in families.items() if names & members]


def section_module(family: str) -> ModuleType:
    """Import ``analysis.<family>_section`` and check it provides ``section``.

    Raises
    ------
    MissingFamilySection
        If the module does not exist or has no callable ``section``.
    """
    name = f"analysis.{family}_section"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise  # the module exists but one of its own imports failed
        raise MissingFamilySection(
            f"the runs contain algorithms of the {family!r} family, whose report section "
            f"module {name} (file analysis/{family}_section.py) is missing") from exc
    if not callable(getattr(module, "section", None)):
        raise MissingFamilySection(
            f"{name} has no function section(runs, run_dirs, out_dir) -> str")
    return module
