"""OLSR at every node (RFC 3626): the one class that sends, receives and owns the timers.

What runs, by the RFC's sections:

- **Link sensing and neighbour detection** (§7, §8): every node broadcasts a HELLO each
  HELLO_INTERVAL (less a jitter up to MAXJITTER) listing the neighbours it hears, the
  symmetric ones and its MPRs; a link is symmetric while each side hears itself listed,
  and is held NEIGHB_HOLD_TIME after the last HELLO. Two-hop neighbours come from the
  symmetric neighbours' HELLOs.
- **MPR selection and flooding** (§8.3, §3.4): each node picks its MPRs among its
  symmetric neighbours (:mod:`.mpr`); a node that some neighbour chose as MPR sends a TC
  with its selectors each TC_INTERVAL, its ANSN raised when they change; a TC is
  processed once per (originator, sequence number) for DUP_HOLD_TIME, only from a
  symmetric neighbour, and forwarded (after a jitter up to MAXJITTER) only by an MPR of
  the neighbour it came from.
- **Routing** (§9.5, §10): a TC's selectors are kept TOP_HOLD_TIME unless a TC with a
  greater ANSN replaces them; the routing table is computed from the symmetric
  neighbours, the two-hop neighbours and the topology set (:mod:`.routes`) when one of
  them changed, so between updates it is as stale as what the node has heard. A packet
  with no route is dropped (``no_route``); a route over a link that has gone loses its
  packets (``link_break``) until the link times out, unless ``link_layer_feedback``.

- **Packets of several messages** (§3.3, §3.4; RFC 5148's jitter): with
  ``max_messages_per_packet`` above 1 (the default, 64, is ns-3's OLSR_MAX_MSGS) a
  message a node generates or relays is queued; the first one to find the queue empty
  sets it to leave after a jitter drawn up to MAXJITTER, and every message queued by
  then leaves with it, in one packet (one transmission, IPv4, UDP and packet headers
  paid once), as many packets as ``max_messages_per_packet`` requires. HELLO and TC
  timers then run at their plain intervals, since the queue's wait is the jitter (ns-3's
  ``QueueMessage``). With 1, every message leaves at once in a packet of its own, the
  HELLO and TC intervals less a jitter up to MAXJITTER and a relayed TC after one.

What the nodes learn is kept as arrays (:mod:`.state`) and learnt compiled: the packets
heard (:mod:`.receive`), the purges, the MPR selection and the tables. This class holds
the timers, the queues of messages and what is sent; on the links medium without
batteries a compiled loop runs all of these (:mod:`.forward`) the way this class does.

Left out: multiple interfaces (MID, HNA), willingness other than the default, LOST link
codes, the immediate TC on a change of selectors and the empty TCs sent after the last
selector leaves. Expired entries are purged at a node's HELLO ticks, so they may count
for up to one HELLO_INTERVAL more.

Example: a HELLO queued at 0 and a TC at 0.1 leave as one packet when the HELLO's
jitter (a draw up to ``maxjitter``) has not run out by 0.1, as two when it has.

>>> from emulator.routing.olsr.messages import Hello, Tc
>>> class Recorder:   # a host that only records; its timers are fired below
...     def __init__(self): self.sent, self.timers = [], []
...     def send_control(self, t, u, dst, control, size):
...         self.sent.append((round(t, 3), control.body.types, size))
...     def set_timer(self, t, u, tag): self.timers.append((t, u, tag))
>>> def run(maxjitter):
...     host = Recorder()
...     params = {"max_messages_per_packet": 64, "maxjitter": maxjitter}
...     olsr = Olsr(host, [0, 1], params, 1)
...     def fire(until):
...         while host.timers and min(host.timers)[0] <= until:
...             host.timers.sort()
...             olsr.on_timer(*host.timers.pop(0))
...     olsr._emit(0.0, 0, "HELLO", Hello(sym=(1,), asym=(), mprs=()))
...     fire(0.1)
...     olsr._emit(0.1, 0, "TC", Tc(0, 1, 1, (1,), 255, 0))
...     fire(10.0)
...     return host.sent
>>> run(maxjitter=0.5)        # one transmission of 56 + 52 bytes less one header (32)
[(0.448, ('HELLO', 'TC'), 76)]
>>> run(maxjitter=0.05)       # the HELLO left before the TC was generated
[(0.045, ('HELLO',), 56), (0.13, ('TC',), 52)]
"""
from __future__ import annotations

import numpy as np

from emulator.routing import bits
from emulator.routing.base import BROADCAST, Control, Protocol
from emulator.routing.olsr.forward import FLUSH as _FLUSH
from emulator.routing.olsr.forward import OlsrLoop
from emulator.routing.olsr.forward import HELLO_TAG as _HELLO
from emulator.routing.olsr.forward import TC_TAG as _TC
from emulator.routing.olsr.forward import TC_TTL as _TTL
from emulator.routing.olsr.messages import Hello, Packet, Tc
from emulator.routing.olsr.receive import hear
from emulator.routing.olsr.state import Repositories



class Olsr(Protocol):
    """OLSR's state at every node (see the module docstring); ``params`` as
    :data:`emulator.routing.params.OLSR`, in time units."""

    name = "olsr"
    packs_messages = True

    def __init__(self, host, nodes, params: dict, seed: int):
        super().__init__(host, nodes, params, seed)
        #: every node's repositories (and what their routing tables are computed from)
        self._reps = Repositories(self.nodes)
        #: what each node keeps besides (by position): its last message sequence number,
        #: its ANSN and the selectors its last TC advertised (a bit set, routing.bits)
        n = len(self.nodes)
        self.msg_seqs, self.ansns = np.zeros(n, np.int64), np.zeros(n, np.int64)
        self.advertised = np.zeros((n, bits.words(n)), np.uint64)
        self._inputs = self._reps.inputs
        self.max_messages = params["max_messages_per_packet"]
        #: the messages each node has queued, and when their packet leaves
        self._queued: dict[int, list] = {u: [] for u in self.nodes}
        self._flush_at: dict[int, float] = {}

    def _jittered(self, interval: float) -> float:
        if self.max_messages > 1:   # the queue's wait jitters the sending instead
            return interval
        return interval - self.uniform() * self.params["maxjitter"]

    # -- timers -------------------------------------------------------------------------
    def start(self, t: float) -> None:
        p = self.params
        for u in self.nodes:   # random phases: the nodes do not all send at once
            self.host.set_timer(t + self.uniform() * p["hello_interval"], u, _HELLO)
            self.host.set_timer(t + self.uniform() * p["tc_interval"], u, _TC)

    def on_timer(self, t: float, u: int, tag) -> None:
        if tag == _HELLO:
            self._hello(t, u)
        elif tag == _TC:
            self._tc(t, u)
        elif tag == _FLUSH:
            self._flush(t, u)
        else:   # ("forward", tc): a TC this node relays, after its jitter
            self._send(t, u, (("TC", tag[1]),))

    def _hello(self, t: float, u: int) -> None:
        reps = self._reps
        reps.purge(u, t)
        mprs = reps.mprs(u, t)
        hello = Hello(reps.symmetric(u, t), reps.heard_only(u, t), tuple(sorted(mprs)))
        self._emit(t, u, "HELLO", hello)
        self.host.set_timer(t + self._jittered(self.params["hello_interval"]), u, _HELLO)

    def _tc(self, t: float, u: int) -> None:
        i = self.position[u]
        selectors = self._reps.selectors(u, t)
        if selectors:
            now = np.zeros(self.advertised.shape[1], np.uint64)
            bits.fill(now, self.positions(sorted(selectors)))
            if not np.array_equal(now, self.advertised[i]):
                self.ansns[i] += 1
                self.advertised[i] = now
            self.msg_seqs[i] += 1
            seq, ansn = self.msg_seqs.item(i), self.ansns.item(i)
            self._reps.remember(t, u, u, seq, t + self.params["dup_hold_time"])
            self._emit(t, u, "TC", Tc(u, seq, ansn, tuple(sorted(selectors)), _TTL, 0))
        self.host.set_timer(t + self._jittered(self.params["tc_interval"]), u, _TC)

    # -- packets heard ------------------------------------------------------------------
    def on_receive(self, t: float, u: int, msg) -> None:
        self.on_receive_all(t, (u,), msg)

    def on_receive_all(self, t: float, nodes, msg) -> None:
        """Each of ``nodes`` heard the packet ``msg``: its messages learnt in the
        packet's order (§3.4, compiled: :func:`~emulator.routing.olsr.receive.hear`),
        then the TCs to relay sent on, receiver by receiver."""
        packet = msg.payload.body
        messages = packet.messages
        for u, k in hear(self._reps, t, msg.src, nodes, self.positions(nodes), packet.rows,
                         self.params):
            tc = messages[k][1]
            self._relay(t, u, tc._replace(ttl=tc.ttl - 1, hops=tc.hops + 1))

    def _relay(self, t: float, u: int, tc: Tc) -> None:
        """``u`` forwards ``tc``, as an MPR of the neighbour it came from (§3.4.1)."""
        if self.max_messages > 1:
            self._emit(t, u, "TC", tc)
        else:
            self.host.set_timer(t + self.uniform() * self.params["maxjitter"], u,
                                ("forward", tc))

    # -- forwarding ---------------------------------------------------------------------
    def compiled_loop(self, host):
        """Data packets and notices hop by hop in a compiled loop beside the host's
        calendar, and with more than one message a packet this protocol's packets and
        timers too (:mod:`.forward`, which reads the host's positions as the
        tables')."""
        if host._gids.tolist() != self._inputs.ids:
            return None
        return OlsrLoop(host, self)

    def next_hop(self, t: float, u: int, msg) -> int | None:
        v = self._inputs.route(t, u, msg.dst)   # self.route's, at every data hop
        if v is None:
            self.host.drop(t, u, msg, "no_route")
        return v

    def route(self, t: float, u: int, dst: int) -> int | None:
        """``u``'s next hop towards ``dst`` at ``t`` (None: none), by its table as
        computed when first asked for after a change (§10)."""
        return self._inputs.route(t, u, dst)

    def on_link_failure(self, t: float, node: int, neighbour: int) -> None:
        if self.params["link_layer_feedback"]:
            self._reps.break_link(node, neighbour, t)

    # -- sending ------------------------------------------------------------------------
    def _emit(self, t: float, u: int, kind: str, message) -> None:
        """``u`` has ``message`` to send at ``t``: into its queue (leaving with what
        else is queued by the time the first one's jitter runs out), or at once in a
        packet of its own with ``max_messages_per_packet`` 1 (a relayed TC has had its
        jitter then)."""
        if self.max_messages == 1:
            self._send(t, u, ((kind, message),))
            return
        queue = self._queued[u]
        queue.append((kind, message))
        # a flush set in the past was refused by the host (the run was over): set anew
        if len(queue) == 1 or self._flush_at.get(u, t) < t:
            at = t + self.uniform() * self.params["maxjitter"]
            self._flush_at[u] = at
            self.host.set_timer(at, u, _FLUSH)

    def _flush(self, t: float, u: int) -> None:
        queue, self._queued[u] = self._queued[u], []
        for k in range(0, len(queue), self.max_messages):
            self._send(t, u, tuple(queue[k:k + self.max_messages]))

    def _send(self, t: float, u: int, messages: tuple) -> None:
        """One packet of ``messages`` broadcast by ``u``; labelled, as ns-3's trace
        labels it, by its first message's type (the host counts every message too)."""
        packet = Packet(messages, self._reps.rows(messages))
        self.host.send_control(t, u, BROADCAST, Control(messages[0][0], packet),
                               packet.bytes())
