"""The error-rate reception (``[mac] reception = "error_rate"``): frames judged by the
PHY's error curve over their chunks of constant interference, as ns-3 does.

The expected success rates are computed here from the curves' formulas (ns-3's
``DsssErrorRateModel`` and ``LrWpanErrorModel``), not read from the engine."""
import math

import numpy as np
import pytest

from emulator.mac.config import mac_from_table, spec_table
from emulator.mac.contikimac import ContikiMac
from emulator.mac.engine import REASONS, Channel, MacEngine
from emulator.mac.error_rate import (R_CCK11, R_CCK55, R_DBPSK, R_DQPSK, cck_curve,
                                     log_ok_per_bit)
from emulator.mac.standards import CsmaCa802154, Dcf80211
from topologies.schema import FieldError

NOISE_DBM = -93.97
DELIVERED = REASONS.index("delivered")


def _dbpsk_ber(sinr):
    return 0.5 * math.exp(-22.0 * sinr)


def _dqpsk_ber(sinr):
    x = 11.0 * sinr
    return (math.sqrt(2) + 1) / math.sqrt(8 * math.pi * math.sqrt(2)) / math.sqrt(x) \
        * math.exp(-(2 - math.sqrt(2)) * x)


def _within(ratio, p, n, sigmas=4.5):
    """``ratio`` of ``n`` Bernoulli(p) trials is within ``sigmas`` standard errors of p."""
    return abs(ratio - p) <= sigmas * math.sqrt(p * (1 - p) / n)


def _channel(**kw):
    return Channel(noise_dbm=NOISE_DBM, detect_dbm=-120.0, reception="error_rate",
                   sinr_db=-10.0, **kw)


def _rx(*pairs, n=2):
    rx = np.full((n, n), -250.0)
    np.fill_diagonal(rx, -np.inf)
    for i, j, dbm in pairs:
        rx[i, j] = rx[j, i] = dbm
    return rx


def _broadcasts(engine, node, frames, nbytes, period, offset=0.0):
    for h in range(frames):
        engine.enqueue(offset + (h + 1) * period, node, -1, nbytes, handle=node * 10**6 + h)


@pytest.mark.parametrize("rate, ber, snr_db", [(1e6, _dbpsk_ber, -5.0),
                                               (2e6, _dqpsk_ber, -0.8)])
def test_a_lone_frame_crosses_with_the_curves_rate(rate, ber, snr_db):
    """2,000 broadcasts alone on the channel at a fixed SNR: the share received is the
    curve's ``(1 - BER)^bits`` (the 48-bit PLCP header at DBPSK, the MPDU at the rate)."""
    frames, payload = 2000, 100
    engine = MacEngine(_rx((0, 1, NOISE_DBM + snr_db)), Dcf80211(basic_rate=rate),
                       _channel(), seed=3)
    _broadcasts(engine, 0, frames, payload, 0.01)
    out = engine.advance(frames * 0.01 + 1.0)
    assert len(out.reason) == frames                      # one row each, at node 1
    sinr = 10 ** (snr_db / 10)
    mpdu_bits = (payload + Dcf80211().header_bytes) * 8
    expected = (1 - _dbpsk_ber(sinr)) ** 48 * (1 - ber(sinr)) ** mpdu_bits
    assert 0.3 < expected < 0.7
    assert _within(float(np.mean(out.reason == DELIVERED)), expected, frames)


def test_the_threshold_rule_cannot_decode_there():
    """The same frames under the default rule: below 4 dB nothing is even in range."""
    engine = MacEngine(_rx((0, 1, NOISE_DBM - 5.0)), Dcf80211(basic_rate=1e6),
                       Channel(noise_dbm=NOISE_DBM, detect_dbm=-120.0), seed=3)
    _broadcasts(engine, 0, 50, 100, 0.01)
    assert len(engine.advance(2.0).reason) == 0


def _overlap_run(reception, rounds=800):
    """A -> B broadcasts of 1,000 B at 1 Mbit/s (8.416 ms), B hearing A 10 dB above the
    noise; C, hidden from A, starts its own 6 ms into each of A's, 14.5 dB above the
    noise at B: the last 2.416 ms of A's payload meet -4.7 dB of SINR."""
    pa, pc = NOISE_DBM + 10.0, NOISE_DBM + 10 * math.log10(28.5)
    rx = _rx((0, 1, pa), (2, 1, pc), n=3)
    channel = _channel() if reception == "error_rate" else \
        Channel(noise_dbm=NOISE_DBM, detect_dbm=-120.0)
    engine = MacEngine(rx, Dcf80211(basic_rate=1e6), channel, seed=5)
    _broadcasts(engine, 0, rounds, 1000, 0.02)
    _broadcasts(engine, 2, rounds, 1000, 0.02, offset=0.006)
    out = engine.advance(rounds * 0.02 + 1.0)
    mine = (out.node == 1) & (out.handle < 10**6)        # A's frames, at B
    return out, mine


def test_only_the_overlapped_chunk_pays_for_the_interference():
    out, mine = _overlap_run("error_rate")
    rounds = int(mine.sum())
    assert rounds == 800
    air = 192e-6 + 1028 * 8 / 1e6
    starts = (out.handle[mine] + 1) * 0.02
    assert np.allclose(out.time[mine], starts + air)       # every A frame began on time
    alone = (1 - _dbpsk_ber(10.0)) ** (48 + 6000 - 192)    # header, payload before C
    sinr = 10.0 / (28.5 + 1.0)
    overlapped_bits = air * 1e6 - 6000                      # 2,416 bits at 1 Mbit/s
    expected = alone * (1 - _dbpsk_ber(sinr)) ** overlapped_bits
    assert 0.4 < expected < 0.6
    whole_frame = (1 - _dbpsk_ber(sinr)) ** (48 + 1028 * 8)   # the least SINR throughout
    assert whole_frame < 0.15
    assert _within(float(np.mean(out.reason[mine] == DELIVERED)), expected, rounds)


def test_the_threshold_rule_loses_every_overlapped_frame():
    out, mine = _overlap_run("threshold", rounds=100)
    assert mine.sum() == 100 and not (out.reason[mine] == DELIVERED).any()


def test_802154_frames_follow_the_oqpsk_curve():
    """802.15.4 under the same mechanism: its PSDU's bits at O-QPSK, SHR and PHR not
    judged (the threshold rule's curve), 1,500 frames of 100 B at -1 dB."""
    from topologies.radio import _oqpsk
    frames, sinr_db = 1500, -1.0
    std = CsmaCa802154()
    engine = MacEngine(_rx((0, 1, NOISE_DBM + sinr_db)), std, _channel(), seed=2)
    _broadcasts(engine, 0, frames, 100, 0.02)
    out = engine.advance(frames * 0.02 + 1.0)
    assert len(out.reason) == frames
    expected = (1 - float(_oqpsk(10 ** (sinr_db / 10)))) ** ((100 + std.header_bytes) * 8)
    assert 0.2 < expected < 0.8
    assert _within(float(np.mean(out.reason == DELIVERED)), expected, frames)


# ns-3 3.44's DsssErrorRateModel (its Python bindings, GSL built in): the success rate
# of 1,000 bits at a linear SINR, per rate.
NS3_1000_BITS = {(R_DBPSK, 1.0): 0.999999860526577, (R_DQPSK, 1.0): 0.8234737192263774,
                 (R_DQPSK, 0.5): 0.0009974791798266793,
                 (R_CCK55, 1.0): 0.002304560745389081, (R_CCK55, 2.0): 0.9023105123048898,
                 (R_CCK55, 4.0): 0.9999731440570859, (R_CCK11, 2.0): 0.002304560745389085,
                 (R_CCK11, 4.0): 0.9023105123048859}


@pytest.mark.parametrize("code, sinr", sorted(NS3_1000_BITS))
def test_the_curves_are_ns3s(code, sinr):
    ours = 1000 * log_ok_per_bit(code, sinr, cck_curve())
    assert ours == pytest.approx(math.log(NS3_1000_BITS[code, sinr]), rel=2e-3, abs=1e-9)


def test_the_default_is_the_threshold_and_stays_out_of_the_table():
    assert mac_from_table({"model": "802.11"}).channel.reception == "threshold"
    assert spec_table({"model": "802.11"}) == {"model": "802.11"}
    table = mac_from_table({"model": "802.11", "reception": "error_rate", "sinr_db": -6})
    assert (table.channel.reception, table.channel.sinr_db) == ("error_rate", -6)


@pytest.mark.parametrize("table, message", [
    ({"model": "802.11", "reception": "bits"}, "mac.reception: expected one of"),
    ({"model": "802.11", "sinr_db": -3}, 'mac.sinr_db: expected >= 0 dB under reception = '
                                          '"threshold", got -3'),
    ({"model": "802.15.4", "duty_cycle": "contikimac", "reception": "error_rate"},
     "mac.reception:"),
])
def test_bad_reception_tables_are_refused_in_one_line(table, message):
    with pytest.raises(FieldError) as err:
        mac_from_table(table)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_duty_cycling_refuses_the_error_rate():
    with pytest.raises(ValueError, match="mac.reception"):
        MacEngine(_rx((0, 1, -60.0)), CsmaCa802154(), _channel(), duty=ContikiMac())


def test_new_powers_mid_frame_close_the_chunk_at_the_old_ones():
    """A node moves away 4 ms into each 8.4 ms frame (``set_rx_dbm``, as a mobility epoch
    does) and back after it: the bits before pay the near SNR (+10 dB, nothing lost), the
    4,416 after the far one (-4.7 dB)."""
    near, far = NOISE_DBM + 10.0, NOISE_DBM + 10 * math.log10(10.0 / 29.5)
    engine = MacEngine(_rx((0, 1, near)), Dcf80211(basic_rate=1e6), _channel(), seed=4)
    rounds, got = 600, 0
    for r in range(rounds):
        start = (r + 1) * 0.02
        engine.enqueue(start, 0, -1, 1000, handle=r)
        engine.advance(start + 0.004)
        engine.set_rx_dbm(_rx((0, 1, far)))
        out = engine.advance(start + 0.015)
        engine.set_rx_dbm(_rx((0, 1, near)))
        assert out.handle.tolist() == [r]
        assert out.time[0] == pytest.approx(start + 192e-6 + 1028 * 8e-6)
        got += int(out.reason[0] == DELIVERED)
    after = 192 + 1028 * 8 - 4000              # payload bits at 1 Mbit/s after 4 ms
    expected = (1 - _dbpsk_ber(10.0 / 29.5)) ** after
    assert 0.2 < expected < 0.4
    assert (1 - _dbpsk_ber(10.0 / 29.5)) ** (48 + 1028 * 8) < 0.12   # all far: apart
    assert _within(got / rounds, expected, rounds)


def test_the_radios_own_thresholds_decode_as_far_as_its_links():
    """A ``_manet`` spec's radio (500 m a unit, 802.11b at 1 Mbit/s) with the MAC at the
    radio's noise floor, detecting preambles to its links' edge: the spec check's decode
    range reaches the radio's range, so no warning is due."""
    from emulator.mac.config import decode_range_m
    from topologies.radio import radio_from_table

    radio = radio_from_table({"model": "log_distance", "meters_per_unit": 500.0})
    edge_snr_db = float(radio.snr_db(radio.range_m()))
    assert -5.5 < edge_snr_db < -5.3
    mac = mac_from_table({"model": "802.11", "data_rate": 1e6, "reception": "error_rate",
                          "noise_dbm": radio.noise_floor_dbm, "detect_dbm": -99.4,
                          "sinr_db": -5.5})
    assert decode_range_m(mac, radio) >= radio.range_m()
