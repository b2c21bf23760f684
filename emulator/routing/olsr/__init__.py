"""OLSR, Optimized Link State Routing (RFC 3626), as a protocol of the emulated network:
:mod:`.messages` (HELLO, TC), :mod:`.state` (what a node learns: links, two-hop
neighbours, MPR selectors, topology), :mod:`.mpr` (MPR selection), :mod:`.routes` (the
routing table from the learnt topology), :mod:`.protocol` (the one class that sends,
receives and owns the timers). What it implements and leaves out: :mod:`.protocol`.
"""
from emulator.routing.olsr.protocol import Olsr

__all__ = ["Olsr"]
