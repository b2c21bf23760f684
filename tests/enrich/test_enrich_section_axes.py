"""The enrichment section holds a study's own swept axes apart (issue 57): one row per
mode and value of every other axis, its stall cut paired within it."""
import pandas as pd
import pytest

from analysis.enrich_section import _table, per_mode


def test_modes_are_tabulated_per_value_of_the_other_axes():
    rows = []
    for variant, slow in (("near", 1.0), ("far", 4.0)):
        for seed in (1, 2):
            for mode, stall in (("on-demand", 2.0 * slow), ("eager", 0.5 * slow)):
                rows.append({"algorithm": f"enrich-{mode}", "mode": mode, "seed": seed,
                             "variant": variant, "stall_time_total": stall + seed,
                             "results": 5, "expected_results": 5, "duplicates": 0})
    frame = per_mode(pd.DataFrame(rows))
    assert frame.attrs["others"] == ["variant"]
    assert frame[["mode", "variant"]].values.tolist() == [
        ["on-demand", "far"], ["on-demand", "near"], ["eager", "far"], ["eager", "near"]]
    far = frame[(frame["mode"] == "eager") & (frame["variant"] == "far")].iloc[0]
    assert far["stall_time_total"] == pytest.approx(3.5)          # (3 + 4) / 2
    # paired within "far": 1 - 3/9 and 1 - 4/10
    assert far["stall_reduction"] == pytest.approx(((1 - 3 / 9) + (1 - 4 / 10)) / 2)
    assert far["where"] == "variant = far"
    assert "<th>variant</th>" in _table(frame)
