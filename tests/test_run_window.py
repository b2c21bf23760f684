"""A window's nodes stepped into one output equal the same steps run node by node."""
import numpy as np
from hypothesis import given, settings, strategies as st

from contract.events import DELIVER, TIMER, TUPLE, Event
from contract.messages import Message
from contract.program import NodeProgram, node_rng, run_node_step, run_window


class Busy(NodeProgram):
    """Does a little of everything a program may do in a step, driven by its generator."""

    def __init__(self):
        self.held = 0

    def on_tuple(self, ctx, tup):
        self.held += 1
        ctx.send(int(ctx.rng.integers(0, 4)), "data", tup, 1.0)   # sometimes itself
        if ctx.rng.random() < 0.5:
            ctx.set_timer(ctx.now + float(ctx.rng.uniform(0, 2)), ("t", tup))

    def on_message(self, ctx, msg):
        ctx.emit((), got=msg.payload)
        ctx.record("seen", 1.0)

    def on_timer(self, ctx, tag):
        ctx.trace("timers", tag=str(tag))
        self.held = max(0, self.held - 1)

    def memory(self):
        return (self.held, 8 * self.held)


def _events(draw_times, node):
    events = []
    for order, (time, kind) in enumerate(draw_times):
        payload = (node, order) if kind == TUPLE else (
            Message(order, "data", 9, node, time, 1.0, 56, order) if kind == DELIVER
            else ("x", order))
        events.append(Event(time, order + 10 * node, kind, payload))
    return events


events_at = st.lists(st.tuples(st.floats(0.0, 0.999), st.sampled_from([TUPLE, DELIVER, TIMER])),
                     min_size=1, max_size=4)


@settings(max_examples=100, deadline=None)
@given(by_node=st.dictionaries(st.integers(0, 3), events_at, min_size=1, max_size=4))
def test_a_window_stepped_at_once_equals_its_node_steps(by_node):
    events = {node: _events(times, node) for node, times in by_node.items()}
    one, apart = {n: Busy() for n in range(4)}, {n: Busy() for n in range(4)}
    rngs_one = {n: node_rng(3, n) for n in range(4)}
    rngs_apart = {n: node_rng(3, n) for n in range(4)}
    ids = {}
    out = run_window(one, events, 0.0, 1.0, None, rngs_one, ids, "alg")
    steps = {n: run_node_step(apart[n], n, events[n], 0.0, 1.0, None, algorithm="alg",
                              rng=rngs_apart[n], next_local_id=0) for n in sorted(events)}
    assert out.messages == [m for n in sorted(steps) for m in steps[n].messages]
    assert out.results == [r for n in sorted(steps) for r in steps[n].results]
    assert out.metrics == [r for n in sorted(steps) for r in steps[n].metrics]
    assert out.traces == [r for n in sorted(steps) for r in steps[n].traces]
    assert list(zip(out.timers, out.timer_nodes)) == [
        (timer, n) for n in sorted(steps) for timer in steps[n].timers]
    assert out.memory == [(n, steps[n].memory) for n in sorted(steps)]
    assert ids == {n: steps[n].next_local_id for n in steps}
    # the generators went as far on both ways
    assert all(rngs_one[n].random() == rngs_apart[n].random() for n in range(4))


def test_a_window_step_continues_each_nodes_message_numbers():
    events = {1: [Event(0.2, 0, TUPLE, "a")], 2: [Event(0.3, 1, TUPLE, "b")]}
    ids = {1: 5}
    out = run_window({1: Busy(), 2: Busy()}, events, 0.0, 1.0, None,
                     {1: np.random.default_rng(0), 2: np.random.default_rng(0)}, ids)
    assert [m.local_id for m in out.messages] == [5, 0] and ids == {1: 6, 2: 1}
