"""ContikiMAC duty cycling under the 802.15.4 MAC (``[mac] duty_cycle = "contikimac"``):
an idle radio is on for its channel checks only, a unicast adds what ContikiMAC's clock
says it adds, a hop waits for its receiver's wake-up, ``none`` is today's MAC, bad input
is one line, and the same seed gives the same run."""
import math

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from emulator import deliver
from emulator.mac.config import mac_from_table, spec_table
from emulator.mac.contikimac import ContikiMac, first_copy
from emulator.mac import kernel as k
from emulator.mac.engine import REASONS, MacEngine, unit_disk_rx_dbm
from emulator.mac.standards import CsmaCa802154
from emulator.radio_energy import PROFILES
from topologies.schema import FieldError

CM = ContikiMac()
STD = CsmaCa802154()
#: A 40-byte payload's airtime (11-byte MHR, 6-byte SHR + PHR: 57 bytes at 250 kbit/s).
AIR = (40 + STD.header_bytes + 6) * 32e-6


def _pair(seed=1, duty=CM):
    return MacEngine(unit_disk_rx_dbm(np.array([[0.0, 0], [1, 0]]), 1.5), STD, seed=seed,
                     duty=duty)


def _one_a_second(engine, count, spacing=1.013):
    """``count`` 40-byte frames 0 -> 1, ``spacing`` s apart (not a multiple of the
    period, so the sender's start sweeps the receiver's phase); their outcomes."""
    for k in range(count):
        engine.enqueue(k * spacing, 0, 1, 40, handle=k)
    return engine.advance(count * spacing + 1.0)


def _line(n):
    g = nx.path_graph(n)
    for e in g.edges:
        g.edges[e].update(cost=1.0, delay=1e-6, bandwidth=250e3)
    for u in g.nodes:
        g.nodes[u]["pos"] = (float(u), 0.0)
    return g


def _msgs(count, spacing=1.013, src=0, dst=1):
    return pd.DataFrame({"msg_id": range(count), "src": src, "dst": dst,
                         "sent_at": 0.5 + np.arange(count) * spacing, "size_bytes": 40})


def test_an_idle_radio_is_on_for_its_channel_checks_only():
    engine = _pair()
    engine.advance(100.0)
    on = engine.radio_seconds()
    expected = 8 * 2 * (192e-6 + 1 / 8192)          # checks x CCAs x (start-up + CCA)
    assert CM.idle_on_fraction() == pytest.approx(expected)
    assert 0.004 <= expected <= 0.008                # Dunkels: off 99.2-99.6 % when idle
    for state in ("tx", "rx"):
        assert on[state].tolist() == [0.0, 0.0]
    assert on["listen"] / 100.0 == pytest.approx([expected, expected], rel=0.01)


def test_a_unicast_a_second_adds_what_contikimacs_clock_says():
    """Per hop, the receiver's radio time (the wait from the CCA that found the train to
    the copy, the copy, the turnaround, the ACK) and the sender's copies are those of
    ContikiMac.unicast averaged over the receiver's phase."""
    count = 400
    engine = _pair(seed=5)
    out = _one_a_second(engine, count)
    assert [REASONS[r] for r in out.reason] == ["delivered"] * count
    got = engine.radio_seconds()
    idle = CM.idle_on_fraction() * engine.now
    phases = np.linspace(0, CM.period, 2000, endpoint=False)
    hops = [CM.unicast(0.0, AIR, p) for p in phases]
    receiver = np.mean([h.receiver.on for h in hops])
    copies_tx = np.mean([h.sender.tx for h in hops])
    added = got["tx"][1] + got["rx"][1] + got["listen"][1] - idle
    assert added / count == pytest.approx(receiver, rel=0.1)
    assert got["rx"][1] == pytest.approx(count * AIR)          # one copy each
    assert got["tx"][0] / count == pytest.approx(copies_tx, rel=0.1)
    # one a second: within the 0.07-1.2 % Dunkels gives for a receiver
    assert 0.0007 < added / engine.now < 0.012


def test_a_hop_waits_for_the_receivers_wake_up():
    """Latency: CSMA's mean backoff, CCA and turnaround, then the train up to the end of
    the copy the receiver takes, averaged over phases: about half a period."""
    count = 400
    engine = _pair(seed=7)
    out = _one_a_second(engine, count)
    latency = out.time - np.arange(count) * 1.013
    csma = (2 ** STD.min_be - 1) / 2 * STD.unit_backoff + STD.cca + STD.turnaround
    timing, step = CM.timing(), AIR + CM.inter_packet
    trains = [first_copy(timing, 0.0, AIR, p, CM.strobe_time)[0] * step + AIR
              for p in np.linspace(0, CM.period, 2000, endpoint=False)]
    expected = csma + np.mean(trains)
    assert latency.mean() == pytest.approx(expected, rel=0.1)
    assert latency.mean() == pytest.approx(CM.period / 2, rel=0.15)
    assert latency.max() < CM.strobe_time + csma + 0.01


def test_a_broadcast_lasts_a_strobe_and_reaches_every_neighbour():
    """Each neighbour has the broadcast at the end of the copy its check takes (not at
    the train's end), and the sender strobes a whole strobe_time."""
    engine = MacEngine(unit_disk_rx_dbm(np.array([[0.0, 0], [1, 0], [-1, 0]]), 1.5), STD,
                       seed=2, duty=CM)
    engine.enqueue(0.0, 0, -1, 40, handle=9)
    out = engine.advance(0.01)
    t0 = engine._nf[0, k.T0]   # the train's start, after CSMA-CA
    out = engine.advance(1.0)
    assert sorted(out.node.tolist()) == [1, 2]
    assert [REASONS[r] for r in out.reason] == ["delivered"] * 2
    step = AIR + CM.inter_packet
    for node, t in zip(out.node.tolist(), out.time.tolist()):
        copy, _ = first_copy(CM.timing(), t0, AIR, engine._nf[node, k.PHASE],
                             t0 + CM.strobe_time)
        assert t == pytest.approx(t0 + copy * step + AIR, abs=1e-9)
    assert out.time[0] != out.time[1]   # seed 2 draws the two phases apart
    assert engine.now > t0 + CM.strobe_time   # the sender strobed on to its end
    got = engine.radio_seconds()
    copies = math.ceil(CM.strobe_time / (AIR + CM.inter_packet))
    assert got["tx"][0] == pytest.approx(copies * AIR)
    assert got["rx"][1:].tolist() == pytest.approx([AIR, AIR])


def test_the_energy_book_takes_the_macs_radio_time():
    """deliver(): states add up to the run at every node, joules are Σ current x
    voltage x time, the radio is on a few per cent of the time (not all of it), and a
    node that only overhears is on for its checks only."""
    out = deliver(_line(3), _msgs(60), medium="shared", seed=1,
                  mac={"model": "802.15.4", "duty_cycle": "contikimac"},
                  energy={"model": "radio_states", "battery_j": 1e6})
    assert not out["lost"].any()
    e = out.attrs["energy"]
    run_s = sum(e["state_s"].values()) / 3
    volts = PROFILES["cc2420"]["voltage_v"]
    joules = sum(e["state_s"][s] * PROFILES["cc2420"][f"{s}_a"] * volts
                 for s in ("tx", "rx", "listen", "idle", "sleep"))
    assert e["total_j"] == pytest.approx(joules, rel=1e-9)
    assert e["state_s"]["sleep"] > 0.9 * 3 * run_s
    assert 0.004 < e["radio_on_fraction_mean"] < 0.05
    # node 2 hears nothing it must take: checks only
    spent2 = 1e6 - e["residual_j"]["2"]
    watts = {s: PROFILES["cc2420"][f"{s}_a"] * volts for s in ("listen", "sleep")}
    c = CM.idle_on_fraction()
    assert spent2 == pytest.approx(run_s * (c * watts["listen"] + (1 - c) * watts["sleep"]),
                                   rel=1e-6)   # the battery's 1e6 J: rounding
    always_on = deliver(_line(3), _msgs(60), medium="shared", seed=1,
                        mac={"model": "802.15.4"},
                        energy={"model": "radio_states", "battery_j": 1e6})
    assert always_on.attrs["energy"]["radio_on_fraction_mean"] == pytest.approx(1.0)
    assert e["total_j"] < 0.1 * always_on.attrs["energy"]["total_j"]


def test_none_is_todays_802154_bit_for_bit():
    msgs = _msgs(30, spacing=0.05)
    today = deliver(_line(3), msgs, medium="shared", seed=4, mac={"model": "802.15.4"},
                    energy={"model": "radio_states"})
    none = deliver(_line(3), msgs, medium="shared", seed=4,
                   mac={"model": "802.15.4", "duty_cycle": "none",
                        "channel_check_rate_hz": 16},
                   energy={"model": "radio_states"})
    pd.testing.assert_frame_equal(today, none)
    assert today.attrs["energy"] == none.attrs["energy"]
    assert _pair(duty=None).radio_seconds() is None


def test_same_seed_same_run_and_the_seed_draws_the_phases():
    def once(seed):
        engine = _pair(seed=seed)
        out = _one_a_second(engine, 20)
        return out.time.tolist(), engine.radio_seconds()["listen"].tolist()

    assert once(3) == once(3)
    assert once(3)[0] != once(4)[0]


@pytest.mark.parametrize("table, message", [
    ({"model": "802.11", "duty_cycle": "contikimac"},
     'mac.duty_cycle: a key of model "802.15.4", not of "802.11"'),
    ({"model": "ideal", "duty_cycle": "contikimac"},
     'mac.duty_cycle: duty cycling needs model = "802.15.4", got model "ideal"'),
    ({"model": "802.15.4", "duty_cycle": "xmac"},
     "mac.duty_cycle: expected one of none, contikimac, got 'xmac'"),
    ({"model": "802.15.4", "duty_cycle": "contikimac", "channel_check_rate_hz": 0},
     "mac.channel_check_rate_hz: expected a number > 0, got 0"),
    ({"model": "802.15.4", "duty_cycle": "contikimac", "channel_check_rate_hz": -8},
     "mac.channel_check_rate_hz: expected a number > 0, got -8"),
    ({"model": "802.15.4", "duty_cycle": "contikimac", "channel_check_rate_hz": 1000},
     "mac.channel_check_rate_hz: expected a period longer than a channel check"),
    ({"model": "802.15.4", "duty_cycle": "contikimac", "phase_lock": 1},
     "mac.phase_lock: expected"),
    ({"model": "802.15.4", "duty_cycle": "contikimac", "csma_max_mac_transmissions": -1},
     "mac.csma_max_mac_transmissions: expected"),
    ({"model": "802.15.4", "duty_cycle": "contikimac", "fast_sleep": "yes"},
     "mac.fast_sleep: expected"),
])
def test_bad_duty_cycle_input_is_one_line_naming_the_field(table, message):
    with pytest.raises(FieldError) as err:
        spec_table(table)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_the_table_gives_contikimacs_timing():
    mac = mac_from_table({"model": "802.15.4", "duty_cycle": "contikimac",
                          "channel_check_rate_hz": 16})
    assert mac.duty.channel_check_rate_hz == 16.0 and mac.duty.period == 0.0625
    assert mac_from_table({"model": "802.15.4"}).duty is None


def test_a_spec_runs_duty_cycled_and_every_nodes_states_add_up_to_the_run(tmp_path):
    """A runner run (16 nodes, the oracle's routes, the shared medium): per node, the
    radio's seconds by state sum to the run, the radios sleep most of it, and joules
    are Σ current x voltage x time."""
    from experiments.runner import run
    from tests.test_energy import smoke

    spec = smoke(battery=10.0)
    spec["energy"].pop("idle_w")
    spec["energy"]["model"] = "radio_states"
    spec["network"]["medium"] = "shared"
    spec["mac"] = {"model": "802.15.4", "duty_cycle": "contikimac"}
    out = run(spec, out=tmp_path)
    end = max(out.metrics.time)
    states = out.metrics[out.metrics.metric.str.startswith("radio_")]
    last = states[states.time == end].pivot(index="node", columns="metric", values="value")
    assert len(last) == 16
    assert (last.sum(axis=1) - end).abs().max() < 1e-9
    assert (last["radio_sleep_s"] > 0.5 * end).all()
    on = (last.radio_tx_s + last.radio_rx_s + last.radio_listen_s) / end
    assert (on >= CM.idle_on_fraction() * (1 - 1e-9)).all()
    assert out.summary["radio_on_fraction_mean"] == pytest.approx(on.mean())
    assert out.summary["radio_on_fraction_mean"] < 0.5


def test_a_specs_bad_duty_cycle_is_one_line_naming_file_and_field():
    from experiments.spec import SpecError, resolve

    with pytest.raises(SpecError, match=r'^s.toml: mac.duty_cycle: a key of model '
                                        r'"802.15.4", not of "802.11"$'):
        resolve({"network": {"medium": "shared"},
                 "mac": {"model": "802.11", "duty_cycle": "contikimac"}}, "s.toml")
    with pytest.raises(SpecError, match=r"^s.toml: mac.channel_check_rate_hz: expected a "
                                        r"number > 0, got 0$"):
        resolve({"network": {"medium": "shared"},
                 "mac": {"model": "802.15.4", "duty_cycle": "contikimac",
                         "channel_check_rate_hz": 0}}, "s.toml")


def test_a_receiver_that_cannot_hear_the_train_is_never_woken_and_the_sender_strobes_on():
    """To a node out of range: every attempt strobes a full ``strobe_time``, no ACK
    comes, the frame is dropped at the retry limit, and the receiver's radio pays
    nothing but its checks."""
    engine = MacEngine(unit_disk_rx_dbm(np.array([[0.0, 0], [5, 0]]), 1.5,
                                        carrier_sense_radius=1.5), STD, seed=1, duty=CM)
    engine.enqueue(0.0, 0, 1, 40, handle=3)
    out = engine.advance(2.0)
    assert [REASONS[r] for r in out.reason] == ["retry_limit"]
    attempts = STD.max_frame_retries + 1
    assert out.attempts.tolist() == [attempts]
    copies = math.ceil(CM.strobe_time / (AIR + CM.inter_packet))
    got = engine.radio_seconds()
    assert got["tx"].tolist() == pytest.approx([attempts * copies * AIR, 0.0])
    assert got["rx"][1] == 0.0
    assert got["listen"][1] == pytest.approx(CM.idle_on_fraction() * engine.now)
    assert out.time[0] > attempts * CM.strobe_time
