"""RPL's control messages (RFC 6550 §6), ICMPv6 in an uncompressed IPv6 header (40
bytes) with the ICMPv6 header (4):

- DIO (§6.3): RPLInstanceID, Version Number, Rank, flags, DTSN, DODAGID (24 bytes);
- DIS (§6.2): flags and reserved (2 bytes);
- DAO (§6.4): the base object without DODAGID (4 bytes: the K flag, asking for an
  acknowledgement, and the DAOSequence), one RPL Target option per target (20 bytes: an
  IPv6 /128) and one Transit Information option (6 bytes) for them all. A lifetime of 0
  makes it a No-Path DAO;
- DAO-ACK (§6.5): RPLInstanceID, flags, DAOSequence, status (4 bytes).

Node ids stand for IPv6 addresses; the path sequence (§6.7.8) travels with each target.

>>> Dio(version=0, rank=256).bytes(), Dis().bytes(), Dao(((3, 1), (5, 2)), 1800.0).bytes()
(68, 46, 94)
>>> DaoAck(sequence=4).bytes()
48
"""
from __future__ import annotations

from typing import NamedTuple

#: IPv6 header and ICMPv6 header.
ICMP6_BYTES = 40 + 4
#: The rank a node that is not in the DODAG advertises (RFC 6550 §17: 0xFFFF).
INFINITE_RANK = 0xFFFF


class Dio(NamedTuple):
    version: int
    rank: int
    type: str = "DIO"

    def bytes(self) -> int:
        return ICMP6_BYTES + 24


class Dis(NamedTuple):
    type: str = "DIS"

    def bytes(self) -> int:
        return ICMP6_BYTES + 2


class Dao(NamedTuple):
    """``targets``: ``(node, path sequence)``; ``lifetime`` in time units (0: No-Path);
    ``sequence``: the DAOSequence; ``ack``: the K flag."""

    targets: tuple
    lifetime: float
    sequence: int = 0
    ack: bool = False
    type: str = "DAO"

    def bytes(self) -> int:
        return ICMP6_BYTES + 4 + 20 * len(self.targets) + 6


class DaoAck(NamedTuple):
    sequence: int
    type: str = "DAO-ACK"

    def bytes(self) -> int:
        return ICMP6_BYTES + 4
