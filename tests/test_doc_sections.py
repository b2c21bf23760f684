"""Pages several scripts write (benchmarks/doc_sections.py): a script replaces its own
``## `` section and keeps the others; and the mobility validation's samples."""
from pathlib import Path

import numpy as np

from benchmarks import validate_mobility
from benchmarks.doc_sections import carry_over, with_section

PAGE = "# T\n\nintro\n\n## A\n\na\n\n## B\n\nb\n"


def test_a_section_is_replaced_in_place_or_appended():
    assert with_section(PAGE, "## A", "## A\n\nnew\n") == "# T\n\nintro\n\n## A\n\nnew\n\n## B\n\nb\n"
    assert with_section(PAGE, "## C", "## C\n\nc\n") == PAGE + "\n## C\n\nc\n"


def test_a_page_rewritten_whole_keeps_the_sections_others_wrote():
    rewritten = "# T2\n\n## B\n\nb2\n"
    assert carry_over(PAGE, rewritten) == "# T2\n\n## B\n\nb2\n\n## A\n\na\n"
    assert carry_over(PAGE, PAGE) == PAGE


def test_validation_page_holds_the_mobility_section_and_round_trips():
    page = (Path(__file__).resolve().parent.parent / "docs" / "VALIDATION.md").read_text()
    assert validate_mobility.HEADING in page.splitlines()
    assert carry_over(page, page) == page


def test_link_durations_of_disjoint_pairs_leave_shared_nodes_out():
    # 4 nodes apart, 8 samples: 0-1 meet for 3 samples, 2-3 for 2, 0-2 (no disjoint
    # pair) for 2
    xy = np.zeros((8, 4, 2))
    xy[:, 1], xy[:, 2], xy[:, 3] = [500.0, 0.0], [0.0, 500.0], [500.0, 500.0]
    xy[2:5, 1] = [5.0, 0.0]
    xy[1:3, 3] = [0.0, 495.0]
    xy[5:7, 2] = [0.0, 10.0]
    assert sorted(validate_mobility._link_durations(xy, disjoint=True)) == [2.0, 3.0]
    assert sorted(validate_mobility._link_durations(xy)) == [2.0, 2.0, 3.0]
