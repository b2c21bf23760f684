"""Cost of trigger evaluation per tuple against the operator's own per-tuple cost.

Drives QJoin's join node (the symmetric join with its adaptation step) through
``run_node_step`` on the same arrivals twice — on its fixed clock and with a window
initiator of four conditions (rate above, rate below, deviation, count) — and times the
initiator alone on the same arrivals. Prints microseconds per tuple for each and the
initiator's share of the operator's cost. Goal (issue 11): at most 5 %.

Usage: ``python benchmarks/bench_triggers.py [--tuples N] [--repeat R] [--seed S]``
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

from contract.messages import Message
from contract.program import DELIVER, FINISH, START, Event, run_node_step
from spark_nodes.algorithms.qjoin.algorithms import QJoin
from spark_nodes.algorithms.qjoin.programs import QJoinNode
from spark_nodes.algorithms.registry import validate_params
from spark_nodes.algorithms.triggers.spec import trigger_spec
from spark_nodes.workload.tuples import StreamTuple

CONDITIONS = [{"kind": "rate", "above": 60.0, "interval": 0.5},
              {"kind": "rate", "below": 5.0, "interval": 1.0},
              {"kind": "deviation", "above": 100.0, "interval": 0.5, "warmup": 4.0},
              {"kind": "count", "above": 200}]


def arrivals(n: int, seed: int, rate: float = 20.0):
    rng = np.random.default_rng(seed)
    out = []
    for k, name in enumerate(("R", "S")):
        ts = np.cumsum(rng.exponential(1 / rate, n))
        arr = ts + rng.exponential(0.1, n)
        keys = rng.integers(0, 8, n)
        out += [(float(arr[i]), StreamTuple(name, i, float(ts[i]), int(keys[i]), None, None,
                                            k, 1.0, float(ts[i]))) for i in range(n)]
    out.sort(key=lambda a: (a[0], a[1].stream, a[1].seq))
    return out


def events(arr):
    evs = [Event(0.0, 0, START, None)]
    evs += [Event(t, i + 1, DELIVER, Message(i, "data", tup.origin, 9, 0.0, 1.0, 56, tup))
            for i, (t, tup) in enumerate(arr)]
    end = arr[-1][0] + 1.0
    return evs + [Event(end, len(evs) + 1, FINISH, None)], end


def time_operator(arr, trigger, repeat: int) -> float:
    evs, end = events(arr)
    params = validate_params(QJoin(), {"P": 4.0, "L": 0.5, "q_user": 0.9})
    best = float("inf")
    for _ in range(repeat):
        prog = QJoinNode(("R", "S"), 1.0, "equality", None, params, trigger=trigger)
        t0 = time.perf_counter()
        run_node_step(prog, 9, evs, 0.0, end + 1.0, None, seed=1, algorithm="bench")
        best = min(best, time.perf_counter() - t0)
    return best / len(arr)


def time_initiator(arr, cfg, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        ini = cfg.initiator("here")
        t0 = time.perf_counter()
        for t, tup in arr:
            ini.tuple(tup.stream, None, t)
        best = min(best, time.perf_counter() - t0)
    return best / len(arr)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tuples", type=int, default=4000, help="tuples per stream")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true", help="also print the figures as JSON")
    args = ap.parse_args(argv)
    arr = arrivals(args.tuples, args.seed)
    cfg = trigger_spec({"use": "bench", "bench": {"conditions": CONDITIONS}},
                       "trigger.qjoin", ["R", "S"])
    fixed = time_operator(arr, None, args.repeat)
    triggered = time_operator(arr, cfg, args.repeat)
    initiator = time_initiator(arr, cfg, args.repeat)
    out = {"tuples": len(arr), "operator_fixed_us": fixed * 1e6,
           "operator_triggered_us": triggered * 1e6, "initiator_us": initiator * 1e6,
           "initiator_share": initiator / fixed}
    print(f"{len(arr)} tuples, {len(CONDITIONS)} conditions")
    print(f"QJoin join node, fixed clock : {out['operator_fixed_us']:8.2f} us/tuple")
    print(f"QJoin join node, triggered   : {out['operator_triggered_us']:8.2f} us/tuple "
          "(adaptations differ, so this is not the trigger's cost alone)")
    print(f"window initiator alone       : {out['initiator_us']:8.2f} us/tuple")
    print(f"initiator / operator         : {100 * out['initiator_share']:8.2f} % (goal <= 5 %)")
    if "--json" in (argv or []):
        print(json.dumps(out))
    return out


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
