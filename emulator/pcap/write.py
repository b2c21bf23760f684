"""A run's transmissions as a packet capture Wireshark dissects: :func:`write_pcap`.

The capture is taken "in the air": one interface hears every transmission of the run,
one frame per ledger row (data hops and routing control packets alike), at the hop's
start, in the ledger's order. The link header says who sent and who was meant to
receive: 802.11 with a radiotap header, a data frame between stations of one ad hoc
network (ToDS = FromDS = 0: addr1 the receiver or broadcast, addr2 the sender, addr3
the network's BSSID). Inside: LLC/SNAP, IPv4, UDP. Nodes have the addresses of
:mod:`emulator.pcap.addresses`.

- A routing control packet (ledger kind ``routing`` with a row in the capture table)
  goes from its sender to its receiver (255.255.255.255 when broadcast) at its
  protocol's port, its payload the RFC wire format the run recorded (AODV 654, OLSR
  698, Babel 6696), with the IPv4 TTL it recorded (an AODV RREQ's own TTL, else 1).
- A data message's hop goes from the message's source to its destination (IPv4 is end
  to end; the MAC addresses are the hop's) at :data:`~emulator.pcap.capture.DATA_PORT`;
  its IPv4 TTL falls by one per hop from 64. Its payload holds its id, its key and its
  kind (:func:`~emulator.pcap.capture.data_payload`), padded so that the IPv4 packet
  is as long as the ledger's ``size_bytes``. A routed notice (a node's report of a
  dropped packet) goes the same way, as kind ``notice`` with key -1.
- A hop the ledger marks lost is a frame all the same (it was sent) with the comment
  ``lost``.
- Under a MAC (``[mac]``, the ledger's ``attempts`` column), a hop sent ``k`` times is
  ``k`` frames, the later ones with the Retry flag and the same sequence number, and a
  unicast hop that arrived is followed by the receiver's 802.11 ACK. The MAC does not
  record when each attempt left, so a hop's frames carry its start time plus one
  microsecond per frame (their order is right, their spacing is not).

Timestamps are the run's times in seconds (``seconds_per_unit`` per time unit) from
the Unix epoch, moved later by the warm-up when the run has negative times (then the
capture's section comment says by how much); pcapng keeps microseconds.

>>> import tempfile, pandas as pd
>>> from emulator.ledger import Ledger
>>> led = Ledger()
>>> led.add(0.5, 1, "data", 0, 2, 0, 1, 1.0, 60, 1.0, False)
>>> led.add(0.6, 1, "data", 0, 2, 1, 2, 1.0, 60, 1.0, True)
>>> frame = pd.DataFrame({"msg_id": [1]})
>>> frame.attrs["ledger"] = led.frame()
>>> path = write_pcap(frame, tempfile.mkdtemp() + "/run.pcapng")
>>> path.stat().st_size > 2 * 60
True
>>> write_pcap(frame, path, link="token-ring")
Traceback (most recent call last):
...
ValueError: link: expected one of 802.11, got 'token-ring'
"""
from __future__ import annotations

import os
import struct
from pathlib import Path

import dpkt
import dpkt.pcapng as pcapng
import pandas as pd

from emulator.pcap.addresses import ip_bytes, mac
from emulator.pcap.capture import DATA_PORT, DATA_TTL, data_payload
from emulator.routing.base import BROADCAST

#: LINKTYPE_IEEE802_11_RADIOTAP (tcpdump.org's link types).
_RADIOTAP = 127
#: The link types :func:`write_pcap` writes, by name, with their pcap link type.
LINKS = {"802.11": _RADIOTAP}
#: The BSSID of the run's ad hoc network (locally administered, unicast).
BSSID = bytes.fromhex("02ad0c000000")
_SNAP_IPV4 = bytes.fromhex("aaaa03000000") + struct.pack("!H", dpkt.ethernet.ETH_TYPE_IP)
#: A radiotap header with no fields: version 0, length 8, nothing present.
_RADIOTAP_HEADER = struct.pack("<BBHI", 0, 0, 8, 0)
_DATA_FRAME = struct.pack("<HH", 0x0008, 0)   # frame control: data; duration 0
_ROUTING = "routing"
#: Frame control of an ACK (type control, subtype 13); the Retry flag's bit.
_ACK_FRAME = struct.pack("<HH", 0x00D4, 0)
_RETRY = 0x08
_MICROSECOND = 1e-6


def write_pcap(source, path, *, link: str = "802.11",
               seconds_per_unit: float = 1.0) -> Path:
    """Write the transmissions of ``source`` to ``path`` as pcapng (see the module
    docstring); returns the path.

    ``source`` is :func:`emulator.deliver`'s frame of a run with ``capture=True``
    (``attrs["ledger"]``, ``attrs["capture"]``), or an object with the tables as
    attributes ``ledger`` and ``capture`` (a stored run's; ``capture`` None when it
    kept none). Data frames need only the ledger (without a capture their key is -1);
    routing control packets need the capture's rows. The file is written beside its
    name and renamed when complete.
    """
    if link not in LINKS:
        raise ValueError(f"link: expected one of {', '.join(LINKS)}, got {link!r}")
    ledger, capture = _tables(source)
    payloads, keys = _split(capture)
    if capture is None and (ledger["kind"] == _ROUTING).any():
        raise ValueError("capture: expected the control packets' fields of a run with "
                         f"capture on ({int((ledger['kind'] == _ROUTING).sum())} routing "
                         "transmissions have none)")
    times = ledger["time"].to_numpy(float) * seconds_per_unit
    shift = max(0.0, -float(times.min())) if len(times) else 0.0
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as out:
        writer = pcapng.Writer(out, snaplen=65535, linktype=LINKS[link],
                               shb=_section(shift))
        frames = _Frames(payloads, keys)
        with_mac = "attempts" in ledger.columns
        for row, t in zip(ledger.itertuples(index=False), times + shift):
            frame = frames.frame(row)
            attempts = int(row.attempts) if with_mac else 1
            for k in range(attempts):
                sent = frame if k == 0 else _retried(frame)
                if row.lost and k == attempts - 1:
                    writer.writepkt(pcapng.EnhancedPacketBlockLE(
                        pkt_data=sent, caplen=len(sent), pkt_len=len(sent),
                        opts=[pcapng.PcapngOptionLE(code=pcapng.PCAPNG_OPT_COMMENT,
                                                    text="lost"),
                              pcapng.PcapngOptionLE(code=pcapng.PCAPNG_OPT_ENDOFOPT)]),
                        t + k * _MICROSECOND)
                else:
                    writer.writepkt_time(sent, t + k * _MICROSECOND)
            if with_mac and not row.lost and int(row.hop_v) >= 0:
                writer.writepkt_time(_ack(int(row.hop_u)), t + attempts * _MICROSECOND)
    os.replace(tmp, path)
    return path


def _tables(source) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    if isinstance(source, pd.DataFrame):
        if "ledger" not in source.attrs:
            raise ValueError("source: expected deliver(..., capture=True)'s frame (its "
                             "attrs hold no ledger)")
        return source.attrs["ledger"], source.attrs.get("capture")
    return source.ledger, source.capture


def _split(capture: pd.DataFrame | None) -> tuple[dict, dict]:
    """``({msg_id: (port, IPv4 TTL, payload)}`` of the control packets, ``{msg_id: key}``
    of the data messages)."""
    if capture is None:
        return {}, {}
    payloads, keys = {}, {}
    for msg_id, port, ttl, payload in zip(*(capture[c].tolist() for c in
                                            ("msg_id", "port", "ip_ttl", "payload"))):
        if port == DATA_PORT:
            keys[msg_id] = struct.unpack("!q", payload)[0]
        else:
            payloads[msg_id] = (port, ttl, payload)
    return payloads, keys


def _section(shift: float):
    """The section header, with a comment when the times were moved."""
    if not shift:
        return None
    return pcapng.SectionHeaderBlockLE(opts=[
        pcapng.PcapngOptionLE(code=pcapng.PCAPNG_OPT_COMMENT,
                              text=f"times moved {shift:g} s later (the run's warm-up "
                                   "started before 0)"),
        pcapng.PcapngOptionLE(code=pcapng.PCAPNG_OPT_ENDOFOPT)])


class _Frames:
    """Builds each ledger row's frame; numbers the 802.11 frames per sender and the
    control packets' IPv4 ids, and counts each data message's hops for its TTL."""

    def __init__(self, payloads: dict, keys: dict):
        self.payloads, self.keys = payloads, keys
        self._sent: dict[int, int] = {}    # frames sent, by sender (sequence control)
        self._hops: dict[int, int] = {}    # hops taken, by data message
        self._ip_id = 0

    def frame(self, row) -> bytes:
        u, v = int(row.hop_u), int(row.hop_v)
        control = self.payloads.get(row.msg_id) if row.kind == _ROUTING else None
        if control is not None:
            port, ttl, payload = control
            self._ip_id += 1
            packet = _udp_ip(u, v, port, payload, ttl, self._ip_id)
        else:
            hops = self._hops.get(row.msg_id, 0)
            self._hops[row.msg_id] = hops + 1
            kind = "notice" if row.kind == _ROUTING else row.kind
            key = self.keys.get(row.msg_id, -1)
            payload = data_payload(int(row.msg_id), key, kind, int(row.size_bytes) - 28)
            packet = _udp_ip(int(row.src), int(row.dst), DATA_PORT, payload,
                             max(1, DATA_TTL - hops), int(row.msg_id) & 0xFFFF)
        seq = self._sent.get(u, 0)
        self._sent[u] = seq + 1
        return (_RADIOTAP_HEADER + _DATA_FRAME + mac(v) + mac(u) + BSSID
                + struct.pack("<H", (seq % 4096) << 4) + _SNAP_IPV4 + packet)


def _retried(frame: bytes) -> bytes:
    """``frame`` sent again: its Retry flag set (frame control's second byte, after the
    radiotap header)."""
    at = len(_RADIOTAP_HEADER) + 1
    return frame[:at] + bytes([frame[at] | _RETRY]) + frame[at + 1:]


def _ack(receiver: int) -> bytes:
    """An 802.11 ACK to ``receiver`` (the hop's sender)."""
    return _RADIOTAP_HEADER + _ACK_FRAME + mac(receiver)


def _udp_ip(src: int, dst: int, port: int, payload: bytes, ttl: int, ip_id: int) -> bytes:
    """An IPv4 packet holding a UDP datagram from ``port`` to ``port``, checksums
    computed (by dpkt)."""
    udp = dpkt.udp.UDP(sport=port, dport=port, data=payload)
    udp.ulen = len(udp)
    ip = dpkt.ip.IP(src=ip_bytes(src), dst=ip_bytes(BROADCAST if dst < 0 else dst),
                    p=dpkt.ip.IP_PROTO_UDP, ttl=ttl, id=ip_id, data=udp)
    ip.len = len(ip)
    return bytes(ip)
