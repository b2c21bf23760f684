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

The algorithms each section draws come from the algorithm registry
(:func:`section_families`); only the sections, their order and the families without a
section are written here.

Examples
--------
>>> sorted(section_families()["smj"])
['lottery', 'naive', 'smj-e', 'smj-h']
>>> families_present(["smj-h", "centralized", "lottery", "single-host"])
['smj', 'ctr', 'enrich', 'triggers']
>>> families_present(["centralized", "single-host"])
['ctr']
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Callable, Iterable, Mapping

#: The report's sections in report order, each with which registered algorithms it draws.
#: A family section draws the algorithms of its family (``Algorithm.family``).
SECTIONS: dict[str, Callable] = {
    "smj": lambda algorithm: algorithm.family == "smj",
    "qjoin": lambda algorithm: algorithm.family == "qjoin",
    "ctr": lambda algorithm: algorithm.family == "ctr",
    # with the join algorithms that may fetch plans / routes as lookups (the section
    # leaves them out when none of their runs fetches)
    "enrich": lambda algorithm: algorithm.family == "enrich" or algorithm.lookups,
    # not a family of its own: the algorithms whose windows a [trigger] table can drive
    # (the section is empty, and left out, when every run uses the fixed clock)
    "triggers": lambda algorithm: algorithm.triggered,
}

#: Sections drawn by what a sweep varies rather than by an algorithm family, in report
#: order after the family sections: section name -> (heading, the swept spec keys that
#: call for it). Each is written over every run when any of its keys takes more than
#: one value (:func:`axis_sections_present`).
AXIS_SECTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "network": ("Network: routing and link order", ("network.routing", "network.reorder")),
    # [sweep.variants]: the runs table names each run's variant
    "variants": ("Variants: the same experiment on other networks", ("variant",)),
    # gated and ungated variants side by side (analysis.gate_section: "" without a gate)
    "gate": ("Gated operators: work skipped against results lost", ("variant",)),
}

#: Sections drawn by what the runs measured, after the axis sections: section name ->
#: (heading, the summary key whose presence calls for it). Each is written once per
#: variant of the network (the report's ``VARIANT_KEYS``) when any run has the key.
SUMMARY_SECTIONS: dict[str, tuple[str, str]] = {
    "energy": ("Energy and lifetime", "energy_total_j"),
}

#: Families without a section of their own (the centralized join is the baseline the
#: family sections compare with).
WITHOUT_SECTION = frozenset({"centralized"})

#: Every algorithm family the report knows.
KNOWN_FAMILIES = (frozenset(SECTIONS) - {"triggers"}) | WITHOUT_SECTION


def section_families() -> dict[str, frozenset[str]]:
    """Section name -> the registered algorithms it draws, in report order.

    Raises
    ------
    ValueError
        If a registered algorithm's family is not in :data:`KNOWN_FAMILIES`.
    """
    from spark_nodes.algorithms.registry import ALGORITHMS

    algorithms = [ALGORITHMS.get(name) for name in ALGORITHMS.names()]
    for algorithm in algorithms:
        if algorithm.family not in KNOWN_FAMILIES:
            raise ValueError(f"algorithm {algorithm.name!r} has family {algorithm.family!r}, "
                             f"which the report does not know; known: "
                             f"{', '.join(sorted(KNOWN_FAMILIES))}")
    return {section: frozenset(a.name for a in algorithms if draws(a))
            for section, draws in SECTIONS.items()}


class MissingFamilySection(ImportError):
    """The section module of a family whose algorithms are in the runs is missing."""


def families_present(algorithms: Iterable[str],
                     families: Mapping[str, frozenset[str]] | None = None) -> list[str]:
    """Families with at least one algorithm in ``algorithms``, in ``families`` order
    (default: :func:`section_families`)."""
    families = section_families() if families is None else families
    names = set(algorithms)
    return [family for family, members in families.items() if names & members]


def axis_sections_present(runs) -> list[str]:
    """The :data:`AXIS_SECTIONS` whose keys vary in ``runs`` (a runs frame).

    >>> import pandas as pd
    >>> axis_sections_present(pd.DataFrame({"network.routing": ["oracle", "aodv"]}))
    ['network']
    >>> axis_sections_present(pd.DataFrame({"network.routing": ["aodv", "aodv"]}))
    []
    """
    return [name for name, (_, keys) in AXIS_SECTIONS.items()
            if any(k in runs.columns and runs[k].nunique(dropna=False) > 1 for k in keys)]


def summary_sections_present(runs) -> list[str]:
    """The :data:`SUMMARY_SECTIONS` whose key has a value in some row of ``runs``.

    >>> import pandas as pd
    >>> summary_sections_present(pd.DataFrame({"energy_total_j": [float("nan"), 0.3]}))
    ['energy']
    >>> summary_sections_present(pd.DataFrame({"recall": [1.0]}))
    []
    """
    return [name for name, (_, key) in SUMMARY_SECTIONS.items()
            if key in runs.columns and runs[key].notna().any()]


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
