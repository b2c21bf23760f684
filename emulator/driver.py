"""The step driver: the one loop every backend and runtime runs through.

Time advances in windows ``[t0, t1)`` that the backend chooses (:meth:`window`): the simpy
backend uses a grid of ``plan.step`` in virtual time; a Mininet node agent uses one window
per instant at which something is due in wall-clock time. In each window the backend hands
over the events due at every node; the runtime (in-process or Spark) runs the programs;
the messages they sent go back to the backend in a deterministic order
``(sent_at, src, local id)``. A message never arrives inside the window it was sent in
when the step is no longer than the smallest link delay; local sends, zero-delay links and
timers inside the window are handled by iterating the window until no event is left
before ``t1``. Windows with nothing to do are skipped.

The driver alone owns the rules of a run (the backends only keep calendars):

- ``start`` at 0 for every program, each tuple at its origin at ``entered_at``, and
  ``finish`` at ``plan.duration``;
- a timer is filed only if it is due by ``plan.duration`` (one set inside the last step
  for a time within that step still fires);
- an event at a node that is down: a tuple is dropped (the sensor is off); anything else
  waits until the node is up again (dropped if it never is);
- after ``finish`` the run drains messages still in flight until :meth:`Plan.run_end`;
- a loss notice reaches a program only if it overrides ``on_lost``;
- memory is sampled every ``plan.memory_interval`` (the state as last reported).

Example
-------
>>> import networkx as nx
>>> from contract.plan import Plan, QuerySpec
>>> from contract.program import NodeProgram
>>> class Ping(NodeProgram):
...     def start(self, ctx): ctx.send(1, "data", "hi", 1.0)
>>> class Pong(NodeProgram):
...     def on_message(self, ctx, msg): ctx.emit((), got=msg.payload)
>>> class Static:
...     epochs = [0.0]
...     def snapshot(self, t):
...         g = nx.Graph(); g.add_edge(0, 1, cost=1.0, delay=0.5); return g
>>> plan = Plan(name="doc", seed=1, duration=2.0, step=0.5, backend="simpy",
...     runtime="inproc", memory_interval=1.0, bytes_per_unit=32, header_bytes=24,
...     synopsis_unit=0.25, topology=None, dynamics=Static(), streams=(),
...     query=QuerySpec(1, "equality", None, {}), algorithm="doc", params={}, net0=None,
...     spec={})
>>> from spark_nodes.runtimes.inproc import InprocRuntime
>>> out = execute(plan, {0: Ping(), 1: Pong()}, {}, InprocRuntime())
>>> out.results[["emitted_at", "got"]].to_dict("records")
[{'emitted_at': 0.5, 'got': 'hi'}]
"""
from __future__ import annotations

import bisect
import logging
import math
from collections import Counter
from dataclasses import dataclass
from operator import attrgetter

from tqdm import tqdm

from contract.events import DELIVER, FINISH, LOST, START, TIMER, TUPLE
from contract.outputs import RunOutput, metrics_frame, results_frame
from contract.plan import Plan
from emulator import collector

log = logging.getLogger(__name__)


def seed_calendar(backend, plan: Plan, programs: dict, tuples_by_stream: dict,
                  lookahead=None, spans=None) -> None:
    """File the run's own events: ``start`` at 0, every tuple at its origin when it
    enters the system, ``finish`` at the duration. A tuple whose origin has no program is
    an error. The tuples of nodes fed by the span are kept by ``spans`` (those it
    holds) and the events of nodes that run ahead go to ``lookahead``; the others are
    filed with the backend in one call, in this order."""
    filed = []

    def file(time, node, kind, payload):
        if lookahead is None or not lookahead.file(time, node, kind, payload):
            filed.append((time, node, kind, payload))

    for node in sorted(programs):
        file(0.0, node, START, None)
    for name in sorted(tuples_by_stream):
        stream = tuples_by_stream[name]
        for tup in stream:
            if tup.origin not in programs:
                raise ValueError(f"stream {name}: tuple {tup.seq} comes from node {tup.origin}, "
                                 f"which runs no program of {plan.algorithm!r}")
        if spans is not None:
            stream = spans.hold(stream)
        if lookahead is None:   # every tuple to the backend: no call per tuple
            filed.extend([(tup.entered_at, tup.origin, TUPLE, tup) for tup in stream])
        else:
            for tup in stream:
                file(tup.entered_at, tup.origin, TUPLE, tup)
    for node in sorted(programs):
        file(plan.duration, node, FINISH, None)
    backend.schedule_all(filed)


def execute(plan: Plan, programs: dict, tuples_by_stream: dict, runtime,
            drain: float | None = None, progress: bool = False, backend=None,
            run_ahead: bool = True, tuple_spans: bool = True) -> RunOutput:
    """Run ``programs`` under ``runtime`` on ``backend`` (default: the simpy backend built
    from ``plan``); return the raw tables.

    ``tuples_by_stream`` holds every tuple the sources produce at the nodes this backend
    serves; each enters the system at its origin node at ``entered_at``. With
    ``run_ahead`` (and a backend on a grid of virtual time), nodes that receive nothing
    run ahead and nodes that send nothing are deferred (:mod:`emulator.lookahead`); with
    ``tuple_spans`` too, a runtime that offers ``run_spans`` (the in-process one) hands
    the pure sources that take them their tuples a span at a time
    (:mod:`emulator.tuple_spans`). The outputs are the same either way.
    """
    # the objects of the set-up stay out of the collector's scans (emulator.collector)
    with collector.earlier_objects_frozen():
        return _execute(plan, programs, tuples_by_stream, runtime, drain, progress, backend,
                        run_ahead, tuple_spans)


def _execute(plan: Plan, programs, tuples_by_stream, runtime, drain, progress, backend,
             run_ahead, tuple_spans) -> RunOutput:
    if backend is None:
        from emulator.simpy_backend import SimpyBackend

        backend = SimpyBackend.from_plan(plan)
    # Progress in thousandths of the virtual duration: integer counts never overshoot.
    bar = tqdm(total=1000, desc=f"{plan.name} ({runtime.name}, {plan.duration:g} time units)",
               bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]{postfix}",
               disable=not progress, leave=False)
    # a runtime with slow phases (Spark: its JVM, each micro-batch) names them on the bar
    phases = progress and hasattr(runtime, "on_phase")
    if phases:
        runtime.on_phase = bar.set_postfix_str
    runtime.open(plan, programs)
    spans_ok = tuple_spans and hasattr(runtime, "run_spans")
    state, lookahead, spans = _books(plan, programs, tuples_by_stream, backend, run_ahead,
                                     spans_ok)
    end = plan.run_end(drain)
    t0 = 0.0
    timed = False
    mortal = getattr(backend, "mortal", False)
    # a runtime that steps a window's nodes into one output (the in-process one)
    run_window = getattr(runtime, "run_window", None)
    while True:
        nxt = backend.next_time()
        if lookahead is not None:
            nxt = min(nxt, lookahead.next_time())
        if spans is not None:
            nxt = min(nxt, spans.next_time())
        if math.isinf(nxt) or nxt >= end:
            break
        t0, t1 = backend.window(t0, nxt, plan.step)
        if lookahead is not None and lookahead.span_due(t0):
            lookahead.run_span(t0, runtime, state)
            # a deferred node's step may yet land in any window of the new span
            state.replay_before = t0 if lookahead.deferred else math.inf
            state.replay()
        state.sample_memory_until(t0)
        if spans is not None and spans.span_due(t0):
            spans.run_span(t0, runtime, state)
        released = None     # the spans' messages of this window: with its first inject
        while True:
            events = backend.collect(t1)
            if released is None:
                released = [] if spans is None else spans.release(backend.now)
                sent = released
            else:
                sent = ()
            if not events and not sent:
                break
            if events:
                if getattr(backend, "notices", True) or not state.memory.keys() >= events.keys():
                    events = state.wanted(events)   # (most windows: no notice, all programs)
                events = state.alive_only(events, backend)
            if not events and not sent:
                continue
            if mortal:   # the operators' work, charged
                backend.charge_work(events)
            if lookahead is None:   # nothing is ever deferred: booked at once
                if run_window is not None:   # the window's outputs in one
                    state.absorb_window(run_window(t0, t1, events, backend.view(t0))
                                        if events else None, backend, plan.duration, t1,
                                        sent)
                else:
                    state.absorb(None, runtime.run_step(t0, t1, events, backend.view(t0))
                                 if events else {}, backend, plan.duration, t1, sent)
                continue
            entry = state.open_step(t0, t1)
            outputs = lookahead.take(t0, t1, events, state, entry) if events else {}
            if events:
                outputs.update(runtime.run_step(t0, t1, events, backend.view(t0)))
            state.absorb(entry, outputs, backend, plan.duration, released=sent)
        if progress:   # (not asked: not a bar's arithmetic per window either)
            if not timed:
                # the first step pays for warm-up (Spark plans its query, starts its
                # Python worker): time the estimate from the steps after it
                bar.reset()
                timed = True
            if (done := int(1000 * min(t1, plan.duration) / plan.duration) - bar.n):
                bar.update(done)   # a thousandth is a hundred windows of 0.01 in 100 units
        t0 = t1
    if lookahead is not None:
        lookahead.finish(runtime, state)
    if phases:
        runtime.on_phase = None
    bar.close()
    state.replay_before = math.inf
    state.sample_memory_until(min(max(t0, state.last_t1), end))
    metrics = state.metric_rows + runtime.close()
    if hasattr(backend, "metric_rows"):   # the network's own series (simpy backend)
        metrics += backend.metric_rows(plan.memory_interval)
    info = backend.info()
    info["runtime"] = runtime.name
    info.update(runtime.facts)
    if lookahead is not None or spans is not None:   # nodes fed by the span run ahead
        info["run_ahead_nodes"] = sorted((set() if lookahead is None else lookahead.ahead)
                                         | (set() if spans is None else spans.nodes))
        info["deferred_nodes"] = sorted(() if lookahead is None else lookahead.deferred)
    info["dropped"] = dict(state.dropped)
    info["memory_peak_total_tuples"] = state.peak_total[0]
    info["memory_peak_total_bytes"] = state.peak_total[1]
    log.info("%s: %d messages, %d hops, %d results", plan.name, info.get("messages", 0),
             info.get("hops", 0), len(state.results))
    capture = getattr(backend, "capture_frame", None)   # the simpy backend's
    return RunOutput(backend.ledger_frame(), metrics_frame(metrics),
                     results_frame(state.results), info, state.traces,
                     None if capture is None else capture())


def _books(plan: Plan, programs, tuples_by_stream, backend, run_ahead, spans_ok) -> tuple:
    """A run's books (:class:`_RunState`, with the nodes up in every epoch when the
    backend can tell and none may die), its lookahead (None: every node stepped), its
    tuple spans (None: no node fed by the span; ``spans_ok``: the runtime can) and the
    calendar seeded with the run's own events."""
    state = _RunState(programs, plan.memory_interval)
    if hasattr(backend, "always_up") and not getattr(backend, "mortal", False):
        state.up_always = backend.always_up(sorted(programs))
    lookahead = spans = None
    if run_ahead and getattr(backend, "runs_ahead", False):
        from emulator.lookahead import Lookahead
        from emulator.tuple_spans import TupleSpans

        if spans_ok:
            spans = TupleSpans.of(plan, programs, backend, state.up_always)
        if spans is not None:
            state.span_nodes = spans.nodes
        lookahead = Lookahead(plan, programs, backend,
                              state.up_always - state.span_nodes) or None
    # every tuple's event, made and kept until it is due: made with the collector
    # paused, then frozen out of its view, since the first young collection after the
    # pause would scan them all (bench_emulator: one pass of 0.16-0.32 s in a 1.9 s run)
    with collector.paused():
        seed_calendar(backend, plan, programs, tuples_by_stream, lookahead, spans)
        collector.freeze_kept()
    return state, lookahead, spans


#: The order the network takes a step's messages in.
_SENDING_ORDER = attrgetter("sent_at", "src", "local_id")


class _RunState:
    """Results, metric rows, dropped events and memory bookkeeping of one run."""

    def __init__(self, programs, memory_interval):
        # loss notices go only to programs that listen (no empty steps for the others)
        self.listening = {n for n, p in programs.items() if p.listens_to_losses()}
        self.results: list[dict] = []
        self.metric_rows: list[tuple] = []
        self.traces: dict[str, list[dict]] = {}
        self.memory = {node: (0, 0) for node in programs}
        self.total = [0, 0]   # the sum of self.memory, kept as nodes report
        self.interval = memory_interval
        self.samples = 0
        self.peak_total = (0, 0)
        self.dropped: Counter = Counter()
        # The books are written from a journal, in step order, because a deferred node's
        # steps run later than the driver passes them (emulator.lookahead).
        self.journal: list[_Entry] = []
        self._replayed = 0
        self.replay_before = math.inf
        self.last_t1 = 0.0
        #: Nodes up in every epoch of the run (their events need no liveness check).
        self.up_always: set = set()
        #: Nodes fed their tuples by the span (``emulator.tuple_spans``): they set no timer.
        self.span_nodes: set = set()

    def wanted(self, events_by_node: dict) -> dict:
        """The events a program will see: a loss notice only where one listens."""
        out = {}
        for node, events in events_by_node.items():
            if node not in self.memory:
                continue
            if node not in self.listening:
                events = [e for e in events if e.kind != LOST]
            if events:
                out[node] = events
        return out

    def alive_only(self, events_by_node: dict, backend) -> dict:
        """The events whose node is up at their time. Of the others, a tuple is dropped
        (the sensor is off) and anything else is filed again for when the node is next up
        (dropped if it never is). Deliveries to a dead node never get here: the network
        loses them."""
        if self.up_always.issuperset(events_by_node):   # most steps of most runs
            return events_by_node
        kept = {}
        # a delivery's receiver was judged when its last hop started, and a node whose
        # battery has run out since then (backend.mortal) cannot take it
        judged = not getattr(backend, "mortal", False)
        up_always = self.up_always
        for node, events in events_by_node.items():
            if node in up_always:   # most nodes of most runs: a view per event spared
                kept[node] = events
                continue
            alive = [e for e in events
                     if (judged and e.kind == DELIVER) or backend.view(e.time).alive(node)
                     or self._postpone(node, e, backend)]
            if alive:
                kept[node] = alive
        return kept

    def _postpone(self, node, event, backend) -> bool:
        up = math.inf
        if event.kind != TUPLE:
            t = event.time
            while not math.isinf(t := backend.next_change(t)):
                if backend.view(t).alive(node):
                    up = t
                    break
        if math.isinf(up):
            what = "tuples" if event.kind == TUPLE else event.kind
            self.dropped[f"{what}_at_dead_node"] += 1
        else:
            backend.schedule(up, node, event.kind, event.payload)
        return False

    # -- steps: routed at once, booked in step order -------------------------------------
    def open_step(self, t0: float, t1: float) -> "_Entry":
        """A journal entry for one step of the driver (filled by :meth:`absorb`)."""
        entry = _Entry(t0, t1, {})
        self.journal.append(entry)
        self.last_t1 = max(self.last_t1, t1)
        return entry

    def absorb(self, entry: "_Entry | None", outputs: dict, backend, duration: float,
               t1: float = 0.0, released=()) -> None:
        """File the step's timers and inject its messages now (the network needs them),
        with ``released``, the messages of nodes fed by the span that this window sends;
        keep the rest for the books, which :meth:`replay` writes in step order. With no
        ``entry`` (a run with no deferred node: nothing can wait before the step), the
        step ``[.., t1)`` is booked at once, without a journal entry."""
        outgoing = list(released)
        for node in sorted(outputs):
            out = outputs[node]
            if out.timers and node in self.span_nodes:
                self._timer_refused(node, out.timers[0][0])
            for at, tag in out.timers:
                if at <= duration:
                    backend.schedule(at, node, TIMER, tag)
            outgoing.extend(out.messages)
        outgoing.sort(key=_SENDING_ORDER)
        backend.inject(outgoing)
        if entry is None:
            self.last_t1 = max(self.last_t1, t1)
            self._book(outputs)
            return
        entry.outputs.update(outputs)
        self.replay()

    def absorb_window(self, out, backend, duration: float, t1: float, released=()) -> None:
        """:meth:`absorb` of a step ``[.., t1)`` whose nodes' outputs come in one
        :class:`~contract.program.WindowOutput` (None: no node stepped), booked at once
        (no node is deferred)."""
        self.last_t1 = max(self.last_t1, t1)
        if out is None:     # only the messages of nodes fed by the span
            backend.inject(released)
            return
        if self.span_nodes and not self.span_nodes.isdisjoint(out.timer_nodes):
            node = next(n for n in out.timer_nodes if n in self.span_nodes)
            self._timer_refused(node, out.timers[out.timer_nodes.index(node)][0])
        for (at, tag), node in zip(out.timers, out.timer_nodes):
            if at <= duration:
                backend.schedule(at, node, TIMER, tag)
        messages = out.messages
        if not released:
            messages.sort(key=_SENDING_ORDER)
        elif messages:     # merged with the others' (released ones come sorted)
            messages.extend(released)
            messages.sort(key=_SENDING_ORDER)
        else:
            messages = released
        backend.inject(messages)
        self._book_rows(out)
        self._note_memories(out.memory)

    @staticmethod
    def _timer_refused(node: int, at: float):
        raise RuntimeError(f"node {node}: its program takes its tuples by the span "
                           f"(takes_tuple_spans() is True), but it set a timer for {at:g}; "
                           f"such a program sets none (its timers would fire among tuples "
                           f"already handled): let takes_tuple_spans() answer False")

    def note_span(self, t0: float, memory: list) -> None:
        """The memory ``(node, (tuples, bytes))`` of nodes fed by the span, read after
        the span's call: booked as of the window ``t0`` the span starts in, after the
        samples up to ``t0`` (in step order, through the journal, when steps wait)."""
        if self._replayed == len(self.journal) and t0 < self.replay_before:
            self._note_memories(memory)
        else:
            self.journal.append(_Entry(t0, None, dict(memory)))
            self.replay()

    def _note_memories(self, memory) -> None:
        for node, now in memory:
            self._note_memory(node, now)
        self._note_peak()

    def reserve(self, entry: "_Entry", node: int) -> tuple:
        """A slot in ``entry`` for the output of a deferred step of ``node``."""
        entry.outputs[node] = None
        entry.waiting += 1
        return entry, node

    def fill(self, slot: tuple, out) -> None:
        """The output of a deferred step, in the slot :meth:`reserve` gave."""
        entry, node = slot
        entry.outputs[node] = out
        entry.waiting -= 1

    def insert(self, node: int, t0: float, t1: float, out) -> None:
        """A step of a deferred node that the driver never saw (its own timer, in a
        window no other event made the driver run): into the journal in window order."""
        journal, half = self.journal, (t1 - t0) / 2
        lo = bisect.bisect_left(journal, t0 - half, lo=self._replayed, key=lambda e: e.t0)
        hi = bisect.bisect_right(journal, t0 + half, lo=lo, key=lambda e: e.t0)
        for entry in journal[lo:hi]:     # the driver ran this window: the step joins it
            if entry.t1 is not None and node not in entry.outputs:
                entry.outputs[node] = out
                return
        at = bisect.bisect_right(journal, t0, lo=self._replayed, key=lambda e: e.t0)
        journal[at:at] = [_Entry(t0, None, {}), _Entry(t0, t1, {node: out})]
        self.last_t1 = max(self.last_t1, t1)

    def sample_memory_until(self, t: float) -> None:
        """Memory rows at every sampling instant up to ``t`` (state as last reported),
        booked in step order."""
        # no entry when no instant is due by ``t``: samples only grow, so none will be
        # when the entry is booked either (one window in a hundred has one at 0.01)
        if self.samples * self.interval > t:
            if self._replayed < len(self.journal):
                self.replay()
        elif self._replayed == len(self.journal) and t < self.replay_before:
            self._sample_until(t)     # nothing waits before it: booked at once
        else:
            self.journal.append(_Entry(t, None, {}))
            self.replay()

    def replay(self) -> None:
        """Book the journal's entries in order, up to the first whose deferred steps
        have not run, and none from ``replay_before`` on."""
        journal = self.journal
        while self._replayed < len(journal):
            entry = journal[self._replayed]
            if entry.waiting or entry.t0 >= self.replay_before:
                break
            if entry.t1 is None:
                self._sample_until(entry.t0)
                if entry.outputs:   # the memory of nodes fed by the span (note_span)
                    self._note_memories(entry.outputs.items())
            else:
                self._book(entry.outputs)
                # booked: let the step's outputs go now rather than with the entry, so
                # they die young (kept for thousands of steps, they reached the
                # collector's oldest generation and set off its full passes)
                entry.outputs = {}
            self._replayed += 1
        if self._replayed > 4096:       # drop what is booked
            del journal[:self._replayed]
            self._replayed = 0

    def _book(self, outputs: dict) -> None:
        for node in sorted(outputs):
            out = outputs[node]
            self._book_rows(out)
            self._note_memory(node, out.memory)
        self._note_peak()

    def _book_rows(self, out) -> None:
        """The results, metric rows and trace rows of a step's output."""
        # most steps report nothing: tests before calls
        if out.results:
            self.results.extend(out.results)
        if out.metrics:
            self.metric_rows.extend(out.metrics)
        for table, row in out.traces:
            self.traces.setdefault(table, []).append(row)

    def _note_memory(self, node: int, now: tuple) -> None:
        """``node`` buffers ``now`` (tuples, bytes): the total follows."""
        # most steps keep their memory, often as the very tuple (NodeProgram.memory's
        # constant)
        if now is not (before := self.memory[node]):
            total = self.total
            total[0] += now[0] - before[0]
            total[1] += now[1] - before[1]
            self.memory[node] = now

    def _note_peak(self) -> None:
        """The peak of the total, after a step (max keeps the peak on a tie)."""
        peak, total = self.peak_total, self.total
        if total[0] > peak[0] or total[1] > peak[1]:
            self.peak_total = (max(peak[0], total[0]), max(peak[1], total[1]))

    def _sample_until(self, t: float) -> None:
        while (at := self.samples * self.interval) <= t:
            for node, (tuples, nbytes) in sorted(self.memory.items()):
                self.metric_rows.append((at, node, "testbed", "tuples", tuples))
                self.metric_rows.append((at, node, "testbed", "bytes", nbytes))
            self.samples += 1


@dataclass
class _Entry:
    """One line of the driver's journal: a memory sample up to ``t0`` (``t1`` None; its
    ``outputs`` then the memory of nodes fed by the span, by node, if any) or a step
    ``[t0, t1)`` with its outputs by node (None until a deferred step has run)."""

    t0: float
    t1: float | None
    outputs: dict
    waiting: int = 0
