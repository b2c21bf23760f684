"""The ``testbed`` command line.

``testbed run SPEC``, ``testbed sweep SPEC``, ``testbed check SPEC``, ``testbed report DIR``,
``testbed topology validate|show FILE``, ``testbed profile RUN_DIR -o FILE``,
``testbed rates RUN_DIR -o FILE``, ``testbed animate RUN_DIR -o run.gif``,
``testbed pcap RUN_DIR -o run.pcapng``, ``testbed algorithms``.
A spec error prints ``file: field: what was expected`` and exits with status 2.
``testbed run`` on a run that is complete already says so (``complete already,
skipped``) and prints the summary of the run on record; ``--force`` runs it again.
"""
from __future__ import annotations

import argparse
import logging
import math
import os
import re
import sys
import warnings
from pathlib import Path


#: Packages whose INFO logs ``--verbose`` shows.
OWN_PACKAGES = ("contract", "topologies", "emulator", "spark_nodes", "experiments", "analysis",
                "testbed")


def output_folder(path, option: str) -> None:
    """Refuse an output folder that is a file (else the run or report would fail deep
    inside, after its work): ``path: --out: ...``.

    >>> output_folder("testbed", "--out")
    >>> output_folder(__file__, "--out")   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    experiments.spec.SpecError: ...cli.py: --out: expected a folder (or a name for a new one), got a file
    """
    from experiments.spec import SpecError

    if path is not None and Path(path).exists() and not Path(path).is_dir():
        raise SpecError(str(path), option, "expected a folder (or a name for a new one), "
                                           "got a file")


def output_file(path, option: str) -> None:
    """Refuse an output file whose folder does not exist or that is a folder.

    >>> output_file("no/such/folder/p.json", "-o")
    Traceback (most recent call last):
    ...
    experiments.spec.SpecError: no/such/folder/p.json: -o: expected a file in an existing folder (no folder no/such/folder)
    """
    from experiments.spec import SpecError

    where = Path(path)
    if where.is_dir():
        raise SpecError(str(path), option, "expected a file name, got a folder")
    if not where.resolve().parent.is_dir():
        raise SpecError(str(path), option, f"expected a file in an existing folder (no "
                                           f"folder {where.parent})")


def _cmd_run(args) -> int:
    from experiments.runner import run

    output_folder(args.out, "--out")
    result = run(args.spec, out=args.out, seed=args.seed, runtime=args.runtime,
                 backend=args.backend, spark_master=args.spark_master, progress=True,
                 force=args.force)
    s = result.summary
    head = f"{result.path}: complete already, skipped (--force runs it again)" \
        if result.skipped else str(result.path)
    print(f"{head}\n  recall {s['recall']:.3f}  cost/time {s['comm_cost_per_time']:.2f}  "
          f"messages {s['messages']}  results {s['results']}/{s['expected_results']}  "
          f"latency p50 {s['latency_p50']:.3f}  memory peak {s['memory_peak_tuples']}")
    if args.report:
        from analysis.report import write_report

        print(f"report: {write_report(result.path)}")
    return 0


def _cmd_sweep(args) -> int:
    from experiments.store import runs_table_path
    from experiments.sweep import sweep

    output_folder(args.out, "--out")
    if args.jobs is not None and args.engine != "local":
        print(f"error: --jobs: the {args.engine} engine runs one task per run on the "
              "cluster's cores; --jobs is for --engine local", file=sys.stderr)
        return 2
    frame = sweep(args.spec, out=args.out, engine=args.engine, spark_master=args.spark_master,
                  jobs=args.jobs)
    out = Path(args.out) if args.out else Path("runs") / Path(args.spec).stem
    print(f"{runs_table_path(out)}: {len(frame)} runs")
    if args.report:
        from analysis.report import write_report

        print(f"report: {write_report(out)}")
    return 0


def _cmd_check(args) -> int:
    from experiments.sweep import check_points, plan_sweep

    points, base_dir, source = plan_sweep(args.spec)
    check_points(points, base_dir, source)
    print(f"{source}: {len(points)} run{'' if len(points) == 1 else 's'}, every plan built "
          "(nothing run)")
    return 0


def _cmd_report(args) -> int:
    from analysis.report import write_report

    output_folder(args.out, "--out")
    print(write_report(Path(args.dir), out=args.out, animate=args.animate))
    return 0


def _cmd_profile(args) -> int:
    from experiments.spec import SpecError
    from experiments.store import load_run
    from spark_nodes.algorithms.enrich.profile import (ProfileError, profile_from_run,
                                                       save_profile)

    output_file(args.output, "--output")
    try:
        profile = profile_from_run(load_run(args.dir), oracle=args.oracle)
    except ProfileError as err:
        raise SpecError(*str(err).split(": ", 2)) from None
    path = save_profile(profile, args.output)
    records = len(profile.get("records", profile.get("tuples", [])))
    print(f"{path}: {profile['kind']} profile, {records} "
          f"{'records' if profile['kind'] == 'predicted' else 'tuples'}")
    return 0


def _cmd_rates(args) -> int:
    import csv

    from experiments.spec import SpecError
    from experiments.store import load_run
    from spark_nodes.algorithms.triggers.spec import rate_profile

    output_file(args.output, "--output")
    run = load_run(args.dir)
    m = run.metrics
    rows = m[m["metric"].str.startswith("arrival:")] if len(m) else m
    if args.input:
        rows = rows[rows["metric"] == f"arrival:{args.input}"]
    if not len(rows):
        raise SpecError(str(run.path), "metrics", "expected arrival:<stream> rows (a QJoin "
                        "family run)" + (f" for input {args.input!r}" if args.input else ""))
    profile = rate_profile(rows["time"].tolist(), float(run.spec["run"]["duration"]),
                           args.interval)
    with open(args.output, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["time", "rate"])
        out.writerows(profile)
    print(f"{args.output}: {len(profile)} intervals of {args.interval:g}")
    return 0


def _cmd_animate(args) -> int:
    from analysis.animate import animate

    output_file(args.output, "--output")
    print(animate(args.dir, args.output, frames=args.frames, fps=args.fps))
    return 0


def _cmd_pcap(args) -> int:
    from analysis.pcap import pcap

    output_file(args.output, "--output")
    print(pcap(args.dir, args.output, link=args.link))
    return 0


def _cmd_algorithms(args) -> int:
    from spark_nodes.algorithms import registry

    for name in registry.ALGORITHMS.names():
        algorithm = registry.ALGORITHMS.get(name)
        doc = " ".join((type(algorithm).__doc__ or "").split("\n\n")[0].split())
        print(f"{name}: {re.sub(r' ?[(]:mod:`[^`]*`[)]', '', doc).replace('``', '')}")
        for key, param in sorted(algorithm.params.items()):
            print(f"    {key} = {param.default!r}  {param.help}")
    return 0


def parser() -> argparse.ArgumentParser:
    """The argument parser of ``testbed``."""
    from emulator.backends import BACKENDS
    from spark_nodes.runtimes.registry import RUNTIMES
    from topologies.cli import add_subcommands

    p = argparse.ArgumentParser(prog="testbed", description=__doc__.splitlines()[0])
    p.add_argument("-v", "--verbose", action="store_true", help="log what is being done")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="run one spec into a run folder")
    r.add_argument("spec", help="the spec file (TOML)")
    r.add_argument("--out", default="runs", help="folder of run folders (default: runs)")
    r.add_argument("--seed", type=seed_argument,
                   help="the run's seed (a non-negative integer; overrides run.seed)")
    r.add_argument("--runtime", choices=RUNTIMES.names(),
                   help="where node programs run (overrides run.runtime)")
    r.add_argument("--backend", choices=BACKENDS.names(),
                   help="the emulated network: simpy (virtual time) or mininet (real hosts, "
                        "root); overrides run.backend")
    r.add_argument("--spark-master", help="Spark master URL (default: local[*])")
    r.add_argument("--force", action="store_true", help="run again even if complete")
    r.add_argument("--report", action="store_true", help="also write the run's report")
    r.set_defaults(func=_cmd_run)

    s = sub.add_parser("sweep", help="run the missing points of a sweep spec")
    s.add_argument("spec", help="the sweep spec file (TOML, with a [sweep] table)")
    s.add_argument("--out", help="sweep folder (default: runs/<spec name>)")
    s.add_argument("--engine", choices=("local", "spark"), default="local",
                   help="run the points on this machine (local), or as Spark tasks on a "
                        "cluster (spark)")
    s.add_argument("--jobs", type=jobs_argument,
                   help="runs at once with --engine local, each in a worker process "
                        f"(default: the machine's cores, {os.cpu_count()} here; 1 runs "
                        "them one after another in this process)")
    s.add_argument("--spark-master", help="Spark master URL for --engine spark")
    s.add_argument("--report", action="store_true", help="also write the sweep's report")
    s.set_defaults(func=_cmd_sweep)

    c = sub.add_parser("check", help="check a spec (every point of its sweep) as run and "
                       "sweep do before they start, without running anything")
    c.add_argument("spec", help="the spec file (TOML)")
    c.set_defaults(func=_cmd_check)

    rep = sub.add_parser("report", help="write report.html, plots and tables for a folder")
    rep.add_argument("dir", help="a run folder, a sweep folder or a folder of run folders")
    rep.add_argument("--out", help="report folder (default: DIR/report)")
    rep.add_argument("--animate", action="store_true",
                     help="also draw every run as an animated GIF in the report (see "
                          "testbed animate; some seconds a run)")
    rep.set_defaults(func=_cmd_report)

    pr = sub.add_parser("profile", help="build a lookup profile from a traced run of an "
                        "enrich-* algorithm (params.<algorithm>.trace = true)")
    pr.add_argument("dir", help="the traced run folder")
    pr.add_argument("-o", "--output", required=True, help="the profile file to write (JSON)")
    pr.add_argument("--oracle", action="store_true", help="list the exact tuples that needed "
                    "a remote lookup (for enrich-oracle) instead of predicting")
    pr.set_defaults(func=_cmd_profile)

    ra = sub.add_parser("rates", help="save a run's input rate per interval as the rate "
                        "profile of a deviation trigger ({kind = \"deviation\", profile = "
                        "FILE})")
    ra.add_argument("dir", help="a run folder of the QJoin family (its arrival rows)")
    ra.add_argument("-o", "--output", required=True, help="the CSV file to write (time,rate)")
    ra.add_argument("--interval", type=positive_number, default=1.0,
                    help="interval length (default 1)")
    ra.add_argument("--input", help="one stream only (default: all inputs together)")
    ra.set_defaults(func=_cmd_rates)

    an = sub.add_parser("animate", help="draw a run as an animation: nodes as they move "
                        "and die, links, traffic per link, one flow's route, batteries")
    an.add_argument("dir", help="a run folder")
    an.add_argument("-o", "--output", required=True,
                    help="the file to write: .gif, .html (self-contained) or .mp4 (ffmpeg)")
    an.add_argument("--frames", type=whole_number, default=60,
                    help="frames over the run (default 60)")
    an.add_argument("--fps", type=positive_number, default=10.0,
                    help="frames per second (default 10)")
    an.set_defaults(func=_cmd_animate)

    pc = sub.add_parser("pcap", help="write a run's transmissions as a packet capture "
                        "(pcapng) that Wireshark dissects: data hops and routing "
                        "control packets in their RFC wire formats")
    pc.add_argument("dir", help="a run folder (a routed run needs [run] capture = true)")
    pc.add_argument("-o", "--output", required=True, help="the .pcapng file to write")
    pc.add_argument("--link", default=None,
                    help="the link headers: 802.11 (radiotap) or 802.15.4 (6LoWPAN, "
                    "IPv6); default: the run's radio (802.15.4 under [mac] model = "
                    "\"802.15.4\" unless its routing is AODV or OLSR, else 802.11)")
    pc.set_defaults(func=_cmd_pcap)

    a = sub.add_parser("algorithms", help="list algorithms and their parameters")
    a.set_defaults(func=_cmd_algorithms)

    add_subcommands(sub)
    return p


def seed_argument(text: str) -> int:
    """``--seed``: a non-negative integer.

    >>> seed_argument("7")
    7
    """
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return int(text)


def positive_number(text: str) -> float:
    """``--interval``: a number > 0.

    >>> positive_number("0.5")
    0.5
    """
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value > 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}")
    return value


def jobs_argument(text: str) -> int:
    """``--jobs``: an integer >= 1.

    >>> jobs_argument("2")
    2
    >>> jobs_argument("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected an integer >= 1 (runs at once), got '0'
    """
    return whole_number(text, " (runs at once)")


def whole_number(text: str, meaning: str = "") -> int:
    """``--frames`` (and ``--jobs``): an integer >= 1.

    >>> whole_number("60")
    60
    """
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1{meaning}, got "
                                         f"{text!r}")
    return int(text)


def _one_line_warning(message, category, filename, lineno, line=None) -> str:
    """A spec's warning as the user reads it: ``warning: file: field: what happens``
    (not Python's ``path:line: Category: ...`` and the source line).

    >>> _one_line_warning("s.toml: query.window: 8 is longer than the run", UserWarning,
    ...                   "spec.py", 1)
    'warning: s.toml: query.window: 8 is longer than the run\\n'
    """
    return f"warning: {message}\n"


def main(argv=None) -> int:
    """Entry point of the ``testbed`` console script."""
    from experiments.spec import SpecError
    from experiments.store import RunFolderError
    from experiments.sweep_spark import SweepRunError
    from spark_nodes.runtimes.session import SparkSetupError

    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s: %(message)s")
    warnings.formatwarning = _one_line_warning
    if args.verbose:   # our own steps only; py4j, fontTools & co. stay at warnings
        for package in OWN_PACKAGES:
            logging.getLogger(package).setLevel(logging.INFO)
    try:
        return args.func(args)
    except (SpecError, SparkSetupError, SweepRunError, RunFolderError) as err:
        # what a user can fix (a spec, a folder, Java, PYSPARK_PYTHON, a master): a
        # message, no trace
        print(f"error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # output piped into `head` & co.: stop quietly (Python's documented recipe)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
