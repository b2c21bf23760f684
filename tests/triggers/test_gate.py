"""A gated operator (source 001, Fig. 7): QJoin's join node evaluates only while the
source it watches runs without faults; what arrives meanwhile is held or dropped."""
from __future__ import annotations

import copy
import math
import tomllib
from pathlib import Path

import pytest

from experiments.runner import run
from experiments.spec import SpecError
from spark_nodes.algorithms.triggers.gate import Gate, GateSpec

SPEC = Path(__file__).resolve().parents[2] / "experiments" / "specs" / "triggers_bursty.toml"
GATE = {"upstream": "R1", "exception_rate_below": 2.0, "silence": 1.0}


def spec(gate: dict | None = None, **trigger) -> dict:
    """triggers_bursty.toml for 30 time units, steady streams at nodes 3 and 7 (node 3,
    R1's source, is down from 15 to 25)."""
    raw = tomllib.loads(SPEC.read_text())
    raw.pop("sweep")
    raw["run"]["duration"] = 30.0
    raw["mobility"]["failures"] = str(SPEC.parent / raw["mobility"]["failures"])
    raw["streams"].update(nodes=[3, 7], pattern="poisson")
    raw["streams"].pop("pattern_options")
    if gate is not None:
        raw["trigger"]["qjoin"]["gate"] = gate
    raw["trigger"]["qjoin"].update(trigger)
    return raw


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("gate")
    return {mode: run(spec(None if mode == "off" else dict(GATE, while_shut=mode)), out=out)
            for mode in ("off", "drop", "buffer")}


def test_the_gate_shuts_while_the_watched_source_is_down(runs):
    off, drop, buffer = (runs[m].summary for m in ("off", "drop", "buffer"))
    assert off["evaluations_skipped"] == 0 and math.isnan(off["gate_closed_time"])
    assert off["evaluations"] == off["tuples_arrived"]
    # node 3 is down 15-25: silent for 1 (silence) plus a poll, then a peer_timeout per
    # poll; it opens again once its first tuple is heard and a unit has passed quietly
    for s in (drop, buffer):
        assert 10.0 <= s["gate_closed_time"] <= 11.0
        assert s["evaluations"] + s["evaluations_skipped"] == s["tuples_arrived"]
    # drop: R2's tuples of the outage are never joined, and their results are lost
    assert drop["evaluations_skipped"] > 30
    assert drop["results"] < off["results"]
    # buffer: joined once the gate opens, the answer unchanged
    assert buffer["evaluations_skipped"] == 0
    assert buffer["results"] == off["results"]
    m = runs["drop"].metrics
    skipped_rows = m[m["metric"] == "evaluations_skipped"]
    assert (skipped_rows["node"] == 0).all() and skipped_rows["value"].sum() == \
        drop["evaluations_skipped"]


def test_the_watched_source_reports_its_faults_to_the_gate(runs):
    # R1's source tells the join node of each of its lost messages and route changes
    reports = runs["drop"].ledger
    sent = reports[reports["kind"] == "gate_exception"]
    assert len(sent) > 0 and set(sent["src"]) == {3}
    assert (runs["off"].ledger["kind"] == "gate_exception").sum() == 0


def test_a_gated_run_is_deterministic(runs, tmp_path):
    again = run(copy.deepcopy(spec(dict(GATE, while_shut="drop"))), out=tmp_path)
    assert again.summary["evaluations"] == runs["drop"].summary["evaluations"]
    assert again.results.equals(runs["drop"].results)


def test_held_items_are_evaluated_in_arrival_order_when_the_gate_opens():
    g = Gate(GateSpec(upstream=3, exception_rate_below=1.0, interval=1.0, silence=0.5))
    g.heard(0.0)
    assert g.poll(0.5) == []                    # silent for 0.5: a peer_timeout, shut
    assert [g.admit(0.6, "a"), g.admit(0.7, "b")] == [[], []]
    g.heard(1.2)
    assert g.poll(1.6) == ["a", "b"]            # (0.6, 1.6] holds no exception
    assert g.counts(2.0) == {"evaluations": 2, "evaluations_skipped": 0,
                             "gate_closed_time": 1.1}


@pytest.mark.parametrize("gate, message", [
    (dict(GATE, upstream=5), r"trigger.qjoin.gate.upstream: node 5 is not an operator "
                             r"upstream of the gated one; valid: R1 \(node 3\), R2 \(node 7\)$"),
    (dict(GATE, upstream=0), r"trigger.qjoin.gate.upstream: node 0 is not an operator"),
    (dict(GATE, upstream="R9"), r"trigger.qjoin.gate.upstream: 'R9' is not an operator"),
    (dict(GATE, exception_rate_below=-1),
     r"trigger.qjoin.gate.exception_rate_below: expected a number >= 0, got -1$"),
    (dict(GATE, while_shut="queue"),
     r"trigger.qjoin.gate.while_shut: expected one of buffer, drop, got 'queue'$"),
    ({"upstream": 3}, r"trigger.qjoin.gate.exception_rate_below: a gate needs "),
    (dict(GATE, rate=1), r"trigger.qjoin.gate.rate: unknown key; valid: "),
])
def test_bad_gates_name_the_field(tmp_path, gate, message):
    with pytest.raises(SpecError, match=message):
        run(spec(gate), out=tmp_path)


def test_an_algorithm_without_a_gate_refuses_one(tmp_path):
    s = spec()
    s["algorithm"]["name"] = "ctr"
    s["trigger"]["ctr"] = {"gate": GATE}
    with pytest.raises(SpecError, match=r"trigger.ctr.gate: this algorithm's operators "
                                        r"cannot be gated$"):
        run(s, out=tmp_path)


def test_the_report_weighs_work_skipped_against_results_lost(runs, tmp_path):
    import pandas as pd

    from analysis.gate_section import baseline_variant, paired_changes, section

    frame = pd.DataFrame([{"variant": mode, "seed": 1, **runs[mode].summary}
                          for mode in ("off", "drop", "buffer")])
    assert baseline_variant(frame) == "off"
    changes = paired_changes(frame, "off")
    off, drop = runs["off"].summary, runs["drop"].summary
    assert changes.loc["drop", "work_saved"] == pytest.approx(
        1 - drop["evaluations"] / off["evaluations"])
    assert changes.loc["drop", "results_lost"] == pytest.approx(
        1 - drop["results"] / off["results"]) and changes.loc["drop", "results_lost"] > 0
    assert changes.loc["buffer", "results_lost"] == 0.0
    html = section(frame, [], tmp_path)
    assert "drop: the gate saved" in html and "energy is not modelled" in html
    assert "The claim holds for processing only, at the price of results." in html
    assert section(frame[frame["variant"] == "off"], [], tmp_path) == ""


def test_the_gated_spec_fails_operators_on_aodv_with_batteries():
    """triggers_gated.toml: the failing nodes are the streams' own (the join node's
    upstream operators), on AODV with batteries; gate off, drop and buffer, 5 seeds."""
    import csv

    path = SPEC.parent / "triggers_gated.toml"
    raw = tomllib.loads(path.read_text())
    assert raw["network"]["routing"] == "aodv" and raw["energy"]["model"] == "first_order"
    assert raw["sweep"]["seeds"] == [1, 2, 3, 4, 5]
    assert list(raw["sweep"]["variants"]) == ["off", "drop", "buffer"]
    assert raw["sweep"]["variants"]["off"] == {}
    failures = path.parent / raw["mobility"]["failures"]
    failing = {int(r["u"]) for r in csv.DictReader(failures.read_text().splitlines())}
    assert failing == set(raw["streams"]["nodes"]) and raw["query"]["node"] not in failing
    for mode in ("drop", "buffer"):
        gate = raw["sweep"]["variants"][mode]
        assert gate["trigger.qjoin.gate.upstream"] == "R1"
        assert gate["trigger.qjoin.gate.while_shut"] == mode
