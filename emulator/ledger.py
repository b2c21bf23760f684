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
        self._floats = np.empty((len(FLOATS), 0))
        self._ints = np.empty((len(INTS), 0), np.int64)
        self._count = 0

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
        at = self._count
        if at + n > self._floats.shape[1]:
            size = max(4096, 2 * (at + n))
            self._floats = _grown(self._floats, size)
            self._ints = _grown(self._ints, size)
        self._count = at + n
        return self._floats, self._ints, at

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
        n = self._count
        columns = {name: self._floats[i, :n] for i, name in enumerate(FLOATS)}
        columns.update((name, self._ints[i, :n]) for i, name in enumerate(INTS))
        names = np.array(list(self.kinds) or [""], dtype=object)
        columns["kind"] = pd.array(names[columns["kind"]], dtype="string")
        columns["lost"] = columns["lost"].astype(bool)
        # the product of two float64 columns is the Python product of each row's floats
        columns["cost"] = columns["size_units"] * columns["link_cost"]
        order = np.lexsort((columns["msg_id"], columns["time"]))   # stable, last key first
        # the columns taken in order are new arrays: the frame holds them as they are
        # (copying them into one block per type cost 0.12 s at 458,000 hops)
        return pd.DataFrame({name: columns[name][order] for name in COLUMNS}, copy=False)


def _grown(columns: np.ndarray, size: int) -> np.ndarray:
    """``columns`` (one row per column) with room for ``size`` values each."""
    grown = np.empty((columns.shape[0], size), columns.dtype)
    grown[:, :columns.shape[1]] = columns
    return grown


def empty_frame() -> pd.DataFrame:
    """A ledger with no rows but the right columns and types."""
    return Ledger().frame()
