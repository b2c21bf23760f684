"""Speed of the Mininet backend on this machine (needs root and Mininet).

Prints: messages per second between two agents three hops apart, the set-up and
tear-down times of emulated runs with an agent on every node, and the largest node count
(of those tried) that starts. Target: 50 nodes start and stop in under 30 s.

    sudo .venv/bin/python benchmarks/bench_mininet.py [--sizes 50 100] [--messages 20000]
"""
from __future__ import annotations

import argparse
import math
import time

from contract.plan import Plan, QuerySpec
from emulator import mininet
from emulator.mininet.loadgen import Flood, Sink
from emulator.mininet.options import MininetOptions
from emulator.network import Network
from spark_nodes.runtimes.inproc import InprocRuntime
from topologies import grid, line, static_dynamics


def plan_for(topo, duration: float, name: str) -> Plan:
    """A plan with no streams: the programs are given directly."""
    dyn = static_dynamics(topo)
    return Plan(name=name, seed=1, duration=duration, step=0.001, backend="mininet",
                runtime="inproc", memory_interval=duration, bytes_per_unit=32,
                header_bytes=24, synopsis_unit=0.25, topology=topo, dynamics=dyn, streams=(),
                query=QuerySpec(0, "equality", None, {}), algorithm="bench", params={},
                net0=Network(dyn).view(0.0), spec={"run": {"drain": None}})


def messages_per_second(count: int) -> dict:
    """Flood ``count`` messages from node 0 to node 3 of a 4-node line (1 ms per hop)."""
    topo = line(4, defaults={"delay": 0.001})
    burst, interval = 200, 0.002           # offers 100,000 messages per second
    duration = count / burst * interval + 0.5
    plan = plan_for(topo, duration, "bench-rate")
    out = mininet.run(plan, {0: Flood(3, count, burst, interval), 3: Sink()}, {},
                      InprocRuntime(), options=MininetOptions(time_scale=1.0))
    rx = out.metrics[out.metrics["metric"] == "received"]
    span = rx["time"].max() - rx["time"].min()
    return {"messages": len(rx), "seconds": span,
            "per_second": (len(rx) - 1) / span if span > 0 else math.nan,
            "offered_per_second": burst / interval}


def start_stop(n: int) -> dict:
    """An agent on every node of a ``rows x cols`` grid of ``n`` nodes; a 1-unit run."""
    rows = max(r for r in range(1, math.isqrt(n) + 1) if n % r == 0)
    cols = n // rows
    topo = grid(rows, cols, defaults={"delay": 0.01})
    plan = plan_for(topo, 1.0, f"bench-{n}")
    programs = {u: Sink() for u in topo.nodes}
    t = time.monotonic()
    out = mininet.run(plan, programs, {}, InprocRuntime(),
                      options=MininetOptions(time_scale=1.0, agent_timeout=120.0))
    return {"nodes": len(topo.nodes), "links": out.info["links"],
            "setup_s": out.info["setup_s"], "teardown_s": out.info["teardown_s"],
            "total_s": time.monotonic() - t, "run_s": 1.0}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 100])
    parser.add_argument("--messages", type=int, default=20000)
    args = parser.parse_args(argv)
    rate = messages_per_second(args.messages)
    print(f"messages across 3 hops: {rate['messages']} in {rate['seconds']:.2f} s = "
          f"{rate['per_second']:.0f} msg/s (offered {rate['offered_per_second']:.0f}/s)")
    largest = None
    for n in args.sizes:
        try:
            r = start_stop(n)
        except Exception as exc:  # report the size that failed and why, keep the others
            print(f"{n} nodes: failed to start: {type(exc).__name__}: {exc}")
            continue
        largest = max(largest or 0, r["nodes"])
        print(f"{r['nodes']} nodes, {r['links']} links: set-up {r['setup_s']:.1f} s, "
              f"tear-down {r['teardown_s']:.1f} s, start+stop "
              f"{r['setup_s'] + r['teardown_s']:.1f} s (whole run {r['total_s']:.1f} s "
              f"incl. {r['run_s']:.0f} s of emulated time)")
    print(f"largest node count started: {largest}")


if __name__ == "__main__":
    main()
