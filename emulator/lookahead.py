"""Run-ahead and deferred nodes: many driver steps of one node in one runtime call.

The driver runs every node step by step because a node's next step may depend on what
another node sent in this one. Two kinds of node need no such care (PDES calls this
lookahead):

- a **run-ahead** node receives nothing (``NodeProgram.receives_messages()`` is False and
  it does not listen to losses): its tuples and its own timers are all it sees, so it can
  run to the end of a *span* at once. Its step outputs wait in the driver and are handed
  over, one by one, in the very windows the driver would have run them in: a *release*
  event filed in the calendar at each step's first event time marks the window.
- a **deferred** node sends nothing (``sends_messages()`` is False): nobody waits for
  its outputs, so the driver keeps its steps (the window and the events collected) and
  runs them all at the end of the span.

A span covers :data:`SPAN_EPOCHS` network epochs (the routing views its steps may read
travel with it; the whole run when it has fewer epochs). At each span's start the driver
makes one runtime call (:meth:`Lookahead.run_span`) with the deferred steps of the span
before and the run-ahead steps of this one. On Spark that is one micro-batch instead of
one per step: the quickstart (three pure sources, a query node that only joins) runs in
two micro-batches instead of 192.

What stays exact: a node's steps are the driver's steps (same windows, same events in
the same order, the node's own timers filed and fired as the driver files and fires
them), messages of run-ahead nodes enter the transport in the window they were sent in,
and the driver's bookkeeping (results, metrics, memory samples, the peak) is replayed in
step order (``emulator.driver``). So the ledger, results and metrics equal those of the
step-by-step run (``tests/test_lookahead.py`` holds them equal on every bundled spec).
The driver's windows are cells of one grid (``contract.events.window_of``), so a
run-ahead node's windows are known before the driver reaches them.

Nodes that go down at some time are never run ahead or deferred (the driver's rules for
events at dead nodes need the calendar), nor are any nodes on a backend whose windows
follow wall-clock time (``runs_ahead`` False: the Mininet agents).
"""
from __future__ import annotations

import bisect
import math
from collections import deque

from contract.events import DELIVER, LOST, RELEASE, Event, window_of
from contract.plan import Plan
from contract.program import NodeCall, TimerBook
from emulator import collector

#: Network epochs one span may cover (the views of a span's epochs travel with it).
SPAN_EPOCHS = 64


class Lookahead:
    """Which nodes of a run go ahead or are deferred, and their pending steps.

    Parameters
    ----------
    plan : Plan
        The run (``step``, ``duration``).
    programs : dict
        ``{node: NodeProgram}``.
    backend
        The backend; it offers ``epochs``, ``views(starts)`` and ``schedule_all``.
    up : set
        The nodes of ``programs`` up in every epoch (the backend's ``always_up``): only
        they may run ahead or be deferred.
    """

    def __init__(self, plan: Plan, programs: dict, backend, up: set):
        self.ahead = {n for n, p in programs.items() if n in up and not p.receives_messages()
                      and not p.listens_to_losses()}
        self.deferred = {n for n, p in programs.items() if n in up and n not in self.ahead
                         and not p.sends_messages()}
        self.step, self.limit = plan.step, plan.duration
        self.backend = backend
        self.epochs = list(backend.epochs)
        self._seeded = {n: [] for n in self.ahead}      # (time, order, kind, payload)
        self._order = 0
        self._timers = {n: TimerBook() for n in self.ahead | self.deferred}
        self._released: dict[int, dict[int, tuple]] = {n: {} for n in self.ahead}
        self._release_id = 0
        self._calls = {n: deque() for n in self.deferred}      # (NodeCall, slot)
        self.span_end = -math.inf
        self._next = None        # next_time(), known between spans

    def __bool__(self) -> bool:
        return bool(self.ahead or self.deferred)

    # -- seeding ---------------------------------------------------------------------------
    def file(self, time: float, node: int, kind: str, payload) -> bool:
        """Keep a seeded event of a run-ahead node; False for any other node (the
        calendar files it). Orders follow seeding order, as the calendar's do."""
        if node not in self.ahead:
            return False
        self._order += 1
        self._seeded[node].append(Event(float(time), self._order, kind, payload))
        return True

    # -- spans -----------------------------------------------------------------------------
    def next_time(self) -> float:
        """The earliest seeded event or timer of a run-ahead node not yet run (asked
        every window; it changes only when a span runs)."""
        if self._next is None:
            for events in self._seeded.values():   # seeded stream by stream: sort once
                events.sort(key=lambda e: (e.time, e.order))
            self._next = self._earliest()
        return self._next

    def span_due(self, t0: float) -> bool:
        """Whether the window starting at ``t0`` is past the current span."""
        return t0 >= self.span_end

    def run_span(self, t0: float, runtime, state) -> None:
        """Run the deferred steps before ``t0`` and the run-ahead steps of the span that
        starts at the window ``t0``: one runtime call. Files a release event for every
        run-ahead step; hands the deferred steps' outputs to ``state`` (the driver's
        bookkeeping) for their slots."""
        k = bisect.bisect_right(self.epochs, t0) - 1
        end_epoch = k + SPAN_EPOCHS
        end = window_of(self.epochs[end_epoch], self.step)[0] \
            if end_epoch < len(self.epochs) else math.inf
        end = max(end, window_of(t0, self.step)[1])
        # A span's steps, their events and outputs are made at once and kept until
        # their windows come. Made with the collector paused, then frozen out of its
        # view: otherwise it scans them in every young collection they survive and in
        # every full one after (bench_emulator's nodes declared a pure source and sink:
        # 0.9 s of collections in a 3 s run; 0.46-0.68 s when only paused; 0.10-0.12 s
        # frozen, the run 2.4-2.6 -> 1.8-1.9 s).
        with collector.paused():
            work = self._deferred_work(t0)
            for node in sorted(self.ahead):
                calls = self._ahead_calls(node, end)
                if calls or self._timers[node].pending:
                    work[node] = (calls, self._timers[node], end)
            self._run(work, t0, end, runtime, state)
            collector.freeze_kept()
        self.span_end = end
        self._next = self._earliest()

    def finish(self, runtime, state) -> None:
        """Run the deferred steps still pending (the end of the run)."""
        self.span_end = math.inf
        self._run(self._deferred_work(math.inf), math.inf, math.inf, runtime, state)

    # -- inside a span ---------------------------------------------------------------------
    def take(self, t0: float, t1: float, events_by_node: dict, state, entry) -> dict:
        """Split the events the driver collected: release events hand back run-ahead
        outputs (returned, ``{node: StepOutput}``); events of deferred nodes become
        their pending steps (with a slot in ``entry``, the driver's journal entry of this
        step); the rest is left in
        ``events_by_node`` for the runtime. A delivery to a run-ahead node is an error."""
        released = {}
        for node in list(events_by_node):
            if node in self.ahead:
                for event in events_by_node.pop(node):
                    if event.kind != RELEASE:
                        what = {DELIVER: "a message", LOST: "a loss notice"}.get(
                            event.kind, f"a {event.kind} event")
                        raise RuntimeError(
                            f"node {node}: its program says it receives no messages "
                            f"(receives_messages() is False), but {what} reached it at "
                            f"{event.time:g}")
                    released[node] = self._released[node].pop(event.payload)
            elif node in self.deferred:
                events = events_by_node.pop(node)
                self._calls[node].append((NodeCall(t0, t1, events), state.reserve(entry, node)))
        return released

    # -- internals -------------------------------------------------------------------------
    def _earliest(self) -> float:
        times = [events[0].time for events in self._seeded.values() if events]
        times += [self._timers[n].pending[0][0] for n in self.ahead
                  if self._timers[n].pending]
        return min(times, default=math.inf)

    def _deferred_work(self, horizon: float) -> dict:
        """The deferred nodes' pending steps, and their timers due before ``horizon``."""
        return {n: ([call for call, _ in self._calls[n]], self._timers[n], horizon)
                for n in sorted(self.deferred) if self._calls[n] or self._timers[n].pending}

    def _run(self, work: dict, t0: float, end: float, runtime, state) -> None:
        """One runtime call for ``work``; run-ahead outputs wait for their windows,
        deferred ones go to their slots in the driver's journal."""
        if not work:
            return
        first = min([t0] + [calls[0].t0 for calls, _, _ in work.values() if calls])
        if math.isinf(first):
            first = 0.0
        done = runtime.run_calls(work, self._nets(first, end), self.step, self.limit)
        releases = []
        for node, steps in done.items():
            if node in self.ahead:
                releases += self._releases(node, steps)
            else:
                self._settle(node, steps, state)
        # filed at once, in the order they were made: kept sorted beside the calendar's
        # heap, not pushed onto it one by one (a span's releases are tens of thousands,
        # and every pop and push of the heap would pay for them). A filing merges them
        # with every event kept so: once a span, and not for none (the deferred's call
        # at the end of the run)
        if releases:
            self.backend.schedule_all(releases)

    def _ahead_calls(self, node: int, end: float) -> list:
        """The node's seeded events before ``end``, grouped by grid window."""
        seeded, calls = self._seeded[node], []
        taken = 0
        for event in seeded:
            w0, w1 = window_of(event.time, self.step)
            if w0 >= end:
                break
            if not calls or w0 != calls[-1].t0:
                calls.append(NodeCall(w0, w1, []))
            calls[-1].events.append(event)
            taken += 1
        del seeded[:taken]
        return calls

    def _releases(self, node: int, steps) -> list:
        """A release event ``(time, node, kind, payload)`` to file for each run-ahead
        step of ``node``, its output kept until the event comes."""
        releases = []
        for _, _, first, out in steps:
            self._release_id += 1
            self._released[node][self._release_id] = out
            releases.append((first, node, RELEASE, self._release_id))
        return releases

    def _settle(self, node: int, steps, state) -> None:
        calls = self._calls[node]
        for t0, t1, _, out in steps:
            if out.messages:
                raise RuntimeError(f"node {node}: its program says it sends no messages "
                                   f"(sends_messages() is False), but it sent one to node "
                                   f"{out.messages[0].dst} at {out.messages[0].sent_at:g}")
            if calls and calls[0][0].t0 == t0:
                state.fill(calls.popleft()[1], out)
            else:
                state.insert(node, t0, t1, out)

    def _nets(self, first: float, end: float):
        """(epoch starts, views) of the epochs in force over ``[first, end)``."""
        k0 = max(0, bisect.bisect_right(self.epochs, first) - 1)
        k1 = len(self.epochs) if math.isinf(end) else bisect.bisect_left(self.epochs, end)
        starts = self.epochs[k0:max(k1, k0 + 1)]
        return starts, self.backend.views(starts)
