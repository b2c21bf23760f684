"""The enrichment pipeline with lookups fetched on demand or ahead of need (docs/ALGORITHMS.md#lookups).

Every tuple of every stream travels from its source to the query node (the *enrichment
node*), where it is joined with the row of a reference table keyed by its ``key``. The
table lives at ``table_node`` (default: the node farthest from the query node at time 0,
in hops), or at the nodes of ``[enrich.table] nodes`` (:mod:`.table`: its service time,
servers and row updates), so a row the enrichment node has not cached costs a multi-hop
round trip while the tuple waits. Four algorithms, one per ``mode`` of fetching:

- ``enrich-on-demand``: fetch when a tuple needs a row it does not hold;
- ``enrich-predicted``: sources prefetch from a *profile* (:mod:`.profile`) the rows of
  tuples whose lookup probability is at least ``threshold``, timed to arrive before the
  need with probability ``confidence``;
- ``enrich-eager``: sources prefetch for every tuple of a profiled type, at once;
- ``enrich-oracle``: perfect foresight (:mod:`.oracle`): sources prefetch exactly the
  rows that will be used, each timed to arrive ``lead`` before its use on the real path,
  as a traced hindsight run of the same seed (every tuple prefetched at birth) measured.

``profile = "train"`` (the default) has the run build its profile first from a traced
on-demand run of the same spec at ``training_seed`` (done once per sweep folder, kept in
its ``_prepared`` folder); a path names a file ``testbed profile`` wrote.

Summary keys: ``mode``, ``confidence``, ``needs``, ``unserved`` (tuples that never got
their row: their stall is not in the stall figures), ``lookups``, ``lookup_retries``
(requests sent again after ``lookup_timeout``), ``stall_time_total``,
``stall_time_mean``, ``stall_time_p95``, ``prefetches``, ``prefetch_precision`` (used ÷
arrived), ``prefetch_recall`` (needs served by a prefetched row ÷ needs),
``prefetch_bytes`` and ``wasted_bytes`` (bytes of prefetch messages, and of those whose
row was never used, each message counted once), ``prefetch_cost`` (their share of the
communication cost, every hop counted), ``prefetch_wait_mean`` (a prefetch's mean wait
at its trigger before leaving), ``cache_evictions`` (rows pushed out of a full
cache, ``cache_rows``), ``stale_uses`` (tuples enriched with a row older than the
table's), ``updates_pushed`` (``invalidate``), ``table_wait_mean`` and
``table_queue_peak`` (time a request queued at a table; most requests in one),
``profile_refreshes`` (``refresh_every``: refresh messages sent to sources),
``downstream_buffer_peak`` and ``downstream_wait_total`` (tuples held at most, and
their time held, in the buffer of the in-order operator behind the enrichment node:
:mod:`.downstream`).

Examples
--------
>>> from spark_nodes.algorithms import registry
>>> sorted(n for n in registry.ALGORITHMS.names() if n.startswith("enrich"))
['enrich-eager', 'enrich-on-demand', 'enrich-oracle', 'enrich-predicted']
>>> registry.ALGORITHMS.get("enrich-predicted").params["confidence"].default
0.9
"""
from __future__ import annotations

import copy
import json
import math
from pathlib import Path

from contract.messages import wire_bytes
from spark_nodes.algorithms.enrich.lookup_summary import (ledger_prefetch, lookup_summary,
                                                          metric_total)
from spark_nodes.algorithms.enrich.profile import (ProfileError, check_profile,
                                                   profile_from_run, read_profile)
from spark_nodes.algorithms.enrich.programs import (ENRICH, EnrichNode, Setup, Trigger,
                                                    source_location)
from spark_nodes.algorithms.enrich.oracle import EVERY, build_oracle
from spark_nodes.algorithms.enrich.table import RowClock, check_enrich
from spark_nodes.algorithms.registry import (ALGORITHMS, Algorithm, Param, check_param,
                                             validate_params)
from spark_nodes.workload.tuples import member_id

NONE = type(None)
COMMON = {
    "table_node": Param((int, NONE), None, "node holding the reference table (default: "
                        "the farthest from the query node in hops at time 0)"),
    "cache_ttl": Param((float,), 2.0, "time units a fetched row stays cached", low=0,
                       low_open=True, allow_inf=True),
    "row_units": Param((float,), 1.0, "size of a row (reply) in data units", low=0,
                       low_open=True),
    "request_units": Param((float,), 0.25, "size of a request in data units", low=0,
                           low_open=True),
    "batch_period": Param((float,), 0.0, "sources send their tuples once per period "
                          "(0: each at once)", low=0),
    "lookup_timeout": Param((float,), 1.0, "an on-demand request with no reply by then "
                            "is sent again", low=0, low_open=True),
    "cache_rows": Param((int, NONE), None, "rows the enrichment node's cache holds at "
                        "most, the least recently used evicted (none: no bound)", low=1),
    "trace": Param((bool,), False, "write trace_tuples / trace_lookups / trace_fetches "
                   "(what profiles are built from)"),
}
PROFILED = {
    "profile": Param((str, dict), "train", "a profile file, or 'train': build one first "
                     "from a traced on-demand run at training_seed"),
    "training_seed": Param((int,), 1000, "seed of the training run of profile = 'train'",
                           low=0),
    "day": Param((float, NONE), None, "profile = 'train': time units in a day, to "
                 "condition lookups on the time of day (the source's external state "
                 "variable); none: not", low=0, low_open=True),
}



class _Enrich(Algorithm):
    """What the four modes share."""

    family = "enrich"
    mode = ""
    params = COMMON

    # -- before the run -------------------------------------------------------------------
    def prepare(self, spec: dict, run_first) -> dict:
        """Build the profile this run loads, from a traced on-demand run (see the module
        docstring); other modes run as given."""
        p = spec["params"].get(self.name, {})
        validate_params(self, p)     # before a training run uses them (one-line errors)
        if p.get("profile", self.params.get("profile", Param((), None)).default) != "train":
            return spec
        training = copy.deepcopy(spec)
        training["run"]["seed"] = p.get("training_seed", PROFILED["training_seed"].default)
        # offline tracing: the runtime changes nothing but speed (inproc = spark)
        training["run"]["runtime"] = "inproc"
        training["algorithm"] = {"name": "enrich-on-demand"}
        shared = {k: v for k, v in p.items() if k in COMMON}
        training["params"] = {"enrich-on-demand": {**shared, "trace": True}}
        day = p.get("day")
        profile = profile_from_run(run_first(training), day=None if day is None else float(day))
        prepared = copy.deepcopy(spec)
        prepared["params"].setdefault(self.name, {})["profile"] = profile
        return prepared

    # -- the run --------------------------------------------------------------------------
    def setup(self, plan) -> Setup:
        p = plan.params
        enrich = plan.query.node
        table = table_section(plan)
        if table["nodes"] is not None:
            tables = tuple(table["nodes"])
            for node in tables:
                if node not in plan.net0.nodes:
                    raise ValueError(f"enrich.table.nodes: expected nodes of the topology, "
                                     f"got {node!r}")
        else:
            node = p["table_node"]
            tables = (farthest_node(plan.net0, enrich) if node is None else node,)
            check_param(self.name, p, "table_node", tables[0] in plan.net0.nodes,
                        "a node of the topology")
        rate = table["update_rate"]
        return Setup(enrich_node=enrich, tables=tables, ttl=float(p["cache_ttl"]),
                     row_units=float(p["row_units"]), request_units=float(p["request_units"]),
                     trace=bool(p["trace"]), batch_period=float(p["batch_period"]),
                     lookup_timeout=float(p["lookup_timeout"]),
                     bytes_per_unit=plan.bytes_per_unit,
                     triggers=self.triggers(plan), cache_rows=p["cache_rows"],
                     service_time=table["service_time"], servers=table["servers"],
                     rows=RowClock(rate, plan.seed) if rate > 0 else None,
                     invalidate=table["invalidate"], duration=plan.duration,
                     refresh_every=p.get("refresh_every"),
                     stream_nodes=tuple((s.name, s.node) for s in plan.streams))

    def triggers(self, plan) -> dict:
        """``{stream: Trigger}`` of the sources (none: fetch on demand only)."""
        return {}

    def programs(self, plan) -> dict:
        setup = self.setup(plan)
        streams: dict[int, list] = {}
        for s in plan.streams:
            streams.setdefault(s.node, []).append(s.name)
        nodes = set(streams) | {setup.enrich_node, *setup.tables}
        return {u: EnrichNode(setup, u, tuple(streams.get(u, ()))) for u in sorted(nodes)}

    def exact_answer(self, plan, tuples_by_stream) -> set[str]:
        """Every tuple, enriched once."""
        return {member_id(t) for ts in tuples_by_stream.values() for t in ts}

    # -- after the run --------------------------------------------------------------------
    def summarize(self, plan, run) -> dict:
        m = run.metrics
        mine = m[m["source"] == plan.algorithm] if len(m) else m
        out = lookup_summary(mine)
        prefetches = out["prefetches"]
        arrived, used = (metric_total(mine, k) for k in ("prefetch_arrived", "prefetch_used"))
        p = plan.params
        request = wire_bytes(p["request_units"], plan.bytes_per_unit, plan.header_bytes)
        row = wire_bytes(p["row_units"], plan.bytes_per_unit, plan.header_bytes)
        _, prefetch_cost, _ = ledger_prefetch(run.ledger)
        return {
            "mode": self.mode,
            "confidence": float(p["confidence"]) if "confidence" in p else math.nan,
            **out,
            # tuples that reached the enrichment node but never got their row
            "unserved": out["needs"] - float(len(run.results)),
            "prefetch_bytes": prefetches * request + arrived * row,
            "wasted_bytes": (arrived - used) * (request + row) + (prefetches - arrived) * request,
            "prefetch_cost": prefetch_cost,
            "prefetch_wait_mean": metric_mean(mine, "prefetch_wait"),
            "stale_uses": metric_total(mine, "stale_use"),
            "profile_refreshes": metric_total(mine, "profile_refresh"),
            "updates_pushed": metric_total(mine, "update_pushed"),
            "table_wait_mean": metric_mean(mine, "table_wait"),
            "table_queue_peak": metric_max(mine, "table_queue"),
            "downstream_buffer_peak": metric_max(mine, "downstream_held"),
            "downstream_wait_total": metric_total(mine, "downstream_wait"),
            "profile_topology": json.dumps(topology_signature(plan), sort_keys=True),
        }


def table_section(plan) -> dict:
    """The run's ``[enrich.table]``, defaults filled in (resolved specs carry
    ``[enrich]`` only when it was given)."""
    return check_enrich(plan.spec.get("enrich", {}))["table"]


def metric_mean(mine, metric: str) -> float:
    """Mean of ``metric``'s values (0 when none was recorded)."""
    values = mine.loc[mine["metric"] == metric, "value"] if len(mine) else []
    return float(values.mean()) if len(values) else 0.0


def metric_max(mine, metric: str) -> float:
    """Largest of ``metric``'s values (0 when none was recorded)."""
    values = mine.loc[mine["metric"] == metric, "value"] if len(mine) else []
    return float(values.max()) if len(values) else 0.0


def topology_signature(plan) -> dict:
    """What a profile must have been built on to fit this run: the generator and the
    node count (the graph itself differs with the seed)."""
    return {"generator": plan.spec.get("topology", {}).get("generator", "file"),
            "nodes": int(plan.topology.graph.number_of_nodes())}


def farthest_node(net, origin: int) -> int:
    """The node most hops away from ``origin`` (ties: the smallest id).

    >>> import networkx as nx
    >>> from emulator.network import NetView
    >>> g = nx.path_graph(4); nx.set_edge_attributes(g, 1.0, "cost")
    >>> farthest_node(NetView.from_graph(g), 1)
    3
    """
    best, far = origin, -1
    for v in sorted(net.nodes):
        h = net.hops(origin, v)
        if h is not None and math.isfinite(h) and h > far:
            best, far = v, h
    return best


class _Profiled(_Enrich):
    """Modes whose sources act on a profile."""

    params = {**COMMON, **PROFILED}

    def load(self, plan) -> dict:
        """The run's profile, checked against it (one-line errors naming the field)."""
        raw = plan.params["profile"]
        field = f"params.{self.name}.profile"
        try:
            source = "inline profile"
            if isinstance(raw, str):
                path = Path(raw) if Path(raw).is_absolute() else plan.base_dir / raw
                source, raw = str(path), read_profile(path)
            operators = {ENRICH} | {source_location(s) for s in plan.stream_names}
            return check_profile(raw, source, operators=operators,
                                 types=set(plan.stream_names),
                                 topology=topology_signature(plan))
        except ProfileError as err:      # it names the file (or inline profile) and field
            raise ValueError(f"{field}: {err}") from None

    def records(self, plan) -> tuple[dict, float | None]:
        """``({stream: record}, day)``: the records triggered at each stream's source,
        and the length of the day their time-of-day ranges are on (None: none)."""
        profile, out = self.load(plan), {}
        for r in profile["records"]:
            if r["need"] == ENRICH and r["trigger"] == source_location(r["type"]):
                out[r["type"]] = r
        return out, profile.get("day")


class OnDemand(_Enrich):
    """Fetch a row when a tuple needs it and it is not cached."""

    name, mode = "enrich-on-demand", "on-demand"


class Predicted(_Profiled):
    """Prefetch, from a profile, the rows of tuples likely to need them, just in time."""

    name, mode = "enrich-predicted", "predicted"
    params = {**_Profiled.params,
              "confidence": Param((float,), 0.9, "probability that a prefetch arrives "
                                  "before the need, in (0, 1)"),
              "threshold": Param((float,), 0.5, "lookup probability from which a tuple "
                                 "triggers a prefetch", low=0, high=1),
              "refresh_every": Param((float, NONE), None, "time units between refreshes "
                                     "of the sources' lookup probabilities from what the "
                                     "enrichment node saw; none: the profile's throughout",
                                     low=0, low_open=True)}

    def triggers(self, plan) -> dict:
        p = plan.params
        # open at both ends, which a declared range cannot say
        check_param(self.name, p, "confidence", 0 < p["confidence"] < 1, "a number in (0, 1)")
        records, day = self.records(plan)
        return {s: Trigger(r, p["threshold"], confidence=p["confidence"], day=day)
                for s, r in records.items()}


class Eager(_Profiled):
    """Prefetch for every tuple of a profiled type, at once."""

    name, mode = "enrich-eager", "eager"

    def triggers(self, plan) -> dict:
        return {s: Trigger(r, 0.0) for s, r in self.records(plan)[0].items()}


class Oracle(_Profiled):
    """Perfect foresight (:mod:`.oracle`): prefetch exactly the rows that will be used,
    each timed to arrive ``lead`` before its use on the real path, as a traced hindsight
    run of the same seed measured it."""

    name, mode = "enrich-oracle", "oracle"
    params = {**COMMON,
              "profile": Param((str, dict), "oracle", "'oracle': built in hindsight from a "
                               "traced run of the same seed that prefetches every tuple "
                               "at birth; or an oracle profile file"),
              "lead": Param((float,), 0.05, "time before its use a prefetched row is to "
                            "arrive", low=0)}

    def prepare(self, spec: dict, run_first) -> dict:
        """Build the oracle's schedule from the hindsight run (see :mod:`.oracle`)."""
        p = spec["params"].get(self.name, {})
        validate_params(self, p)     # before the hindsight run uses them
        if p.get("profile", "oracle") != "oracle":
            return spec
        shared = {k: v for k, v in p.items() if k in COMMON}

        def traced(profile: dict) -> dict:
            # offline tracing: the runtime changes nothing but speed (inproc = spark)
            out = copy.deepcopy(spec)
            out["run"]["runtime"] = "inproc"
            out["params"] = {self.name: {**shared, "trace": True, "profile": profile}}
            return out

        rate = check_enrich(spec.get("enrich", {}))["table"]["update_rate"]
        profile = build_oracle(
            run_first, traced(EVERY), traced,
            ttl=float(p.get("cache_ttl", COMMON["cache_ttl"].default)),
            lead=float(p.get("lead", self.params["lead"].default)),
            # a bounded cache may evict the row an earlier need brought; the trial runs
            # catch it (the tuples that then wait are fetched at birth)
            rows=RowClock(rate, spec["run"]["seed"]) if rate > 0 else None)
        prepared = copy.deepcopy(spec)
        prepared["params"].setdefault(self.name, {})["profile"] = profile
        return prepared

    def triggers(self, plan) -> dict:
        profile = self.load(plan)
        if profile["kind"] != "oracle":
            raise ProfileError(f"params.{self.name}.profile", "kind",
                               f"expected an oracle profile, got {profile['kind']!r}")
        if profile["tuples"] == "every":
            return {s: Trigger(None, every=True) for s in plan.stream_names}
        ids, waits = frozenset(profile["tuples"]), dict(profile.get("waits", {}))
        return {s: Trigger(None, ids=ids, waits=waits) for s in plan.stream_names}


for _algorithm in (OnDemand(), Predicted(), Eager(), Oracle()):
    ALGORITHMS.register(_algorithm.name, _algorithm)
