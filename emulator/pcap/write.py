"""A run's transmissions as a packet capture Wireshark dissects: :func:`write_pcap`.

The capture is taken "in the air": one interface hears every transmission of the run,
one frame per ledger row (data hops and routing control packets alike), at the hop's
start, in the ledger's order. The link header says who sent and who was meant to
receive (:mod:`emulator.pcap.links`): 802.11 (radiotap, LLC/SNAP) or 802.15.4 (6LoWPAN,
uncompressed IPv6). Inside: IPv4 or IPv6, then UDP or (RPL) ICMPv6. Nodes have the
addresses of :mod:`emulator.pcap.addresses`.

- **IP version**: IPv6 on 802.15.4 (6LoWPAN carries IPv6 only) and in an RPL run (an
  IPv6 protocol) on either link; IPv4 otherwise. AODV's and OLSR's packets hold IPv4
  addresses (RFC 3561 and 3626 as written here), so an AODV or OLSR run is not written
  on 802.15.4 (one line: write it with ``link="802.11"``). Babel, natively IPv6, is
  (its routes stay IPv4 prefixes, which Babel carries over IPv6 links).
- A routing control packet (ledger kind ``routing`` with a row in the capture table)
  goes from its sender to its receiver, one hop: IPv4 from address to address
  (255.255.255.255 when broadcast), IPv6 from link-local to link-local (when
  broadcast: ff02::1a, all RPL nodes, or ff02::1:6, all Babel routers), with the TTL
  or hop limit it recorded (an AODV RREQ's own TTL, else 1): in UDP at its protocol's
  port (AODV 654, OLSR 698, Babel 6696), or RPL's as ICMPv6 type 155; its payload is
  the RFC wire format the run recorded.
- A data message's hop goes from the message's source to its destination (IP is end
  to end: IPv6 under ``fd00::/64``; the link addresses are the hop's) at
  :data:`~emulator.pcap.capture.DATA_PORT`; its TTL or hop limit falls by one per hop
  from 64. Its payload holds its id, its key and its kind
  (:func:`~emulator.pcap.capture.data_payload`), padded so that the IP packet is as
  long as the ledger's ``size_bytes`` (which holds the id and key: 64 bytes in IPv6,
  44 in IPv4). A routed notice (a node's report of a dropped packet) goes the same
  way, as kind ``notice`` with key -1.
- A hop the ledger marks lost is a frame all the same (it was sent) with the comment
  ``lost``. A frame the MAC refused before sending (802.15.4's ``frame_too_long``) never
  went on air and is not in the ledger, nor here.
- Under a MAC (``[mac]``, the ledger's ``attempts`` column), a hop sent ``k`` times is
  ``k`` frames of one sequence number (802.11: the later ones with the Retry flag), and
  a unicast hop that arrived is followed by the receiver's ACK. The MAC does not record
  when each attempt left, so a hop's frames carry its start time plus one microsecond
  per frame (their order is right, their spacing is not).

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
>>> write_pcap(frame, path, link="802.15.4").stat().st_size > 2 * 60
True
>>> write_pcap(frame, path, link="token-ring")
Traceback (most recent call last):
...
ValueError: link: expected one of 802.11, 802.15.4, got 'token-ring'
"""
from __future__ import annotations

import os
import socket
import struct
from pathlib import Path

import dpkt
import dpkt.pcapng as pcapng
import pandas as pd

from emulator.pcap import aodv_wire, babel_wire, olsr_wire
from emulator.pcap.addresses import (GLOBAL, LINK_LOCAL, MAX_SHORT_NODE, ip6_bytes,
                                      ip_bytes)
from emulator.pcap.capture import DATA_PORT, DATA_TTL, ICMPV6, data_payload
from emulator.pcap.links import LINKS
from emulator.routing.base import BROADCAST

_ROUTING = "routing"
_MICROSECOND = 1e-6
#: The IP and UDP headers' bytes a data message's size includes, by IP version.
_HEADERS = {4: 20 + 8, 6: 40 + 8}
#: The multicast group a broadcast control packet goes to in IPv6, by port: all RPL
#: nodes (RFC 6550 §20.19), all Babel routers (RFC 8966 §5).
_MULTICAST = {ICMPV6: "ff02::1a", babel_wire.PORT: "ff02::1:6"}
#: The routings whose packets hold IPv4 addresses, by port: not written in IPv6.
IPV4_ROUTINGS = {aodv_wire.PORT: "aodv", olsr_wire.PORT: "olsr"}


def write_pcap(source, path, *, link: str = "802.11",
               seconds_per_unit: float = 1.0) -> Path:
    """Write the transmissions of ``source`` to ``path`` as pcapng with the link headers
    ``link`` (a key of :data:`~emulator.pcap.links.LINKS`; see the module docstring);
    returns the path.

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
    ports = {port for port, _, _ in payloads.values()}
    version = 6 if link == "802.15.4" or ICMPV6 in ports else 4
    if version == 6 and ports & set(IPV4_ROUTINGS):
        name = IPV4_ROUTINGS[min(ports & set(IPV4_ROUTINGS))]
        raise ValueError(f"link: {link} frames carry IPv6 (6LoWPAN) and {name}'s packets "
                         "hold IPv4 addresses: write this run with link='802.11'")
    highest = int(ledger[["src", "dst", "hop_u", "hop_v"]].max().max()) if len(ledger) else 0
    if link == "802.15.4" and highest > MAX_SHORT_NODE:
        raise ValueError(f"link: 802.15.4 short addresses number nodes 0 .. "
                         f"{MAX_SHORT_NODE}, the run has node {highest}")
    times = ledger["time"].to_numpy(float) * seconds_per_unit
    shift = max(0.0, -float(times.min())) if len(times) else 0.0
    links = LINKS[link]()
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as out:
            writer = pcapng.Writer(out, snaplen=65535, linktype=links.linktype,
                                   shb=_section(shift))
            packets = _Packets(payloads, keys, version)
            with_mac = "attempts" in ledger.columns
            for row, t in zip(ledger.itertuples(index=False), times + shift):
                u, v = int(row.hop_u), int(row.hop_v)
                frame = links.frame(u, v, packets.packet(row), version)
                attempts = int(row.attempts) if with_mac else 1
                for k in range(attempts):
                    sent = frame if k == 0 else links.retried(frame)
                    _write(writer, sent, t + k * _MICROSECOND,
                           row.lost and k == attempts - 1)
                if with_mac and not row.lost and v >= 0:
                    writer.writepkt_time(links.ack(frame), t + attempts * _MICROSECOND)
    except BaseException:   # no half-written file left beside it
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)
    return path


def _write(writer, frame: bytes, t: float, lost: bool) -> None:
    """One frame at ``t``, with the comment ``lost`` if it was."""
    if not lost:
        writer.writepkt_time(frame, t)
        return
    writer.writepkt(pcapng.EnhancedPacketBlockLE(
        pkt_data=frame, caplen=len(frame), pkt_len=len(frame),
        opts=[pcapng.PcapngOptionLE(code=pcapng.PCAPNG_OPT_COMMENT, text="lost"),
              pcapng.PcapngOptionLE(code=pcapng.PCAPNG_OPT_ENDOFOPT)]), t)


def _tables(source) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    if isinstance(source, pd.DataFrame):
        if "ledger" not in source.attrs:
            raise ValueError("source: expected deliver(..., capture=True)'s frame (its "
                             "attrs hold no ledger)")
        return source.attrs["ledger"], source.attrs.get("capture")
    return source.ledger, source.capture


def _split(capture: pd.DataFrame | None) -> tuple[dict, dict]:
    """``({msg_id: (port, TTL, payload)}`` of the control packets, ``{msg_id: key}``
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


class _Packets:
    """Builds each ledger row's IP packet (IP ``version`` 4 or 6); numbers the control
    packets' IPv4 ids, and counts each data message's hops for its TTL."""

    def __init__(self, payloads: dict, keys: dict, version: int):
        self.payloads, self.keys, self.version = payloads, keys, version
        self._hops: dict[int, int] = {}    # hops taken, by data message
        self._ip_id = 0

    def packet(self, row) -> bytes:
        u, v = int(row.hop_u), int(row.hop_v)
        control = self.payloads.get(row.msg_id) if row.kind == _ROUTING else None
        if control is not None:
            port, ttl, payload = control
            if self.version == 6:
                dst = (socket.inet_pton(socket.AF_INET6, _MULTICAST[port])
                       if v == BROADCAST else ip6_bytes(v, LINK_LOCAL))
                return _ip6(ip6_bytes(u, LINK_LOCAL), dst, port, payload, ttl)
            self._ip_id += 1
            return _udp_ip(u, v, port, payload, ttl, self._ip_id)
        hops = self._hops.get(row.msg_id, 0)
        self._hops[row.msg_id] = hops + 1
        kind = "notice" if row.kind == _ROUTING else row.kind
        payload = data_payload(int(row.msg_id), self.keys.get(row.msg_id, -1), kind,
                               int(row.size_bytes) - _HEADERS[self.version])
        src, dst, ttl = int(row.src), int(row.dst), max(1, DATA_TTL - hops)
        if self.version == 6:
            return _ip6(ip6_bytes(src, GLOBAL), ip6_bytes(dst, GLOBAL), DATA_PORT,
                        payload, ttl)
        return _udp_ip(src, dst, DATA_PORT, payload, ttl, int(row.msg_id) & 0xFFFF)


def _udp(port: int, payload: bytes) -> dpkt.udp.UDP:
    udp = dpkt.udp.UDP(sport=port, dport=port, data=payload)
    udp.ulen = len(udp)
    return udp


def _udp_ip(src: int, dst: int, port: int, payload: bytes, ttl: int, ip_id: int) -> bytes:
    """An IPv4 packet holding a UDP datagram from ``port`` to ``port``, checksums
    computed (by dpkt)."""
    ip = dpkt.ip.IP(src=ip_bytes(src), dst=ip_bytes(BROADCAST if dst < 0 else dst),
                    p=dpkt.ip.IP_PROTO_UDP, ttl=ttl, id=ip_id, data=_udp(port, payload))
    ip.len = len(ip)
    return bytes(ip)


def _ip6(src: bytes, dst: bytes, port: int, payload: bytes, hop_limit: int) -> bytes:
    """An IPv6 packet from address ``src`` to ``dst`` holding ICMPv6 message
    ``payload`` (``port`` :data:`~emulator.pcap.capture.ICMPV6`) or a UDP datagram from
    ``port`` to ``port``; the checksum computed (by dpkt)."""
    if port == ICMPV6:
        kind, code = payload[0], payload[1]
        data, nxt = dpkt.icmp6.ICMP6(type=kind, code=code, data=payload[4:]), 58
    else:
        data, nxt = _udp(port, payload), dpkt.ip.IP_PROTO_UDP
    ip6 = dpkt.ip6.IP6(src=src, dst=dst, nxt=nxt, hlim=hop_limit, data=data)
    ip6.plen = len(data)
    return bytes(ip6)
