"""Worked numbers of docs/ALGORITHMS.md#qjoin-worked-example for Q_L*, basic windows, Q_L and Algorithm 1."""
import numpy as np
import pytest

from spark_nodes.algorithms.qjoin import estimator as est

F_R = {0: .5, 1: .3, 2: .2}
F_S = {0: .6, 1: .2, 2: .2}


def _stats(rate, f, per_tuple_cmp=10.0, per_tuple_res=1.0):
    # delays 0, 1, 2 with the "ceil" rule have coarse delays 0, 1, 2 at g = 1
    delays = np.concatenate([np.full(int(round(p * rate)), float(d)) for d, p in f.items()])
    n = delays.size
    return est.StreamStats(rate=float(rate), delays=delays,
                           results=np.full(n, per_tuple_res),
                           comparisons=np.full(n, per_tuple_cmp), max_delay=2.0)


def _grid():
    return est.quality_grid(_stats(10, F_R), _stats(20, F_S), w=4.0, L=1.0, b=1.0, g=1.0,
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
    cr = est.coarse_delay(_stats(10, F_R).delays, 1.0, "ceil")
    ws = est.window_counts(20, lambda k: est.delay_cdf(cs, k), [0, 1, 2], 4, 1, 1)
    wr = est.window_counts(10, lambda k: est.delay_cdf(cr, k), [0, 1, 2], 4, 1, 1)
    assert ws.tolist() == pytest.approx([68, 76, 80])
    assert wr.tolist() == pytest.approx([33, 38, 40])


def test_cross_join_and_quality_worked():
    dx, dy, q, n_ideal = _grid()
    assert dx.tolist() == [0, 1, 2] and dy.tolist() == [0, 1, 2]
    assert n_ideal == pytest.approx(0.1 * 1600)
    assert q[0, 0] == pytest.approx(1340 / 1600)
    assert q[2, 2] == pytest.approx(1.0)
    assert q[1, 0] == pytest.approx(1440 / 1600)


@pytest.mark.parametrize("target, dxdy, xy", [
    (0.89, (1, 0), (50, 80)), (0.93, (1, 1), (50, 100)), (1.0, (2, 2), (60, 120))])
def test_algorithm1_worked(target, dxdy, xy):
    dx, dy, q, _ = _grid()
    got = est.algorithm1(q, target, dx, dy, 10, 20, 4.0)
    assert got[:2] == dxdy and got[2:4] == pytest.approx(xy) and got[4] is True


def test_algorithm1_unreachable_gives_largest():
    dx, dy, q, _ = _grid()
    assert est.algorithm1(q * 0.5, 0.99, dx, dy, 10, 20, 4.0) == (2.0, 2.0, 60.0, 120.0, False)


def test_choose_buffers_infeasible_uses_largest():
    r, s = _stats(10, F_R), _stats(20, F_S)
    choice, target = est.choose_buffers(r, s, 4.0, 1.0, 1.0, 1.0, 0.9, 900, 790,
                                        coarse_rule="ceil")
    # N_L = 160 here: (0.9 * 1060 - 790) / 160 = 1.025 > 1
    assert target == 1.0 and not choice.feasible
    assert (choice.dx, choice.dy, choice.x, choice.y) == (2.0, 2.0, 60.0, 120.0)


def test_choose_buffers_feasible_target():
    r, s = _stats(10, F_R), _stats(20, F_S)
    # Q_L* = (0.9 * (900 + 160) - 811.6) / 160 = 0.89
    choice, target = est.choose_buffers(r, s, 4.0, 1.0, 1.0, 1.0, 0.9, 900, 811.6,
                                        coarse_rule="ceil")
    assert target == pytest.approx(0.89)
    assert (choice.dx, choice.dy, choice.x, choice.y) == (1.0, 0.0, 50.0, 80.0)
    assert choice.q_estimate == pytest.approx(0.9)


def test_basic_window_count_uneven():
    bl = est.basic_windows(2.0, 0.3)
    assert len(bl) == 7 and bl[-1] == pytest.approx(0.2) and bl.sum() == pytest.approx(2.0)


def test_literal_ideal_formula():
    r, s = _stats(10, F_R), _stats(20, F_S)
    *_, n_ideal = est.quality_grid(r, s, 4.0, 1.0, 1.0, 1.0, "ceil", ideal="literal")
    assert n_ideal == pytest.approx(0.1 * (10 * 20 * 6 + 20 * 10 * 6))


def test_selectivity_varies_with_delay():
    # late R tuples produce nothing: sel(dx=0) is higher than sel(Max)
    r = est.StreamStats(1.0, np.array([0.0, 2.0]), np.array([4.0, 0.0]),
                        np.array([4.0, 4.0]), 2.0)
    s = est.StreamStats(1.0, np.array([0.0]), np.array([0.0]), np.array([0.0]), 0.0)
    dx, dy, q, n_ideal = est.quality_grid(r, s, 1.0, 1.0, 1.0, 1.0, "ceil")
    assert n_ideal == pytest.approx(0.5 * (1.0 * 1.0 + 1.0 * 1.0))
    assert q[0, 0] == pytest.approx(min(1.0, 1.0 * (1 + 0.5) / n_ideal))


def test_bad_rule_raises():
    with pytest.raises(ValueError, match="coarse_delay rule"):
        est.coarse_delay([0.1], 0.01, "floor")
