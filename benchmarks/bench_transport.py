"""The transport's hop loop alone, in CPU seconds, on bench_emulator's scenario.

200 nodes, random waypoint, 20 sources x 50 messages per time unit to one sink, 100 time
units (458 k hops on links). Every epoch's view and its routing arrays are built before
the clock starts and all are kept, so the figure is the hop loop (with the sink's table
of each epoch, which the kernel builds as a run does), the ledger rows and the jitter
draws only; building the ledger's DataFrame is timed apart. CPU seconds of this
process (``time.process_time``), not wall time: on a shared machine the wall clock also
counts the other processes. The last two figures (sum of arrival times, total cost) must
not change with a change that claims to keep results.

Run: ``python benchmarks/bench_transport.py [--medium shared]``
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import topologies
from contract.messages import Message
from emulator.ledger import Ledger
from emulator.network import Network
from emulator.transport import Transport


def messages(nodes: int = 200, sources: int = 20, rate: float = 50.0,
             duration: float = 100.0, seed: int = 1):
    """``(dynamics, sink, messages in send order)`` of bench_emulator's scenario."""
    topo = topologies.topology_from_spec(
        {"generator": "random_geometric", "nodes": nodes, "radius": 0.13,
         "link_cost": "distance", "delay": 0.01, "jitter": 0.002}, seed=seed)
    dynamics = topologies.dynamics_from_spec(
        topo, {"model": "random_waypoint", "speed": [0.002, 0.01], "pause": 1.0,
               "resolution": 1.0}, duration, seed=seed)
    rng = np.random.default_rng(seed)
    ids = sorted(topo.graph.nodes)
    sink = ids[0]
    out = []
    for origin in rng.choice(ids[1:], size=sources, replace=False):
        for t in np.sort(rng.uniform(0, duration, rng.poisson(rate * duration))):
            out.append(Message(len(out), "data", int(origin), sink, float(t), 1.0, 56, None))
    out.sort(key=lambda m: m.sent_at)
    return dynamics, sink, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--medium", choices=("links", "shared"), default="links")
    args = ap.parse_args()
    dynamics, sink, msgs = messages()
    network = Network(dynamics, keep=len(dynamics.epochs) + 2)
    for epoch in dynamics.epochs:
        # the view and its routing arrays (the hop kernel builds the sink's table from
        # them; next_hop(sink, sink), used until November 27, 2026, built neither)
        network.view(epoch).routing_links()
    ledger = Ledger()
    transport = Transport(network, ledger, 1, args.medium)
    start = time.process_time()
    for msg in msgs:
        transport.send(msg)
    transport.advance()
    loop = time.process_time() - start
    frame = ledger.frame()
    built = time.process_time() - start - loop
    print(f"hops {transport.hops} transport {loop:.3f} s cpu "
          f"({transport.hops / loop:,.0f} hops/s), frame {built:.3f} s; arrivals "
          f"{sum(t for t, _ in transport.arrivals):.12g} cost {frame['cost'].sum():.12g}")


if __name__ == "__main__":
    main()
