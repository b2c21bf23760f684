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


def run_grid(folder, *, blocks: int = 3, block_m: float = 100.0, seconds: int = 60,
             trips_every: float = 2.0, seed: int = 3) -> SumoRun:
    """A ``blocks`` × ``blocks`` grid of ``block_m`` streets, a trip every
    ``trips_every`` seconds for the first third of the run, ``seconds`` of SUMO at one
    step a second, FCD at two decimals (SUMO's default), and its ns-2 export."""
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

    call(home / "bin" / "netgenerate", "--grid", "--grid.number", blocks, "--grid.length",
         block_m, "-o", files.net, "--seed", seed)
    call(sys.executable, home / "tools" / "randomTrips.py", "-n", files.net, "-e",
         seconds // 3, "-p", trips_every, "--seed", seed, "-r", files.routes,
         "-o", folder / "trips.trips.xml")
    call(home / "bin" / "sumo", "-n", files.net, "-r", files.routes, "--fcd-output",
         files.fcd, "--step-length", 1, "--end", seconds, "--seed", seed, "--no-step-log")
    call(sys.executable, home / "tools" / "traceExporter.py", "--fcd-input", files.fcd,
         "--ns2mobility-output", files.ns2)
    return files
