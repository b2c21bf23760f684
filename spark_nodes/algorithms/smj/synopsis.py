"""Synopsis vectors: per-key tuple counts, sparse on the wire, dense at the center.

``S_j[a]`` is the number of retained tuples of stream ``R_j`` with key ``a`` [source].
Sites send *sparse* increments ``ΔS`` and decrements ``∇S`` (keys with their counts);
one entry costs ``synopsis_unit`` data units. The center keeps all ``S_j`` as the rows
of one dense matrix that grows when a larger key appears.

>>> d = Sparse.of_keys([3, 4, 8, 3])
>>> d.keys.tolist(), d.counts.tolist(), d.entries
([3, 4, 8], [2, 1, 1], 3)
>>> table = SynopsisTable(2)
>>> table.add(0, d); table.add(0, Sparse.of_keys([3]), sign=-1)
>>> table.rows[0, :9].tolist()
[0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0]
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from contract.state import StateMap


@dataclass(frozen=True)
class Sparse:
    """A sparse synopsis: sorted distinct ``keys`` and their ``counts``."""

    keys: np.ndarray
    counts: np.ndarray

    @classmethod
    def of_keys(cls, keys) -> "Sparse":
        """Count the keys of some tuples (keys must be integers >= 0)."""
        arr = np.asarray(list(keys), dtype=np.int64)
        if arr.size and arr.min() < 0:
            raise ValueError(f"synopsis keys must be >= 0, got {int(arr.min())}")
        k, c = np.unique(arr, return_counts=True)
        return cls(k, c.astype(np.int64))

    @property
    def entries(self) -> int:
        """Number of non-zero entries (what the wire carries)."""
        return int(self.keys.size)


class SynopsisTable:
    """Dense synopses ``S_0..S_{n-1}`` as rows of one float matrix.

    Floats because order costs multiply counts of up to ``n`` streams. The non-zero
    counts are also kept by ``(row, key)`` in a :class:`~contract.state.StateMap` (a
    state row each on a runtime with a state store); the matrix is derived from them
    and not pickled.
    """

    def __init__(self, n: int, width: int = 64):
        self.rows = np.zeros((n, width))
        self.counts = StateMap()          # (row, key) -> count, non-zero only

    def __getstate__(self):
        return {"shape": self.rows.shape, "counts": self.counts}

    def __setstate__(self, state) -> None:
        self.rows = np.zeros(state["shape"])
        self.counts = state["counts"]
        for (row, key), value in self.counts.items():
            self.rows[row, key] = value

    def _ensure(self, key: int) -> None:
        width = self.rows.shape[1]
        if key >= width:
            new = max(key + 1, 2 * width)
            self.rows = np.pad(self.rows, ((0, 0), (0, new - width)))

    def add(self, row: int, delta: Sparse, sign: int = 1) -> None:
        """``S_row += sign · delta``; a count below zero means a lost update and raises."""
        if delta.entries == 0:
            return
        self._ensure(int(delta.keys.max()))
        self.rows[row, delta.keys] += sign * delta.counts
        if sign < 0 and self.rows[row, delta.keys].min() < 0:
            raise ValueError(f"synopsis row {row} went negative: a decrement without its "
                             f"increment")
        for key, value in zip(delta.keys.tolist(), self.rows[row, delta.keys].tolist()):
            if value:
                self.counts[(row, key)] = value
            else:
                self.counts.pop((row, key), None)

    def dense(self, delta: Sparse) -> np.ndarray:
        """``delta`` as a dense vector of the table's width (grows the table if needed)."""
        if delta.entries:
            self._ensure(int(delta.keys.max()))
        out = np.zeros(self.rows.shape[1])
        out[delta.keys] = delta.counts
        return out

    @property
    def entries(self) -> int:
        """Non-zero entries over all rows (the size of the table on the wire)."""
        return int(np.count_nonzero(self.rows))
