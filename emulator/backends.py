"""The backends a run can use, by name: ``simpy`` (virtual time) and ``mininet`` (real hosts).

A backend is a function ``run(plan, programs, tuples_by_stream, runtime, progress=False)
-> RunOutput``; both go through the one step driver (``emulator.driver``).

>>> BACKENDS.names()
['mininet', 'simpy']
"""
from __future__ import annotations

from contract.plan import Plan
from contract.registry import Registry


def run_simpy(plan: Plan, programs: dict, tuples_by_stream: dict, runtime,
              progress: bool = False):
    """Run on the simpy backend: the driver over SimPy's virtual clock."""
    from emulator.driver import execute
    from emulator.simpy_backend import SimpyBackend

    run = plan.spec.get("run", {})
    return execute(plan, programs, tuples_by_stream, runtime, drain=run.get("drain"),
                   progress=progress, backend=SimpyBackend.from_plan(plan),
                   run_ahead=run.get("run_ahead", True))


BACKENDS = Registry("backend", {"simpy": "emulator.backends:run_simpy",
                                "mininet": "emulator.mininet.backend:run"})
