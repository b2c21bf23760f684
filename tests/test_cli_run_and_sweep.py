"""What ``testbed run`` and ``testbed sweep`` print: a rerun of a complete run says it
was skipped; a sweep with a point that cannot run fails with one line before any
progress bar or run folder appears."""
from __future__ import annotations

import pytest

from testbed.cli import main

SPEC = """
[run]
name = "tiny"
duration = 4.0
step = 0.01
drain = 2.0
[topology]
generator = "complete"
nodes = 5
cost_range = [1, 10]
delay = 0.01
[streams]
count = 3
rate = 3.0
key_domain = 5
[query]
node = 0
window = 2.0
[algorithm]
name = "smj-h"
"""


def test_a_rerun_of_a_complete_run_says_it_was_skipped(tmp_path, capsys):
    spec = tmp_path / "tiny.toml"
    spec.write_text(SPEC)
    out = str(tmp_path / "runs")
    assert main(["run", str(spec), "--out", out]) == 0
    first = capsys.readouterr().out.splitlines()
    assert "skipped" not in first[0]
    folder = first[0]
    assert main(["run", str(spec), "--out", out]) == 0
    again = capsys.readouterr().out.splitlines()
    assert again[0] == f"{folder}: complete already, skipped (--force runs it again)"
    assert again[1] == first[1]      # the summary of the run on record
    assert main(["run", str(spec), "--out", out, "--force"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == folder


@pytest.mark.parametrize("grid, named", [
    ('"params.smj-h.perod" = [0.5, 1.0]', "params.smj-h.perod"),
    # valid at the first point, not at the second: still no run before the error
    ('"query.node" = [0, 99]', "query.node: node 99 is not in the topology"),
    ('"params.smj-h.period" = [1.0, "x"]', "params.smj-h.period: expected float"),
])
def test_a_sweep_point_that_cannot_run_fails_before_the_progress_bar(tmp_path, capfd,
                                                                     grid, named):
    spec = tmp_path / "typo.toml"
    spec.write_text(SPEC + f"[sweep]\nseeds = [1, 2]\n[sweep.grid]\n{grid}\n")
    out = tmp_path / "sweep"
    assert main(["sweep", str(spec), "--out", str(out)]) == 2
    captured = capfd.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {spec}: "), captured.err
    assert named in lines[0]
    assert "%|" not in captured.err and "run/s" not in captured.err   # no tqdm bar
    assert not out.exists()
