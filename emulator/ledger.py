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

import pandas as pd

#: Ledger columns, in order (docs/DESIGN.md).
COLUMNS = ("time", "msg_id", "kind", "src", "dst", "hop_u", "hop_v", "size_units",
           "size_bytes", "link_cost", "cost", "lost")
_DTYPES = {"time": "float64", "msg_id": "int64", "kind": "string", "src": "int64",
           "dst": "int64", "hop_u": "int64", "hop_v": "int64", "size_units": "float64",
           "size_bytes": "int64", "link_cost": "float64", "cost": "float64", "lost": "bool"}


class Ledger:
    """Append-only, column-wise store of hop rows (cheap to append in the hot path)."""

    def __init__(self):
        self._cols: dict[str, list] = {c: [] for c in COLUMNS}

    def add(self, time, msg_id, kind, src, dst, hop_u, hop_v, size_units, size_bytes,
            link_cost, lost):
        """Record one hop; ``cost`` is derived."""
        c = self._cols
        c["time"].append(time)
        c["msg_id"].append(msg_id)
        c["kind"].append(kind)
        c["src"].append(src)
        c["dst"].append(dst)
        c["hop_u"].append(hop_u)
        c["hop_v"].append(hop_v)
        c["size_units"].append(size_units)
        c["size_bytes"].append(size_bytes)
        c["link_cost"].append(link_cost)
        c["cost"].append(size_units * link_cost)
        c["lost"].append(lost)

    def __len__(self) -> int:
        return len(self._cols["time"])

    def frame(self) -> pd.DataFrame:
        """The ledger as a DataFrame sorted by (time, msg_id) — stable, so hops of one
        message keep their order."""
        df = pd.DataFrame(self._cols, columns=list(COLUMNS)).astype(_DTYPES)
        return df.sort_values(["time", "msg_id"], kind="stable").reset_index(drop=True)


def empty_frame() -> pd.DataFrame:
    """A ledger with no rows but the right columns and types."""
    return Ledger().frame()
