"""A source site's data: retained tuples, period blocks, synopsis deltas, the join step.

A site stores every tuple of its stream with its period, hands out the block of a
period when it closes, reports which counted tuples left the window (``∇S``), and joins
visiting partial results with the tuples that rank below the visiting block (see
:mod:`spark_nodes.algorithms.smj.semantics`). Tuples are physically dropped ``grace`` time
units after leaving the window, which leaves in-flight blocks that much time to arrive.

>>> from spark_nodes.workload.tuples import StreamTuple
>>> from spark_nodes.algorithms.smj.config import SmjConfig
>>> cfg = SmjConfig.of(mode="smj-h", streams=("R1", "R2"), stream_nodes=(1, 2),
...                    query_node=0, windows=(None, None), duration=10.0)
>>> site = Site(cfg, 0)
>>> site.add(StreamTuple("R1", 0, 0.5, 7, None, None, 1, entered_at=0.5))
>>> [t.seq for t in site.close(0)]
[0]
>>> part = {7: [(StreamTuple("R2", 0, 1.5, 7, None, None, 2, entered_at=1.5),)]}
>>> out = site.join(part, j=1, origin=1)      # R2's block of period 1 meets R1:0
>>> [[m.seq for m in c] for c in out[7]]
[[0, 0]]
"""
from __future__ import annotations

from collections import defaultdict

from contract.state import StateList
from spark_nodes.algorithms.smj.semantics import FixedPeriods, keeps
from spark_nodes.algorithms.smj.synopsis import Sparse


def count(partial: dict) -> int:
    """Number of (partial) result tuples in a ``{key: [combo, ...]}`` map.

    >>> count({1: [("a",), ("b",)], 2: [("c",)]})
    3
    """
    return sum(len(v) for v in partial.values())


def by_key(tuples) -> dict:
    """``{key: [(t,), ...]}``: tuples as one-member partial results.

    >>> by_key([]) == {}
    True
    """
    out: dict = defaultdict(list)
    for t in tuples:
        out[t.key].append((t,))
    return dict(out)


class Site:
    """The data of stream ``index`` at its node."""

    def __init__(self, cfg, index: int):
        self.cfg = cfg
        self.index = index
        self.stream = cfg.streams[index]
        self.window = cfg.windows[index]
        # The state rows (contract.state): every retained (period, tuple), those of
        # periods not yet closed, the tuples the center's S includes, and those of a
        # period whose end is unknown. ``store`` indexes ``retained`` by key (derived:
        # rebuilt when the site is unpickled).
        self.retained = StateList()                   # (period, tuple), in arrival order
        self.opened = StateList()                     # (period, tuple) not yet closed
        self.counted = StateList(rows="tuple")
        self.later = StateList(rows="tuple")
        self.store: dict = defaultdict(list)          # key -> [(period, tuple)]
        self.blocks: dict = {}                        # period -> block awaiting its filter
        #: the periods' ends: the fixed clock, or a node's FiredPeriods under a trigger
        self.periods = FixedPeriods(cfg.period)

    def __getstate__(self):
        state = dict(self.__dict__)
        del state["store"]
        return state

    def __setstate__(self, state) -> None:
        self.__dict__.update(state)
        self.store = defaultdict(list)
        for p, t in self.retained:
            self.store[t.key].append((p, t))

    def add(self, t) -> None:
        """Retain a tuple of this stream (tuples of unprocessed periods are ignored)."""
        if t.stream != self.stream:
            raise ValueError(f"site of {self.stream} got a tuple of {t.stream}")
        if t.key is None:
            raise ValueError(f"{t.stream}:{t.seq}: SMJ joins on key; the tuple has none")
        p = self.periods.of(t.entered_at)
        if p is None:            # a trigger has not ended its period yet
            self.later.append(t)
        elif p < self.cfg.periods:
            self.retained.append((p, t))
            self.store[t.key].append((p, t))
            self.opened.append((p, t))

    def learned(self) -> None:
        """Period ends were learned: file the tuples that now fall in a known period."""
        later = list(self.later)
        self.later.clear()
        for t in later:
            self.add(t)

    def close(self, j: int) -> list:
        """The block of period ``j``: its tuples that the window keeps at ``c_j``."""
        close = self.periods.close(j)
        closing = self.opened.retain(lambda pt: pt[0] != j)
        return [t for _, t in closing if keeps(self.window, close, t.ts)]

    def decrement(self, j: int, block: list) -> Sparse:
        """``∇S`` at the close of period ``j``; then count the new ``block`` in."""
        close = self.periods.close(j)
        gone = self.counted.retain(lambda t: keeps(self.window, close, t.ts))
        self.counted.extend(block)
        return Sparse.of_keys(t.key for t in gone)

    def expire(self, now: float) -> None:
        """Drop tuples more than ``window + grace`` old (never with no window)."""
        horizon = self.window + self.cfg.grace
        if horizon == float("inf"):
            return
        if not self.retained.retain(lambda pt: now - pt[1].ts <= horizon):
            return                  # nothing old enough
        for key in list(self.store):
            kept = [(p, t) for p, t in self.store[key] if now - t.ts <= horizon]
            if kept:
                self.store[key] = kept
            else:
                del self.store[key]

    def join(self, partial: dict, j: int, origin: int) -> dict:
        """Extend each partial result with this stream's tuples of equal key that rank
        below the block ``(j, origin)`` and that the window keeps at ``c_j``."""
        close = self.periods.close(j)
        rank = (j, origin)
        out = {}
        for key, combos in partial.items():
            matches = [t for p, t in self.store.get(key, ())
                       if (p, self.index) < rank and keeps(self.window, close, t.ts)]
            if matches:
                out[key] = [c + (t,) for c in combos for t in matches]
        return out

    def tuples(self) -> int:
        """Tuples retained now."""
        return sum(len(v) for v in self.store.values()) + len(self.later)
