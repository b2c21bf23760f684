"""How the network behaves over time: routing, transport, the cost/byte ledger, disorder,
the one step driver and the backends that run it (simpy, mininet).

It runs node programs through the operator contract (:mod:`contract`, the layer below)
and imports nothing of ``spark_nodes``, ``experiments`` or ``analysis``.

``emulator.deliver(graph, messages, medium=..., seed=..., dynamics=...)`` runs the network
alone (see :mod:`emulator.deliver`).
"""
from emulator.deliver import deliver

__all__ = ["deliver"]
