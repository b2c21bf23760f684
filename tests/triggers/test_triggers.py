"""Window triggers: the source's worked cases, the spec tables, loss notices, bursty
arrivals, and QJoin adapting when a trigger fires."""
from __future__ import annotations

import copy
import tomllib
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from contract.program import NodeProgram
from emulator.driver import execute
from experiments.runner import run
from experiments.spec import SpecError
from spark_nodes.algorithms.triggers.conditions import (AllOf, Count, Elapsed, Exceptions,
                                                        KOfN, Rate)
from spark_nodes.algorithms.triggers.windows import WindowInitiator
from spark_nodes.runtimes.inproc import InprocRuntime
from spark_nodes.workload.arrivals import arrivals
from experiments.planning import make_plan

SPEC = Path(__file__).resolve().parents[2] / "experiments" / "specs" / "triggers_bursty.toml"


def fire_times(initiator, events):
    """Feed ``(time, what)`` events (a stream name, or ``!type`` for an exception)."""
    out = []
    for t, what in events:
        fired = initiator.exception(what[1:], t) if what.startswith("!") else \
            initiator.tuple(what, None, t)
        out += [(round(w.time, 6), w.kind) for w in fired + initiator.poll(t)]
    return out


def test_a_rate_above_its_threshold_fires_once_per_burst():
    ini = WindowInitiator(Rate(above=5.0, interval=1.0), keep=False)
    burst = [(2.0 + 0.1 * k, "R1") for k in range(10)]           # 10/s for one unit
    calm = [(4.0 + k, "R1") for k in range(3)]                   # 1/s
    second = [(8.0 + 0.1 * k, "R1") for k in range(10)]
    # the fifth tuple of a burst makes 5 in the last unit
    assert fire_times(ini, burst + calm + second) == [(2.4, "rate"), (8.4, "rate")]


def test_combinations_all_k_of_n_and_one_above_while_another_below():
    one_up_other_down = AllOf([Rate(above=5.0, interval=1.0, input="R1"),
                               Rate(below=2.0, interval=1.0, input="R2")])
    ini = WindowInitiator(one_up_other_down, keep=False)
    events = sorted([(1.0 + 0.1 * k, "R1") for k in range(20)]
                    + [(1.05 + 0.2 * k, "R2") for k in range(5)])  # R2 at 5/s first
    events += [(3.0 + 0.1 * k, "R1") for k in range(10)]           # R2 silent now
    # R2's last tuples at 1.65 and 1.85: from 2.7 on, one in the last unit (< 2/s) while
    # R1 runs at 10/s; after a window, a rate needs a whole interval to be measured again
    assert fire_times(ini, events) == [(2.7, "rate"), (3.7, "rate")]
    two_of_three = KOfN(2, [Count(above=3), Exceptions(above=1, type="late"),
                            Elapsed(above=100.0)])
    ini = WindowInitiator(two_of_three, keep=False)
    assert fire_times(ini, [(1.0, "R1"), (1.1, "R1"), (1.2, "R1"), (1.3, "!late")]) == \
        [(1.3, "count")]


def test_exception_rate_counts_only_the_recent_interval():
    ini = WindowInitiator(Exceptions(above=3.0, measure="rate", interval=1.0), keep=False)
    spread = [(k * 0.6, "!link_loss") for k in range(6)]          # < 2 per unit
    assert fire_times(ini, spread) == []
    dense = [(10.0 + 0.1 * k, "!link_loss") for k in range(3)]
    assert fire_times(ini, dense) == [(10.2, "exception")]


@pytest.mark.parametrize("pattern", ["onoff", "mmpp"])
def test_bursty_patterns_keep_the_mean_rate_and_burst(pattern):
    rng = np.random.default_rng(5)
    ts = arrivals(pattern, 4.0, 20000.0, rng, {})
    assert abs(len(ts) / 20000.0 - 4.0) < 0.3          # about 4 standard deviations
    per_unit = np.bincount(ts.astype(int), minlength=20000)
    poisson = np.bincount(arrivals("poisson", 4.0, 20000.0, rng, {}).astype(int),
                          minlength=20000)
    # burstier than Poisson: the counts per time unit vary far more than their mean
    assert per_unit.var() > 2.0 * poisson.var()


def test_a_sender_learns_that_the_network_lost_its_message():
    class Sender(NodeProgram):
        def start(self, ctx):
            for k in range(20):
                ctx.send(2, "data", k, 1.0)

        def on_lost(self, ctx, msg, reason):
            ctx.record(f"lost:{reason}", msg.payload)

    class Sink(NodeProgram):
        pass

    class Lossy:
        epochs = [0.0]

        def snapshot(self, t):
            g = nx.Graph()
            g.add_edge(0, 1, cost=1.0, delay=0.1, loss=0.5)
            g.add_edge(1, 2, cost=1.0, delay=0.1)
            return g

    plan = make_plan(dynamics=Lossy(), seed=3, duration=2.0, name="loss", algorithm="t")
    out = execute(plan, {0: Sender(), 2: Sink()}, {}, InprocRuntime())
    notices = out.metrics[out.metrics["metric"] == "lost:link_loss"]
    assert 0 < len(notices) == out.info["lost"]["link_loss"] < 20
    assert (notices["node"] == 0).all() and (notices["time"] >= 0.1).all()


def spec(use: str, loss: float = 0.05, **trigger) -> dict:
    """triggers_bursty.toml for 30 time units, with lossier links (more exceptions)."""
    raw = tomllib.loads(SPEC.read_text())
    raw.pop("sweep")
    raw["run"]["duration"] = 30.0
    raw["topology"]["loss"] = loss
    raw["mobility"]["failures"] = str(SPEC.parent / raw["mobility"]["failures"])
    raw["trigger"]["qjoin"]["use"] = use
    raw["trigger"]["qjoin"].update(trigger)
    return raw


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("triggers")
    return {use: run(spec(use), out=out) for use in ("clock", "rate", "exception")}


def test_qjoin_adapts_when_its_trigger_fires(runs):
    clock, rate, exc = (runs[u].summary for u in ("clock", "rate", "exception"))
    assert clock["trigger"] == "clock"
    assert clock["windows_fired"] == clock["windows_fired_by_time"] == 30   # every L = 1
    assert rate["windows_fired_by_rate"] > 0 and rate["windows_fired_by_count"] == 0
    assert rate["windows_fired"] == rate["windows_fired_by_rate"] + rate["windows_fired_by_time"]
    assert exc["windows_fired_by_exception"] > 0
    # every adaptation is one window: the metrics carry one q_target row per window
    m = runs["rate"].metrics
    assert (m["metric"] == "q_target").sum() == rate["windows_fired"]


def test_sources_signal_their_windows_over_the_network_or_for_free(runs, tmp_path):
    over = runs["exception"]
    signals = over.ledger[over.ledger["kind"] == "trigger"]
    assert len(signals) > 0                      # control messages, with their cost
    free = run(spec("exception", signal="free"), out=tmp_path)
    assert (free.ledger["kind"] == "trigger").sum() == 0
    assert free.summary["windows_fired_by_exception"] > 0


@pytest.mark.parametrize("edit, message", [
    (lambda s: s["trigger"]["qjoin"].update(use="nope"),
     r"trigger.qjoin.use: no variant table \[trigger.qjoin.nope\]"),
    (lambda s: s["trigger"]["qjoin"]["rate"]["conditions"][0].update(kind="speed"),
     r"trigger.qjoin.rate.conditions\[0\].kind: expected one of count, time, rate"),
    (lambda s: s["trigger"]["qjoin"]["rate"]["conditions"][0].update(input="R9"),
     r"trigger.qjoin.rate.conditions\[0\].input: expected one of R1, R2, got 'R9'"),
    (lambda s: s["trigger"]["qjoin"]["exception"]["conditions"][0].update(type="oops"),
     r"trigger.qjoin.exception.conditions\[0\].type: expected one of dead_node"),
    (lambda s: s["trigger"].update({"single-host": {"use": "clock"}}) or
     s["algorithm"].update(name="single-host"),
     r"trigger.single-host: this algorithm's windows run on its fixed clock only"),
    # SMJ's query node keeps the period clock and sees no tuples: rates at the sites
    (lambda s: s["algorithm"].update(name="smj-h") or
     s["trigger"]["smj-h"].update(use="rate") or
     s["trigger"]["smj-h"]["rate"]["conditions"][0].pop("at"),
     r"^\S+: trigger.smj-h.rate.conditions\[0\].at: a rate condition cannot be measured "
     r"at 'here' by this algorithm; valid: sources$"),
    (lambda s: s["algorithm"].update(name="smj-h") or
     s["trigger"]["smj-h"].update(use="deviation") or
     s["trigger"]["smj-h"]["deviation"].update(when="k", k=3),
     r"trigger.smj-h.deviation.k: expected an integer in 1..2, got 3$"),
    # CTR cuts its segments where it measures: at the diffusion node
    (lambda s: s["algorithm"].update(name="ctr") or
     s["trigger"]["ctr"].update(use="exception") or
     s["trigger"]["ctr"]["exception"]["conditions"][0].update(at="sources"),
     r"^\S+: trigger.ctr.exception.conditions\[0\].at: a exception condition cannot be "
     r"measured at 'sources' by this algorithm; valid: here$"),
    (lambda s: s["algorithm"].update(name="ctr") or
     s["trigger"]["ctr"].update(use="rate") or
     s["trigger"]["ctr"]["rate"]["conditions"][0].update(above=-1.0),
     r"trigger.ctr.rate.conditions\[0\].above: expected a number >= 0, got -1.0$"),
])
def test_bad_trigger_tables_name_the_field(tmp_path, edit, message):
    s = spec("rate" if "rate" in message else "exception" if "exception" in message
             else "clock")
    if "use: no variant" in message:
        s = spec("clock")
    edit(s)
    with pytest.raises(SpecError, match=message):
        run(s, out=tmp_path)


def test_a_triggered_run_is_deterministic(runs, tmp_path):
    again = run(copy.deepcopy(spec("rate")), out=tmp_path)
    assert again.summary["windows_fired"] == runs["rate"].summary["windows_fired"]
    assert again.results.equals(runs["rate"].results)


def test_the_report_compares_triggers_paired_with_the_clock(runs, tmp_path):
    import pandas as pd

    from analysis.triggers_section import per_variant, section

    frame = pd.DataFrame([{"run_id": r.run_id, "seed": r.spec["run"]["seed"],
                           "algorithm": "qjoin", **r.summary} for r in runs.values()])
    table = per_variant(frame)
    assert list(table["trigger"]) == ["clock", "exception", "rate"]
    rate = table.set_index("trigger").loc["rate"]
    assert rate["algorithm"] == "qjoin"
    assert rate["windows_fired"] == runs["rate"].summary["windows_fired"]
    assert rate["d_recall"] == pytest.approx(runs["rate"].summary["recall"]
                                            - runs["clock"].summary["recall"])
    html = section(frame, [r.path for r in runs.values()], tmp_path)
    assert "Δ recall vs clock" in html
    assert "onset to the next window — clock: " in html
    # the reaction to bursts, from the rate run's own arrivals and windows
    from analysis.triggers_reaction import burst_onsets, reaction
    from analysis.triggers_section import fired_times, reactions
    m = runs["rate"].metrics
    arrivals = np.sort(m.loc[m["metric"].str.startswith("arrival:"), "time"].to_numpy())
    fired = [t for ts in fired_times(m).values() for t in ts]
    mine = reaction(burst_onsets(arrivals), fired)
    react = reactions(frame, {r.run_id: r.path for r in runs.values()}).set_index("trigger")
    assert 0 < react.loc["rate", "reaction"] == pytest.approx(mine)
    assert (tmp_path / "figures" / "triggers_timeline.png").stat().st_size > 1000
    # faults: nodes 3 (15-25) and 7 (from 35, after this 30-unit run) fail; the run
    # folder keeps the outages clipped to the run, and the windows fired inside them
    # are counted per time unit of outage
    from analysis.triggers_reaction import while_down
    assert runs["rate"].meta["node_outages"] == [[3, 15.0, 25.0]]
    inside = sum(1 for t in fired if 15.0 <= t < 25.0)
    assert react.loc["rate", "fired_down"] == pytest.approx(inside / 10.0)
    assert react.loc["rate", "fired_up"] == pytest.approx((len(fired) - inside) / 20.0)
    assert while_down(fired, [[3, 15.0, 25.0]], 30.0) == (inside / 10.0,
                                                         (len(fired) - inside) / 20.0)
    # the clock fires once per L = 1, inside the outage as outside it
    assert react.loc["clock", "fired_down"] == react.loc["clock", "fired_up"] == 1.0
    assert "while some node is down vs while all are up — clock: 1 while down" in html
    only_clock = frame[frame["trigger"] == "clock"]
    assert section(only_clock, [], tmp_path) == ""


def test_a_saved_rate_profile_drives_a_deviation_trigger(runs, tmp_path, capsys):
    """testbed rates writes a run's input rate per interval; a later run's deviation
    condition loads it as its history instead of a running average."""
    from testbed.cli import main

    path = tmp_path / "rates.csv"
    assert main(["rates", str(runs["clock"].path), "-o", str(path)]) == 0
    lines = path.read_text().splitlines()
    assert lines[0] == "time,rate" and len(lines) == 31          # 30 intervals of 1
    total = sum(float(r.split(",")[1]) for r in lines[1:])
    assert total == len(runs["clock"].metrics.query("metric.str.startswith('arrival:')"))
    s = spec("deviation")
    s["trigger"]["qjoin"]["deviation"]["conditions"][0] = {
        "kind": "deviation", "above": 75.0, "interval": 1.0, "profile": str(path)}
    fired = run(s, out=tmp_path).summary
    assert fired["windows_fired_by_deviation"] > 0
    s["trigger"]["qjoin"]["deviation"]["conditions"][0]["profile"] = str(tmp_path / "x.csv")
    with pytest.raises(SpecError, match=r"conditions\[0\].profile: no such file"):
        run(s, out=tmp_path)
