"""The naive baseline's query node: every block arrives here and is joined here.

Blocks may arrive in any order, so the join is order-independent: each arriving tuple
is combined with the stored tuples of the other streams, and a combination is emitted
when its *last* member arrives, if :mod:`spark_nodes.algorithms.smj.semantics` admits it (every
member kept by its window at the close of the latest period among the members).

>>> from spark_nodes.workload.tuples import StreamTuple
>>> from spark_nodes.algorithms.smj.config import SmjConfig
>>> cfg = SmjConfig.of(mode="naive", streams=("R1", "R2"), stream_nodes=(1, 2),
...                    query_node=0, windows=(2.0, 2.0), duration=10.0)
>>> q = QueryJoin(cfg)
>>> q.add(StreamTuple("R2", 0, 2.5, 7, None, None, 2, entered_at=2.5))
[]
>>> [len(c) for c in q.add(StreamTuple("R1", 0, 1.5, 7, None, None, 1, entered_at=1.5))]
[2]
>>> q.add(StreamTuple("R1", 1, 0.2, 7, None, None, 1, entered_at=0.2))  # 3.0 - 0.2 > 2
[]
"""
from __future__ import annotations

import itertools

from spark_nodes.algorithms.smj.semantics import FixedPeriods, keeps


class QueryJoin:
    """Tuples of every stream, by key, and the admissible combinations."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.index = {s: k for k, s in enumerate(cfg.streams)}
        self.store: dict = {}          # key -> per stream index: [(period, tuple)]
        #: the periods' ends: the fixed clock, or the query node's FiredPeriods
        self.periods = FixedPeriods(cfg.period)

    def add(self, t) -> list[tuple]:
        """Store ``t``; return the combinations it completes."""
        cfg = self.cfg
        k = self.index[t.stream]
        p = self.periods.of(t.entered_at)
        per = self.store.setdefault(t.key, [[] for _ in range(cfg.n)])
        cands = []
        for o in range(cfg.n):
            if o == k:
                continue
            # pairwise necessary condition: both kept at the later of the two periods
            c = [(pu, u) for pu, u in per[o]
                 if keeps(cfg.windows[o], self.periods.close(max(p, pu)), u.ts)
                 and keeps(cfg.windows[k], self.periods.close(max(p, pu)), t.ts)]
            if not c:
                per[k].append((p, t))
                return []
            cands.append(c)
        per[k].append((p, t))
        out = []
        for combo in itertools.product(*cands):
            close = self.periods.close(max([p] + [pu for pu, _ in combo]))
            members = [u for _, u in combo] + [t]
            if all(keeps(cfg.windows[self.index[m.stream]], close, m.ts) for m in members):
                out.append(tuple(members))
        return out

    def expire(self, now: float) -> None:
        """Drop tuples more than ``window + grace`` old."""
        for key in list(self.store):
            for k, lst in enumerate(self.store[key]):
                horizon = self.cfg.windows[k] + self.cfg.grace
                if horizon != float("inf"):
                    lst[:] = [(p, t) for p, t in lst if now - t.ts <= horizon]

    def tuples(self) -> int:
        """Tuples stored now."""
        return sum(len(v) for per in self.store.values() for v in per)
