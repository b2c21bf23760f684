"""The ns-3 validation matrix with the testbed's 802.11 MAC on (issue 58), beside ns-3.

Runs the testbed's side of :mod:`benchmarks.validate_ns3`'s scenarios with
``mac = {"model": "802.11", "data_rate": 1e6}`` (ns-3's scenarios send data and control
at DsssRate1Mbps; every other MAC constant is the default, ns-3's own), and prints, per
(routing, load, speed), the mean over seeds of delivery, mean delay and control packets
per second: the testbed with the MAC, the testbed's stored rows without it (the perfect
scheduler) and ns-3's stored rows (``docs/figures/validation_results.jsonl``, preset ARP).
Nothing is tuned: the MAC's defaults are ns-3's, but for carrier sense, which by
default reaches 14 dB below detection (ns-2's ratio); ``--ns3-cca`` sets
``cs_threshold_dbm = -82``, ns-3's ``CcaSensitivity`` (a node senses what it can detect,
no farther). ``--reception error_rate`` judges frames by the DSSS curves over their
chunks of interference (ns-3's rule) instead of all or nothing at 4 dB.

Run: ``.venv/bin/python -m benchmarks.validate_ns3_mac [--load heavy|light|both]
[--seeds 1 2 3] [--ns3-cca] [--reception threshold|error_rate] [--json]``; prints CPU
seconds per run too, and the speed against ns-3 (issue 58's target: 20x): ns-3's stored
wall time of each scenario (its 802.11b MAC and PHY included, its import not) over the
testbed's CPU time for the same scenario with the MAC on, over the matrix and per
scenario.
"""
from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict

import numpy as np

from benchmarks.validate_ns3 import RESULTS, load_results

#: The MAC as ns-3's validation scenarios run 802.11b: every frame at 1 Mbit/s.
MAC = {"model": "802.11", "data_rate": 1e6}
FIGURES = ("delivery_ratio", "delay_mean", "control_pps")


def run_matrix(loads, seeds, mac: dict = MAC) -> list[dict]:
    """The testbed's rows with ``mac``, one per scenario."""
    from benchmarks.ns3_validation import testbed_side
    from benchmarks.ns3_validation.scenario import ROUTINGS, make_scenario

    rows = []
    for load in loads:
        for speed in (0.0, 5.0, 20.0):
            for routing in ROUTINGS:
                for seed in seeds:
                    sc = make_scenario(speed=speed, load=load, routing=routing, seed=seed,
                                       duration=60.0)
                    cpu = time.process_time()
                    row = testbed_side.run(sc, mac)
                    row.update(simulator="testbed+802.11", cpu_s=time.process_time() - cpu,
                               **sc.labels())
                    rows.append(row)
    return rows


def table(rows: list[dict], stored: list[dict], seeds) -> str:
    """Means over seeds per (routing, load, speed): MAC / ideal / ns-3, per figure."""
    means = defaultdict(list)
    for row in rows + [r for r in stored if r.get("arp", "preset") == "preset"
                       and int(r["seed"]) in seeds and float(r.get("duration", 60)) == 60]:
        key = (row["routing"], row["load"], float(row["speed"]), row["simulator"])
        means[key].append(row)
    lines = ["| routing | load | speed | " + " | ".join(
        f"{f}: 802.11 / ideal / ns-3" for f in FIGURES) + " |",
        "|---|---|---|" + "---|" * len(FIGURES)]
    for routing, load, speed in sorted({k[:3] for k in means if k[3] == "testbed+802.11"}):
        cells = []
        for figure in FIGURES:
            got = [np.nanmean([r[figure] for r in means[(routing, load, speed, sim)]])
                   if means[(routing, load, speed, sim)] else float("nan")
                   for sim in ("testbed+802.11", "testbed", "ns-3")]
            cells.append(" / ".join(f"{v:.3g}" for v in got))
        lines.append(f"| {routing} | {load} | {speed:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def speed_against_ns3(rows: list[dict], stored: list[dict]) -> str:
    """ns-3's wall time over the testbed's CPU time with the MAC, for the scenarios both
    ran: over all of them (sums) and per scenario (least, median, most, how many >= 20x).

    >>> speed_against_ns3([{"routing": "aodv", "load": "heavy", "speed": 0.0, "seed": 1,
    ...                     "cpu_s": 0.5}],
    ...                   [{"simulator": "ns-3", "arp": "preset", "routing": "aodv",
    ...                     "load": "heavy", "speed": 0.0, "seed": 1, "wall_s": 15.0}])
    'speed against ns-3 (its wall over our CPU): 30.0x over 1 scenarios (ns-3 15 s, testbed 0.5 s); per scenario 30.0x to 30.0x, median 30.0x, >= 20x on 1 of 1'
    """
    def key(row):
        return row["routing"], row["load"], float(row["speed"]), int(row["seed"])
    walls = {key(r): r["wall_s"] for r in stored if r["simulator"] == "ns-3"
             and r.get("arp", "preset") == "preset" and "wall_s" in r}
    pairs = [(walls[key(r)], r["cpu_s"]) for r in rows if key(r) in walls]
    if not pairs:
        return "speed against ns-3: no stored ns-3 run of these scenarios"
    ratios = sorted(wall / cpu for wall, cpu in pairs)
    ns3, ours = sum(w for w, _ in pairs), sum(c for _, c in pairs)
    return (f"speed against ns-3 (its wall over our CPU): {ns3 / ours:.1f}x over "
            f"{len(pairs)} scenarios (ns-3 {ns3:.0f} s, testbed {ours:.1f} s); per scenario "
            f"{ratios[0]:.1f}x to {ratios[-1]:.1f}x, median {np.median(ratios):.1f}x, "
            f">= 20x on {sum(r >= 20 for r in ratios)} of {len(ratios)}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--load", choices=("heavy", "light", "both"), default="heavy")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--ns3-cca", action="store_true",
                        help="carrier sense from -82 dBm, ns-3's CcaSensitivity")
    parser.add_argument("--reception", choices=("threshold", "error_rate"),
                        default="threshold", help="mac.reception")
    parser.add_argument("--json", action="store_true", help="one JSON line per run")
    args = parser.parse_args(argv)
    loads = ("light", "heavy") if args.load == "both" else (args.load,)
    mac = {**MAC, "reception": args.reception} if args.reception != "threshold" else MAC
    rows = run_matrix(loads, args.seeds,
                      {**mac, "cs_threshold_dbm": -82.0} if args.ns3_cca else mac)
    if args.json:
        for row in rows:
            print(json.dumps(row, default=float))
    print(table(rows, load_results(RESULTS), set(args.seeds)))
    cpu = [r["cpu_s"] for r in rows]
    print(f"testbed+802.11 CPU per 60 s scenario: mean {np.mean(cpu):.2f} s, "
          f"max {np.max(cpu):.2f} s ({len(rows)} runs)")
    print(speed_against_ns3(rows, load_results(RESULTS)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
