"""The testbed's packet capture beside ns-3's for one scenario
(``benchmarks/validate_ns3.py --pcap``): Wireshark's dissectors take both down the same
layers, and AODV's HELLOs say the same in both. Needs ns-3 (the ``ns3`` extra) and
tshark, which ``make test`` installs; ns-3 imports in 8-25 s and runs the scenario in
about as long, hence ``full_suite``."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from benchmarks import validate_ns3
from benchmarks.ns3_validation import ns3_side
from benchmarks.ns3_validation.scenario import make_scenario

TSHARK = shutil.which("tshark")


def columns(path, *fields) -> list[tuple[str, ...]]:
    args = [TSHARK, "-r", str(path), "-T", "fields"]
    for field in fields:
        args += ["-e", field]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return [tuple(line.split("\t")) for line in out.splitlines()]


@pytest.mark.skipif(not ns3_side.available() or TSHARK is None,
                    reason="needs ns-3 (pip install .[ns3]) and tshark (apt-get install "
                           "tshark)")
@pytest.mark.full_suite
@pytest.mark.xdist_group("ns3")
def test_ns3_and_the_testbed_captures_dissect_alike(tmp_path):
    sc = make_scenario(speed=0.0, load="light", routing="aodv", seed=1, nodes=10,
                       area=100.0, duration=20.0, warmup=10.0)
    ours, *theirs = validate_ns3.write_pcaps(tmp_path, sc)
    assert len(theirs) == sc.nodes
    fields = ("frame.protocols", "aodv.type", "aodv.hopcount", "aodv.lifetime",
              "aodv.dest_ip", "aodv.orig_ip")
    mine = columns(ours, *fields)
    seen = [row for path in theirs for row in columns(path, *fields)]
    layers = "radiotap:wlan_radio:wlan:llc:ip:udp"
    # the testbed's frames are all IPv4/UDP, AODV or data, and so are ns-3's beside its
    # ACKs and ICMP
    assert {row[0] for row in mine} == {f"{layers}:aodv", f"{layers}:data"}
    assert {row[0] for row in mine} <= {row[0] for row in seen}
    assert {row[1] for row in mine if row[1]} == {row[1] for row in seen if row[1]} >= {
        "1", "2"}

    def hellos(rows):   # RREPs about their own sender, hop count 0: their lifetimes
        return {row[3] for row in rows if row[1] == "2" and row[2] == "0"
                and row[4] == row[5]}
    assert hellos(mine) == hellos(seen) == {"2000"}   # ALLOWED_HELLO_LOSS x 1 s
