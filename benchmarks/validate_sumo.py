"""SUMO's movements as the testbed reads them, beside ns-3 reading SUMO's ns-2 export.

A grid scenario run by the real SUMO (:func:`topologies.sumo_scenario.run_grid`): its FCD
output read by the testbed (:func:`topologies.sumo_fcd.read_fcd`), and the ns-2 trace
SUMO's ``traceExporter`` makes of the same FCD read by ns-3's ``Ns2MobilityHelper`` and
by the testbed's ns-2 reader. At every FCD sample (a vehicle at a time) it prints the
largest distance between

- the testbed's FCD trajectories and the FCD file's own numbers (the reader),
- ns-3 and the testbed on the ns-2 export (the two ns-2 readers),
- ns-3 on the ns-2 export and the FCD file (what the export keeps of the movements).

    python -m benchmarks.validate_sumo [--seconds 120] [--seed 3]

The last figure is not 0: the export turns the sample at ``t`` into ``$ns_ at t
"setdest x(t) y(t) speed(t)"``, a move that *starts* at ``t`` towards where the vehicle
already is at ``t``, so an ns-2 reader (ns-3's, the testbed's alike) has every vehicle
one FCD period behind SUMO: a step later the export is where the FCD was (within the
2-decimal rounding of its speeds, about 1 cm). The FCD reader keeps the samples
themselves: read FCD, or export with a finer ``--step-length``.
"""
from __future__ import annotations

import argparse
import json
import math
import tempfile

from topologies.ns2 import read_ns2_trace
from topologies.sumo_fcd import read_fcd
from topologies.sumo_scenario import run_grid

#: SUMO's step, and so the FCD period, in run_grid.
STEP_S = 1.0

_CPP = r"""
#include "ns3/mobility-model.h"
#include "ns3/node.h"
#include <vector>
namespace sumo_check {
std::vector<double> xy;
void note(ns3::Ptr<ns3::Node> node, int row) {
    ns3::Vector p = node->GetObject<ns3::MobilityModel>()->GetPosition();
    xy[2 * row] = p.x;
    xy[2 * row + 1] = p.y;
}
}
"""


def ns3_positions(trace: str, nodes: int, samples: list[tuple[int, float]]) -> list:
    """Where ns-3's ``Ns2MobilityHelper`` has each ``(node, time)`` of ``samples``."""
    import cppyy
    from ns import ns

    container = ns.NodeContainer()
    container.Create(nodes)
    ns.Ns2MobilityHelper(trace).Install()
    cppyy.cppdef(_CPP)
    table = cppyy.gbl.sumo_check.xy
    table.resize(2 * len(samples))
    for row, (node, t) in enumerate(samples):
        ns.Simulator.Schedule(ns.Seconds(t), ns.MakeEvent(cppyy.gbl.sumo_check.note,
                                                          container.Get(node), row))
    ns.Simulator.Stop(ns.Seconds(max(t for _, t in samples) + 1))
    ns.Simulator.Run()
    ns.Simulator.Destroy()
    return [(table[2 * k], table[2 * k + 1]) for k in range(len(samples))]


def compare(seconds: int = 120, seed: int = 3) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        files = run_grid(folder, seconds=seconds, seed=seed)
        fcd = read_fcd(files.fcd)
        exported = read_ns2_trace(files.ns2)
        rows = [(node, t, x, y) for node in fcd.vehicles
                for t, x, y in fcd.trajectories.waypoints(node)]
        # ns-3 at each sample and one FCD period (SUMO's step, 1 s) after it
        both = ns3_positions(str(files.ns2), len(fcd.vehicles),
                             [(node, t + lag) for lag in (0.0, STEP_S)
                              for node, t, _, _ in rows])
        ns3, later = both[:len(rows)], both[len(rows):]

    def worst(pairs) -> float:
        return max(math.dist(a, b) for a, b in pairs)

    ours = [(fcd.trajectories.position(n, t), (x, y)) for n, t, x, y in rows]
    readers = [(exported.position(n, t), p) for (n, t, _, _), p in zip(rows, ns3)]
    kept = [((x, y), p) for (_, _, x, y), p in zip(rows, ns3)]
    lagged = [((x, y), p) for (_, _, x, y), p in zip(rows, later)]
    return {"seconds": seconds, "seed": seed, "vehicles": len(fcd.vehicles),
            "samples": len(rows), "fcd_reader_vs_fcd_m": worst(ours),
            "testbed_ns2_vs_ns3_m": worst(readers), "ns3_export_vs_fcd_m": worst(kept),
            "ns3_export_vs_fcd_mean_m": sum(math.dist(a, b) for a, b in kept) / len(kept),
            "ns3_export_one_step_later_vs_fcd_m": worst(lagged)}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=int, default=120)
    p.add_argument("--seed", type=int, default=3)
    args = p.parse_args(argv)
    figures = compare(args.seconds, args.seed)
    print(f"SUMO grid, {figures['vehicles']} vehicles, {figures['samples']} samples over "
          f"{figures['seconds']} s (seed {figures['seed']}); largest distance at a sample:")
    print(f"  testbed FCD reader vs the FCD file:       {figures['fcd_reader_vs_fcd_m']:.2e} m")
    print(f"  testbed vs ns-3 on SUMO's ns-2 export:    {figures['testbed_ns2_vs_ns3_m']:.2e} m")
    print(f"  ns-3 on the ns-2 export vs the FCD file:  {figures['ns3_export_vs_fcd_m']:.2f} m "
          f"(mean {figures['ns3_export_vs_fcd_mean_m']:.2f} m)")
    print(f"  the same one step ({STEP_S:g} s) later:           "
          f"{figures['ns3_export_one_step_later_vs_fcd_m']:.3f} m")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
