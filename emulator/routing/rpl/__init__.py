"""RPL (RFC 6550) in storing mode, as a protocol of the emulated network (``[network]
routing = "rpl"``, simpy backend): :mod:`.trickle` (RFC 6206's timer for DIOs),
:mod:`.objective` (OF0, MRHOF over ETX), :mod:`.packets` (DIO, DIS, DAO), :mod:`.tables`
(what a node knows), :mod:`.protocol` (the one class that sends, receives and owns the
timers). What it implements and leaves out: :mod:`.protocol`.
"""
from emulator.routing.rpl.protocol import Rpl

__all__ = ["Rpl"]
