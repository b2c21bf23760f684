"""Links of the emulated network: measured delay, bandwidth caps, live route changes."""
import pytest

from emulator.mininet.emulation import Emulation, LinkSetting, next_hops
from emulator.mininet.probe import measure

pytestmark = pytest.mark.mininet


def line_paths(nodes):
    return {(u, v): (list(range(u, v + 1)) if u < v else list(range(u, v - 1, -1)))
            for u in nodes for v in nodes if u != v}


def start_line(n, setting):
    em = Emulation(range(n), [(i, i + 1) for i in range(n - 1)], time_scale=1.0, seed=1)
    em.start()
    settings = {}
    for i in range(n - 1):
        settings[(i, i + 1)] = settings[(i + 1, i)] = setting
    em.apply(settings, next_hops(line_paths(range(n))))
    return em


def test_measured_delay_is_within_20_percent_of_the_configured_delay():
    em = start_line(3, LinkSetting(delay=0.02))
    try:
        one = min(measure(em, 0, 1, count=20)["rtts"])
        two = min(measure(em, 0, 2, count=20)["rtts"])
    finally:
        em.stop()
    # A round trip crosses each hop twice: 2 x 20 ms per hop. The quickest of 20 round
    # trips: the shaper's delay is a floor every packet pays, while a busy machine (CI
    # next to a JVM) adds scheduling stalls to some of them, which the median caught.
    assert one == pytest.approx(0.040, rel=0.2)
    assert two == pytest.approx(0.080, rel=0.2)


def test_bandwidth_cap_is_respected():
    # 1 Mbit/s: a loaded slow machine's Python sender reached only about 1 Mbit/s, so a
    # higher cap measured the sender, not the shaper
    cap = 1.0
    em = start_line(3, LinkSetting(mbit=cap))
    try:
        r = measure(em, 0, 2, mode="tcp", nbytes=250_000)
        wire = em.tx_bytes()
    finally:
        em.stop()
    mbit = r["bytes"] * 8 / r["seconds"] / 1e6
    assert 0.5 * cap < mbit <= cap * 1.05
    assert wire[(0, 1)] >= r["bytes"] and wire[(1, 2)] >= r["bytes"]


def test_route_replaced_live_moves_the_traffic():
    # A square 0-1-2-3-0: node 0 reaches 2 over 1, then (after the change) over 3.
    em = Emulation(range(4), [(0, 1), (1, 2), (2, 3), (3, 0)], time_scale=1.0, seed=1)
    em.start()
    try:
        settings = {(u, v): LinkSetting(delay=0.001) for u in range(4) for v in range(4)
                    if abs(u - v) in (1, 3)}
        via1 = {(0, 2): [0, 1, 2], (2, 0): [2, 1, 0], (0, 1): [0, 1], (1, 0): [1, 0],
                (0, 3): [0, 3], (3, 0): [3, 0], (1, 2): [1, 2], (2, 1): [2, 1],
                (2, 3): [2, 3], (3, 2): [3, 2], (1, 3): [1, 0, 3], (3, 1): [3, 0, 1]}
        via3 = {**via1, (0, 2): [0, 3, 2], (2, 0): [2, 3, 0]}
        traffic = []
        for paths in (via1, via3):
            em.apply(settings, next_hops(paths))
            before = em.tx_bytes()
            measure(em, 0, 2, count=20, nbytes=1000)
            after = em.tx_bytes()
            traffic.append({k: after[k] - before[k] for k in after})
    finally:
        em.stop()
    assert traffic[0][(0, 1)] > 20_000 > traffic[0][(0, 3)]
    assert traffic[1][(0, 3)] > 20_000 > traffic[1][(0, 1)]


def test_shaping_is_detected_and_a_missing_netem_fails_loudly():
    em = Emulation(range(2), [(0, 1)], time_scale=1.0, seed=1)
    em.start()
    has_netem = em.shaping == "netem"
    try:
        assert em.shaping in ("netem", "tun")
        assert em.netem_probe.endswith("rc=0") == has_netem
    finally:
        em.stop()
    if not has_netem:
        strict = Emulation(range(2), [(0, 1)], time_scale=1.0, seed=1, shaping="netem")
        with pytest.raises(RuntimeError, match="no netem"):
            strict.start()


def test_a_bandwidth_tclink_cannot_shape_raises():
    with pytest.raises(ValueError, match="at most 1000 Mbit/s"):
        LinkSetting.from_attrs({"bandwidth": 1e9}, time_scale=0.001)
