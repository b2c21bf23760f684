"""Registers ``smj-e``, ``smj-h``, ``lottery`` and ``naive`` with the algorithm registry.

>>> [a.name for a in ALGORITHMS]
['smj-e', 'smj-h', 'lottery', 'naive']
>>> sorted(SmjH.params)  # doctest: +NORMALIZE_WHITESPACE
['filter', 'grace', 'include_final', 'lookahead', 'margin', 'period', 'plan', 'plan_fetch',
 'plan_timeout', 'plan_ttl', 'resend', 'retry']
"""
from __future__ import annotations

import pandas as pd

from spark_nodes.algorithms.enrich.lookup_summary import fetch_summary
from spark_nodes.algorithms import registry
from spark_nodes.algorithms.registry import Algorithm, Param
from spark_nodes.algorithms.smj.config import DRAWS, FILTERS, SmjConfig
from spark_nodes.algorithms.smj.node import SmjNode
from spark_nodes.algorithms.smj.plan_lookup import (PARAMS as PLAN_PARAMS, PLAN_MODES,
                                                    plan_options)
from spark_nodes.algorithms.smj.semantics import FiredPeriods, exact_groups
from spark_nodes.algorithms.triggers.summary import windows_fired

_COMMON = {
    "period": Param((float,), 1.0, "period length: blocks close every `period` time units",
                    low=0, low_open=True),
    "margin": Param((float,), 0.0, "only periods closing by duration - margin are processed "
                                   "(the run's drain lets the last blocks arrive)", low=0),
    "retry": Param((float,), 0.25, "a message to a node cut off by a partition is held "
                                   "and retried this often", low=0, low_open=True),
    "grace": Param((float,), 2.0, "tuples are kept this long after leaving the window, "
                                  "for blocks still on their way", low=0, allow_inf=True),
    "resend": Param((bool,), False, "a message whose loss is reported (with AODV, OLSR or "
                                    "Babel: when the drop's notice arrives) is held and "
                                    "retried like one to a node cut off"),
}
_SMJ = {
    "include_final": Param((bool,), True, "count the final hop to the query node when "
                                          "choosing an order"),
    "filter": Param((str,), "mask", "mask | product (the literal ΔS ⊙ Π S)",
                    choices=FILTERS),
    **PLAN_PARAMS,
}
#: Ledger kinds counted as synopsis traffic and as data traffic.
SYNOPSIS_KINDS = ("synopsis", "filter", "order")
DATA_KINDS = ("data", "intermediate", "result")


class SmjFamily(Algorithm):
    """Shared plumbing: configuration from the plan, exact answer, summary keys."""

    family = "smj"
    #: a trigger ends the periods (:mod:`spark_nodes.algorithms.smj.triggered`): the query node
    #: keeps the clock and sees no tuples, so tuples are measured at the sites
    triggered = True
    trigger_places = {"here": ("time", "exception"),
                      "sources": ("count", "time", "rate", "deviation", "exception")}

    def config(self, plan) -> SmjConfig:
        """The :class:`SmjConfig` of ``plan``."""
        p = plan.params
        names = plan.stream_names
        center = plan.net0.center(sorted(set(plan.stream_nodes.values()))) \
            if self.name in ("smj-e", "smj-h") else None
        return SmjConfig.of(
            mode=self.name, streams=names,
            stream_nodes=[plan.stream_nodes[s] for s in names],
            query_node=plan.query.node,
            windows=[plan.query.windows.get(s) for s in names],
            duration=plan.duration, period=p["period"], margin=p["margin"],
            grace=p["grace"], synopsis_unit=plan.synopsis_unit,
            include_final=p.get("include_final", True), filter=p.get("filter", "mask"),
            lottery_draw=p.get("lottery_draw", "argmax"), initial_center=center,
            bytes_per_unit=plan.bytes_per_unit, lookahead=p.get("lookahead", 1),
            retry=p["retry"], resend=p["resend"], trigger=getattr(plan, "trigger", None),
            plan_lookup=plan_options(self.name, p) if "plan" in p else None)

    def nodes_with_roles(self, plan, cfg) -> list[int]:
        """Sources and the query node."""
        return sorted(set(cfg.stream_nodes) | {cfg.query_node})

    def programs(self, plan) -> dict:
        if plan.query.predicate != "equality":
            raise ValueError(f"query.predicate: {self.name} joins on equal keys; "
                             f"expected 'equality', got {plan.query.predicate!r}")
        cfg = self.config(plan)
        return {v: SmjNode(cfg, v, center=(v == cfg.initial_center))
                for v in self.nodes_with_roles(plan, cfg)}

    def exact_answer(self, plan, tuples_by_stream) -> set[str]:
        """Groups under :mod:`spark_nodes.algorithms.smj.semantics` (not the sliding-window
        oracle)."""
        if self.config(plan).trigger is not None:
            raise ValueError(f"trigger.{self.name}: the periods are those the run ended; "
                             "its exact answer needs the run (exact_answer_of_run)")
        return self._exact(plan, tuples_by_stream, None)

    def exact_answer_of_run(self, plan, tuples_by_stream, metrics) -> set[str]:
        """Under a trigger, the periods are those the run ended (its ``period_close``
        records); else :meth:`exact_answer`."""
        if self.config(plan).trigger is None:
            return self.exact_answer(plan, tuples_by_stream)
        mine = metrics[(metrics["source"] == plan.algorithm)
                       & (metrics["metric"] == "period_close")] if len(metrics) else metrics
        return self._exact(plan, tuples_by_stream,
                           FiredPeriods(sorted(mine["value"]) if len(mine) else []))

    def _exact(self, plan, tuples_by_stream, fired) -> set[str]:
        cfg = self.config(plan)
        if isinstance(tuples_by_stream, pd.DataFrame):
            from spark_nodes.workload.tuples import frame_to_tuples
            grouped: dict = {}
            for t in frame_to_tuples(tuples_by_stream):
                grouped.setdefault(t.stream, []).append(t)
            tuples_by_stream = grouped
        periods, count = (cfg.period, cfg.periods) if fired is None else \
            (fired, len(fired.closes))
        return exact_groups(tuples_by_stream, list(cfg.streams),
                            dict(zip(cfg.streams, cfg.windows)), periods, count)

    def summarize(self, plan, run) -> dict:
        m = run.metrics
        mine = m[m["source"] == plan.algorithm] if len(m) else m
        return {**summary_extras(run.ledger, run.metrics),
                **windows_fired(mine, getattr(plan, "trigger", None))}


def summary_extras(ledger: pd.DataFrame, metrics: pd.DataFrame) -> dict:
    """``synopsis_cost``, ``data_cost``, ``report_cost``, ``filtered_tuples``,
    ``center_moves`` and, where a center decided, ``hindsight_cost`` with the ratios of
    the total and the data cost to it.

    >>> led = pd.DataFrame({"kind": ["data", "synopsis", "result"], "cost": [6., 1., 3.]})
    >>> met = pd.DataFrame({"metric": ["filtered", "hindsight_cost"], "value": [2., 6.]})
    >>> summary_extras(led, met)["cost_to_hindsight"]
    1.6666666666666667
    """
    cost = ledger.groupby("kind")["cost"].sum() if len(ledger) else pd.Series(dtype=float)
    out = {
        "synopsis_cost": float(cost.reindex(SYNOPSIS_KINDS).fillna(0).sum()),
        "data_cost": float(cost.reindex(DATA_KINDS).fillna(0).sum()),
        "report_cost": float(cost.get("report", 0.0)),
    }
    m = metrics.groupby("metric")["value"].sum() if len(metrics) else pd.Series(dtype=float)
    out["filtered_tuples"] = float(m.get("filtered", 0.0))
    out["center_moves"] = float(m.get("center_move", 0.0))
    if "hindsight_cost" in m.index:
        lb = float(m["hindsight_cost"])
        total = float(cost.sum())
        out["hindsight_cost"] = lb
        out["cost_to_hindsight"] = total / lb if lb > 0 else float("nan")
        out["data_cost_to_hindsight"] = out["data_cost"] / lb if lb > 0 else float("nan")
    return out


class SmjE(SmjFamily):
    """SMJ with exact order choice (SMJE)."""

    name = "smj-e"
    lookups = True  # params.plan = "lookup" fetches plans
    params = {**_COMMON, **_SMJ}

    def nodes_with_roles(self, plan, cfg):
        # the center may move to any node, so every node runs the program
        return sorted(plan.net0.nodes)


    def summarize(self, plan, run) -> dict:
        """The family's keys, and how blocks waited for their plans (pushed or
        fetched: ``plan``, ``plan_fetch`` and the lookup keys of
        :mod:`spark_nodes.algorithms.enrich.lookup_summary`)."""
        return {**super().summarize(plan, run),
                **fetch_summary(plan, run, "plan", PLAN_MODES, "plan")}


class SmjH(SmjE):
    """SMJ with the O(n²) look-ahead heuristic (SMJH)."""

    name = "smj-h"
    params = {**_COMMON, **_SMJ,
              "lookahead": Param((int,), 1, "sites looked ahead per stage (1 = the source's "
                                            "O(n²) heuristic; option)", low=1)}


class Lottery(SmjFamily):
    """Lottery routing baseline."""

    name = "lottery"
    params = {**_COMMON, "lottery_draw": Param((str,), "argmax", "argmax | proportional",
                                               choices=DRAWS)}


class Naive(SmjFamily):
    """Every block to the query node."""

    name = "naive"
    params = dict(_COMMON)


ALGORITHMS = (SmjE(), SmjH(), Lottery(), Naive())
for _alg in ALGORITHMS:
    registry.ALGORITHMS.register(_alg.name, _alg)
