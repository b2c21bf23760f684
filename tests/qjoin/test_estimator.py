"""Worked numbers of docs/ALGORITHMS.md#qjoin-worked-example for Q_L*, basic windows, the
found shares, Q_L and Algorithm 1."""
import numpy as np
import pytest

from spark_nodes.algorithms.qjoin import estimator as est

# the worked example: half of each stream on time, half 1 s late (w = 1, g = 1)
F_R = {0: .5, 1: .5}
F_S = {0: .5, 1: .5}


def _stats(rate, f, per_tuple_cmp=10.0, per_tuple_res=1.0):
    # delays 0, 1 with the "ceil" rule have coarse delays 0, 1 at g = 1
    delays = np.concatenate([np.full(int(round(p * rate)), float(d)) for d, p in f.items()])
    n = delays.size
    return est.StreamStats(rate=float(rate), delays=delays,
                           results=np.full(n, per_tuple_res),
                           comparisons=np.full(n, per_tuple_cmp), max_delay=max(f))


def _grid():
    return est.quality_grid(_stats(10, F_R), _stats(20, F_S), w=1.0, L=1.0, b=1.0, g=1.0,
                            coarse_rule="ceil")


@pytest.mark.parametrize("n_prod, raw, clamped, feasible", [
    (820, 0.80, 0.80, True), (790, 1.10, 1.0, False), (900, 0.0, 0.0, True)])
def test_q_target_worked(n_prod, raw, clamped, feasible):
    assert est.q_target_raw(0.9, 900, n_prod, 100) == pytest.approx(raw)
    t, ok = est.q_target(0.9, 900, n_prod, 100)
    assert t == pytest.approx(clamped) and ok is feasible


def test_q_target_clamps_below_zero():
    assert est.q_target(0.9, 900, 990, 100) == (0.0, True)


def test_window_counts_worked():
    cs = est.coarse_delay(_stats(20, F_S).delays, 1.0, "ceil")
    ws = est.window_counts(20, lambda k: est.delay_cdf(cs, k), [0, 1], 1, 1, 1)
    assert ws.tolist() == pytest.approx([10, 20])


def test_found_shares_worked():
    # Q(dx, dy) = (2 + dx + dy) / 4 on [0, 1]^2: both on time always found; one late,
    # (1 + the other's allowance) / 2; both late, (dx + dy) / 2
    v, p = est.delay_classes(_stats(10, F_R).delays, 1.0, "ceil")
    a, b = est.found_shares(v, p, v, p, 1.0, [0.0, 0.5, 1.0, 3.0], [0.0, 1.0])
    assert a.tolist() == pytest.approx([0.25, 0.375, 0.5, 0.5])
    assert b.tolist() == pytest.approx([0.25, 0.5])


def test_late_partner_needs_the_other_buffer():
    # R on time, half of S 1 s late: a late s probes R, so R's allowance dx saves it
    a, b = est.found_shares([0.0], [1.0], [0.0, 1.0], [.5, .5], 1.0, [0.0, 1.0], [0.0, 1.0])
    q = a[:, None] + b[None, :]
    np.testing.assert_allclose(q, [[0.75, 0.75], [1.0, 1.0]])


def test_found_shares_cover_everything_at_the_largest_delays():
    rng = np.random.default_rng(0)
    dr, ds = rng.exponential(0.5, 30), rng.exponential(0.5, 30)
    a, b = est.found_shares(dr, np.full(30, 1 / 30), ds, np.full(30, 1 / 30), 2.0,
                            np.arange(0, 6.0, 0.01), np.arange(0, 6.0, 0.01))
    assert a[-1] + b[-1] == pytest.approx(1.0)
    assert (np.diff(a) >= -1e-12).all() and (np.diff(b) >= -1e-12).all()


def test_cross_join_and_quality_worked():
    dx, dy, q, n_ideal = _grid()
    assert dx.tolist() == [0, 1] and dy.tolist() == [0, 1]
    # N_x(Max) = 10 * 1 * 20 + 20 * 1 * 10 = 400 pairs, sel = 0.1
    assert n_ideal == pytest.approx(40)
    np.testing.assert_allclose(q, [[0.5, 0.75], [0.75, 1.0]])


@pytest.mark.parametrize("target, dxdy, xy", [
    (0.5, (0, 0), (10, 20)), (0.7, (1, 0), (20, 20)), (0.8, (1, 1), (20, 40))])
def test_algorithm1_worked(target, dxdy, xy):
    dx, dy, q, _ = _grid()
    got = est.algorithm1(q, target, dx, dy, 10, 20, 1.0)
    assert got[:2] == dxdy and got[2:4] == pytest.approx(xy) and got[4] is True


def test_algorithm1_unreachable_gives_largest():
    dx, dy, q, _ = _grid()
    assert est.algorithm1(q * 0.5, 0.99, dx, dy, 10, 20, 1.0) == (1.0, 1.0, 20.0, 40.0, False)


def test_choose_buffers_infeasible_uses_largest():
    r, s = _stats(10, F_R), _stats(20, F_S)
    choice, target = est.choose_buffers(r, s, 1.0, 1.0, 1.0, 1.0, 0.9, 900, 790,
                                        coarse_rule="ceil")
    # N_L = 40 here: (0.9 * 940 - 790) / 40 = 1.4 > 1
    assert target == 1.0 and not choice.feasible
    assert (choice.dx, choice.dy, choice.x, choice.y) == (1.0, 1.0, 20.0, 40.0)


def test_choose_buffers_feasible_target():
    r, s = _stats(10, F_R), _stats(20, F_S)
    # Q_L* = (0.9 * (900 + 40) - 818) / 40 = 0.7
    choice, target = est.choose_buffers(r, s, 1.0, 1.0, 1.0, 1.0, 0.9, 900, 818,
                                        coarse_rule="ceil")
    assert target == pytest.approx(0.7)
    assert (choice.dx, choice.dy, choice.x, choice.y) == (1.0, 0.0, 20.0, 20.0)
    assert choice.q_estimate == pytest.approx(0.75)


def test_basic_window_count_uneven():
    bl = est.basic_windows(2.0, 0.3)
    assert len(bl) == 7 and bl[-1] == pytest.approx(0.2) and bl.sum() == pytest.approx(2.0)


def test_literal_ideal_formula():
    r, s = _stats(10, F_R), _stats(20, F_S)
    *_, q, n_ideal = est.quality_grid(r, s, 1.0, 1.0, 1.0, 1.0, "ceil", ideal="literal")
    assert n_ideal == pytest.approx(0.1 * (10 * 20 * 2 + 20 * 10 * 2))
    # formula (10) counts twice the pairs the basic windows do: Q_L is halved
    assert q[1, 1] == pytest.approx(0.5)


def test_selectivity_by_delay_class_is_not_used():
    # late R tuples produced nothing: in the symmetric join every tuple probes, so its
    # own delay does not decide whether it joins; only sel(Max) enters (N_L)
    r = est.StreamStats(1.0, np.array([0.0, 2.0]), np.array([4.0, 0.0]),
                        np.array([4.0, 4.0]), 2.0)
    s = est.StreamStats(1.0, np.array([0.0]), np.array([0.0]), np.array([0.0]), 0.0)
    dx, dy, q, n_ideal = est.quality_grid(r, s, 1.0, 1.0, 1.0, 1.0, "ceil")
    assert n_ideal == pytest.approx(0.5 * (1.0 * 1.0 + 1.0 * 1.0))
    # the R tuple 2 s late needs S's buffer: dy is searched up to R's largest delay,
    # and below 1 s its pairs are lost whatever dx; that it produced nothing does not
    # move the estimate
    assert dx.tolist() == dy.tolist() == [0, 1, 2]
    np.testing.assert_allclose(q, [[0.5, 0.75, 1.0]] * 3)


def test_bad_rule_raises():
    with pytest.raises(ValueError, match="coarse_delay rule"):
        est.coarse_delay([0.1], 0.01, "floor")
