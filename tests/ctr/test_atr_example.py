"""The ATR worked example of docs/ALGORITHMS.md#atr (patent Fig. 7).

Rates 1 tuple/s, T = 5, W1 = W2 = 2, W3 = 3, master S1: hosts v1, v2, v3 get the S1
segments of seconds 1-5, 6-10, 11-15; S2 goes as seconds [1,7], [4,12], [9,17] and S3
as [1,7], [3,12], [8,17]. (The source prints S3's second range as [3,14]; with
W3 = 3 its own rule [t - W3, t + T + W1] gives [3,12], which is what is checked.)

Second k is the interval [k-1, k) and its tuple sits at ts = k - 0.5, so no tuple lies
on a segment boundary.
"""
from spark_nodes.algorithms.ctr.atr import AtrRouter
from spark_nodes.algorithms.ctr.load import LoadBoard
from spark_nodes.workload.tuples import StreamTuple


def seconds(tuples):
    return sorted(int(t.ts + 0.5) for t in tuples)


def test_worked_example_segments_and_hosts():
    board = LoadBoard(["v1", "v2", "v3"], (0.0, 1.0, 0.0), (1.0, 100.0, 1.0), 1.0)
    router = AtrRouter(["S1", "S2", "S3"], {"S1": 2.0, "S2": 2.0, "S3": 3.0}, 5.0, board,
                       master_switch=True)
    for name, last in (("S1", 15), ("S2", 17), ("S3", 17)):
        for k in range(1, last + 1):
            assert router.add(StreamTuple(name, k, k - 0.5, 0, None, None, 0))
    # the run ends before S1's next segment would start (at the end no segment is made
    # past the master's last tuple)
    parts = router.flush(5.0) + router.flush(10.0) + router.close()

    got = {}
    for p in parts:
        for t in p.tuples:
            got.setdefault((p.host, t.stream), []).append(t)
    assert seconds(got[("v1", "S1")]) == list(range(1, 6))
    assert seconds(got[("v2", "S1")]) == list(range(6, 11))
    assert seconds(got[("v3", "S1")]) == list(range(11, 16))
    assert seconds(got[("v1", "S2")]) == list(range(1, 8))
    assert seconds(got[("v2", "S2")]) == list(range(4, 13))
    assert seconds(got[("v3", "S2")]) == list(range(9, 18))
    assert seconds(got[("v1", "S3")]) == list(range(1, 8))
    assert seconds(got[("v2", "S3")]) == list(range(3, 13))
    assert seconds(got[("v3", "S3")]) == list(range(8, 18))
    # equal rates: S1 stays the master; one batch per host, each ended by a last part
    assert [s.master for s in router.new_segments] == ["S1"] * 3
    assert sorted(p.batch for p in parts if p.last) == [0, 1, 2]


def test_worked_example_overhead_matches_theorem_b():
    # Theorem B per segment: sum over slaves r_i (W_i + W_A) = 1*(2+2) + 1*(3+2) = 9;
    # the middle segment (v2) is the one not clipped by the streams' start or end.
    board = LoadBoard(["v1", "v2", "v3"], (0.0, 1.0, 0.0), (1.0, 100.0, 1.0), 1.0)
    router = AtrRouter(["S1", "S2", "S3"], {"S1": 2.0, "S2": 2.0, "S3": 3.0}, 5.0, board)
    for name in ("S1", "S2", "S3"):
        for k in range(1, 18):
            router.add(StreamTuple(name, k, k - 0.5, 0, None, None, 0))
    parts = router.flush(10.0) + router.flush(20.0) + router.close()
    middle = [t for p in parts if p.batch == 1 for t in p.tuples]
    own = [t for t in middle if 5.0 <= t.ts < 10.0]
    assert len(middle) - len(own) == 9
