"""RPL's control messages in their wire format (RFC 6550 §6), the ICMPv6 messages
(type 155) that Wireshark's ``icmpv6`` dissector reads as RPL Control.

:func:`encode` gives the whole ICMPv6 message, its checksum left 0 (the writer's IPv6
layer fills it in), exactly as long as the packet's :meth:`bytes` less the 40 of the
IPv6 header, so a captured IPv6 packet is as long as the run counted it:

- DIS (code 0x00, §6.2): flags and reserved, 0;
- DIO (code 0x01, §6.3): the base object only, as the protocol sends it (no DODAG
  Configuration option: every node has the spec's parameters): RPLInstanceID
  :data:`INSTANCE`, the packet's version and rank, G = 0, MOP 2 (storing mode without
  multicast), preference 0, DTSN 0 (not modelled), DODAGID the root's address;
- DAO (code 0x02, §6.4): the base object without DODAGID (D = 0), K the packet's
  ``ack``, the DAOSequence; then an RPL Target option (§6.7.7) per target (its address
  ``fd00::ff:fe00:XXXX``, /128) and one Transit Information option (§6.7.8) for them
  all, with the path lifetime in units of 60 s (Contiki-NG's lifetime unit; 0: a
  No-Path DAO; at most 0xFE) and the first target's path sequence (the run keeps a path
  sequence per target; the others are not written: that would take a Transit option
  each, bytes the run did not send). The testbed's pieces of one DAO ride in bits the
  RFC reserves: ``more`` in the flags' bit 0x20, ``part`` in the reserved byte;
- DAO-ACK (code 0x03, §6.5): RPLInstanceID, D = 0, the DAOSequence, status 0
  (accepted: the protocol sends no other).

Sequence numbers and versions are written modulo 256 (the run's do not wrap).

>>> from emulator.routing.rpl.packets import Dao, DaoAck, Dio, Dis
>>> wire = RplWire(root=0, seconds_per_unit=1.0)
>>> dio = wire.encode(Dio(version=2, rank=512))
>>> len(dio) == Dio(2, 512).bytes() - 40, dio[:12].hex(" ", 4)
(True, '9b010000 1e020200 10000000')
>>> dao = Dao(((3, 7), (5, 2)), 1800.0, sequence=4, ack=True, more=True, part=1)
>>> data = wire.encode(dao)
>>> len(data) == dao.bytes() - 40, data[:8].hex(" ", 4), data[-6:].hex(" ", 2)
(True, '9b020000 1ea00104', '0604 0000 071e')
>>> wire.encode(Dis()).hex(), wire.encode(DaoAck(sequence=260)).hex()
('9b0000000000', '9b0300001e000400')
"""
from __future__ import annotations

import math
import struct

from emulator.pcap.addresses import GLOBAL, ip6_bytes

#: ICMPv6's type for RPL Control (RFC 6550 §6).
TYPE = 155
#: The codes of the control messages (RFC 6550 §6).
CODES = {"DIS": 0x00, "DIO": 0x01, "DAO": 0x02, "DAO-ACK": 0x03}
#: The RPLInstanceID written (Contiki-NG's default, 0x1e; the run has one instance).
INSTANCE = 0x1E
#: The Mode of Operation: storing mode without multicast (RFC 6550 §6.3.1).
MOP_STORING = 2
#: Seconds per Lifetime Unit of a Transit option's path lifetime (Contiki-NG's).
LIFETIME_UNIT = 60
_K, _MORE = 0x80, 0x20              # DAO flags: K, and a reserved bit for "more"
_TARGET, _TRANSIT = 0x05, 0x06      # option types (RFC 6550 §6.7)


class RplWire:
    """Encodes a run's RPL control messages; ``root`` is the DODAG root's node id
    (its address is the DODAGID), ``seconds_per_unit`` the seconds of a time unit."""

    def __init__(self, root: int, seconds_per_unit: float):
        self.dodag_id = ip6_bytes(root, GLOBAL)
        self.seconds_per_unit = seconds_per_unit

    def encode_control(self, sender: int, control) -> bytes:
        return self.encode(control.body)

    def encode(self, packet) -> bytes:
        """The ICMPv6 message of RPL packet ``packet`` (its checksum 0)."""
        kind = packet.type
        if kind == "DIO":
            body = struct.pack("!BBHBBBB", INSTANCE, packet.version % 256, packet.rank,
                               MOP_STORING << 3, 0, 0, 0) + self.dodag_id
        elif kind == "DIS":
            body = bytes(2)
        elif kind == "DAO":
            body = self._dao(packet)
        elif kind == "DAO-ACK":
            body = struct.pack("!BBBB", INSTANCE, 0, packet.sequence % 256, 0)
        else:
            raise ValueError(f"RPL packet type {kind!r}: expected one of "
                             f"{', '.join(CODES)}")
        return struct.pack("!BBH", TYPE, CODES[kind], 0) + body

    def _dao(self, dao) -> bytes:
        flags = (_K if dao.ack else 0) | (_MORE if dao.more else 0)
        base = struct.pack("!BBBB", INSTANCE, flags, min(dao.part, 255), dao.sequence % 256)
        targets = b"".join(struct.pack("!BBBB", _TARGET, 18, 0, 128)
                           + ip6_bytes(node, GLOBAL) for node, _ in dao.targets)
        path_seq = dao.targets[0][1] % 256 if dao.targets else 0
        transit = struct.pack("!BBBBBB", _TRANSIT, 4, 0, 0, path_seq,
                              self.path_lifetime(dao.lifetime))
        return base + targets + transit

    def path_lifetime(self, lifetime: float) -> int:
        """A DAO's lifetime (time units) in Lifetime Units, rounded up; 0 stays 0 (a
        No-Path DAO), an infinite one is 0xFF (RFC 6550 §6.7.8).

        >>> w = RplWire(0, 1.0)
        >>> w.path_lifetime(1800.0), w.path_lifetime(1.0), w.path_lifetime(0.0), \\
        ...     w.path_lifetime(1e9), w.path_lifetime(math.inf)
        (30, 1, 0, 254, 255)
        """
        if math.isinf(lifetime):
            return 0xFF
        return min(0xFE, math.ceil(lifetime * self.seconds_per_unit / LIFETIME_UNIT))
