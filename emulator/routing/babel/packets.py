"""Babel's packet (RFC 8966 §4): one per transmission, holding TLVs.

A node sends a Hello (with IHUs for its neighbours every third), its routes as Updates
(a full dump each UPDATE_INTERVAL, single ones when a route changes) and seqno requests.
Sizes: IPv4 + UDP, the packet header (4), a Hello TLV (8), an IHU with an IPv4 address
(12), an Update with its Router-Id (12 + 16), a seqno request (20).

>>> BabelPacket(hello=7, ihus=((1, 96), (2, 96))).bytes()
64
>>> BabelPacket(updates=((3, 1, 96),)).bytes(), BabelPacket(requests=((3, 2, 64),)).bytes()
(60, 52)
"""
from __future__ import annotations

from typing import NamedTuple

from emulator.routing.base import IP_UDP_BYTES

#: The metric of an unreachable route (a retraction).
INFINITY = 0xFFFF


class BabelPacket(NamedTuple):
    """``hello``: its seqno, or None; ``ihus``: ``(neighbour, rxcost)``; ``updates``:
    ``(prefix, seqno, metric)``; ``requests``: ``(prefix, seqno, hop count)``."""

    hello: int | None = None
    ihus: tuple = ()
    updates: tuple = ()
    requests: tuple = ()

    def bytes(self) -> int:
        return (IP_UDP_BYTES + 4 + (8 if self.hello is not None else 0)
                + 12 * len(self.ihus) + 28 * len(self.updates) + 20 * len(self.requests))

    @property
    def type(self) -> str:
        """What it is mostly, for the control-traffic counts."""
        if self.hello is not None:
            return "HELLO"
        return "UPDATE" if self.updates else "REQUEST"
