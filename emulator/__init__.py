"""How the network behaves over time, and the operator contract at the bottom of the
layers: events, messages, node programs, the step driver, routing, transport, backends.

``emulator.deliver(graph, messages, medium=..., seed=..., dynamics=...)`` runs the network
alone (see :mod:`emulator.deliver`).
"""
from emulator.deliver import deliver

__all__ = ["deliver"]
