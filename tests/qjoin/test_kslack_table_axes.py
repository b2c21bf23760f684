"""The QJoin section's K-slack table holds a study's own swept axes apart (issue 57):
one row per value of every other axis and K, not means pooled over them."""
import pandas as pd
import pytest

from analysis.qjoin_stats import kslack_table


def test_kslack_is_tabulated_per_k_and_value_of_the_other_axes():
    rows = []
    for shadowing, loss in ((0.0, 0.0), (6.0, 0.3)):
        for K in (1.0, 4.0):
            for seed in (1, 2):
                rows.append({"algorithm": "k-slack", "params.k-slack.K": K, "seed": seed,
                             "radio.shadowing_db": shadowing,
                             "recall": 1.0 - loss - 0.1 / K, "recall_period_min": 0.5,
                             "latency_mean": K + seed, "latency_join_mean": K,
                             "memory": 10 * K})
    table = kslack_table(pd.DataFrame(rows))
    assert table[["radio.shadowing_db", "K", "seeds"]].values.tolist() == [
        [0.0, 1.0, 2], [0.0, 4.0, 2], [6.0, 1.0, 2], [6.0, 4.0, 2]]
    assert table["recall"].tolist() == pytest.approx([0.9, 0.975, 0.6, 0.675])
    assert table["latency_mean"].tolist() == pytest.approx([2.5, 5.5, 2.5, 5.5])
