"""The simpy backend's calendar keeps a SimPy environment's order and arithmetic."""
from collections import defaultdict

import simpy
from hypothesis import given, settings, strategies as st

from contract.events import TIMER
from emulator.simpy_backend import SimpyBackend


class Static:
    epochs = [0.0]

    def snapshot(self, t):
        import networkx as nx

        g = nx.Graph()
        g.add_edge(0, 1, cost=1.0, delay=0.5)
        return g


class SimpyCalendar:
    """The calendar as it was: one SimPy timeout per event, run to each window's end."""

    def __init__(self):
        self.env, self.inbox, self.late, self.order = simpy.Environment(), defaultdict(list), [], 0

    def schedule(self, time, node):
        self.order += 1
        event = (time, self.order)
        if time < self.env.now:
            self.late.append((node, event))
        else:
            self.env.timeout(time - self.env.now).callbacks.append(
                lambda _, node=node, event=event: self.inbox[node].append(event))

    def collect(self, until):
        if until > self.env.now:
            self.env.run(until=until)
        for node, event in self.late:
            self.inbox[node].append(event)
        self.late.clear()
        inbox, self.inbox = self.inbox, defaultdict(list)
        return {node: events for node, events in inbox.items() if events}


# Window ends are sums of 0.1 (inexact in binary); event times are the same instants
# reached by sums or by products, so some fall exactly on a window's end and others one
# bit beside it, and a key ``now + (time - now)`` differs from its time in the last bit.
SUMS = [0.0]
for _ in range(60):
    SUMS.append(SUMS[-1] + 0.1)
times = st.one_of(st.sampled_from(SUMS), st.builds(lambda k: k * 0.1, st.integers(0, 60)),
                  st.builds(lambda k: k / 3, st.integers(0, 18)))


@settings(max_examples=300, deadline=None)
@given(rounds=st.lists(st.tuples(st.lists(st.tuples(times, st.integers(0, 3)), max_size=6),
                                 st.integers(1, 4)), min_size=1, max_size=12))
def test_calendar_equals_a_simpy_environment(rounds):
    ours, theirs = SimpyBackend(Static(), seed=1, bytes_per_unit=32, header_bytes=24), \
        SimpyCalendar()
    until = 0.0
    for events, steps in rounds:
        for time, node in events:
            ours.schedule(time, node, TIMER, None)
            theirs.schedule(time, node)
        until += steps * 0.1
        got = {node: [(e.time, e.order) for e in evs] for node, evs in ours.collect(until).items()}
        assert list(got.items()) == list(theirs.collect(until).items())
        assert ours._now == theirs.env.now


@settings(max_examples=300, deadline=None)
@given(rounds=st.lists(st.tuples(st.lists(st.tuples(times, st.integers(0, 3), st.booleans()),
                                          max_size=8),
                                 st.integers(1, 4)), min_size=1, max_size=12))
def test_events_filed_in_bulk_fire_as_if_filed_one_by_one(rounds):
    """Events filed with ``schedule_all`` (kept sorted beside the heap, taken a window's
    share at once) fire in the order, and leave the same next event time, as the same
    events filed one by one in a SimPy environment."""
    ours, theirs = SimpyBackend(Static(), seed=1, bytes_per_unit=32, header_bytes=24), \
        SimpyCalendar()
    until, pending = 0.0, []
    for events, steps in rounds:
        bulk = [(time, node, TIMER, None) for time, node, in_bulk in events if in_bulk]
        ours.schedule_all(bulk)
        for time, node, _, _ in bulk:
            theirs.schedule(time, node)
        for time, node, in_bulk in events:
            if not in_bulk:
                ours.schedule(time, node, TIMER, None)
                theirs.schedule(time, node)
        pending += [time for time, _, _ in events]
        until += steps * 0.1
        got = {node: [(e.time, e.order) for e in evs] for node, evs in ours.collect(until).items()}
        want = theirs.collect(until)
        assert list(got.items()) == list(want.items())
        fired = sorted(t for evs in want.values() for t, _ in evs)
        for t in fired:
            pending.remove(t)
        assert ours.next_time() == (min(pending) if pending else float("inf"))


def test_the_backend_counts_the_loss_notices_it_hands_over():
    from contract.events import LOST

    backend = SimpyBackend(Static(), seed=1, bytes_per_unit=32, header_bytes=24)
    backend.schedule(0.2, 0, TIMER, "tick")
    backend.schedule(0.3, 0, LOST, ("msg", "no_route"))
    backend.schedule(0.35, 1, LOST, ("msg", "no_route"))
    assert [e.kind for e in backend.collect(0.25)[0]] == [TIMER]
    assert backend.notices == 0
    got = backend.collect(0.5)
    assert sorted(got) == [0, 1] and backend.notices == 2
    backend.schedule(0.1, 1, LOST, ("msg", "link_loss"))   # late: before now
    assert backend.collect(0.5)[1][0].kind == LOST and backend.notices == 1
    assert backend.collect(0.6) == {} and backend.notices == 0
