"""docs/tutorial.ipynb runs from top to bottom and computes what its text says.

The notebook is executed with nbclient in a kernel of this interpreter (the project's
virtual environment), in a temporary folder: its last cell prints one JSON line of key
figures, which the test reads back from the executed notebook.
"""
import json
import os
import sys
from pathlib import Path

import nbclient   # nbclient and ipykernel come with the test extra (setup.cfg)
import nbformat
import pytest
from ipykernel import kernelspec

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "docs" / "tutorial.ipynb"
#: Seconds one cell may take (the whole notebook takes about 6 s on a quiet machine).
CELL_TIMEOUT = 300


def test_notebook_is_stored_without_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    dirty = [i for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
             and (cell.outputs or cell.execution_count is not None)]
    assert dirty == [], f"cells {dirty} keep outputs: store the notebook clean"


def _kernel_env(monkeypatch, tmp_path: Path):
    """A ``python3`` kernel spec of this interpreter, found before any other, and a
    kernel whose temporary files and project imports are this test's and this tree's."""
    jupyter = tmp_path / "jupyter"
    # JUPYTER_PATH comes before the user's and the environment's kernel folders, so a
    # python3 kernel installed elsewhere cannot run the notebook on another interpreter.
    kernelspec.write_kernel_spec(jupyter / "kernels" / "python3")
    monkeypatch.setenv("JUPYTER_PATH", str(jupyter))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("TMPDIR", str(tmp_path))   # the notebook's tempfile folder
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)


def _key_figures(nb) -> dict:
    last = [cell for cell in nb.cells if cell.cell_type == "code"][-1]
    text = "".join(out.get("text", "") for out in last.outputs
                   if out.output_type == "stream" and out.name == "stdout")
    lines = [line for line in text.splitlines() if line.startswith("{")]
    assert len(lines) == 1, f"the last cell should print one JSON line, printed {text!r}"
    return json.loads(lines[0])


@pytest.mark.slow
def test_tutorial_runs_and_computes_what_it_says(monkeypatch, tmp_path):
    _kernel_env(monkeypatch, tmp_path)
    run_dir = tmp_path / "cwd"
    run_dir.mkdir()
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=CELL_TIMEOUT,
                                     startup_timeout=120,
                                     resources={"metadata": {"path": str(run_dir)}})
    client.execute()   # raises CellExecutionError, naming the cell, if any cell raises

    figures = _key_figures(nb)
    assert Path(figures["python"]) == Path(sys.executable)
    assert Path(figures["work"]).is_relative_to(tmp_path)
    # the network alone: one hop is serialization 0.1 + delay 0.05, as the text says;
    # sharing the channel delays the convergecast
    assert figures["links_first_arrival"] == pytest.approx(0.15)
    assert figures["shared_last_arrival"] > figures["links_last_arrival"]
    assert 0.4 < figures["delivered_share"] < 0.65      # 0.9 ** 6 = 0.53, 200 messages
    # one run: the centralized join is exact, also with 0.5 of lateness allowed;
    # SMJH is exact on a reliable network and cheaper than shipping every tuple
    assert figures["centralized_recall"] == 1.0
    assert figures["retention_0.5_recall"] == 1.0
    assert figures["smj_h_recall"] == 1.0
    assert figures["smj_h_cost"] < figures["naive_cost"]
    assert figures["sweep_runs"] == 6
