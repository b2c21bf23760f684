"""``evaluate = "on_window"``: QJoin joins a tuple only when a window fires (source 001:
"the operator evaluates the received tuples only after a window is triggered")."""
from __future__ import annotations

import pandas as pd
import pytest

from experiments.spec import SpecError
from experiments.runner import run
from spark_nodes.algorithms.qjoin.programs import QJoinNode
from spark_nodes.algorithms.triggers.spec import trigger_spec
from tests.qjoin.test_programs import STREAMS, _arrivals, _drive, _qjoin_params
from tests.triggers.test_gate import spec as gate_spec_table


def drive(trigger_table, n=300):
    trigger = trigger_spec(trigger_table, "trigger.qjoin", streams=list(STREAMS))
    node = QJoinNode(STREAMS, 1.0, "equality", None, _qjoin_params(), trigger=trigger)
    out = _drive(node, _arrivals(n=n), 20.0)
    m = pd.DataFrame(out.metrics, columns=["time", "node", "source", "metric", "value"])
    return out, m


def test_on_the_clock_every_result_comes_at_a_window():
    now, _ = drive(None)
    out, m = drive({"evaluate": "on_window"})
    fired = set(m.loc[m.metric == "window_fired:time", "time"].round(9))
    assert len(fired) == 41                           # every L = 0.5 until the step ends at 21
    emitted = {round(r["emitted_at"], 9) for r in out.results}
    assert emitted <= fired and len(emitted) > 20
    # every tuple is joined (at the end of the run for those after the last window)
    assert m.loc[m.metric == "evaluations", "value"].sum() == 600
    # later, not never: the answer loses nothing to the wait here
    assert {r["group"] for r in out.results} == {r["group"] for r in now.results}
    assert min(r["emitted_at"] for r in out.results) > 0.49


def test_a_rate_trigger_decides_when_the_tuples_are_joined():
    table = {"evaluate": "on_window", "use": "rate", "rate": {"conditions": [
        {"kind": "rate", "above": 45.0, "interval": 0.5}, {"kind": "time", "above": 2.0}]}}
    out, m = drive(table)
    rate = m[m.metric.str.startswith("window_fired:")]
    assert set(rate.metric) == {"window_fired:rate", "window_fired:time"}
    emitted = {round(r["emitted_at"], 9) for r in out.results}
    assert emitted <= set(rate["time"].round(9)) | {20.0}   # the windows, and the end
    clock, _ = drive({"evaluate": "on_window"})
    mean = lambda o: sum(r["emitted_at"] for r in o.results) / len(o.results)  # noqa: E731
    assert mean(out) != pytest.approx(mean(clock))          # the trigger shows in latency


def test_only_qjoin_and_atr_evaluate_on_windows(tmp_path):
    s = gate_spec_table()
    s["algorithm"]["name"] = "ctr"
    s["trigger"]["ctr"]["evaluate"] = "on_window"
    with pytest.raises(SpecError, match=r"trigger.ctr.evaluate: this algorithm evaluates "
                                        r"on_arrival only, got 'on_window'$"):
        run(s, out=tmp_path)
    s["trigger"]["ctr"]["evaluate"] = "later"
    with pytest.raises(SpecError, match=r"trigger.ctr.evaluate: expected one of on_arrival, "
                                        r"on_window, got 'later'$"):
        run(s, out=tmp_path)


@pytest.mark.parametrize("trigger", [None, [{"kind": "count", "above": 5}]])
def test_atr_sends_a_segment_when_its_window_closes(trigger):
    """ATR on_window: the diffusion node holds a segment's parts until its window closes
    (by length, or cut by a trigger): the same exact answer, no result sooner, some
    later."""
    import dataclasses

    import numpy as np

    from tests.ctr.ctr_harness import make_plan, make_streams, run_plan
    from tests.triggers.test_cut_triggers import TOPO, triggered_plan

    names, nodes = ["R1", "R2", "R3"], [3, 7, 11]
    tuples = make_streams(np.random.default_rng(1), names, nodes, [3.0] * 3, 6.0,
                          key_domain=6, disorder=0.2)
    if trigger is None:
        base = make_plan("atr", dict(slack=0.6, hosts=4, segment=2.0), TOPO, nodes,
                         [1.0] * 3, duration=9.0, seed=1)
        base = dataclasses.replace(base, trigger=trigger_spec(None, "trigger.atr", names))
    else:
        base = triggered_plan(3, [1.0] * 3, nodes, [3.0] * 3, 2.0, trigger, 1)
    windowed = dataclasses.replace(base, trigger=dataclasses.replace(base.trigger,
                                                                     evaluate="on_window"))
    got = {}
    for name, plan in (("arrival", base), ("window", windowed)):
        out, expected, run = run_plan(plan, tuples)
        groups = list(out.results["group"])
        assert len(groups) == len(set(groups)) and set(groups) == expected
        got[name] = out.results.set_index("group")["emitted_at"]
    early, late = got["arrival"], got["window"]
    delay = (late - early.reindex(late.index)).to_numpy()
    assert (delay >= -1e-9).all() and delay.max() > 0.1
