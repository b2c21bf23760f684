"""The ledger: one row per hop of every message, the basis of every cost figure.

Communication cost is ``size_units x link_cost`` summed over hops (the SMJ definition).

>>> led = Ledger()
>>> led.add(0.5, 1, "data", 0, 2, 0, 1, 2.0, 88, 3.0, False)
>>> led.add(0.6, 1, "data", 0, 2, 1, 2, 2.0, 88, 1.5, False)
>>> df = led.frame()
>>> float(df["cost"].sum()), list(df["hop_v"])
(9.0, [1, 2])
"""
from __future__ import annotations

import numpy as np
import pandas as pd

#: Ledger columns, in order (docs/DESIGN.md).
COLUMNS = ("time", "msg_id", "kind", "src", "dst", "hop_u", "hop_v", "size_units",
           "size_bytes", "link_cost", "cost", "lost")

#: The columns a row holds; ``cost`` is derived from them when the frame is built.
ROW = tuple(c for c in COLUMNS if c != "cost")
#: How the columns are kept: the float ones, and the others as int64 (``kind`` as a
#: code, :attr:`Ledger.kinds`; ``lost`` as 0 or 1).
FLOATS = ("time", "size_units", "link_cost")
INTS = ("msg_id", "kind", "src", "dst", "hop_u", "hop_v", "size_bytes", "lost")


class Ledger:
    """Append-only store of hop rows, kept as columns in the order recorded; ``cost``
    is derived when the frame is built.

    Two ways in, for the two kinds of hop loop:

    - a Python loop appends one tuple per hop through :attr:`append` (in :data:`ROW`
      order: the cheapest append in a hot path; a method call with eleven arguments
      costs a tenth of a hop). The tuples are moved into the columns before anything
      else is recorded, so they keep their place;
    - a compiled loop writes its hops straight into the columns: :meth:`reserve` gives
      it the rows (``kind`` as a code of :meth:`kind_code`). Blocks of columns handed
      over per driver step and joined at the end cost more than the hops (ten
      thousand small blocks: 0.3 s of a 2.4 s run).

    >>> led = Ledger()
    >>> led.append((0.5, 1, "data", 0, 2, 0, 1, 2.0, 88, 3.0, False))
    >>> float(led.frame()["cost"].iloc[0])
    6.0
    """

    def __init__(self):
        self._rows: list[tuple] = []
        #: Message kind -> the code the columns hold for it.
        self.kinds: dict[str, int] = {}
        # the columns in blocks, each one row per column: the full ones, then the one
        # being filled (``_used`` of its rows taken); ``_count`` rows in all
        self._full: list[tuple[np.ndarray, np.ndarray]] = []
        self._floats = np.empty((len(FLOATS), 0))
        self._ints = np.empty((len(INTS), 0), np.int64)
        self._used = 0
        self._count = 0
        # a MAC's transmission attempts of a hop, by row number (rows not listed: 1);
        # the frame has an ``attempts`` column only when some are noted
        self._attempts: dict[int, int] = {}

    @property
    def append(self):
        """Record one hop given as a tuple in :data:`ROW` order (a list's own append:
        fetch it once, outside the loop)."""
        return self._rows.append

    def add(self, time, msg_id, kind, src, dst, hop_u, hop_v, size_units, size_bytes,
            link_cost, lost):
        """Record one hop; ``cost`` is derived."""
        self.append((time, msg_id, kind, src, dst, hop_u, hop_v, size_units, size_bytes,
                     link_cost, lost))

    def note_attempts(self, row: int, attempts: int) -> None:
        """The hop recorded as row ``row`` (``len(ledger)`` before it was added) took
        ``attempts`` transmissions (a MAC's retries): the frame then has an ``attempts``
        column, 1 where none was noted.

        >>> led = Ledger()
        >>> led.add(0.5, 1, "data", 0, 2, 0, 1, 2.0, 88, 3.0, False)
        >>> led.note_attempts(len(led), 3)
        >>> led.add(0.2, 2, "data", 0, 2, 0, 1, 2.0, 88, 3.0, False)
        >>> led.frame()["attempts"].tolist()
        [3, 1]
        """
        self._attempts[row] = attempts

    def kind_code(self, kind: str) -> int:
        """The code of message kind ``kind`` in the columns (a new one if unseen)."""
        code = self.kinds.get(kind)
        if code is None:
            code = self.kinds[kind] = len(self.kinds)
        return code

    def reserve(self, n: int) -> tuple[np.ndarray, np.ndarray, int]:
        """The next ``n`` rows, to be written in place: ``(floats, ints, at)``, rows
        ``at .. at + n`` of the columns :data:`FLOATS` (``floats[i]`` is column
        ``FLOATS[i]``) and :data:`INTS` (``lost`` as 0 or 1). They count as recorded
        from now on, after every row appended so far.

        >>> led = Ledger()
        >>> floats, ints, at = led.reserve(1)
        >>> floats[:, at] = (0.5, 2.0, 3.0)
        >>> ints[:, at] = (1, led.kind_code("data"), 0, 2, 0, 1, 88, 0)
        >>> led.frame()[["kind", "hop_v", "cost"]].values.tolist()
        [['data', 1, 6.0]]
        """
        if self._rows:
            self._move_rows()
        at = self._used
        if at + n > self._floats.shape[1]:
            self._new_block(n)
            at = 0
        self._used = at + n
        self._count += n
        return self._floats, self._ints, at

    def _new_block(self, n: int) -> None:
        """Close the block being filled and start one with room for ``n`` rows and at
        least as many as recorded so far (so there are few blocks). Blocks are joined
        once, by :meth:`frame`: a block copied into one twice its size at each growth
        wrote 4-7 times the ledger's final size into new memory, and new memory is slow
        to touch in a process that holds much (458,000 hops of ``bench_emulator``'s
        transport, run after its emulation: 0.11-0.13 s of growth against 0.03 s in a
        fresh process)."""
        if self._used:
            self._full.append((self._floats[:, :self._used], self._ints[:, :self._used]))
        size = max(4096, n, self._count)
        self._floats = np.empty((len(FLOATS), size))
        self._ints = np.empty((len(INTS), size), np.int64)
        self._used = 0

    def _column(self, block: int, i: int) -> np.ndarray:
        """Column ``i`` of :data:`FLOATS` (``block`` 0) or :data:`INTS` (1), its blocks
        joined (the one being filled alone is returned as a view)."""
        parts = [full[block][i] for full in self._full]
        last = (self._floats, self._ints)[block][i, :self._used]
        return np.concatenate(parts + [last]) if parts else last

    def extend(self, columns: dict) -> None:
        """Record a block of hops given as one array per column of :data:`ROW` (``kind``
        as an array of strings); they count as recorded after every row so far.

        >>> led = Ledger()
        >>> led.extend({"time": np.array([0.5]), "msg_id": np.array([1]),
        ...             "kind": np.array(["data"], dtype=object), "src": np.array([0]),
        ...             "dst": np.array([2]), "hop_u": np.array([0]), "hop_v": np.array([1]),
        ...             "size_units": np.array([2.0]), "size_bytes": np.array([88]),
        ...             "link_cost": np.array([3.0]), "lost": np.array([False])})
        >>> len(led), float(led.frame()["cost"].iloc[0])
        (1, 6.0)
        """
        n = len(columns["time"])
        floats, ints, at = self.reserve(n)
        for i, name in enumerate(FLOATS):
            floats[i, at:at + n] = columns[name]
        codes = {kind: self.kind_code(kind) for kind in set(columns["kind"])}
        for i, name in enumerate(INTS):
            ints[i, at:at + n] = ([codes[kind] for kind in columns["kind"]]
                                  if name == "kind" else columns[name])

    def __len__(self) -> int:
        return len(self._rows) + self._count

    def _move_rows(self) -> None:
        """The rows appended so far, into the columns."""
        rows, self._rows = self._rows, []
        self.extend({name: [row[i] for row in rows] for i, name in enumerate(ROW)})

    def frame(self) -> pd.DataFrame:
        """The ledger as a DataFrame sorted by (time, msg_id) — stable, so hops of one
        message keep their order.

        Built column by column straight into typed arrays: ``DataFrame.from_records``
        goes through one object array of every cell and converts it (0.8 s for 458,000
        hops against 0.3 s)."""
        if self._rows:
            self._move_rows()
        order = _time_order(self._named("time"), self._named("msg_id"))
        names = pd.Index(list(self.kinds) or [""], dtype=object)
        frame = {}
        for name in COLUMNS:   # one column at a time: a joined block lives only here
            if name == "cost":
                # the product of two float64 columns is the Python product of each
                # row's floats
                column = self._named("size_units") * self._named("link_cost")
            else:
                column = self._named(name)
            column = column[order]
            if name == "kind":
                # through the few names, not a string per row: 22 -> 7 ms at 458,000
                column = pd.Categorical.from_codes(column, categories=names).astype("string")
            elif name == "lost":
                column = column.astype(bool)
            frame[name] = column
        if self._attempts:
            attempts = np.ones(len(order), np.int64)
            attempts[list(self._attempts)] = list(self._attempts.values())
            frame["attempts"] = attempts[order]
        # the columns taken in order are new arrays: the frame holds them as they are
        # (copying them into one block per type cost 0.12 s at 458,000 hops)
        return pd.DataFrame(frame, copy=False)

    def _named(self, name: str) -> np.ndarray:
        """The column ``name`` of :data:`FLOATS` or :data:`INTS`, whole."""
        return (self._column(0, FLOATS.index(name)) if name in FLOATS
                else self._column(1, INTS.index(name)))


def _time_order(time: np.ndarray, msg_id: np.ndarray) -> np.ndarray:
    """The rows' order by ``time``, then ``msg_id``, then as recorded: what
    ``np.lexsort((msg_id, time))`` gives.

    The rows come nearly in time order, which a stable sort of the times alone takes in
    a few milliseconds; lexsort took 65-130 ms for 458,000 hops. Only rows of equal
    times are then sorted by message.

    >>> _time_order(np.array([2.0, 1.0, 1.0, 1.0]), np.array([0, 9, 3, 3])).tolist()
    [2, 3, 1, 0]
    """
    order = np.argsort(time, kind="stable")
    in_order = time[order]
    tie = np.flatnonzero(in_order[1:] == in_order[:-1])
    if len(tie):
        # the rows of each run of equal times, sorted among themselves (a run's rows
        # stay in its places: the times around them differ)
        # (a mask, not np.union1d: both are sorted already, and union1d sorts again;
        # 40 ms of a 458,000-hop ledger's frame)
        tied = np.zeros(len(time), np.bool_)
        tied[tie] = tied[tie + 1] = True
        at = np.flatnonzero(tied)
        rows = order[at]
        order[at] = rows[np.lexsort((rows, msg_id[rows], time[rows]))]
    return order


def empty_frame() -> pd.DataFrame:
    """A ledger with no rows but the right columns and types."""
    return Ledger().frame()
