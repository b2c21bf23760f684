"""Reorder buffers: MP-K-slack's worked case (docs/ALGORITHMS.md#mp-k-slack) and K-slack's rule."""
import pytest

from spark_nodes.algorithms.qjoin.kslack import KSlack
from spark_nodes.algorithms.qjoin.mpkslack import MPKSlack


def test_mp_k_slack_worked_case():
    mp = MPKSlack()
    released, ks = [], []
    for ts in (1, 2, 5, 3, 4, 6, 8, 7, 9):
        released += mp.insert(float(ts), ts)
        ks.append(mp.k)
    assert released == [1, 2, 5, 3, 4, 6, 7]
    assert mp.flush() == [8, 9] and mp.k == 2.0
    # K grows only when tcurr advances, with the delays seen since the last advance
    assert ks == [0, 0, 0, 0, 0, 2, 2, 2, 2]


def test_mp_k_slack_holds_until_slack_passes():
    mp = MPKSlack()
    assert mp.insert(10.0, "a") == ["a"]
    assert mp.insert(7.0, "late") == []          # D = 3, K still 0 until tcurr advances
    assert mp.insert(10.5, "b") == ["late"]      # K = 3: 7 + 3 <= 10.5; b waits
    assert len(mp) == 1 and mp.buffered() == ["b"]


def test_k_slack_releases_in_timestamp_order():
    ks = KSlack(1.0)
    out = []
    for ts in (0.0, 0.5, 2.0, 0.2, 3.5, 1.0):
        out += ks.insert(ts, ts)
    # 0.2 and 1.0 arrive after their release points passed: out at once, out of order
    assert out == [0.0, 0.5, 0.2, 2.0, 1.0]
    assert ks.flush() == [3.5]


def test_k_slack_rejects_bad_k():
    with pytest.raises(ValueError, match="K must be"):
        KSlack(-1.0)
