"""AODV's packets (RFC 3561 §5) with their sizes on the wire.

A HELLO is a RREP with the sender as destination and a hop count of 0 (§6.9). Sizes are
the RFC's formats plus the IPv4 and UDP headers; flags (G, A) take no room of their own.

>>> rreq = Rreq(orig=0, orig_seq=1, rreq_id=1, dst=3, dst_seq=None, hops=0, ttl=1)
>>> rreq.bytes(), Rrep(3, 1, 0, 0, 6.0).bytes(), Rerr(((3, 2), (4, 1))).bytes()
(52, 48, 48)
>>> rreq.gratuitous, Rrep(3, 1, 0, 0, 6.0, ack=True).ack, RrepAck().bytes()
(False, True, 30)
"""
from __future__ import annotations

from typing import NamedTuple

from emulator.routing.base import IP_UDP_BYTES


class Rreq(NamedTuple):
    """A route request (§5.1). ``dst_seq`` None: unknown (the U flag)."""

    orig: int
    orig_seq: int
    rreq_id: int
    dst: int
    dst_seq: int | None
    hops: int
    ttl: int
    gratuitous: bool = False   # the G flag (§5.1, §6.6.3)

    def bytes(self) -> int:
        return IP_UDP_BYTES + 24


class Rrep(NamedTuple):
    """A route reply (§5.2): the route to ``dst`` for ``orig``; a HELLO when ``dst`` is
    its sender and ``hops`` 0."""

    dst: int
    dst_seq: int
    orig: int
    hops: int
    lifetime: float
    ack: bool = False          # the A flag: the next hop answers with a RREP-ACK (§5.2)

    def bytes(self) -> int:
        return IP_UDP_BYTES + 20


class Rerr(NamedTuple):
    """A route error (§5.3): the destinations now unreachable, ``((dst, seq), ...)``."""

    unreachable: tuple

    def bytes(self) -> int:
        return IP_UDP_BYTES + 4 + 8 * len(self.unreachable)


class RrepAck(NamedTuple):
    """A RREP-ACK (§5.4): the answer to a RREP with the A flag, to the neighbour that
    sent it (type and a reserved byte)."""

    def bytes(self) -> int:
        return IP_UDP_BYTES + 2
