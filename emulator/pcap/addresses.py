"""The addresses a capture gives the emulated nodes: node ``n`` is host number ``n + 1``,
as IPv4 ``10.0.0.0 + (n + 1)`` and as the locally administered MAC ``02:00`` followed by
``n + 1`` in four bytes (the number 0 would be a network address). On 802.15.4 the host
number is the node's short address (``0xffff`` broadcast), and its IPv6 interface
identifier is the one RFC 4944 §6 derives from a short address, ``::ff:fe00:XXXX``
(higher host numbers, over 802.11 only, fill the byte before ``XXXX``): link-local
``fe80::`` for one hop, and under the unique local prefix ``fd00::/64`` (Contiki-NG's
default) end to end.

>>> ip(0), ip(257), mac(257).hex(":")
('10.0.0.1', '10.0.1.2', '02:00:00:00:01:02')
>>> ip_bytes(BROADCAST).hex(), mac(BROADCAST).hex()
('ffffffff', 'ffffffffffff')
>>> short(0), short(BROADCAST), ip6(4, LINK_LOCAL), ip6(4, GLOBAL)
(1, 65535, 'fe80::ff:fe00:5', 'fd00::ff:fe00:5')
>>> short(0xfffd)
Traceback (most recent call last):
...
ValueError: node 65533: expected a node id in 0 .. 65532 to have an 802.15.4 short address
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
#: The largest node id with an 802.15.4 short address (0xfffe means "none", 0xffff
#: is the broadcast address).
MAX_SHORT_NODE = 0xfffc
#: The IPv6 prefixes of :func:`ip6_bytes`: link-local and the network's, end to end.
LINK_LOCAL, GLOBAL = bytes.fromhex("fe80" + "00" * 6), bytes.fromhex("fd00" + "00" * 6)


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


def short(node: int) -> int:
    """``node``'s 802.15.4 short address (0xffff for ``BROADCAST``)."""
    if node == BROADCAST:
        return 0xFFFF
    if not 0 <= node <= MAX_SHORT_NODE:
        raise ValueError(f"node {node}: expected a node id in 0 .. {MAX_SHORT_NODE} to "
                         "have an 802.15.4 short address")
    return node + 1


def ip6_bytes(node: int, prefix: bytes) -> bytes:
    """The 16 bytes of ``node``'s IPv6 address under ``prefix`` (:data:`LINK_LOCAL` or
    :data:`GLOBAL`, eight bytes)."""
    host = _host(node)
    return prefix + bytes.fromhex("000000fffe") + host.to_bytes(3, "big")


def ip6(node: int, prefix: bytes) -> str:
    """``node``'s IPv6 address under ``prefix`` as text."""
    return socket.inet_ntop(socket.AF_INET6, ip6_bytes(node, prefix))
