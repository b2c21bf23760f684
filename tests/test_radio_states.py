"""Energy by radio state (``[energy] model = "radio_states"``, emulator.radio_energy):
the time in each state adds up to the run at every node, the joules are Σ current ×
voltage × time, an always-on radio's lifetime is its battery over the listening power,
and the summary, metrics and warnings say so."""
import json

import networkx as nx
import pandas as pd
import pytest

from analysis.energy_section import radio_on_share
from analysis.report import write_report
from emulator import deliver
from emulator.energy import Energy, EnergyBook
from emulator.radio_energy import PROFILES, STATES, RadioPower
from experiments.runner import run
from experiments.store import Run
from experiments.spec import SpecError, resolve as resolve_spec, run_id
from tests.test_energy import smoke

CC2420 = PROFILES["cc2420"]


def radio_run(**energy) -> dict:
    spec = smoke(**energy)
    table = spec["energy"]
    for key in ("idle_w",):      # a first-order key: warned under radio_states
        table.pop(key)
    table["model"] = "radio_states"
    return spec


def test_a_frame_costs_its_airtime_at_the_sending_and_receiving_currents():
    book = EnergyBook(Energy(model="radio_states", battery_j=10.0), [0, 1, 2])
    book.hop(0, 1, 100, 0.0, True)
    air = 8 * 100 / 250e3 + 192e-6                      # 3.392 ms
    volts = CC2420["voltage_v"]
    t = 1.0
    # node 0 sent, node 1 received, node 2 only listened
    assert book.spent(0, t) == pytest.approx(volts * (CC2420["tx_a"] * air
                                                      + CC2420["listen_a"] * (t - air)))
    assert book.spent(1, t) == pytest.approx(volts * (CC2420["rx_a"] * air
                                                      + CC2420["listen_a"] * (t - air)))
    assert book.spent(2, t) == pytest.approx(volts * CC2420["listen_a"] * t)
    assert book.state_seconds(0, t)["tx"] == pytest.approx(air)


def test_an_always_on_radios_lifetime_is_its_battery_over_the_listening_power():
    battery = 0.5
    book = EnergyBook(Energy(model="radio_states", battery_j=battery), [0, 1], mains=[0])
    listening = CC2420["voltage_v"] * CC2420["listen_a"]           # 56.4 mW
    assert book.next_empty() == pytest.approx(battery / listening, rel=1e-9)   # 8.87 s
    lifetime = battery / listening
    assert book.check(lifetime * 0.99) == [] and book.check(lifetime * 1.01) == [1]


def test_each_value_of_a_profile_can_be_overridden():
    power = RadioPower.of(Energy(model="radio_states", profile="wifi", tx_a=0.5,
                                 voltage_v=3.3, bitrate_bps=2e6))
    assert power.watts["tx"] == pytest.approx(0.5 * 3.3)
    assert power.watts["rx"] == pytest.approx(PROFILES["wifi"]["rx_a"] * 3.3)
    assert power.airtime(250) == pytest.approx(8 * 250 / 2e6 + 192e-6)


def test_states_add_up_to_the_run_at_every_node_and_joules_to_current_times_voltage(
        tmp_path):
    out = run(radio_run(battery=0.2, sources_mains=True), out=tmp_path)
    info = json.loads((out.path / "meta.json").read_text())["backend_info"]["energy"]
    end = max(out.metrics.time)
    states = out.metrics[out.metrics.metric.str.startswith("radio_")]
    last = states[states.time == end].pivot(index="node", columns="metric", values="value")
    assert sorted(last.columns) == sorted(f"radio_{s}_s" for s in STATES)
    assert len(last) == 16
    assert (last.sum(axis=1) - end).abs().max() < 1e-9          # one second per unit
    volts = CC2420["voltage_v"]
    joules = sum(last[f"radio_{s}_s"].sum() * CC2420[f"{s}_a"] * volts
                 for s in ("tx", "rx", "listen", "idle", "sleep"))
    cpu = info["by_kind_j"]["cpu"]
    assert info["total_j"] == pytest.approx(joules + cpu, rel=1e-9)
    assert last["radio_tx_s"].sum() > 0 and last["radio_rx_s"].sum() > 0
    assert info["state_s"]["tx"] == pytest.approx(last["radio_tx_s"].sum())
    # 56.4 mW of listening empties 0.2 J in 3.55 s (receiving, a little sooner); the
    # batteries are looked at every step (0.1): a dead radio is off from then on
    s = out.summary
    lifetime = 0.2 / (volts * CC2420["listen_a"])
    assert s["nodes_dead_at_end"] > 0
    assert 0.95 * lifetime < s["first_node_death"] <= lifetime + 0.1 + 1e-9
    dead = [int(n) for n in info["deaths"]]
    assert (last.loc[dead, "radio_off_s"] > 0).all()
    on = (last.radio_tx_s + last.radio_rx_s + last.radio_listen_s) / end
    assert s["radio_on_fraction_mean"] == pytest.approx(on.mean())
    assert s["radio_on_fraction_max"] == pytest.approx(1.0)    # the mains-powered nodes
    # the report colours the topology by the same shares
    drawn = radio_on_share(Run(out.path))
    assert drawn == pytest.approx(on.to_dict(), abs=1e-9)
    report = write_report(out.path)
    assert (report.parent / "figures" / "energy_radio_on_topology.png").stat().st_size > 1000
    assert "Radio on per node over the run" in report.read_text()


def test_listening_costs_what_receiving_costs_so_lifetime_no_longer_follows_traffic(
        tmp_path):
    """The first-order model with idle listening free gives relays the shortest lives;
    with a listening CC2420, every battery node dies within a few per cent of the same
    time, traffic or not."""
    out = run(radio_run(battery=0.2, sources_mains=True), out=tmp_path)
    deaths = sorted(json.loads((out.path / "meta.json").read_text())
                    ["backend_info"]["energy"]["deaths"].values())
    assert deaths[-1] / deaths[0] < 1.1


def test_deliver_takes_radio_states_too():
    g = nx.path_graph(3)
    for e in g.edges:
        g.edges[e].update(cost=1.0, delay=0.01, bandwidth=1e5)
    msgs = pd.DataFrame({"msg_id": [0], "src": [0], "dst": [2], "sent_at": [0.5],
                         "size_bytes": [100]})
    out = deliver(g, msgs, energy={"model": "radio_states", "profile": "cc2538",
                                   "battery_j": 100.0})
    e = out.attrs["energy"]
    air = 8 * 100 / 250e3 + 192e-6
    watts = {k: PROFILES["cc2538"][f"{k}_a"] * 3.0 for k in ("tx", "rx")}
    assert e["state_s"]["tx"] == pytest.approx(2 * air)     # 0 -> 1 -> 2
    assert e["by_kind_j"]["tx"] == pytest.approx(2 * air * watts["tx"])
    assert e["by_kind_j"]["rx"] == pytest.approx(2 * air * watts["rx"])
    assert e["profile"] == "cc2538"


@pytest.mark.parametrize("energy, field", [
    ({"model": "radio_states", "profile": "cc9999"}, "energy.profile"),
    ({"model": "radio_states", "rx_a": -0.01}, "energy.rx_a"),
    ({"model": "radio_states", "voltage_v": 0}, "energy.voltage_v"),
    ({"model": "radio_states", "bitrate_bps": 0}, "energy.bitrate_bps"),
])
def test_bad_radio_states_input_is_one_line_naming_the_field(energy, field):
    with pytest.raises(SpecError) as err:
        resolve_spec({"energy": energy}, "s.toml")
    assert str(err.value).startswith(f"s.toml: {field}: ") and "\n" not in str(err.value)


def test_a_first_order_specs_id_is_unchanged_by_the_new_keys():
    spec = resolve_spec({"run": {"name": "e"}, "energy": {"model": "first_order"}})
    assert spec["energy"]["profile"] == "cc2420" and spec["energy"]["tx_a"] is None
    hashed = {**spec, "energy": {k: v for k, v in spec["energy"].items()
                                 if k not in ("profile", *PROFILES["cc2420"])}}
    assert run_id(spec) == run_id(hashed)
