"""Exceptions per upstream operator (k of n), their deviation from history, and an
operator's own errors counted as exceptions (source 001, claims 4-6 and 11-13)."""
from __future__ import annotations

import pandas as pd
import pytest

from spark_nodes.algorithms.qjoin.operator import SymmetricJoin
from spark_nodes.algorithms.qjoin.programs import QJoinNode
from spark_nodes.algorithms.triggers.conditions import Deviation, Exceptions
from spark_nodes.algorithms.triggers.spec import trigger_spec
from spark_nodes.algorithms.triggers.windows import WindowInitiator
from tests.qjoin.test_programs import STREAMS, _arrivals, _drive, _qjoin_params


def told(initiator, faults):
    """Tell ``(t, type, origin)`` faults; the times of the windows that fired."""
    return [round(w.time, 6) for t, kind, node in faults
            for w in initiator.exception(kind, t, node)]


def test_exceptions_are_counted_per_upstream_operator_and_combined_k_of_n():
    ini = WindowInitiator(Exceptions(above=2, upstream=(3, 5, 7), need=2), keep=False)
    faults = [(1.0, "dead_node", 3), (1.1, "dead_node", 3), (1.2, "no_route", 9),
              (1.3, "no_route", 9), (1.4, "no_route", 5), (1.5, "link_loss", 5)]
    # node 3 reaches two at 1.1, node 9 is not watched, node 5 makes the second at 1.5
    assert told(ini, faults) == [1.5]
    assert ini.obs.exception_count(None, 0.0, 2.0, origin=9) == 2
    assert ini.obs.exception_count("dead_node", 0.0, 2.0) == 2


def test_one_upstream_alone_is_the_source_s_operator_510():
    ini = WindowInitiator(Exceptions(above=3, measure="rate", interval=1.0, upstream=(5,)),
                          keep=False)
    noisy_other = [(0.1 * k, "link_loss", 9) for k in range(1, 10)]
    assert told(ini, noisy_other) == []
    assert told(ini, [(2.0, "late", 5), (2.2, "late", 5), (2.4, "late", 5)]) == [2.4]


def test_a_deviation_of_exception_counts_from_their_history():
    ini = WindowInitiator(Deviation(above=150.0, interval=1.0, warmup=2.0, of="exceptions",
                                    type="link_loss"), keep=False)
    steady = [(k + 0.5, "link_loss", 4) for k in range(9)]          # 1 per unit
    assert told(ini, steady) == []
    ini.poll(9.0)
    burst = [(9.1, "link_loss", 4), (9.2, "no_route", 4), (9.3, "link_loss", 6),
             (9.4, "link_loss", 6)]
    # (8.1, 9.1]: two link losses, +100 %; (8.3, 9.3]: three against a history of one
    # per unit, +200 % (the no_route is another type)
    assert told(ini, burst) == [9.3]
    assert ini.condition.history(9.3) == pytest.approx(1.0)


def test_spec_tables_of_upstream_need_and_deviation_of_exceptions():
    t = trigger_spec({"use": "faults", "faults": {"conditions": [
        {"kind": "exception", "above": 2, "upstream": [3, 5, 7], "need": 2},
        {"kind": "exception", "below": 1, "upstream": 4, "type": "operator_error"},
        {"kind": "deviation", "above": 100.0, "of": "exceptions", "upstream": 3}]}},
        "trigger.qjoin", streams=["R1", "R2"])
    parts = t.initiator("here").condition.parts
    assert (parts[0].upstream, parts[0].need, parts[1].upstream) == ((3, 5, 7), 2, (4,))
    assert (parts[2].of, parts[2].upstream) == ("exceptions", 3)


@pytest.mark.parametrize("condition, message", [
    ({"kind": "exception", "above": 1, "upstream": [3, "x"]},
     r"conditions\[0\].upstream: expected a node id or a non-empty list"),
    ({"kind": "exception", "above": 1, "upstream": [3, 5], "need": 3},
     r"conditions\[0\].need: expected an integer in 1..2"),
    ({"kind": "exception", "above": 1, "need": 1},
     r"conditions\[0\].need: expected an integer in 1..0"),
    ({"kind": "deviation", "above": 50.0, "upstream": [3, 5], "of": "exceptions"},
     r"conditions\[0\].upstream: expected a node id \(integers >= 0\)"),
    ({"kind": "deviation", "above": 50.0, "type": "late"},
     r"conditions\[0\].of: type and upstream need of = \"exceptions\""),
    ({"kind": "deviation", "above": 50.0, "of": "faults"},
     r"conditions\[0\].of: expected one of tuples, exceptions"),
])
def test_bad_upstream_tables_name_the_field(condition, message):
    with pytest.raises(ValueError, match=message):
        trigger_spec({"use": "v", "v": {"conditions": [condition]}}, "trigger.qjoin",
                     streams=["R1"])


def test_an_operator_s_own_error_is_an_exception_and_the_node_keeps_running(monkeypatch):
    arrive = SymmetricJoin.arrive

    def flaky(self, side, tup):
        if tup.stream == "R" and tup.seq % 50 == 7:        # a bad tuple now and then
            raise ZeroDivisionError("bad tuple")
        return arrive(self, side, tup)

    monkeypatch.setattr(SymmetricJoin, "arrive", flaky)
    trigger = trigger_spec({"use": "errors", "errors": {"conditions": [
        {"kind": "exception", "above": 1, "type": "operator_error", "upstream": 9},
        {"kind": "time", "above": 1.0}]}}, "trigger.qjoin", streams=list(STREAMS))
    arr = _arrivals(n=200)
    out = _drive(QJoinNode(STREAMS, 1.0, "equality", None, _qjoin_params(), trigger=trigger),
                 arr, 12.0)
    m = pd.DataFrame(out.metrics, columns=["time", "node", "source", "metric", "value"])
    errors = m[m.metric == "exception:operator_error"]
    assert len(errors) == 4                                   # seq 7, 57, 107, 157
    # each error fires a window (the join node is node 9), and the join went on
    assert (m.metric == "window_fired:exception").sum() == 4
    last = max(t for t, tup in arr)
    assert max(r["emitted_at"] for r in out.results) > 0.9 * last
    bad = {f"R:{s}" for s in (7, 57, 107, 157)}
    assert not any(bad & set(r["group"].split("|")) for r in out.results)
