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

Left out: multiple interfaces (MID, HNA), willingness other than the default, LOST link
codes, the immediate TC on a change of selectors, the empty TCs sent after the last
selector leaves, and message piggybacking in one packet. Expired entries are purged at a
node's HELLO ticks, so they may count for up to one HELLO_INTERVAL more.
"""
from __future__ import annotations

from emulator.routing.base import BROADCAST, Control, Protocol
from emulator.routing.olsr.messages import Hello, Tc
from emulator.routing.olsr.mpr import select_mprs
from emulator.routing.olsr.routes import compute_routes
from emulator.routing.olsr.state import OlsrNode

_HELLO, _TC = "hello", "tc"
_TTL = 255


class Olsr(Protocol):
    """OLSR's state at every node (see the module docstring); ``params`` as
    :data:`emulator.routing.params.OLSR`, in time units."""

    name = "olsr"

    def __init__(self, host, nodes, params: dict, seed: int):
        super().__init__(host, nodes, params, seed)
        self._state = {u: OlsrNode() for u in self.nodes}

    def _jittered(self, interval: float) -> float:
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
        else:   # ("forward", tc): a TC this node relays, after its jitter
            self._broadcast(t, u, "TC", tag[1])

    def _hello(self, t: float, u: int) -> None:
        node = self._state[u]
        node.purge(t)
        symmetric = node.symmetric(t)
        node.mprs = frozenset(select_mprs(u, symmetric, node.valid_two_hop(t, symmetric)))
        hello = Hello(tuple(sorted(symmetric)), tuple(sorted(node.heard(t) - symmetric)),
                      tuple(sorted(node.mprs)))
        self._broadcast(t, u, "HELLO", hello)
        self.host.set_timer(t + self._jittered(self.params["hello_interval"]), u, _HELLO)

    def _tc(self, t: float, u: int) -> None:
        node = self._state[u]
        selectors = frozenset(v for v, until in node.selectors.items() if until > t)
        if selectors:
            if selectors != node.advertised:
                node.ansn += 1
                node.advertised = selectors
            node.msg_seq += 1
            node.seen.at(t).add((u, node.msg_seq), t + self.params["dup_hold_time"])
            self._broadcast(t, u, "TC", Tc(u, node.msg_seq, node.ansn,
                                           tuple(sorted(selectors)), _TTL, 0))
        self.host.set_timer(t + self._jittered(self.params["tc_interval"]), u, _TC)

    # -- packets heard ------------------------------------------------------------------
    def on_receive(self, t: float, u: int, msg) -> None:
        if msg.payload.type == "HELLO":
            self._on_hello(t, u, msg.src, msg.payload.body)
        else:
            self._on_tc(t, u, msg.src, msg.payload.body)

    def _on_hello(self, t: float, u: int, v: int, hello: Hello) -> None:
        """Link sensing (§7.1.1), two-hop neighbours (§8.2.1), MPR selectors (§8.4.1)."""
        node = self._state[u]
        hold = t + self.params["neighb_hold_time"]
        link = node.links.setdefault(v, [0.0, 0.0])
        was_symmetric = link[1] > t
        link[0] = hold
        if u in hello.sym or u in hello.asym:   # v hears u: the link is symmetric
            link[1] = hold
        if link[1] > t:
            reach = frozenset(w for w in hello.sym if w != u)
            old = node.two_hop.get(v)
            node.two_hop[v] = (reach, hello.sym, hold)
            if old is None or old[0] != reach or not was_symmetric:
                node.dirty = True
            if u in hello.mprs:
                node.selectors[v] = hold
            else:
                node.selectors.pop(v, None)
        elif was_symmetric:
            node.dirty = True

    def _on_tc(self, t: float, u: int, v: int, tc: Tc) -> None:
        """Topology (§9.5) and the default forwarding rule (§3.4.1)."""
        node = self._state[u]
        key = (tc.orig, tc.seq)
        if tc.orig == u or node.seen.holds(key, t):
            return
        link = node.links.get(v)
        if link is None or link[1] <= t:
            return   # not from a symmetric neighbour: neither processed nor forwarded
        node.seen.add(key, t + self.params["dup_hold_time"])
        entry = node.topology.get(tc.orig)
        if entry is None or tc.ansn >= entry[0]:
            if node.learn_topology(tc.orig, tc.ansn, tc.selectors,
                                   t + self.params["top_hold_time"]):
                node.dirty = True
        if tc.ttl > 1 and node.selectors.get(v, 0.0) > t:
            relayed = tc._replace(ttl=tc.ttl - 1, hops=tc.hops + 1)
            self.host.set_timer(t + self.uniform() * self.params["maxjitter"], u,
                                ("forward", relayed))

    # -- forwarding ---------------------------------------------------------------------
    def next_hop(self, t: float, u: int, msg) -> int | None:
        v = self.route(t, u, msg.dst)
        if v is None:
            self.host.drop(t, u, msg, "no_route")
        return v

    def route(self, t: float, u: int, dst: int) -> int | None:
        node = self._state[u]
        if node.dirty:   # computed when next asked for after a change (§10)
            symmetric = node.symmetric(t)
            node.routes = compute_routes(u, symmetric, node.valid_two_hop(t, symmetric),
                                         node.valid_topology(t))
            node.dirty = False
        return node.routes.get(dst)

    def on_link_failure(self, t: float, node: int, neighbour: int) -> None:
        if self.params["link_layer_feedback"]:
            state = self._state[node]
            link = state.links.get(neighbour)
            if link is not None:
                link[0] = link[1] = t
                state.dirty = True

    def _broadcast(self, t: float, u: int, kind: str, packet) -> None:
        self.host.send_control(t, u, BROADCAST, Control(kind, packet), packet.bytes())
