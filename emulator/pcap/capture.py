"""What a run keeps for its packet capture beyond the ledger: :class:`Capture`.

The ledger has every transmission's time, hop, message and size, but not what a packet
says. A run asked for a capture (``[run] capture = true``, ``deliver(...,
capture=True)``) keeps, beside it, each routing control packet's protocol object as it
was sent and each data message's key, and :meth:`Capture.frame` turns them into one row
per message: ``msg_id``, ``type``, ``port`` (the UDP port it goes to; 0 for an
ICMPv6 message: RPL's), ``ip_ttl`` (the IPv4 TTL or IPv6 hop limit it is sent with: an
AODV RREQ's own, 1 for other control packets, 64 for data at its source) and
``payload`` (the UDP payload's bytes, or the ICMPv6 message's: the RFC wire format of a
control packet; a data message's key, from which the writer makes its payload with the
ledger's id, kind and size).
:func:`emulator.pcap.write.write_pcap` joins these rows to the ledger's by ``msg_id``.

A data message's payload is ``msg_id`` and ``key`` as signed 64-bit big-endian
integers, then its kind in ASCII, zero-padded to the message's size. Its key is that of
the stream tuple it carries (the first one of a batch); -1 for a payload without an
integer key.

>>> from emulator.routing.base import Control
>>> from emulator.routing.aodv.packets import RrepAck
>>> cap = Capture("aodv", {}, 1.0)
>>> cap.control_sent(-1, 0, Control("RREP_ACK", RrepAck()))
>>> cap.data_sent(7, [type("T", (), {"key": 42})()])
>>> cap.frame()[["msg_id", "type", "port"]].values.tolist()
[[-1, 'RREP_ACK', 654], [7, 'data', 49000]]
>>> payload = data_payload(7, 42, "data", 30)
>>> len(payload), payload[:20].hex(" ", 4)
(30, '00000000 00000007 00000000 0000002a 64617461')
"""
from __future__ import annotations

import struct

import pandas as pd

from emulator.pcap import aodv_wire, babel_wire, olsr_wire, rpl_wire

#: The UDP port of the testbed's data messages (no dissector of Wireshark's claims it:
#: their payloads show as data).
DATA_PORT = 49000
#: The columns of :meth:`Capture.frame`.
COLUMNS = ("msg_id", "type", "port", "ip_ttl", "payload")
#: The IPv4 TTL a data message leaves its source with.
DATA_TTL = 64
#: The ``port`` of an ICMPv6 message (RPL's control messages): no UDP port.
ICMPV6 = 0
#: The UDP port of each protocol's control packets (:data:`ICMPV6` for RPL's).
PORTS = {"aodv": aodv_wire.PORT, "olsr": olsr_wire.PORT, "babel": babel_wire.PORT,
         "rpl": ICMPV6}
#: The routings whose runs can be captured: the protocols with a wire format here, and
#: the oracle (no control packets).
CAPTURED_ROUTINGS = ("oracle", *PORTS)


def capturable(routing: str) -> str | None:
    """Why a run of ``routing`` cannot be captured (one line), or None if it can.

    >>> capturable("aodv"), capturable("rpl"), capturable("dsr")[:38]
    (None, None, "dsr's packets have no wire format here")
    """
    if routing in CAPTURED_ROUTINGS:
        return None
    return (f"{routing}'s packets have no wire format here yet (captured: "
            f"{', '.join(CAPTURED_ROUTINGS)})")


def key_of(payload) -> int:
    """The key of the stream tuple a message carries (``payload.key``, or the first
    item's of a list or tuple of them), -1 if it has no integer key.

    >>> key_of(type("T", (), {"key": 3})()), key_of(["t1"]), key_of(None)
    (3, -1, -1)
    """
    if isinstance(payload, (list, tuple)) and payload and not hasattr(payload, "key"):
        payload = payload[0]
    key = getattr(payload, "key", None)
    try:
        return int(key) if int(key) == key else -1
    except (TypeError, ValueError, OverflowError):
        return -1


def data_payload(msg_id: int, key: int, kind: str, size: int) -> bytes:
    """The UDP payload of a data message (see the module docstring), at least ``size``
    bytes."""
    head = struct.pack("!qq", msg_id, key) + kind.encode("ascii", "replace")
    return head + bytes(max(0, size - len(head)))


class Capture:
    """A run's packets as sent, in order: :meth:`control_sent` for each control
    transmission of routing ``protocol`` (``params``: its parameters in time units, one
    of which is ``seconds_per_unit`` seconds), :meth:`data_sent` for each message an
    operator sends."""

    def __init__(self, protocol: str | None, params: dict | None,
                 seconds_per_unit: float = 1.0):
        self.protocol, self.params = protocol, params or {}
        self.seconds_per_unit = seconds_per_unit
        #: The DODAG root of an RPL run (its DIOs' DODAGID), as the protocol took it
        #: (the host sets it; ``params["root"]`` may be None: the lowest node id).
        self.root = self.params.get("root")
        self._control: list[tuple] = []   # (msg_id, sender, Control)
        self._keys: dict[int, int] = {}

    def control_sent(self, msg_id: int, sender: int, control) -> None:
        self._control.append((msg_id, sender, control))

    @property
    def packets(self) -> list[tuple]:
        """The control packets so far, in the order sent: ``(msg_id, sender, Control)``
        (:class:`~emulator.routing.base.Control`, the protocol's object as it was)."""
        return list(self._control)

    def data_sent(self, msg_id: int, payload) -> None:
        self._keys[msg_id] = key_of(payload)

    def data_keys(self, msg_ids, keys) -> None:
        """Keys of many data messages at once (``deliver``'s ``key`` column)."""
        self._keys.update(zip(map(int, msg_ids), map(int, keys)))

    def frame(self) -> pd.DataFrame:
        """One row per message (:data:`COLUMNS`), the control packets encoded in the
        order sent, then the data messages by id; a data row's payload is its key
        alone (8 bytes: the ledger has its id, kind and size)."""
        encode = self._encoder()
        ttl = aodv_wire.ip_ttl if self.protocol == "aodv" else (lambda _, __: 1)
        rows = [(msg_id, control.type, PORTS[self.protocol],
                 ttl(control.type, control.body), encode(sender, control))
                for msg_id, sender, control in self._control]
        rows += [(msg_id, "data", DATA_PORT, DATA_TTL, struct.pack("!q", key))
                 for msg_id, key in sorted(self._keys.items())]
        frame = pd.DataFrame(rows, columns=list(COLUMNS))
        return frame.astype({"msg_id": "int64", "type": "string", "port": "int64",
                             "ip_ttl": "int64"})

    def _encoder(self):
        """``encode(sender, control) -> bytes`` for the run's protocol."""
        if self.protocol == "aodv":
            return lambda _, c: aodv_wire.encode(c.type, c.body, self.seconds_per_unit)
        if self.protocol == "olsr":
            return olsr_wire.OlsrWire(self.params, self.seconds_per_unit).encode_control
        if self.protocol == "babel":
            return babel_wire.BabelWire(self.params, self.seconds_per_unit).encode_control
        if self.protocol == "rpl":
            return rpl_wire.RplWire(self.root, self.seconds_per_unit).encode_control
        return None
