"""ContikiMAC's options under the 802.15.4 MAC: the phase lock (a sender learns each
neighbour's wake-up from its ACKs), fast sleep for radios woken by trains not meant for
them (``overhearing``), and Contiki's csma.c requeue of frames that found the channel
busy. Expected figures come from the timing constants."""
import dataclasses
import math

import numpy as np
import pytest

from emulator.mac import kernel as k
from emulator.mac.config import mac_from_table
from emulator.mac.contikimac import ContikiMac, caught
from emulator.mac.engine import REASONS, MacEngine, unit_disk_rx_dbm
from emulator.mac.standards import CsmaCa802154

CM = ContikiMac()
STD = CsmaCa802154()
AIR = (40 + STD.header_bytes + 6) * 32e-6          # a 40-byte payload's frame
#: CSMA-CA before a train: the mean of BE = 3's backoff, one CCA, the turnaround.
CSMA = (2 ** STD.min_be - 1) / 2 * STD.unit_backoff + STD.cca + STD.turnaround


def _engine(positions, duty, seed=1):
    return MacEngine(unit_disk_rx_dbm(np.array(positions, float), 1.5), STD, seed=seed,
                     duty=duty)


def _unicasts(engine, count, spacing=1.013, src=0, dst=1):
    for h in range(count):
        engine.enqueue(h * spacing, src, dst, 40, handle=h)
    return engine.advance(count * spacing + 2.0)


def _sender_on(duty, count=300, seed=5):
    """The sender's radio time in exchanges per unicast, and the outcomes."""
    engine = _engine([[0, 0], [1, 0]], duty, seed)
    out = _unicasts(engine, count)
    tx, rx, listen = engine.exchange_seconds()
    return (tx[0] + rx[0] + listen[0]) / count, out


def test_the_phase_lock_cuts_the_senders_train_to_about_the_guard_time():
    """Locked, a train starts GUARD_TIME before the receiver's expected wake-up (less
    CSMA-CA's time, which stands in for ContikiMAC's CCAs after the phase wait) and
    ends with the copy the receiver takes: the sender is on for about guard - CSMA + a
    copy + its CCA, the turnaround and the ACK, against half a period unlocked."""
    locked, out = _sender_on(dataclasses.replace(CM, phase_lock=True))
    unlocked, _ = _sender_on(CM)
    assert [REASONS[r] for r in out.reason] == ["delivered"] * len(out.reason)
    expected = CM.guard_time - CSMA + AIR + STD.cca + STD.turnaround + CM.ack_s
    assert CM.guard_time == pytest.approx(10 * 2 * (1 / 8192 + 1 / 2000)
                                          + 6 * (1 / 8192 + 1 / 2000))
    assert locked == pytest.approx(expected, rel=0.1)
    assert locked < 0.4 * unlocked
    # the hop now waits for the receiver's next wake-up (less than a period on)
    latency = out.time - np.arange(len(out.reason)) * 1.013
    assert (out.attempts == 1).all()          # no locked train gave up
    assert latency.max() < CM.period + CM.guard_time + CM.max_phase_strobe


def test_the_phase_lock_is_learnt_from_acks_only():
    """A sender that never had an ACK (its addressee out of range) keeps strobing whole
    periods; no phase is recorded."""
    duty = dataclasses.replace(CM, phase_lock=True)
    engine = MacEngine(unit_disk_rx_dbm(np.array([[0.0, 0], [5, 0]]), 1.5,
                                        carrier_sense_radius=1.5), STD, seed=1, duty=duty)
    engine.enqueue(0.0, 0, 1, 40, handle=3)
    out = engine.advance(2.0)
    assert [REASONS[r] for r in out.reason] == ["retry_limit"]
    assert np.isnan(engine._nf[:, k.N_NF:]).all()
    copies = math.ceil(CM.strobe_time / (AIR + CM.inter_packet))
    assert engine.exchange_seconds()[0][0] == pytest.approx(out.attempts[0] * copies * AIR)


def _woken(fast_sleep, frames=30, seed=2):
    """Node 0 strobes to node 1 out of its range (every attempt a full strobe_time);
    node 2 only senses node 0 (2.5 away: beyond decoding, within carrier sense), node 3
    decodes it (1 away). Their radio time in exchanges, and the attempts."""
    duty = dataclasses.replace(CM, overhearing=True, fast_sleep=fast_sleep)
    engine = _engine([[0, 0], [5, 0], [-2.5, 0], [0, 1]], duty, seed)
    out = _unicasts(engine, frames, spacing=1.0)
    assert set(REASONS[r] for r in out.reason) == {"retry_limit"}
    return engine.exchange_seconds(), int(out.attempts.sum())


def _expected_energy_wake(fast_sleep):
    """A sensed-only radio's mean time on per strobe_time train: its CCA finds the
    train at x (uniform over the train: the phases are), it listens until
    LISTEN_TIME_AFTER_PACKET_DETECTED, or MAX_SILENCE_PERIODS + 1 CCA periods after
    the train's end, and with fast sleep MAX_NONACTIVITY_PERIODS periods at most."""
    x = np.linspace(0, CM.strobe_time, 20001)
    on = np.minimum(CM.listen_after_detect,
                    CM.strobe_time - x + (CM.max_silence_periods + 1) * CM.cca_spacing)
    if fast_sleep:
        on = np.minimum(on, CM.nonactivity_time)
    return on.mean()


def test_fast_sleep_cuts_a_bystanders_time_on():
    (tx0, rx0, slow), attempts = _woken(False)
    (tx1, rx1, fast), attempts1 = _woken(True)
    assert attempts == attempts1 == 30 * (STD.max_frame_retries + 1)
    # the sensed-only node: 12.5 ms a wake-up without fast sleep, 6.2 ms with it
    assert CM.listen_after_detect == 1 / 80
    assert CM.nonactivity_time == pytest.approx(10 * (1 / 8192 + 1 / 2000))
    assert slow[2] / attempts == pytest.approx(_expected_energy_wake(False), rel=0.1)
    assert fast[2] / attempts == pytest.approx(_expected_energy_wake(True), rel=0.1)
    assert fast[2] < 0.6 * slow[2]
    # the node that decodes takes one copy a train, reads it is not for it, sleeps:
    # fast sleep changes nothing there; the wait to the copy is under one copy + gap
    assert rx0[3] == rx1[3] == pytest.approx(attempts * AIR)
    assert slow[3] == fast[3] < attempts * (AIR + CM.inter_packet)
    assert rx0[2] == 0.0 and tx0[2] == 0.0


def test_without_overhearing_bystanders_pay_their_checks_only():
    engine = _engine([[0, 0], [5, 0], [-2.5, 0], [0, 1]], CM, 2)
    _unicasts(engine, 5, spacing=1.0)
    tx, rx, listen = engine.exchange_seconds()
    assert listen[2] == listen[3] == rx[2] == rx[3] == 0.0


def test_the_overhearing_rule_on_one_train():
    """_overhear on a train from t = 0 to 40 ms: a sensed-only radio whose check
    catches it listens from that CCA's end for MAX_NONACTIVITY_PERIODS CCA periods."""
    duty = dataclasses.replace(CM, overhearing=True)
    engine = _engine([[0, 0], [5, 0], [-2.5, 0]], duty, 1)
    nf, ni = engine._nf, engine._ni
    nf[2, k.PHASE] = 0.010
    end = 0.040
    k._overhear(0.0, 0, 1, AIR, end, nf, ni, engine._p, engine._ip, engine._rx_mw)
    found = caught(CM.timing(), 0.0, AIR, 0.010)
    assert 0.010 < found < 0.012
    assert nf[2, k.R_LISTEN] == pytest.approx(CM.nonactivity_time)
    nf[2, k.R_LISTEN] = 0.0
    nf[2, k.PHASE] = 0.039          # caught near the end: silence after it sends it off
    k._overhear(0.0, 0, 1, AIR, end, nf, ni, engine._p, engine._ip, engine._rx_mw)
    found = caught(CM.timing(), 0.0, AIR, 0.039)
    assert nf[2, k.R_LISTEN] == pytest.approx(end + 6 * CM.cca_spacing - found)


def _dense(requeue, seed=3):
    """Eight nodes within range of each other, each sending a unicast to the next every
    1.5-2 s: trains of half a period on average keep the channel busy a third of the
    time, and CSMA-CA's five CCAs (at most 10 ms of backoffs) often all fall in one."""
    duty = dataclasses.replace(CM, csma_max_mac_transmissions=requeue)
    angles = np.linspace(0, 2 * np.pi, 8, endpoint=False)
    engine = _engine(np.c_[np.cos(angles), np.sin(angles)] * 0.5, duty, seed)
    rng = np.random.default_rng(seed)
    h = 0
    starts = {u: rng.random() for u in range(8)}
    times = sorted((starts[u] + i * 1.5 + 0.5 * rng.random(), u)
                   for u in range(8) for i in range(40))
    last = np.full(8, -1.0)
    for t, u in times:
        t = max(t, last[u])
        engine.enqueue(t, u, (u + 1) % 8, 40, handle=h)
        last[u] = t
        h += 1
    out = engine.advance(times[-1][0] + 30.0)
    reasons = [REASONS[r] for r in out.reason]
    return {r: reasons.count(r) for r in set(reasons)}, h


def test_csmas_requeue_turns_access_failures_into_deliveries():
    off, n = _dense(0)
    on, n_on = _dense(3)
    assert n == n_on
    failed = off.get("channel_access_failure", 0)
    assert failed > 0.15 * n                      # the dense case loses frames that way
    assert off["delivered"] + failed == n
    # requeued a period or more later: none lost to the channel's access; one of 320
    # (seed 3) waits past the MAC's lifetime (0.5 s) for its turn
    assert "channel_access_failure" not in on and on["delivered"] >= 0.99 * n
    assert set(on) <= {"delivered", "queue_expired"}


def test_the_table_takes_the_options():
    mac = mac_from_table({"model": "802.15.4", "duty_cycle": "contikimac",
                          "phase_lock": True, "overhearing": True, "fast_sleep": False,
                          "csma_max_mac_transmissions": 3})
    assert (mac.duty.phase_lock, mac.duty.overhearing, mac.duty.fast_sleep,
            mac.duty.csma_max_mac_transmissions) == (True, True, False, 3)
    plain = mac_from_table({"model": "802.15.4", "duty_cycle": "contikimac"}).duty
    assert plain == ContikiMac()


def test_the_options_run_through_deliver_and_the_same_seed_repeats_the_run():
    """A 3-node line under deliver(): with every option on, everything is delivered,
    the run repeats to the bit, and the phase lock lowers the field's radio time."""
    import pandas as pd

    from emulator import deliver
    from tests.mac.test_duty_cycle import _line, _msgs

    def once(**options):
        mac = {"model": "802.15.4", "duty_cycle": "contikimac", **options}
        out = deliver(_line(3), _msgs(40, src=0, dst=2), medium="shared", seed=3, mac=mac,
                      energy={"model": "radio_states", "battery_j": 1e6})
        return out, out.attrs["energy"]

    every = {"phase_lock": True, "overhearing": True, "csma_max_mac_transmissions": 3}
    first, energy = once(**every)
    again, energy_again = once(**every)
    assert not first["lost"].any()
    pd.testing.assert_frame_equal(first, again)
    assert energy == energy_again
    _, plain = once()
    _, locked = once(phase_lock=True)
    assert locked["radio_on_fraction_mean"] < 0.7 * plain["radio_on_fraction_mean"]


def test_a_specs_options_are_checked_in_one_line():
    from experiments.spec import SpecError, resolve

    with pytest.raises(SpecError, match=r"^s.toml: mac.csma_max_mac_transmissions: "
                                        r"expected an integer >= 0, got -2$"):
        resolve({"network": {"medium": "shared"},
                 "mac": {"model": "802.15.4", "duty_cycle": "contikimac",
                         "csma_max_mac_transmissions": -2}}, "s.toml")
