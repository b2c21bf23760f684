"""ContikiMAC under the 802.15.4 MAC engine: a simulated hour of a sensor field.

``nodes`` nodes uniform on a unit square, links within ``radius`` (a unit disk), each
sending a 40-byte unicast to a random neighbour every ``interval`` seconds (jittered)
and a broadcast every 60 s, for ``hours`` simulated hours, with duty cycling
(``ContikiMac()``: 8 Hz) and without. Prints the wall time, the unicasts delivered,
the mean hop latency and the mean and largest radio-on fraction.

    python -m benchmarks.bench_duty_cycle
    python -m benchmarks.bench_duty_cycle --nodes 100 --interval 5
"""
from __future__ import annotations

import argparse
import time

import numpy as np

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


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=50)
    ap.add_argument("--radius", type=float, default=0.25)
    ap.add_argument("--interval", type=float, default=10.0)
    ap.add_argument("--hours", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    seconds = 3600.0 * args.hours
    pos, frames = traffic(args.nodes, args.radius, args.interval, seconds, args.seed)
    print(f"{args.nodes} nodes, {len(frames)} frames over {seconds:.0f} s (simulated)")
    print(f"{'MAC':>22} {'wall s':>7} {'delivered':>9} {'latency ms':>10} "
          f"{'on mean %':>9} {'on max %':>8}")
    for name, duty in (("802.15.4 always on", None), ("802.15.4 + ContikiMAC", ContikiMac())):
        once(pos, frames[:50], args.radius, 5.0, duty, args.seed)   # compile first
        r = once(pos, frames, args.radius, seconds, duty, args.seed)
        print(f"{name:>22} {r['wall_s']:7.2f} {r['delivered']:9.3f} {r['latency_ms']:10.1f} "
              f"{100 * r['on_mean']:9.3f} {100 * r['on_max']:8.3f}")


if __name__ == "__main__":
    main()
