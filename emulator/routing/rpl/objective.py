"""RPL's objective functions: the rank a node takes through a neighbour and when it
leaves its parent for another.

- **OF0** (RFC 6552 §4.1): ``rank(n) = rank(parent) + (Rf x Sp + Sr) x
  MinHopRankIncrease``, with the defaults ``Rf = 1``, ``Sp = 3``, ``Sr = 0``: the same
  increase per hop (Sp is left at its default whatever the link: a fewest-hop tree). The
  parent is the neighbour giving the least rank; a better one replaces it at once.
- **MRHOF over ETX** (RFC 6719): a link's metric is its ETX x 128 (RFC 6551's
  encoding), a path's cost the neighbour's advertised rank plus the link's metric, and
  the rank is the path cost through the parent (as Contiki-NG has it; the root's rank is
  MinHopRankIncrease). A link above MAX_LINK_METRIC or a path above MAX_PATH_COST is no
  candidate; the parent is left only for a path cheaper by PARENT_SWITCH_THRESHOLD
  (hysteresis, §3.2.2).

A link's ETX is :func:`etx` of the probability that a frame crosses it, which the MAC
measures from its acknowledgements; until the MAC feeds it, the host's
:meth:`~emulator.routing.host.RoutedTransport.link_delivery` gives the probability the
transport's link model has (1 on a lossless link).

>>> of0 = ObjectiveFunction("of0", {"min_hop_rank_increase": 256, "step_of_rank": 3,
...                                 "rank_factor": 1, "rank_stretch": 0})
>>> of0.rank_via(256, delivery=0.2), of0.better(1024, 1280)
(1024, True)
>>> mrhof = ObjectiveFunction("mrhof", {"min_hop_rank_increase": 256, "max_link_metric": 512,
...                                     "max_path_cost": 32768, "parent_switch_threshold": 192})
>>> mrhof.rank_via(256, delivery=1.0), mrhof.rank_via(256, delivery=0.5)
(384, 512)
>>> mrhof.rank_via(256, delivery=0.2) is None     # ETX 5 > MAX_LINK_METRIC / 128
True
>>> mrhof.better(600, 700), mrhof.better(500, 700)
(False, True)
"""
from __future__ import annotations

import math

#: The ETX encoding of RFC 6551 §4.3.2: ETX x 128.
ETX_DIVISOR = 128
#: The frame whose delivery the ETX stands for: a data frame of this many bytes (the
#: MAC's acknowledged frames; bit errors make a longer frame's ETX larger).
ETX_FRAME_BYTES = 64


def etx(delivery: float) -> float:
    """A link's expected transmission count: ``1 / p`` for a frame delivered with
    probability ``p`` (infinite when nothing gets through).

    >>> etx(1.0), etx(0.8), etx(0.0)
    (1.0, 1.25, inf)
    """
    return 1.0 / delivery if delivery > 0 else math.inf


class ObjectiveFunction:
    """OF0 or MRHOF (``name``) with the parameters of ``[routing.rpl]``."""

    def __init__(self, name: str, params: dict):
        self.name = name
        self.root_rank = params["min_hop_rank_increase"]
        if name == "of0":
            self.increase = ((params["rank_factor"] * params["step_of_rank"]
                              + params["rank_stretch"]) * params["min_hop_rank_increase"])
        else:
            self.max_link = params["max_link_metric"]
            self.max_path = params["max_path_cost"]
            self.threshold = params["parent_switch_threshold"]

    def rank_via(self, rank: int, delivery: float) -> int | None:
        """The rank through a neighbour of rank ``rank`` over a link that delivers with
        probability ``delivery``; None if it is no candidate."""
        if self.name == "of0":
            return rank + self.increase if delivery > 0 else None
        metric = etx(delivery) * ETX_DIVISOR
        if metric > self.max_link:
            return None
        cost = rank + round(metric)
        return cost if cost <= self.max_path else None

    def better(self, new: int, current: int) -> bool:
        """Whether a path of rank ``new`` replaces the parent's path of rank ``current``."""
        if self.name == "of0":
            return new < current
        return new < current - self.threshold
