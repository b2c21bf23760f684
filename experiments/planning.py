"""From a resolved spec to the :class:`~contract.plan.Plan` a run reads: topology,
dynamics, stream placement, the query, the algorithm's parameters and trigger, every
check a spec must pass before anything runs (each failure a one-line
:class:`~experiments.spec.SpecError` naming the field), and the seeds each purpose
derives from the run's.

>>> plan = build_plan(specs.resolve({"run": {"name": "doc", "duration": 3.0},
...                                  "topology": {"generator": "line", "nodes": 4},
...                                  "query": {"node": 0}}))
>>> plan.algorithm, len(plan.streams), plan.query.node
('centralized', 3, 0)
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from contract.plan import Plan, QuerySpec, StreamSpec
from emulator.network import Network
from experiments import spec as specs


def derived_seed(seed: int, purpose: str) -> int:
    """An independent seed for one purpose (topology, mobility, streams...) of a run.

    >>> derived_seed(1, "streams") == derived_seed(1, "streams") != derived_seed(1, "topology")
    True
    """
    words = [seed] + [ord(c) for c in purpose]
    return int(np.random.SeedSequence(words).generate_state(1)[0])


def field_checked(source: str, field: str, build):
    """``build()``, with any error it raises turned into a one-line
    :class:`~experiments.spec.SpecError` naming ``field`` (or the dotted field under it
    that the error already names).

    >>> field_checked("s.toml", "params.x", lambda: int("seven"))
    Traceback (most recent call last):
    ...
    experiments.spec.SpecError: s.toml: params.x: invalid literal for int() with base 10: 'seven'
    """
    try:
        return build()
    except specs.SpecError:
        raise
    except FileNotFoundError as err:
        raise specs.SpecError(source, f"{field}.file", f"no such file: {err.filename}") \
            from err
    except (ValueError, KeyError, TypeError, OSError) as err:
        text = str(err)
        # A builder's message that already names the dotted field keeps its own path.
        named, _, rest = text.partition(": ")
        if rest and (named == field or named.startswith(f"{field}.")):
            raise specs.SpecError(source, named, rest) from err
        raise specs.SpecError(source, field, text) from err


def build_plan(spec: dict, base_dir: Path = Path("."), source: str = "<spec>",
               algorithm=None) -> Plan:
    """Build topology, dynamics and stream placement and check everything the spec names.

    Every problem is a :class:`experiments.spec.SpecError` naming the field.
    ``algorithm``: the spec's algorithm if the caller looked it up already (else looked
    up here, where an unknown name is the ``algorithm.name`` error).
    """
    import topologies
    from spark_nodes.algorithms import registry
    from spark_nodes.workload import sources

    run_cfg, query_cfg = spec["run"], spec["query"]
    seed, duration = run_cfg["seed"], run_cfg["duration"]

    def checked(field, build):
        return field_checked(source, field, build)

    said = []   # the spec's warnings, one line each, for the run's summary

    def warn(field, message):
        said.append(specs.warn(source, field, message))

    topology = checked("topology", lambda: topologies.topology_from_spec(
        spec["topology"], derived_seed(seed, "topology"), base_dir, warn=warn))
    radio = checked("radio", lambda: topologies.radio_from_spec(
        spec.get("radio"), topology, spec["mobility"], warn=warn))
    dynamics = checked("mobility", lambda: topologies.dynamics_from_spec(
        topology, spec["mobility"], duration, derived_seed(seed, "mobility"), base_dir,
        radio=radio, radio_seed=derived_seed(seed, "radio")))
    nodes = sorted(topology.graph.nodes)
    if query_cfg["node"] not in topology.graph:
        raise specs.SpecError(source, "query.node", f"node {query_cfg['node']} is not in the "
                              f"topology (nodes {nodes[0]}..{nodes[-1]})")
    root = spec["routing"].get("rpl", {}).get("root")
    if spec["network"]["routing"] == "rpl" and root is not None and root not in topology.graph:
        raise specs.SpecError(source, "routing.rpl.root", f"node {root} is not in the "
                              f"topology (nodes {nodes[0]}..{nodes[-1]})")
    if spec["energy"]["model"] != "none":
        _check_energy(spec["energy"], topology, source)
    placement = checked("streams", lambda: sources.place_streams(
        spec["streams"], nodes, [query_cfg["node"]], derived_seed(seed, "placement")))
    streams = tuple(StreamSpec(name, node) for name, node in placement.items())
    query = _query(query_cfg, streams, source)
    net0 = Network(dynamics).view(0.0)
    _check_reachable(spec, topology, net0, streams, query, source)
    if algorithm is None:
        algorithm = checked("algorithm.name",
                            lambda: registry.ALGORITHMS.get(spec["algorithm"]["name"]))
    for name in spec["params"]:
        checked(f"params.{name}", lambda name=name: registry.ALGORITHMS.get(name))
    params = checked(f"params.{algorithm.name}", lambda: registry.validate_params(
        algorithm, spec["params"].get(algorithm.name, {})))
    trigger = checked(f"trigger.{algorithm.name}", lambda: _trigger(
        algorithm, spec.get("trigger", {}), streams, query.node, base_dir,
        dict(net0=net0, params=params, seed=seed)))
    if spec["mininet"]:
        from emulator.mininet.options import MininetOptions

        checked("mininet", lambda: MininetOptions.from_table(spec["mininet"], source))
    outages = tuple(topologies.node_outages(topology, spec["mobility"], duration, base_dir))
    for field, message in specs.spec_warnings(spec) + outage_warnings(
            outages, duration, spec["mobility"]):
        warn(field, message)
    return Plan(name=run_cfg["name"], seed=seed, duration=duration, step=run_cfg["step"],
                backend=run_cfg["backend"], runtime=run_cfg["runtime"],
                memory_interval=run_cfg["memory_interval"],
                bytes_per_unit=run_cfg["bytes_per_unit"], header_bytes=run_cfg["header_bytes"],
                synopsis_unit=run_cfg["synopsis_unit"], topology=topology, dynamics=dynamics,
                streams=streams, query=query, algorithm=algorithm.name, params=params,
                trigger=trigger, outages=outages, net0=net0, spec=spec,
                base_dir=Path(base_dir), warnings=tuple(said))


def _check_energy(energy: dict, topology, source: str) -> None:
    """The ``[energy]`` table against the topology: its nodes exist, and the amplifier's
    d^2 term has distances to work on (node positions)."""
    from emulator.energy import check_energy

    field_checked(source, "energy", lambda: check_energy(energy, topology.graph.nodes))
    unplaced = [u for u, pos in topology.graph.nodes(data="pos") if pos is None]
    if energy["e_amp_j_per_bit_m2"] > 0 and unplaced:
        raise specs.SpecError(source, "energy.e_amp_j_per_bit_m2", f"needs node positions "
                              f"(node {unplaced[0]} has none) for each link's length; set "
                              "it to 0 to charge the electronics only")


def _query(query_cfg: dict, streams: tuple, source: str) -> QuerySpec:
    """The ``[query]`` table with each stream's window, checked against the streams."""
    windows = {s.name: query_cfg["windows"].get(s.name, query_cfg["window"])
               for s in streams}
    unknown = sorted(set(query_cfg["windows"]) - set(windows))
    if unknown:
        raise specs.SpecError(source, f"query.windows.{unknown[0]}",
                              f"no such stream; streams: {', '.join(windows)}")
    if query_cfg["predicate"] == "distance" and query_cfg["theta"] is None:
        raise specs.SpecError(source, "query.theta", "expected a number: the distance "
                              "predicate needs a threshold")
    return QuerySpec(query_cfg["node"], query_cfg["predicate"], query_cfg["theta"], windows)


def _check_reachable(spec: dict, topology, net0, streams: tuple, query: QuerySpec,
                     source: str) -> None:
    """Refuse a run in which a stream cannot reach the query node at time 0 (unless the
    spec allows it), or an interference radius on a topology without positions."""
    allowed = spec["topology"].get("allow_disconnected", False)
    if not isinstance(allowed, bool):
        raise specs.SpecError(source, "topology.allow_disconnected",
                              f"expected true or false, got {allowed!r}")
    cut_off = sorted({s.node for s in streams if math.isinf(net0.cost(s.node, query.node))})
    if cut_off and not allowed:
        raise specs.SpecError(source, "topology", f"stream node(s) {cut_off} cannot reach "
                              f"the query node {query.node} at time 0 (the topology or the "
                              "first positions of the mobility are disconnected; check the "
                              "trace's scale against the radius); set "
                              "topology.allow_disconnected = true to run anyway")
    radius = spec["network"]["interference_radius"]
    if radius is not None and any("pos" not in d for _, d in topology.graph.nodes(data=True)):
        raise specs.SpecError(source, "network.interference_radius", "a topology whose "
                              "nodes have positions (pos) is needed; this one has none: "
                              "leave the radius out to use the links as neighbourhood")


def outage_warnings(outages, duration: float, mobility: dict) -> list[tuple[str, str]]:
    """``(field, message)`` for each node failure the run will not see: scheduled at or
    after the end of the run.

    >>> outage_warnings([(3, 40.0, 50.0), (4, 5.0, 8.0)], 30.0, {"model": "schedule"})
    [('mobility.file', 'node 3 goes down at 40, after the run ends (run.duration = 30): it never fails in this run')]
    """
    field = "mobility.file" if mobility.get("model") == "schedule" else "mobility.failures"
    return [(field, f"node {node} goes down at {down:g}, after the run ends (run.duration "
                    f"= {duration:g}): it never fails in this run")
            for node, down, _ in outages if down >= duration]


def _trigger(algorithm, tables: dict, streams, query_node: int, base_dir: Path,
             placement: dict):
    """The algorithm's ``[trigger.<name>]`` table, checked (None: the fixed clock), its
    gate's upstream resolved to a node among the algorithm's operators (``placement``:
    what an algorithm that places its operators itself needs, see
    :meth:`~spark_nodes.algorithms.registry.Algorithm.gate_operators`)."""
    from spark_nodes.algorithms.triggers.spec import trigger_spec

    table = tables.get(algorithm.name)
    if table and not algorithm.triggered:
        raise ValueError(f"trigger.{algorithm.name}: this algorithm's windows run on its "
                         "fixed clock only (no window initiator yet)")
    trigger = trigger_spec(table, f"trigger.{algorithm.name}", [s.name for s in streams],
                           Path(base_dir), algorithm.trigger_places)
    if trigger.evaluate not in algorithm.evaluate_modes:
        raise ValueError(f"trigger.{algorithm.name}.evaluate: this algorithm evaluates "
                         f"{' or '.join(algorithm.evaluate_modes)} only, got "
                         f"{trigger.evaluate!r}")
    operators = algorithm.gate_operators({s.name: s.node for s in streams}, query_node,
                                         **placement)
    return trigger.resolved_gate(f"trigger.{algorithm.name}.gate", operators)


def resolved_values(plan: Plan) -> dict:
    """What the run made of the spec's omitted keys and its files, for ``spec.json``'s
    ``resolved`` table (written beside the spec, never part of the run's id): the
    topology's cost model, radius, link defaults and size
    (:func:`topologies.topology_settings`), the streams with their defaults and where
    they were placed, the algorithm's parameters with their defaults, each stream's
    window, and under a ``log_distance`` radio its range (metres and position units,
    without shadowing), the routing protocol's parameters in time units (RFC defaults
    scaled by ``routing.seconds_per_unit``) and the mobility model's defaults."""
    from emulator.routing.params import TABLES as ROUTING_TABLES
    from emulator.routing.params import resolve as resolve_routing
    from spark_nodes.workload.sources import resolve_streams
    from topologies import topology_settings
    from topologies.radio import radio_from_table
    from topologies.spec import mobility_settings

    streams = {k: v for k, v in resolve_streams(plan.spec["streams"]).items() if k != "rates"}
    streams["placed_at"] = dict(plan.stream_nodes)
    out = {"topology": topology_settings(plan.topology), "streams": streams,
           "params": {plan.algorithm: dict(plan.params)},
           "windows": dict(plan.query.windows),
           "mobility": mobility_settings(plan.spec["mobility"])}
    routing = plan.spec["network"]["routing"]
    if routing in ROUTING_TABLES:
        out["routing"] = {routing: resolve_routing(routing, plan.spec["routing"])}
    radio = radio_from_table(plan.spec.get("radio"))
    if radio.model == "log_distance":
        out["radio"] = {"range_m": radio.range_m(),
                        "range_units": radio.range_m() / radio.meters_per_unit}
    return out


def make_plan(*, topology=None, dynamics=None, streams: dict | None = None,
              query_node: int = 0, windows=None, predicate: str = "equality",
              theta: float | None = None, algorithm: str = "test", params: dict | None = None,
              name: str = "t", seed: int = 1, duration: float = 5.0, step: float = 0.1,
              backend: str = "simpy", runtime: str = "inproc", memory_interval: float = 1.0,
              bytes_per_unit: int = 32, header_bytes: int = 24, synopsis_unit: float = 0.25,
              spec: dict | None = None, trigger=None, outages: tuple = ()) -> Plan:
    """A plan built by hand, every field with a default, for tests and benchmarks that
    drive programs, the driver or a backend directly (the runner builds its plans from
    specs with :func:`build_plan`).

    Examples
    --------
    >>> plan = make_plan(streams={"R1": 1, "R2": 2}, windows=2.0)
    >>> plan.stream_nodes, plan.query.windows, plan.dynamics is None
    ({'R1': 1, 'R2': 2}, {'R1': 2.0, 'R2': 2.0}, True)
    >>> make_plan(algorithm="centralized").params["batch"]
    1
    >>> make_plan(algorithm="centralized", params={"batch": 0})
    Traceback (most recent call last):
    ...
    ValueError: params.centralized.batch: expected an integer >= 1, got 0

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
    from spark_nodes.algorithms import registry
    from topologies import static_dynamics

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
