"""A stored run as a packet capture: ``testbed pcap RUN_DIR -o run.pcapng``.

Reads the run folder's ledger and, for a run with ``[run] capture = true``, its capture
table, and writes them with :func:`emulator.pcap.write.write_pcap` (one frame per ledger
row, in the air; docs/DESIGN.md), with the link headers of the run's radio unless
another is asked (:func:`link_of`). A routed run without the capture table cannot say what
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


def pcap(run_dir, out, *, link: str | None = None) -> Path:
    """Write the run in ``run_dir`` to ``out`` (pcapng) with link headers ``link``
    (None: :func:`link_of` the run); returns the path written."""
    from emulator.pcap.write import IPV4_ROUTINGS, LINKS, write_pcap

    # a wrong link type refused before the run folder is read
    if link is not None and link not in LINKS:
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
    ipv4 = routing in IPV4_ROUTINGS.values()   # its packets hold IPv4 addresses
    if link == "802.15.4" and ipv4:
        raise PcapError(str(run_dir), "--link", f"802.15.4 frames carry IPv6 (6LoWPAN) "
                        f"and {routing}'s packets hold IPv4 addresses: write the run "
                        "with --link 802.11")
    link = link or link_of(mac, routing)
    if mac in LINKS and mac != link:   # written all the same: the IP layers hold
        warnings.warn(f"{run_dir}: the run's MAC is {mac}, its frames are written with "
                      f"{link} link headers" + (
                          f" ({routing}'s packets hold IPv4 addresses; 802.15.4 frames "
                          "carry IPv6 over 6LoWPAN)" if ipv4 else ""),
                      stacklevel=2)
    seconds = run.spec.get("routing", {}).get("seconds_per_unit", 1.0)
    return write_pcap(run, out, link=link, seconds_per_unit=seconds)


def link_of(mac: str, routing: str) -> str:
    """The link headers a run's capture has by default: its radio's (802.15.4 under
    that MAC), unless its routing's packets cannot ride it (IPv4 ones on 802.15.4).

    >>> link_of("802.15.4", "rpl"), link_of("802.15.4", "aodv"), link_of("ideal", "rpl")
    ('802.15.4', '802.11', '802.11')
    """
    from emulator.pcap.write import IPV4_ROUTINGS

    ipv4 = routing in IPV4_ROUTINGS.values()
    return "802.15.4" if mac == "802.15.4" and not ipv4 else "802.11"
