"""``testbed animate``: a short run drawn frame by frame (analysis.animate), as a GIF and
as a self-contained HTML page; bad folders and options are one line."""
import re

import numpy as np
import pytest
from PIL import Image, ImageChops

from analysis.animate import animate
from experiments.runner import run
from testbed.cli import main

SPEC = {"run": {"name": "watch", "duration": 4.0, "step": 0.05, "seed": 2,
                "memory_interval": 0.5},
        "topology": {"generator": "random_geometric", "nodes": 12, "radius": 0.45,
                     "delay": 0.02},
        "mobility": {"model": "random_waypoint", "speed": [0.05, 0.1],
                     "resolution": 0.25},
        "streams": {"count": 2, "rate": 4.0, "key_domain": 5},
        "query": {"node": 0, "window": 1.0},
        "energy": {"model": "first_order", "battery_j": 0.05, "idle_w": 0.004}}


@pytest.fixture(scope="module")
def moving_run(tmp_path_factory):
    return run(SPEC, out=tmp_path_factory.mktemp("runs"))


def test_a_gif_has_one_frame_per_instant_and_the_frames_change_as_nodes_move(
        moving_run, tmp_path):
    out = animate(moving_run.path, tmp_path / "run.gif", frames=6, fps=5, progress=False)
    assert out == tmp_path / "run.gif" and sorted(p.name for p in tmp_path.iterdir()) == [
        "run.gif"]                                   # no partial file left
    with Image.open(out) as gif:
        assert gif.n_frames == 6 and gif.size == (640, 640)
        gif.seek(0)
        first = gif.convert("RGB")
        gif.seek(5)
        last = gif.convert("RGB")
    changed = np.asarray(ImageChops.difference(first, last)).any(axis=2).mean()
    assert changed > 0.01, changed      # nodes moved, traffic differs, batteries drained


def test_an_html_page_embeds_every_frame(moving_run, tmp_path):
    out = animate(moving_run.path, tmp_path / "run.html", frames=4, progress=False)
    text = out.read_text()
    assert len(re.findall(r"data:image/png;base64", text)) == 4
    assert "<script" in text and not (tmp_path / "run_frames").exists()   # self-contained


@pytest.mark.parametrize("args, said", [
    (["animate", "{missing}", "-o", "{tmp}/a.gif"], "not a complete run folder"),
    (["animate", "{run}", "-o", "{tmp}/a.avi"], "expected a file ending in .gif, .mp4, .html"),
])
def test_bad_input_is_one_line(moving_run, tmp_path, capsys, args, said):
    argv = [a.format(missing=tmp_path / "nothing", tmp=tmp_path, run=moving_run.path)
            for a in args]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and said in err and err.count("\n") == 1


# In the full suite (make test-full, CI): make test keeps the animations themselves
# (the tests above) and the report's other sections.
@pytest.mark.full_suite
def test_the_report_shows_the_runs_animated_when_asked(moving_run, capsys):
    assert main(["report", str(moving_run.path), "--animate"]) == 0
    report = moving_run.path / "report" / "report.html"
    text = report.read_text()
    gif = report.parent / "animations" / f"{moving_run.path.name}.gif"
    assert f'src="animations/{gif.name}"' in text and "animations skipped" not in text
    with Image.open(gif) as frames:
        assert frames.n_frames == 40
