"""Babel (RFC 8966) as a protocol of the emulated network, to set beside the real
``babeld`` that the Mininet backend runs (``[network] routing = "babel"`` on either
backend): :mod:`.packets` (one packet per transmission: a Hello, IHUs, Updates, seqno
requests), :mod:`.tables` (neighbours with their hello history and costs, routes,
feasibility distances), :mod:`.protocol` (the one class that sends, receives and owns
the timers). What it implements and leaves out: :mod:`.protocol`.
"""
from emulator.routing.babel.protocol import Babel

__all__ = ["Babel"]
