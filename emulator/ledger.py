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

from operator import itemgetter

import numpy as np
import pandas as pd

#: Ledger columns, in order (docs/DESIGN.md).
COLUMNS = ("time", "msg_id", "kind", "src", "dst", "hop_u", "hop_v", "size_units",
           "size_bytes", "link_cost", "cost", "lost")
_DTYPES = {"time": "float64", "msg_id": "int64", "kind": "string", "src": "int64",
           "dst": "int64", "hop_u": "int64", "hop_v": "int64", "size_units": "float64",
           "size_bytes": "int64", "link_cost": "float64", "cost": "float64", "lost": "bool"}


#: The columns a row holds; ``cost`` is derived from them when the frame is built.
ROW = tuple(c for c in COLUMNS if c != "cost")


class Ledger:
    """Append-only store of hop rows: one tuple per hop (the cheapest append in the hot
    path); columns are built once, at the end, ``cost`` among them.

    A transport's hop loop appends through :attr:`append` (one tuple in :data:`ROW`
    order) rather than :meth:`add`: a method call with eleven arguments costs a tenth of a
    hop.

    >>> led = Ledger()
    >>> led.append((0.5, 1, "data", 0, 2, 0, 1, 2.0, 88, 3.0, False))
    >>> float(led.frame()["cost"].iloc[0])
    6.0
    """

    def __init__(self):
        self._rows: list[tuple] = []
        # hops recorded in blocks of columns (the compiled hop loop, emulator.links)
        self._blocks: list[dict] = []
        self._block_rows = 0

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

    def extend(self, columns: dict) -> None:
        """Record a block of hops given as one array per column of :data:`ROW` (``kind``
        as an array of strings, fixed-width or objects); they count as recorded after every row
        :attr:`append` added so far.

        >>> led = Ledger()
        >>> led.extend({"time": np.array([0.5]), "msg_id": np.array([1]),
        ...             "kind": np.array(["data"], dtype=object), "src": np.array([0]),
        ...             "dst": np.array([2]), "hop_u": np.array([0]), "hop_v": np.array([1]),
        ...             "size_units": np.array([2.0]), "size_bytes": np.array([88]),
        ...             "link_cost": np.array([3.0]), "lost": np.array([False])})
        >>> len(led), float(led.frame()["cost"].iloc[0])
        (1, 6.0)
        """
        if self._rows:   # rows appended before the block keep their place
            self._blocks.append(self._columns_of_rows())
            self._rows = []
        self._blocks.append(columns)
        self._block_rows += len(columns["time"])

    def __len__(self) -> int:
        return len(self._rows) + self._block_rows

    def _columns_of_rows(self) -> dict:
        """The rows appended so far, as columns of :data:`ROW`."""
        rows, columns = self._rows, {}
        for i, name in enumerate(ROW):
            values = map(itemgetter(i), rows)
            if _DTYPES[name] == "string":
                columns[name] = np.array(list(values), dtype=object)
            else:
                columns[name] = np.fromiter(values, dtype=_DTYPES[name], count=len(rows))
        return columns

    def frame(self) -> pd.DataFrame:
        """The ledger as a DataFrame sorted by (time, msg_id) — stable, so hops of one
        message keep their order.

        Built column by column straight into typed arrays: ``DataFrame.from_records``
        goes through one object array of every cell and converts it (0.8 s for 458,000
        hops against 0.3 s)."""
        blocks = self._blocks + [self._columns_of_rows()]
        columns = {}
        for name in ROW:
            parts = [block[name] for block in blocks]
            column = parts[0] if len(parts) == 1 else np.concatenate(parts)
            columns[name] = (pd.array(column, dtype="string") if _DTYPES[name] == "string"
                             else column.astype(_DTYPES[name], copy=False))
        # the product of two float64 columns is the Python product of each row's floats
        columns["cost"] = columns["size_units"] * columns["link_cost"]
        order = np.lexsort((columns["msg_id"], columns["time"]))   # stable, last key first
        return pd.DataFrame({name: columns[name][order] for name in COLUMNS})


def empty_frame() -> pd.DataFrame:
    """A ledger with no rows but the right columns and types."""
    return Ledger().frame()
