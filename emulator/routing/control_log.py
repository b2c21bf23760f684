"""The control packets a routed run sent, one row each: :class:`ControlLog`, the table
:func:`emulator.deliver` returns beside the data (``attrs["control"]``) and the figures
(counts and bytes by type) the runs' summaries take.
"""
from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
from numba import njit


class ControlLog:
    """Every control transmission, ``(time, node, type, size_bytes)``, kept as columns:
    iterating gives the rows, :meth:`frame` the table ``emulator.deliver`` returns.
    AODV at 200 nodes and 10^5 messages sends 1.6 M control packets: as a tuple each
    they took pandas 0.78 s to turn into a frame (rows of mixed types are converted one
    value at a time), and the cyclic collector a scan of each. The host's Python
    appends one row at a time (lists); a compiled loop hands over many at once as
    arrays (:meth:`extend`), written after the rows appended before them into columns
    that double when full (joining 23 k blocks at the end took 0.26 s). A type is a
    code into the names in the order first sent, and the frame's ``type`` a
    categorical of them (1.6 M strings took 0.3 s more to make into a frame).

    >>> log = ControlLog()
    >>> log.append(0.5, 3, "RREQ", 24)
    >>> log.extend(np.array([0.75, 0.8, 0.85]), np.array([4, 5, 6]),  # a data row: -1
    ...            np.array([1, 0, -1]), np.array([20, 24, 64]), ("RREQ", "RREP"))
    >>> list(log), len(log)
    ([(0.5, 3, 'RREQ', 24), (0.75, 4, 'RREP', 20), (0.8, 5, 'RREQ', 24)], 3)
    >>> log.frame().dtypes.astype(str).tolist()
    ['float64', 'int64', 'category', 'int64']
    >>> log.frame()["type"].cat.categories.tolist()   # in the order first sent
    ['RREQ', 'RREP']
    >>> log.extend(np.array([0.9]), np.array([6]), np.array([2]), np.array([12]),
    ...            ("RREQ", "RREP", "RERR"))
    >>> log.count_by_type()
    Counter({'RREQ': 2, 'RREP': 1, 'RERR': 1})
    """

    __slots__ = ("_time", "_node", "_type", "_size", "_columns_kept", "_names", "_codes",
                 "_maps", "_count")

    def __init__(self):
        self._time, self._node, self._type, self._size = [], [], [], []
        # times, nodes, type codes, sizes: rows [0, _count) are the log's so far (but
        # those appended since); a code is a name's place in _names, which lists the
        # types in the order first sent
        self._columns_kept = (np.zeros(1024), *np.zeros((3, 1024), np.int64))
        self._names: list[str] = []
        self._codes: dict[str, int] = {}
        self._maps: dict[tuple, np.ndarray] = {}   # extend's names -> their codes
        self._count = 0

    def append(self, t: float, node: int, kind: str, size_bytes: int) -> None:
        self._time.append(t)
        self._node.append(node)
        self._type.append(kind)
        self._size.append(size_bytes)

    def extend(self, times, nodes, codes, sizes, names) -> None:
        """Transmissions, in order, as four arrays: their type is ``names[code]``; a
        row whose code is negative is not a control packet's and is left out (a
        compiled loop's staged rows, data and control packets together). One compiled
        pass: the loop's 11 k hand-overs at 10^5 messages took 0.4 s as a dozen numpy
        calls each."""
        self._keep_rows()
        mine = self._maps.get(names)   # the log's code of each of names, -1: none yet
        if mine is None:
            mine = self._maps[names] = np.full(len(names), -1, np.int64)
        self._reserve(len(times))
        while True:
            at = _log_rows(times, nodes, codes, sizes, mine, *self._columns_kept,
                           self._count)
            if at >= 0:
                self._count = at
                return
            # a type sent for the first time: coded now, so codes follow the order
            # first sent, and the rows written again
            mine[-1 - at] = self._code(names[-1 - at])

    def __iter__(self):
        times, nodes, _, sizes = self._columns()
        return zip(times.tolist(), nodes.tolist(), self.types(), sizes.tolist())

    def types(self) -> list:
        """Every transmission's type, in order."""
        codes = self._columns()[2]   # first: it names the types appended since
        return np.array(self._names, object)[codes].tolist()

    def sizes(self) -> list:
        """Every transmission's size in bytes, in order."""
        return self._columns()[3].tolist()

    def __len__(self) -> int:
        return self._count + len(self._time)

    def bytes_by_type(self) -> Counter:
        """The bytes sent, by type, the types in the order first sent (one pass in
        numpy: a loop over AODV's 1.6 M rows took 0.2 s).

        >>> log = ControlLog()
        >>> for kind, size in (("RREQ", 24), ("RREP", 20), ("RREQ", 24)):
        ...     log.append(0.0, 1, kind, size)
        >>> log.bytes_by_type(), log.count_by_type()
        (Counter({'RREQ': 48, 'RREP': 20}), Counter({'RREQ': 2, 'RREP': 1}))
        """
        return self._by_type(self._columns()[3])

    def count_by_type(self) -> Counter:
        """The transmissions, by type, the types in the order first sent."""
        return self._by_type(None)

    def _by_type(self, weights) -> Counter:
        codes = self._columns()[2]   # numbered in the order first sent
        sums = np.bincount(codes, weights=weights, minlength=len(self._names))
        return Counter(dict(zip(self._names, sums.astype(np.int64).tolist())))

    def frame(self) -> pd.DataFrame:
        """The log as a frame: ``time``, ``node``, ``type`` (categorical, the types in
        the order first sent), ``size_bytes``."""
        times, nodes, codes, sizes = self._columns()
        # views of the columns, not copies (rows written are never written again):
        # 40 MB copied into new memory took 0.22 s at the end of an AODV run
        return pd.DataFrame({"time": times, "node": nodes,
                             "type": pd.Categorical.from_codes(codes, self._names),
                             "size_bytes": sizes}, copy=False)

    def _code(self, name: str) -> int:
        code = self._codes.get(name)
        if code is None:
            code = self._codes[name] = len(self._names)
            self._names.append(name)
        return code

    def _keep_rows(self) -> None:
        """The rows appended one at a time so far, into the columns."""
        if self._time:
            self._write(self._time, self._node, [self._code(kind) for kind in self._type],
                        self._size)
            self._time, self._node, self._type, self._size = [], [], [], []

    def _reserve(self, count: int) -> None:
        """Room for ``count`` more rows: the columns doubled if they would not fit."""
        at, kept = self._count, self._columns_kept
        if at + count > len(kept[0]):
            room = max(2 * len(kept[0]), at + count)
            grown = []
            for column in kept:
                bigger = np.zeros(room, column.dtype)
                bigger[:at] = column[:at]
                grown.append(bigger)
            self._columns_kept = tuple(grown)

    def _write(self, times, nodes, codes, sizes) -> None:
        """Rows at the end of the columns."""
        at, count = self._count, len(times)
        self._reserve(count)
        for column, values in zip(self._columns_kept, (times, nodes, codes, sizes)):
            column[at:at + count] = values
        self._count = at + count

    def _columns(self) -> tuple:
        """The four columns, every row so far (views)."""
        self._keep_rows()
        count = self._count
        return tuple(column[:count] for column in self._columns_kept)


@njit(cache=True, _nrt=False)
def _log_rows(times, nodes, codes, sizes, mine, log_times, log_nodes, log_codes, log_sizes,
              at):
    """The rows of non-negative ``codes`` written at ``at`` on in the log's columns (room
    made), their codes mapped by ``mine``; returns the end, or ``-1 - code`` for the
    first code ``mine`` has none for yet (nothing is counted written then)."""
    for k in range(len(codes)):
        code = codes[k]
        if code >= 0:
            if mine[code] < 0:
                return -1 - code
            log_times[at], log_nodes[at], log_codes[at] = times[k], nodes[k], mine[code]
            log_sizes[at] = sizes[k]
            at += 1
    return at
