"""ContikiMAC under the 802.15.4 MAC engine: a simulated hour of a sensor field.

``nodes`` nodes uniform on a unit square, links within ``radius`` (a unit disk), each
sending a 40-byte unicast to a random neighbour every ``interval`` seconds (jittered)
and a broadcast every 60 s, for ``hours`` simulated hours, with duty cycling
(``ContikiMac()``: 8 Hz) and without. Prints the wall time, the unicasts delivered,
the mean hop latency and the mean and largest radio-on fraction. ``--phase-lock``,
``--requeue N`` (csma.c's CSMA_MAX_MAC_TRANSMISSIONS), ``--overhearing`` and
``--no-fast-sleep`` add a ContikiMAC row with those options.

``--rpl`` runs issue 59's speed case instead: a whole ``deliver()`` of a sensor field
(``nodes`` nodes on a connected random unit-disk graph, radius 0.25, node 0 the sink)
under RPL over the 802.15.4 MAC with ContikiMAC and radio-state energy, every other node
sending a 40-byte packet to the sink once a minute (first at a random second), for
``hours`` simulated hours; it prints the process's user CPU seconds for the run (numba
kernels compiled beforehand by a short run), delivery, loss reasons, RPL's control
packets, the MAC's drops and the radio-on fractions.

    python -m benchmarks.bench_duty_cycle
    python -m benchmarks.bench_duty_cycle --nodes 100 --interval 5
    python -m benchmarks.bench_duty_cycle --requeue 3 --phase-lock
    python -m benchmarks.bench_duty_cycle --rpl [--phase-lock] [--requeue 3]
"""
from __future__ import annotations

import argparse
import dataclasses
import resource
import time

import networkx as nx
import numpy as np
import pandas as pd

from emulator.mac.contikimac import ContikiMac
from emulator.mac.engine import REASONS, MacEngine, unit_disk_rx_dbm
from emulator.mac.standards import CsmaCa802154

PAYLOAD = 40


def traffic(nodes: int, radius: float, interval: float, seconds: float, seed: int):
    """Positions and ``(t, node, dst)`` frames, in time order (``dst`` -1: broadcast)."""
    rng = np.random.default_rng(seed)
    pos = rng.random((nodes, 2))
    dist = np.linalg.norm(pos[:, None] - pos[None], axis=-1)
    frames = []
    for u in range(nodes):
        near = [v for v in np.flatnonzero(dist[u] <= radius) if v != u]
        t = rng.random() * interval
        while near and t < seconds:
            frames.append((t, u, int(rng.choice(near))))
            t += interval * (0.5 + rng.random())
        frames.extend((b, u, -1) for b in np.arange(rng.random() * 60, seconds, 60.0))
    frames.sort()
    return pos, frames


def once(pos, frames, radius: float, seconds: float, duty, seed: int) -> dict:
    """Run the frames through the engine; its figures and wall time."""
    engine = MacEngine(unit_disk_rx_dbm(pos, radius), CsmaCa802154(), seed=seed, duty=duty)
    sent = {}
    start = time.perf_counter()
    for h, (t, u, v) in enumerate(frames):
        engine.enqueue(max(t, engine._last_ready[u]), u, v, PAYLOAD, handle=h)
        sent[h] = t
    out = engine.advance(seconds + 10.0)
    wall = time.perf_counter() - start
    unicast = np.array([frames[h][2] >= 0 for h in out.handle.tolist()], bool)
    delivered = unicast & (out.reason == REASONS.index("delivered"))
    latency = out.time[delivered] - np.array([sent[h] for h in out.handle[delivered]])
    n_unicast = sum(1 for f in frames if f[2] >= 0)
    on = None
    if duty is not None:
        r = engine.radio_seconds()
        on = (r["tx"] + r["rx"] + r["listen"]) / engine.now
    return {"wall_s": wall, "delivered": delivered.sum() / n_unicast,
            "latency_ms": 1e3 * latency.mean(),
            "on_mean": np.nan if on is None else on.mean(),
            "on_max": np.nan if on is None else on.max(), "unicasts": n_unicast}


def sensor_field(nodes: int, radius: float, seconds: float, seed: int, every: float = 60.0):
    """A connected random unit-disk field (node 0 the sink) and its messages: each other
    node sends the sink a 40-byte packet every ``every`` seconds from a random start."""
    topo_seed = seed
    while True:
        graph = nx.random_geometric_graph(nodes, radius, seed=topo_seed)
        if nx.is_connected(graph):
            break
        topo_seed += 1000
    for e in graph.edges:
        graph.edges[e].update(cost=1.0, delay=0.001, bandwidth=250e3 / 8)
    rng = np.random.default_rng(seed)
    rows = [(u, t) for u in range(1, nodes)
            for t in np.arange(rng.random() * every, seconds, every)]
    rows.sort(key=lambda r: r[1])
    msgs = pd.DataFrame({"msg_id": range(len(rows)), "src": [u for u, _ in rows],
                         "dst": 0, "sent_at": [t for _, t in rows],
                         "size_bytes": PAYLOAD})
    return graph, msgs


def user_seconds() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_utime


def rpl_run(nodes: int, radius: float, seconds: float, seed: int, mac: dict) -> dict:
    """One ``deliver()`` of :func:`sensor_field` under RPL and ``mac``; its figures."""
    from emulator import deliver

    graph, msgs = sensor_field(nodes, radius, seconds, seed)
    start, wall = user_seconds(), time.perf_counter()
    out = deliver(graph, msgs, medium="shared", seed=seed, routing="rpl", mac=mac,
                  energy={"model": "radio_states", "battery_j": 1e6})
    user, wall = user_seconds() - start, time.perf_counter() - wall
    energy, figures = out.attrs["energy"], out.attrs["mac"]
    return {"user_s": user, "wall_s": wall, "messages": len(msgs),
            "delivered": float((~out.lost).mean()),
            "losses": out.loss_reason[out.lost].value_counts().to_dict(),
            "control": len(out.attrs["control"]),
            "mac_drops": {k: v for k, v in figures["mac_drops_by_reason"].items() if v},
            "on_mean": energy["radio_on_fraction_mean"],
            "on_max": energy["radio_on_fraction_max"]}


def rpl_main(args) -> None:
    seconds = 3600.0 * args.hours
    mac = {"model": "802.15.4", "duty_cycle": "contikimac", "phase_lock": args.phase_lock,
           "overhearing": args.overhearing, "fast_sleep": not args.no_fast_sleep,
           "csma_max_mac_transmissions": args.requeue}
    rpl_run(args.nodes, args.radius, 30.0, args.seed, mac)   # compile and load first
    r = rpl_run(args.nodes, args.radius, seconds, args.seed, mac)
    print(f"RPL + 802.15.4 + ContikiMAC ({', '.join(f'{k}={v}' for k, v in mac.items())}), "
          f"{args.nodes} nodes, {seconds:.0f} s simulated, {r['messages']} messages "
          f"(one a minute per node to the sink)")
    print(f"  user CPU {r['user_s']:.1f} s (wall {r['wall_s']:.1f} s) | delivered "
          f"{r['delivered']:.3f} | losses {r['losses']} | RPL control packets "
          f"{r['control']} | MAC drops {r['mac_drops']} | radio on mean "
          f"{100 * r['on_mean']:.2f} %, max {100 * r['on_max']:.2f} %")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=50)
    ap.add_argument("--radius", type=float, default=0.25)
    ap.add_argument("--interval", type=float, default=10.0)
    ap.add_argument("--hours", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rpl", action="store_true", help="issue 59's RPL + ContikiMAC hour")
    ap.add_argument("--phase-lock", action="store_true")
    ap.add_argument("--overhearing", action="store_true")
    ap.add_argument("--no-fast-sleep", action="store_true",
                    help="with --overhearing: without Contiki's WITH_FAST_SLEEP")
    ap.add_argument("--requeue", type=int, default=0, metavar="N",
                    help="csma.c's CSMA_MAX_MAC_TRANSMISSIONS (0: off)")
    args = ap.parse_args(argv)
    if args.rpl:
        rpl_main(args)
        return
    seconds = 3600.0 * args.hours
    pos, frames = traffic(args.nodes, args.radius, args.interval, seconds, args.seed)
    print(f"{args.nodes} nodes, {len(frames)} frames over {seconds:.0f} s (simulated)")
    print(f"{'MAC':>22} {'wall s':>7} {'delivered':>9} {'latency ms':>10} "
          f"{'on mean %':>9} {'on max %':>8}")
    macs = [("802.15.4 always on", None), ("802.15.4 + ContikiMAC", ContikiMac())]
    options = dataclasses.replace(ContikiMac(), phase_lock=args.phase_lock,
                                  overhearing=args.overhearing,
                                  fast_sleep=not args.no_fast_sleep,
                                  csma_max_mac_transmissions=args.requeue)
    if options != ContikiMac():
        macs.append(("ContikiMAC + options", options))
    for name, duty in macs:
        once(pos, frames[:50], args.radius, 5.0, duty, args.seed)   # compile first
        r = once(pos, frames, args.radius, seconds, duty, args.seed)
        print(f"{name:>22} {r['wall_s']:7.2f} {r['delivered']:9.3f} {r['latency_ms']:10.1f} "
              f"{100 * r['on_mean']:9.3f} {100 * r['on_max']:8.3f}")


if __name__ == "__main__":
    main()
