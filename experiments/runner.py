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

import dataclasses
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

import pandas as pd

from contract.outputs import trace_frames
from contract.plan import Plan
from experiments import spec as specs
from experiments.hints import Fates, Timers, traffic_hints
from experiments.inputs import input_digests, is_current, stale_inputs
from experiments.planning import build_plan, derived_seed, field_checked, resolved_values
from experiments.store import (PREPARED_DIR, RESOLVED, SPARK_LOG, Run, after_run_paths,
                               is_complete, write_run)
from experiments.summary import common_summary
from experiments.warmup import after_warmup, measured_groups

log = logging.getLogger(__name__)

#: Packages whose versions every run records.
RECORDED_PACKAGES = ("numpy", "pandas", "pyarrow", "simpy", "networkx", "pyspark", "matplotlib")


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
    run is copied into its folder, see :data:`experiments.store.SPARK_LOG`); None for
    runs that do not start Spark."""
    from spark_nodes.runtimes.session import LOG_ENV

    if plan.runtime != "spark" and plan.algorithm != "spark-join":
        return None
    return Path(os.environ.setdefault(LOG_ENV, str(Path(out).resolve() / SPARK_LOG)))


def _read_from(path: Path, offset: int) -> bytes:
    if not path.exists():
        return b""
    with path.open("rb") as f:
        f.seek(offset)
        return f.read()


def _execute(plan: Plan, backend, open_runtime, programs: dict, tuples: dict,
             progress: bool):
    """Run on the plan's backend under its runtime (their registries' entries)."""
    with open_runtime(plan) as runtime:
        return backend(plan, programs, tuples, runtime, progress=progress)


def _summary_keys(entry, plan: Plan, output) -> dict:
    """The keys a backend's or runtime's registry entry adds to a run's summary: its
    optional ``summary_keys(plan, output) -> dict`` (none without one).

    >>> def entry(): pass
    >>> _summary_keys(entry, None, None)
    {}
    >>> entry.summary_keys = lambda plan, output: {"wire_bytes": 7}
    >>> _summary_keys(entry, None, None)
    {'wire_bytes': 7}
    """
    hook = getattr(entry, "summary_keys", None)
    return {} if hook is None else hook(plan, output)


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


@dataclass
class Measured:
    """A finished run's outputs as its summary measures them: after the warm-up
    (:mod:`experiments.warmup`), or whole without one (``output`` itself)."""

    output: object
    ledger: pd.DataFrame
    results: pd.DataFrame
    metrics: pd.DataFrame
    #: the backend's figures the summary reads (``messages``, ``lost``, ``network``)
    info: dict
    warmup: float

    @classmethod
    def of(cls, output, warmup: float) -> "Measured":
        """``output`` (a backend's :class:`~contract.outputs.RunOutput`) after
        ``warmup``; the network's figures after it come from the backend's
        ``info["measured"]`` (:mod:`emulator.measured`), the whole run's where a
        backend has none (Mininet)."""
        info = output.info
        late = info.get("measured") if warmup > 0 else None
        if late is not None:
            info = {**info, "messages": late["messages"], "lost": late["drops_by_reason"],
                    "network": {**info.get("network", {}), **late}}
        ledger = after_warmup(output.ledger, "time", warmup)
        measured = dataclasses.replace(output, ledger=ledger, info=info) \
            if warmup > 0 else output
        return cls(measured, ledger, after_warmup(output.results, "first_entered", warmup),
                   after_warmup(output.metrics, "time", warmup),
                   {"messages": info.get("messages", 0), "lost": info.get("lost", {}),
                    "network": info.get("network", {})}, warmup)

    def memory_peaks(self, summary: dict) -> dict:
        """``memory_peak_tuples`` and ``memory_peak_bytes``: the driver's exact peaks
        of the whole run, or after a warm-up the peaks of the memory samples after it
        (the exact peak may lie in the warm-up)."""
        if self.warmup > 0:
            memory = self.metrics[(self.metrics["metric"] == "bytes")
                                  & (self.metrics["source"] == "testbed")]
            per_sample = memory.groupby("time")["value"].sum()
            return {"memory_peak_tuples": int(summary["memory_peak_sampled_tuples"]),
                    "memory_peak_bytes": int(per_sample.max()) if len(per_sample) else 0}
        info = self.output.info
        return {"memory_peak_tuples": info.get("memory_peak_total_tuples",
                                               summary["memory_peak_sampled_tuples"]),
                "memory_peak_bytes": info.get("memory_peak_total_bytes", 0)}


def run_warnings(summary: dict, fates: Fates | None = None,
                 timers: Timers | None = None, early: dict | None = None) -> list[str]:
    """What a finished run's numbers say is probably wrong with it: from its summary,
    and from what became of its data messages (``fates``, with the routing's
    ``timers``: :mod:`experiments.hints`) where the backend counts them. ``early``: the
    data messages lost before the warm-up ended, by reason; a run with no results names
    them, since an algorithm that waits for every message stalls on one lost then,
    although the figures leave it out.

    >>> run_warnings({"results": 0, "expected_results": 5, "lost_messages": 0,
    ...               "warmup": 10.0}, early={"no_route": 3})[1]
    '3 data messages were lost before the warm-up ended (no_route 3), where the figures do not count them: an algorithm that waits for every message (SMJ without resend, a synopsis centre) stalls on one; give the routing time before the algorithm sends (its timers, e.g. [routing.rpl] dao_delay) or resend'

    >>> run_warnings({"results": 0, "expected_results": 12, "lost_messages": 0})
    ['no results although the exact answer has 12 groups (is the query node reachable? lost messages: 0)']
    >>> run_warnings({"results": 0, "expected_results": 12, "lost_messages": 0},
    ...              Fates(sent=9, delivered=0), Timers("aodv", 100.0, 30.0, 0.0))[0]
    'no results although the exact answer has 12 groups (of 9 data messages sent across the network: 0 delivered, 0 lost, 9 still in flight or waiting for a route at the end)'
    """
    warnings = []
    if summary["results"] == 0 and summary["expected_results"] > 0:
        said = fates.text() if fates is not None else \
            f"is the query node reachable? lost messages: {summary.get('lost_messages', 0)}"
        warnings.append(f"no results although the exact answer has "
                        f"{summary['expected_results']} groups ({said})")
        lost_early = {r: n for r, n in sorted((early or {}).items()) if n > 0}
        if lost_early:
            reasons = ", ".join(f"{r} {n}" for r, n in lost_early.items())
            count = sum(lost_early.values())
            were = "data message was" if count == 1 else "data messages were"
            warnings.append(
                f"{count} {were} lost before the warm-up ended ({reasons}), where the figures do not count them: an algorithm "
                "that waits for every message (SMJ without resend, a synopsis centre) "
                "stalls on one; give the routing time before the algorithm sends (its "
                "timers, e.g. [routing.rpl] dao_delay) or resend")
    if fates is not None and timers is not None:
        deaths = summary.get("nodes_dead_at_end", 0)
        warnings += traffic_hints(fates, timers, deaths if deaths == deaths else 0,
                                  summary.get("first_node_death", math.nan))
    return warnings


def _lost_before_warmup(whole: dict, measured: dict) -> dict:
    """Data messages lost before the warm-up ended, by reason: the whole run's drops
    less the measured ones (empty without a warm-up or a backend that counts them).

    >>> _lost_before_warmup({"network": {"drops_by_reason": {"no_route": 5, "ttl": 1}}},
    ...                     {"network": {"drops_by_reason": {"no_route": 2, "ttl": 1}}})
    {'no_route': 3}
    """
    everything = whole.get("network", {}).get("drops_by_reason")
    counted = measured.get("network", {}).get("drops_by_reason")
    if everything is None or counted is None or everything is counted:
        return {}
    return {r: n - counted.get(r, 0) for r, n in everything.items() if n > counted.get(r, 0)}


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


def _algorithm(spec: dict):
    """The spec's algorithm from the registry, or None for an unknown name (which
    :func:`~experiments.planning.build_plan` reports in its place among the spec's
    checks)."""
    from spark_nodes.algorithms import registry

    try:
        return registry.ALGORITHMS.get(spec["algorithm"]["name"])
    except ValueError:
        return None


def _prepared(algorithm, spec: dict, out: Path, base_dir: Path, source: str) -> dict:
    """The spec after the algorithm's own preparation (see ``Algorithm.prepare``); the
    runs it needs go to ``out/<PREPARED_DIR>`` and are reused when complete."""
    if algorithm is None:
        return spec
    from spark_nodes.algorithms.registry import validate_params

    # checked here too, not only when the plan is built: a preparation (a training run)
    # uses them first, and its error would come from deep inside it
    field_checked(source, f"params.{algorithm.name}", lambda: validate_params(
        algorithm, spec["params"].get(algorithm.name, {})))
    return algorithm.prepare(spec, lambda first: Run(run_spec(
        first, Path(out) / PREPARED_DIR, base_dir, source)))


def run_spec(spec: dict, out: Path, base_dir: Path = Path("."), source: str = "<spec>",
             progress: bool = False, force: bool = False) -> Path:
    """Run a resolved spec into ``out/<run_id>`` unless that folder is already complete."""
    from emulator.backends import BACKENDS
    from spark_nodes.runtimes.registry import RUNTIMES
    from spark_nodes.workload import sources

    run_dir = Path(out) / specs.run_id(spec)
    if is_complete(run_dir) and not force:
        changed = stale_inputs(run_dir, spec, base_dir)
        if not changed:
            log.info("%s: complete already, skipped", run_dir.name)
            return run_dir
        log.warning("%s: the file of %s changed since this run was stored: running it "
                    "again", run_dir.name, ", ".join(changed))
    started = time.time()   # wall clock for provenance only; the run itself is virtual
    algorithm = _algorithm(spec)
    spec = _prepared(algorithm, spec, out, base_dir, source)
    plan = build_plan(spec, base_dir, source, algorithm)
    backend, open_runtime = BACKENDS.get(plan.backend), RUNTIMES.get(plan.runtime)
    # the streams' files (csv, soccer) are read here, not when the plan is checked
    tuples = field_checked(source, "streams", lambda: sources.generate_streams(
        spec["streams"], plan.stream_nodes, plan.duration, derived_seed(plan.seed, "streams"),
        base_dir=base_dir))
    programs = field_checked(source, f"params.{plan.algorithm}",
                             lambda: algorithm.programs(plan))
    log.info("%s: %s on %s/%s, %d nodes, %d streams, %d tuples", run_dir.name, plan.algorithm,
             plan.backend, plan.runtime, plan.topology.graph.number_of_nodes(),
             len(plan.streams), sum(len(v) for v in tuples.values()))
    spark_log = _spark_log(plan, out)
    log_start = spark_log.stat().st_size if spark_log and spark_log.exists() else 0
    output = _execute(plan, backend, open_runtime, programs, tuples, progress)
    files = _after_run(algorithm, plan, output, Path(out), run_dir.name)
    warmup = spec["run"]["warmup"]
    expected = measured_groups(algorithm.exact_answer_of_run(plan, tuples, output.metrics),
                               tuples, warmup)
    traces = trace_frames(output.traces)
    measured = Measured.of(output, warmup)
    data = RunData(measured.ledger, measured.results, output.metrics, expected,
                   plan.duration, tuples, traces)
    summary = common_summary(measured.ledger, measured.results, expected, measured.metrics,
                             plan.duration - warmup, measured.info["messages"])
    summary["warmup"] = warmup
    summary.update(measured.memory_peaks(summary))
    summary["tuples_generated"] = sum(len(v) for v in tuples.values())
    summary["lost_messages"] = sum(measured.info["lost"].values())
    summary.update(_summary_keys(backend, plan, measured.output))
    summary.update(algorithm.summarize(plan, data))
    # the spec's own were said when it was planned
    finished = run_warnings(summary, Fates.of(measured.info["network"]), Timers.of(spec),
                            early=_lost_before_warmup(output.info, measured.info))
    if warmup > 0 and "measured" not in output.info:
        finished.append(f"run.warmup: the {plan.backend} backend counts its messages "
                        "and their delivery over the whole run (the rest of the summary "
                        f"leaves out t < {warmup:g})")
    summary["warnings"] = list(plan.warnings) + finished
    for warning in finished:
        log.warning("%s: %s", run_dir.name, warning)
    summary.update(_summary_keys(open_runtime, plan, output))
    wall = time.time() - started
    summary["wall_seconds"] = wall
    meta = {"status": "complete", "run_id": run_dir.name, "seed": plan.seed,
            "algorithm": plan.algorithm, "backend": plan.backend, "runtime": plan.runtime,
            "wall_seconds": wall, "started_unix": started, "backend_info": output.info,
            "stream_nodes": plan.stream_nodes,
            # when nodes were down (failures, schedule node rows): readers of the run
            # folder need them without the spec's files
            "node_outages": [list(o) for o in plan.outages],
            # the files the spec names, by content: a run is redone when one changes
            "inputs": input_digests(spec, base_dir),
            **provenance()}
    expected_frame = expected_table(expected, tuples)
    path = write_run(Path(out), run_dir.name,
                     {"ledger": output.ledger, "metrics": output.metrics,
                      "results": output.results, "expected": expected_frame,
                      **traces, **({} if output.capture is None
                                   else {"capture": output.capture})},
                     {"spec": {**spec, RESOLVED: resolved_values(plan)}, "summary": summary,
                      "meta": meta},
                     {**files, SPARK_LOG: _read_from(spark_log, log_start)} if spark_log
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
        specs.warn_inert(resolved, source)   # as specs.load does for a file
    overrides = {"seed": seed, "runtime": runtime, "backend": backend,
                 "spark_master": spark_master}
    raw = dict(resolved)
    raw["run"] = dict(resolved["run"])
    raw["run"].update({k: v for k, v in overrides.items() if v is not None})
    resolved = specs.for_run(specs.resolve(raw, source), source)
    done = not force and is_current(Path(out) / specs.run_id(resolved), resolved, base_dir)
    return Run(run_spec(resolved, Path(out), base_dir, source, progress=progress, force=force),
               skipped=done)
