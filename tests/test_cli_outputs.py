"""Output arguments the commands cannot use are one line and exit 2 before any work
(they used to fail after it, with a traceback): an output folder that is a file, an
output file in no folder, a rate interval that is not > 0."""
import pytest

from testbed.cli import main


@pytest.fixture
def place(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("")
    (tmp_path / "spec.toml").write_text('[run]\nname = "x"\n')
    (tmp_path / "run").mkdir()
    return tmp_path


@pytest.mark.parametrize("argv, line", [
    (["run", "spec.toml", "--out", "afile"],
     "error: afile: --out: expected a folder (or a name for a new one), got a file"),
    (["sweep", "spec.toml", "--out", "afile"],
     "error: afile: --out: expected a folder (or a name for a new one), got a file"),
    (["report", "run", "--out", "afile"],
     "error: afile: --out: expected a folder (or a name for a new one), got a file"),
    (["rates", "run", "-o", "no/such/r.csv"],
     "error: no/such/r.csv: --output: expected a file in an existing folder (no folder "
     "no/such)"),
    (["profile", "run", "-o", "run"],
     "error: run: --output: expected a file name, got a folder"),
])
def test_an_unusable_output_is_one_line_and_exit_2(place, capsys, argv, line):
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == line


@pytest.mark.parametrize("interval", ["0", "-1", "nan", "inf", "x"])
def test_a_rate_interval_must_be_positive(place, capsys, interval):
    with pytest.raises(SystemExit) as stop:
        main(["rates", "run", "-o", "r.csv", "--interval", interval])
    assert stop.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"testbed rates: error: argument --interval: expected a number > 0, got "
        f"'{interval}'")
