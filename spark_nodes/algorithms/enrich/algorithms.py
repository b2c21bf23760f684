"""The enrichment pipeline with lookups fetched on demand or ahead of need (docs/ALGORITHMS.md#lookups).

Every tuple of every stream travels from its source to the query node (the *enrichment
node*), where it is joined with the row of a reference table keyed by its ``key``. The
table lives at ``table_node`` (default: the node farthest from the query node at time 0,
in hops), so a row the enrichment node has not cached costs a multi-hop round trip
while the tuple waits. Four algorithms, one per ``mode`` of fetching:

- ``enrich-on-demand``: fetch when a tuple needs a row it does not hold;
- ``enrich-predicted``: sources prefetch from a *profile* (:mod:`.profile`) the rows of
  tuples whose lookup probability is at least ``threshold``, timed to arrive before the
  need with probability ``confidence``;
- ``enrich-eager``: sources prefetch for every tuple of a profiled type, at once;
- ``enrich-oracle``: perfect foresight: sources prefetch, at once, exactly for the tuples
  that needed a remote lookup in the same seed's on-demand run.

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
communication cost, every hop counted).

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
from spark_nodes.algorithms.enrich.profile import (ProfileError, check_profile, prefetch_wait,
                                                   profile_from_run, read_profile)
from spark_nodes.algorithms.enrich.programs import (ENRICH, EnrichNode, Setup, Trigger,
                                                    source_location)
from spark_nodes.algorithms.registry import ALGORITHMS, Algorithm, Param, check_param
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
    "trace": Param((bool,), False, "write trace_tuples / trace_lookups / trace_fetches "
                   "(what profiles are built from)"),
}
PROFILED = {
    "profile": Param((str, dict), "train", "a profile file, or 'train': build one first "
                     "from a traced on-demand run at training_seed"),
    "training_seed": Param((int,), 1000, "seed of the training run of profile = 'train'",
                           low=0),
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
        keyword = p.get("profile", self.params.get("profile", Param((), None)).default)
        if keyword not in ("train", "oracle"):
            return spec
        seed = spec["run"]["seed"] if keyword == "oracle" else \
            p.get("training_seed", PROFILED["training_seed"].default)
        training = copy.deepcopy(spec)
        training["run"]["seed"] = seed
        # offline tracing: the runtime changes nothing but speed (inproc = spark)
        training["run"]["runtime"] = "inproc"
        training["algorithm"] = {"name": "enrich-on-demand"}
        shared = {k: v for k, v in p.items() if k in COMMON}
        training["params"] = {"enrich-on-demand": {**shared, "trace": True}}
        profile = profile_from_run(run_first(training), oracle=keyword == "oracle")
        prepared = copy.deepcopy(spec)
        prepared["params"].setdefault(self.name, {})["profile"] = profile
        return prepared

    # -- the run --------------------------------------------------------------------------
    def setup(self, plan) -> Setup:
        p = plan.params
        enrich = plan.query.node
        table = p["table_node"]
        if table is None:
            table = farthest_node(plan.net0, enrich)
        check_param(self.name, p, "table_node", table in plan.net0.nodes, "a node of the topology")
        return Setup(enrich_node=enrich, table_node=table, ttl=float(p["cache_ttl"]),
                     row_units=float(p["row_units"]), request_units=float(p["request_units"]),
                     trace=bool(p["trace"]), batch_period=float(p["batch_period"]),
                     lookup_timeout=float(p["lookup_timeout"]),
                     bytes_per_unit=plan.bytes_per_unit,
                     triggers=self.triggers(plan))

    def triggers(self, plan) -> dict:
        """``{stream: Trigger}`` of the sources (none: fetch on demand only)."""
        return {}

    def programs(self, plan) -> dict:
        setup = self.setup(plan)
        streams: dict[int, list] = {}
        for s in plan.streams:
            streams.setdefault(s.node, []).append(s.name)
        nodes = set(streams) | {setup.enrich_node, setup.table_node}
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
            "profile_topology": json.dumps(topology_signature(plan), sort_keys=True),
        }


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

    def records(self, plan) -> dict:
        """``{stream: record}`` of the records triggered at each stream's source."""
        out = {}
        for r in self.load(plan)["records"]:
            if r["need"] == ENRICH and r["trigger"] == source_location(r["type"]):
                out[r["type"]] = r
        return out


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
                                 "triggers a prefetch", low=0, high=1)}

    def triggers(self, plan) -> dict:
        p = plan.params
        # open at both ends, which a declared range cannot say
        check_param(self.name, p, "confidence", 0 < p["confidence"] < 1, "a number in (0, 1)")
        return {s: Trigger(r, prefetch_wait(r, p["confidence"]), p["threshold"])
                for s, r in self.records(plan).items()}


class Eager(_Profiled):
    """Prefetch for every tuple of a profiled type, at once."""

    name, mode = "enrich-eager", "eager"

    def triggers(self, plan) -> dict:
        return {s: Trigger(r, 0.0, 0.0) for s, r in self.records(plan).items()}


class Oracle(_Profiled):
    """Perfect foresight: prefetch at once exactly for the tuples that needed a remote
    lookup in the same seed's on-demand run."""

    name, mode = "enrich-oracle", "oracle"
    params = {**COMMON,
              "profile": Param((str, dict), "oracle", "'oracle': the same seed's traced "
                               "on-demand run; or an oracle profile file")}

    def triggers(self, plan) -> dict:
        profile = self.load(plan)
        if profile["kind"] != "oracle":
            raise ProfileError(f"params.{self.name}.profile", "kind",
                               f"expected an oracle profile, got {profile['kind']!r}")
        ids = frozenset(profile["tuples"])
        return {s: Trigger(None, 0.0, 0.0, ids) for s in plan.stream_names}


for _algorithm in (OnDemand(), Predicted(), Eager(), Oracle()):
    ALGORITHMS.register(_algorithm.name, _algorithm)
