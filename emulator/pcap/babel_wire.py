"""Babel's packets in their wire format (RFC 8966 §4), the bytes of a UDP datagram to
port 6696 that Wireshark's ``babel`` dissector reads.

A packet is the header (magic 42, version 2, body length) and its TLVs: a Hello
(multicast, its seqno and interval), an IHU per neighbour (rxcost, interval, the
neighbour's IPv4 address), each Update after a Router-Id TLV naming the route's
origin (an IPv4 /32 prefix: the destination's address), each seqno request with the
origin's Router-Id and prefix. A node's Router-Id is its number as in
:mod:`emulator.pcap.addresses` in eight bytes. Intervals come from the run's
parameters, in centiseconds: Hello and IHU the hello interval (an IHU is sent every
third Hello: its interval is three of them), Update the update interval.

>>> from emulator.routing.babel.packets import BabelPacket
>>> wire = BabelWire({"hello_interval": 4.0, "update_interval": 16.0}, 1.0)
>>> p = BabelPacket(hello=7, ihus=((1, 96),))
>>> data = wire.encode(0, p)
>>> len(data) == p.bytes() - 28, data[:4].hex(), data[4:12].hex(" ", 2)
(True, '2a020014', '0406 0000 0007 0190')
>>> len(wire.encode(0, BabelPacket(updates=((3, 1, 96),), requests=((3, 2, 64),))))
52
"""
from __future__ import annotations

import struct

from emulator.pcap.addresses import ip_bytes

#: The UDP port of Babel (RFC 8966 §5).
PORT = 6696
_HELLO, _IHU, _ROUTER_ID, _UPDATE, _REQUEST = 4, 5, 6, 8, 10
_IPV4 = 1   # address encoding 1: IPv4


def _router_id(node: int) -> bytes:
    return struct.pack("!Q", node + 1)


def _tlv(kind: int, body: bytes) -> bytes:
    return struct.pack("!BB", kind, len(body)) + body


class BabelWire:
    """Encodes a run's Babel packets; ``params`` are the protocol's in time units."""

    def __init__(self, params: dict, seconds_per_unit: float):
        def centiseconds(key):
            return min(0xFFFF, round(params[key] * seconds_per_unit * 100))

        self._hello = centiseconds("hello_interval")
        self._update = centiseconds("update_interval")

    def encode_control(self, sender: int, control) -> bytes:
        return self.encode(sender, control.body)

    def encode(self, sender: int, packet) -> bytes:
        """The UDP payload of ``packet``
        (:class:`~emulator.routing.babel.packets.BabelPacket`) sent by ``sender``."""
        tlvs = []
        if packet.hello is not None:
            tlvs.append(_tlv(_HELLO, struct.pack("!HHH", 0, packet.hello % 65536,
                                                 self._hello)))
        for neighbour, rxcost in packet.ihus:
            tlvs.append(_tlv(_IHU, struct.pack("!BBHH", _IPV4, 0, rxcost,
                                               min(0xFFFF, 3 * self._hello))
                             + ip_bytes(neighbour)))
        for prefix, seqno, metric in packet.updates:
            tlvs.append(_tlv(_ROUTER_ID, b"\x00\x00" + _router_id(prefix)))
            tlvs.append(_tlv(_UPDATE, struct.pack("!BBBBHHH", _IPV4, 0, 32, 0,
                                                  self._update, seqno % 65536, metric)
                             + ip_bytes(prefix)))
        for prefix, seqno, hops in packet.requests:
            tlvs.append(_tlv(_REQUEST, struct.pack("!BBHBB", _IPV4, 32, seqno % 65536,
                                                   hops, 0)
                             + _router_id(prefix) + ip_bytes(prefix)))
        body = b"".join(tlvs)
        return struct.pack("!BBH", 42, 2, len(body)) + body
