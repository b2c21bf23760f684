"""The message that crosses the emulated network.

>>> m = Message(3, "data", 0, 5, 1.25, 2.0, 88, ["t1", "t2"])
>>> m.kind, m.size_units
('data', 2.0)
"""
from __future__ import annotations

from typing import Any, NamedTuple

#: The kinds of message an algorithm may send (the ledger groups costs by them).
KINDS = ("data", "synopsis", "filter", "order", "report", "intermediate", "result", "control")


class Message(NamedTuple):
    """One message: ``size_units`` is what communication cost counts, ``size_bytes`` what
    the wire carries (header + units x bytes per unit)."""

    msg_id: int
    kind: str
    src: int
    dst: int
    sent_at: float
    size_units: float
    size_bytes: int
    payload: Any


def wire_bytes(size_units: float, bytes_per_unit: int, header_bytes: int) -> int:
    """Bytes a message of ``size_units`` occupies on the wire.

    >>> wire_bytes(2.5, 32, 24)
    104
    """
    return int(header_bytes + round(size_units * bytes_per_unit))
