"""How the network behaves over time: routing, transport, the cost/byte ledger, disorder,
the one step driver and the backends that run it (simpy, mininet).

It runs node programs through the operator contract (:mod:`contract`, the layer below)
and imports nothing of ``spark_nodes``, ``experiments`` or ``analysis``.

``emulator.deliver(graph, messages, medium=..., seed=..., dynamics=...)`` runs the network
alone (see :mod:`emulator.deliver`); ``emulator.write_pcap(frame, "run.pcapng")`` writes what
``deliver(..., capture=True)`` kept as a packet capture (:mod:`emulator.pcap`).
"""
from emulator.deliver import deliver


def write_pcap(source, path, **options):
    """A run's transmissions as pcapng: :func:`emulator.pcap.write.write_pcap` (imported
    on first use: dpkt loads only for a capture)."""
    from emulator.pcap.write import write_pcap as write

    return write(source, path, **options)


__all__ = ["deliver", "write_pcap"]
