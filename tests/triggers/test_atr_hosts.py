"""ATR's hosts as siblings (source 001, Fig. 7): windows of their own, windows fired by
a sibling's signal, and a gate on the diffusion node or on a sibling host."""
import dataclasses

import numpy as np
import pytest

from experiments.spec import SpecError
from spark_nodes.algorithms import registry
from spark_nodes.algorithms.triggers.spec import trigger_spec
from tests.ctr.ctr_harness import make_plan, make_streams, run_plan
from topologies import Topology, random_geometric

TOPO = random_geometric(16, 0.45, seed=3, defaults={"delay": 0.01, "jitter": 0.01})
LOSSY = random_geometric(16, 0.45, seed=3, defaults={"delay": 0.01, "jitter": 0.01,
                                                      "loss": 0.05})
NAMES, NODES = ["R1", "R2", "R3"], [3, 7, 11]


def lossy_around(node: int, loss: float) -> Topology:
    """TOPO with ``loss`` on the links of ``node`` only."""
    graph = TOPO.graph.copy()
    for u, v in graph.edges(node):
        graph.edges[u, v]["loss"] = loss
    return Topology(graph, defaults=TOPO.defaults, radius=TOPO.radius,
                    link_cost=TOPO.link_cost)
ATR = registry.ALGORITHMS.get("atr")


def atr_plan(table: dict | None, topo=TOPO, seed: int = 1):
    """ATR over three streams, 4 hosts, 2-unit segments, with ``[trigger.atr] = table``
    (its gate's upstream resolved as the planner does)."""
    plan = make_plan("atr", dict(slack=0.6, hosts=4, segment=2.0), topo, NODES, [1.0] * 3,
                     duration=9.0, seed=seed)
    trigger = trigger_spec(table, "trigger.atr", NAMES, places=ATR.trigger_places)
    operators = ATR.gate_operators(dict(plan.stream_nodes), plan.query.node, net0=plan.net0,
                                   params=plan.params, seed=plan.seed)
    return dataclasses.replace(plan, trigger=trigger.resolved_gate("trigger.atr.gate",
                                                                   operators))


def windows(*conditions, signal="network") -> dict:
    return {"use": "w", "signal": signal, "w": {"conditions": list(conditions)}}


def tuples(seed: int = 1) -> dict:
    return make_streams(np.random.default_rng(seed), NAMES, NODES, [3.0] * 3, 6.0,
                        key_domain=3, disorder=0.2)


def execute(plan, seed: int = 1):
    out, expected, run = run_plan(plan, tuples(seed))
    return out, expected, ATR.summarize(plan, run)


def latency(out) -> float:
    r = out.results
    return float((r.emitted_at - r.last_entered).mean())


def rows(out, metric: str):
    m = out.metrics
    return m[m.metric == metric]


def test_host_windows_hold_tuples_and_keep_the_exact_answer():
    base, expected, plain = execute(atr_plan(None))
    out, _, held = execute(atr_plan(windows({"kind": "time", "above": 1.0, "at": "hosts"})))
    assert set(out.results["group"]) == set(base.results["group"]) == expected
    # every tuple a host received is joined once, on its window: later, by up to a unit
    assert held["evaluations"] == sum(base.metrics.metric.str.startswith("copies:") *
                                      base.metrics.value)
    assert held["evaluations_skipped"] == 0 and np.isnan(held["gate_closed_time"])
    assert held["host_windows"] >= 4 * 5 and held["host_windows_by_sibling"] == 0
    assert 0 < latency(out) - latency(base) <= 1.0
    # without a trigger the hosts join the same tuples, at once
    assert plain["evaluations"] == held["evaluations"] and plain["host_windows"] == 0
    assert np.isnan(plain["gate_closed_time"])


def test_a_sibling_fires_the_other_hosts_windows_free_at_once():
    plan = atr_plan(windows({"kind": "count", "above": 6, "at": "siblings"}, signal="free"))
    out, expected, s = execute(plan)
    assert set(out.results["group"]) == expected
    sent, fired = rows(out, "sibling_signal:count"), rows(out, "host_window:sibling")
    hosts = plan.params["host_nodes"] or tuple(int(h) for h in s["host_nodes"].split(","))
    assert len(sent) > 0 and s["sibling_signals"] == len(sent)
    # a signal fires a window at every other host, at the instant it is sent (free)
    assert s["host_windows_by_sibling"] == len(fired) == len(sent) * (len(hosts) - 1)
    for t, senders in sent.groupby("time").node:
        at_once = fired[np.isclose(fired.time, t)]
        assert sorted(at_once.node) == sorted(h for u in senders for h in hosts if h != u)
    assert s["host_windows"] == 0                # no host fires its own window


def test_a_sibling_signal_crosses_the_network():
    out, _, s = execute(atr_plan(windows({"kind": "count", "above": 6, "at": "siblings"})))
    signals = out.ledger[out.ledger.kind == "trigger"]
    first_hops = signals.drop_duplicates("msg_id")
    assert len(first_hops) == s["sibling_signals"] * 3 and s["host_windows_by_sibling"] > 0
    # a window fires at a host no earlier than the signal's last hop reached it
    fired = rows(out, "host_window:sibling")
    first_arrival = signals.groupby("msg_id").time.max().min()
    assert fired.time.min() >= first_arrival - 1e-9


def test_a_gate_on_the_diffusion_node_drops_while_its_parts_are_lost():
    plain_out, expected, plain = execute(atr_plan(None, LOSSY))
    gate = {"upstream": "diffusion", "exception_rate_below": 1.0, "interval": 1.0}
    runs = {mode: execute(atr_plan({"gate": dict(gate, while_shut=mode)}, LOSSY))
            for mode in ("drop", "buffer")}
    diffusion = plain["diffusion_node"]
    for mode, (out, _, s) in runs.items():
        reports = out.ledger[out.ledger.kind == "gate_exception"].drop_duplicates("msg_id")
        assert len(reports) > 0 and set(reports.src) == {diffusion}
        assert s["gate_closed_time"] > 0
        # what reached the hosts was joined or skipped; some parts were lost on the way
        arrived = s["evaluations"] + s["evaluations_skipped"]
        sent = out.metrics.loc[out.metrics.metric.str.startswith("copies:"), "value"].sum()
        assert 0.5 * sent < arrived < sent
    (drop_out, _, drop), (_, _, buffer) = runs["drop"], runs["buffer"]
    assert drop["evaluations_skipped"] > 0 and len(drop_out.results) < len(plain_out.results)
    assert drop["host_probes_total"] < plain["host_probes_total"]
    assert buffer["evaluations_skipped"] == 0


def test_a_gate_on_one_host_stands_at_its_siblings():
    hosts = list(atr_plan(None).params.get("host_nodes") or
                 execute(atr_plan(None))[2]["host_nodes"].split(","))
    watched = int(hosts[0])
    hosts = [int(h) for h in hosts]
    # the watched host's own sends are lost now and then: its exceptions
    plan = atr_plan({"gate": {"upstream": "host0", "exception_rate_below": 0.5,
                              "while_shut": "drop"}}, lossy_around(watched, 0.3))
    out, _, s = execute(plan)
    closed = rows(out, "gate_closed_time")
    assert sorted(closed.node) == sorted(h for h in hosts if h != watched)
    assert s["evaluations_skipped"] > 0 and s["gate_closed_time"] > 0
    # the watched host reports its own lost sends; the diffusion node its lost parts
    # for the watched host (the links around it are lossy both ways)
    reports = out.ledger[out.ledger.kind == "gate_exception"]
    assert set(reports.src) == {watched, s["diffusion_node"]}


@pytest.mark.parametrize("table, message", [
    ({"gate": {"upstream": "R1", "exception_rate_below": 1.0}},
     r"trigger.atr.gate.upstream: 'R1' is not an operator upstream of the gated one; "
     r"valid: diffusion \(node \d+\), host0 \(node \d+\)"),
    (windows({"kind": "time", "above": 1.0, "at": "elsewhere"}),
     r"trigger.atr.w.conditions\[0\].at: expected one of here, sources, hosts, siblings"),
])
def test_bad_host_triggers_name_the_field(table, message):
    with pytest.raises(ValueError, match=message):
        atr_plan(table)


def test_silence_needs_the_diffusion_node_as_upstream():
    plan = atr_plan({"gate": {"upstream": "host1", "exception_rate_below": 1.0,
                              "silence": 1.0}})
    with pytest.raises(ValueError, match=r"^trigger.atr.gate.silence: a host hears only "
                                         r"from the diffusion node"):
        ATR.programs(plan)


@pytest.mark.parametrize("algorithm", ["qjoin", "ctr"])
def test_only_atr_measures_at_hosts(tmp_path, algorithm):
    from experiments.runner import run

    from .test_gate import spec

    s = spec()
    s["algorithm"]["name"] = algorithm
    s["trigger"][algorithm] = windows({"kind": "time", "above": 1.0, "at": "siblings"})
    with pytest.raises(SpecError, match=rf"trigger.{algorithm}.w.conditions\[0\].at: a "
                                        r"time condition cannot be measured at 'siblings'"):
        run(s, out=tmp_path)


def test_the_gated_atr_spec_gates_the_siblings_of_a_failing_host(tmp_path):
    """triggers_gated_atr.toml's drop variant over its first 30 time units: host0 (node
    3) is down at 15-25, so its siblings' gates shut and drop what arrives."""
    import tomllib
    from pathlib import Path

    from experiments.runner import run

    path = Path(__file__).resolve().parents[2] / "experiments/specs/triggers_gated_atr.toml"
    raw = tomllib.loads(path.read_text())
    assert list(raw["sweep"]["variants"]) == ["off", "drop", "buffer"]
    drop = raw["sweep"].pop("variants")["drop"]
    raw.pop("sweep")
    raw["trigger"]["atr"]["gate"] = {k.rsplit(".", 1)[1]: v for k, v in drop.items()}
    raw["run"]["duration"] = 30.0
    raw["mobility"]["failures"] = str(path.parent / raw["mobility"]["failures"])
    out = run(raw, out=tmp_path)
    s = out.summary
    assert s["host_nodes"] == "3,7,18,22" and s["diffusion_node"] == 1
    assert s["gate_closed_time"] > 0 and s["evaluations_skipped"] > 0
    closed = out.metrics[out.metrics.metric == "gate_closed_time"]
    assert sorted(closed.node) == [7, 18, 22]
    reports = out.ledger[out.ledger.kind == "gate_exception"]
    assert set(reports.src) <= {1, 3} and len(reports) > 0
