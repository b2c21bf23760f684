"""Triggered windows give the same tables on Spark as in process (QJoin with sources that
signal over the network and hear of their lost messages; ATR and CTR cutting segments,
ATR's hosts holding windows, signalling their siblings and gated;
SMJ's periods ended at the query node on its sites' signals)."""
import math

import pandas as pd
import pytest

from experiments.runner import run

from .test_triggers import spec

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def same(a, b):
    pd.testing.assert_frame_equal(a.ledger, b.ledger)
    pd.testing.assert_frame_equal(a.results, b.results)
    ours = b.metrics[b.metrics.source != "spark"].reset_index(drop=True)
    pd.testing.assert_frame_equal(ours, a.metrics)
    keys = {k for k in a.summary if k not in ("wall_seconds", "spark_state_rows_peak",
                                              "spark_state_bytes_peak")}
    nan = lambda v: "nan" if isinstance(v, float) and math.isnan(v) else v  # noqa: E731
    assert {k: nan(b.summary[k]) for k in keys} == {k: nan(a.summary[k]) for k in keys}


# One trigger on Spark in make test; the others in the full suite (make test-full, CI).
@pytest.mark.parametrize("algorithm, use", [
    ("qjoin", "exception"),
    *(pytest.param(a, "rate", marks=pytest.mark.full_suite) for a in ("atr", "smj-h", "ctr"))])
def test_triggered_runs_equal_on_spark(tmp_path, algorithm, use):
    s = spec(use)
    s["algorithm"]["name"] = algorithm
    s["trigger"][algorithm]["use"] = use
    s["run"]["duration"] = 6.0
    s["run"]["step"] = 0.05
    s["topology"]["delay"] = 0.05
    s["run"]["spark_master"] = "local[2]"
    inproc = run(s, out=tmp_path)
    assert inproc.summary["windows_fired"] > 0
    if algorithm in ("smj-h", "ctr"):       # the trigger itself fired, not only its clock
        assert inproc.summary["windows_fired_by_rate"] > 0
    s["run"]["runtime"] = "spark"
    same(inproc, run(s, out=tmp_path))


@pytest.mark.full_suite   # 50 s; make test keeps the triggered QJoin run on Spark above
def test_a_gated_run_joining_on_windows_is_equal_on_spark(tmp_path):
    from .test_gate import GATE
    from .test_gate import spec as gated

    s = gated(dict(GATE, while_shut="buffer"), evaluate="on_window")
    s["run"].update(duration=18.0, step=0.05, spark_master="local[2]")
    inproc = run(s, out=tmp_path)
    assert inproc.summary["gate_closed_time"] > 0 and inproc.summary["evaluations"] > 0
    s["run"]["runtime"] = "spark"
    same(inproc, run(s, out=tmp_path))


@pytest.mark.full_suite   # as the gated run on windows above
def test_atr_on_windows_with_host_windows_and_a_gate_is_equal_on_spark(tmp_path):
    s = spec("rate")
    s["algorithm"]["name"] = "atr"
    atr = s["trigger"]["atr"]
    atr.update(use="rate", evaluate="on_window", gate={
        "upstream": "diffusion", "exception_rate_below": 1.0, "while_shut": "buffer"})
    # hosts hold their tuples for a unit; each signals its siblings every 4 tuples
    atr["rate"]["conditions"] += [{"kind": "time", "above": 1.0, "at": "hosts"},
                                  {"kind": "count", "above": 4, "at": "siblings"}]
    s["run"].update(duration=6.0, step=0.05, spark_master="local[2]")
    s["topology"]["delay"] = 0.05
    inproc = run(s, out=tmp_path)
    assert inproc.summary["windows_fired"] > 0
    assert inproc.summary["host_windows"] > 0 and inproc.summary["sibling_signals"] > 0
    s["run"]["runtime"] = "spark"
    same(inproc, run(s, out=tmp_path))
