"""Node programs of ATR, CTR and the single-host baseline.

A node may hold several roles (a stream source, the diffusion node, a host, the fusion
node); :class:`DistributedJoinNode` holds them and dispatches on the payload type
(:mod:`.messages`) and on the timer tag's first element (the role name).

Roles
-----
- source: sends each tuple of its streams to the diffusion node (kind ``data``); at the
  end of the run it tells the diffusion node how many it sent (:class:`EndOfStream`).
- diffusion: buffers, closes and routes (:class:`AtrDiffusion`, :class:`CtrDiffusion`,
  :class:`SingleDiffusion`); ticks every ``flush`` time units with watermark
  ``tick time - slack``. It closes everything once the run has finished *and* every
  source's end-of-stream has arrived with as many tuples as it announced: tuples sent just
  before the end are still in flight at ``finish``, and closing there would drop them
  (the cause of runs that lost a result or two with no message lost). A tuple message
  lost on the way leaves the last ranges open, so their results are missing too. Tuples
  arriving after their range closed are late: dropped, counted in metric ``late``.
- host: joins (:class:`AtrHost`, :class:`CtrHost`, :class:`SingleHost`); reports its
  measured load to the diffusion node every ``report_interval`` (kind ``report``).
- fusion: emits every group it receives, once per received copy (so a duplicate would
  show in the run's ``duplicates``), with the producing host in column ``host``.

Metrics (source = the algorithm's name), used by :mod:`.overhead`: at the diffusion
node ``closed:<stream>`` (tuples closed), ``copies:<stream>`` (base tuples sent to
hosts), ``late``; ATR ``segment:<master>:<kind>`` (value: its length, one per segment);
ATR and CTR ``window_fired:<kind>`` (a segment ended by its length: ``time``; cut by a
trigger: the condition's kind) and ``segment_cut:<master | grid>``;
at hosts ``probes`` (comparisons), ``cmp:<a>:<b>`` / ``match:<a>:<b>``, and CTR
``inter_made:<stream>:<k>`` / ``inter_sent:<stream>:<k>`` (partials produced for hop
``k``, and copies sent to its hosts).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from contract.program import NodeProgram
from contract.state import StateMap
from spark_nodes.algorithms.ctr.atr import AtrRouter
from spark_nodes.algorithms.ctr.ctr import CtrRouter
from spark_nodes.algorithms.ctr.entry_lookup import RouteDesk, RouteFetcher, needs_rest
from spark_nodes.algorithms.ctr.host_trigger import (HOST_SENDS, SIGNAL, HostWindows,
                                                     gated_hosts)
from spark_nodes.algorithms.ctr.load import LoadBoard
from spark_nodes.algorithms.ctr.messages import (AtrPart, CtrBase, CtrPartial, EndOfStream,
                                                 Flush, LoadReport, Release, Results, units_of)
from spark_nodes.algorithms.ctr.probe import StoredSegment, extend
from spark_nodes.algorithms.enrich.lookups import LookupReply, LookupRequest
from spark_nodes.algorithms.multiway import MultiwayJoin
from spark_nodes.algorithms.oracle import joinable
from spark_nodes.algorithms.triggers.gate import REPORT, CountBook
from spark_nodes.workload.tuples import StreamTuple


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


# -- sources and fusion -------------------------------------------------------------------
class Source:
    """Forwards every tuple produced here to the diffusion node; at the end, says how many."""

    def __init__(self, setup: Setup):
        self.diffusion = setup.diffusion
        self.synopsis_unit = setup.synopsis_unit
        self.sent = 0

    def on_tuple(self, ctx, tup) -> None:
        ctx.send(self.diffusion, "data", tup, tup.size)
        self.sent += 1

    def finish(self, ctx) -> None:
        ctx.send(self.diffusion, "control", EndOfStream(self.sent), self.synopsis_unit)


class Fusion:
    """Emits each received group (members = StreamTuples), tagged with its host."""

    def on_results(self, ctx, msg) -> None:
        for g in msg.payload.groups:
            ctx.emit(g, host=msg.src)


# -- diffusion ----------------------------------------------------------------------------
class _Diffusion:
    """Ticks, tuple intake and load reports; subclasses route."""

    def __init__(self, setup: Setup):
        self.s = setup
        self.board = setup.board()
        self._closed = {name: 0 for name in setup.streams}
        self._finished = False
        self._announced: dict[int, int] = {}                 # source node -> tuples sent
        self._arrived = {node: 0 for node in setup.sources}  # source node -> tuples here

    def start(self, ctx) -> None:
        ctx.set_timer(self.s.flush + self.s.slack, ("diffusion", 1))

    def on_timer(self, ctx, tag) -> None:
        k = tag[1]
        self.flush(ctx, k * self.s.flush)
        nxt = next_tick(k, ctx.now, self.s.flush, self.s.slack)
        ctx.set_timer(nxt * self.s.flush + self.s.slack, ("diffusion", nxt))

    def on_tuple_message(self, ctx, msg) -> bool:
        """Take a source's tuple; False when it came after its range closed (late)."""
        self._arrived[msg.src] = self._arrived.get(msg.src, 0) + 1
        accepted = self.router.add(msg.payload)
        if not accepted:
            ctx.record("late", 1)
        self._close_if_complete(ctx)
        return accepted

    def on_end(self, ctx, msg) -> None:
        self._announced[msg.src] = msg.payload.sent
        self._close_if_complete(ctx)

    def on_report(self, ctx, msg) -> None:
        r = msg.payload
        self.board.report(msg.src, r.probes_rate, r.tuples, r.units_rate)

    def finish(self, ctx) -> None:
        self._finished = True
        self._close_if_complete(ctx)

    def _close_if_complete(self, ctx) -> None:
        """Close everything once the run is over and no source tuple is still on its way."""
        if self._finished and all(self._announced.get(node) == n
                                  for node, n in self._arrived.items()):
            self._finished = False          # close once
            self.flush(ctx, math.inf)

    def _record_closed(self, ctx) -> None:
        for name, n in self.router.closed.items():
            if n > self._closed[name]:
                ctx.record(f"closed:{name}", n - self._closed[name])
                self._closed[name] = n

    def memory(self) -> tuple[int, int]:
        n = self.router.buffered()
        return n, n * self.s.bytes_per_unit

    def listens_to_losses(self) -> bool:
        """Whether this role acts on its lost messages (subclasses with a trigger)."""
        return False

    def on_lost(self, ctx, msg, reason) -> None:
        """One of its messages was lost: nothing to do here (subclasses act)."""


class _TriggeredDiffusion(_Diffusion):
    """A diffusion node whose segments a window trigger may end early (ATR, CTR).

    With a trigger (``[trigger.<algorithm>]``, conditions measured here), tuples, polls
    every ``poll``, late tuples and the diffusion node's lost messages feed a window
    initiator; each window it fires cuts the open segment at the event time the
    watermark would have now (``now - slack``) and records ``window_fired:<kind>`` and
    ``segment_cut:<name>`` (value: the change of length). A segment that ends by its
    length records ``window_fired:time``.
    """

    def __init__(self, setup: Setup):
        super().__init__(setup)
        trigger = setup.trigger
        self.initiator = trigger.initiator("here") \
            if trigger is not None and not trigger.clock else None
        # ATR's gated hosts hear from here of the diffusion node's exceptions (a gate on
        # it) or of those attributed to the host they watch (its parts lost on the way)
        gate = getattr(trigger, "gate", None)
        self.report_to = gated_hosts(gate, setup.hosts, setup.diffusion)
        self.report_about = None if gate is None or gate.upstream == setup.diffusion \
            else gate.upstream

    def start(self, ctx) -> None:
        super().start(ctx)
        if self.initiator is not None:
            ctx.set_timer(ctx.now + self.s.trigger.poll, ("diffusion", "poll"))

    def on_timer(self, ctx, tag) -> None:
        if tag[1] == "poll":
            self.cut(ctx, self.initiator.poll(ctx.now))
            self.polled(ctx)
            ctx.set_timer(ctx.now + self.s.trigger.poll, ("diffusion", "poll"))
        else:
            super().on_timer(ctx, tag)

    def on_tuple_message(self, ctx, msg) -> bool:
        accepted = super().on_tuple_message(ctx, msg)
        if self.initiator is not None:
            self.cut(ctx, self.initiator.tuple(msg.payload.stream, None, ctx.now))
        if not accepted:
            self.fault(ctx, "late", msg.src)
        return accepted

    def listens_to_losses(self) -> bool:
        return self.initiator is not None or bool(self.report_to)

    def on_lost(self, ctx, msg, reason) -> None:
        # attributed to the operator the lost message was for
        self.fault(ctx, reason, msg.dst)

    def fault(self, ctx, kind: str, origin) -> None:
        """An exception here: told to the window initiator, reported to gated hosts."""
        if self.initiator is not None:
            self.cut(ctx, self.initiator.exception(kind, ctx.now, origin))
        if self.report_about is not None and origin != self.report_about:
            return
        for host in self.report_to:
            ctx.signal(host, REPORT, kind, self.s.synopsis_unit,
                       free=self.s.trigger.signal == "free")

    def cut(self, ctx, fired) -> None:
        """End the open segment for each window that fired (if one is open)."""
        for window in fired:
            shorter = self.router.cut(ctx.now - self.s.slack)
            if shorter is not None:
                ctx.record(f"window_fired:{window.kind}", 1)
                ctx.record(f"segment_cut:{self.cut_name()}", shorter)
                self.after_cut(ctx)

    def record_ended(self, ctx, before: int) -> None:
        """``window_fired:time`` for the segments that ended by length since ``before``."""
        if self.router.ended_by_length > before:
            ctx.record("window_fired:time", self.router.ended_by_length - before)

    def cut_name(self) -> str:
        """What a cut ends, for ``segment_cut:<name>`` (each subclass names it)."""
        raise NotImplementedError(f"{type(self).__name__} must name its cuts")

    def after_cut(self, ctx) -> None:
        """Act on a cut at once (subclasses)."""

    def polled(self, ctx) -> None:
        """Act at a poll (subclasses)."""


class AtrDiffusion(_TriggeredDiffusion):
    """ATR at the diffusion node (:class:`~spark_nodes.algorithms.ctr.atr.AtrRouter`).

    Every master segment is a window (:class:`_TriggeredDiffusion`): a trigger cuts the
    current master segment; ``segment_cut:<master>``. With ``[trigger.atr] evaluate =
    "on_window"`` a segment's parts are held here until its last one (its window closed,
    by its length or a cut) and then sent together, so its host joins the window at
    once instead of part by part as the watermark passes.
    """

    def __init__(self, setup: Setup):
        super().__init__(setup)
        self.router = AtrRouter(setup.streams, setup.windows, setup.segment, self.board,
                                setup.delta_T, setup.adapt, setup.master_switch,
                                setup.switch_margin, setup.adapt_every)
        self._held: dict[int, list] = {}        # on_window: batch -> its parts so far

    def cut_name(self) -> str:
        return self.router._cur.seg.master

    def flush(self, ctx, wm: float) -> None:
        ended = self.router.ended_by_length
        parts = self.router.flush(wm)
        self.record_ended(ctx, ended)
        for seg in self.router.new_segments:
            ctx.record(f"segment:{seg.master}:{seg.kind}", seg.end - seg.start)
        self.router.new_segments.clear()
        for p in self._windowed(parts):
            ctx.send(p.host, "data", AtrPart(p.batch, p.seq, p.last, p.tuples),
                     sum(t.size for t in p.tuples))
            _record_copies(ctx, p.tuples, 1)
        self._record_closed(ctx)

    def _windowed(self, parts) -> list:
        """The parts to send now: all of them, or (``on_window``) those of the batches
        whose last part has come, each batch's in order."""
        if not self.s.on_window:
            return parts
        ready = []
        for p in parts:
            self._held.setdefault(p.batch, []).append(p)
            if p.last:
                ready += self._held.pop(p.batch)
        return ready

    def memory(self) -> tuple[int, int]:
        n, nbytes = super().memory()
        held = sum(len(p.tuples) for parts in self._held.values() for p in parts)
        return n + held, nbytes + held * self.s.bytes_per_unit


class CtrDiffusion(_TriggeredDiffusion):
    """CTR at the diffusion node (:class:`~spark_nodes.algorithms.ctr.ctr.CtrRouter`).

    Ticks every segment length, so that each tick routes the segments that just closed.
    Every grid segment is a window (:class:`_TriggeredDiffusion`): a trigger cuts the
    open one for every stream (``segment_cut:grid``) and routes it at once; the grid
    restarts there, so under a trigger the node also routes at every poll what has
    closed by then (the ticks no longer fall on segment ends).
    """

    def __init__(self, setup: Setup):
        super().__init__(setup)
        self.router = CtrRouter(setup.streams, setup.windows, setup.segment, self.board,
                                setup.store)
        self.desk = RouteDesk() if setup.routes is not None else None

    def cut_name(self) -> str:
        return "grid"

    def after_cut(self, ctx) -> None:
        self.polled(ctx)

    def polled(self, ctx) -> None:
        # a watermark inside the open segment would turn its later tuples late
        self.flush(ctx, self.router.grid.floor(ctx.now - self.s.slack))

    def on_report(self, ctx, msg) -> None:
        super().on_report(ctx, msg)
        self.router.observe({(a, b): (c, m) for a, b, c, m in msg.payload.stats})

    def flush(self, ctx, wm: float) -> None:
        ended = self.router.ended_by_length
        routed = self.router.flush(wm)
        self.record_ended(ctx, ended)
        for route, tuples in routed:
            tuples = tuple(tuples)
            units = sum(t.size for t in tuples)
            # routes = "lookup": the segment carries its first hop, hosts ask for the rest
            carried = route if self.desk is None else self.desk.keep(route)
            # the route annotation travels as synopsis-sized entries, one per (host, segment)
            notes = self.s.synopsis_unit * sum(len(zs) for hop in carried.hops for _, zs in hop)
            receivers = route.receivers()
            for h in receivers:
                ctx.send(h, "data", CtrBase(carried, h in route.store, tuples), units + notes)
            _record_copies(ctx, tuples, len(receivers))
        gone = self.router.table.drain() if math.isinf(wm) else self.router.expire()
        for entry, probes in gone:
            for h in entry.hosts:
                ctx.send(h, "control", Release(entry.seg, probes.get(h, 0)),
                         self.s.synopsis_unit)
        self._record_closed(ctx)


class SingleDiffusion(_Diffusion):
    """Forwards closed tuples, in event-time order, to the one host."""

    def __init__(self, setup: Setup):
        super().__init__(setup)
        self.router = _InOrder(setup.streams)
        self._seq = 0

    def flush(self, ctx, wm: float) -> None:
        tuples = self.router.flush(wm)
        if tuples:
            host = self.s.hosts[0]
            ctx.send(host, "data", Flush(self._seq, wm, tuple(tuples)),
                     sum(t.size for t in tuples))
            self.board.sent(host, len(tuples), sum(t.size for t in tuples))
            self._seq += 1
            _record_copies(ctx, tuples, 1)
        self._record_closed(ctx)


class _InOrder:
    """Buffers tuples and releases those below a watermark in ``(ts, stream, seq)`` order."""

    def __init__(self, streams):
        self._pos = {name: i for i, name in enumerate(streams)}
        self._pending: list = []
        self.wm = -math.inf
        self.late = 0
        self.closed = {name: 0 for name in streams}

    def add(self, tup) -> bool:
        if tup.ts < self.wm:
            self.late += 1
            return False
        self._pending.append(tup)
        return True

    def flush(self, wm: float) -> list:
        if not wm > self.wm:
            return []
        self.wm = wm
        done = sorted((t for t in self._pending if t.ts < wm),
                      key=lambda t: (t.ts, self._pos[t.stream], t.seq))
        self._pending = [t for t in self._pending if t.ts >= wm]
        for t in done:
            self.closed[t.stream] += 1
        return done

    def buffered(self) -> int:
        return len(self._pending)


def _record_copies(ctx, tuples, receivers: int) -> None:
    counts: dict[str, int] = {}
    for t in tuples:
        counts[t.stream] = counts.get(t.stream, 0) + 1
    for name, n in sorted(counts.items()):
        ctx.record(f"copies:{name}", n * receivers)


# -- hosts --------------------------------------------------------------------------------
class _Host:
    """Load measurement and reports; subclasses join."""

    def __init__(self, setup: Setup):
        self.s = setup
        self._probes = 0.0          # since the last report
        self._units = 0.0
        self._stats: dict[tuple, list] = {}

    def start(self, ctx) -> None:
        ctx.set_timer(self.s.report_interval, ("host", 1))

    def on_timer(self, ctx, tag) -> None:
        self.report(ctx)
        nxt = next_tick(tag[1], ctx.now, self.s.report_interval)
        ctx.set_timer(nxt * self.s.report_interval, ("host", nxt))

    def received(self, units: float) -> None:
        self._units += units

    def count(self, ctx, probes: float, stats: dict | None = None) -> None:
        """Record work done now (metrics) and keep it for the next load report."""
        self._probes += probes
        ctx.record("probes", probes)
        for (a, b), (c, m) in sorted((stats or {}).items()):
            ctx.record(f"cmp:{a}:{b}", c)
            ctx.record(f"match:{a}:{b}", m)
            st = self._stats.setdefault((a, b), [0, 0])
            st[0] += c
            st[1] += m

    def report(self, ctx) -> None:
        stats = tuple((a, b, c, m) for (a, b), (c, m) in sorted(self._stats.items()))
        tuples, _ = self.memory()
        payload = LoadReport(self._probes / self.s.report_interval, tuples,
                             self._units / self.s.report_interval, stats)
        ctx.send(self.s.diffusion, "report", payload,
                 self.s.synopsis_unit * (3 + len(stats)))
        self._probes = 0.0
        self._units = 0.0
        self._stats = {}

    def finish(self, ctx) -> None:
        """Nothing to flush: work is recorded as it happens."""

    def listens_to_losses(self) -> bool:
        """Whether this role acts on its lost messages (ATR's hosts with windows or a
        gate)."""
        return False

    def on_lost(self, ctx, msg, reason) -> None:
        """One of its messages was lost: nothing to do here (subclasses act)."""

    def send_results(self, ctx, groups) -> None:
        if groups:
            ctx.send(self.s.fusion, "result", Results(tuple(groups)), units_of(groups))


class AtrHost(_Host):
    """Joins each ATR batch on its own and drops it once all its parts have arrived and
    been joined.

    Parts are joined as they arrive, in any order (the join emits a group when its last
    member arrives); the last part tells how many there are. A lost part leaves its batch
    buffered until the end of the run. Work is counted as the tuples buffered in the
    batch when a tuple is inserted (what a nested-loop probe would compare).

    With host windows, sibling signals or a gate (``[trigger.atr]``,
    :mod:`spark_nodes.algorithms.ctr.host_trigger`) the tuples are joined when those
    let them through, in arrival order. From the run's end on, the host records
    ``evaluations`` (tuples joined), ``evaluations_skipped`` (a gate's) and, gated,
    ``gate_closed_time``.
    """

    def __init__(self, setup: Setup, node: int):
        super().__init__(setup)
        # batch -> [parts seen, parts in all, join, tuples not yet joined or dropped]
        self._batches: dict[int, list] = {}
        trigger = setup.trigger
        windows = HostWindows(trigger, node, setup.hosts, setup.diffusion,
                              setup.synopsis_unit) if trigger is not None else None
        active = windows is not None and (windows.windowed or windows.gate is not None
                                          or windows.report_to)
        self.windows = windows if active else None
        self.evaluated = 0
        self.book = CountBook()

    def start(self, ctx) -> None:
        super().start(ctx)
        if self.windows is not None and self.windows.poll_every is not None:
            ctx.set_timer(ctx.now + self.windows.poll_every, ("host", "poll"))

    def on_timer(self, ctx, tag) -> None:
        if tag[1] != "poll":
            super().on_timer(ctx, tag)
            return
        self._join(ctx, self.windows.poll(ctx))
        ctx.set_timer(ctx.now + self.windows.poll_every, ("host", "poll"))

    def on_part(self, ctx, part: AtrPart) -> None:
        self.received(sum(t.size for t in part.tuples))
        b = self._batches.get(part.batch)
        if b is None:
            b = self._batches[part.batch] = [0, None, MultiwayJoin(
                self.s.streams, self.s.windows, self.s.predicate, self.s.theta,
                bytes_per_unit=self.s.bytes_per_unit), 0]
        b[0] += 1
        if part.last:
            b[1] = part.seq + 1
        b[3] += len(part.tuples)
        items = [(part.batch, t) for t in part.tuples]
        if self.windows is None:
            self._join(ctx, items)
        else:
            ready, dropped = self.windows.arrive(ctx, items)
            self._done(dropped)
            self._join(ctx, ready)
            self._record_counts(ctx)
        self._tidy(part.batch)

    def on_signal(self, ctx, msg) -> None:
        """A sibling's window signal, or the gate's upstream reporting an exception."""
        if self.windows is None:
            raise ValueError(f"host {ctx.node}: unexpected {msg.kind!r} signal: this host "
                             "has no window or gate")
        if msg.kind == SIGNAL:
            self._join(ctx, self.windows.signalled(ctx, msg.payload))
        else:
            self.windows.reported(ctx, msg.payload)

    def on_lost(self, ctx, msg, reason) -> None:
        if self.windows is not None:
            self._join(ctx, self.windows.exception(ctx, reason, msg.dst))

    def listens_to_losses(self) -> bool:
        return self.windows is not None and self.windows.listens_to_losses

    def finish(self, ctx) -> None:
        if self.windows is not None:
            self._join(ctx, self.windows.finish())
        self.book.finished = True
        self._record_counts(ctx)

    def _record_counts(self, ctx) -> None:
        counts = {"evaluations": self.evaluated, "evaluations_skipped": 0}
        if self.windows is not None:
            counts.update(self.windows.counts(ctx.now), evaluations=self.evaluated)
        self.book.record(ctx, counts)

    def _join(self, ctx, items) -> None:
        """Join ``items`` (``(batch, tuple)``) in order; results to the fusion node."""
        if not items:
            return
        self.evaluated += len(items)
        probes = 0
        groups = []
        for batch, t in items:
            join = self._batches[batch][2]
            probes += join.buffered()[0]
            groups.extend(join.insert(t))
        self.count(ctx, probes)
        self._done(items)
        self.send_results(ctx, groups)
        self._record_counts(ctx)

    def _done(self, items) -> None:
        """``items`` were joined or dropped: their batches may be complete."""
        for batch, _ in items:
            self._batches[batch][3] -= 1
            self._tidy(batch)

    def _tidy(self, batch) -> None:
        b = self._batches.get(batch)
        if b is not None and b[0] == b[1] and b[3] == 0:
            del self._batches[batch]

    def memory(self) -> tuple[int, int]:
        n = nbytes = 0
        for _, _, join, _ in self._batches.values():
            tn, tb = join.buffered()
            n += tn
            nbytes += tb
        if self.windows is not None:
            held = self.windows.held()
            n += len(held)
            nbytes += round(sum(t.size for _, t in held) * self.s.bytes_per_unit)
        return n, nbytes


class SingleHost(_Host):
    """The centralized join on one host.

    Flushes are joined as they arrive; tuples expire only up to the watermark of the
    longest run of flushes received without a gap (a late flush still finds what it
    needs; a lost one stops expiry, which then shows in memory).
    """

    def __init__(self, setup: Setup):
        super().__init__(setup)
        self._join = MultiwayJoin(setup.streams, setup.windows, setup.predicate, setup.theta,
                                  bytes_per_unit=setup.bytes_per_unit)
        self._next = 0
        self._seen: dict[int, float] = {}       # seq -> watermark, beyond the gapless run

    def on_flush(self, ctx, flush: Flush) -> None:
        self.received(sum(t.size for t in flush.tuples))
        probes = 0
        groups = []
        for t in flush.tuples:
            probes += self._join.buffered()[0]
            groups.extend(self._join.insert(t))
        self.count(ctx, probes)
        self._seen[flush.seq] = flush.wm
        horizon = None
        while self._next in self._seen:
            horizon = self._seen.pop(self._next)
            self._next += 1
        if horizon is not None and math.isfinite(horizon):
            self._join.expire(horizon)
        self.send_results(ctx, groups)

    def memory(self) -> tuple[int, int]:
        return self._join.buffered()


class CtrHost(_Host):
    """Stores CTR segments, probes partial groups hop by hop, forwards or reports them.

    A probe task is the segment's own tuples at hop 1, or at a later hop the partials
    gathered from every host of the previous hop (each sends one part, maybe empty). It
    waits until every segment it must probe here has arrived.
    """

    def __init__(self, setup: Setup):
        super().__init__(setup)
        # stored segments, a state row each (contract.state); a segment never changes
        self._segs = StateMap()                  # segment -> StoredSegment
        self._done: dict[tuple, int] = {}
        self._release: dict[tuple, int] = {}
        self._parked: list[tuple] = []           # (route, hop, partials)
        self._gather: dict[tuple, list] = {}     # (segment, hop) -> [parts, partials]
        self.fetcher = RouteFetcher(setup.routes, setup.diffusion, setup.synopsis_unit) \
            if setup.routes is not None else None

    def on_timer(self, ctx, tag) -> None:
        if tag[1] == "route_retry":
            self.fetcher.retry(ctx, tag[2])
        else:
            super().on_timer(ctx, tag)

    def on_route(self, ctx, reply: LookupReply) -> None:
        self.fetcher.arrived(ctx, reply, self._forward)

    def on_base(self, ctx, base: CtrBase) -> None:
        self.received(sum(t.size for t in base.tuples))
        seg = base.route.seg
        if self.fetcher is not None:
            self.fetcher.arrived_segment(ctx, base.route)
        if base.store:
            self._segs[seg] = StoredSegment(base.tuples)
        if base.route.hops and ctx.node in dict(base.route.hops[0]):
            seeds = tuple((t,) for t in base.tuples if joinable(t, self.s.predicate))
            self._run_or_park(ctx, base.route, 0, seeds)
        if base.store:
            self._retry(ctx)
            self._maybe_drop(seg)

    def on_partial(self, ctx, msg: CtrPartial) -> None:
        self.received(units_of(msg.partials))
        key = (msg.route.seg, msg.hop)
        got = self._gather.setdefault(key, [0, []])
        got[0] += 1
        got[1].extend(msg.partials)
        if got[0] == len(msg.route.hops[msg.hop - 1]):
            del self._gather[key]
            self._run_or_park(ctx, msg.route, msg.hop, tuple(got[1]))

    def on_release(self, ctx, rel: Release) -> None:
        self._release[rel.seg] = rel.probes
        self._maybe_drop(rel.seg)

    def _run_or_park(self, ctx, route, hop: int, partials) -> None:
        mine = dict(route.hops[hop])[ctx.node]
        if all(z in self._segs for z in mine):
            self._run(ctx, route, hop, partials, mine)
        else:
            self._parked.append((route, hop, partials))

    def _retry(self, ctx) -> None:
        parked, self._parked = self._parked, []
        for route, hop, partials in parked:
            self._run_or_park(ctx, route, hop, partials)

    def _run(self, ctx, route, hop: int, partials, mine) -> None:
        out = []
        stats: dict = {}
        for z in mine:
            out.extend(extend(partials, self._segs[z], z[0], self.s.windows,
                              self.s.predicate, self.s.theta, stats))
            self._done[z] = self._done.get(z, 0) + 1
            self._maybe_drop(z)
        self.count(ctx, sum(c for c, _ in stats.values()), stats)
        if self.fetcher is not None and needs_rest(route):
            self.fetcher.need(ctx, route, hop, out, self._forward)
        else:
            self._forward(ctx, route, hop, out)

    def _forward(self, ctx, route, hop: int, out) -> None:
        """Send hop ``hop``'s partial results to every host of the next hop, or the
        groups to the fusion node after the last."""
        nxt = hop + 1
        stream = route.seg[0]
        if nxt < len(route.hops):
            targets = [h for h, _ in route.hops[nxt]]
            if out:
                ctx.record(f"inter_made:{stream}:{nxt + 1}", len(out))
                ctx.record(f"inter_sent:{stream}:{nxt + 1}", len(out) * len(targets))
            payload = CtrPartial(route, nxt, tuple(out))
            for h in targets:
                ctx.send(h, "intermediate", payload, units_of(out))
        else:
            self.send_results(ctx, out)

    def _maybe_drop(self, seg) -> None:
        if seg in self._segs and seg in self._release and \
                self._done.get(seg, 0) >= self._release[seg]:
            del self._segs[seg]
            del self._release[seg]
            self._done.pop(seg, None)

    def memory(self) -> tuple[int, int]:
        n = sum(len(z) for z in self._segs.values())
        units = sum(z.units for z in self._segs.values())
        waiting = self.fetcher.held() if self.fetcher is not None else []
        for partials in [p for _, _, p in self._parked] + \
                [g[1] for g in self._gather.values()] + waiting:
            n += sum(len(p) for p in partials)
            units += units_of(partials)
        return n, round(units * self.s.bytes_per_unit)


# -- the node program ---------------------------------------------------------------------
_DIFFUSION = {"atr": AtrDiffusion, "ctr": CtrDiffusion, "single": SingleDiffusion}
_HOST = {"atr": AtrHost, "ctr": CtrHost, "single": SingleHost}


class DistributedJoinNode(NodeProgram):
    """One node's roles in a distributed join run.

    Parameters
    ----------
    setup : Setup
    node : int
        The node this program runs on (decides its roles).
    sources : bool
        Whether a stream is produced here.
    """

    def __init__(self, setup: Setup, node: int, sources: bool):
        self.source = Source(setup) if sources else None
        self.diffusion = _DIFFUSION[setup.scheme](setup) if node == setup.diffusion else None
        host = _HOST[setup.scheme]
        self.host = None if node not in setup.hosts else \
            host(setup, node) if host is AtrHost else host(setup)
        self.fusion = Fusion() if node == setup.fusion else None

    def _roles(self):
        return [r for r in (self.diffusion, self.host) if r is not None]

    def start(self, ctx) -> None:
        for role in self._roles():
            role.start(ctx)

    def on_tuple(self, ctx, tup) -> None:
        self.source.on_tuple(ctx, tup)

    def on_message(self, ctx, msg) -> None:
        p = msg.payload
        if msg.kind in (SIGNAL, REPORT):
            self.host.on_signal(ctx, msg)
        elif isinstance(p, StreamTuple):
            self.diffusion.on_tuple_message(ctx, msg)
        elif isinstance(p, EndOfStream):
            self.diffusion.on_end(ctx, msg)
        elif isinstance(p, LoadReport):
            self.diffusion.on_report(ctx, msg)
        elif isinstance(p, Results):
            self.fusion.on_results(ctx, msg)
        elif isinstance(p, AtrPart):
            self.host.on_part(ctx, p)
        elif isinstance(p, CtrBase):
            self.host.on_base(ctx, p)
        elif isinstance(p, CtrPartial):
            self.host.on_partial(ctx, p)
        elif isinstance(p, Release):
            self.host.on_release(ctx, p)
        elif isinstance(p, Flush):
            self.host.on_flush(ctx, p)
        elif isinstance(p, LookupRequest):
            self.diffusion.desk.answer(ctx, p, self.diffusion.s.synopsis_unit)
        elif isinstance(p, LookupReply):
            self.host.on_route(ctx, p)
        else:
            raise TypeError(f"node {ctx.node}: unexpected payload {type(p).__name__}")

    def on_timer(self, ctx, tag) -> None:
        getattr(self, tag[0]).on_timer(ctx, tag)

    def on_lost(self, ctx, msg, reason) -> None:
        # a loss is an exception of the role that sent the message: the diffusion node's
        # parts (its window trigger, a gate watching it), a host's results, load reports
        # and signals (its windows, a gate watching it)
        host = self.host
        host_sent = msg.kind in HOST_SENDS or (
            msg.kind == REPORT and host is not None and host.listens_to_losses())
        role = host if host_sent else self.diffusion
        if role is not None:
            role.on_lost(ctx, msg, reason)

    def listens_to_losses(self) -> bool:
        return any(role.listens_to_losses() for role in self._roles())

    def finish(self, ctx) -> None:
        # a source's end-of-stream first (a local send, delivered at once), then the
        # diffusion node closes, so a host on the same node reports after it
        if self.source is not None:
            self.source.finish(ctx)
        for role in self._roles():
            role.finish(ctx)

    def memory(self) -> tuple[int, int]:
        n = b = 0
        for role in self._roles():
            tn, tb = role.memory()
            n += tn
            b += tb
        return n, b
