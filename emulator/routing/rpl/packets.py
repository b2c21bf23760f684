"""RPL's control messages (RFC 6550 §6), ICMPv6 in an uncompressed IPv6 header (40
bytes) with the ICMPv6 header (4):

- DIO (§6.3): RPLInstanceID, Version Number, Rank, flags, DTSN, DODAGID (24 bytes);
- DIS (§6.2): flags and reserved (2 bytes);
- DAO (§6.4): the base object without DODAGID (4 bytes: the K flag, asking for an
  acknowledgement, and the DAOSequence), one RPL Target option per target (20 bytes: an
  IPv6 /128) and one Transit Information option (6 bytes) for them all. A lifetime of 0
  makes it a No-Path DAO. A node's targets that do not fit one DAO of ``max_dao_bytes``
  go in several (:func:`dao_pieces`), DAOSequences in a row, numbered (``part``) and
  all but the last flagged ``more`` (in the base object's reserved bits: no byte more;
  not in the RFC, which has no pieces);
- DAO-ACK (§6.5): RPLInstanceID, flags, DAOSequence, status (4 bytes).

Node ids stand for IPv6 addresses; the path sequence (§6.7.8) travels with each target.

>>> Dio(version=0, rank=256).bytes(), Dis().bytes(), Dao(((3, 1), (5, 2)), 1800.0).bytes()
(68, 46, 94)
>>> DaoAck(sequence=4).bytes()
48
>>> [(len(d.targets), d.more, d.bytes()) for d in dao_pieces(tuple((u, 1) for u in range(7)),
...                                                          1800.0, 116)]
[(3, True, 114), (3, True, 114), (1, False, 74)]
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
    more: bool = False
    part: int = 0
    type: str = "DAO"

    def bytes(self) -> int:
        return DAO_BASE_BYTES + DAO_TARGET_BYTES * len(self.targets)


#: A DAO's bytes but its targets' (headers, base object, Transit Information option),
#: and a target's (its RPL Target option).
DAO_BASE_BYTES, DAO_TARGET_BYTES = ICMP6_BYTES + 4 + 6, 20


def targets_per_dao(max_bytes: int) -> int:
    """How many targets a DAO of at most ``max_bytes`` carries (at least one).

    >>> targets_per_dao(116), targets_per_dao(74), targets_per_dao(10 ** 6) > 1000
    (3, 1, True)
    """
    return max(1, (max_bytes - DAO_BASE_BYTES) // DAO_TARGET_BYTES)


def dao_pieces(targets: tuple, lifetime: float, max_bytes: int, sequence: int = 0,
               ack: bool = False) -> list[Dao]:
    """``targets`` in as few DAOs of at most ``max_bytes`` as hold them, in order,
    numbered from DAOSequence ``sequence`` on, all but the last flagged ``more``, each
    asking for its DAO-ACK with ``ack``."""
    per = targets_per_dao(max_bytes)
    chunks = [targets[i:i + per] for i in range(0, len(targets), per)] or [()]
    last = len(chunks) - 1
    return [Dao(chunk, lifetime, sequence + i, ack, i < last, i)
            for i, chunk in enumerate(chunks)]


class DaoAck(NamedTuple):
    sequence: int
    type: str = "DAO-ACK"

    def bytes(self) -> int:
        return ICMP6_BYTES + 4
