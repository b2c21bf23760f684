"""The operator contract: node programs, their context, and one step of execution.

An algorithm places one :class:`NodeProgram` per node that has a role. The program
never reads a clock or a global: everything arrives through a :class:`NodeContext`.
:func:`run_node_step` runs one node for one driver step ``[t0, t1)``; the in-process and
the Spark runtimes both call it, which is why their results are identical.

Example
-------
>>> class Echo(NodeProgram):
...     def on_message(self, ctx, msg):
...         ctx.emit((), echoed=msg.payload)
>>> from contract.messages import Message
>>> m = Message(1, "data", 0, 1, 0.0, 1.0, 56, "hi")
>>> out = run_node_step(Echo(), 1, [Event(0.5, 0, DELIVER, m)], 0.0, 1.0, None, seed=7)
>>> out.results[0]["echoed"], out.results[0]["emitted_at"]
('hi', 0.5)
"""
from __future__ import annotations

import bisect
import heapq
import math
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, NamedTuple

import numpy as np

# The event vocabulary is part of this module's API (re-exported for programs and runtimes).
from contract.events import (DELIVER, FINISH, KIND_RANK, LOST, START, TIMER,  # noqa: F401
                             TUPLE, Event, window_of)
from contract.messages import Message

class NodeProgram:
    """One node's share of an algorithm. Subclasses override what they need.

    Programs must be picklable (the Spark runtime keeps them in its state store) and
    deterministic given their inputs and ``ctx.rng``.
    """

    def start(self, ctx: "NodeContext") -> None:
        """Called once at time 0."""

    def on_tuple(self, ctx: "NodeContext", tup) -> None:
        """A tuple produced by a source at this node entered the system."""

    def on_tuples(self, ctx: "NodeContext", tuples: list) -> None:
        """Many tuples produced at this node, in time order (``entered_at``, then the
        order they were filed in), handed over in one call: how the driver feeds a
        program that :meth:`takes_tuple_spans`. It must do what :meth:`on_tuple` on
        each in turn does. By default it is that loop, ``ctx.now`` at each tuple's time;
        an override sends the same messages, stamped with the same times, in fewer
        calls (``ctx.send_many``).

        >>> class Ship(NodeProgram):
        ...     def on_tuple(self, ctx, tup): ctx.send(9, "data", tup, 1.0)
        >>> from collections import namedtuple
        >>> Tup = namedtuple("Tup", "entered_at")
        >>> out = WindowOutput()
        >>> ctx = NodeContext(1, None, None, float("-inf"), out, [], "", 0)
        >>> Ship().on_tuples(ctx, [Tup(0.25), Tup(0.5)])
        >>> [(m.local_id, m.sent_at) for m in out.messages]
        [(0, 0.25), (1, 0.5)]
        """
        for tup in tuples:
            ctx.now = float(tup.entered_at)
            self.on_tuple(ctx, tup)

    def takes_tuple_spans(self) -> bool:
        """Whether the driver may hand this node its tuples a span at a time, through
        :meth:`on_tuples` (default: whether a subclass overrides it).

        Heeded only for a pure source (:meth:`receives_messages` False, not listening to
        losses) run in process on the simpy backend with ``[run] run_ahead``; see
        :mod:`emulator.tuple_spans`. Such a program handles its tuples without setting a
        timer, emitting a result, recording a metric or a trace, or sending to itself,
        and sets no timer at all (its timers would fire among tuples already handled):
        each is an error naming the node. Its ``memory()`` is read once per span.
        """
        return type(self).on_tuples is not NodeProgram.on_tuples

    def on_message(self, ctx: "NodeContext", msg: Message) -> None:
        """A message was delivered to this node."""

    def on_timer(self, ctx: "NodeContext", tag) -> None:
        """A timer set with ``ctx.set_timer`` fired."""

    def on_lost(self, ctx: "NodeContext", msg: Message, reason: str) -> None:
        """The network lost ``msg``, which this node sent (``reason``: ``dead_node``,
        ``no_route`` or ``link_loss``). The simpy backend tells the sender at the instant
        of the loss, as a link layer that reports a failed delivery would."""

    def finish(self, ctx: "NodeContext") -> None:
        """End of the run: flush what is still buffered."""

    def listens_to_losses(self) -> bool:
        """Whether :meth:`on_lost` does anything (the driver tells only those that do,
        so others take no extra steps): by default, whether a subclass overrides it."""
        return type(self).on_lost is not NodeProgram.on_lost

    def receives_messages(self) -> bool:
        """Whether a message can ever reach this node (default True).

        A program that answers False (a pure source) depends only on its own tuples and
        timers, so the driver may run it ahead of the network, many steps in one call
        (see :mod:`emulator.lookahead`); a delivery that reaches it anyway is an error.
        A program that listens to losses (:meth:`listens_to_losses`) is never run ahead.
        """
        return True

    def sends_messages(self) -> bool:
        """Whether this node ever sends a message (default True).

        A program that answers False (a pure sink, such as a query node that only joins)
        changes nothing another node sees, so the driver may defer its steps and run many
        of them in one call; a message it sends anyway is an error.
        """
        return True

    def memory(self) -> tuple[int, int]:
        """(tuples, bytes) this program buffers now."""
        return (0, 0)


class Outgoing(NamedTuple):
    """A message a program sent, before the backend numbers and transports it (a named
    tuple: a step may send 10^5 of them, and the Spark runtime ships them packed)."""

    local_id: int
    kind: str
    src: int
    dst: int
    sent_at: float
    size_units: float
    payload: Any
    #: delivered at once, outside the network (no hops, no ledger row): ``ctx.signal``
    free: bool = False


#: An :class:`Outgoing` made from all its fields in one tuple (0.2 us less than
#: ``Outgoing(...)``; a run makes one per message).
_new_outgoing = tuple.__new__


@dataclass
class StepOutput:
    """Everything one node produced in one step."""

    messages: list[Outgoing] = field(default_factory=list)
    results: list[dict] = field(default_factory=list)
    metrics: list[tuple[float, int, str, str, float]] = field(default_factory=list)
    timers: list[tuple[float, Any]] = field(default_factory=list)
    traces: list[tuple[str, dict]] = field(default_factory=list)
    memory: tuple[int, int] = (0, 0)
    rng_state: dict | None = None
    next_local_id: int = 0


class NodeContext:
    """What a program may see and do. Built by :func:`run_node_step`, one per step."""

    # one per node and step (89,000 in bench_emulator's run): slots make it and its
    # reads cheaper, and a program cannot hang state on it that would not survive
    __slots__ = ("node", "net", "rng", "now", "_t1", "_out", "_agenda", "_algorithm",
                 "_next_local_id", "_order")

    def __init__(self, node: int, net, rng: np.random.Generator, t1: float,
                 out: StepOutput, agenda: list, algorithm: str, next_local_id: int):
        self.node = node
        self.net = net
        self.rng = rng
        self.now = 0.0
        self._t1 = t1
        self._out = out
        self._agenda = agenda
        self._algorithm = algorithm
        self._next_local_id = next_local_id
        self._order = 0

    def send(self, dst: int, kind: str, payload, size_units: float) -> int:
        """Send ``payload`` to node ``dst``; returns the node-local message number.

        ``dst == self.node`` is delivered at once, locally, without crossing the network.
        """
        local_id = self._next_local_id
        self._next_local_id += 1
        if dst == self.node:
            msg = Message(-1, kind, self.node, dst, self.now, float(size_units), 0, payload)
            self._push(Event(self.now, self._next_order(), DELIVER, msg))
        else:   # made as Outgoing(...) makes it, without the named tuple's Python __new__
            self._out.messages.append(_new_outgoing(Outgoing, (
                local_id, kind, self.node, dst, self.now, float(size_units), payload, False)))
        return local_id

    def send_many(self, dst: int, kind: str, payloads: list, size_units, at: list) -> None:
        """Send one message per payload to ``dst``, the i-th stamped ``at[i]`` (times in
        order, none before now), as :meth:`send` at each of those times would, with
        consecutive message numbers. ``size_units``: one number for all, or a list of
        one per payload. One call for many messages: what a program fed its tuples by
        the span (``NodeProgram.on_tuples``) sends with.

        >>> out = WindowOutput()
        >>> ctx = NodeContext(1, None, None, float("-inf"), out, [], "", 5)
        >>> ctx.send_many(9, "data", ["a", "b"], [1, 2.5], [0.25, 0.5])
        >>> [(m.local_id, m.dst, m.sent_at, m.size_units, m.payload) for m in out.messages]
        [(5, 9, 0.25, 1.0, 'a'), (6, 9, 0.5, 2.5, 'b')]
        """
        n = len(payloads)
        if len(at) != n:
            raise ValueError(f"node {self.node}: send_many got {n} payloads but {len(at)} "
                             f"times")
        sizes = (repeat(float(size_units), n) if not isinstance(size_units, list)
                 else map(float, size_units))
        if dst == self.node:   # local deliveries: one by one, each at its time
            for payload, size, when in zip(payloads, sizes, at):
                self.now = float(when)
                self.send(dst, kind, payload, size)
            return
        first = self._next_local_id
        self._next_local_id = first + n
        # the Outgoings made in C (map over zip): no Python code per message
        self._out.messages.extend(map(_new_outgoing, repeat(Outgoing, n), zip(
            range(first, first + n), repeat(kind, n), repeat(self.node, n),
            repeat(dst, n), map(float, at), sizes, payloads, repeat(False, n))))

    def signal(self, dst: int, kind: str, payload, size_units: float, free: bool) -> int:
        """Send a control signal: over the network like :meth:`send`, or with ``free``
        delivered to ``dst`` at once and outside the network (no cost, no ledger row; a
        comparison point for signals, e.g. ``[trigger] signal = "free"``)."""
        if not free or dst == self.node:
            return self.send(dst, kind, payload, size_units)
        local_id = self._next_local_id
        self._next_local_id += 1
        self._out.messages.append(Outgoing(local_id, kind, self.node, dst, self.now,
                                           float(size_units), payload, free=True))
        return local_id

    def emit(self, members, *, at: float | None = None, **extra) -> None:
        """Report one result group made of the StreamTuples in ``members``.

        ``at`` stamps it with another virtual time than now (a program that models a
        system with its own clock, such as Spark's micro-batches, reports when that
        system produced the result).
        """
        when = self.now if at is None else float(at)
        row = {
            "group": "|".join(sorted(f"{m.stream}:{m.seq}" for m in members)),
            "emitted_at": when,
            "node": self.node,
            "first_entered": min((m.entered_at for m in members), default=when),
            "last_entered": max((m.entered_at for m in members), default=when),
        }
        row.update(extra)
        self._out.results.append(row)

    def set_timer(self, at: float, tag) -> None:
        """Call ``on_timer(ctx, tag)`` at virtual time ``at`` (not before now)."""
        if at < self.now:
            raise ValueError(f"timer at {at} is before now ({self.now})")
        if at < self._t1:
            self._push(Event(at, self._next_order(), TIMER, tag))
        else:
            self._out.timers.append((at, tag))

    def record(self, metric: str, value: float, *, at: float | None = None) -> None:
        """Add one row to the run's metrics (source = the algorithm's name), at now or
        at virtual time ``at``."""
        when = self.now if at is None else float(at)
        self._out.metrics.append((when, self.node, self._algorithm, metric, float(value)))

    def trace(self, table: str, **row) -> None:
        """Add one row to the run's trace table ``trace_<table>`` (``time`` and ``node``
        are filled in: now and this node). Traced runs record what happened to tuples and
        lookups, for profiles built after the run."""
        self._out.traces.append((table, {"time": self.now, "node": self.node, **row}))

    def _next_order(self) -> int:
        # Local events sort after the driver's events of the same time and kind.
        self._order += 1
        return 1_000_000_000 + self._order

    def _push(self, event: Event) -> None:
        heapq.heappush(self._agenda, (event.sort_key(), event))


def node_rng(seed: int, node: int) -> np.random.Generator:
    """The per-node generator a program sees as ``ctx.rng``.

    >>> float(node_rng(1, 3).random()) == float(node_rng(1, 3).random())
    True
    """
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, 7919, node])))


def _generator(seed: int | None, node: int, rng_state: dict | None) -> np.random.Generator:
    """The node's generator: continued from ``rng_state``, else new from ``seed``."""
    if rng_state is None:
        return node_rng(0 if seed is None else seed, node)
    bitgen = np.random.PCG64()
    bitgen.state = rng_state
    return np.random.Generator(bitgen)


def run_node_step(program: NodeProgram, node: int, events, t0: float, t1: float, net,
                  seed: int | None = None, rng_state: dict | None = None,
                  algorithm: str = "", next_local_id: int = 0,
                  rng: np.random.Generator | None = None) -> StepOutput:
    """Run ``program`` on the ``events`` due at ``node`` in ``[t0, t1)``.

    Events are processed in ``(time, kind, order)`` order together with the local sends
    and timers the program creates inside the step. The program's generator is ``rng``
    when the caller keeps it alive between steps (the in-process runtime); otherwise it
    continues from ``rng_state`` (or starts from ``seed`` on the first step) and its state
    is returned in ``StepOutput.rng_state``, so a runtime can store it (the Spark runtime).
    """
    keep_state = rng is None
    if rng is None:
        rng = _generator(seed, node, rng_state)
    out = StepOutput([], [], [], [], [])   # the lists given: 0.79 -> 0.51 us
    out.next_local_id = _run_events(program, node, events, t0, t1, net, rng, out,
                                    algorithm, next_local_id)
    out.memory = program.memory()
    out.rng_state = rng.bit_generator.state if keep_state else None
    return out


def _run_events(program: NodeProgram, node: int, events, t0: float, t1: float, net,
                rng: np.random.Generator, out, algorithm: str, next_local_id: int) -> int:
    """The heart of a node step: ``events`` and what the program files inside the step,
    handed to the program in ``(time, kind, order)`` order, what it produces added to
    ``out`` (a :class:`StepOutput` or a :class:`WindowOutput`); returns the node's next
    message number."""
    # the events' sort keys (Event.sort_key) built inline: a method call per event
    # cost a tenth of a typical step, which has one or a few events
    if len(events) == 1:    # most steps: no order to find, so no key (it is popped
        agenda: list = [(None, events[0])]   # before anything else can be pushed)
    else:
        rank = KIND_RANK
        agenda = [((e.time, rank[e.kind], e.order), e) for e in events]
        heapq.heapify(agenda)
    ctx = NodeContext(node, net, rng, t1, out, agenda, algorithm, next_local_id)
    pop = heapq.heappop
    while agenda:
        _, event = pop(agenda)
        ctx.now = event.time if event.time > t0 else t0
        # one comparison per kind, most frequent first: a table of handlers built per
        # step cost more than the events of a typical step
        kind = event.kind
        if kind == TUPLE:
            program.on_tuple(ctx, event.payload)
        elif kind == DELIVER:
            program.on_message(ctx, event.payload)
        elif kind == TIMER:
            program.on_timer(ctx, event.payload)
        elif kind == LOST:
            program.on_lost(ctx, *event.payload)
        elif kind == START:
            program.start(ctx)
        else:
            program.finish(ctx)
    return ctx._next_local_id


@dataclass
class WindowOutput:
    """What every node stepped in one driver window produced, in one set of lists: the
    node steps' outputs, node after node in node order, each in the order made (what the
    driver books from the nodes' :class:`StepOutput` in turn). ``timer_nodes`` names the
    node of each timer, ``memory`` holds ``(node, (tuples, bytes))`` per node stepped."""

    messages: list[Outgoing] = field(default_factory=list)
    results: list[dict] = field(default_factory=list)
    metrics: list[tuple[float, int, str, str, float]] = field(default_factory=list)
    timers: list[tuple[float, Any]] = field(default_factory=list)
    traces: list[tuple[str, dict]] = field(default_factory=list)
    timer_nodes: list[int] = field(default_factory=list)
    memory: list[tuple[int, tuple[int, int]]] = field(default_factory=list)


def run_window(programs: dict, events_by_node: dict, t0: float, t1: float, net,
               rngs: dict, next_ids: dict, algorithm: str = "") -> WindowOutput:
    """Step every node of ``events_by_node`` through ``[t0, t1)``, in node order, as
    :func:`run_node_step` would one by one, into one :class:`WindowOutput` (no output
    per node: a runtime that keeps the programs and their generators alive between
    steps, as the in-process one does, saves a step's objects and the driver its pass
    over them). ``rngs`` are the nodes' generators; ``next_ids`` their next message
    numbers, updated.

    >>> class Echo(NodeProgram):
    ...     def on_message(self, ctx, msg): ctx.send(msg.src, "data", msg.payload, 1.0)
    >>> m = Message(1, "data", 0, 1, 0.0, 1.0, 56, "hi")
    >>> out = run_window({1: Echo(), 2: Echo()}, {2: [Event(0.5, 0, DELIVER, m)],
    ...     1: [Event(0.7, 1, DELIVER, m)]}, 0.0, 1.0, None, {1: None, 2: None}, {})
    >>> [(o.src, o.sent_at) for o in out.messages], out.memory
    ([(1, 0.7), (2, 0.5)], [(1, (0, 0)), (2, (0, 0))])
    """
    out = WindowOutput([], [], [], [], [], [], [])
    timers, timer_nodes, memory = out.timers, out.timer_nodes, out.memory
    for node in sorted(events_by_node):
        program, filed = programs[node], len(timers)
        next_ids[node] = _run_events(program, node, events_by_node[node], t0, t1, net,
                                     rngs[node], out, algorithm, next_ids.get(node, 0))
        if len(timers) > filed:
            timer_nodes.extend([node] * (len(timers) - filed))
        memory.append((node, program.memory()))
    return out


def run_tuple_spans(programs: dict, tuples_by_node: dict, net, rngs: dict, next_ids: dict,
                    algorithm: str = "") -> WindowOutput:
    """Hand every node of ``tuples_by_node`` its tuples (in time order) in one
    :meth:`NodeProgram.on_tuples` call, node after node in node order, into one
    :class:`WindowOutput`: the messages, and each node's ``memory()`` after its call.
    ``net`` is the view every one of those tuples' windows sees (the driver never lets
    a span cross a network epoch); ``rngs`` and ``next_ids`` as for :func:`run_window`.

    A program fed so (``takes_tuple_spans``) may only send to other nodes while it
    handles tuples: a timer, a result, a metric or trace row, or a message to itself
    would have to take its place among tuples already handled, so each is an error
    naming the node.

    >>> class Ship(NodeProgram):
    ...     def on_tuple(self, ctx, tup): ctx.send(9, "data", tup.seq, 1.0)
    >>> from collections import namedtuple
    >>> Tup = namedtuple("Tup", "seq entered_at")
    >>> ids = {2: 4}
    >>> out = run_tuple_spans({1: Ship(), 2: Ship()}, {2: [Tup(0, 0.5)],
    ...     1: [Tup(0, 0.25), Tup(1, 0.75)]}, None, {1: None, 2: None}, ids)
    >>> [(m.src, m.local_id, m.sent_at) for m in out.messages], out.memory, ids
    ([(1, 0, 0.25), (1, 1, 0.75), (2, 4, 0.5)], [(1, (0, 0)), (2, (0, 0))], {2: 5, 1: 2})
    """
    out = WindowOutput([], [], [], [], [], [], [])
    memory = out.memory
    for node in sorted(tuples_by_node):
        program, tuples, agenda = programs[node], tuples_by_node[node], []
        # no window end: every timer set lands in out.timers, where it is caught
        ctx = NodeContext(node, net, rngs[node], -math.inf, out, agenda, algorithm,
                          next_ids.get(node, 0))
        ctx.now = float(tuples[0].entered_at)
        program.on_tuples(ctx, tuples)
        if agenda or out.timers or out.results or out.metrics or out.traces:
            what = ("sent a message to itself" if agenda else "set a timer" if out.timers
                    else "emitted a result" if out.results
                    else "recorded a metric" if out.metrics else "traced a row")
            raise RuntimeError(
                f"node {node}: its program takes its tuples by the span "
                f"(takes_tuple_spans() is True), but it {what} while handling them; such "
                f"a program only sends to other nodes from on_tuples (or let "
                f"takes_tuple_spans() answer False)")
        next_ids[node] = ctx._next_local_id
        memory.append((node, program.memory()))
    return out


@dataclass
class NodeCall:
    """One driver step of one node, run later or earlier than the driver reaches it:
    the window ``[t0, t1)`` and the events the driver collected for the node in it."""

    t0: float
    t1: float
    events: list


@dataclass
class TimerBook:
    """A run-ahead node's own timers not yet due: ``(at, order, tag)`` in a heap, and
    the next order number (timers the node files sort among themselves by it, as the
    driver's calendar sorts them by filing order)."""

    pending: list = field(default_factory=list)
    filed: int = 0


def run_node_calls(program: NodeProgram, node: int, calls: list, *, step: float,
                   horizon: float, limit: float, nets, timers: TimerBook,
                   seed: int | None = None, rng_state: dict | None = None,
                   algorithm: str = "", next_local_id: int = 0,
                   rng: np.random.Generator | None = None):
    """Run ``program`` through many driver steps at once, as the driver would have run
    them one by one; returns ``([(t0, t1, first, StepOutput)], rng_state, next_local_id)``
    with ``first`` the time of the step's first event.

    ``calls`` are the node's :class:`NodeCall` in time order. The node's own timers take
    the driver's part: one that leaves its step is kept in ``timers`` (not returned in
    ``StepOutput.timers``) and fires in the call whose window holds it, or in a window
    of its own on the grid of ``step`` when no call has one; timers after ``limit`` (the
    run's duration) are dropped as the driver drops them, and timers whose window starts
    at or after ``horizon`` stay in ``timers`` for a later call. ``nets`` is
    ``(epoch starts, views)``: a step sees the view in force at its ``t0``.

    >>> class Tick(NodeProgram):
    ...     def start(self, ctx): ctx.set_timer(0.25, "a")
    ...     def on_timer(self, ctx, tag): ctx.emit((), tag=tag)
    >>> book = TimerBook()
    >>> steps, _, _ = run_node_calls(Tick(), 0, [NodeCall(0.0, 0.1, [Event(0.0, 1, START, None)])],
    ...     step=0.1, horizon=float("inf"), limit=1.0, nets=([0.0], [None]), timers=book, seed=1)
    >>> [(round(t0, 2), [r["emitted_at"] for r in out.results]) for t0, _, _, out in steps]
    [(0.0, []), (0.2, [0.25])]
    """
    starts, views = nets
    keep_state = rng is None
    if rng is None:
        rng = _generator(seed, node, rng_state)
    pending = timers.pending
    done = []
    queue = list(calls)
    queue.reverse()            # pop() from the end: the next call in time order
    while queue or (pending and window_of(pending[0][0], step)[0] < horizon):
        if queue and not (pending and pending[0][0] < queue[-1].t0):
            call = queue.pop()
            t0, t1, events = call.t0, call.t1, list(call.events)
        else:                  # a timer due before the next call: a window of its own
            (t0, t1), events = window_of(pending[0][0], step), []
        while pending and pending[0][0] < t1:
            at, order, tag = heapq.heappop(pending)
            events.append(Event(at, order, TIMER, tag))
        net = views[max(0, bisect.bisect_right(starts, t0) - 1)]
        out = run_node_step(program, node, events, t0, t1, net, algorithm=algorithm,
                            rng=rng, next_local_id=next_local_id)
        next_local_id = out.next_local_id
        for at, tag in out.timers:
            if at <= limit:
                heapq.heappush(pending, (at, timers.filed, tag))
                timers.filed += 1
        out.timers = []
        done.append((t0, t1, min(e.time for e in events), out))
    return done, (rng.bit_generator.state if keep_state else None), next_local_id
