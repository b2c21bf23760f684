"""The resolved plan of one run: what a spec becomes once topology and streams are built.

Algorithms receive a :class:`Plan` (they read it, never change it), and so does the step
driver. The runner builds it from a validated spec (``experiments.planning.build_plan``);
tests and benchmarks build theirs with ``experiments.planning.make_plan``.

>>> plan = Plan(name="doc", seed=1, duration=2.0, step=0.5, backend="simpy",
...             runtime="inproc", memory_interval=1.0, bytes_per_unit=32, header_bytes=24,
...             synopsis_unit=0.25, topology=None, dynamics=None,
...             streams=(StreamSpec("R1", 3), StreamSpec("R2", 4)),
...             query=QuerySpec(0, "equality", None, {"R1": 1.0, "R2": None}),
...             algorithm="centralized", params={}, net0=None, spec={})
>>> plan.stream_nodes, plan.stream_names
({'R1': 3, 'R2': 4}, ['R1', 'R2'])
>>> plan.run_end(), plan.run_end(0.5)   # the drain: one more duration unless given
(4.0, 2.5)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class StreamSpec:
    """One stream: its name and the node that produces it."""

    name: str
    node: int


@dataclass(frozen=True)
class QuerySpec:
    """The join query: where results go, the predicate, and each stream's window.

    ``windows[name]`` is a window length in time units, or ``None`` for unbounded.
    """

    node: int
    predicate: str
    theta: float | None
    windows: dict[str, float | None]


@dataclass(frozen=True)
class Plan:
    """Everything a run needs, resolved and validated.

    The contract imports nothing of the project, so the fields whose types live in
    other layers (``topology``, ``dynamics``, ``net0``) name them in comments.
    """

    name: str
    seed: int
    duration: float
    step: float
    backend: str
    runtime: str
    memory_interval: float
    bytes_per_unit: int
    header_bytes: int
    synopsis_unit: float
    topology: Any          # topologies.Topology | None
    dynamics: Any          # topologies.Dynamics: .epochs, .snapshot(t)
    streams: tuple[StreamSpec, ...]
    query: QuerySpec
    algorithm: str
    params: dict
    net0: Any              # emulator.network.NetView at time 0
    spec: dict = field(repr=False)
    base_dir: Path = Path(".")
    #: the ``[trigger.<algorithm>]`` table
    #: (``spark_nodes.algorithms.triggers.spec.TriggerSpec``)
    trigger: Any = None
    #: when nodes are down: ``(node, down_at, up_at)`` from the failures / schedule file
    outages: tuple = ()
    #: what the spec asks that the run will not do as written (one line each, naming the
    #: field; :func:`experiments.spec.spec_warnings`), recorded in the run's summary
    warnings: tuple = ()

    @property
    def drain(self) -> float | None:
        """The spec's ``[run] drain`` (None: unset)."""
        return self.spec.get("run", {}).get("drain")

    def run_end(self, drain: float | None = None) -> float:
        """When the run stops: ``duration`` plus the drain for messages still in flight
        (by default one more ``duration``)."""
        return self.duration + (self.duration if drain is None else drain)

    @property
    def stream_nodes(self) -> dict[str, int]:
        """``{stream name: node}``."""
        return {s.name: s.node for s in self.streams}

    @property
    def stream_names(self) -> list[str]:
        """Stream names in spec order (R1, R2, ...)."""
        return [s.name for s in self.streams]
