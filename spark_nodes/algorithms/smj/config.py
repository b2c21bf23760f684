"""The resolved configuration every SMJ-family node program shares.

>>> cfg = SmjConfig.of(mode="smj-h", streams=("R1", "R2"), stream_nodes=(4, 7),
...                    query_node=0, windows=(3.0, None), duration=30.0)
>>> cfg.n, cfg.periods, cfg.windows
(2, 30, (3.0, inf))
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from spark_nodes.algorithms.smj.semantics import n_periods, window_value

MODES = ("smj-e", "smj-h", "lottery", "naive")
FILTERS = ("mask", "product")
DRAWS = ("argmax", "proportional")


@dataclass(frozen=True)
class SmjConfig:
    """Everything a node needs to play its roles (picklable, immutable)."""

    mode: str
    streams: tuple[str, ...]
    stream_nodes: tuple[int, ...]
    query_node: int
    windows: tuple[float, ...]
    period: float
    periods: int
    grace: float
    synopsis_unit: float
    include_final: bool
    filter: str
    lottery_draw: str
    initial_center: int | None
    bytes_per_unit: int
    lookahead: int = 1
    retry: float = 0.25
    plan_lookup: object = None    # PlanOptions when sites fetch plans (plan_lookup.py)
    #: a TriggerSpec that ends the periods instead of ``period`` (None: the fixed clock)
    trigger: Any = None
    #: the last period closes at the latest here (``duration - margin``)
    limit: float = float("inf")
    #: a message reported lost is held and retried (:meth:`SmjNode.on_lost`)
    resend: bool = False

    @classmethod
    def of(cls, *, mode, streams, stream_nodes, query_node, windows, duration,
           period=1.0, margin=0.0, grace=2.0, synopsis_unit=0.25, include_final=True,
           filter="mask", lottery_draw="argmax", initial_center=None, bytes_per_unit=32,
           lookahead=1, retry=0.25, plan_lookup=None, trigger=None, resend=False):
        """Validate and build; ``windows`` entries may be None (no window). Under a
        ``trigger`` the number of periods is what the trigger fires (unbounded here)."""
        for name, value, allowed in (("mode", mode, MODES), ("filter", filter, FILTERS),
                                     ("lottery_draw", lottery_draw, DRAWS)):
            if value not in allowed:
                raise ValueError(f"params.{mode}.{name}: expected one of {allowed}, "
                                 f"got {value!r}")
        if len(streams) < 2:
            raise ValueError(f"streams.count: a multi-join needs >= 2 streams, "
                             f"got {len(streams)}")
        if period <= 0 or grace < 0 or margin < 0 or retry <= 0:
            raise ValueError(f"params.{mode}: period and retry must be > 0, margin and grace >= 0 "
                             f"(got period={period}, retry={retry}, margin={margin}, "
                             f"grace={grace})")
        if lookahead < 1:
            raise ValueError(f"params.{mode}.lookahead: expected an integer >= 1, "
                             f"got {lookahead}")
        if trigger is not None and trigger.clock:
            trigger = None
        periods = n_periods(duration, margin, period) if trigger is None else sys.maxsize
        return cls(mode, tuple(streams), tuple(int(v) for v in stream_nodes),
                   int(query_node), tuple(window_value(w) for w in windows), float(period),
                   periods, float(grace), float(synopsis_unit),
                   bool(include_final), filter, lottery_draw, initial_center,
                   int(bytes_per_unit), int(lookahead), float(retry), plan_lookup,
                   trigger, float(duration - margin), bool(resend))

    @property
    def n(self) -> int:
        """Number of streams (sites)."""
        return len(self.streams)

    @property
    def uses_center(self) -> bool:
        """Whether this mode runs a synopsis center."""
        return self.mode in ("smj-e", "smj-h")
