"""A host's role in ATR, CTR and the single-host baseline (:mod:`.programs` says what
each role does): the join, and the load reports to the diffusion node.
"""
from __future__ import annotations

import math

from contract.state import StateMap
from spark_nodes.algorithms.ctr.entry_lookup import RouteFetcher, needs_rest
from spark_nodes.algorithms.ctr.host_trigger import SIGNAL, HostWindows
from spark_nodes.algorithms.ctr.messages import (AtrPart, CtrBase, CtrPartial, Flush,
                                                 LoadReport, Release, Results, units_of)
from spark_nodes.algorithms.ctr.probe import StoredSegment, extend
from spark_nodes.algorithms.ctr.setup import Setup, next_tick
from spark_nodes.algorithms.enrich.lookups import LookupReply
from spark_nodes.algorithms.multiway import MultiwayJoin
from spark_nodes.algorithms.oracle import joinable
from spark_nodes.algorithms.triggers.gate import CountBook


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
