"""The link headers of a capture's frames: :class:`Wifi` (802.11 with radiotap) and
:class:`Lowpan` (802.15.4 with 6LoWPAN), each numbering its senders' frames.

Both put a network packet (IPv4 or IPv6 bytes) in a data frame from ``u`` to ``v``
(``BROADCAST``: every neighbour), mark a frame sent again, and make the ACK of a frame
that arrived.

- **802.11** (LINKTYPE_IEEE802_11_RADIOTAP, 127): an empty radiotap header (version 0,
  length 8, no field), a data frame between stations of one ad hoc network (ToDS =
  FromDS = 0: addr1 the receiver, addr2 the sender, addr3 :data:`BSSID`; the sequence
  number counts each sender's frames), LLC/SNAP with the packet's ethertype (IPv4
  0x0800 or IPv6 0x86DD). A frame sent again has the Retry flag; an ACK (control,
  subtype 13) goes to the data frame's sender. No FCS.
- **802.15.4** (LINKTYPE_IEEE802_15_4_WITHFCS, 195): a data frame (frame version 2003,
  PAN ID compression, short addresses: node ``n`` is ``n + 1``, ``0xffff`` broadcast,
  PAN :data:`PAN_ID`; the ACK request bit on unicast frames; the sequence number counts
  each sender's frames), the 6LoWPAN dispatch of an uncompressed IPv6 header (0x41,
  RFC 4944 §5.1), the IPv6 packet, and the FCS (CRC-16/KERMIT, by ``crcmod``,
  little-endian). A frame sent again is the same bytes (802.15.4 has no Retry flag);
  an ACK is frame control, the data frame's sequence number and FCS (5 bytes).

>>> wifi, lowpan = Wifi(), Lowpan()
>>> frame = lowpan.frame(0, 3, b"\\x60")
>>> frame.hex(" ")                       # data, ack request; seq 0; PAN; to 4; from 1
'61 88 00 cd ab 04 00 01 00 41 60 bc 06'
>>> lowpan.ack(frame).hex(" "), lowpan.frame(0, BROADCAST, b"\\x60")[:7].hex(" ")
('02 00 00 b8 b5', '41 88 01 cd ab ff ff')
>>> len(wifi.frame(0, 1, b"")), wifi.ack(wifi.frame(2, 1, b""))[-6:].hex(":")
(40, '02:00:00:00:00:03')
"""
from __future__ import annotations

import struct

import crcmod.predefined

from emulator.pcap.addresses import mac, short
from emulator.routing.base import BROADCAST

#: LINKTYPE_IEEE802_11_RADIOTAP and LINKTYPE_IEEE802_15_4_WITHFCS (tcpdump.org).
RADIOTAP, IEEE802_15_4 = 127, 195
#: The BSSID of the run's ad hoc 802.11 network (locally administered, unicast).
BSSID = bytes.fromhex("02ad0c000000")
#: The PAN identifier of the run's 802.15.4 network.
PAN_ID = 0xABCD
#: Ethertypes in the LLC/SNAP header, by IP version.
_ETHERTYPES = {4: 0x0800, 6: 0x86DD}
#: A radiotap header with no fields: version 0, length 8, nothing present.
_RADIOTAP_HEADER = struct.pack("<BBHI", 0, 0, 8, 0)
_WIFI_DATA = struct.pack("<HH", 0x0008, 0)   # frame control: data; duration 0
_WIFI_ACK = struct.pack("<HH", 0x00D4, 0)    # control, subtype 13; duration 0
_RETRY = 0x08
# 802.15.4 frame control: data, PAN ID compression, short destination and source
# addresses (frame version 0); the ACK request bit; an ACK's frame control
_WPAN_DATA, _ACK_REQUEST, _WPAN_ACK = 0x0001 | 0x0040 | 0x0800 | 0x8000, 0x0020, 0x0002
#: 6LoWPAN's dispatch of an uncompressed IPv6 header (RFC 4944 §5.1).
IPV6_DISPATCH = 0x41
_fcs = crcmod.predefined.mkCrcFun("kermit")


class _Numbered:
    """Counts each sender's frames (their sequence numbers)."""

    def __init__(self):
        self._sent: dict[int, int] = {}

    def _next(self, u: int) -> int:
        seq = self._sent.get(u, 0)
        self._sent[u] = seq + 1
        return seq


class Wifi(_Numbered):
    """802.11 data frames in radiotap (see the module docstring)."""

    linktype = RADIOTAP

    def frame(self, u: int, v: int, packet: bytes, version: int = 4) -> bytes:
        """``packet`` (IP ``version``) from ``u`` to ``v`` in an 802.11 data frame."""
        seq = self._next(u)
        return (_RADIOTAP_HEADER + _WIFI_DATA + mac(v) + mac(u) + BSSID
                + struct.pack("<H", (seq % 4096) << 4) + bytes.fromhex("aaaa03000000")
                + struct.pack("!H", _ETHERTYPES[version]) + packet)

    @staticmethod
    def retried(frame: bytes) -> bytes:
        """``frame`` sent again: its Retry flag set (frame control's second byte)."""
        at = len(_RADIOTAP_HEADER) + 1
        return frame[:at] + bytes([frame[at] | _RETRY]) + frame[at + 1:]

    @staticmethod
    def ack(frame: bytes) -> bytes:
        """The ACK of data frame ``frame``, to its sender (its addr2)."""
        sender = frame[len(_RADIOTAP_HEADER) + 10:len(_RADIOTAP_HEADER) + 16]
        return _RADIOTAP_HEADER + _WIFI_ACK + sender


class Lowpan(_Numbered):
    """802.15.4 data frames holding uncompressed IPv6 (see the module docstring)."""

    linktype = IEEE802_15_4

    def frame(self, u: int, v: int, packet: bytes, version: int = 6) -> bytes:
        """IPv6 ``packet`` from ``u`` to ``v`` in an 802.15.4 data frame."""
        if version != 6:
            raise ValueError(f"802.15.4 frames carry IPv6 over 6LoWPAN, got IPv{version}")
        control = _WPAN_DATA | (0 if v == BROADCAST else _ACK_REQUEST)
        mpdu = (struct.pack("<HBHHH", control, self._next(u) % 256, PAN_ID, short(v),
                            short(u)) + bytes([IPV6_DISPATCH]) + packet)
        return _with_fcs(mpdu)

    @staticmethod
    def retried(frame: bytes) -> bytes:
        return frame

    @staticmethod
    def ack(frame: bytes) -> bytes:
        """The ACK of data frame ``frame`` (its sequence number, the third byte)."""
        return _with_fcs(struct.pack("<HB", _WPAN_ACK, frame[2]))


def _with_fcs(mpdu: bytes) -> bytes:
    return mpdu + struct.pack("<H", _fcs(mpdu))


#: The link layers :func:`emulator.pcap.write.write_pcap` writes, by name.
LINKS = {"802.11": Wifi, "802.15.4": Lowpan}
