"""The emulated network checked against ns-3 on the same scenarios (issue 27).

Each scenario of the matrix (:func:`benchmarks.ns3_validation.scenario.matrix`: 20 nodes
in 150 m x 150 m, still or random waypoint at 5 and 20 m/s, light and heavy load, AODV
and OLSR, seeds 1-3, 60 s) runs in ns-3 (802.11b, log-distance loss, ARP caches preset)
and in the testbed's network (``emulator.deliver``, shared medium, the same radio); at
light load ns-3 runs twice more, with stock ARP and with the caches NeighborCacheHelper
fills. Results are kept one JSON line per
scenario and simulator in ``--results`` as they finish, and a rerun runs only what is
missing (``--rerun``: all of it; ``--rerun testbed``: the testbed's rows only, after a
change to the emulated network, ns-3's kept). The testbed's compiled kernels are loaded
(or compiled) before its first scenario, so that no scenario's ``wall_s`` counts them.

Run: ``.venv/bin/python -m benchmarks.validate_ns3 [--quick] [--json] [--report]
[--results PATH] [--rerun [testbed|ns-3]] [--pcap DIR]``

``--pcap DIR`` runs only the quick matrix's first scenario (AODV, still nodes) in both,
each writing its packet capture into ``DIR`` (ns-3's ``EnablePcapAll``, one file per
node, ``ns3-<scenario>-<node>-0.pcap``; the testbed's ``emulator.write_pcap``, one file
in the air, ``testbed-<scenario>.pcapng``), to open side by side in Wireshark: both
dissect as radiotap, 802.11, LLC, IPv4, UDP and AODV (``tests/test_pcap_ns3.py``).

``--json`` prints one JSON line per scenario and simulator (``simulator``, ``routing``,
``speed``, ``load``, ``seed``, ``arp``, ``delivery_ratio``, ``delay_mean``,
``delay_p95``, ``first_packet_delay``, ``control_pps``, ``control_by_type``,
``drops_by_reason``, ``wall_s``…); ``--report`` writes ``docs/VALIDATION.md`` and its
figures (``docs/figures/validation_*.png``); ``--quick``: light load, seed 1, still and
20 m/s, 30 s. Needs the ``ns3`` extra (``pip install .[ns3]``).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "figures" / "validation_results.jsonl"


def _key(row: dict) -> tuple:
    return (row["simulator"], row["routing"], float(row["speed"]), row["load"],
            int(row["seed"]), row["arp"], float(row.get("duration", 0)))


def runs(quick: bool):
    """``(scenario, simulator)`` pairs of the matrix, ns-3's stock-ARP runs last."""
    from benchmarks.ns3_validation.scenario import matrix

    scenarios = matrix(quick, duration=30.0 if quick else 60.0)
    pairs = [(sc, sim) for sc in scenarios for sim in ("testbed", "ns-3")]
    pairs += [(dataclasses.replace(sc, arp=arp, name=f"{sc.name}-arp{arp}"), "ns-3")
              for arp in ("stock", "helper") for sc in scenarios if sc.load == "light"]
    return pairs


def run_one(sc, simulator: str) -> dict:
    from benchmarks.ns3_validation import ns3_side, testbed_side

    row = (ns3_side if simulator == "ns-3" else testbed_side).run(sc)
    row["duration"] = sc.duration
    row["nodes"] = sc.nodes
    return row


def write_pcaps(folder: Path, sc=None) -> list[Path]:
    """Run ``sc`` (default: the quick matrix's first scenario) in ns-3 and in the testbed,
    each writing its packet capture into ``folder``; returns the files written."""
    from benchmarks.ns3_validation import ns3_side, testbed_side
    from benchmarks.ns3_validation.scenario import matrix

    sc = sc if sc is not None else matrix(True, duration=30.0)[0]
    folder.mkdir(parents=True, exist_ok=True)
    ours = folder / f"testbed-{sc.name}.pcapng"
    testbed_side.run(sc, pcap=str(ours))
    ns3_side.run(sc, pcap=str(folder / f"ns3-{sc.name}"))
    return [ours] + sorted(folder.glob(f"ns3-{sc.name}-*.pcap"))


def load_results(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small subset")
    parser.add_argument("--json", action="store_true", help="one JSON line per run")
    parser.add_argument("--report", action="store_true", help="write docs/VALIDATION.md")
    parser.add_argument("--results", type=Path, default=None,
                        help=f"JSON lines kept between runs (default {RESULTS.relative_to(ROOT)}"
                             f"; with --quick, none)")
    parser.add_argument("--rerun", nargs="?", const="all", default=None,
                        choices=("all", "testbed", "ns-3"),
                        help="run every scenario again, or one simulator's rows only")
    parser.add_argument("--pcap", type=Path, default=None,
                        help="write one scenario's packet captures from both simulators "
                             "into this folder (and nothing else)")
    args = parser.parse_args(argv)

    from benchmarks.ns3_validation import ns3_side

    if not ns3_side.available():
        print(ns3_side.INSTALL_HINT, file=sys.stderr)
        return 2
    if args.pcap is not None:
        for written in write_pcaps(args.pcap):
            print(written)
        return 0
    path = args.results if args.results is not None else (None if args.quick else RESULTS)
    kept = [] if path is None else load_results(path)
    if args.rerun is not None:   # the rows run again are dropped from the file now
        kept = [r for r in kept if args.rerun != "all" and r["simulator"] != args.rerun]
        if path is not None and path.exists():
            path.write_text("".join(json.dumps(r) + "\n" for r in kept))
    done = {_key(r): r for r in kept}
    pairs = [(sc, simulator, (simulator, sc.routing, float(sc.speed), sc.load, sc.seed,
                              sc.arp, float(sc.duration)))
             for sc, simulator in runs(args.quick)]
    testbed = [sc for sc, simulator, key in pairs
               if simulator == "testbed" and key not in done]
    if testbed:   # the kernels compiled or loaded before the first scenario is timed
        from emulator import kernels

        kernels.ready(sorted({sc.routing for sc in testbed}),
                      sorted({sc.medium for sc in testbed}))
    rows = []
    for sc, simulator, key in pairs:
        row = done.get(key)
        if row is None:
            row = run_one(sc, simulator)
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                with path.open("a") as f:
                    f.write(json.dumps(row) + "\n")
        rows.append(row)
        if args.json:
            print(json.dumps(row), flush=True)
        else:
            print(f"{simulator:8} {sc.name:28} delivery {row['delivery_ratio']:.3f}  "
                  f"delay {row['delay_mean']:.4f} s  control {row['control_pps']:6.2f}/s  "
                  f"wall {row['wall_s']:.2f} s", flush=True)
    if args.report:
        from benchmarks.ns3_validation.report import write_report

        out = write_report(rows, ROOT / "docs")
        print(f"wrote {out.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
