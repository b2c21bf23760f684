"""A stored run as a packet capture: ``testbed pcap RUN_DIR -o run.pcapng``.

Reads the run folder's ledger and, for a run with ``[run] capture = true``, its capture
table, and writes them with :func:`emulator.pcap.write.write_pcap` (one frame per ledger
row, in the air; docs/DESIGN.md). A routed run without the capture table cannot say what
its control packets held: the error names the key that keeps them. Time units are
written as ``[routing] seconds_per_unit`` seconds each.

>>> import tempfile
>>> pcap(tempfile.mkdtemp(), "run.pcapng")   # doctest: +ELLIPSIS
Traceback (most recent call last):
...
analysis.pcap.PcapError: /...: RUN_DIR: not a complete run folder (testbed run writes one)
"""
from __future__ import annotations

import warnings
from pathlib import Path

from analysis.loading import run_with_ledger
from experiments.spec import SpecError


class PcapError(SpecError):
    """What cannot be captured: ``folder or file: what: what was expected`` (a
    :class:`~experiments.spec.SpecError`, so the command line prints it in one line)."""


def pcap(run_dir, out, *, link: str = "802.11") -> Path:
    """Write the run in ``run_dir`` to ``out`` (pcapng) with link headers ``link``;
    returns the path written."""
    from emulator.pcap.write import LINKS, write_pcap

    # a wrong link type refused before the run folder is read
    if link not in LINKS:
        raise PcapError("pcap", "--link", f"expected one of {', '.join(LINKS)}, got "
                        f"{link!r}")
    run = run_with_ledger(Path(run_dir), PcapError,
                          "there are no transmissions to write")
    routing = run.spec.get("network", {}).get("routing", "oracle")
    if run.capture is None and (run.ledger["kind"] == "routing").any():
        raise PcapError(str(run_dir), "capture", f"the {routing} run kept no capture "
                        "table, so its control packets' fields are unknown: run its spec "
                        "again with [run] capture = true")
    mac = run.spec.get("mac", {}).get("model", "ideal")
    if mac == "802.15.4":   # written all the same: the IP and routing layers hold
        warnings.warn(f"{run_dir}: the run's MAC is 802.15.4, its frames are written with "
                      f"{link} link headers (802.15.4 headers are not written yet: IPv4 "
                      "over 802.15.4 needs 6LoWPAN)", stacklevel=2)
    seconds = run.spec.get("routing", {}).get("seconds_per_unit", 1.0)
    return write_pcap(run, out, link=link, seconds_per_unit=seconds)
