"""When a condition is judged: exceptions below a threshold once per window, and
sliding windows at every slide (source 001, Fig. 4 and the claims on exceptions)."""
from __future__ import annotations

from spark_nodes.algorithms.triggers.conditions import (AnyOf, Count, Elapsed, Exceptions,
                                                        Rate)
from spark_nodes.algorithms.triggers.windows import WindowInitiator
from tests.triggers.test_triggers import fire_times


def polled(until: float, step: float = 0.1, extra=()):
    """Poll events ``(t, "")`` every ``step`` up to ``until``, merged with ``extra``."""
    ticks = [(round(step * k, 6), "") for k in range(1, int(round(until / step)) + 1)]
    return sorted(list(extra) + ticks, key=lambda e: (e[0], e[1] == ""))


def fire_polled(initiator, events):
    """Like ``fire_times``, with ``(t, "")`` a poll only."""
    out = []
    for t, what in events:
        if what == "":
            out += [(round(w.time, 6), w.kind) for w in initiator.poll(t)]
        else:
            out += fire_times(initiator, [(t, what)])
    return out


def test_exceptions_below_fire_at_every_window_while_quiet():
    ini = WindowInitiator(Exceptions(below=2, interval=1.0), keep=False)
    # no exceptions at all: a window every interval, not one at the first poll
    assert fire_polled(ini, polled(5.0)) == [(t, "exception") for t in
                                             (1.0, 2.0, 3.0, 4.0, 5.0)]


def test_exceptions_below_skip_the_windows_with_too_many():
    ini = WindowInitiator(Exceptions(below=2, interval=1.0, type="link_loss"), keep=False)
    faults = [(2.3, "!link_loss"), (2.4, "!link_loss"), (3.5, "!no_route")]
    # (2, 3] holds two link losses: no window at 3; the no_route is another type
    assert [t for t, _ in fire_polled(ini, polled(5.0, extra=faults))] == [1.0, 2.0, 4.0, 5.0]


def test_exceptions_below_as_a_rate_and_after_another_condition_fired():
    cond = AnyOf([Exceptions(below=1.5, measure="rate", interval=2.0), Count(above=3)])
    ini = WindowInitiator(cond, keep=False)
    events = polled(6.0, extra=[(0.5, "R1"), (0.6, "R1"), (0.7, "R1"), (4.5, "!late"),
                                (4.6, "!late"), (4.7, "!late")])
    # the count fires at 0.7 and opens a window there: judged at 2.7, 4.7 (3 in (2.7,
    # 4.7]: 1.5/unit, not below 1.5), then not before 6.7
    assert fire_polled(ini, events) == [(0.7, "count"), (2.7, "exception")]


def test_exceptions_above_stay_edge_triggered():
    ini = WindowInitiator(Exceptions(above=2, type="late"), keep=False)
    faults = [(1.0, "!late"), (1.1, "!late"), (1.2, "!late"), (3.0, "!late"), (3.1, "!late")]
    # two in the window fire it; the next window holds 1.2 and 3.0
    assert fire_polled(ini, polled(4.0, extra=faults)) == [(1.1, "exception"),
                                                          (3.0, "exception")]


def test_a_sliding_window_judges_its_condition_at_every_slide():
    ini = WindowInitiator(Rate(above=3.0, interval=1.0), mode="sliding", size=6, slide=2,
                          keep=True)
    busy = [(0.25 * k, "R1") for k in range(1, 17)]           # 4 per unit until 4.0
    calm = [(4.0 + 1.0 * k, "R1") for k in range(1, 7)]       # then 1 per unit
    fired = []
    for t, what in busy + calm:
        fired += [(w.time, w.kind, len(w.tuples)) for w in ini.tuple(what, t, t)]
    # first window by the rate at 1.0 (its fourth tuple), then every second tuple while
    # the rate holds; from 4.0 on the slides are due but the rate (1/unit) does not hold
    assert fired == [(1.0, "rate", 4), (1.5, "rate", 6), (2.0, "rate", 6),
                     (2.5, "rate", 6), (3.0, "rate", 6), (3.5, "rate", 6), (4.0, "rate", 6)]
    assert ini.fired_by == {"rate": 7}


def test_a_sliding_window_by_time_slides_again_once_the_condition_returns():
    ini = WindowInitiator(Exceptions(above=1, measure="rate", interval=1.0), mode="sliding",
                          size=4, slide=1.0, slide_by="time", keep=False)
    faults = [(0.5, "!late"), (1.5, "!late"), (4.2, "!late")]
    # the first window on the edge at 0.5; then judged every unit: (0.5, 1.5] holds the
    # one at 1.5, (1.5, 2.5] and (2.5, 3.5] none, (3.5, 4.5] the one at 4.2
    assert fire_polled(ini, polled(5.0, extra=faults)) == [
        (0.5, "exception"), (1.5, "exception"), (4.5, "exception")]


def test_fig4_count_and_time_slides_are_unchanged():
    ini = WindowInitiator(AnyOf([Count(above=4), Elapsed(above=100.0)]), mode="sliding",
                          size=4, slide=1)
    got = [(w.time, w.tuples) for k in range(1, 9) for w in ini.tuple("in", f"T{k}", k + 1)]
    assert got[:2] == [(5, ("T1", "T2", "T3", "T4")), (6, ("T2", "T3", "T4", "T5"))]
    assert len(got) == 5 and ini.fired_by == {"count": 5}
