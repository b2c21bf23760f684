"""Pure sources handed their tuples a span at a time: no tuple event, no source step.

A pure source (``NodeProgram.receives_messages()`` False, not listening to losses) sees
nothing but its own tuples, so what it sends is known before the network runs. One that
also answers ``takes_tuple_spans()`` True is handed the tuples of a whole *span* in one
call (``NodeProgram.on_tuples``, through the runtime's ``run_spans``) instead of one
calendar event per tuple and one step per window. A span is the run of windows whose
start lies in one network epoch (so ``ctx.net`` is the view each of those windows would
see), from the window the driver is in.

What stays exact: the node's tuples reach it in the order its steps would hand them
(``entered_at``, then filing order), its message numbers and generator continue as in
its steps, and its messages enter the transport in the windows its steps would have
sent them in, merged with the other nodes' in the driver's sending order: a message
stamped ``sent_at`` goes in the first window whose calendar stop is after it, the rule
by which the calendar hands out a tuple filed at that time. The tuples of the run's
first window (where ``start`` runs) and of the window holding the duration (where
``finish`` runs) are filed and stepped as before, so ``start`` runs before any tuple is
handed over and ``finish`` after all of them.

What is per span (``docs/DESIGN.md``, "Tuples by the span"): the node's ``memory()`` is
read after each span's call and booked as of the window the span starts in; a program
fed so sets no timer and makes no result, metric or trace row (each an error naming the
node). For a program whose memory does not move with its tuples (a source that ships
each tuple as it comes) the books are those of the stepped run.

Example
-------
>>> from types import SimpleNamespace
>>> from contract.program import NodeProgram
>>> class Ship(NodeProgram):
...     def receives_messages(self): return False
...     def on_tuples(self, ctx, tuples):
...         ctx.send_many(2, "data", tuples, 1.0, [t.entered_at for t in tuples])
>>> plan = SimpleNamespace(step=0.1, duration=1.0)
>>> spans = TupleSpans.of(plan, {0: Ship(), 2: NodeProgram()}, None, {0, 2})
>>> sorted(spans.nodes), (spans.first, spans.last)
([0], (0.1, 1.0))
"""
from __future__ import annotations

import bisect
import math
from operator import attrgetter

from contract.events import window_of
from emulator import collector

_SENT_AT = attrgetter("sent_at")
_ENTERED_AT = attrgetter("entered_at")
_ORIGIN = attrgetter("origin")


class TupleSpans:
    """The tuples held back from the calendar for nodes fed by the span, and the
    messages of the span run last, released window by window.

    Parameters
    ----------
    nodes : set
        The nodes fed by the span.
    step : float
        The driver's grid (``plan.step``).
    first, last : float
        Tuples before ``first`` (the end of the run's first window) or from ``last``
        (the start of the window holding the duration) stay with the calendar.
    backend
        The simpy backend: ``view(t)``, ``next_change(t)``.
    """

    def __init__(self, nodes: set, step: float, first: float, last: float, backend):
        self.nodes = nodes
        self.step, self.first, self.last = step, first, last
        self.backend = backend
        self._held = {node: [] for node in sorted(nodes)}   # each node's, time order
        self._taken = {node: 0 for node in nodes}           # handed over so far
        self._entered = {node: [] for node in nodes}        # their times, for bisection
        self._sorted = False
        self.span_end = -math.inf
        self._messages: list = []    # the last span's, in sending order
        self._times: list = []       # their sent_at, for bisection
        self._released = 0           # those already handed to the driver
        self._next_tuple = math.inf  # the earliest tuple not handed over yet
        self._next = math.inf        # next_time(), known between calls

    @classmethod
    def of(cls, plan, programs: dict, backend, up: set) -> "TupleSpans | None":
        """The spans of a run, or None when no node qualifies: a program that is a
        pure source, takes its tuples by the span and is up in every epoch (``up``)."""
        nodes = {n for n, p in programs.items() if n in up and not p.receives_messages()
                 and not p.listens_to_losses() and p.takes_tuple_spans()}
        if not nodes:
            return None
        return cls(nodes, plan.step, window_of(0.0, plan.step)[1],
                   window_of(plan.duration, plan.step)[0], backend)

    # -- seeding ---------------------------------------------------------------------------
    def hold(self, stream: list) -> list:
        """Keep the tuples of ``stream`` that go by the span; return the others (for
        the calendar), in their order."""
        nodes, first, last, held = self.nodes, self.first, self.last, self._held
        self._sorted = False
        origins = set(map(_ORIGIN, stream))
        if len(origins) == 1:    # most streams: one node's, in time order (two slices)
            if origins.isdisjoint(nodes):
                return stream
            times = list(map(_ENTERED_AT, stream))
            if times == sorted(times):
                lo, hi = bisect.bisect_left(times, first), bisect.bisect_left(times, last)
                held[origins.pop()].extend(stream[lo:hi])
                return stream[:lo] + stream[hi:]
        rest = []
        for tup in stream:
            if tup.origin in nodes and first <= tup.entered_at < last:
                held[tup.origin].append(tup)
            else:
                rest.append(tup)
        return rest

    # -- the driver's questions ------------------------------------------------------------
    def next_time(self) -> float:
        """The earliest time something of the spans is due: a message not yet
        released, or a tuple not yet handed over (which starts a span)."""
        if not self._sorted:
            # seeded stream by stream: sorted once by time, filing order kept on ties
            for node, tuples in self._held.items():
                tuples.sort(key=_ENTERED_AT)
                self._entered[node] = list(map(_ENTERED_AT, tuples))
            self._sorted = True
            self._next_tuple = self._earliest_tuple()
            self._next = self._next_tuple
        return self._next

    def span_due(self, t0: float) -> bool:
        """Whether the window starting at ``t0`` is past the last span run, with tuples
        left to hand over, and not the run's first window (``start`` runs there,
        before any tuple)."""
        return t0 >= self.span_end and t0 >= self.first and self._next_tuple < math.inf

    def run_span(self, t0: float, runtime, state) -> None:
        """Hand every node its tuples of the span that starts at the window ``t0``, in
        one runtime call (``run_spans``); keep their messages for their windows and
        book the nodes' memory (``state.note_span``)."""
        change = self.backend.next_change(t0)
        if math.isinf(change):
            end = self.last
        else:   # the first window that starts in the next epoch
            start, stop = window_of(change, self.step)
            end = min(self.last, start if start >= change else stop)
        end = max(end, window_of(t0, self.step)[1])
        work = {}
        for node, tuples in self._held.items():
            at = self._taken[node]
            upto = bisect.bisect_left(self._entered[node], end, at)
            if upto > at:
                work[node] = tuples[at:upto]
                self._taken[node] = upto
        self.span_end = end
        if work:
            # a span's messages are kept until their windows come: made with the
            # collector paused, then frozen out of its view (as emulator.lookahead's)
            with collector.paused():
                out = runtime.run_spans(work, self.backend.view(t0))
                # in the sending order (sent_at, src, local_id): the call's messages come
                # node after node in node order, each node's in its numbering, so a
                # stable sort by time alone gives it (float keys: a third of the cost)
                out.messages.sort(key=_SENT_AT)
                # a message of the last span left for a window whose calendar stop fell
                # a bit short of the grid goes first: all were sent before this span
                self._messages = self._messages[self._released:] + out.messages
                self._times = list(map(_SENT_AT, self._messages))
                self._released = 0
                collector.freeze_kept()
            state.note_span(t0, out.memory)
        self._next_tuple = self._earliest_tuple()
        self._next = self._earliest()

    def release(self, stop: float) -> list:
        """The span's messages the window whose calendar stop is ``stop`` sends (those
        stamped before it, not released yet), in sending order."""
        messages, at = self._messages, self._released
        if at == len(messages) or self._times[at] >= stop:
            return []
        upto = bisect.bisect_left(self._times, stop, at)
        self._released = upto
        self._next = self._earliest()
        return messages[at:upto]

    def _earliest(self) -> float:
        if self._released < len(self._messages):
            return min(self._next_tuple, self._messages[self._released].sent_at)
        return self._next_tuple

    def _earliest_tuple(self) -> float:
        return float(min((times[self._taken[n]] for n, times in self._entered.items()
                          if self._taken[n] < len(times)), default=math.inf))
