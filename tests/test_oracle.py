"""Exact-answer oracle: hand-computed groups, brute-force agreement, scale."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spark_nodes.algorithms.oracle import count_groups, exact_groups, iter_groups, window_slice
from spark_nodes.workload.tuples import StreamTuple as T, group_id


def eq(stream, seq, ts, key):
    return T(stream, seq, ts, key, None, None, 0)


def pt(stream, seq, ts, x, y):
    return T(stream, seq, ts, None, x, y, 0)


def brute_force(data, windows, predicate, theta=None):
    out = set()
    for g in itertools.product(*data.values()):
        m = max(t.ts for t in g)
        if any(windows[t.stream] is not None and m - t.ts > windows[t.stream] for t in g):
            continue
        if predicate == "equality":
            if any(t.key is None for t in g) or len({t.key for t in g}) != 1:
                continue
        elif not all(math.hypot(a.x - b.x, a.y - b.y) <= theta
                     for a, b in itertools.combinations(g, 2)):
            continue
        out.add(group_id(g))
    return out


def test_three_way_equality_by_hand():
    data = {
        "R1": [eq("R1", 0, 0.0, 1), eq("R1", 1, 1.0, 2), eq("R1", 2, 4.0, 1)],
        "R2": [eq("R2", 0, 0.5, 1), eq("R2", 1, 2.5, 1), eq("R2", 2, 3.0, 2)],
        "R3": [eq("R3", 0, 2.0, 1), eq("R3", 1, 2.9, 2)],
    }
    w = {"R1": 2.0, "R2": 2.0, "R3": 2.0}
    # key 1: R1:0(0) R2:0(.5) R3:0(2): max 2, 2-0=2 ok -> group
    #        R1:0 R2:1(2.5) R3:0: max 2.5, 2.5-0 > 2 -> no
    #        R1:2(4) R2:1(2.5) R3:0(2): max 4, 4-2=2 ok, 4-2.5 ok -> group
    #        R1:2 R2:0(.5): 4-.5 > 2 -> no
    # key 2: R1:1(1) R2:2(3) R3:1(2.9): max 3, 3-1=2 -> group
    expected = {"R1:0|R2:0|R3:0", "R1:2|R2:1|R3:0", "R1:1|R2:2|R3:1"}
    assert exact_groups(data, w, "equality") == expected
    assert count_groups(data, w, "equality") == 3
    # a window of 1.9 on R1 removes the groups whose R1 member is 2 older than the max
    w2 = dict(w, R1=1.9)
    assert exact_groups(data, w2, "equality") == {"R1:2|R2:1|R3:0"}
    # unbounded windows: every same-key combination (key 1: 2*2*1, key 2: 1*1*1)
    assert count_groups(data, {s: None for s in data}, "equality") == 5


def test_distance_pairs_by_hand():
    data = {
        "A": [pt("A", 0, 0.0, 0.0, 0.0), pt("A", 1, 0.1, 10.0, 0.0)],
        "B": [pt("B", 0, 0.2, 3.0, 4.0), pt("B", 1, 0.3, 12.0, 0.0)],
        "C": [pt("C", 0, 0.3, 6.0, 0.0)],
    }
    w = {s: 1.0 for s in data}
    # A0-B0 = 5, A0-C0 = 6 > 5: A0 never in a 3-group; A1-B0 = 8.06 no;
    # A1-B1 = 2, A1-C0 = 4, B1-C0 = 6 > 5 -> no; theta 6 admits A1 B1 C0 and A0 B0 C0
    assert exact_groups(data, w, "distance", 5.0) == set()
    assert exact_groups(data, w, "distance", 6.0) == {"A:0|B:0|C:0", "A:1|B:1|C:0"}
    assert count_groups(data, w, "distance", 6.0) == 2
    two = {"A": data["A"], "B": data["B"]}
    assert exact_groups(two, {"A": 1, "B": 1}, "distance", 5.0) == {"A:0|B:0", "A:1|B:1"}


def test_equal_timestamps_and_zero_window():
    data = {"A": [eq("A", 0, 1.0, 3), eq("A", 1, 1.0, 3)],
            "B": [eq("B", 0, 1.0, 3), eq("B", 1, 1.5, 3)]}
    assert exact_groups(data, {"A": 0.0, "B": 0.0}, "equality") == {"A:0|B:0", "A:1|B:0"}


def test_missing_key_or_position_never_joins():
    data = {"A": [eq("A", 0, 0.0, None)], "B": [eq("B", 0, 0.0, None)]}
    assert exact_groups(data, {"A": 1, "B": 1}, "equality") == set()
    data = {"A": [pt("A", 0, 0.0, None, None)], "B": [pt("B", 0, 0.0, 0.0, 0.0)]}
    assert exact_groups(data, {"A": 1, "B": 1}, "distance", 1.0) == set()


def test_members_listed_in_stream_order():
    data = {"B": [eq("B", 0, 0.0, 1)], "A": [eq("A", 0, 1.0, 1)]}
    (g,) = list(iter_groups(data, {"A": 1, "B": 1}, "equality"))
    assert [m.stream for m in g] == ["B", "A"]


@pytest.mark.parametrize("kwargs, match", [
    (dict(predicate="like"), "unknown predicate"),
    (dict(predicate="distance"), "theta"),
    (dict(windows={"A": 1.0}), "no window for stream 'B'"),
    (dict(windows={"A": -1.0, "B": 1.0}), r"windows\['A'\]"),
])
def test_bad_query_raises(kwargs, match):
    args = dict(tuples_by_stream={"A": [], "B": []}, windows={"A": 1.0, "B": 1.0},
                predicate="equality")
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        exact_groups(**args)


def test_duplicate_and_misfiled_tuples_raise():
    with pytest.raises(ValueError, match="duplicate tuple A:0"):
        exact_groups({"A": [eq("A", 0, 0, 1), eq("A", 0, 1, 1)], "B": []},
                     {"A": 1, "B": 1}, "equality")
    with pytest.raises(ValueError, match="listed under stream 'A'"):
        exact_groups({"A": [eq("B", 0, 0, 1)], "B": []}, {"A": 1, "B": 1}, "equality")


def test_window_slice_matches_elementwise_conditions():
    rng = np.random.default_rng(3)
    for _ in range(200):
        ts = sorted(np.round(rng.uniform(0, 5, rng.integers(0, 12)), 1).tolist())
        t = float(np.round(rng.uniform(0, 5), 1))
        back, ahead = (float(np.round(v, 1)) for v in rng.uniform(0, 3, 2))
        i, j = window_slice(ts, t, back, ahead)
        assert [s for s in ts if t - s <= back and s - t <= ahead] == ts[i:j]


times = st.floats(0, 10, allow_nan=False).map(lambda v: round(v, 1))


@st.composite
def workloads(draw):
    n = draw(st.integers(2, 4))
    names = [f"S{i}" for i in range(n)]
    predicate = draw(st.sampled_from(["equality", "distance"]))
    data = {}
    for s in names:
        m = draw(st.integers(0, 5))
        data[s] = [T(s, i, draw(times), draw(st.integers(0, 2)),
                     draw(st.integers(0, 6)) * 1.0, draw(st.integers(0, 6)) * 1.0, 0)
                   for i in range(m)]
    windows = {s: draw(st.one_of(st.none(), times.map(lambda v: v / 2))) for s in names}
    theta = draw(st.sampled_from([0.0, 1.0, 2.5, 4.0])) if predicate == "distance" else None
    return data, windows, predicate, theta


@settings(max_examples=150, deadline=None)
@given(workloads())
def test_oracle_equals_brute_force(w):
    data, windows, predicate, theta = w
    expected = brute_force(data, windows, predicate, theta)
    assert exact_groups(data, windows, predicate, theta) == expected
    assert count_groups(data, windows, predicate, theta) == len(expected)


def test_large_workload_is_fast_and_matches_counting():
    # 10^5 tuples, 3 streams, key domain 20, window 3, rate 5 (per-stream rate 5 over
    # 6667 time units): the smj-style scale the oracle must handle.
    rng = np.random.default_rng(7)
    n = 100_000 // 3
    data = {}
    for s in ("R1", "R2", "R3"):
        ts = np.sort(rng.uniform(0, n / 5, n))
        keys = rng.integers(0, 20, n)
        data[s] = [T(s, i, float(a), int(k), None, None, 0) for i, (a, k) in enumerate(zip(ts, keys))]
    w = {s: 3.0 for s in data}
    groups = exact_groups(data, w, "equality")
    assert len(groups) == count_groups(data, w, "equality")
    # expected count: per tuple-as-last, the other two streams each hold on average
    # rate*W/keys = 0.75 matching tuples: about 3 * n * 0.75**2 groups
    assert abs(len(groups) / (3 * n * 0.75 ** 2) - 1) < 0.05
