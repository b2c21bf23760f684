"""6LoWPAN fragmentation (RFC 4944 §5.3) under the 802.15.4 MAC, as Contiki-NG does it.

An 802.15.4 frame carries 116 bytes of payload (aMaxPHYPacketSize 127 less the 11 of
a short-address MAC header). A longer packet goes as fragments: the first with a FRAG1
header (4 bytes: dispatch and datagram size, tag) and the uncompressed IPv6 dispatch
(1 byte, RFC 4944 §5.1), the others with a FRAGN header (5: the same and an offset in
8-byte units); every fragment but the last carries a multiple of 8 bytes of the
packet, as much as fits (Contiki-NG's ``(max_payload - hdr_len) & 0xfffffff8``): 104.

Sender: every fragment goes to the MAC's queue at once, one after another (Contiki-NG's
``sicslowpan.c`` hands each to ``csma``, whose answer is "deferred"; its check for a
failed fragment never sees a failure, so the rest are sent anyway). Receiver: each hop
reassembles (route-over, as Contiki-NG forwards): a node holds at most
``contexts`` packets in reassembly at once (``SICSLOWPAN_REASS_CONTEXTS``, 2), a
context opened by a packet's first fragment and freed by its last, or after
``max_age`` seconds (``SICSLOWPAN_REASS_MAXAGE``, 8) when a fragment never came; a
first fragment finding no free context is dropped, and with it the packet
(``reassembly_full``). A packet arrives with its last fragment and only if every
fragment did; one above ``mtu_bytes`` (``UIP_BUFSIZE``, IPv6's minimum MTU of 1,280
bytes: Contiki-NG does no IPv6 fragmentation) is refused at once (``frame_too_long``).

What it leaves out: header compression (IPHC: the packet's bytes are what the transport
says; an IPHC header would shrink each packet by up to 38 bytes), and the timer's
effect on a context whose fragments all came (none: it is freed at once).

>>> sizes = Fragmentation().fragments(300, 116)
>>> sizes                     # 104 + 104 bytes of the packet, then the 92 left
[109, 109, 97]
>>> sum(sizes) - 300          # the headers: 4 + 1 + 5 + 5
15
>>> Fragmentation().fragments(100, 116) is None     # fits a frame
True
>>> Fragmentation().fragments(1281, 116)           # above the MTU: refused
[]
"""
from __future__ import annotations

import math
from dataclasses import dataclass

#: RFC 4944's fragment headers, bytes (FRAG1's with the IPv6 dispatch after it).
FRAG1_HEADER_BYTES = 4 + 1
FRAGN_HEADER_BYTES = 5


@dataclass(frozen=True)
class Fragmentation:
    """6LoWPAN's fragmentation and reassembly limits (Contiki-NG's defaults)."""

    contexts: int = 2         # SICSLOWPAN_REASS_CONTEXTS
    max_age: float = 8.0      # SICSLOWPAN_REASS_MAXAGE, seconds
    mtu_bytes: int = 1280     # UIP_BUFSIZE

    def check(self) -> "Fragmentation":
        """Raise a one-line ``ValueError`` naming the first bad field; return self."""
        if self.contexts < 1:
            raise ValueError(f"mac.reassembly_contexts: expected >= 1, got {self.contexts}")
        if not self.max_age > 0:
            raise ValueError(f"mac.reassembly_timeout: expected > 0 s, got {self.max_age}")
        return self

    def fragments(self, nbytes: int, largest: int) -> list[int] | None:
        """The frame payloads (bytes, headers included) ``nbytes`` goes as when a frame
        carries ``largest``: None if it fits one frame, ``[]`` if it is refused (above
        the MTU)."""
        if nbytes <= largest:
            return None
        if nbytes > self.mtu_bytes:
            return []
        first = (largest - FRAG1_HEADER_BYTES) & ~7
        rest = (largest - FRAGN_HEADER_BYTES) & ~7
        others = math.ceil((nbytes - first) / rest)
        last = nbytes - first - (others - 1) * rest
        return ([first + FRAG1_HEADER_BYTES] + [rest + FRAGN_HEADER_BYTES] * (others - 1)
                + [last + FRAGN_HEADER_BYTES])


class Fragment:
    """One fragment of a packet (:class:`Datagram`) as the MAC's frame table holds it."""

    __slots__ = ("datagram", "index")

    def __init__(self, datagram: "Datagram", index: int):
        self.datagram = datagram
        self.index = index


class Datagram:
    """A packet sent as fragments: their fates gathered into the packet's, per
    receiver (a unicast's one, a broadcast's every node in range).

    :meth:`tell` takes each fate of a fragment and returns the packet's fates it
    completes, as ``(node, time, reason, start)`` rows: at a receiver once it holds
    every fragment (``delivered``), or lost one to a collision (``collision``, a
    broadcast's), or found no free context for the first (``reassembly_full``); at the
    sender, once every fragment is decided, the first failure's reason if one failed
    there (``retry_limit``, ``channel_access_failure``, ...). ``start``: when the first
    fragment went on air. :meth:`frames`: each fragment's ``(bytes, attempts,
    received)``.
    """

    __slots__ = ("item", "sender", "unicast", "sizes", "attempts", "received", "seen", "decided",
                 "failure", "start", "got", "done", "told", "told_any")

    def __init__(self, item, sender: int, sizes: list[int], unicast: bool = True):
        self.item, self.sender, self.unicast, self.sizes = item, sender, unicast, sizes
        self.attempts = [0] * len(sizes)
        self.received = [False] * len(sizes)
        self.seen = [False] * len(sizes)   # a fragment's first fate came
        self.decided = 0
        self.failure = None   # the first failure's reason at the sender
        self.start = None
        self.got: dict[int, int] = {}      # fragments in a row each receiver holds
        self.done: set[int] = set()        # receivers whose fate is told
        self.told = False                  # the sender's failure is told
        self.told_any = False              # a fate of the packet is told

    def frames(self) -> tuple:
        return tuple(zip(self.sizes, self.attempts, self.received))

    def tell(self, index: int, node: int, t: float, attempts: int, reason: str,
             start: float, reassembly: "Reassembly") -> list[tuple]:
        self.attempts[index] = max(self.attempts[index], attempts)
        out = []
        if reason in ("delivered", "collision"):
            if self.start is None:
                self.start = start
            if node not in self.done:
                out = self._at_receiver(index, node, t, reason, reassembly)
        elif self.failure is None:
            self.failure = reason
        if not self.seen[index]:
            self.seen[index] = True
            self.decided += 1
        if self.decided == len(self.sizes) and self.failure is not None and not self.told:
            self.told = True
            out.append((self.sender, t, self.failure,
                        t if self.start is None else self.start))
        return out

    def _at_receiver(self, index, node, t, reason, reassembly) -> list[tuple]:
        if reason == "collision":   # the packet is lost there; its context times out
            self.done.add(node)
            return [(node, t, "collision", self.start)]
        self.received[index] = True
        if self.got.get(node, 0) != index:
            # a fragment after a gap (the receiver never had the first): dropped, as
            # Contiki-NG drops a FRAGN with no context
            self.done.add(node)
            return []
        if index == 0 and not reassembly.open(node, self, t):
            self.done.add(node)
            return [(node, t, "reassembly_full", self.start)]
        self.got[node] = index + 1
        if index + 1 < len(self.sizes):
            return []
        self.done.add(node)
        reassembly.close(node, self)
        return [(node, t, "delivered", self.start)]


class Reassembly:
    """Each node's reassembly contexts: at most ``contexts`` packets at once, each held
    until its last fragment or ``max_age`` (time units) after its first."""

    def __init__(self, contexts: int, max_age: float):
        self.contexts, self.max_age = contexts, max_age
        self._open: dict[int, dict] = {}   # node -> {datagram: expiry}

    def open(self, node: int, datagram: Datagram, t: float) -> bool:
        held = self._open.setdefault(node, {})
        for other in [d for d, expiry in held.items() if expiry <= t]:
            del held[other]
        if len(held) >= self.contexts:
            return False
        held[datagram] = t + self.max_age
        return True

    def close(self, node: int, datagram: Datagram) -> None:
        self._open.get(node, {}).pop(datagram, None)
