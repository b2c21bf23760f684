"""QJoin's quality estimate against the symmetric join it models.

The estimate (``estimator.found_shares``, docs/ALGORITHMS.md#quality-estimate) is derived
from the join's purge rule; here it is checked against the join itself
(``operator.join_arrivals``) on seeded arrivals whose disorder is in the data, as in
``experiments/specs/qjoin_paper.toml``: every tuple arrives a random delay after its
timestamp. Every in-window pair is a result (one key), so recall is the share of pairs
found.
"""
import numpy as np
import pytest

from spark_nodes.algorithms.qjoin import estimator as est
from spark_nodes.algorithms.qjoin.operator import horizons, join_arrivals

W, G, RATE, DURATION = 2.0, 0.01, 20.0, 100.0


def _arrivals(seed, delay_r, delay_s):
    """Two streams of ``RATE`` uniform timestamps, in arrival order (ts + drawn delay)."""
    rng = np.random.default_rng(seed)
    ts = [np.sort(rng.uniform(0, DURATION, int(RATE * DURATION))) for _ in (0, 1)]
    arrive = np.concatenate([ts[0] + delay_r(rng, ts[0].size),
                             ts[1] + delay_s(rng, ts[1].size)])
    side = np.repeat([0, 1], [ts[0].size, ts[1].size])
    t = np.concatenate(ts)
    order = np.argsort(arrive, kind="stable")
    return side[order], t[order]


def _ideal(side, t):
    r, s = np.sort(t[side == 0]), np.sort(t[side == 1])
    return int((np.searchsorted(s, r + W, side="right")
                - np.searchsorted(s, r - W, side="left")).sum())


def _model(side, t):
    # the operator's own per-tuple delays, as QJoin's statistics record them
    delay, _, _ = horizons(side, t, W)
    stats = [est.StreamStats(RATE, delay[side == k], np.ones((side == k).sum()),
                             np.ones((side == k).sum()), float(delay[side == k].max()))
             for k in (0, 1)]
    dx, dy, q, _ = est.quality_grid(stats[0], stats[1], W, DURATION, 0.01, G)
    def at(a, b):       # the grid point of allowances (a, b), the last beyond the grid
        return float(q[min(round(a / G), dx.size - 1), min(round(b / G), dy.size - 1)])
    return at


def _realised(side, t, dx, dy):
    later, _ = join_arrivals(side, t, W, key=np.zeros(t.size, dtype=np.int64),
                             allowance_r=dx, allowance_s=dy)
    return later.size / _ideal(side, t)


def _exponential(mean):
    return lambda rng, n: rng.exponential(mean, n)


def _pareto(mean, alpha=2.5):
    return lambda rng, n: rng.pareto(alpha, n) * mean * (alpha - 1)


@pytest.mark.parametrize("delays", [_exponential(0.5), _pareto(0.5)],
                         ids=["exponential", "pareto"])
def test_estimate_follows_the_join(delays):
    side, t = _arrivals(7, delays, delays)
    q = _model(side, t)
    for dx, dy in [(0.0, 0.0), (0.3, 0.0), (0.0, 0.3), (0.5, 0.5), (1.0, 1.0), (3.0, 3.0)]:
        real = _realised(side, t, dx, dy)
        # within 0.04, and never optimistic by more than noise: the model takes the
        # purge time T as the later tuple's own stream front, which T never exceeds
        assert abs(q(dx, dy) - real) <= 0.04, (dx, dy, q(dx, dy), real)
        assert q(dx, dy) <= real + 0.005, (dx, dy, q(dx, dy), real)


def test_late_stream_is_saved_by_the_other_buffer():
    # R on time, S late: S's late tuples probe R, so dx (R's buffer) is what saves them
    side, t = _arrivals(3, lambda rng, n: np.zeros(n), _exponential(0.5))
    q = _model(side, t)
    r_buffer, s_buffer = _realised(side, t, 0.5, 0.0), _realised(side, t, 0.0, 0.5)
    assert r_buffer > s_buffer + 0.05
    assert q(0.5, 0.0) > q(0.0, 0.5) + 0.05
    assert q(0.0, 0.5) == pytest.approx(q(0.0, 0.0), abs=1e-9)
