"""The symmetric join core: worked cases and per-tuple == vectorized on random arrivals."""
import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spark_nodes.algorithms.qjoin.operator import SymmetricJoin, horizons, join_arrivals
from spark_nodes.workload.tuples import StreamTuple


def _tuples(side, ts, key=None, x=None, y=None):
    out = []
    for i, (k, t) in enumerate(zip(side, ts)):
        out.append(StreamTuple("RS"[k], i, float(t), None if key is None else int(key[i]),
                               None if x is None else float(x[i]),
                               None if y is None else float(y[i]), 0))
    return out


def _per_tuple(side, tuples, w, predicate="equality", theta=None, allow=(0.0, 0.0),
               purge="window", cap=(math.inf, math.inf)):
    j = SymmetricJoin(w, predicate, theta, purge)
    for k in (0, 1):
        j.set_allowance(k, allow[k])
        j.set_capacity(k, cap[k])
    later, earlier, cmps = [], [], []
    for i, (k, t) in enumerate(zip(side, tuples)):
        partners, c, _ = j.arrive(k, t)
        cmps.append(c)
        for p in partners:
            later.append(i)
            earlier.append(p.seq)
    return later, earlier, cmps, j


def test_purge_window_rule_drops_old_partner():
    # R@0 is purged once T = 3.5 passes 0 + w + d = 3
    side, ts = [0, 1, 1, 0, 1], [0.0, 0.5, 3.5, 4.0, 1.9]
    later, earlier, _, j = _per_tuple(side, _tuples(side, ts, key=[1] * 5), w=2.0,
                                      allow=(1.0, 1.0))
    assert list(zip(later, earlier)) == [(1, 0), (3, 2)]
    assert j.horizon == [0.5, 0.5]


def test_literal_purge_rule_keeps_less():
    side, ts = [0, 1, 0, 1], [0.0, 1.0, 2.0, 1.5]
    later, earlier, _, _ = _per_tuple(side, _tuples(side, ts, key=[1] * 4), w=2.0,
                                      allow=(0.5, 0.5), purge="literal")
    # T = 2.0 at the last arrival: R@0 is gone (0 <= 1.5), R@2 remains
    assert list(zip(later, earlier)) == [(1, 0), (2, 1), (3, 2)]


def test_capacity_evicts_oldest_by_timestamp():
    side, ts = [0, 0, 0, 1], [2.0, 1.0, 3.0, 2.0]
    later, earlier, cmps, j = _per_tuple(side, _tuples(side, ts, key=[1] * 4), w=5.0,
                                         allow=(None, None), cap=(2, math.inf))
    assert earlier == [0, 2] and cmps == [0, 0, 0, 2]
    assert j.memory() == (3, 3.0)


def test_comparisons_count_window_not_predicate():
    side, ts = [0, 0, 0, 1], [0.0, 0.5, 9.0, 1.0]
    _, earlier, cmps, _ = _per_tuple(side, _tuples(side, ts, key=[1, 2, 1, 1]), w=2.0,
                                     allow=(None, None))
    assert earlier == [0] and cmps[-1] == 2


def test_delays_and_horizons():
    d, hr, hs = horizons([0, 0, 1, 0], [5.0, 3.0, 4.0, 6.0], w=1.0, allowance_r=None,
                         allowance_s=0.5)
    assert d.tolist() == [0.0, 2.0, 0.0, 0.0]
    assert hr.tolist() == [-math.inf, -math.inf, 1.0, 1.0]   # T stays 4 (S is behind)
    assert hs.tolist() == [-math.inf, -math.inf, 2.5, 2.5]


def test_pickles_mid_run():
    side, ts = [0, 1, 0], [0.0, 0.5, 1.0]
    *_, j = _per_tuple(side, _tuples(side, ts, key=[1, 1, 1]), w=1.0)
    j2 = pickle.loads(pickle.dumps(j))
    assert j2.memory() == j.memory()


arrivals = st.integers(min_value=1, max_value=60).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 1), min_size=n, max_size=n),
    st.lists(st.integers(0, 40), min_size=n, max_size=n),        # ts in steps of 0.25
    st.lists(st.integers(0, 3), min_size=n, max_size=n)))


@settings(max_examples=150, deadline=None)
@given(arrivals, st.sampled_from([0.0, 0.5, 1.0, None]), st.sampled_from([0.0, 0.75, None]),
       st.sampled_from(["window", "literal"]), st.sampled_from([0.5, 1.5]))
def test_vectorized_equals_per_tuple_equality(arr, ar, as_, purge, w):
    side, t, key = arr
    ts = np.asarray(t) * 0.25
    later, earlier, *_ = _per_tuple(side, _tuples(side, ts, key=key), w, allow=(ar, as_),
                                    purge=purge)
    vl, ve = join_arrivals(side, ts, w, key=key, allowance_r=ar, allowance_s=as_,
                           purge=purge)
    assert (vl.tolist(), ve.tolist()) == (later, earlier)


@settings(max_examples=100, deadline=None)
@given(arrivals, st.sampled_from([0.0, 0.5, None]), st.sampled_from([0.0, 1.0]))
def test_vectorized_equals_per_tuple_distance(arr, ar, as_):
    side, t, key = arr
    ts = np.asarray(t) * 0.25
    rng = np.random.default_rng(len(side))
    x, y = rng.uniform(0, 4, len(side)), rng.uniform(0, 4, len(side))
    later, earlier, *_ = _per_tuple(side, _tuples(side, ts, x=x, y=y), 1.0, "distance", 1.5,
                                    allow=(ar, as_))
    vl, ve = join_arrivals(side, ts, 1.0, "distance", x=x, y=y, theta=1.5,
                           allowance_r=ar, allowance_s=as_)
    assert (vl.tolist(), ve.tolist()) == (later, earlier)


def test_unbounded_join_finds_every_window_pair():
    rng = np.random.default_rng(3)
    n = 400
    side = rng.integers(0, 2, n)
    ts = np.sort(rng.uniform(0, 20, n)) + rng.exponential(0.3, n)
    key = rng.integers(0, 5, n)
    later, earlier = join_arrivals(side, ts, 1.0, key=key, allowance_r=np.inf,
                                   allowance_s=np.inf)
    brute = {(max(i, j), min(i, j)) for i in range(n) for j in range(n)
             if side[i] == 0 and side[j] == 1 and key[i] == key[j]
             and abs(ts[i] - ts[j]) <= 1.0}
    assert set(zip(later.tolist(), earlier.tolist())) == brute


def test_bad_predicate_raises():
    with pytest.raises(ValueError, match="predicate"):
        SymmetricJoin(1.0, "overlap")
    with pytest.raises(ValueError, match="theta"):
        SymmetricJoin(1.0, "distance")
