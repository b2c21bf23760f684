"""What the roles of one ATR, CTR or single-host run share: :class:`Setup`, built by
:mod:`.algorithms`, and the ticks of their clocks (:func:`next_tick`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from spark_nodes.algorithms.ctr.load import LoadBoard


def next_tick(k: int, now: float, every: float, offset: float = 0.0) -> int:
    """The tick after tick ``k`` of a clock ticking at ``offset + i * every``: ``k + 1``,
    or the first one after ``now`` when tick ``k`` ran late (its node was down).

    >>> next_tick(3, 3.5, 1.0), next_tick(3, 7.2, 1.0), next_tick(3, 7.7, 1.0, offset=0.5)
    (4, 8, 8)
    """
    return max(k + 1, math.floor((now - offset) / every + 1e-9) + 1)


@dataclass(frozen=True)
class Setup:
    """Everything the roles of one run share (built by :mod:`.algorithms`)."""

    scheme: str                  # "atr" | "ctr" | "single"
    streams: tuple
    windows: dict                # stream -> float (inf = unbounded)
    predicate: str
    theta: float | None
    diffusion: int
    fusion: int
    hosts: tuple
    sources: tuple               # nodes producing a stream (each sends an end-of-stream)
    segment: float
    flush: float
    slack: float
    report_interval: float
    weights: tuple
    capacity: tuple
    bytes_per_unit: int
    synopsis_unit: float
    delta_T: float = 0.0
    adapt: bool = False
    master_switch: bool = True
    switch_margin: float = 0.25
    adapt_every: int = 4
    store: str = "cover"
    trigger: Any = None          # ATR, CTR: a TriggerSpec whose windows cut segments, or None
    on_window: bool = False      # ATR: a segment is sent to its host when its window closes
    routes: Any = None           # CTR: RouteOptions when hosts fetch routes (entry_lookup.py)

    def board(self) -> LoadBoard:
        return LoadBoard(self.hosts, self.weights, self.capacity, self.report_interval)
