"""Routing protocols as a layer of the emulated network: ``[network] routing``.

``"oracle"`` (the default) is the idealisation the testbed began with: every node knows
the least-cost route of the current epoch at once (:mod:`emulator.network`), a dead relay
is avoided the instant it dies, and a sender learns of a loss at the moment it happens.
``"aodv"`` (RFC 3561, reactive), ``"olsr"`` (RFC 3626, proactive, link state) and
``"babel"`` (RFC 8966, proactive, distance vector) and ``"rpl"`` (RFC 6550, a
collection tree to one root, storing mode) replace it by
protocols that learn the network from messages: every control packet is a message on the
emulated medium (it queues, takes airtime, can be lost, and is a ledger row with
``kind = "routing"``), and a node learns of a broken link, a dead neighbour or a lost
packet only through a message or a timeout of its own. On the Mininet backend
``"babel"`` runs the real ``babeld`` on every host instead (:mod:`emulator.mininet.babel`).

The split follows ns-3's: per protocol a sub-package with its packets, the tables it
learns and one protocol class that owns the timers and is the one place that sends and
receives (:mod:`emulator.routing.aodv`, :mod:`emulator.routing.olsr`,
:mod:`emulator.routing.babel`, :mod:`emulator.routing.rpl`). The transport
(:class:`emulator.transport.Transport`) is their host (:class:`~emulator.routing.base.Host`).
The parameters, with the RFCs' names and defaults: :mod:`emulator.routing.params`.

>>> ROUTINGS
('oracle', 'aodv', 'olsr', 'babel', 'rpl')
>>> PROTOCOLS.names()
['aodv', 'babel', 'olsr', 'rpl']
"""
from __future__ import annotations

from contract.registry import Registry

#: Every value of ``[network] routing``; the first is the default.
ROUTINGS = ("oracle", "aodv", "olsr", "babel", "rpl")
#: The routings each backend can run (RPL not on Mininet: Debian packages no RPL daemon).
BACKEND_ROUTINGS = {"simpy": ROUTINGS, "mininet": ("oracle", "babel")}
#: The protocols the emulated network runs, by name (each a class of
#: :class:`~emulator.routing.base.Protocol`).
PROTOCOLS = Registry("routing protocol", {"aodv": "emulator.routing.aodv:Aodv",
                                          "olsr": "emulator.routing.olsr:Olsr",
                                          "babel": "emulator.routing.babel:Babel",
                                          "rpl": "emulator.routing.rpl:Rpl"})
