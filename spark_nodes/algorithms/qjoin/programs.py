"""Node programs of the QJoin family: sources that ship tuples, and the join node.

Every tuple of the two streams is sent (kind ``data``) from its source node to the join
node, where it arrives out of order through the emulated network; ``ctx.now`` is its
arrival time. The join node programs differ in what they do on arrival:

- :class:`QJoinNode` — symmetric join at once, buffers adapted every ``L``;
- :class:`SlackJoinNode` — a reorder buffer (K-slack or MP-K-slack) in front of the
  same symmetric join (allowance 0), which sees released tuples only;
- :class:`NoBufferNode` — the symmetric join with allowance 0 and nothing else.

Each records the arrival of every tuple (metric ``arrival:<stream>``, value = ``seq``),
which is what per-period recall and the hindsight bound are computed from
(:mod:`spark_nodes.algorithms.qjoin.evaluation`).

Examples
--------
>>> from contract.program import Event, TUPLE, run_node_step
>>> from spark_nodes.workload.tuples import StreamTuple
>>> src = SourceNode(join_node=4)
>>> t = StreamTuple("R", 0, 0.0, 1, None, None, 2)
>>> out = run_node_step(src, 2, [Event(0.0, 0, TUPLE, t)], 0.0, 1.0, None, seed=1)
>>> [(m.dst, m.kind, m.size_units) for m in out.messages]
[(4, 'data', 1.0)]
"""
from __future__ import annotations

import math

from contract.program import NodeProgram
from spark_nodes.algorithms.qjoin.estimator import decide, quality_grid
from spark_nodes.algorithms.qjoin.kslack import KSlack
from spark_nodes.algorithms.qjoin.mpkslack import MPKSlack
from spark_nodes.algorithms.qjoin.operator import SymmetricJoin
from spark_nodes.algorithms.qjoin.statistics import IntervalStats, PeriodCounts
from spark_nodes.algorithms.triggers.faults import guarded
from spark_nodes.algorithms.triggers.gate import REPORT, CountBook, Gate

ADAPT = "adapt"
POLL = "poll"
#: Message kind of a window signal from a source whose condition fired.
SIGNAL = "trigger"
#: Float slack when comparing virtual times that are sums of ``L``.
_EPS = 1e-9


class SourceNode(NodeProgram):
    """Ship every tuple produced here to the join node, one ``data`` message each.

    With a trigger whose conditions are measured ``at = "sources"``, the source also
    watches its own tuples and the faults it observes (its messages lost, a change of its
    route to the join node) and, when its condition fires, signals the join node to
    close a window (kind ``trigger``; ``signal = "free"``: at once, outside the network).
    ``reports``: the source is the upstream a gate at the join node watches, and reports
    each of those faults to it (kind ``gate_exception``, sent the same way).
    """

    def __init__(self, join_node: int, trigger=None, signal_units: float = 0.25,
                 reports: bool = False):
        self.join_node = join_node
        self.trigger = trigger
        self.initiator = trigger.initiator("sources") if trigger is not None else None
        self.signal_units = signal_units
        self.reports = reports
        self.next_hop = None

    def on_tuple(self, ctx, tup) -> None:
        ctx.send(self.join_node, "data", tup, tup.size)
        if self.initiator is not None or self.reports:
            self._watch_route(ctx)
        if self.initiator is not None:
            self._signal(ctx, self.initiator.tuple(tup.stream, None, ctx.now))

    def on_tuples(self, ctx, tuples) -> None:
        """Many tuples at once (``emulator.tuple_spans``): a plain source ships them in
        one call, each at its time; one that watches faults takes them one by one."""
        if self.listens_to_losses():
            super().on_tuples(ctx, tuples)
            return
        ctx.send_many(self.join_node, "data", tuples, [t.size for t in tuples],
                      [t.entered_at for t in tuples])

    def on_lost(self, ctx, msg, reason) -> None:
        self._fault(ctx, reason, msg.dst)

    def listens_to_losses(self) -> bool:
        return self.initiator is not None or self.reports

    def takes_tuple_spans(self) -> bool:
        """A plain source takes its tuples by the span; one that watches its losses and
        routes cannot (it hears of the network, so it is stepped)."""
        return not self.listens_to_losses()

    def receives_messages(self) -> bool:
        """A source is never sent to (it may hear of its losses: see above)."""
        return False

    def _watch_route(self, ctx) -> None:
        hop = ctx.net.next_hop(ctx.node, self.join_node) if ctx.net is not None else None
        if self.next_hop is not None and hop != self.next_hop:
            self._fault(ctx, "route_change", None)
        self.next_hop = hop

    def _fault(self, ctx, kind: str, origin) -> None:
        """A fault observed here: told to this source's initiator, reported to a gate."""
        if self.initiator is not None:
            self._signal(ctx, self.initiator.exception(kind, ctx.now, origin))
        if self.reports:
            ctx.signal(self.join_node, REPORT, kind, self.signal_units,
                       free=self.trigger.signal == "free")

    def _signal(self, ctx, fired) -> None:
        for window in fired:
            ctx.signal(self.join_node, SIGNAL, window.kind, self.signal_units,
                       free=self.trigger.signal == "free")


class JoinNode(NodeProgram):
    """Common part of the join node programs: stream sides, arrivals, memory.

    Parameters
    ----------
    streams : tuple of str
        ``(R, S)`` stream names.
    bytes_per_unit : int
        Bytes of one data unit (memory in bytes).
    source : SourceNode or None
        When the join node also produces a stream, its source part.
    """

    def __init__(self, streams: tuple[str, str], bytes_per_unit: int = 32,
                 source: SourceNode | None = None):
        self.streams = tuple(streams)
        self.side = {name: k for k, name in enumerate(self.streams)}
        self.bytes_per_unit = bytes_per_unit
        self.source = source

    def on_tuple(self, ctx, tup) -> None:
        if self.source is None:
            raise ValueError(f"join node {ctx.node}: tuple {tup.stream}:{tup.seq} produced "
                             f"here but the node has no source role")
        self.source.on_tuple(ctx, tup)

    def on_message(self, ctx, msg) -> None:
        if msg.kind == SIGNAL:
            self.signalled(ctx, msg.payload)
            return
        if msg.kind == REPORT:
            self.reported(ctx, msg.payload)
            return
        if msg.kind != "data":
            raise ValueError(f"join node {ctx.node}: unexpected {msg.kind!r} message from "
                             f"node {msg.src}")
        tup = msg.payload
        if tup.stream not in self.side:
            raise ValueError(f"join node {ctx.node}: tuple of unknown stream {tup.stream!r}; "
                             f"expected {self.streams}")
        ctx.record(f"arrival:{tup.stream}", tup.seq)
        self.arrive(ctx, self.side[tup.stream], tup)

    def sends_messages(self) -> bool:
        """The join node's tuples and signals, as a source, are local sends to itself."""
        return False

    def arrive(self, ctx, side: int, tup) -> None:
        """Handle one arrival (subclasses)."""
        raise NotImplementedError

    def signalled(self, ctx, kind: str) -> None:
        """A source's condition fired a window here (subclasses with windows)."""
        raise ValueError(f"join node {ctx.node}: a window signal, but this join has no "
                         "window initiator")

    def reported(self, ctx, kind: str) -> None:
        """A gate's upstream reported an exception of ``kind`` (subclasses with a gate)."""
        raise ValueError(f"join node {ctx.node}: an exception report, but this join has no "
                         "gate")

    def held(self) -> tuple[int, float]:
        """``(tuples, size units)`` held by the program (subclasses)."""
        return 0, 0.0

    def memory(self) -> tuple[int, int]:
        n, units = self.held()
        return n, int(round(units * self.bytes_per_unit))


def _emit(ctx, tup, partners) -> None:
    for p in partners:
        ctx.emit((p, tup))


class QJoinNode(JoinNode):
    """QJoin at the join node: symmetric join on arrival, buffers adapted every ``L``.

    Until the first period ``P`` has passed, and whenever the target ``Q_L*`` is
    infeasible, the buffers are the largest (allowance = the largest delay seen, no size
    limit). Otherwise Algorithm 1 sets the allowances ``(dx, dy)`` and, with
    ``evict_over_size``, the sizes ``(x, y)`` (rounded up to whole tuples).

    ``spend`` says how ``Q_L*`` uses recall banked above ``Q_user`` over the last
    ``P - L``: ``spread`` (default) spends ``1 / (P/L - 1)`` of it in each interval, so
    the surplus of the warm-up period (largest buffers) runs down over the next period
    instead of letting the buffers collapse at once; ``at_once`` is Ji et al.'s
    ``Gamma_L``, which spends all of it in the next interval. A deficit is made up at
    once either way. ``period`` keeps the books of the user's period ``[kP, (k+1)P)``
    instead of the last ``P - L`` and spreads a surplus or a deficit over what is left
    of it (:meth:`_book`).

    ``book_true`` says what an interval's true count is in the books: its estimate
    ``N_L`` (``estimate``) or what it produced plus its arrivals' missed comparisons at
    their own selectivity (``observed``; the join then counts the tuples gone from its
    buffers, :meth:`SymmetricJoin.missed`).

    Every adaptation records ``dx, dy`` (allowances in force), ``x, y`` (buffer sizes
    ``(d + w) V`` they stand for), ``q_target, q_estimate, n_ideal`` (the estimated true
    results of the closed interval), ``n_true_L`` (its true count as booked),
    ``produced_L`` and ``feasible`` (0 while the buffers are the largest).

    ``[trigger.qjoin] evaluate = "on_window"``: a tuple is joined only when the next
    window fires (the clock's every ``L``, or the trigger's), all the window's tuples in
    arrival order before the adaptation; the default ``on_arrival`` joins it at once.

    With a gate (``[trigger.qjoin] gate``, :mod:`spark_nodes.algorithms.triggers.gate`)
    a tuple is joined only while the gate is open; what arrives while it is shut is held
    or dropped. At the end the node records ``evaluations`` (tuples joined),
    ``evaluations_skipped`` and, with a gate, ``gate_closed_time``, and then the changes
    of the first two as tuples still in flight arrive (the drain).
    """

    def __init__(self, streams, w: float, predicate: str, theta, params: dict,
                 bytes_per_unit: int = 32, source: SourceNode | None = None, trigger=None):
        super().__init__(streams, bytes_per_unit, source)
        self.p = dict(params)
        # a window initiator instead of the fixed clock L (spark_nodes.algorithms.triggers)
        self.trigger = trigger if trigger is not None and not trigger.clock else None
        self.initiator = self.trigger.initiator("here") if self.trigger is not None else None
        gate = getattr(trigger, "gate", None)
        self.gate = Gate(gate) if gate is not None else None
        # polls: the trigger's time-based conditions, the gate's silence and reopening
        self.poll = trigger.poll if self.initiator is not None or self.gate is not None \
            else None
        self.on_window = getattr(trigger, "evaluate", "on_arrival") == "on_window"
        self.window: list = []          # on_window: (side, tuple) since the last window
        self.evaluated = 0
        self.book = CountBook()         # evaluations, ... recorded from the run's end
        self.last_adapt = 0.0
        self.w = float(w)
        self.core = SymmetricJoin(w, predicate, theta, params["purge"],
                                  count_missed=params["book_true"] == "observed")
        self.core.set_allowance(0, None)
        self.core.set_allowance(1, None)
        self.stats = IntervalStats()
        slots = max(0, int(round(params["P"] / params["L"])) - 1)
        # spend = "period": the books hold the user's current period [kP, (k+1)P) so far
        self.by_period = params["spend"] == "period"
        self.period = PeriodCounts(None if self.by_period else slots)
        self.book_period = 0
        self.spread = float(max(1, slots)) if params["spend"] == "spread" \
            else 1.0
        self.produced = 0
        self.interval_max = [0.0, 0.0]

    def start(self, ctx) -> None:
        if self.trigger is None:
            ctx.set_timer(ctx.now + self.p["L"], ADAPT)
        if self.poll is not None:
            ctx.set_timer(ctx.now + self.poll, POLL)

    def arrive(self, ctx, side, tup) -> None:
        if self.gate is None:
            self.take(ctx, side, tup)
            return
        if tup.origin == self.gate.spec.upstream:
            self.gate.heard(ctx.now)
        for held_side, held in self.gate.admit(ctx.now, (side, tup)):
            self.take(ctx, held_side, held)
        self._record_counts(ctx)

    def reported(self, ctx, kind: str) -> None:
        if self.gate is None:
            super().reported(ctx, kind)
        self.gate.exception(kind, ctx.now)

    def take(self, ctx, side, tup) -> None:
        """A tuple the gate let through: joined now, or (``evaluate = "on_window"``)
        kept until the next window fires; the trigger counts it either way."""
        if not self.on_window:
            self._adapt_on(ctx, self.evaluate(ctx, side, tup))
            return
        self.window.append((side, tup))
        if self.initiator is not None:
            self._adapt_on(ctx, self.initiator.tuple(tup.stream, None, ctx.now))

    def evaluate(self, ctx, side, tup) -> list:
        """Join one tuple (the operator's work); the windows its trigger fires."""
        self.evaluated += 1
        if self.gate is None:
            self._record_counts(ctx)
        allowance = self.core.allowance[side]
        fired = []
        if self.initiator is None:
            joined = self.core.arrive(side, tup)
        else:
            # under a trigger the join's own errors are exceptions it counts (the tuple
            # is skipped, the node keeps running)
            joined, fired = guarded(ctx, self.initiator, self.core.arrive, side, tup)
            if joined is None:
                return fired
        partners, comparisons, delay = joined
        _emit(ctx, tup, partners)
        missed = self.core.missed(1 - side, tup.ts) if self.p["book_true"] == "observed" \
            else 0
        self.stats.add(side, delay, comparisons, len(partners), missed)
        self.produced += len(partners)
        self.interval_max[side] = max(self.interval_max[side], delay)
        late = allowance is not None and delay > allowance     # behind its allowance
        if late and self.gate is not None and tup.origin == self.gate.spec.upstream:
            self.gate.exception("late", ctx.now)
        if self.initiator is not None:
            if not self.on_window:       # on_window: counted when it arrived (take)
                fired += self.initiator.tuple(tup.stream, None, ctx.now)
            if late:
                fired += self.initiator.exception("late", ctx.now, tup.origin)
        return fired

    def _adapt_on(self, ctx, fired) -> None:
        for window in fired:
            self.adapt(ctx, window.kind)

    def _evaluate_window(self, ctx) -> None:
        """``on_window``: join what the window holds, in arrival order. Windows that its
        late tuples fire now are absorbed by the one being evaluated."""
        held, self.window = self.window, []
        for side, tup in held:
            self.evaluate(ctx, side, tup)

    def on_timer(self, ctx, tag) -> None:
        if tag == ADAPT:
            self.adapt(ctx, "time")
            ctx.set_timer(ctx.now + self.p["L"], ADAPT)
        elif tag == POLL:
            if self.initiator is not None:
                for window in self.initiator.poll(ctx.now):
                    self.adapt(ctx, window.kind)
            if self.gate is not None:
                for side, tup in self.gate.poll(ctx.now):
                    self.take(ctx, side, tup)
                self._record_counts(ctx)
            ctx.set_timer(ctx.now + self.poll, POLL)
        else:
            raise ValueError(f"QJoin node {ctx.node}: unknown timer {tag!r}")

    def finish(self, ctx) -> None:
        # on_window: the run's end closes the last window; what is still in flight (the
        # drain) is joined as it arrives
        self._evaluate_window(ctx)
        self.on_window = False
        self.book.finished = True
        self._record_counts(ctx)

    def _record_counts(self, ctx) -> None:
        """Record the counts once the run has ended, then every change during the drain
        (``gate_closed_time`` stops at the end of the run)."""
        if not self.book.finished:      # nothing is recorded before (called per tuple)
            return
        counts = {"evaluations": self.evaluated, "evaluations_skipped": 0}
        if self.gate is not None:       # a run without a gate has no gate_closed_time
            counts.update(self.gate.counts(ctx.now), evaluations=self.evaluated)
        self.book.record(ctx, counts)

    def signalled(self, ctx, kind: str) -> None:
        if self.trigger is None:
            super().signalled(ctx, kind)
        self.adapt(ctx, kind)

    def adapt(self, ctx, kind: str = "time") -> None:
        """Close the interval that ends now and choose the buffers of the next one
        (``kind``: what fired the window: the fixed clock is ``time``); with
        ``evaluate = "on_window"`` the window's tuples are joined first."""
        if self.on_window:
            self._evaluate_window(ctx)
        ctx.record(f"window_fired:{kind}", 1)
        # the fixed clock's interval is L; a triggered one is what has passed since the
        # last (at least a poll interval, so that rates stay measurable)
        length = self.p["L"] if self.trigger is None else \
            max(ctx.now - self.last_adapt, self.trigger.poll)
        self.last_adapt = ctx.now
        p = dict(self.p, L=length)
        if p["max_delay_scope"] == "history":
            max_delays = tuple(self.core.max_delay)
        else:
            max_delays = tuple(self.interval_max)
        r, s = self.stats.stream_stats(p["L"], max_delays)
        grid = quality_grid(r, s, self.w, p["L"], p["b"], p["g"], p["coarse_delay"],
                            p["ideal"])
        # N_L of the next interval is estimated from this one. The interval's own true
        # count is booked as what it produced plus what its arrivals missed (observed),
        # or as that same estimate N_L (book_true = "estimate").
        n_ideal = grid[3]
        true_l = self.produced + self.stats.missed_results() \
            if p["book_true"] == "observed" else n_ideal
        spread = self._book(ctx.now, length, self.produced, true_l)
        n_prod, n_true = self.period.totals()
        choice, target = decide(grid, p["q_user"], n_true, n_prod, r.rate, s.rate, self.w,
                                spread, deficit_too=self.by_period)
        warm = ctx.now + _EPS >= p["P"]
        if warm and choice.feasible:
            allow = (choice.dx, choice.dy)
            caps = (math.ceil(choice.x - _EPS), math.ceil(choice.y - _EPS)) \
                if p["evict_over_size"] else (math.inf, math.inf)
        else:
            allow, caps = (None, None), (math.inf, math.inf)
        for side in (0, 1):
            self.core.set_allowance(side, allow[side])
            self.core.set_capacity(side, caps[side])
        # what the buffers are sized for: Algorithm 1's choice, or the largest allowance
        shown = [self.core.max_delay[k] if allow[k] is None else allow[k] for k in (0, 1)]
        sizes = [(shown[0] + self.w) * r.rate, (shown[1] + self.w) * s.rate]
        for metric, value in (("dx", shown[0]), ("dy", shown[1]),
                              ("x", sizes[0]), ("y", sizes[1]),
                              ("q_target", target), ("q_estimate", choice.q_estimate),
                              ("n_ideal", n_ideal), ("n_true_L", true_l),
                              ("produced_L", self.produced),
                              ("feasible", float(warm and choice.feasible))):
            ctx.record(metric, value)
        self.stats.reset()
        self.produced = 0
        self.interval_max = [0.0, 0.0]

    def _book(self, now: float, length: float, produced: float, true: float) -> float:
        """Book the interval ``[now - length, now)``; the intervals the next target
        spreads over.

        ``spend = "period"``: the books are the user's period the interval belongs to
        (emptied when a period ends), and a surplus or a deficit is spread over what is
        left of the period the next interval is in, counting that interval (the last
        interval of a period makes up what remains at once). Otherwise the books are the
        last ``P/L - 1`` intervals and the spread is fixed.
        """
        if not self.by_period:
            self.period.push(produced, true)
            return self.spread
        P = self.p["P"]
        closed = math.floor((now - length) / P + _EPS)
        if closed != self.book_period:
            self.period.clear()
            self.book_period = closed
        self.period.push(produced, true)
        following = math.floor(now / P + _EPS)
        if following != closed:
            self.period.clear()
            self.book_period = following
        left = ((following + 1) * P - now) / self.p["L"]
        return float(max(1, math.ceil(left - _EPS)))

    def held(self):
        n, units = self.core.memory()
        # tuples waiting for their window or for the gate to open are held too
        waiting = self.window + (self.gate.held if self.gate is not None else [])
        return n + len(waiting), units + sum(tup.size for _, tup in waiting)


class NoBufferNode(JoinNode):
    """Symmetric join with delay allowance 0: what arrives late finds its partners gone."""

    def __init__(self, streams, w, predicate, theta, purge: str = "window",
                 bytes_per_unit: int = 32, source: SourceNode | None = None):
        super().__init__(streams, bytes_per_unit, source)
        self.core = SymmetricJoin(w, predicate, theta, purge)

    def arrive(self, ctx, side, tup) -> None:
        partners, _, _ = self.core.arrive(side, tup)
        _emit(ctx, tup, partners)

    def held(self):
        return self.core.memory()


class SlackJoinNode(JoinNode):
    """A reorder buffer in front of the symmetric join (allowance 0 on released tuples).

    ``slack`` is a :class:`~spark_nodes.algorithms.qjoin.kslack.KSlack` or
    :class:`~spark_nodes.algorithms.qjoin.mpkslack.MPKSlack`; its ``K`` is recorded whenever it
    changes. At the end of the run the buffer is flushed, and tuples arriving later
    (network drain) pass straight through.
    """

    def __init__(self, streams, w, predicate, theta, slack, bytes_per_unit: int = 32,
                 source: SourceNode | None = None):
        super().__init__(streams, bytes_per_unit, source)
        self.core = SymmetricJoin(w, predicate, theta, "window")
        self.slack = slack
        self.flushed = False
        self._last_k = None

    def start(self, ctx) -> None:
        self._record_k(ctx)

    def arrive(self, ctx, side, tup) -> None:
        released = [tup] if self.flushed else self.slack.insert(tup.ts, tup)
        for t in released:
            partners, _, _ = self.core.arrive(self.side[t.stream], t)
            _emit(ctx, t, partners)
        self._record_k(ctx)

    def finish(self, ctx) -> None:
        for t in self.slack.flush():
            partners, _, _ = self.core.arrive(self.side[t.stream], t)
            _emit(ctx, t, partners)
        self.flushed = True

    def _record_k(self, ctx) -> None:
        if self.slack.k != self._last_k:
            self._last_k = self.slack.k
            ctx.record("K", self.slack.k)

    def held(self):
        n, units = self.core.memory()
        waiting = self.slack.buffered()
        return n + len(waiting), units + sum(t.size for t in waiting)


def make_slack(kind: str, k: float | None = None):
    """A fresh reorder buffer: ``"k-slack"`` with slack ``k`` or ``"mp-k-slack"``.

    >>> make_slack("k-slack", 0.5).k, make_slack("mp-k-slack").k
    (0.5, 0.0)
    """
    if kind == "k-slack":
        return KSlack(k)
    if kind == "mp-k-slack":
        return MPKSlack()
    raise ValueError(f"reorder buffer: expected 'k-slack' or 'mp-k-slack', got {kind!r}")
