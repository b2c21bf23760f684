"""OLSR's messages (RFC 3626 §3.3, §6, §9) with their sizes on the wire.

A HELLO lists the sender's neighbours by link code (§6.1): ``sym`` (symmetric links, the
MPRs among them in ``mprs``) and ``asym`` (heard, not yet symmetric). A TC carries the
sender's MPR selectors with an advertised neighbour sequence number (ANSN); a TC is
flooded, so it also carries its originator, message sequence number, TTL and hop count.
Sizes: IPv4 + UDP, the packet header (4), the message header (12) and the body.

>>> Hello(sym=(1, 2, 3), asym=(4,), mprs=(2,)).bytes()        # 3 link codes, 4 addresses
76
>>> Tc(orig=5, seq=9, ansn=1, selectors=(1, 2), ttl=255, hops=0).bytes()
56
"""
from __future__ import annotations

from typing import NamedTuple

from emulator.routing.base import IP_UDP_BYTES

_HEADERS = IP_UDP_BYTES + 4 + 12


class Hello(NamedTuple):
    """The sender's link set as it sees it (§6.1)."""

    sym: tuple      # symmetric neighbours (MPRs included)
    asym: tuple     # heard but not symmetric
    mprs: tuple     # the symmetric neighbours it chose as MPRs

    def bytes(self) -> int:
        # one link-code block (4 bytes) per code present: MPR, SYM (not MPR), ASYM
        codes = (bool(self.mprs) + bool(len(self.sym) > len(self.mprs))
                 + bool(self.asym))
        return _HEADERS + 4 + 4 * codes + 4 * (len(self.sym) + len(self.asym))


class Tc(NamedTuple):
    """A topology control message (§9.1): ``orig``'s MPR selectors."""

    orig: int
    seq: int
    ansn: int
    selectors: tuple
    ttl: int
    hops: int

    def bytes(self) -> int:
        return _HEADERS + 4 + 4 * len(self.selectors)
