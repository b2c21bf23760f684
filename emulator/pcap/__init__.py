"""A run's packets as a capture Wireshark dissects: :func:`write_pcap`
(:mod:`emulator.pcap.write`), from what a run with a capture keeps
(:mod:`emulator.pcap.capture`), the routing protocols' packets in their RFC wire
formats (:mod:`.aodv_wire`, :mod:`.olsr_wire`, :mod:`.babel_wire`, :mod:`.rpl_wire`),
the link headers (:mod:`.links`: 802.11 or 802.15.4) and the nodes' addresses
(:mod:`.addresses`)."""
from emulator.pcap.write import write_pcap

__all__ = ["write_pcap"]
