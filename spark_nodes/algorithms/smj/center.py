"""The synopsis center: all synopses, one decision (filter + order) per block.

The center processes periods in order and only once every site's message for the
period (``ΔS`` and ``∇S``, sent even when empty) has arrived. Within period ``j`` it
first applies every ``∇S``, then takes the sites in index order: for site ``i`` the
other rows hold exactly the tuples that rank below block ``(j, i)`` and are kept by
their windows at ``c_j`` (:mod:`spark_nodes.algorithms.smj.semantics`), so the mask
filter drops exactly the tuples that cannot produce a result and every order's cost
estimate is the true data cost at the current ``W``.

>>> import numpy as np
>>> from spark_nodes.algorithms.smj.config import SmjConfig
>>> from spark_nodes.algorithms.smj.synopsis import Sparse
>>> cfg = SmjConfig.of(mode="smj-e", streams=("R1", "R2"), stream_nodes=(1, 2),
...                    query_node=0, windows=(None, None), duration=10.0)
>>> c = Center(cfg)
>>> c.receive(1, 0, Sparse.of_keys([5]), Sparse.of_keys([]))
>>> c.ready()
False
>>> c.receive(0, 0, Sparse.of_keys([5, 6]), Sparse.of_keys([]))
>>> [(d.site, d.keep.tolist(), d.order) for d in c.decide(np.ones((3, 3)))]
[(0, [], ()), (1, [5], (0,))]
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spark_nodes.algorithms.smj.orders import (OrderProblem, mask_filter, product_filter, smje,
                                               smjh)
from spark_nodes.algorithms.smj.synopsis import SynopsisTable


@dataclass(frozen=True)
class Decision:
    """The center's answer for block ``(period, site)``."""

    site: int
    period: int
    keep: np.ndarray          # keys the filter keeps
    order: tuple[int, ...]    # the other sites, in visiting order
    estimate: float           # cost of the order as the chooser saw it
    hindsight: float          # cheapest order given exact sizes, query hop included


class Center:
    """Synopses ``S_1..S_n`` and the period barrier (picklable: it migrates)."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.table = SynopsisTable(cfg.n)
        self.pending: dict[int, dict] = {}   # period -> {site: (delta, decrement)}
        self.next_period = 0

    def receive(self, site: int, period: int, delta, decrement) -> None:
        """File site ``site``'s synopsis message for ``period``."""
        if period < self.next_period or site in self.pending.get(period, {}):
            raise ValueError(f"duplicate synopsis of site {site} for period {period}")
        self.pending.setdefault(period, {})[site] = (delta, decrement)

    def ready(self) -> bool:
        """Whether every site's message for the next period has arrived."""
        return len(self.pending.get(self.next_period, ())) == self.cfg.n

    def decide(self, w: np.ndarray) -> list[Decision]:
        """Process the next period with cost matrix ``w`` (sites, then the query node).

        Sites whose block is empty get no decision."""
        j = self.next_period
        msgs = self.pending.pop(j)
        self.next_period += 1
        for site in range(self.cfg.n):
            self.table.add(site, msgs[site][1], sign=-1)
        if self.cfg.mode == "smj-e":
            chooser = smje
        else:
            def chooser(problem):
                return smjh(problem, self.cfg.lookahead)
        out = []
        for i in range(self.cfg.n):
            delta = msgs[i][0]
            if delta.entries == 0:
                continue
            x = self.table.dense(delta)
            rows = self.table.rows
            mask = mask_filter(x, rows, i)
            vec = mask if self.cfg.filter == "mask" else product_filter(x, rows, i)
            estimate, order = chooser(OrderProblem(vec, rows, w, i, self.cfg.include_final))
            hindsight = smje(OrderProblem(mask, rows, w, i, True))[0]
            keep = np.flatnonzero(mask)
            out.append(Decision(i, j, keep, order if keep.size else (), estimate,
                                hindsight))
            self.table.add(i, delta)
        return out

    def entries(self) -> int:
        """Synopsis entries held (what moving the center transfers)."""
        held = sum(d.entries + r.entries for m in self.pending.values()
                   for d, r in m.values())
        return self.table.entries + held
