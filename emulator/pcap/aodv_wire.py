"""AODV's packets in their wire format (RFC 3561 §5), the bytes of a UDP datagram to
port 654 that Wireshark's ``aodv`` dissector reads.

Each encoding is as long as the packet's :meth:`bytes` less the IPv4 and UDP headers,
so a captured frame is as long as the run counted it. Times (a RREP's lifetime) are in
the run's time units, written in milliseconds through ``seconds_per_unit``; a RREQ with
an unknown destination sequence number has the U flag and 0 there.

>>> from emulator.routing.aodv.packets import Rerr, Rrep, RrepAck, Rreq
>>> rreq = Rreq(orig=0, orig_seq=5, rreq_id=2, dst=3, dst_seq=None, hops=1, ttl=3)
>>> encode("RREQ", rreq, 1.0).hex(" ", 4)
'01080001 00000002 0a000004 00000000 0a000001 00000005'
>>> rrep = Rrep(3, 1, 0, 2, 6.0, ack=True)
>>> len(encode("RREP", rrep, 1.0)) == rrep.bytes() - 28
True
>>> encode("RREP", Rrep(3, 1, 0, 2, 6.0), 0.5)[-4:].hex()   # 3 s in milliseconds
'00000bb8'
>>> encode("RERR", Rerr(((3, 2),)), 1.0).hex(" ", 4), encode("RREP_ACK", RrepAck(), 1.0)
('03000001 0a000004 00000002', b'\\x04\\x00')
"""
from __future__ import annotations

import struct

from emulator.pcap.addresses import ip_bytes

#: The UDP port of AODV (RFC 3561 §1).
PORT = 654
#: Message types (RFC 3561 §5): a HELLO is a RREP (§6.9).
TYPES = {"RREQ": 1, "RREP": 2, "HELLO": 2, "RERR": 3, "RREP_ACK": 4}
# flags: a RREQ's G (gratuitous RREP) and U (unknown sequence number) in its second
# byte; a RREP's A (acknowledgement required)
_G, _U, _A = 0x20, 0x08, 0x40


def encode(kind: str, packet, seconds_per_unit: float) -> bytes:
    """The UDP payload of AODV packet ``packet`` of type ``kind`` (a key of
    :data:`TYPES`)."""
    if kind == "RREQ":
        flags = (_G if packet.gratuitous else 0) | (_U if packet.dst_seq is None else 0)
        return (struct.pack("!BBBBI", 1, flags, 0, packet.hops, packet.rreq_id)
                + ip_bytes(packet.dst) + struct.pack("!I", packet.dst_seq or 0)
                + ip_bytes(packet.orig) + struct.pack("!I", packet.orig_seq))
    if kind in ("RREP", "HELLO"):
        lifetime_ms = round(packet.lifetime * seconds_per_unit * 1000)
        return (struct.pack("!BBBB", 2, _A if packet.ack else 0, 0, packet.hops)
                + ip_bytes(packet.dst) + struct.pack("!I", packet.dst_seq)
                + ip_bytes(packet.orig) + struct.pack("!I", min(lifetime_ms, 2 ** 32 - 1)))
    if kind == "RERR":
        entries = b"".join(ip_bytes(dst) + struct.pack("!I", seq)
                           for dst, seq in packet.unreachable)
        return struct.pack("!BBBB", 3, 0, 0, len(packet.unreachable)) + entries
    if kind == "RREP_ACK":
        return struct.pack("!BB", 4, 0)
    raise ValueError(f"AODV packet type {kind!r}: expected one of {', '.join(TYPES)}")


def ip_ttl(kind: str, packet) -> int:
    """The IPv4 TTL a packet is sent with: a RREQ's own TTL (the expanding ring search,
    RFC 3561 §6.4), 1 for the others (one hop; a HELLO by definition, §6.9).

    >>> from emulator.routing.aodv.packets import Rrep, Rreq
    >>> ip_ttl("RREQ", Rreq(0, 5, 2, 3, None, 1, 3)), ip_ttl("HELLO", Rrep(0, 1, 0, 0, 2.0))
    (3, 1)
    """
    return packet.ttl if kind == "RREQ" else 1
