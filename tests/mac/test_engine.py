"""The MAC engine against Bianchi's model, hidden terminals, broadcasts, 802.15.4, seeds."""
import numpy as np
import pytest

from emulator.mac.bianchi import saturation_throughput
from emulator.mac.engine import REASONS, Channel, MacEngine, unit_disk_rx_dbm
from emulator.mac.standards import CsmaCa802154, Dcf80211

DELIVERED, RETRY_LIMIT, ACCESS_FAILURE, COLLISION = (REASONS.index(r) for r in (
    "delivered", "retry_limit", "channel_access_failure", "collision"))
#: RTS/CTS before every 1,500 B frame (its PSDU is 1,528 B).
RTS_ON = 1000
#: Enough frames queued that no node runs dry: saturation (Bianchi's assumption).
SATURATED = dict(queue_limit=10 ** 6, lifetime=1e9)


def _circle(n, radius=0.1):
    """``n`` nodes on a small circle: one collision domain under a unit disk of 1."""
    angle = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.c_[np.cos(angle), np.sin(angle)] * radius


def _saturated_goodput(n, dcf, seconds, seed):
    """Payload bit/s delivered by ``n`` saturated stations sending 1,500 B frames round a ring."""
    pos = _circle(max(n, 2))
    engine = MacEngine(unit_disk_rx_dbm(pos, 1.0), dcf, seed=seed)
    per_node = int(seconds * 700) + 10          # more than 11 Mbit/s could carry
    senders = range(n)
    for i in senders:
        for h in range(per_node):
            engine.enqueue(0.0, i, (i + 1) % max(n, 2), 1500, i * per_node + h)
    out = engine.advance(seconds)
    delivered = out.handle[out.reason == DELIVERED]
    assert len(np.unique(delivered)) == len(delivered)      # no frame delivered twice
    return len(delivered) * 1500 * 8 / seconds


@pytest.mark.parametrize("rts", [False, True], ids=["basic", "rts_cts"])
def test_saturation_throughput_within_5_percent_of_bianchi(rts):
    dcf = Dcf80211(rts_threshold_bytes=RTS_ON if rts else Dcf80211.rts_threshold_bytes,
                   **SATURATED)
    measured = [_saturated_goodput(n, dcf, 5.0, seed=n) for n in (1, 2, 5, 10, 20, 50)]
    model = [saturation_throughput(n, dcf, 1500, rts) for n in (1, 2, 5, 10, 20, 50)]
    for n, got, want in zip((1, 2, 5, 10, 20, 50), measured, model):
        assert abs(got / want - 1) < 0.05, (n, got, want)
    if not rts:     # the real curve falls with n where a perfect scheduler stays flat
        assert measured[-1] < 0.85 * measured[1]


def _two_senders(cs_radius, rts, seconds=5.0, seed=3):
    """A -> B <- C on a line, 1 apart, saturated: (delivered frames, delivery ratio)."""
    dcf = Dcf80211(rts_threshold_bytes=RTS_ON if rts else Dcf80211.rts_threshold_bytes,
                   **SATURATED)
    rx = unit_disk_rx_dbm(np.array([[0.0, 0], [1, 0], [2, 0]]), 1.0, cs_radius)
    engine = MacEngine(rx, dcf, seed=seed)
    for h in range(4000):
        engine.enqueue(0.0, 0 if h % 2 == 0 else 2, 1, 1500, h)
    out = engine.advance(seconds)
    delivered = int((out.reason == DELIVERED).sum())
    dropped = int((out.reason == RETRY_LIMIT).sum())
    return delivered, delivered / (delivered + dropped)


def test_hidden_terminals_lose_frames_without_rts_and_recover_with_it():
    sensed, _ = _two_senders(cs_radius=2.2, rts=False)          # A and C sense each other
    hidden, hidden_ratio = _two_senders(cs_radius=1.5, rts=False)
    sensed_rts, _ = _two_senders(cs_radius=2.2, rts=True)
    hidden_rts, hidden_rts_ratio = _two_senders(cs_radius=1.5, rts=True)
    assert hidden < 0.7 * sensed                 # collisions at B eat 30 % and more
    assert hidden_ratio < 0.97                   # and frames reach the retry limit
    assert hidden_rts > 0.85 * sensed_rts        # CTS from B silences C: most recovered
    assert hidden_rts > hidden and hidden_rts_ratio > hidden_ratio


def test_a_broadcast_gets_no_ack_and_no_retry_and_collides_per_receiver():
    rx = unit_disk_rx_dbm(np.array([[0.0, 0], [1, 0], [2, 0]]), 1.0, 1.5)
    engine = MacEngine(rx, Dcf80211(), seed=4)
    engine.enqueue(0.0, 1, -1, 100, handle=1)                    # B to A and C
    out = engine.advance(0.05)
    assert sorted(out.node.tolist()) == [0, 2]
    assert set(out.reason.tolist()) == {DELIVERED} and set(out.attempts.tolist()) == {1}
    # A and C, hidden from each other, broadcast together: each frame (1,216 µs at
    # 1 Mbit/s) outlasts the other's backoff (31 slots at most, 620 µs), so they overlap
    # at B, between them, which gets neither.
    engine.enqueue(0.05, 0, -1, 100, handle=2)
    engine.enqueue(0.05, 2, -1, 100, handle=3)
    out = engine.advance(0.1)
    at_b = out.reason[out.node == 1]
    assert at_b.tolist() == [COLLISION, COLLISION]
    assert set(out.attempts.tolist()) == {1}
    counters = engine.counters()
    assert counters["retries"].sum() == 0 and counters["drops_by_reason"]["collision"] == 2


def _coordinator(n, rate, seconds=10.0, seed=2):
    """``n`` 802.15.4 nodes sending 60 B frames to node 0 as Poisson flows of ``rate``/s."""
    pos = np.r_[[[0.0, 0]], _circle(n, 0.5)]
    engine = MacEngine(unit_disk_rx_dbm(pos, 1.0), CsmaCa802154(), seed=seed)
    draws = np.random.default_rng(seed)
    handle = 0
    for node in range(1, n + 1):
        times = np.cumsum(draws.exponential(1 / rate, int(rate * seconds * 2)))
        for t in times[times < seconds]:
            engine.enqueue(t, node, 0, 60, handle)
            handle += 1
    return engine.advance(seconds + 1.0), handle, engine


def test_802154_one_sender_at_light_load_delivers_every_frame_first_time():
    out, sent, engine = _coordinator(1, 10.0)
    assert (out.reason == DELIVERED).sum() == sent == len(out.handle)
    assert set(out.attempts.tolist()) == {1}
    assert engine.counters()["retries"].sum() == 0


def test_802154_twenty_senders_at_high_load_fail_channel_access():
    out, sent, engine = _coordinator(20, 20.0)          # offered about 98 % of the channel
    failures = (out.reason == ACCESS_FAILURE).sum()
    assert failures > 0.1 * sent
    assert (out.reason == DELIVERED).sum() < 0.6 * sent
    assert engine.counters()["drops_by_reason"]["channel_access_failure"] == failures
    busy = engine.counters()["busy_time"][0] / engine.now
    assert 0.5 < busy <= 1.0


def test_same_seed_same_outcomes_and_steps_change_nothing():
    def run(seed, steps):
        engine = MacEngine(unit_disk_rx_dbm(_circle(6), 1.0), Dcf80211(), seed=seed)
        for h in range(300):
            engine.enqueue(h * 1e-3, h % 6, (h + 1) % 6, 1000, h)
        parts = [engine.advance(t) for t in np.linspace(0.5, 1.0, steps)]
        return [np.concatenate(cols) for cols in zip(*parts)]
    first, again, stepped = run(7, 1), run(7, 1), run(7, 40)
    for a, b, c in zip(first, again, stepped):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    other = run(8, 1)
    assert not np.array_equal(first[2], other[2])


def test_queue_limit_and_lifetime_drop_with_their_reasons():
    engine = MacEngine(unit_disk_rx_dbm(_circle(2), 1.0),
                       Dcf80211(queue_limit=3, lifetime=0.002), seed=1)
    for h in range(5):
        engine.enqueue(0.0, 0, 1, 1500, h)
    out = engine.advance(0.1)
    reasons = dict(zip(out.handle.tolist(), (REASONS[r] for r in out.reason)))
    assert [reasons[h] for h in (3, 4)] == ["queue_full", "queue_full"]
    assert reasons[0] == "delivered" and "queue_expired" in (reasons[1], reasons[2])


def test_bad_input_is_one_line_naming_the_field():
    engine = MacEngine(unit_disk_rx_dbm(_circle(2), 1.0), Dcf80211())
    with pytest.raises(ValueError, match=r"^mac\.dst: expected -1"):
        engine.enqueue(0.0, 0, 0, 10, 1)
    with pytest.raises(ValueError, match=r"^mac\.node: expected a node in 0..1"):
        engine.enqueue(0.0, 5, 0, 10, 1)
    engine.advance(1.0)
    with pytest.raises(ValueError, match=r"^mac\.t: expected a time >= 1.0"):
        engine.enqueue(0.5, 0, 1, 10, 1)
    with pytest.raises(ValueError, match=r"^mac\.nbytes: expected 0..116"):
        MacEngine(np.zeros((2, 2)), CsmaCa802154()).enqueue(0.0, 0, 1, 200, 1)
    with pytest.raises(ValueError, match=r"^mac\.rx_dbm: expected a square"):
        MacEngine(np.zeros((2, 3)), Dcf80211())
    with pytest.raises(ValueError, match=r"^mac\.cs_threshold_dbm: a carrier_sense_radius"):
        unit_disk_rx_dbm(_circle(2), 1.0, channel=Channel(cs_threshold_dbm=-82.0))
