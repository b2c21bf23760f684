"""OLSR's packets and messages (RFC 3626 §3.3, §6, §9) with their sizes on the wire.

A :class:`Packet` carries one or more messages (§3.3). A HELLO lists the sender's
neighbours by link code (§6.1): ``sym`` (symmetric links, the MPRs among them in
``mprs``) and ``asym`` (heard, not yet symmetric). A TC carries the
sender's MPR selectors with an advertised neighbour sequence number (ANSN); a TC is
flooded, so it also carries its originator, message sequence number, TTL and hop count.
A message's size is what it costs in a packet of its own: IPv4 + UDP, the packet
header (4), the message header (12) and the body; a packet of several pays the IPv4,
UDP and packet headers once.

>>> hello = Hello(sym=(1, 2, 3), asym=(4,), mprs=(2,))
>>> tc = Tc(orig=5, seq=9, ansn=1, selectors=(1, 2), ttl=255, hops=0)
>>> hello.bytes(), tc.bytes()                  # HELLO: 3 link codes, 4 addresses
(76, 56)
>>> both = Packet((("HELLO", hello), ("TC", tc)))
>>> both.bytes(), both.types                   # 76 + 56 - (28 + 4)
(100, ('HELLO', 'TC'))
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from emulator.routing.base import IP_UDP_BYTES

#: IPv4 + UDP and OLSR's packet header: paid once per packet, whatever it carries.
_PACKET = IP_UDP_BYTES + 4
_HEADERS = _PACKET + 12

#: A message row's first column (:func:`message_rows`).
HELLO, TC = 0, 1


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


class Packet(NamedTuple):
    """One OLSR packet (§3.3): ``messages`` as ``((type, message), ...)``, in the order
    they were queued; :attr:`types` is what the host counts as messages sent. ``rows``:
    the messages as its receivers learn them (the sender's
    :meth:`~emulator.routing.olsr.state.Repositories.rows`, made once per packet)."""

    messages: tuple
    rows: object = None

    @property
    def types(self) -> tuple:
        return tuple(kind for kind, _ in self.messages)

    def bytes(self) -> int:
        return _PACKET + sum(m.bytes() - _PACKET for _, m in self.messages)


def message_rows(messages, pos: dict, list_number) -> np.ndarray:
    """The rows of a packet's ``messages`` (``((type, message), ...)``) for
    :func:`~emulator.routing.olsr.receive.receive`."""
    flat = []   # numpy reads a flat list of ints in half the time of a list of rows
    for kind, m in messages:
        if kind == "HELLO":
            flat += (HELLO, list_number(m.sym), list_number(m.asym), list_number(m.mprs),
                     0, 0)
        else:
            flat += (TC, pos[m.orig], m.seq, m.ansn, list_number(m.selectors), m.ttl)
    return np.array(flat, np.int64).reshape(len(messages), 6)
