"""Every command of the ``testbed`` CLI on missing, empty and garbage arguments: a
one-line error and a non-zero exit, never a Python traceback."""
from __future__ import annotations

import subprocess
import sys

import pytest

from testbed.cli import main

GARBAGE = b"\x00\xff\xfegarbage{{[["


@pytest.fixture
def junk(tmp_path):
    """A folder of bad inputs: a missing name, an empty folder, binary and text junk."""
    (tmp_path / "empty").mkdir()
    for name in ("junk.toml", "junk.json", "junk.graphml", "junk.ns_movements", "junk.csv"):
        (tmp_path / name).write_bytes(GARBAGE)
    (tmp_path / "text.toml").write_text("[run\nseed = = 3\n")
    (tmp_path / "text.json").write_text("{not json")
    return tmp_path


COMMANDS = [
    ["run", "missing.toml"], ["run", "junk.toml"], ["run", "text.toml"], ["run", "empty"],
    ["run", "junk.toml", "--seed", "-5"], ["run", "junk.toml", "--seed", "x"],
    ["run", "junk.toml", "--backend", "nope"], ["run"],
    ["sweep", "missing.toml"], ["sweep", "junk.toml"], ["sweep", "text.toml"],
    ["sweep", "empty"], ["sweep"], ["sweep", "junk.toml", "--jobs", "0"],
    ["sweep", "junk.toml", "--jobs", "x"], ["sweep", "junk.toml", "--jobs", "2", "--engine",
                                             "spark"],
    ["report", "missing"], ["report", "empty"], ["report", "junk.toml"], ["report"],
    ["algorithms", "extra"],
    ["profile", "missing", "-o", "p.json"], ["profile", "empty", "-o", "p.json"],
    ["profile", "junk.toml", "-o", "p.json"], ["profile", "empty"],
    ["rates", "missing", "-o", "r.csv"], ["rates", "empty", "-o", "r.csv"], ["rates"],
    ["topology"], ["topology", "validate"], ["topology", "validate", "missing.json"],
    ["topology", "validate", "empty"], ["topology", "validate", "junk.toml"],
    ["topology", "validate", "junk.json"], ["topology", "validate", "text.json"],
    ["topology", "validate", "junk.graphml"], ["topology", "validate", "junk.ns_movements"],
    ["topology", "validate", "junk.csv"],
    ["topology", "validate", "junk.csv", "--topology", "missing.json"],
    ["topology", "show", "junk.json", "-o", "x.png"],
    ["topology", "show", "missing.json", "-o", "x.png"],
    ["topology", "show", "text.json"],
    ["bogus"], [],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a) or "(nothing)")
def test_bad_arguments_give_one_line_and_a_non_zero_exit(junk, monkeypatch, capsys, argv):
    monkeypatch.chdir(junk)
    try:
        code = main(argv)
    except SystemExit as stop:       # argparse's own usage errors
        code = stop.code
    err = capsys.readouterr().err.strip()
    assert code not in (0, None)
    assert "Traceback" not in err
    assert err.splitlines()[-1].startswith(("error:", "testbed")), err
    # argparse prints its usage line first; the testbed's own errors are one line
    if err.startswith("error:"):
        assert len(err.splitlines()) == 1, err


def test_the_console_script_prints_no_traceback(junk):
    """The same through a real process, as a user's shell runs it."""
    for argv in (["run", "junk.toml"], ["topology", "validate", "junk.json"],
                 ["report", "empty"]):
        proc = subprocess.run([sys.executable, "-m", "testbed.cli", *argv], cwd=junk,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode != 0
        assert "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
