"""AODV, Ad hoc On-Demand Distance Vector routing (RFC 3561), as a protocol of the
emulated network: :mod:`.packets` (RREQ, RREP, RERR; a HELLO is a RREP), :mod:`.rtable`
(routes with their sequence numbers, lifetimes and precursors), :mod:`.rqueue` (packets
waiting for a route), :mod:`.protocol` (the one class that sends, receives and owns the
timers). What it implements and leaves out: :mod:`.protocol`.
"""
from emulator.routing.aodv.protocol import Aodv

__all__ = ["Aodv"]
