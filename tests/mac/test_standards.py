"""The MAC's constants, airtimes and Bianchi's model, by hand."""
import math

import pytest

from emulator.mac import airtime, bianchi
from emulator.mac.standards import CsmaCa802154, Dcf80211


def test_80211b_times_are_the_standards():
    dcf = Dcf80211()
    assert (dcf.slot, dcf.sifs, dcf.difs) == (20e-6, 10e-6, 50e-6)
    assert dcf.eifs == pytest.approx(10e-6 + 304e-6 + 50e-6)       # SIFS + ACK at 1 + DIFS
    assert dcf.ack_timeout == pytest.approx(10e-6 + 20e-6 + 192e-6)
    assert (dcf.cw_min, dcf.cw_max, dcf.retry_limit) == (31, 1023, 7)


@pytest.mark.parametrize("payload, broadcast, micros", [
    (1500, False, 192 + math.ceil(1528 * 8 / 11)),   # 1,304 µs at 11 Mbit/s
    (1500, True, 192 + 1528 * 8),                    # broadcast at the 1 Mbit/s basic rate
    (0, False, 192 + math.ceil(28 * 8 / 11)),        # header and FCS alone
])
def test_80211_data_airtime(payload, broadcast, micros):
    got = airtime.data_80211(Dcf80211(), payload, broadcast)
    assert got == pytest.approx(micros * 1e-6)


def test_80211_airtime_follows_the_data_rate():
    assert airtime.data_80211(Dcf80211(data_rate=2e6), 1000, False) == \
        pytest.approx((192 + 1028 * 4) * 1e-6)
    assert airtime.data_80211(Dcf80211(data_rate=5.5e6), 1000, False) == \
        pytest.approx((192 + math.ceil(1028 * 8 / 5.5)) * 1e-6)


def test_802154_times_and_airtime():
    lr = CsmaCa802154()
    assert (lr.unit_backoff, lr.cca, lr.turnaround) == pytest.approx((320e-6, 128e-6, 192e-6))
    assert lr.ack_wait == pytest.approx(54 * 16e-6)
    assert airtime.data_802154(lr, 116) == pytest.approx(133 * 32e-6)   # a full 127 B PSDU
    assert airtime.ack_802154(lr) == pytest.approx(11 * 32e-6)
    assert lr.ifs(19) == pytest.approx(40 * 16e-6) and lr.ifs(18) == pytest.approx(12 * 16e-6)


@pytest.mark.parametrize("params, message", [
    (Dcf80211(cw_min=63, cw_max=31), r"^mac\.cw_min: expected cw_min <= cw_max"),
    (Dcf80211(sifs=-1e-6), r"^mac\.sifs: expected a time >= 0"),
    (Dcf80211(retry_limit=-1), r"^mac\.retry_limit: expected >= 1"),
    (Dcf80211(data_rate=6e6), r"^mac\.data_rate: expected one of 1, 2, 5.5, 11"),
    (Dcf80211(queue_limit=0), r"^mac\.queue_limit: expected >= 1"),
    (CsmaCa802154(min_be=6), r"^mac\.min_be: expected 0 <= min_be <= max_be"),
    (CsmaCa802154(max_frame_retries=-1), r"^mac\.max_frame_retries: expected >= 0"),
    (CsmaCa802154(symbol=0.0), r"^mac\.symbol: expected > 0"),
])
def test_check_gives_one_line_naming_the_field(params, message):
    with pytest.raises(ValueError, match=message) as err:
        params.check()
    assert "\n" not in str(err.value)


def test_bianchi_one_station_by_hand():
    # n = 1: p = 0, tau = 2 / (W + 1), S = tau E[P] / ((1 - tau) sigma + tau Ts).
    dcf = Dcf80211()
    ts, _ = bianchi.exchange_times(dcf, 1500, rts=False)
    assert ts == pytest.approx((1304 + 10 + 203 + 50) * 1e-6)      # the ACK at 11 Mbit/s
    tau = 2 / 33
    by_hand = tau * 1500 * 8 / ((1 - tau) * 20e-6 + tau * ts)
    assert bianchi.saturation_throughput(1, dcf, 1500) == pytest.approx(by_hand)


def test_bianchi_fixed_point_holds_and_collisions_grow_with_n():
    ps = []
    for n in (2, 5, 10, 20, 50):
        tau, p = bianchi.solve(n, 32, 5)
        assert p == pytest.approx(1 - (1 - tau) ** (n - 1), abs=1e-12)
        assert tau == pytest.approx(2 * (1 - 2 * p) / ((1 - 2 * p) * 33 + p * 32 * (1 - (2 * p) ** 5)))
        ps.append(p)
    assert ps == sorted(ps)


def test_bianchi_rts_beats_basic_access_only_when_crowded():
    dcf = Dcf80211()
    basic = [bianchi.saturation_throughput(n, dcf, 1500) for n in (2, 50)]
    rts = [bianchi.saturation_throughput(n, dcf, 1500, rts=True) for n in (2, 50)]
    assert rts[0] < basic[0]                 # its overhead costs more than it saves
    assert rts[1] / rts[0] > basic[1] / basic[0]   # but it falls less as n grows
