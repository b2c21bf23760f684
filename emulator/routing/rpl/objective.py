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

A link's ETX comes from one of two sources. On the ideal medium (no MAC) it is
:func:`etx` of the probability the transport's link model gives a frame
(:meth:`~emulator.routing.host.RoutedTransport.link_delivery`; 1 on a lossless link),
exact from the first DIO. Under a MAC it is learnt from the MAC's acknowledgements
(:mod:`.link_stats`, ``learnt=True`` here), and OF0 keeps the RFC's fixed ``Sp`` (a
fewest-hop tree) as Contiki-NG's ``RPL_OF0_FIXED_SR`` does, whole: its step of rank is
3 whatever the link, so every link may lead to a parent (``nbr_is_acceptable_parent``
and ``nbr_has_usable_link`` are true for any ETX); of candidates of equal rank the one
with the better link is taken (:meth:`ObjectiveFunction.order`). The ETX-based step
(``RPL_OF0_ETX_BASED_SR``: the rank moving with every third of an ETX) kept the tree
churning and looping under the MAC, and its bound on links (none of ETX 4 or more),
kept with the fixed step until 2026-12-03, made whole neighbourhoods detach over
ContikiMAC whenever a few trains failed (docs/NOTES.md, "RPL over ContikiMAC").

>>> of0 = ObjectiveFunction("of0", {"min_hop_rank_increase": 256, "step_of_rank": 3,
...                                 "rank_factor": 1, "rank_stretch": 0})
>>> of0.rank_via(256, etx=5.0), of0.better(1024, 1280)
(1024, True)
>>> learnt = ObjectiveFunction("of0", of0.params, learnt=True)
>>> learnt.rank_via(256, etx=1.0), learnt.rank_via(256, etx=3.9), learnt.rank_via(256, etx=16.0)
(1024, 1024, 1024)
>>> mrhof = ObjectiveFunction("mrhof", {"min_hop_rank_increase": 256, "max_link_metric": 512,
...                                     "max_path_cost": 32768, "parent_switch_threshold": 192})
>>> mrhof.rank_via(256, etx=1.0), mrhof.rank_via(256, etx=2.0)
(384, 512)
>>> mrhof.rank_via(256, etx=5.0) is None     # ETX 5 > MAX_LINK_METRIC / 128
True
>>> mrhof.usable(4.0), mrhof.usable(4.1), learnt.usable(16.0), of0.usable(math.inf)
(True, False, True, False)
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
    """OF0 or MRHOF (``name``) with the parameters of ``[routing.rpl]``; ``learnt``:
    the ETX is learnt from a MAC (it breaks OF0's ties; MRHOF's metric either way)."""

    def __init__(self, name: str, params: dict, learnt: bool = False):
        self.name = name
        self.params = params
        self.learnt = learnt
        self.root_rank = params["min_hop_rank_increase"]
        if name == "of0":
            self.increase = ((params["rank_factor"] * params["step_of_rank"]
                              + params["rank_stretch"]) * params["min_hop_rank_increase"])
        else:
            self.max_link = params["max_link_metric"]
            self.max_path = params["max_path_cost"]
            self.threshold = params["parent_switch_threshold"]

    def usable(self, link_etx: float) -> bool:
        """Whether a link of ETX ``link_etx`` may lead to a parent at all (MRHOF: ETX x
        128 within MAX_LINK_METRIC; OF0: a link that delivers, or any learnt link, as
        Contiki-NG's OF0 with its fixed step takes them)."""
        if self.name == "of0":
            return self.learnt or link_etx < math.inf
        return link_etx * ETX_DIVISOR <= self.max_link

    def rank_via(self, rank: int, etx: float) -> int | None:
        """The rank through a neighbour of rank ``rank`` over a link of ETX ``etx``;
        None if it is no candidate."""
        if not self.usable(etx):
            return None
        if self.name == "of0":
            return rank + self.increase
        cost = rank + round(etx * ETX_DIVISOR)
        return cost if cost <= self.max_path else None

    def order(self, rank: int, etx: float, via: int) -> tuple:
        """The key by which candidates are ranked (least first; the caller adds the
        node id as the last tie-break): the rank ``via`` through the neighbour, and for
        OF0 with a learnt ETX then the link's ETX x 128, so that of equal ranks the
        better link wins (as Contiki-NG's ``rpl-of0.c`` ``best_parent`` breaks a tie;
        it compares the neighbour's rank plus ETX x 128 first, which churned here:
        docs/NOTES.md).

        >>> learnt = ObjectiveFunction("of0", {"min_hop_rank_increase": 256,
        ...     "step_of_rank": 3, "rank_factor": 1, "rank_stretch": 0}, learnt=True)
        >>> learnt.order(512, 1.5, 1280), learnt.order(256, 2.9, 1280)
        ((1280, 192), (1280, 371))
        """
        if self.name == "of0" and self.learnt:
            metric = round(etx * ETX_DIVISOR)
            return (via, metric)
        return (via,)

    def better(self, new: int, current: int) -> bool:
        """Whether a path of rank ``new`` replaces the parent's path of rank ``current``."""
        if self.name == "of0":
            return new < current
        return new < current - self.threshold
