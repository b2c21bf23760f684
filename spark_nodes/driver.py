"""The step driver: advances the simpy backend and lets a runtime run the node programs.

Time advances in steps ``[t0, t1)`` of ``plan.step``. In each step the backend hands over
the events due at every node; the runtime (in-process or Spark) runs the programs; the
messages they sent are injected in a deterministic order ``(sent_at, src, local id)``.
A message never arrives inside the step it was sent in when the step is no longer than
the smallest link delay; local sends, zero-delay links and timers inside the step are
handled by iterating the step until no event is left before ``t1``. Steps with nothing
to do are skipped.

At ``plan.duration`` every program gets ``finish``; the run then drains messages still in
flight for at most ``drain`` more time units. Timers set for after the end are not filed
(one set inside the last step for a time within that step still fires).
"""
from __future__ import annotations

import logging
import math

from tqdm.auto import tqdm

from emulator.events import FINISH, START, TIMER, TUPLE
from emulator.outputs import RunOutput, metrics_frame, results_frame
from emulator.simpy_backend import SimpyBackend

log = logging.getLogger(__name__)


def execute(plan, programs: dict, tuples_by_stream: dict, runtime, drain: float | None = None,
            progress: bool = False) -> RunOutput:
    """Run ``programs`` on the simpy backend under ``runtime``; return the raw tables.

    ``tuples_by_stream`` holds every tuple the sources produce; each enters the system at
    its origin node at ``entered_at``. A tuple whose origin has no program is an error.
    """
    backend = SimpyBackend(plan.dynamics, plan.seed, plan.bytes_per_unit, plan.header_bytes)
    for node in sorted(programs):
        backend.schedule(0.0, node, START, None)
    for name in sorted(tuples_by_stream):
        for tup in tuples_by_stream[name]:
            if tup.origin not in programs:
                raise ValueError(f"stream {name}: tuple {tup.seq} comes from node {tup.origin}, "
                                 f"which runs no program of {plan.algorithm!r}")
            backend.schedule(tup.entered_at, tup.origin, TUPLE, tup)
    for node in sorted(programs):
        backend.schedule(plan.duration, node, FINISH, None)

    runtime.open(plan, programs)
    state = _RunState(programs, plan.memory_interval)
    end = plan.duration + (plan.duration if drain is None else drain)
    step = plan.step
    # Progress in thousandths of the virtual duration: integer counts never overshoot.
    bar = tqdm(total=1000, desc=f"{plan.name} ({runtime.name}, {plan.duration:g} time units)",
               bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]",
               disable=not progress, leave=False)
    t0 = 0.0
    while True:
        nxt = backend.next_time()
        if math.isinf(nxt) or nxt >= end:
            break
        t0 = max(t0, math.floor(nxt / step) * step)
        t1 = t0 + step
        state.sample_memory_until(t0)
        while (events := backend.collect(t1)):
            outputs = runtime.run_step(t0, t1, events, backend.view(t0))
            state.absorb(outputs, backend, plan.duration)
        bar.update(int(1000 * min(t1, plan.duration) / plan.duration) - bar.n)
        t0 = t1
    bar.close()
    state.sample_memory_until(min(t0, end))
    metrics = state.metric_rows + runtime.close()
    info = backend.info()
    info["runtime"] = runtime.name
    info["memory_peak_total_tuples"] = state.peak_total[0]
    info["memory_peak_total_bytes"] = state.peak_total[1]
    log.info("%s: %d messages, %d hops, %d results", plan.name, info["messages"],
             info["hops"], len(state.results))
    return RunOutput(backend.ledger.frame(), metrics_frame(metrics),
                     results_frame(state.results), info)


class _RunState:
    """Results, metric rows and memory bookkeeping of one run."""

    def __init__(self, programs, memory_interval):
        self.results: list[dict] = []
        self.metric_rows: list[tuple] = []
        self.memory = {node: (0, 0) for node in programs}
        self.total = [0, 0]   # the sum of self.memory, kept as nodes report
        self.interval = memory_interval
        self.samples = 0
        self.peak_total = (0, 0)

    def absorb(self, outputs: dict, backend, duration: float) -> None:
        outgoing = []
        for node in sorted(outputs):
            out = outputs[node]
            self.results.extend(out.results)
            self.metric_rows.extend(out.metrics)
            before = self.memory[node]
            self.total[0] += out.memory[0] - before[0]
            self.total[1] += out.memory[1] - before[1]
            self.memory[node] = out.memory
            for at, tag in out.timers:
                if at <= duration:
                    backend.schedule(at, node, TIMER, tag)
            outgoing.extend(out.messages)
        outgoing.sort(key=lambda m: (m.sent_at, m.src, m.local_id))
        backend.inject([(m.sent_at, m.src, m.dst, m.kind, m.size_units, m.payload)
                        for m in outgoing])
        self.peak_total = (max(self.peak_total[0], self.total[0]),
                           max(self.peak_total[1], self.total[1]))

    def sample_memory_until(self, t: float) -> None:
        """Memory rows at every sampling instant up to ``t`` (state as last reported)."""
        while (at := self.samples * self.interval) <= t:
            for node, (tuples, nbytes) in sorted(self.memory.items()):
                self.metric_rows.append((at, node, "testbed", "tuples", tuples))
                self.metric_rows.append((at, node, "testbed", "bytes", nbytes))
            self.samples += 1
