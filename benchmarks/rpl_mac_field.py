"""RPL under the 802.15.4 MAC on sensor_lifetime's 50-node field: does the tree settle,
and what does it deliver (docs/NOTES.md, "RPL under a MAC: loops").

The field and traffic are ``tests/test_rpl_mac.py``'s ``settle``: 50 nodes on 200 m x
200 m linked within a CC2420's range, the MAC at the CC2420's thresholds, each node a
40-byte packet to the root (node 0) every 4 s from t = 10 to 115 s (1,323 packets),
120 s of virtual time. For each objective and seed it prints the packets delivered,
the parents taken in the run's second half (a settled tree takes none), the routing
frames per 30 s (Trickle: they fall), the nodes joined at the end, the drops by
reason (``ttl``: a loop) and the wall seconds of the run.

Run: ``.venv/bin/python -m benchmarks.rpl_mac_field [--objectives of0 mrhof]
[--seeds 1 2 3] [--json]``
"""
from __future__ import annotations

import argparse
import json
import time
from collections import Counter

from tests.test_rpl_mac import settle


def measure(objective: str, seed: int) -> dict:
    """One run's figures (see the module docstring)."""
    start = time.perf_counter()
    tr = settle(seed=seed, horizon=120.0, objective=objective)
    wall = time.perf_counter() - start
    rpl = tr.protocol
    changes = Counter(int(t // 30) for t, _, _ in rpl.parent_log)
    frames = Counter(int(t // 30) for t, *_ in tr.control_log)
    return {"objective": objective, "seed": seed, "delivered": len(tr.arrivals),
            "late_parent_changes": changes[2] + changes[3],
            "frames_per_30s": [frames[i] for i in range(4)],
            "joined": sum(v is not None for v in rpl.tree().values()),
            "drops": dict(Counter(d[2] for d in tr.drops)), "wall_s": round(wall, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objectives", nargs="+", default=["of0", "mrhof"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [measure(o, s) for o in args.objectives for s in args.seeds]
    if args.json:
        print(json.dumps(rows))
        return
    for r in rows:
        print(f"{r['objective']:6} seed {r['seed']}: delivered {r['delivered']} of 1323, "
              f"late parent changes {r['late_parent_changes']}, frames/30 s "
              f"{r['frames_per_30s']}, joined {r['joined']} of 49, drops {r['drops']}, "
              f"{r['wall_s']} s")


if __name__ == "__main__":
    main()
