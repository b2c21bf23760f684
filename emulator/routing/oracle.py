"""The oracle as a protocol of the routed host: for a run whose shared medium has a MAC.

The oracle's own transport (:class:`emulator.transport.Transport`) is compiled around the
shared channel's perfect scheduler. With a MAC (``[mac]``, :mod:`emulator.mac.adapter`)
the routed host (:class:`emulator.routing.host.RoutedTransport`) runs every routing,
the oracle included, through one MAC adapter: this class gives it the oracle's rule,
the epoch's least-cost next hop, known at once and with no control packet. It is the
one protocol that reads the network's links (that is what the oracle is). A packet
dropped anywhere is known to its source at once, as the oracle's transport has it
(no notice is routed back: :attr:`notices` False).

>>> import networkx as nx
>>> from emulator.network import Network
>>> class Host:
...     class network:
...         view = staticmethod(lambda t: Network(OneEpoch()).view(t))
>>> class OneEpoch:
...     epochs = [0.0]
...     def snapshot(self, t): return nx.path_graph(3)
>>> from contract.messages import Message
>>> OracleRoutes(Host, [0, 1, 2], {}, 1).next_hop(0.0, 0, Message(0, "data", 0, 2, 0.0, 1, 8, None))
1
"""
from __future__ import annotations

from emulator.routing.base import Protocol


class OracleRoutes(Protocol):
    """Next hops from the epoch's least-cost trees (see the module docstring)."""

    name = "oracle"
    notices = False

    def next_hop(self, t: float, node: int, msg) -> int | None:
        hop = self.host.network.view(t).next_hop(node, msg.dst)
        if hop is None:
            self.host.drop(t, node, msg, "no_route")
        return hop

    def route(self, t: float, node: int, dst: int) -> int | None:
        return self.host.network.view(t).next_hop(node, dst)
