"""What a routing protocol and its host (the transport) agree on.

A protocol keeps the state of every node (their tables, queues and timers) and reacts to
four kinds of event the transport hands it, in the calendar's time order:

- :meth:`Protocol.on_timer`: a timer the protocol set at a node fired;
- :meth:`Protocol.on_receive`: a node heard a control packet (one hop, unicast or
  broadcast) from a neighbour;
- :meth:`Protocol.next_hop`: a node must forward a data packet (or a :class:`Notice`):
  the neighbour to send it to, or ``None`` when the protocol queued it (waiting for a
  route) or dropped it (through :meth:`Host.drop`);
- :meth:`Protocol.on_link_failure`: a node's MAC could not deliver a frame to a
  neighbour (it is out of range or down), the link-layer feedback of RFC 3561 §6.11.

Through the :class:`Host` it sends control packets (:meth:`Host.send_control`, one hop,
to a neighbour or :data:`BROADCAST`), sets timers, puts packets it held back on their way
(:meth:`Host.release`) and drops packets with a reason (:meth:`Host.drop`). A protocol
never reads the network's links: it knows what its packets told it.

Example: a protocol that floods nothing and routes every packet straight to its
destination (a neighbour here).

>>> class Direct(Protocol):
...     name = "direct"
...     def next_hop(self, t, node, msg): return msg.dst
>>> Direct(host=None, nodes=[0, 1], params={}, seed=1).next_hop(0.0, 0, Notice(0, 1, None, ""))
1
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

#: The destination of a one-hop broadcast (every neighbour in range hears it).
BROADCAST = -1
#: Bytes of the IPv4 and UDP headers in front of every control packet (20 + 8).
IP_UDP_BYTES = 28
#: Bytes of an ICMP destination-unreachable message with the dropped packet's IP header
#: and first 8 bytes (RFC 792), in an IPv4 header: 20 + 8 + 20 + 8.
NOTICE_BYTES = 56


class Control(NamedTuple):
    """The payload of a control message: the packet ``type`` (``"HELLO"``, ``"RREQ"``,
    ``"RREP"``, ``"RERR"``, ``"TC"``) and the protocol's own ``body``. A body that
    carries several messages (an OLSR packet) names their types in ``body.types``, and
    ``type`` is the first one's; the host counts packets and messages apart."""

    type: str
    body: Any


class Notice(NamedTuple):
    """A routed report to a packet's source that the packet was dropped: what an IPv4
    router's ICMP destination-unreachable (or time-exceeded) message does. The node that
    drops a packet, or whose MAC failed to deliver it, sends one; it is routed like data
    (never waits for a route discovery) and can itself be lost, and then the source never
    learns. ``src`` is the node that dropped the packet, ``dst`` the packet's source."""

    src: int
    dst: int
    packet: Any      # the dropped contract.messages.Message
    reason: str


class Host:
    """The transport's side of the contract (implemented by
    :class:`emulator.transport.Transport`); documented here, for protocol writers."""

    def send_control(self, t: float, node: int, dst: int, control: Control,
                     size_bytes: int) -> None:
        """Send ``control`` from ``node`` at ``t``, one hop: to the neighbour ``dst`` or
        to :data:`BROADCAST`."""
        raise NotImplementedError

    def set_timer(self, t: float, node: int, tag) -> None:
        """Call the protocol's ``on_timer(t, node, tag)`` at ``t`` (not past the run's
        end)."""
        raise NotImplementedError

    def link_delivery(self, t: float, u: int, v: int, size_bytes: int) -> float:
        """The probability that a frame of ``size_bytes`` from ``u`` reaches its
        neighbour ``v`` at ``t``, as the MAC estimates it (RPL's ETX is its inverse)."""
        raise NotImplementedError

    def release(self, t: float, node: int, msg) -> None:
        """Hand ``msg``, held back by the protocol at ``node``, to forwarding again at
        ``t``."""
        raise NotImplementedError

    def drop(self, t: float, node: int, msg, reason: str) -> None:
        """Drop ``msg`` at ``node`` at ``t`` for ``reason`` (counted, and its source told
        by a :class:`Notice` when ``node`` is not the source)."""
        raise NotImplementedError


class Protocol:
    """One routing protocol's state at every node, driven by its :class:`Host`.

    ``params`` is the protocol's table of :mod:`emulator.routing.params`, in time units;
    ``seed`` seeds its own random draws (HELLO phases, jitter), apart from the
    transport's jitter and loss draws.
    """

    name = ""
    #: The draws :meth:`more_uniforms` makes at a time.
    uniforms_block = 1024
    #: Whether a control packet's body may carry several messages (``body.types``:
    #: OLSR's packets), which the host then counts one by one.
    packs_messages = False
    #: Whether a packet dropped at a node other than its source is reported back by a
    #: routed :class:`Notice` (the oracle's source learns at once instead).
    notices = True
    #: Under a MAC (``[mac]``), each broadcast's frame is queued U(0, this) seconds
    #: after it is sent (:class:`emulator.mac.adapter.MacChannel`): the jitter a
    #: protocol's implementation adds to its broadcasts; 0: none.
    mac_broadcast_jitter_s = 0.0

    def __init__(self, host: Host, nodes, params: dict, seed: int):
        self.host = host
        self.nodes = sorted(nodes)
        #: A node's position (its index in ``nodes``): its row and column in the
        #: arrays a protocol keeps for its compiled parts.
        self.position = {u: i for i, u in enumerate(self.nodes)}
        self._positions: dict[tuple, np.ndarray] = {}
        self.params = params
        self.rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, 3561])))
        #: The draws from U(0, 1) :meth:`uniform` gives, from the end: ``uniforms_left``
        #: of ``uniforms`` (a compiled loop may draw from them too, in turn).
        self.uniforms = np.zeros(0)
        self.uniforms_left = np.zeros(1, np.int64)

    def positions(self, nodes) -> np.ndarray:
        """The positions of ``nodes`` (ids) as an array, kept for the next time: a
        node's broadcasts in one epoch are heard by the same neighbours.

        >>> Protocol(None, [7, 3, 5], {}, 0).positions((5, 7)).tolist()
        [1, 2]
        """
        key = tuple(nodes)
        found = self._positions.get(key)
        if found is None:
            if len(self._positions) >= 4096:   # memory only: made again if asked
                self._positions.clear()
            position = self.position
            found = self._positions[key] = np.array([position[u] for u in key], np.int64)
        return found

    def uniform(self) -> float:
        """A draw from U(0, 1), from blocks (a scalar numpy draw costs microseconds)."""
        left = self.uniforms_left
        k = left.item(0)
        if not k:
            self.more_uniforms()
            k = left.item(0)
        left[0] = k - 1
        return self.uniforms.item(k - 1)

    def more_uniforms(self) -> None:
        """A block of draws more, taken after those left (:attr:`uniforms` is read from
        its end), so the draws are the same whenever the block is made.

        >>> p = Protocol(None, [0], {}, 0)
        >>> first = [p.uniform() for _ in range(3)]
        >>> q = Protocol(None, [0], {}, 0); q.more_uniforms(); q.more_uniforms()
        >>> [q.uniform() for _ in range(3)] == first
        True
        """
        k = self.uniforms_left.item(0)
        block = self.uniforms_block
        self.uniforms = np.concatenate([self.rng.random(block), self.uniforms[:k]])
        self.uniforms_left[0] = k + block

    def compiled_loop(self, host):
        """What runs some of this protocol's packets in a compiled loop beside the
        host's calendar on the links medium (:class:`~.compiled_loop.CompiledLoop`: AODV's
        route discoveries and data hops, :class:`~.aodv.discovery.RouteDiscoveries`),
        None for none. The host
        asks at its first advance, and hands it its sends, the data packets it sends
        on and the control packets it ``takes``."""
        return None

    def start(self, t: float) -> None:
        """Set the first timers (called once, when the transport starts at ``t``)."""

    def on_timer(self, t: float, node: int, tag) -> None:
        """A timer set with :meth:`Host.set_timer` fired."""

    def on_receive(self, t: float, node: int, msg) -> None:
        """``node`` heard the control message ``msg`` (its payload a :class:`Control`)
        from ``msg.src``."""

    def on_receive_all(self, t: float, nodes: list, msg) -> None:
        """Each of ``nodes`` (none of them the sender) heard the broadcast ``msg`` at
        ``t``, in this order: :meth:`on_receive` for each in turn. A protocol may do the
        work the receivers share once (AODV: a flooded RREQ's key and lifetimes)."""
        for node in nodes:
            self.on_receive(t, node, msg)

    def next_hop(self, t: float, node: int, msg) -> int | None:
        """The neighbour ``node`` sends ``msg`` to, or None (queued, or dropped)."""
        raise NotImplementedError

    def route(self, t: float, node: int, dst: int) -> int | None:
        """The neighbour ``node`` believes leads to ``dst`` at ``t``, None if it knows
        none; reads its tables only (nothing is sent, queued or refreshed)."""
        raise NotImplementedError

    def counters(self) -> dict:
        """The protocol's own counts for the run's figures (flat, named after the
        protocol: RPL's ``rpl_forwarding_errors``); none by default."""
        return {}

    def on_link_outcome(self, t: float, node: int, neighbour: int, attempts: int,
                        acked: bool) -> None:
        """Under a MAC: a unicast frame of ``node`` to ``neighbour`` took ``attempts``
        transmissions and was acknowledged or not (before :meth:`on_link_failure` for
        one that was not). Nothing by default; RPL learns its links' ETX from it."""

    def on_link_failure(self, t: float, node: int, neighbour: int) -> None:
        """``node``'s MAC failed to deliver a frame to ``neighbour``."""
