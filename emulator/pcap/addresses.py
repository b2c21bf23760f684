"""The addresses a capture gives the emulated nodes: node ``n`` is host number ``n + 1``,
as IPv4 ``10.0.0.0 + (n + 1)`` and as the locally administered MAC ``02:00`` followed by
``n + 1`` in four bytes (the number 0 would be a network address).

>>> ip(0), ip(257), mac(257).hex(":")
('10.0.0.1', '10.0.1.2', '02:00:00:00:01:02')
>>> ip_bytes(BROADCAST).hex(), mac(BROADCAST).hex()
('ffffffff', 'ffffffffffff')
>>> ip(2 ** 24 - 1)
Traceback (most recent call last):
...
ValueError: node 16777215: expected a node id in 0 .. 16777214 to have an IPv4 address in 10.0.0.0/8
"""
from __future__ import annotations

import socket
import struct

from emulator.routing.base import BROADCAST

#: The largest node id that has an address in 10.0.0.0/8.
MAX_NODE = 2 ** 24 - 2


def _host(node: int) -> int:
    if not 0 <= node <= MAX_NODE:
        raise ValueError(f"node {node}: expected a node id in 0 .. {MAX_NODE} to have an "
                         "IPv4 address in 10.0.0.0/8")
    return node + 1


def ip_bytes(node: int) -> bytes:
    """The four bytes of ``node``'s IPv4 address (255.255.255.255 for ``BROADCAST``)."""
    if node == BROADCAST:
        return b"\xff" * 4
    return struct.pack("!I", (10 << 24) | _host(node))


def ip(node: int) -> str:
    """``node``'s IPv4 address as text."""
    return socket.inet_ntoa(ip_bytes(node))


def mac(node: int) -> bytes:
    """The six bytes of ``node``'s MAC address (ff:ff:ff:ff:ff:ff for ``BROADCAST``)."""
    if node == BROADCAST:
        return b"\xff" * 6
    return b"\x02\x00" + struct.pack("!I", _host(node))
