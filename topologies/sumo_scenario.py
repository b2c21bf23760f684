"""A small SUMO scenario run by the real SUMO (the ``eclipse-sumo`` package): a grid of
streets, random trips, ``sumo --fcd-output``, and SUMO's ``traceExporter`` writing the
same movements as an ns-2 trace (what ns-3's ``Ns2MobilityHelper`` reads).

:func:`run_grid` is how the tests and ``benchmarks/validate_sumo.py`` make an FCD file
to read; a researcher's own SUMO scenario is read directly with
:func:`topologies.sumo_fcd.read_fcd`.
"""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

INSTALL_HINT = "SUMO is not installed: pip install .[sumo]  (the eclipse-sumo package)"


@dataclass(frozen=True)
class SumoRun:
    """The files a run of :func:`run_grid` wrote."""

    net: Path
    routes: Path
    fcd: Path
    ns2: Path


def sumo_home() -> Path:
    """SUMO's folder inside the ``eclipse-sumo`` package (binaries in ``bin``, the
    Python tools in ``tools``); a one-line error when the package is missing."""
    try:
        import sumo
    except ImportError:
        raise RuntimeError(INSTALL_HINT) from None
    return Path(sumo.SUMO_HOME)


def run_grid(folder, *, junctions: int = 3, block_m: float = 100.0, seconds: int = 60,
             trips_every: float = 2.0, trips_for: int | None = None,
             seed: int = 3) -> SumoRun:
    """A grid of ``junctions`` × ``junctions`` crossings ``block_m`` apart (netgenerate's
    ``--grid.number``: 3 makes 2 × 2 blocks, 200 m a side at 100 m), a trip every
    ``trips_every`` seconds for the first ``trips_for`` seconds (default: the first
    third of the run), ``seconds`` of SUMO at one step a second, FCD at two decimals
    (SUMO's default), and its ns-2 export."""
    home, folder = sumo_home(), Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    files = SumoRun(folder / "grid.net.xml", folder / "trips.rou.xml", folder / "fcd.xml",
                    folder / "mobility.tcl")
    env = dict(os.environ, SUMO_HOME=str(home))

    def call(*argv) -> None:
        done = subprocess.run([str(a) for a in argv], cwd=folder, env=env,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{Path(str(argv[0])).name} failed: "
                               f"{(done.stderr or done.stdout).strip().splitlines()[-1:]}")

    call(home / "bin" / "netgenerate", "--grid", "--grid.number", junctions, "--grid.length",
         block_m, "-o", files.net, "--seed", seed)
    call(sys.executable, home / "tools" / "randomTrips.py", "-n", files.net, "-e",
         seconds // 3 if trips_for is None else trips_for, "-p", trips_every, "--seed", seed, "-r", files.routes,
         "-o", folder / "trips.trips.xml")
    call(home / "bin" / "sumo", "-n", files.net, "-r", files.routes, "--fcd-output",
         files.fcd, "--step-length", 1, "--end", seconds, "--seed", seed, "--no-step-log")
    call(sys.executable, home / "tools" / "traceExporter.py", "--fcd-input", files.fcd,
         "--ns2mobility-output", files.ns2)
    return files


#: ``experiments/specs/vanet_sumo.toml``'s city: 4 x 4 blocks of 150 m (600 m a side), a
#: car entering every 2 s for the whole 120 s, and five roadside units, one at each
#: corner and one in the centre (the query node).
VANET_EXAMPLE = dict(junctions=5, block_m=150.0, seconds=120, trips_every=2.0, trips_for=120,
                     seed=3)
VANET_ROADSIDE = ((0.0, 0.0), (600.0, 0.0), (0.0, 600.0), (600.0, 600.0), (300.0, 300.0))


def write_vanet_example(folder) -> tuple[Path, Path]:
    """Run :data:`VANET_EXAMPLE` in SUMO and write what ``vanet_sumo.toml`` reads into
    ``folder``: ``vanet_sumo_fcd.xml.gz`` (SUMO's FCD, compressed) and
    ``vanet_sumo_topology.json`` (a node per car, numbered as
    :func:`topologies.sumo_fcd.read_fcd` numbers them, at its first position; then the
    roadside units of :data:`VANET_ROADSIDE`, which do not move). Links are left to the
    mobility model (cars and units within the radius)."""
    import gzip
    import json
    import shutil
    import tempfile

    from topologies.sumo_fcd import read_fcd

    folder = Path(folder)
    fcd_path, topo_path = folder / "vanet_sumo_fcd.xml.gz", folder / "vanet_sumo_topology.json"
    with tempfile.TemporaryDirectory() as scratch:
        run = run_grid(scratch, **VANET_EXAMPLE)
        with open(run.fcd, "rb") as raw, gzip.GzipFile(fcd_path, "wb", mtime=0) as packed:
            shutil.copyfileobj(raw, packed)
    trace = read_fcd(fcd_path)
    cars = [{"id": node, "pos": list(trace.trajectories.position(node, 0.0))}
            for node in trace.trajectories.nodes]
    units = [{"id": len(cars) + k, "pos": list(xy)} for k, xy in enumerate(VANET_ROADSIDE)]
    nodes = ",\n  ".join(json.dumps(node) for node in cars + units)
    topo_path.write_text('{"directed": false, "multigraph": false, "graph": {},\n'
                         f' "nodes": [\n  {nodes}\n ],\n "links": []}}\n')
    return fcd_path, topo_path
