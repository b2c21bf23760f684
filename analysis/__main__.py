"""``python -m analysis DIR [--out REPORT_DIR]``: write the HTML report of DIR."""
from __future__ import annotations

import argparse
import logging

from analysis.report import write_report


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, write the report, print its path."""
    parser = argparse.ArgumentParser(prog="python -m analysis", description=__doc__)
    parser.add_argument("directory", help="run folder or sweep folder")
    parser.add_argument("--out", default=None, help="report folder (default DIR/report)")
    parser.add_argument("-q", "--quiet", action="store_true", help="log warnings only")
    args = parser.parse_args(argv)
    # Only this package's messages at INFO: matplotlib's font subsetting is chatty.
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("analysis").setLevel(logging.WARNING if args.quiet else logging.INFO)
    print(write_report(args.directory, args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
