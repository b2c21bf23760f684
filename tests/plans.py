"""The one way the tests build a run's :class:`~contract.plan.Plan` by hand.

Every field has a default, so a test states only what matters to it. The runner builds
plans from specs (``experiments.planning.build_plan``); tests that drive programs, the
driver or a backend directly build them here.

>>> plan = make_plan(streams={"R1": 1, "R2": 2}, windows=2.0)
>>> plan.stream_nodes, plan.query.windows, plan.dynamics is None
({'R1': 1, 'R2': 2}, {'R1': 2.0, 'R2': 2.0}, True)
>>> make_plan(algorithm="centralized").params["batch"]
1
>>> make_plan(algorithm="centralized", params={"batch": 0})
Traceback (most recent call last):
...
ValueError: params.centralized.batch: expected an integer >= 1, got 0
"""
from __future__ import annotations

from contract.plan import Plan, QuerySpec, StreamSpec
from emulator.network import Network
from spark_nodes.algorithms import registry
from topologies import static_dynamics


def make_plan(*, topology=None, dynamics=None, streams: dict | None = None,
              query_node: int = 0, windows=None, predicate: str = "equality",
              theta: float | None = None, algorithm: str = "test", params: dict | None = None,
              name: str = "t", seed: int = 1, duration: float = 5.0, step: float = 0.1,
              backend: str = "simpy", runtime: str = "inproc", memory_interval: float = 1.0,
              bytes_per_unit: int = 32, header_bytes: int = 24, synopsis_unit: float = 0.25,
              spec: dict | None = None, trigger=None, outages: tuple = ()) -> Plan:
    """A plan with test defaults.

    Parameters
    ----------
    topology, dynamics
        The network: ``dynamics`` (anything with ``epochs`` and ``snapshot(t)``), or the
        static dynamics of ``topology``; neither for a test that never builds a backend
        (a runtime alone, a program called directly). With a network, ``net0`` is its
        view at time 0, as the runner computes it.
    streams
        ``{name: node}`` in stream order.
    windows
        Each stream's window: a ``{name: length}`` table, or one length (``None``:
        unbounded) for every stream.
    algorithm, params
        ``params`` are checked and completed with the defaults of the registered
        algorithm ``algorithm``, as the runner does; a name no algorithm has (a test's
        own programs) keeps them as given.
    """
    streams = streams or {}
    if dynamics is None and topology is not None:
        dynamics = static_dynamics(topology)
    if not isinstance(windows, dict):
        windows = {s: windows for s in streams}
    params = dict(params or {})
    if algorithm in registry.ALGORITHMS.names():
        params = registry.validate_params(registry.ALGORITHMS.get(algorithm), params)
    return Plan(
        name=name, seed=seed, duration=duration, step=step, backend=backend, runtime=runtime,
        memory_interval=memory_interval, bytes_per_unit=bytes_per_unit,
        header_bytes=header_bytes, synopsis_unit=synopsis_unit, topology=topology,
        dynamics=dynamics, streams=tuple(StreamSpec(s, n) for s, n in streams.items()),
        query=QuerySpec(query_node, predicate, theta, windows), algorithm=algorithm,
        params=params, net0=None if dynamics is None else Network(dynamics).view(0.0),
        spec={} if spec is None else spec, trigger=trigger, outages=outages)
