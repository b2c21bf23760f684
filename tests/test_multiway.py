"""Incremental multi-way join: equals the oracle in and out of order, expiry, probe order."""

import pickle

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spark_nodes.algorithms.multiway import MultiwayJoin
from spark_nodes.algorithms.oracle import exact_groups
from spark_nodes.workload.tuples import StreamTuple as T, group_id


def eq(stream, seq, ts, key, size=1.0):
    return T(stream, seq, ts, key, None, None, 0, size)


def run(join, arrivals):
    out = []
    for t in arrivals:
        out.extend(join.insert(t))
    return out


def test_group_emitted_when_last_member_arrives():
    j = MultiwayJoin(["A", "B", "C"], {"A": 2.0, "B": 2.0, "C": 2.0}, "equality")
    assert j.insert(eq("C", 0, 3.0, 1)) == []
    assert j.insert(eq("A", 0, 1.0, 1)) == []   # late, but C:0 waits for a B
    assert j.insert(eq("B", 0, 5.5, 1)) == []   # 5.5 - 1.0 > 2: not with A:0
    got = j.insert(eq("B", 1, 2.0, 1))
    assert [group_id(g) for g in got] == ["A:0|B:1|C:0"]
    assert [m.stream for m in got[0]] == ["A", "B", "C"]
    # A:1 at 4.0: with B:1, C:0 the max is 4.0 and 4.0 - 2.0 <= 2; with B:0 5.5 - 3.0 > 2
    assert [group_id(g) for g in j.insert(eq("A", 1, 4.0, 1))] == ["A:1|B:1|C:0"]
    # A:2 at 3.6 completes A:2,B:0,C:0? 5.5-3.0 > 2 no; A:2,B:1,C:0: 3.6-2.0 <= 2 yes
    assert [group_id(g) for g in j.insert(eq("A", 2, 3.6, 1))] == ["A:2|B:1|C:0"]


def test_distance_groups_check_every_pair():
    j = MultiwayJoin(["A", "B", "C"], {"A": 1.0, "B": 1.0, "C": 1.0}, "distance", theta=5.0)
    j.insert(T("A", 0, 0.0, None, 0.0, 0.0, 0))
    j.insert(T("B", 0, 0.1, None, 4.0, 0.0, 0))
    # C:0 is within 5 of A (4.9) and of B (0.9)
    assert len(j.insert(T("C", 0, 0.2, None, 4.9, 0.0, 0))) == 1
    # C:1 is within 5 of A (-4.9) but 8.9 from B
    assert j.insert(T("C", 1, 0.3, None, -4.9, 0.0, 0)) == []


def test_expire_drops_only_unusable_tuples():
    j = MultiwayJoin(["A", "B"], {"A": 2.0, "B": None}, "equality")
    for i, ts in enumerate([0.0, 1.0, 2.0, 3.0]):
        j.insert(eq("A", i, ts, i % 2, size=2.0))
    j.insert(eq("B", 0, 0.5, 7))
    assert j.buffered() == (5, 9 * 32)
    # horizon 3.5: A tuples with 3.5 - ts > 2 go (0.0 and 1.0); B is unbounded and stays
    assert j.expire(3.5) == 2
    assert j.buffered() == (3, 5 * 32)
    assert [group_id(g) for g in j.insert(eq("B", 1, 3.5, 0))] == ["A:2|B:1"]
    # key 1: A:1 (expired) would match too, only A:3 is left
    assert [group_id(g) for g in j.insert(eq("B", 2, 3.5, 1))] == ["A:3|B:2"]


def test_retention_zero_is_exact_in_order_and_bounded():
    rng = np.random.default_rng(1)
    data = {}
    for s in ("R1", "R2", "R3"):
        ts = np.sort(rng.uniform(0, 200, 1000))
        data[s] = [eq(s, i, float(a), int(k)) for i, (a, k) in
                   enumerate(zip(ts, rng.integers(0, 20, 1000)))]
    w = {s: 3.0 for s in data}
    arrivals = sorted((t for ts in data.values() for t in ts), key=lambda t: t.ts)
    j = MultiwayJoin(list(data), w, "equality", retention=0.0)
    peak = 0
    got = []
    for t in arrivals:
        got.extend(j.insert(t))
        peak = max(peak, j.buffered()[0])
    ids = [group_id(g) for g in got]
    assert len(ids) == len(set(ids))
    assert set(ids) == exact_groups(data, w, "equality")
    # 3 streams x rate 5 x window 3 = 45 tuples in window on average
    assert peak < 100


def test_retention_loses_groups_of_tuples_later_than_allowed():
    j = MultiwayJoin(["A", "B"], {"A": 1.0, "B": 1.0}, "equality", retention=0.5)
    j.insert(eq("A", 0, 1.0, 1))
    j.insert(eq("A", 1, 5.0, 2))       # horizon 4.5 drops A:0 (4.5 - 1.0 > 1)
    assert j.insert(eq("B", 0, 1.2, 1)) == []
    j2 = MultiwayJoin(["A", "B"], {"A": 1.0, "B": 1.0}, "equality", retention=None)
    j2.insert(eq("A", 0, 1.0, 1))
    j2.insert(eq("A", 1, 5.0, 2))
    assert len(j2.insert(eq("B", 0, 1.2, 1))) == 1


def test_probe_order_follows_observed_selectivity():
    # B matches A's keys half as often as C does: after warm-up A probes B first
    j = MultiwayJoin(["A", "B", "C"], {s: None for s in "ABC"}, "equality")
    assert j.probe_order("A") == ["B", "C"]          # unobserved: stream order
    for i in range(4):
        j.insert(eq("B", i, 0.0, i % 4))              # keys 0,1,2,3
        j.insert(eq("C", i, 0.0, 0))                  # all key 0
    j.insert(eq("A", 0, 1.0, 0))
    assert j.selectivity("A", "B") == pytest.approx(1 / 4)
    assert j.selectivity("A", "C") == pytest.approx(1.0)
    j2 = MultiwayJoin(["A", "C", "B"], {s: None for s in "ABC"}, "equality")
    for i in range(4):
        j2.insert(eq("B", i, 0.0, i % 4))
        j2.insert(eq("C", i, 0.0, 0))
    j2.insert(eq("A", 0, 1.0, 0))
    assert j2.probe_order("A") == ["B", "C"]


def test_rejects_foreign_stream_and_bad_retention():
    j = MultiwayJoin(["A", "B"], {"A": 1, "B": 1}, "equality")
    with pytest.raises(ValueError, match="stream not in join"):
        j.insert(eq("Z", 0, 0.0, 1))
    with pytest.raises(ValueError, match="retention"):
        MultiwayJoin(["A", "B"], {"A": 1, "B": 1}, "equality", retention=-1.0)


def test_pickles_with_state():
    j = MultiwayJoin(["A", "B"], {"A": 1, "B": 1}, "distance", theta=1.0)
    j.insert(T("A", 0, 0.0, None, 0.0, 0.0, 0))
    j2 = pickle.loads(pickle.dumps(j))
    assert len(j2.insert(T("B", 0, 0.5, None, 0.5, 0.5, 0))) == 1


times = st.integers(0, 40).map(lambda v: v / 4)


@st.composite
def workloads(draw):
    n = draw(st.integers(2, 5))
    names = [f"S{i}" for i in range(n)]
    predicate = draw(st.sampled_from(["equality", "distance"]))
    data = {}
    for s in names:
        m = draw(st.integers(0, 6 if n <= 3 else 4))
        data[s] = [T(s, i, draw(times), draw(st.integers(0, 2)),
                     draw(st.floats(-5, 5, allow_nan=False)),
                     draw(st.floats(-5, 5, allow_nan=False)), 0) for i in range(m)]
    windows = {s: draw(st.one_of(st.none(), st.floats(0, 6, allow_nan=False))) for s in names}
    theta = draw(st.floats(0, 8, allow_nan=False)) if predicate == "distance" else None
    arrivals = [t for ts in data.values() for t in ts]
    perm = draw(st.permutations(range(len(arrivals))))
    return data, windows, predicate, theta, [arrivals[i] for i in perm]


@settings(max_examples=200, deadline=None)
@given(workloads())
def test_equals_oracle_out_of_order_unbounded_retention(w):
    data, windows, predicate, theta, arrivals = w
    j = MultiwayJoin(list(data), windows, predicate, theta=theta)
    ids = [group_id(g) for g in run(j, arrivals)]
    assert len(ids) == len(set(ids))
    assert set(ids) == exact_groups(data, windows, predicate, theta)


@settings(max_examples=200, deadline=None)
@given(workloads())
def test_equals_oracle_in_order_with_zero_retention(w):
    data, windows, predicate, theta, arrivals = w
    in_order = sorted(arrivals, key=lambda t: t.ts)
    j = MultiwayJoin(list(data), windows, predicate, theta=theta, retention=0.0)
    ids = [group_id(g) for g in run(j, in_order)]
    assert len(ids) == len(set(ids))
    assert set(ids) == exact_groups(data, windows, predicate, theta)


@settings(max_examples=100, deadline=None)
@given(workloads())
def test_retention_covering_the_lateness_is_exact(w):
    data, windows, predicate, theta, arrivals = w
    # the largest lateness of this arrival order, the QJoin way
    seen, late = -np.inf, 0.0
    for t in arrivals:
        seen = max(seen, t.ts)
        late = max(late, seen - t.ts)
    j = MultiwayJoin(list(data), windows, predicate, theta=theta, retention=late)
    ids = {group_id(g) for g in run(j, arrivals)}
    assert ids == exact_groups(data, windows, predicate, theta)
