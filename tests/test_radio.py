"""topologies.radio wired in: log-distance links, bit error rates per link, loss by frame
size in the transport, the [radio] spec table and deliver(radio=...)."""
import doctest
import hashlib
import math

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import experiments
import topologies.radio
from emulator import deliver
from emulator.network import Link, Network
from experiments import spec as specs
from topologies import (Trajectories, grid, line, mobility_dynamics, random_geometric,
                        static_dynamics)
from topologies.radio import Radio
from topologies.schema import FieldError


def test_the_radio_modules_examples_run():
    result = doctest.testmod(topologies.radio)
    assert result.attempted >= 8 and result.failed == 0


def _hand_ber(d_m):
    """802.11b DBPSK at 1 Mbit/s by hand: ns-3's defaults, Eb/N0 = SNR x 22 MHz / 1 Mbit/s."""
    path_loss = 46.6777 + 30 * math.log10(d_m)          # exponent 3, 1 m reference
    snr_db = 16.0206 - path_loss + 93.97
    return 0.5 * math.exp(-(10 ** (snr_db / 10)) * 22)


@pytest.mark.parametrize("d_m", [60.0, 100.0, 150.0, 180.0])
def test_snr_ber_and_fer_match_the_hand_computed_curve(d_m):
    radio = Radio()
    assert float(radio.snr_db(d_m)) == pytest.approx(
        16.0206 - 46.6777 - 30 * math.log10(d_m) + 93.97, abs=1e-9)
    ber = _hand_ber(d_m)
    assert float(radio.ber(d_m)) == pytest.approx(ber, rel=1e-9)
    for size in (100, 1500):
        assert float(radio.fer(d_m, size)) == pytest.approx(1 - (1 - ber) ** (8 * size),
                                                            rel=1e-6, abs=1e-300)


def test_known_values_at_100_and_150_metres():
    radio = Radio()
    assert float(radio.snr_db(100.0)) == pytest.approx(3.3129, abs=1e-4)
    assert float(radio.fer(150.0, 100)) == pytest.approx(3.39e-4, rel=0.01)
    assert float(radio.fer(150.0, 1500)) == pytest.approx(5.08e-3, rel=0.01)
    # the range: where the reference frame (100 bytes) is lost half the time
    assert float(radio.fer(radio.range_m(), 100)) == pytest.approx(0.5, abs=1e-9)


def _one_link(distance_units, mpu=100.0):
    g = nx.Graph()
    g.add_node(0, pos=(0.0, 0.0))
    g.add_node(1, pos=(distance_units, 0.0))
    g.add_edge(0, 1, cost=1.0, delay=0.01, bandwidth=math.inf)
    return g


def _stream(n, size):
    return pd.DataFrame({"msg_id": range(n), "src": 0, "dst": 1,
                         "sent_at": np.arange(n) * 0.001, "size_bytes": size})


def test_a_large_frame_is_lost_more_often_and_as_often_as_the_formula_says():
    g, n, radio = _one_link(1.8), 4000, {"model": "log_distance", "meters_per_unit": 100.0}
    rates = {}
    for size in (100, 1500):
        out = deliver(g, _stream(n, size), radio=radio, seed=5)
        rates[size] = out["lost"].mean()
        assert set(out.loc[out["lost"], "loss_reason"]) == {"link_loss"}
        p = float(Radio(meters_per_unit=100.0).fer(180.0, size))
        # five binomial standard deviations
        assert abs(rates[size] - p) <= 5 * math.sqrt(p * (1 - p) / n), (size, rates[size], p)
    assert rates[1500] > rates[100] + 0.5


def test_loss_and_ber_combine_as_independent_events():
    g = _one_link(1.8)
    g.edges[0, 1]["loss"] = 0.3
    n = 4000
    out = deliver(g, _stream(n, 100), radio={"model": "log_distance",
                                             "meters_per_unit": 100.0}, seed=2)
    p = 1 - 0.7 * (1 - float(Radio(meters_per_unit=100.0).fer(180.0, 100)))
    assert abs(out["lost"].mean() - p) <= 5 * math.sqrt(p * (1 - p) / n)


def test_links_are_the_pairs_within_range_on_a_static_topology():
    topo = random_geometric(40, 0.3, seed=4)
    radio = Radio(meters_per_unit=400.0)   # range 195 m = 0.49 units
    graph = static_dynamics(topo, radio=radio).snapshot(0.0)
    reach = radio.range_m()
    pos = topo.positions
    within = {(u, v) for u in topo.nodes for v in topo.nodes
              if u < v and math.dist(pos[u], pos[v]) * 400.0 < reach}
    assert {(min(e), max(e)) for e in graph.edges} == within
    assert len(within) > topo.graph.number_of_edges()    # not the radius-0.3 links
    for u, v, d in graph.edges(data=True):
        assert d["length_m"] == pytest.approx(math.dist(pos[u], pos[v]) * 400.0)
        assert d["ber"] == pytest.approx(float(radio.ber(d["length_m"])))


def test_a_receiver_sensitivity_cuts_links_where_the_received_power_falls_below_it():
    # ns-3's 802.11b: the -82 dBm preamble detection threshold is a hard cut at 51.4 m
    # at 16.02 dBm, far inside the 195 m the bit errors alone allow
    radio = Radio(sensitivity_dbm=-82.0)
    assert radio.range_m() == pytest.approx(51.45, abs=0.01)
    assert float(radio.rx_dbm(radio.range_m())) == pytest.approx(-82.0, abs=1e-6)
    assert Radio(sensitivity_dbm=-82.0, tx_power_dbm=36.62).range_m() == \
        pytest.approx(250.0, abs=0.5)
    pairs, dist, _ = radio.links(np.array([[0, 0], [51, 0], [102, 0], [0, 52]]))
    assert pairs.tolist() == [[0, 1], [1, 2]] and dist.tolist() == [51.0, 51.0]
    # a cut beyond the bit-error range changes nothing, and none is no cut
    far = np.array([[0, 0], [150, 0], [300, 0]])
    assert Radio(sensitivity_dbm=-120.0).links(far)[0].tolist() == \
        Radio().links(far)[0].tolist() == [[0, 1], [1, 2]]


def test_hop_lists_and_link_carry_ber_and_length_per_directed_link():
    radio = Radio(meters_per_unit=100.0)
    view = Network(static_dynamics(line(3), radio=radio)).view(0.0)
    heads, *_, bers, lengths = view.hop_lists()
    assert len(view.hop_lists()) == 8 and len(bers) == len(lengths) == len(heads) == 4
    assert lengths == [100.0] * 4
    link = view.link(1, 0)
    assert isinstance(link, Link) and link.length_m == 100.0
    assert link.ber == pytest.approx(float(radio.ber(100.0))) and link.ber > 0
    # the unit disk: lengths from positions too, no bit errors
    view = Network(static_dynamics(grid(2, 2), radio={"meters_per_unit": 10.0})).view(0.0)
    assert view.link(0, 1) == Link(1.0, 0.01, 0.0, math.inf, 0.0, 0.0, 10.0)


def test_mobility_moves_ber_with_distance_every_sample():
    tr = Trajectories({1: [(0, 1.0, 0), (3, 1.6, 0)]})   # node 1 drifts away from 0
    dyn = mobility_dynamics(line(2), tr, duration=4, resolution=1,
                            radio={"model": "log_distance", "meters_per_unit": 100.0})
    assert dyn.epochs == [0.0, 1.0, 2.0, 3.0]            # same link, new quality each time
    bers = [dyn.snapshot(t).edges[0, 1]["ber"] for t in dyn.epochs]
    lengths = [dyn.snapshot(t).edges[0, 1]["length_m"] for t in dyn.epochs]
    assert all(a < b for a, b in zip(bers, bers[1:]))
    assert lengths == pytest.approx([100.0, 120.0, 140.0, 160.0])
    # the unit disk over the same movement: one epoch (the link never changes)
    assert mobility_dynamics(line(2), tr, duration=4, resolution=1, radius=2.0).epochs == [0.0]


def _shadowed(seed, sigma=6.0):
    topo = random_geometric(25, 0.35, seed=7)
    radio = {"model": "log_distance", "meters_per_unit": 400.0, "shadowing_db": sigma}
    return Network(static_dynamics(topo, radio=radio, seed=seed)).view(0.0)


def _link_table(view):
    heads, *_, bers, lengths = view.hop_lists()
    tails = [u for u in view.nodes for _ in view.out_links(u)]
    return {(u, v): b for u, v, b in zip(tails, heads, bers)}


def test_shadowing_is_deterministic_per_seed_symmetric_and_differs_across_seeds():
    a, again, b = _link_table(_shadowed(1)), _link_table(_shadowed(1)), _link_table(_shadowed(2))
    assert a == again
    assert a != b
    assert all(a[(v, u)] == ber for (u, v), ber in a.items())
    # links exist beyond the unshadowed range (and some within it are cut)
    plain = _link_table(_shadowed(1, sigma=0.0))
    assert set(a) - set(plain) and set(plain) - set(a)


def test_shadowing_is_drawn_again_every_epoch():
    tr = Trajectories({})
    radio = {"model": "log_distance", "meters_per_unit": 400.0, "shadowing_db": 4.0}
    topo = random_geometric(10, 0.5, seed=3)
    dyn = mobility_dynamics(topo, tr, duration=3, resolution=1, radio=radio, seed=9)
    assert len(dyn.epochs) == 3
    first, second = (Network(dyn).view(t) for t in (0.0, 1.0))
    assert _link_table(first) != _link_table(second)
    with pytest.raises(ValueError, match="radio.shadowing_db"):
        mobility_dynamics(topo, tr, duration=3, resolution=1, radio=radio)


def _digest(frame):
    return hashlib.sha256(pd.util.hash_pandas_object(frame, index=False).values).hexdigest()


def test_unit_disk_delivers_exactly_what_no_radio_does():
    topo = random_geometric(20, 0.4, seed=2)
    tr = Trajectories({n: [(0, *topo.positions[n]), (5, 0.5, 0.5)] for n in (3, 7, 11)})
    rng = np.random.default_rng(0)
    msgs = pd.DataFrame({"msg_id": range(300), "src": rng.integers(0, 20, 300),
                         "dst": rng.integers(0, 20, 300), "sent_at": np.sort(rng.random(300) * 5),
                         "size_bytes": rng.integers(50, 1500, 300)})
    graph = nx.Graph(topo.graph)
    for e in graph.edges:
        graph.edges[e]["loss"] = 0.1
    plain = deliver(graph, msgs, seed=4)
    assert _digest(deliver(graph, msgs, seed=4, radio={"model": "unit_disk"})) == _digest(plain)
    assert _digest(deliver(graph, msgs, seed=4, radio={"meters_per_unit": 50.0})) == \
        _digest(plain)
    dyn = mobility_dynamics(topo, tr, duration=5, resolution=0.5, radius=0.4)
    plain = deliver(graph, msgs, seed=4, dynamics=dyn, medium="shared")
    for radio in ({"model": "unit_disk"}, {"meters_per_unit": 80.0}):
        assert _digest(deliver(graph, msgs, seed=4, dynamics=dyn, medium="shared",
                               radio=radio)) == _digest(plain)


@pytest.mark.parametrize("radio, field, words", [
    ({"model": "laser"}, "radio.model", "expected one of unit_disk, log_distance"),
    ({"model": "log_distance", "exponent": 0.5}, "radio.exponent", "expected a number >= 1"),
    ({"model": "log_distance", "link_fer": 0}, "radio.link_fer", "expected a number > 0"),
    ({"modulation": "fm"}, "radio.modulation", "expected one of"),
    ({"colour": 1}, "radio.colour", "unknown key"),
])
def test_bad_radio_tables_name_the_field(radio, field, words):
    with pytest.raises(specs.SpecError) as caught:
        specs.resolve({"radio": radio}, "s.toml")
    assert caught.value.field == field and words in str(caught.value)
    assert "\n" not in str(caught.value)
    with pytest.raises(FieldError, match=f"^{field}: .*{words}"):
        deliver(_one_link(1.0), _stream(2, 10), radio=radio)


SPEC = {
    "run": {"name": "radio", "seed": 3, "duration": 6.0, "step": 0.05},
    "topology": {"generator": "random_geometric", "nodes": 12, "radius": 0.45,
                 "delay": 0.05},
    "mobility": {"model": "random_waypoint", "speed": [0.02, 0.08], "pause": 0.5,
                 "resolution": 0.5},
    "radio": {"model": "log_distance", "meters_per_unit": 400.0},
    "streams": {"count": 3, "rate": 4.0, "keys": "uniform", "key_domain": 6},
    "query": {"node": 0, "predicate": "equality", "window": 1.5},
    "algorithm": {"name": "centralized"},
}


def _with(**sections):
    spec = {k: dict(v) for k, v in SPEC.items()}
    for name, table in sections.items():
        if table is None:
            spec.pop(name)
        else:
            spec[name] = table
    return spec


@pytest.mark.parametrize("changes, field, words", [
    ({"topology": {"generator": "complete", "nodes": 4}, "mobility": None},
     "radio.model", 'needs every node\'s position'),
    ({"mobility": {"model": "schedule", "file": "x.csv"}}, "radio.model", "schedule"),
])
def test_log_distance_where_it_cannot_link_names_radio_model(changes, field, words, tmp_path):
    with pytest.raises(specs.SpecError) as caught:
        experiments.run(_with(**changes), out=tmp_path)
    assert caught.value.field == field and words in str(caught.value)


def test_log_distance_runs_on_the_simpy_backend_only():
    raw = _with(run={"name": "r", "backend": "mininet", "duration": 6.0},
                mobility=None)
    with pytest.raises(specs.SpecError) as caught:
        specs.resolve(raw, "s.toml")
    assert caught.value.field == "radio.model" and "simpy" in str(caught.value)


def test_deliver_log_distance_needs_positions():
    g = _one_link(1.0)
    del g.nodes[1]["pos"]
    with pytest.raises(FieldError, match="^radio.model: .*node 1 has none"):
        deliver(g, _stream(2, 10), radio={"model": "log_distance"})


@pytest.fixture(scope="module")
def radio_run(tmp_path_factory):
    with pytest.warns(specs.SpecWarning, match="topology.radius"):
        return experiments.run(SPEC, out=tmp_path_factory.mktemp("runs"))


def test_a_log_distance_run_completes_with_a_plausible_summary(radio_run):
    s, ledger = radio_run.summary, radio_run.ledger
    assert s["expected_results"] > 0 and 0 < s["recall"] <= 1.0
    assert s["duplicates"] == 0 and s["false_results"] == 0
    assert s["messages"] == ledger.msg_id.nunique() > 0
    # some hops are lost to bit errors, most are not
    assert 0 < ledger["lost"].mean() < 0.5


def test_unit_disk_spec_runs_equal_a_run_without_radio(tmp_path):
    base = _with(radio=None, run={"name": "u", "seed": 3, "duration": 3.0, "step": 0.05})
    plain = experiments.run(base, out=tmp_path / "a")
    scaled = experiments.run(_with(radio={"model": "unit_disk", "meters_per_unit": 9.0},
                                   run=base["run"]), out=tmp_path / "b")
    # without an energy model nothing reads links' lengths: the scale is inert (issue 57)
    assert plain.run_id == scaled.run_id
    assert _digest(plain.ledger) == _digest(scaled.ledger)
    assert _digest(plain.results) == _digest(scaled.results)


def test_a_schedule_takes_the_unit_disks_scale_but_not_log_distance():
    from topologies import loads_schedule, schedule_dynamics

    schedule = loads_schedule("time,u,v,cost,up\n2,0,1,5,\n", "s.csv")
    dyn = schedule_dynamics(line(3), schedule)
    scaled = dyn.with_radio({"meters_per_unit": 30.0}, seed=1)
    assert [d["length_m"] for *_, d in scaled.snapshot(2.0).edges(data=True)] == [30.0, 30.0]
    assert scaled.snapshot(2.0).edges[0, 1]["cost"] == 5.0
    with pytest.raises(FieldError, match='^radio.model: "log_distance" .*schedule'):
        deliver(nx.Graph(line(3).graph), _stream(2, 10), dynamics=dyn,
                radio={"model": "log_distance"})


def test_the_run_records_the_radios_range(radio_run):
    resolved = radio_run.resolved["radio"]
    assert resolved["range_m"] == pytest.approx(Radio().range_m())
    assert resolved["range_units"] == pytest.approx(Radio().range_m() / 400.0)
