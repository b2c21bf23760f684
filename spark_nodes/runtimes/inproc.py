"""The in-process runtime: node programs are objects in the driver's process.

It is the reference for results and speed; the Spark runtime must give the same
:class:`~contract.program.StepOutput` node by node.
"""
from __future__ import annotations

from contract.program import (StepOutput, WindowOutput, node_rng, run_node_calls,
                              run_node_step, run_tuple_spans, run_window)


class InprocRuntime:
    """Runs each node's program with :func:`run_node_step`, keeping its generator alive
    and its message numbering between steps."""

    name = "inproc"
    #: Facts for meta.json (none of its own).
    facts: dict = {}

    def open(self, plan, programs: dict) -> None:
        """Take the programs of a run."""
        self.programs = programs
        self.algorithm = plan.algorithm
        self._rng = {node: node_rng(plan.seed, node) for node in programs}
        self._next_local_id: dict[int, int] = {}

    def run_step(self, t0: float, t1: float, events_by_node: dict, net) -> dict[int, StepOutput]:
        """One step for every node that has events in ``[t0, t1)``."""
        outputs = {}
        # the lookups bound once: a step runs for a node or a few per window
        programs, rngs, next_ids = self.programs, self._rng, self._next_local_id
        algorithm = self.algorithm
        for node in sorted(events_by_node):
            # positional: a call with keywords costs more, and there is one per node step
            out = outputs[node] = run_node_step(
                programs[node], node, events_by_node[node], t0, t1, net, None, None,
                algorithm, next_ids.get(node, 0), rngs[node])
            next_ids[node] = out.next_local_id
        return outputs

    def run_window(self, t0: float, t1: float, events_by_node: dict, net) -> WindowOutput:
        """One step for every node that has events in ``[t0, t1)``, their outputs in one
        :class:`~contract.program.WindowOutput` (what the driver asks for when no node
        is deferred)."""
        return run_window(self.programs, events_by_node, t0, t1, net, self._rng,
                          self._next_local_id, self.algorithm)

    def run_spans(self, tuples_by_node: dict, net) -> WindowOutput:
        """Hand some pure sources their tuples of a span, one ``on_tuples`` call each
        (``emulator.tuple_spans``), their messages and memory in one
        :class:`~contract.program.WindowOutput`."""
        return run_tuple_spans(self.programs, tuples_by_node, net, self._rng,
                               self._next_local_id, self.algorithm)

    def run_calls(self, work: dict, nets, step: float, limit: float) -> dict:
        """Many steps of some nodes at once (``emulator.lookahead``): ``work`` is
        ``{node: (calls, timers, horizon)}``; returns ``{node: [(t0, t1, first,
        StepOutput)]}``."""
        done = {}
        for node in sorted(work):
            calls, timers, horizon = work[node]
            steps, _, next_id = run_node_calls(
                self.programs[node], node, calls, step=step, horizon=horizon, limit=limit,
                nets=nets, timers=timers, algorithm=self.algorithm, rng=self._rng[node],
                next_local_id=self._next_local_id.get(node, 0))
            self._next_local_id[node] = next_id
            done[node] = steps
        return done

    def close(self) -> list:
        """No runtime metrics of its own."""
        return []
