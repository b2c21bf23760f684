"""The emulated network checked against ns-3 on the same scenario (issue 27).

One :class:`~benchmarks.ns3_validation.scenario.Scenario` — nodes and their ns-2 movement
trace, flows, the routing protocol, the seed — runs in ns-3 (:mod:`.ns3_side`: 802.11b
ad hoc, Yans channel with log-distance loss, a fixed PHY rate, ns-3's AODV or OLSR,
FlowMonitor for the data, the ``Ipv4L3Protocol`` Tx trace for the control packets) and
in the testbed's network (:mod:`.testbed_side`: :func:`emulator.deliver` on the shared
medium under the same log-distance radio, the emulated AODV or OLSR). :mod:`.report`
writes ``docs/VALIDATION.md``; ``python -m benchmarks.validate_ns3`` is the entry.
"""
