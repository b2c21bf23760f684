"""OLSR's packets in their wire format (RFC 3626 §3.3, §6.1, §9.1), the bytes of a UDP
datagram to port 698 that Wireshark's ``olsr`` dissector reads.

A packet is its header (length, packet sequence number) and its messages, each with the
message header (type, Vtime, size, originator, TTL, hop count, message sequence number).
A HELLO lists its links in blocks by link code: MPR neighbours, other symmetric ones,
then the ones only heard; a TC its advertised neighbour sequence number and MPR
selectors. What the emulated messages do not carry is numbered here, in the order the
packets were sent: each sender's packet sequence numbers and its HELLOs' message
sequence numbers (from 1). Vtime and Htime come from the run's parameters
(``NEIGHB_HOLD_TIME``, ``TOP_HOLD_TIME``, ``HELLO_INTERVAL``) in the RFC's mantissa and
exponent (§18.3); Willingness is ``WILL_DEFAULT``.

>>> from emulator.routing.olsr.messages import Hello, Packet, Tc
>>> wire = OlsrWire({"hello_interval": 2.0, "neighb_hold_time": 6.0,
...                  "top_hold_time": 15.0}, 1.0)
>>> hello = Hello(sym=(1, 2), asym=(4,), mprs=(2,))
>>> data = wire.encode(0, Packet((("HELLO", hello),)))
>>> len(data) == Packet((("HELLO", hello),)).bytes() - 28
True
>>> data[:4].hex(" ", 2), data[4:8].hex()     # packet length 44, seq 1; HELLO, 6 s
('002c 0001', '01860028')
>>> data[20:28].hex(" ", 4)                   # MPR block: 8 bytes, node 2
'0a000008 0a000003'
>>> both = Packet((("TC", Tc(5, 9, 1, (1,), 255, 0)), ("HELLO", hello)))
>>> wire.encode(0, both)[:4].hex(" ", 2)     # the sender's second packet
'0040 0002'
>>> vtime(6.0), vtime(15.0), vtime(2.0)
(134, 231, 5)
"""
from __future__ import annotations

import math
import struct
from collections import Counter

from emulator.pcap.addresses import ip_bytes

#: The UDP port of OLSR (RFC 3626 §3.1).
PORT = 698
#: Message types (§18.4).
TYPES = {"HELLO": 1, "TC": 2}
#: Link codes (§6.1.1): neighbour type << 2 | link type.
MPR_LINK, SYM_LINK, ASYM_LINK = (2 << 2) | 2, (1 << 2) | 2, (0 << 2) | 1
WILL_DEFAULT = 3
_C = 1 / 16   # the scaling factor of Vtime and Htime, in seconds (§18.3)


def vtime(seconds: float) -> int:
    """``seconds`` as the RFC's byte ``a << 4 | b`` for ``C * (1 + a / 16) * 2 ** b``,
    the least value not below it (§18.3)."""
    b = max(0, min(15, math.floor(math.log2(seconds / _C))))
    a = math.ceil(16 * (seconds / (_C * 2 ** b) - 1))
    if a >= 16:
        a, b = 0, min(15, b + 1)
    return (max(a, 0) << 4) | b


class OlsrWire:
    """Encodes a run's OLSR packets in the order they were sent; ``params`` are the
    protocol's in time units (:func:`emulator.routing.params.resolve`)."""

    def __init__(self, params: dict, seconds_per_unit: float):
        def seconds(key):
            return params[key] * seconds_per_unit

        self._hello_vtime = vtime(seconds("neighb_hold_time"))
        self._htime = vtime(seconds("hello_interval"))
        self._tc_vtime = vtime(seconds("top_hold_time"))
        self._packets = Counter()   # packets sent, by sender
        self._hellos = Counter()    # HELLOs sent, by sender

    def encode_control(self, sender: int, control) -> bytes:
        return self.encode(sender, control.body)

    def encode(self, sender: int, packet) -> bytes:
        """The UDP payload of ``packet`` (:class:`~emulator.routing.olsr.messages.Packet`)
        broadcast by ``sender``."""
        body = b"".join(self._message(sender, kind, m) for kind, m in packet.messages)
        self._packets[sender] += 1
        return struct.pack("!HH", 4 + len(body), self._packets[sender] % 65536) + body

    def _message(self, sender: int, kind: str, m) -> bytes:
        if kind == "HELLO":
            self._hellos[sender] += 1
            others = tuple(v for v in m.sym if v not in m.mprs)
            blocks = b"".join(_link_block(code, nodes) for code, nodes in
                              ((MPR_LINK, m.mprs), (SYM_LINK, others), (ASYM_LINK, m.asym))
                              if nodes)
            body = struct.pack("!HBB", 0, self._htime, WILL_DEFAULT) + blocks
            header = (self._hello_vtime, sender, 1, 0, self._hellos[sender])
        elif kind == "TC":
            body = struct.pack("!HH", m.ansn % 65536, 0) + _addresses(m.selectors)
            header = (self._tc_vtime, m.orig, m.ttl, m.hops, m.seq)
        else:
            raise ValueError(f"OLSR message type {kind!r}: expected one of "
                             f"{', '.join(TYPES)}")
        valid, orig, ttl, hops, seq = header
        return (struct.pack("!BBH", TYPES[kind], valid, 12 + len(body)) + ip_bytes(orig)
                + struct.pack("!BBH", min(ttl, 255), min(hops, 255), seq % 65536) + body)


def _addresses(nodes) -> bytes:
    return b"".join(ip_bytes(v) for v in nodes)


def _link_block(code: int, nodes) -> bytes:
    """One link message (§6.1): its code, reserved, size, the neighbours' addresses."""
    return struct.pack("!BBH", code, 0, 4 + 4 * len(nodes)) + _addresses(nodes)
