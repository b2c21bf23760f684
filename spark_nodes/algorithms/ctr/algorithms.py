"""The registered algorithms "atr", "ctr" and "single-host" (docs/ALGORITHMS.md#atr-and-ctr).

All three run the same pipeline: sources send every tuple to the diffusion node
(``diffusion_node``, default: least total path cost to the sources), hosts join, the
fusion node (the query node) emits. "single-host" is the baseline: the centralized
join on one host fed in event-time order.

Examples
--------
>>> from spark_nodes.algorithms import registry
>>> sorted(n for n in registry.ALGORITHMS.names() if n in ("atr", "ctr", "single-host"))
['atr', 'ctr', 'single-host']
>>> registry.validate_params(registry.ALGORITHMS.get("ctr"), {"hosts": 8})["store"]
'cover'
"""
from __future__ import annotations

import math
from itertools import pairwise

import pandas as pd

from spark_nodes.algorithms.ctr.ctr import STORE_MODES
from spark_nodes.algorithms.ctr.entry_lookup import (PARAMS as ROUTE_PARAMS, ROUTE_MODES,
                                                     route_options)
from spark_nodes.algorithms.ctr.load import check_weights
from spark_nodes.algorithms.ctr.overhead import (atr_overhead, ctr_overhead,
                                                 ctr_overhead_from_spec)
from spark_nodes.algorithms.ctr.placement import diffusion_node, host_nodes
from spark_nodes.algorithms.ctr.programs import DistributedJoinNode, Setup
from spark_nodes.algorithms.enrich.lookup_summary import fetch_summary
from spark_nodes.algorithms.registry import ALGORITHMS, Algorithm, Param, check_param
from spark_nodes.algorithms.triggers.conditions import KINDS
from spark_nodes.algorithms.triggers.summary import evaluations, windows_fired
from spark_nodes.workload.sources import key_probabilities, resolve_streams

NONE = type(None)

_PLACEMENT = {
    "diffusion_node": Param((int, NONE), None, "node of the diffusion operator "
                            "(default: least total path cost to the sources)"),
    "host_nodes": Param((list, NONE), None, "host nodes (default: a seeded draw)"),
    "slack": Param((float,), 0.5, "time the diffusion node waits past a range's end "
                   "before closing it; later tuples are late (dropped, counted)", low=0),
}
_HOSTS = {
    "hosts": Param((int,), 4, "number of hosts", low=1),
    "segment": Param((float,), 1.0, "segment length T", low=0, low_open=True),
    "weights": Param((list,), [0.4, 0.4, 0.2], "load weights [cpu, memory, bandwidth]"),
    "capacity": Param((list,), [10000.0, 1000.0, 1000.0],
                      "host capacity [probes/time, tuples, units/time] for the load"),
    "report_interval": Param((float, NONE), None, "host load report period "
                             "(default: the segment length)", low=0, low_open=True),
}



class _DistributedJoin(Algorithm):
    """Shared placement, validation and summary of the three algorithms."""

    family = "ctr"
    scheme = ""
    #: a trigger (ATR, CTR) is measured where the segments are cut
    trigger_places = {"here": KINDS}

    def setup(self, plan) -> Setup:
        p = plan.params
        name = self.name
        sources = [s.node for s in plan.streams]
        diff, hosts = self.placed(plan.net0, sources, p, plan.seed)
        segment = p.get("segment", 1.0)
        flush = self.flush_period(p)
        report = p.get("report_interval")
        if report is None:
            report = segment
        weights = p.get("weights", [1.0, 0.0, 0.0])
        check_param(name, p, "weights", isinstance(weights, list) and len(weights) == 3 and all(
            isinstance(w, (int, float)) and not isinstance(w, bool) for w in weights),
            "three numbers")
        weights = check_weights(weights, f"params.{name}.weights")
        capacity = p.get("capacity", [1.0, 1.0, 1.0])
        check_param(name, p, "capacity", len(capacity) == 3 and all(
            isinstance(c, (int, float)) and not isinstance(c, bool) and c > 0
            for c in capacity), "three numbers > 0")
        q = plan.query
        windows = {s: math.inf if q.windows[s] is None else float(q.windows[s])
                   for s in plan.stream_names}
        return Setup(
            scheme=self.scheme, streams=tuple(plan.stream_names), windows=windows,
            predicate=q.predicate, theta=q.theta, diffusion=diff, fusion=q.node,
            hosts=hosts, sources=tuple(sorted(set(sources))), segment=segment, flush=flush, slack=float(p["slack"]),
            report_interval=float(report), weights=weights,
            capacity=tuple(float(c) for c in capacity),
            bytes_per_unit=plan.bytes_per_unit, synopsis_unit=plan.synopsis_unit,
            **self.extra(p), **self.trigger_setup(plan, p, diff))

    def placed(self, net, sources, p: dict, seed: int) -> tuple[int, tuple]:
        """``(diffusion node, hosts)`` where a run with these parameters puts them."""
        diff = p["diffusion_node"]
        if diff is None:
            diff = diffusion_node(net, sources)
        check_param(self.name, p, "diffusion_node", diff in net.nodes,
                    "a node of the topology")
        hosts = host_nodes(net, p.get("hosts", 1), p["host_nodes"], seed,
                           field=f"params.{self.name}.host_nodes")
        return diff, tuple(hosts)

    def flush_period(self, p: dict) -> float:
        return p["segment"]

    def trigger_setup(self, plan, p: dict, diffusion: int) -> dict:
        """Setup fields of a ``[trigger.<name>]`` table (ATR, CTR: its windows cut
        segments; conditions measured at the diffusion node, placed at ``diffusion``)."""
        trigger = getattr(plan, "trigger", None)
        if not self.triggered or trigger is None or trigger.clock:
            return {}
        if trigger.measured_at("sources"):
            raise ValueError(f"trigger.{self.name}: {self.name.upper()}'s trigger measures "
                             "at the diffusion node only (at = \"here\"); conditions at "
                             "the sources are QJoin's and SMJ's")
        return {"trigger": trigger}

    def extra(self, p: dict) -> dict:
        return {}

    def programs(self, plan) -> dict:
        setup = self.setup(plan)
        sources = {s.node for s in plan.streams}
        nodes = sources | {setup.diffusion, setup.fusion} | set(setup.hosts)
        return {u: DistributedJoinNode(setup, u, u in sources) for u in sorted(nodes)}

    def summarize(self, plan, run) -> dict:
        setup = self.setup(plan)
        duration = float(run.duration)
        m = run.metrics
        mine = m[m["source"] == plan.algorithm] if not m.empty else m
        out = self.overhead(mine, setup, duration)
        out.update(self.overhead_from_spec(plan, setup))
        out["late_tuples"] = float(mine.loc[mine["metric"] == "late", "value"].sum()) \
            if not mine.empty else 0.0
        out.update(host_summary(m, mine, run.results, setup.hosts, duration))
        if self.triggered:
            out.update(windows_fired(mine, setup.trigger))
        out["diffusion_node"] = setup.diffusion
        out["hosts_used"] = len(setup.hosts)
        out["host_nodes"] = ",".join(str(h) for h in setup.hosts)
        return out

    def overhead(self, metrics, setup: Setup, duration: float) -> dict:
        extra = sum(metrics.loc[metrics["metric"].str.startswith("copies:"), "value"]) - \
            sum(metrics.loc[metrics["metric"].str.startswith("closed:"), "value"]) \
            if not metrics.empty else 0.0
        return {"overhead_measured": float(extra) / duration, "overhead_predicted": 0.0}

    def overhead_from_spec(self, plan, setup: Setup) -> dict:
        """The overhead predicted from the spec alone, where the scheme has a model."""
        return {}


def host_summary(metrics: pd.DataFrame, mine: pd.DataFrame, results: pd.DataFrame,
                 hosts, duration: float) -> dict:
    """Per-host load and memory: imbalance = max / mean over the hosts.

    Load is the join work (``probes``) and, separately, the results each host produced;
    memory is the testbed's sampled ``tuples`` at the host nodes (every role there).
    """
    hosts = list(hosts)
    probes = mine[mine["metric"] == "probes"].groupby("node")["value"].sum() \
        if not mine.empty else pd.Series(dtype=float)
    work = [float(probes.get(h, 0.0)) for h in hosts]
    produced = results["host"].value_counts() if "host" in results and len(results) \
        else pd.Series(dtype=float)
    made = [float(produced.get(h, 0.0)) for h in hosts]
    mem = metrics[(metrics["source"] == "testbed") & (metrics["metric"] == "tuples")] \
        if not metrics.empty else metrics
    per_host = mem[mem["node"].isin(hosts)].groupby("node")["value"]
    mean_mem = [float(per_host.mean().get(h, 0.0)) for h in hosts] if len(mem) else \
        [0.0] * len(hosts)
    peak_mem = [float(per_host.max().get(h, 0.0)) for h in hosts] if len(mem) else \
        [0.0] * len(hosts)

    def ratio(v):
        mean = sum(v) / len(v)
        return max(v) / mean if mean > 0 else 1.0

    return {
        "host_load_imbalance": ratio(work),
        "host_results_imbalance": ratio(made),
        "host_probes_total": sum(work),
        "host_memory_mean_tuples": sum(mean_mem) / len(mean_mem),
        "host_memory_peak_tuples": max(peak_mem),
        "host_memory_imbalance": ratio(mean_mem),
        "results_per_time": float(len(results)) / duration,
    }


class Atr(_DistributedJoin):
    """Aligned tuple routing: a multi-way window join whose segments move from host to host
    (:mod:`spark_nodes.algorithms.ctr.atr`)."""

    name = "atr"
    scheme = "atr"
    triggered = True
    params = {**_PLACEMENT, **_HOSTS,
              "flush": Param((float, NONE), None, "flush period of closed tuples "
                             "(default: segment / 2)", low=0, low_open=True),
              "delta_T": Param((float,), 0.25, "segment adaptation step ΔT", low=0),
              "adapt": Param((bool,), False, "adapt T by probing T ± ΔT"),
              "adapt_every": Param((int,), 4, "segments between two probes of T ± ΔT",
                                   low=1),
              "master_switch": Param((bool,), True, "switch the master when rates change"),
              "switch_margin": Param((float,), 0.25, "relative rate lead a slave needs "
                                     "to become the master", low=0)}

    def flush_period(self, p: dict) -> float:
        return p["flush"] if p["flush"] is not None else p["segment"] / 2

    def extra(self, p: dict) -> dict:
        return {"delta_T": p["delta_T"], "adapt": p["adapt"], "adapt_every": p["adapt_every"],
                "master_switch": p["master_switch"], "switch_margin": p["switch_margin"]}

    evaluate_modes = ("on_arrival", "on_window")
    #: the diffusion node cuts segments ("here"); each host may hold its tuples for its
    #: own window ("hosts") or measure for its siblings, which it signals ("siblings")
    trigger_places = {"here": KINDS, "hosts": KINDS, "siblings": KINDS}

    def gate_operators(self, stream_nodes: dict, query_node: int, *, net0=None,
                       params: dict | None = None, seed: int = 0) -> dict:
        """The hosts' upstream, ``diffusion``, and the hosts themselves (``host0``, …,
        or by node), whose siblings a gate on one of them stands at (source 001, Fig. 7)."""
        diff, hosts = self.placed(net0, list(stream_nodes.values()), params, seed)
        return {"diffusion": diff, **{f"host{k}": h for k, h in enumerate(hosts)}}

    def trigger_setup(self, plan, p: dict, diffusion: int) -> dict:
        trigger = getattr(plan, "trigger", None)
        if trigger is not None and trigger.measured_at("here"):
            # probes of T ± ΔT measure whole segments: a cut would spoil the comparison
            check_param(self.name, p, "adapt", not p["adapt"],
                        f"false when a trigger cuts segments ([trigger.{self.name}])")
        # on_window holds for the fixed segments (the clock) as for cut ones
        on_window = getattr(trigger, "evaluate", "on_arrival") == "on_window"
        out = {**super().trigger_setup(plan, p, diffusion), "on_window": on_window}
        gate = getattr(trigger, "gate", None)
        if gate is not None:
            out["trigger"] = trigger        # a gate stands at the hosts under the clock too
            if gate.silence is not None and gate.upstream != diffusion:
                raise ValueError(f"trigger.{self.name}.gate.silence: a host hears only "
                                 "from the diffusion node; silence needs upstream = "
                                 "\"diffusion\"")
        return out

    def summarize(self, plan, run) -> dict:
        """The distributed join's keys and the hosts' ``evaluations`` (tuples joined),
        ``evaluations_skipped``, ``gate_closed_time`` (NaN: no gate; summed over the
        gated hosts), ``host_windows`` (fired by a host's own condition),
        ``host_windows_by_sibling`` and ``sibling_signals``."""
        out = super().summarize(plan, run)
        m = run.metrics
        mine = m[m["source"] == plan.algorithm] if len(m) else m
        metric = mine["metric"] if len(mine) else pd.Series(dtype=str)

        def total(prefix: str) -> int:
            return int(mine.loc[metric.str.startswith(prefix), "value"].sum()) \
                if len(mine) else 0
        out.update(evaluations(mine))
        sibling = total("host_window:sibling")
        out.update(host_windows=total("host_window:") - sibling,
                   host_windows_by_sibling=sibling,
                   sibling_signals=total("sibling_signal:"))
        return out

    def overhead(self, metrics, setup: Setup, duration: float) -> dict:
        out = atr_overhead(metrics, setup.streams, setup.windows, duration)
        segs = metrics[metrics["metric"].str.startswith("segment:")]
        masters = [name.split(":")[1] for name in segs["metric"]]
        out["atr_segments"] = float(len(segs))
        out["atr_master_switches"] = float(sum(1 for a, b in pairwise(masters) if a != b))
        # a trigger's cuts shorten segments after they were recorded
        cuts = metrics.loc[metrics["metric"].str.startswith("segment_cut:"), "value"].sum() \
            if len(metrics) else 0.0
        out["atr_segment_mean"] = float((segs["value"].sum() + cuts) / len(segs)) \
            if len(segs) else 0.0
        return out


class Ctr(_DistributedJoin):
    """Constrained tuple routing: a multi-way window join routed over a host set that
    covers each tuple's partners (:mod:`spark_nodes.algorithms.ctr.ctr`)."""

    name = "ctr"
    scheme = "ctr"
    triggered = True
    lookups = True  # params.routes = "lookup" fetches routes
    params = {**_PLACEMENT, **_HOSTS,
              "store": Param((str,), "cover", "where a segment is stored: 'cover' (its "
                             "hop-1 hosts, as the source) or 'llf' (least-loaded host)",
                             choices=STORE_MODES),
              **ROUTE_PARAMS}

    def extra(self, p: dict) -> dict:
        return {"store": p["store"], "routes": route_options(self.name, p)}

    def summarize(self, plan, run) -> dict:
        """The family's keys, and how partial results waited for their routes (carried
        or fetched: ``routes``, ``route_fetch`` and the lookup keys of
        :mod:`spark_nodes.algorithms.enrich.lookup_summary`)."""
        return {**super().summarize(plan, run),
                **fetch_summary(plan, run, "routes", ROUTE_MODES, "route")}

    def overhead(self, metrics, setup: Setup, duration: float) -> dict:
        return ctr_overhead(metrics, setup.streams, setup.windows, duration)

    def overhead_from_spec(self, plan, setup: Setup) -> dict:
        """Theorem D before the run: for an equality join on generated keys (the spec
        gives rates and the key distribution, hence σ); nothing for other streams or
        predicates, whose selectivity the spec does not tell."""
        cfg = resolve_streams(plan.spec.get("streams", {}))
        if cfg["generator"] != "keys" or setup.predicate != "equality":
            return {}
        sigma = float((key_probabilities(cfg) ** 2).sum())
        return ctr_overhead_from_spec(dict(zip(setup.streams, cfg["rates"])), setup.windows,
                                      setup.segment, len(setup.hosts), setup.store, sigma)


class SingleHost(_DistributedJoin):
    """The centralized join on one host (the baseline of the ATR/CTR experiments)."""

    name = "single-host"
    scheme = "single"
    params = {**_PLACEMENT,
              "flush": Param((float,), 0.5, "period at which closed tuples are forwarded",
                             low=0, low_open=True)}

    def flush_period(self, p: dict) -> float:
        return p["flush"]


for _alg in (Atr(), Ctr(), SingleHost()):
    ALGORITHMS.register(_alg.name, _alg)
