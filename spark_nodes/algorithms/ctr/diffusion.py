"""The diffusion node's role in ATR, CTR and the single-host baseline (:mod:`.programs`
says what each role does): tuples taken in, closed below a watermark in order, and
routed to the hosts.
"""
from __future__ import annotations

import math

from spark_nodes.algorithms.ctr.atr import AtrRouter
from spark_nodes.algorithms.ctr.ctr import CtrRouter
from spark_nodes.algorithms.ctr.entry_lookup import RouteDesk
from spark_nodes.algorithms.ctr.host_trigger import gated_hosts
from spark_nodes.algorithms.ctr.messages import AtrPart, CtrBase, Flush, Release
from spark_nodes.algorithms.ctr.setup import Setup, next_tick
from spark_nodes.algorithms.triggers.gate import REPORT


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
