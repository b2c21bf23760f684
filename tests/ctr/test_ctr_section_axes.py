"""The ATR/CTR report section holds a study's own swept axes apart (issue 57): its
per-configuration means and its rule of thumb are per value of every other axis, not
pooled over them."""
import pandas as pd

from analysis.ctr_section import configurations, other_axes, rule_of_thumb


def _info() -> pd.DataFrame:
    # ATR and CTR on one configuration at two speeds, two seeds each: CTR is cheaper
    # when still, ATR when moving
    rows = []
    for speed, atr, ctr in ((0.0, 10.0, 6.0), (0.05, 8.0, 12.0)):
        for seed in (1, 2):
            for alg, cost in (("atr", atr), ("ctr", ctr)):
                rows.append({"algorithm": alg, "algorithm.name": alg, "seed": seed,
                             "mobility.speed_mean": speed, "n": 3, "window": 8.0,
                             "skew": 1.0, "hosts": 4, "comm_cost_per_time": cost + seed,
                             "overhead_measured": cost / 2})
    return pd.DataFrame(rows)


def test_configurations_and_the_rule_are_per_value_of_the_other_axes():
    info = _info()
    others = other_axes(info)
    assert others == ["mobility.speed_mean"]
    conf = configurations(info, others)
    assert len(conf) == 4 and (conf["seeds"] == 2).all()
    still = conf[(conf["algorithm"] == "ctr") & (conf["mobility.speed_mean"] == 0.0)]
    assert still["comm_cost_per_time"].iloc[0] == 7.5          # (7 + 8) / 2
    rule, _ = rule_of_thumb(conf, "ctr", others)
    assert rule[["mobility.speed_mean", "winner"]].values.tolist() == [[0.0, "ctr"],
                                                                       [0.05, "atr"]]
