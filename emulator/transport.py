"""Hop-by-hop transport of messages over the time-varying network (simpy backend).

A message walks its path one hop at a time. At each node the next hop is looked up in
the routing of the epoch in force *at that moment*, so a route change mid-flight re-routes
the message — one of the ways traffic drifts out of order. Per hop:

1. wait for the directed link (FIFO per link, in injection order),
2. serialize ``size_bytes / bandwidth``,
3. propagate ``delay + U(0, jitter)``,
4. draw a loss with the link's probability.

The hop times are computed when the message is injected (the link state of every future
epoch is known from the mobility / schedule), which is exactly what per-hop SimPy
processes would compute, at a fraction of the cost. A hop towards a dead node, a missing
route or a loss draw ends the message; it is counted in :attr:`Transport.lost`, never
silently dropped.

Example
-------
>>> import networkx as nx
>>> from emulator.network import NetView
>>> from emulator.ledger import Ledger
>>> g = nx.Graph()
>>> nx.add_path(g, [0, 1, 2], cost=2.0, delay=0.1, bandwidth=100.0)
>>> class OneEpoch:
...     def view(self, t): return NetView.from_graph(g)
>>> led = Ledger()
>>> tr = Transport(OneEpoch(), led, seed=1)
>>> from emulator.messages import Message
>>> tr.send(Message(0, "data", 0, 2, 1.0, 1.0, 50, None))   # 2 x (0.5 s + 0.1 s)
2.2
>>> float(led.frame()["cost"].sum())
4.0
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from emulator.ledger import Ledger
from emulator.messages import Message


class Transport:
    """Computes hop times and losses, writes the ledger, returns arrival times."""

    def __init__(self, network, ledger: Ledger, seed: int):
        self.network = network
        self.ledger = ledger
        self.rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, 1013])))
        self._uniforms: list[float] = []
        self.link_free: dict[tuple[int, int], float] = {}
        #: Messages lost, by reason: "dead_node", "no_route", "link_loss".
        self.lost: Counter = Counter()
        self.hops = 0

    def _uniform(self) -> float:
        """The next U(0, 1) draw; drawn from the generator in blocks (a scalar numpy draw
        costs as much as a whole hop)."""
        if not self._uniforms:
            self._uniforms = self.rng.random(4096).tolist()[::-1]
        return self._uniforms.pop()

    def send(self, msg: Message) -> float | None:
        """Walk ``msg`` from ``src`` to ``dst``; its arrival time, or None if lost."""
        t, u, dst = msg.sent_at, msg.src, msg.dst
        ledger_add, view_at, link_free = self.ledger.add, self.network.view, self.link_free
        last_view = towards = None
        while u != dst:
            view = view_at(t)
            if view is not last_view:   # a new epoch: its next-hop table towards dst
                last_view, towards = view, view.next_hops_towards(dst)
            if not view.alive(u):
                self.lost["dead_node"] += 1
                return None
            v = towards.get(u)
            if v is None:
                self.lost["no_route"] += 1
                return None
            link = view.link(u, v)
            free = link_free.get((u, v), t)
            start = free if free > t else t
            done = start + (msg.size_bytes / link.bandwidth if link.bandwidth > 0 else 0.0)
            link_free[(u, v)] = done
            arrive = done + link.delay + (self._uniform() * link.jitter if link.jitter > 0 else 0.0)
            dropped = link.loss > 0 and self._uniform() < link.loss
            reached = dropped or view_at(arrive).alive(v)
            ledger_add(start, msg.msg_id, msg.kind, msg.src, dst, u, v, msg.size_units,
                       msg.size_bytes, link.cost, dropped or not reached)
            self.hops += 1
            if dropped:
                self.lost["link_loss"] += 1
                return None
            if not reached:
                self.lost["dead_node"] += 1
                return None
            t, u = arrive, v
        return t
