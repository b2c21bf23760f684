"""ATR — aligned tuple routing, the diffusion node's part (docs/ALGORITHMS.md#atr).

[source] The fastest stream is the master ``A``, cut into disjoint segments
``A[t, t+T)``; each goes to one host chosen least-loaded-first. Every other (slave)
stream ``i`` sends ``S_i[t - W_i, t + T + W_A)`` to the same host. Every result group
holds exactly one master tuple, which lies on exactly one host, so the hosts' results
are disjoint and their union is the join (Theorem A).

How the testbed runs it:

- **Batches.** The tuples aligned to one master segment form a *batch*: its host gets
  them in numbered *parts* (one per flush) and joins them on their own, so a batch is
  self-contained and the host drops it after its last part. A slave tuple in two
  overlapping ranges is sent twice — even when both batches went to the same host —
  which is exactly Theorem B's overhead ``Σ_{i≠A} r_i·(W_i + W_A) / T``.
- **Closing.** Tuples reach the diffusion node out of order. A flush at watermark ``wm``
  closes every tuple with ``ts < wm``; the program flushes every ``flush`` time units
  with ``wm = now - slack``. A tuple arriving with ``ts`` below the last watermark is
  *late*: it is dropped and counted (:attr:`AtrRouter.late`).
- **Segment adaptation** [recon of "probe T ± ΔT, move towards better measured
  performance, change only at segment ends"]: every ``adapt_every`` segments the next
  two segments use ``T + ΔT`` and ``T − ΔT``; when they and some ``T`` segments have
  completed, ``T`` moves to the length of lowest measured cost
  ``J = (replicated tuples / segment length) / input rate + (max load / mean load − 1)``
  (overhead against load-balancing granularity).
- **Master switch** [recon of the "transition phase"]: at a segment end ``t0``, if a
  slave's rate (moving average over segments, weight 1/4 on the newest) exceeds the
  master's by more than
  ``switch_margin``, it becomes the master. Groups whose old-master member has
  ``ts < t0`` stay with the old master's segments; the others belong to the new master:
  a transition segment ``B[t0 - W_B, t0)`` and then ``B[t0, ...)``, with the old
  master's tuples below ``t0`` clipped from their ranges. Each switch adds one such
  clip, so every group still has exactly one owner. Needs finite windows.

Examples
--------
>>> from spark_nodes.algorithms.ctr.load import LoadBoard
>>> from spark_nodes.workload.tuples import StreamTuple as T
>>> board = LoadBoard([1, 2], (0.0, 1.0, 0.0), (1.0, 100.0, 1.0), 1.0)
>>> r = AtrRouter(["A", "B"], {"A": 1.0, "B": 1.0}, 2.0, board)
>>> for i in range(6):
...     _ = r.add(T("A", i, float(i), 0, None, None, 0))
>>> _ = r.add(T("B", 0, 1.5, 0, None, None, 0))
>>> [(p.host, p.batch, [f"{t.stream}{t.seq}" for t in p.tuples]) for p in r.flush(2.0)]
[(1, 0, ['A0', 'A1', 'B0']), (2, 1, ['B0'])]
>>> [(p.host, p.batch, p.last, [f"{t.stream}{t.seq}" for t in p.tuples]) for p in r.close()]
[(1, 0, True, []), (2, 1, True, ['A2', 'A3']), (1, 2, True, ['A4', 'A5'])]

``B0`` (ts 1.5) is within ``W_B = 1`` of master tuples of both segments, so both batches
get it.
"""
from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from contract.state import StateList
from spark_nodes.algorithms.ctr.segments import atr_slave_range, segment_index


class Part(NamedTuple):
    """Tuples of batch ``batch`` for ``host``; parts are numbered from 0, ``last`` ends it."""

    host: int
    batch: int
    seq: int
    last: bool
    tuples: tuple


class Segment(NamedTuple):
    """A master segment as created: for metrics and Theorem B."""

    batch: int
    host: int
    master: str
    start: float
    end: float
    kind: str          # "base", "plus", "minus" (adaptation probes) or "transition"


class _Batch:
    __slots__ = ("copies", "cut", "done_at", "own", "parts", "ranges", "seg", "sent_upto")

    def __init__(self, seg: Segment, ranges: dict):
        self.seg = seg
        self.ranges = ranges
        self.sent_upto = -math.inf
        self.parts = 0
        self.copies = 0        # tuples sent in this batch
        self.own = 0           # of which with start <= ts < end (not replication)
        self.cut = False       # ended early by a window trigger (:meth:`AtrRouter.cut`)
        self.done_at = max(hi for _, hi in ranges.values())


class _History:
    """Closed tuples of one stream, sorted by ``ts`` (a state row each in a
    :class:`~contract.state.StateList`; ``ts`` is derived and not pickled)."""

    __slots__ = ("ts", "tups")

    def __init__(self):
        self.ts: list[float] = []
        self.tups = StateList(rows="tuple")

    def __getstate__(self):
        return (self.tups,)     # a tuple: pickle skips __setstate__ for a falsy state

    def __setstate__(self, state) -> None:
        (self.tups,) = state
        self.ts = [t.ts for t in self.tups]

    def slice(self, lo: float, hi: float) -> list:
        return self.tups[bisect_left(self.ts, lo):bisect_left(self.ts, hi)]

    def count(self, lo: float, hi: float) -> int:
        return bisect_left(self.ts, hi) - bisect_left(self.ts, lo)

    def trim(self, keep_from: float) -> None:
        i = bisect_left(self.ts, keep_from)
        del self.ts[:i], self.tups[:i]


class AtrRouter:
    """The ATR diffusion logic: buffer, cut, choose hosts, emit batch parts.

    Parameters
    ----------
    streams : sequence of str
    windows : mapping of str to float
        Windows (``inf`` = unbounded; disables the master switch).
    length : float
        Initial segment length ``T``.
    board : LoadBoard
        Host loads for LLF.
    delta : float
        Adaptation step ``ΔT``.
    adapt : bool
        Adapt ``T``.
    master_switch : bool
        Allow master role switches.
    switch_margin : float
        Relative rate lead a slave needs to become the master.
    adapt_every : int
        Segments between two probes of ``T ± ΔT``.
    """

    def __init__(self, streams: Sequence[str], windows: Mapping[str, float], length: float,
                 board, delta: float = 0.0, adapt: bool = False, master_switch: bool = True,
                 switch_margin: float = 0.25, adapt_every: int = 4):
        if not length > 0:
            raise ValueError(f"segment length must be > 0, got {length!r}")
        self.streams = list(streams)
        self.windows = {s: float(windows[s]) for s in self.streams}
        self.length = float(length)
        self.board = board
        self.delta = float(delta)
        self.adapt = adapt and self.delta > 0
        self.finite = all(math.isfinite(w) for w in self.windows.values())
        self.master_switch = master_switch and self.finite
        self.switch_margin = float(switch_margin)
        self.adapt_every = int(adapt_every)
        self._pos = {s: i for i, s in enumerate(self.streams)}
        self._pending: dict[str, list] = {s: [] for s in self.streams}
        self._hist = {s: _History() for s in self.streams}
        self._min_ts = {s: -math.inf for s in self.streams}
        self._rates: dict[str, float] | None = None
        self.master: str | None = None
        self.wm = -math.inf
        self._active: list[_Batch] = []
        self._cur: _Batch | None = None
        self._next_id = 0
        # adaptation: queued probe lengths, results per kind in the current cycle
        self._queue: list[tuple[str, float]] = []
        self._probing: list[str] = []
        self._since_probe = 0
        self._costs: dict[str, list[float]] = {}
        #: Segments created since the caller last took them (:meth:`take_segments`).
        self.new_segments: list[Segment] = []
        self.late = 0
        self.closed = {s: 0 for s in self.streams}
        #: Master segments that ended by reaching their length (not cut by a trigger).
        self.ended_by_length = 0

    # -- input --------------------------------------------------------------------------
    def add(self, tup) -> bool:
        """Buffer ``tup``; False (and counted as late) if its range was already flushed."""
        if tup.ts < self.wm:
            self.late += 1
            return False
        self._pending[tup.stream].append(tup)
        return True

    def buffered(self) -> int:
        """Tuples held (pending plus the closed history kept for future segments)."""
        return sum(len(p) for p in self._pending.values()) + \
            sum(len(h.ts) for h in self._hist.values())

    # -- flushing -----------------------------------------------------------------------
    def flush(self, wm: float) -> list[Part]:
        """Close every tuple with ``ts < wm``; return the parts to send."""
        if not wm > self.wm:
            return []
        for s, pend in self._pending.items():
            done = sorted((t for t in pend if t.ts < wm), key=lambda t: (t.ts, t.seq))
            if done:
                self._pending[s] = [t for t in pend if t.ts >= wm]
                h = self._hist[s]
                h.ts.extend(t.ts for t in done)
                h.tups.extend(done)
                self.closed[s] += len(done)
        self.wm = wm
        # parts of existing batches first, and each new batch's parts before the next
        # one is placed, so that LLF sees what was just sent
        parts = self._emit(wm)
        while self._create_segment(wm if math.isfinite(wm) else self._last_master_ts()):
            parts += self._emit(wm)
        self._trim()
        return parts

    def close(self) -> list[Part]:
        """End of the run: close everything and finish every batch (segments are made
        up to the master's last tuple: a segment without master tuples has no results)."""
        return self.flush(math.inf)

    def cut(self, at: float) -> float | None:
        """End the current master segment at event time ``at`` (a window trigger fired);
        the next one starts there. Only a segment that has begun and not yet closed can
        be cut (``start < at < end`` and ``at >= wm``: nothing at or after ``at`` has been
        sent), so segments stay disjoint and cover the master stream, and every group
        keeps exactly one owner (Theorem A). Returns how much shorter the segment got,
        or None when there was nothing to cut.

        >>> from spark_nodes.algorithms.ctr.load import LoadBoard
        >>> from spark_nodes.workload.tuples import StreamTuple as T
        >>> r = AtrRouter(["A"], {"A": 1.0}, 4.0, LoadBoard([1], (0, 1, 0), (1, 1, 1), 1.0))
        >>> _ = r.add(T("A", 0, 0.5, 0, None, None, 0)); _ = r.flush(1.0)
        >>> r.cut(2.5), r.cut(0.5)
        (-1.5, None)
        """
        b = self._cur
        if b is None or not (b.seg.start < at < b.seg.end) or at < self.wm:
            return None
        shorter = at - b.seg.end
        b.seg = b.seg._replace(end=at)
        b.cut = True
        m = b.seg.master
        for s in self.streams:
            if s == m:
                b.ranges[s] = (b.ranges[s][0], at)
            else:
                b.ranges[s] = atr_slave_range(b.seg.start, at, self.windows[s],
                                              self.windows[m], self._min_ts[s])
        b.done_at = max(hi for _, hi in b.ranges.values())
        return shorter

    def _last_master_ts(self) -> float:
        h = self._hist[self.master].ts if self.master is not None else []
        return h[-1] if h else -math.inf

    # -- segments -----------------------------------------------------------------------
    def _create_segment(self, limit: float) -> bool:
        """Create the next segment if the current one ended by ``limit``; True if made."""
        if self._cur is None:
            counts = {s: len(self._hist[s].ts) for s in self.streams}
            if not any(counts.values()):
                return False
            first = min(h.ts[0] for h in self._hist.values() if h.ts)
            start = segment_index(first, self.length) * self.length
            self.master = max(self.streams, key=lambda s: (counts[s], -self._pos[s]))
            self._start_segment(start, "base", self.length)
            return True
        if not self._cur.seg.end <= limit:
            return False
        t0 = self._cur.seg.end
        self.ended_by_length += not self._cur.cut
        self._update_rates()
        if self.master_switch:
            self._maybe_switch(t0)
        kind, length = self._next_length()
        self._start_segment(t0, kind, length)
        return True

    def _start_segment(self, start: float, kind: str, length: float) -> None:
        self._cur = self._new_batch(start, start + length, kind)

    def _new_batch(self, start: float, end: float, kind: str) -> _Batch:
        m = self.master
        ranges = {}
        for s in self.streams:
            if s == m:
                ranges[s] = (max(start, self._min_ts[s]), end)
            else:
                ranges[s] = atr_slave_range(start, end, self.windows[s], self.windows[m],
                                            self._min_ts[s])
        host = self.board.least_loaded(self.board.hosts)
        seg = Segment(self._next_id, host, m, start, end, kind)
        self._next_id += 1
        b = _Batch(seg, ranges)
        self._active.append(b)
        self.new_segments.append(seg)
        return b

    def _update_rates(self) -> None:
        seg = self._cur.seg
        span = seg.end - seg.start
        now = {s: self._hist[s].count(seg.start, seg.end) / span for s in self.streams}
        if self._rates is None:
            self._rates = now
        else:
            # a slow moving average: one segment's Poisson noise must not flip the master
            self._rates = {s: 0.75 * self._rates[s] + 0.25 * now[s] for s in self.streams}

    def _maybe_switch(self, t0: float) -> None:
        r = self._rates
        best = max(self.streams, key=lambda s: (r[s], -self._pos[s]))
        if best == self.master or not r[best] > r[self.master] * (1 + self.switch_margin):
            return
        old = self.master
        self._min_ts[old] = max(self._min_ts[old], t0)
        self.master = best
        # transition segment: new-master tuples that can join old-master tuples >= t0
        self._new_batch(t0 - self.windows[best], t0, "transition")

    def _next_length(self) -> tuple[str, float]:
        if self._queue:
            return self._queue.pop(0)
        if self.adapt and not self._probing and self._since_probe >= self.adapt_every:
            self._queue = [("plus", self.length + self.delta)]
            if self.length - self.delta > 0:
                self._queue.append(("minus", self.length - self.delta))
            self._probing = [k for k, _ in self._queue]
            self._since_probe = 0
            return self._queue.pop(0)
        self._since_probe += 1
        return "base", self.length

    def _finished(self, b: _Batch) -> None:
        seg = b.seg
        if not self.adapt or seg.kind == "transition":
            return
        total_rate = sum(self._rates.values()) if self._rates else 0.0
        extra = (b.copies - b.own) / (seg.end - seg.start)
        cost = (extra / total_rate if total_rate > 0 else 0.0) + self.board.imbalance() - 1.0
        self._costs.setdefault(seg.kind, []).append(cost)
        if self._probing and all(k in self._costs for k in self._probing) \
                and "base" in self._costs:
            options = {self.length: sum(self._costs["base"]) / len(self._costs["base"]),
                       self.length + self.delta: self._costs["plus"][0]}
            if "minus" in self._probing:
                options[self.length - self.delta] = self._costs["minus"][0]
            # ties keep the current length (listed first)
            self.length = min(options, key=lambda t: options[t])
            self._costs = {}
            self._probing = []

    # -- output -------------------------------------------------------------------------
    def _emit(self, wm: float) -> list[Part]:
        parts = []
        keep = []
        for b in self._active:
            tups = []
            for s in self.streams:
                lo, hi = b.ranges[s]
                a, z = max(lo, b.sent_upto), min(hi, wm)
                if a < z:
                    tups.extend(self._hist[s].slice(a, z))
            b.sent_upto = wm
            last = wm >= b.done_at
            if tups or last:
                tups.sort(key=lambda t: (t.ts, self._pos[t.stream], t.seq))
                seg = b.seg
                b.copies += len(tups)
                b.own += sum(1 for t in tups if seg.start <= t.ts < seg.end)
                self.board.sent(seg.host, len(tups), sum(t.size for t in tups))
                parts.append(Part(seg.host, seg.batch, b.parts, last, tuple(tups)))
                b.parts += 1
            if last:
                self._finished(b)
            else:
                keep.append(b)
        self._active = keep
        return parts

    def _trim(self) -> None:
        if self._cur is None or not self.finite:
            return
        wmax = max(self.windows.values())
        keep_from = min([self._cur.seg.start, self._cur.seg.end - 2 * wmax]
                        + [lo for b in self._active for lo, _ in b.ranges.values()])
        for h in self._hist.values():
            h.trim(keep_from)
