"""One run: spec → plan → programs → backend and runtime → run folder.

>>> import tempfile
>>> spec = {"run": {"name": "doc", "duration": 3.0, "step": 0.05},
...         "topology": {"generator": "line", "nodes": 4, "delay": 0.05},
...         "streams": {"count": 2, "rate": 4.0, "key_domain": 3},
...         "query": {"node": 0, "window": 1.0}}
>>> result = run(spec, out=tempfile.mkdtemp())
>>> result.summary["recall"], result.summary["duplicates"]
(1.0, 0)
"""
from __future__ import annotations

import importlib.metadata
import logging
import math
import os
import platform
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from contract.outputs import trace_frames
from contract.plan import Plan, QuerySpec, StreamSpec
from emulator.network import Network
from experiments import spec as specs
from experiments.store import RESOLVED, Run, after_run_paths, is_complete, write_run
from experiments.summary import common_summary

log = logging.getLogger(__name__)

#: Packages whose versions every run records.
RECORDED_PACKAGES = ("numpy", "pandas", "pyarrow", "simpy", "networkx", "pyspark", "matplotlib")


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


def build_plan(spec: dict, base_dir: Path = Path("."), source: str = "<spec>") -> Plan:
    """Build topology, dynamics and stream placement and check everything the spec names.

    Every problem is a :class:`experiments.spec.SpecError` naming the field.
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
    dynamics = checked("mobility", lambda: topologies.dynamics_from_spec(
        topology, spec["mobility"], duration, derived_seed(seed, "mobility"), base_dir))
    nodes = sorted(topology.graph.nodes)
    if query_cfg["node"] not in topology.graph:
        raise specs.SpecError(source, "query.node", f"node {query_cfg['node']} is not in the "
                              f"topology (nodes {nodes[0]}..{nodes[-1]})")
    placement = checked("streams", lambda: sources.place_streams(
        spec["streams"], nodes, [query_cfg["node"]], derived_seed(seed, "placement")))
    streams = tuple(StreamSpec(name, node) for name, node in placement.items())
    windows = {}
    for s in streams:
        windows[s.name] = query_cfg["windows"].get(s.name, query_cfg["window"])
    unknown = sorted(set(query_cfg["windows"]) - set(windows))
    if unknown:
        raise specs.SpecError(source, f"query.windows.{unknown[0]}",
                              f"no such stream; streams: {', '.join(windows)}")
    if query_cfg["predicate"] == "distance" and query_cfg["theta"] is None:
        raise specs.SpecError(source, "query.theta", "expected a number: the distance "
                              "predicate needs a threshold")
    query = QuerySpec(query_cfg["node"], query_cfg["predicate"], query_cfg["theta"], windows)
    net0 = Network(dynamics).view(0.0)
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
    algorithm = checked("algorithm.name", lambda: registry.get(spec["algorithm"]["name"]))
    for name in spec["params"]:
        checked(f"params.{name}", lambda name=name: registry.get(name))
    params = checked(f"params.{algorithm.name}", lambda: registry.validate_params(
        algorithm, spec["params"].get(algorithm.name, {})))
    trigger = checked(f"trigger.{algorithm.name}", lambda: _trigger(
        algorithm, spec.get("trigger", {}), [s.name for s in streams], base_dir))
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


def _trigger(algorithm, tables: dict, streams: list, base_dir: Path):
    """The algorithm's ``[trigger.<name>]`` table, checked (None: the fixed clock)."""
    from spark_nodes.algorithms.triggers.spec import trigger_spec

    table = tables.get(algorithm.name)
    if table and not algorithm.triggered:
        raise ValueError(f"trigger.{algorithm.name}: this algorithm's windows run on its "
                         "fixed clock only (no window initiator yet)")
    return trigger_spec(table, f"trigger.{algorithm.name}", streams, Path(base_dir),
                        algorithm.trigger_places)


@dataclass
class RunData:
    """What an algorithm's ``summarize`` sees of a finished run."""

    ledger: pd.DataFrame
    results: pd.DataFrame
    metrics: pd.DataFrame
    expected: set
    duration: float
    tuples: dict = field(repr=False, default_factory=dict)
    #: ``{"trace_<name>": DataFrame}`` of a traced run (see ``NodeContext.trace``)
    traces: dict = field(repr=False, default_factory=dict)


def expected_table(groups, tuples_by_stream: dict) -> pd.DataFrame:
    """The exact answer as a table: ``group`` and when its last member entered the system
    (``last_entered``) — the earliest time the group could have been produced.

    >>> from spark_nodes.workload.tuples import StreamTuple
    >>> t = {"R": [StreamTuple("R", 0, 1.0, 1, None, None, 0, 1.0, 1.5)],
    ...      "S": [StreamTuple("S", 4, 2.0, 1, None, None, 1, 1.0, 2.25)]}
    >>> expected_table({"R:0|S:4"}, t).to_dict("records")
    [{'group': 'R:0|S:4', 'last_entered': 2.25}]
    """
    entered = {f"{t.stream}:{t.seq}": t.entered_at
               for stream in tuples_by_stream.values() for t in stream}
    ordered = sorted(groups)
    last = [max(entered[m] for m in g.split("|")) if g else float("nan") for g in ordered]
    return pd.DataFrame({"group": pd.array(ordered, dtype="string"),
                         "last_entered": pd.array(last, dtype="float64")})


def _spark_log(plan: Plan, out) -> Path | None:
    """Where the JVM's console output goes on the spark runtime or for the spark-join
    pass: ``TESTBED_SPARK_LOG``, by default ``OUT/spark.log`` (the part written during a
    run is copied into its folder); None for runs that do not start Spark."""
    from spark_nodes.runtimes.session import LOG_ENV

    if plan.runtime != "spark" and plan.algorithm != "spark-join":
        return None
    return Path(os.environ.setdefault(LOG_ENV, str(Path(out).resolve() / "spark.log")))


def _read_from(path: Path, offset: int) -> bytes:
    if not path.exists():
        return b""
    with path.open("rb") as f:
        f.seek(offset)
        return f.read()


def _execute(plan: Plan, programs: dict, tuples: dict, progress: bool):
    """Run on the plan's backend under its runtime (both from their registries)."""
    from emulator.backends import BACKENDS
    from spark_nodes.runtimes.registry import RUNTIMES

    backend = BACKENDS.get(plan.backend)
    with RUNTIMES.get(plan.runtime)(plan) as runtime:
        return backend(plan, programs, tuples, runtime, progress=progress)


def _after_run(algorithm, plan: Plan, output, out: Path, run_id: str) -> dict:
    """The algorithm's own pass over the finished run (:meth:`Algorithm.after_run`), with
    its scratch folder removed afterwards; the files it returns go into the run folder."""
    if algorithm.after_run_output is None:
        return {}
    previous, scratch = after_run_paths(out, run_id, algorithm.after_run_output)
    try:
        return algorithm.after_run(plan, output, previous, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def resolved_values(plan: Plan) -> dict:
    """What the run made of the spec's omitted keys and its files, for ``spec.json``'s
    ``resolved`` table (written beside the spec, never part of the run's id): the
    topology's cost model, radius, link defaults and size
    (:func:`topologies.topology_settings`), the streams with their defaults and where
    they were placed, the algorithm's parameters with their defaults, and each stream's
    window."""
    from spark_nodes.workload.sources import resolve_streams
    from topologies import topology_settings

    streams = {k: v for k, v in resolve_streams(plan.spec["streams"]).items() if k != "rates"}
    streams["placed_at"] = dict(plan.stream_nodes)
    return {"topology": topology_settings(plan.topology), "streams": streams,
            "params": {plan.algorithm: dict(plan.params)},
            "windows": dict(plan.query.windows)}


def run_warnings(summary: dict) -> list[str]:
    """What a finished run's numbers say is probably wrong with it.

    >>> run_warnings({"results": 0, "expected_results": 12, "lost_messages": 0})
    ['no results although the exact answer has 12 groups (is the query node reachable? lost messages: 0)']
    """
    warnings = []
    if summary["results"] == 0 and summary["expected_results"] > 0:
        warnings.append(f"no results although the exact answer has "
                        f"{summary['expected_results']} groups (is the query node "
                        f"reachable? lost messages: {summary.get('lost_messages', 0)})")
    return warnings


def provenance() -> dict:
    """Versions of Python, the platform, the recorded packages and the git commit."""
    versions = {"python": platform.python_version()}
    for package in RECORDED_PACKAGES:
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = None
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).parent, timeout=10).stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        commit = None
    return {"versions": versions, "git_commit": commit, "platform": platform.platform(),
            "host": platform.node()}


#: Where the runs other runs depend on (training runs) go, inside the output folder.
PREPARED_DIR = "_prepared"


def _prepared(spec: dict, out: Path, base_dir: Path, source: str) -> dict:
    """The spec after the algorithm's own preparation (see ``Algorithm.prepare``); the
    runs it needs go to ``out/_prepared`` and are reused when complete."""
    from spark_nodes.algorithms import registry

    try:
        algorithm = registry.get(spec["algorithm"]["name"])
    except ValueError:
        return spec            # build_plan names the unknown algorithm
    return algorithm.prepare(spec, lambda first: Run(run_spec(
        first, Path(out) / PREPARED_DIR, base_dir, source)))


def run_spec(spec: dict, out: Path, base_dir: Path = Path("."), source: str = "<spec>",
             progress: bool = False, force: bool = False) -> Path:
    """Run a resolved spec into ``out/<run_id>`` unless that folder is already complete."""
    from spark_nodes.algorithms import registry
    from spark_nodes.workload import sources

    run_dir = Path(out) / specs.run_id(spec)
    if is_complete(run_dir) and not force:
        log.info("%s: complete already, skipped", run_dir.name)
        return run_dir
    started = time.time()   # wall clock for provenance only; the run itself is virtual
    spec = _prepared(spec, out, base_dir, source)
    plan = build_plan(spec, base_dir, source)
    algorithm = registry.get(plan.algorithm)
    tuples = sources.generate_streams(spec["streams"], plan.stream_nodes, plan.duration,
                                      derived_seed(plan.seed, "streams"), base_dir=base_dir)
    programs = field_checked(source, f"params.{plan.algorithm}",
                             lambda: algorithm.programs(plan))
    log.info("%s: %s on %s/%s, %d nodes, %d streams, %d tuples", run_dir.name, plan.algorithm,
             plan.backend, plan.runtime, plan.topology.graph.number_of_nodes(),
             len(plan.streams), sum(len(v) for v in tuples.values()))
    spark_log = _spark_log(plan, out)
    log_start = spark_log.stat().st_size if spark_log and spark_log.exists() else 0
    output = _execute(plan, programs, tuples, progress)
    files = _after_run(algorithm, plan, output, Path(out), run_dir.name)
    expected = algorithm.exact_answer_of_run(plan, tuples, output.metrics)
    traces = trace_frames(output.traces)
    data = RunData(output.ledger, output.results, output.metrics, set(expected), plan.duration,
                   tuples, traces)
    summary = common_summary(output.ledger, output.results, data.expected, output.metrics,
                             plan.duration, output.info.get("messages", 0))
    summary["memory_peak_tuples"] = output.info.get("memory_peak_total_tuples",
                                                    summary["memory_peak_sampled_tuples"])
    summary["memory_peak_bytes"] = output.info.get("memory_peak_total_bytes", 0)
    summary["tuples_generated"] = sum(len(v) for v in tuples.values())
    summary["lost_messages"] = sum(output.info.get("lost", {}).values())
    if "bytes_on_wire" in output.info:   # mininet: what the kernel counted per interface
        summary["bytes_on_wire"] = output.info["bytes_on_wire"]
        # why the wire carries more than the ledger: pickled payloads, packet headers
        for part, value in output.info["wire_breakdown"].items():
            summary[f"wire_{part}"] = value
    summary.update(algorithm.summarize(plan, data))
    finished = run_warnings(summary)   # the spec's own were said when it was planned
    summary["warnings"] = list(plan.warnings) + finished
    for warning in finished:
        log.warning("%s: %s", run_dir.name, warning)
    if plan.runtime == "spark" and plan.backend == "simpy":
        from spark_nodes.runtimes.spark import state_summary

        summary.update(state_summary(
            output.metrics[["time", "node", "source", "metric", "value"]].itertuples(index=False)))
    wall = time.time() - started
    summary["wall_seconds"] = wall
    meta = {"status": "complete", "run_id": run_dir.name, "seed": plan.seed,
            "algorithm": plan.algorithm, "backend": plan.backend, "runtime": plan.runtime,
            "wall_seconds": wall, "started_unix": started, "backend_info": output.info,
            "stream_nodes": plan.stream_nodes,
            # when nodes were down (failures, schedule node rows): readers of the run
            # folder need them without the spec's files
            "node_outages": [list(o) for o in plan.outages],
            **provenance()}
    expected_frame = expected_table(expected, tuples)
    path = write_run(Path(out), run_dir.name,
                     {"ledger": output.ledger, "metrics": output.metrics,
                      "results": output.results, "expected": expected_frame,
                      **traces},
                     {"spec": {**spec, RESOLVED: resolved_values(plan)}, "summary": summary,
                      "meta": meta},
                     {**files, "spark.log": _read_from(spark_log, log_start)} if spark_log
                     else files)
    log.info("%s: recall %.3f, cost/time %.2f, %.1f s", run_dir.name, summary["recall"],
             summary["comm_cost_per_time"], wall)
    return path


def run(spec, out="runs", seed: int | None = None, runtime: str | None = None,
        backend: str | None = None, spark_master: str | None = None, progress: bool = False,
        force: bool = False) -> Run:
    """Run a spec (a TOML path or a dict) and return its :class:`~experiments.store.Run`.

    ``seed``, ``runtime``, ``backend`` and ``spark_master`` override the spec's ``[run]``.
    """
    if isinstance(spec, (str, Path)):
        resolved, base_dir = specs.load(spec)
        source = str(spec)
    else:
        resolved, base_dir, source = specs.resolve(spec), Path("."), "<spec>"
    overrides = {"seed": seed, "runtime": runtime, "backend": backend,
                 "spark_master": spark_master}
    raw = dict(resolved)
    raw["run"] = dict(resolved["run"])
    raw["run"].update({k: v for k, v in overrides.items() if v is not None})
    resolved = specs.for_run(specs.resolve(raw, source), source)
    return Run(run_spec(resolved, Path(out), base_dir, source, progress=progress, force=force))
