"""The ledger's columns: rows written in place block by block, and rows appended, come
out as one frame in recording order (sorted by time and message, stably)."""
import numpy as np
import pandas as pd

from emulator.ledger import FLOATS, INTS, Ledger, _time_order


def _rows(rng, n):
    """``n`` hop rows in :data:`emulator.ledger.ROW` order, times in steps of 0.5 so
    that many tie (the sort must keep recording order among them)."""
    return [(float(rng.integers(0, 40)) / 2, int(rng.integers(0, 50)),
             ("data", "ack", "routing")[int(rng.integers(0, 3))], int(rng.integers(0, 9)),
             int(rng.integers(0, 9)), int(rng.integers(0, 9)), int(rng.integers(0, 9)),
             float(rng.random()), int(rng.integers(24, 200)), float(rng.random()),
             bool(rng.random() < 0.1)) for _ in range(n)]


def test_blocks_written_in_place_equal_the_same_rows_appended():
    """10,000 rows in hand-overs of 1 to 3,000 rows (so the blocks fill and new ones
    start mid-run, 4,096 rows first), some appended as tuples between them: the frame
    equals that of a ledger given every row by ``add``, cell for cell."""
    rng = np.random.default_rng(5)
    blocks, appended = Ledger(), Ledger()
    written = 0
    while written < 10_000:
        n = int(rng.choice([1, 7, 300, 3000]))
        rows = _rows(rng, n)
        if rng.random() < 0.2:
            for row in rows:
                blocks.append(row)
        else:
            floats, ints, at = blocks.reserve(n)
            for j, row in enumerate(rows):
                named = dict(zip(("time", "msg_id", "kind", "src", "dst", "hop_u", "hop_v",
                                  "size_units", "size_bytes", "link_cost", "lost"), row))
                named["kind"] = blocks.kind_code(named["kind"])
                floats[:, at + j] = [named[c] for c in FLOATS]
                ints[:, at + j] = [int(named[c]) for c in INTS]
        for row in rows:
            appended.add(*row)
        written += n
    assert len(blocks) == len(appended) == written
    assert len(blocks._full) >= 2   # the rows crossed blocks
    pd.testing.assert_frame_equal(blocks.frame(), appended.frame())


def test_the_frame_orders_rows_as_lexsort_by_time_then_message():
    """Many ties (times in steps of 0.5, few messages), nearly ordered and shuffled
    rows: the order is lexsort's, which the frame used before."""
    rng = np.random.default_rng(11)
    for n in (0, 1, 2, 50, 3000):
        time = rng.integers(0, 20, n) / 2
        msg_id = rng.integers(0, 6, n)
        nearly = np.sort(time) + (rng.random(n) < 0.05) * rng.integers(-2, 3, n)
        for times in (time, nearly):
            assert np.array_equal(_time_order(times, msg_id), np.lexsort((msg_id, times)))
