"""Batteries that run out (emulator.energy): what each node spends on sending, receiving,
listening and work, and the deaths that follow, in runs and in deliver()."""
import json
import math

import networkx as nx
import pandas as pd
import pytest

from emulator import deliver
from emulator.energy import Energy, EnergyBook
from experiments.runner import run
from experiments.spec import SpecError, resolve as resolve_spec

E_ELEC, E_AMP, E_RX = 50e-9, 100e-12, 50e-9


def placed_line(n: int, spacing_m: float, delay: float = 0.01) -> nx.Graph:
    """Nodes 0..n-1 on a line ``spacing_m`` apart (positions in metres)."""
    g = nx.path_graph(n)
    for u in g.nodes:
        g.nodes[u]["pos"] = (u * spacing_m, 0.0)
    for e in g.edges:
        g.edges[e].update(cost=1.0, delay=delay, bandwidth=1e5)
    return g


def diamond() -> nx.Graph:
    """0 reaches 3 through 1 (cheap) or 2 (dear), all links 50 m."""
    g = nx.Graph()
    for u, pos in {0: (0, 0), 1: (30, 40), 2: (30, -40), 3: (60, 0)}.items():
        g.add_node(u, pos=pos)
    g.add_edge(0, 1, cost=1.0)
    g.add_edge(1, 3, cost=1.0)
    g.add_edge(0, 2, cost=2.0)
    g.add_edge(2, 3, cost=2.0)
    for e in g.edges:
        g.edges[e].update(delay=0.01, bandwidth=1e5)
    return g


def messages(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["msg_id", "src", "dst", "sent_at", "size_bytes"])


# -- the first-order radio model -------------------------------------------------------
def test_a_hop_costs_its_sender_the_electronics_and_the_amplifier_and_its_receiver_rx():
    out = deliver(placed_line(3, 40.0), messages([(0, 0, 2, 0.0, 100)]),
                  energy={"model": "first_order", "battery_j": 1.0})
    spent = out.attrs["energy"]
    bits = 800
    hop_tx = bits * (E_ELEC + E_AMP * 40.0 ** 2)
    assert spent["by_kind_j"]["tx"] == pytest.approx(2 * hop_tx)
    assert spent["by_kind_j"]["rx"] == pytest.approx(2 * bits * E_RX)
    # the relay both received and sent: its battery holds what is left
    assert spent["residual_j"]["1"] == pytest.approx(1.0 - hop_tx - bits * E_RX)
    assert spent["nodes_dead_at_end"] == 0 and math.isnan(spent["first_node_death"])


def test_the_amplifier_term_grows_with_the_square_of_the_distance():
    near = deliver(placed_line(2, 10.0), messages([(0, 0, 1, 0.0, 100)]),
                   energy={"model": "first_order"}).attrs["energy"]["by_kind_j"]["tx"]
    far = deliver(placed_line(2, 100.0), messages([(0, 0, 1, 0.0, 100)]),
                  energy={"model": "first_order"}).attrs["energy"]["by_kind_j"]["tx"]
    amp = lambda d: 800 * E_AMP * d * d
    assert far - near == pytest.approx(amp(100.0) - amp(10.0))


def test_listening_drains_a_battery_to_a_death_at_battery_over_power():
    book = EnergyBook(Energy(battery_j=2.0, idle_w=0.5), [0, 1], mains=[0])
    assert book.next_empty() == pytest.approx(4.0)
    assert book.check(3.9) == [] and book.check(4.0) == [1]
    assert book.residual(1, 10.0) == 0.0 and book.idle(1, 10.0) == pytest.approx(2.0)


# -- deaths in the network -------------------------------------------------------------
def test_the_oracle_routes_around_a_relay_whose_battery_ran_out():
    # every message 0 -> 3 crosses the cheap relay 1 until its battery is empty
    msgs = messages([(i, 0, 3, 0.1 * i, 1000) for i in range(40)])
    out = deliver(diamond(), msgs, energy={"model": "first_order", "battery_j": 0.005,
                                           "batteries": {"2": 1.0}, "mains_powered": [0, 3]},
                  energy_step=0.01)
    e = out.attrs["energy"]
    assert list(e["deaths"]) == ["1"]
    died = e["deaths"]["1"]
    # 1 pays rx + tx per message: 8000 bits x (50 n + (50 n + 0.1 n x 50^2)) = 2.8 mJ,
    # so the second message (sent at 0.1, at 1 from 0.12: 10 ms on the air, 10 ms
    # delay) empties it when 1 sends it on, and the look at the next step finds it so
    per_message = 8000 * (E_ELEC + E_AMP * 50.0 ** 2 + E_RX)
    assert math.ceil(0.005 / per_message) == 2 and 0.12 < died <= 0.13 + 1e-9
    assert not out.lost.any()   # the oracle knows at once: the dear way through 2
    assert e["residual_j"]["2"] == pytest.approx(1.0 - 38 * per_message)
    assert e["residual_j"]["1"] == 0.0


def test_aodv_learns_of_a_dead_relay_by_messages_and_repairs():
    msgs = messages([(i, 0, 3, 0.2 * i, 1000) for i in range(60)])
    energy = {"model": "first_order", "battery_j": 0.012, "batteries": {"2": 10.0},
              "mains_powered": [0, 3]}
    out = deliver(diamond(), msgs, routing="aodv", energy=energy, energy_step=0.01)
    e = out.attrs["energy"]
    assert "1" in e["deaths"]
    died = e["deaths"]["1"]
    lost_after = out[(out.lost) & (out.msg_id * 0.2 >= died)]
    # the first packets after the death are lost (AODV did not know), later ones go via 2
    assert len(lost_after) >= 1
    assert not out[out.msg_id * 0.2 > died + 5].lost.any()
    assert out.attrs["routing"]["control_sent"].get("RERR", 0) + \
        out.attrs["routing"]["control_sent"].get("RREQ", 0) > 0


def test_a_dead_node_neither_sends_nor_receives_and_its_tuples_are_dropped(tmp_path):
    out = run(smoke(battery=0.0025, idle=0.0005), out=tmp_path)
    deaths = json.loads((out.path / "meta.json").read_text())["backend_info"]["energy"]["deaths"]
    assert deaths and out.summary["nodes_dead_at_end"] == len(deaths)
    assert out.summary["first_node_death"] == pytest.approx(min(deaths.values()))
    for node, t in deaths.items():
        sent_after = out.ledger[(out.ledger.hop_u == int(node)) & (out.ledger.time >= t)]
        assert sent_after.empty, f"node {node} sent after its death at {t}"
    dropped = json.loads((out.path / "meta.json").read_text())["backend_info"]["dropped"]
    assert dropped.get("tuples_at_dead_node", 0) > 0


# -- runs --------------------------------------------------------------------------------
def smoke(battery: float = 0.05, idle: float = 0.0005, routing: str = "oracle",
          **energy) -> dict:
    return {"run": {"name": "energy", "duration": 6.0, "step": 0.1, "seed": 3},
            "topology": {"generator": "random_geometric", "nodes": 16, "radius": 0.4,
                         "delay": 0.1, "link_cost": "distance"},
            "streams": {"count": 2, "rate": 4.0, "key_domain": 5},
            "query": {"node": 0, "window": 1.0},
            "network": {"routing": routing},
            "energy": {"model": "first_order", "battery_j": battery, "idle_w": idle,
                       "cpu_j_per_tuple": 1e-5, **energy}}


def test_a_run_reports_energy_and_residual_energy_per_node(tmp_path):
    out = run(smoke(), out=tmp_path)
    s = out.summary
    info = json.loads((out.path / "meta.json").read_text())["backend_info"]["energy"]
    assert s["energy_total_j"] == pytest.approx(info["total_j"]) and s["energy_total_j"] > 0
    assert s["energy_per_result_j"] == pytest.approx(s["energy_total_j"] / s["results"])
    assert math.isnan(s["first_node_death"]) and s["nodes_dead_at_end"] == 0
    # idle: 16 nodes listening 0.5 mW over the run and its drain (12 time units)
    assert info["by_kind_j"]["idle"] == pytest.approx(16 * 0.0005 * 12.0)
    assert info["by_kind_j"]["cpu"] > 0 and info["by_kind_j"]["tx"] > 0
    energy = out.metrics[out.metrics.metric == "energy_j"]
    assert set(energy.source) == {"network"} and 0 not in set(energy.node)   # 0 is mains
    for node, rows in energy.groupby("node"):
        values = rows.sort_values("time").value.to_numpy()
        assert values[0] == pytest.approx(0.05) and (values[1:] <= values[:-1]).all()
        assert values[-1] == pytest.approx(info["residual_j"][str(node)], abs=0.0005 * 1.0)


def test_same_seed_same_energy_and_deaths(tmp_path):
    first = run(smoke(battery=0.004, routing="aodv"), out=tmp_path / "a")
    again = run(smoke(battery=0.004, routing="aodv"), out=tmp_path / "b")
    pd.testing.assert_frame_equal(first.ledger, again.ledger)
    pd.testing.assert_frame_equal(first.metrics, again.metrics)
    assert first.summary["first_node_death"] == again.summary["first_node_death"]
    assert first.summary["nodes_dead_at_end"] > 0


def test_model_none_is_the_run_without_an_energy_table(tmp_path):
    spec = smoke()
    spec["energy"] = {"model": "none", "battery_j": 3.0}
    with_none = run(spec, out=tmp_path / "a")
    del spec["energy"]
    without = run(spec, out=tmp_path / "b")
    pd.testing.assert_frame_equal(with_none.ledger, without.ledger)
    pd.testing.assert_frame_equal(with_none.results, without.results)
    assert "energy_total_j" not in with_none.summary


@pytest.mark.parametrize("energy, backend, field", [
    ({"model": "first_order", "battery_j": 0}, "simpy", "energy.battery_j"),
    ({"model": "first_order", "battery_j": -1}, "simpy", "energy.battery_j"),
    ({"model": "first_order", "e_amp_j_per_bit_m2": -1e-12}, "simpy",
     "energy.e_amp_j_per_bit_m2"),
    ({"model": "first_order", "idle_w": -0.1}, "simpy", "energy.idle_w"),
    ({"model": "battery"}, "simpy", "energy.model"),
    ({"model": "first_order"}, "mininet", "energy.model"),
])
def test_bad_energy_input_is_one_line_naming_the_field(energy, backend, field):
    with pytest.raises(SpecError) as err:
        resolve_spec({"run": {"backend": backend}, "energy": energy}, "s.toml")
    assert str(err.value).startswith(f"s.toml: {field}: ") and "\n" not in str(err.value)


@pytest.mark.parametrize("energy, field", [
    ({"batteries": {"99": 1.0}}, "energy.batteries"),
    ({"batteries": {"3": 0}}, "energy.batteries.3"),
    ({"mains_powered": [99]}, "energy.mains_powered"),
])
def test_energy_naming_nodes_the_topology_lacks_is_refused(tmp_path, energy, field):
    spec = smoke(**energy)
    with pytest.raises(SpecError) as err:
        run(spec, out=tmp_path)
    assert str(err.value).startswith(f"<spec>: {field}: ")


def test_the_amplifier_needs_positions(tmp_path):
    spec = smoke()
    spec["topology"] = {"generator": "complete", "nodes": 4, "delay": 0.1}
    with pytest.raises(SpecError, match="energy.e_amp_j_per_bit_m2: needs node positions"):
        run(spec, out=tmp_path)
    spec["energy"]["e_amp_j_per_bit_m2"] = 0.0
    assert run(spec, out=tmp_path).summary["energy_total_j"] > 0


def test_sources_on_mains_leave_only_relays_and_hosts_to_die(tmp_path):
    out = run(smoke(battery=0.0025, sources_mains=True), out=tmp_path)
    meta = json.loads((out.path / "meta.json").read_text())
    sources = set(meta["stream_nodes"].values())
    mains = set(meta["backend_info"]["energy"]["mains_powered"])
    assert len(sources) == 2 and mains == sources | {0}   # the sources and the query node
    assert not mains & {int(n) for n in meta["backend_info"]["energy"]["deaths"]}
    assert out.summary["nodes_dead_at_end"] == 16 - len(mains)
