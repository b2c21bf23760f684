"""Runs on the emulated network equal the simulated runs (loss-free), routes move live."""
import json

import pytest

import experiments
from .mininet_specs import smoke_spec

pytestmark = pytest.mark.mininet


def run_both(raw, out):
    simpy = experiments.run(raw, out=out / "simpy", backend="simpy")
    emulated = experiments.run(raw, out=out / "mininet", backend="mininet")
    return simpy, emulated


#: Wall seconds per time unit of the smoke runs: twice the spec's, so that a loaded
#: machine's scheduling stalls stay small against the emulated link delays.
SMOKE_TIME_SCALE = 2.0


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    return run_both(smoke_spec(**{"mininet.time_scale": SMOKE_TIME_SCALE}),
                    tmp_path_factory.mktemp("smoke"))


def test_smoke_spec_gives_the_simpy_result_set_and_the_exact_answer(smoke):
    simpy, emulated = smoke
    groups = set(emulated.results["group"])
    assert len(groups) > 20
    assert groups == set(simpy.results["group"])
    assert groups == set(emulated.expected["group"])
    assert emulated.summary["duplicates"] == 0
    assert emulated.summary["messages"] == simpy.summary["messages"]
    assert emulated.summary["comm_cost_total"] == pytest.approx(simpy.summary["comm_cost_total"])


def test_route_change_moves_traffic_in_the_ledger_and_in_the_kernel(smoke):
    _, emulated = smoke
    led = emulated.ledger
    # Before t=3 node 4 reaches the query node over 4-3-2-1-0 (cost 4 < 4.5); after the
    # cost of 2-3 rises to 10 it uses the direct link 4-0.
    direct = led[(led.hop_u == 4) & (led.hop_v == 0)]
    around = led[(led.hop_u == 4) & (led.hop_v == 3)]
    assert len(direct) > 3 and len(around) > 3
    assert direct["time"].min() >= 3.0 and around["time"].max() < 3.0
    meta = json.loads((emulated.path / "meta.json").read_text())
    info = meta["backend_info"]
    wire = info["bytes_on_wire_by_link"]
    # The kernel carried node 4's data over the direct link: its counter saw at least
    # the ledger's bytes for that link (TCP/IP headers come on top).
    assert wire["4-0"] >= int(direct["size_bytes"].sum())
    assert info["epochs_applied"] == 2
    assert info["bytes_on_wire"] > info["bytes"] > 0


def test_meta_records_the_shaping_mechanism(smoke):
    _, emulated = smoke
    info = json.loads((emulated.path / "meta.json").read_text())["backend_info"]
    netem = info["netem_probe"].endswith("rc=0")
    assert info["shaping"] == ("netem" if netem else "tun")
    assert info["time_scale"] == SMOKE_TIME_SCALE and info["hosts"] == 5 and info["links"] == 6


@pytest.mark.parametrize("algorithm, streams", [   # QJoin on Mininet: the full suite
    ("smj-e", 3), pytest.param("qjoin", 2, marks=pytest.mark.full_suite)])
def test_smj_and_qjoin_complete_with_the_simpy_results(tmp_path, algorithm, streams):
    nodes = [2, 3, 4][-streams:]
    raw = smoke_spec(**{"algorithm.name": algorithm, "streams.count": streams,
                        "streams.nodes": nodes, "run.duration": 4.0,
                        "mininet.time_scale": 0.5})
    simpy, emulated = run_both(raw, tmp_path)
    groups = set(emulated.results["group"])
    assert len(groups) > 5
    assert groups == set(simpy.results["group"])
    assert emulated.summary["recall"] == simpy.summary["recall"] == 1.0
    assert emulated.summary["duplicates"] == 0


def test_a_source_node_that_dies_for_a_while_drops_the_same_tuples(tmp_path):
    schedule = tmp_path / "schedule.csv"
    schedule.write_text("time,u,v,cost,up\n3.0,2,3,10.0,\n1.5,4,,,0\n3.5,4,,,1\n")
    raw = smoke_spec(**{"mobility.file": str(schedule), "run.duration": 5.0,
                        "mininet.time_scale": 0.5})
    simpy, emulated = run_both(raw, tmp_path)
    groups = set(emulated.results["group"])
    assert len(groups) > 5 and groups == set(simpy.results["group"])
    info = {}
    for name, r in (("simpy", simpy), ("mininet", emulated)):
        info[name] = json.loads((r.path / "meta.json").read_text())["backend_info"]
    assert info["mininet"]["dropped"] == info["simpy"]["dropped"]
    assert info["mininet"]["dropped"]["tuples_at_dead_node"] > 0
    assert emulated.summary["recall"] < 1.0


def test_wire_bytes_are_explained_by_payloads_and_headers(smoke):
    """The kernel's veth counters carry several times the ledger's bytes: the messages
    are pickled (larger than the modelled size) and every packet, data or ACK, has 66
    bytes of Ethernet/IPv4/TCP headers. After that breakdown, less than 10 % is left."""
    _, emulated = smoke
    s = emulated.summary
    assert s["bytes_on_wire"] > s["bytes"] > 0
    assert s["wire_payload_bytes"] >= s["bytes"] * 0.5 and s["wire_packets"] > 0
    assert s["wire_header_bytes"] == 66 * s["wire_packets"]
    assert s["wire_payload_bytes"] + s["wire_header_bytes"] + s["wire_other_bytes"] == \
        s["bytes_on_wire"]
    assert abs(s["wire_other_bytes"]) < 0.10 * s["bytes_on_wire"]
