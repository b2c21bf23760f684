"""An algorithm parameter of a run as the run used it.

``spec.json``'s ``resolved`` table holds every default the run used, its algorithm's
parameters included (``resolved["params"][name][key]``); a run written before it held
them has only the spec's own ``[params.<name>]`` table, which may be absent. Then the
registry's default (:mod:`spark_nodes.algorithms.registry`) is the value the run used.
Never a ``KeyError``: a key no source knows is None.

Examples
--------
>>> run_param({}, {}, "k-slack", "K")
0.1
>>> run_param({"params": {"k-slack": {"K": 0.5}}}, {}, "k-slack", "K")
0.5
>>> run_param({}, {"params": {"k-slack": {"K": 0.3}}}, "k-slack", "K")
0.3
>>> run_param({}, {}, "k-slack", "nosuch") is None
True
"""
from __future__ import annotations

from typing import Any

from experiments.store import Run
from spark_nodes.algorithms.registry import ALGORITHMS


def run_param(resolved: dict, spec: dict, algorithm: str, key: str) -> Any:
    """``key`` of ``algorithm``: from ``resolved``, else the spec's ``[params]`` table,
    else the registry's default; None when none of them has it."""
    for source in (resolved, spec):
        table = source.get("params", {}).get(algorithm, {})
        if key in table:
            return table[key]
    try:
        declared = ALGORITHMS.get(algorithm).params
    except ValueError:       # an algorithm this checkout no longer has
        return None
    return declared[key].default if key in declared else None


def param_of(run: Run, algorithm: str, key: str) -> Any:
    """:func:`run_param` of a run folder."""
    return run_param(run.resolved, run.spec, algorithm, key)
