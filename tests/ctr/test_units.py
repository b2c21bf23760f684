"""Units of the ATR/CTR package: cover, table, load, probing, placement, params, pickling."""
import math
import pickle

import numpy as np
import pytest
from .ctr_harness import make_plan, make_streams, run_plan

from spark_nodes.algorithms import registry
from spark_nodes.algorithms.ctr.atr import AtrRouter
from spark_nodes.algorithms.ctr.ctr import CtrRouter
from spark_nodes.algorithms.ctr.load import LoadBoard
from spark_nodes.algorithms.ctr.probe import StoredSegment, extend
from spark_nodes.algorithms.ctr.routing_table import RoutingTable
from spark_nodes.algorithms.ctr.set_cover import assign_probers, greedy_cover
from spark_nodes.workload.tuples import StreamTuple as T


def board(hosts=(1, 2, 3)):
    return LoadBoard(hosts, (0.0, 1.0, 0.0), (1.0, 10.0, 1.0), 1.0)


def test_greedy_cover_prefers_cheap_per_element_and_covers_everything():
    holders = {"a": {1, 2}, "b": {1, 3}, "c": {1}, "d": {2, 3}}
    # host 1 holds three elements at weight 0.6 (0.2 each) vs hosts 2/3 at 0.3 per element
    chosen = greedy_cover(holders, holders, {1: 0.6, 2: 0.6, 3: 0.6})
    assert chosen == [1, 2]
    probers = assign_probers(holders, holders, chosen, {1: 0.6, 2: 0.1, 3: 0.0})
    assert probers == {"a": 2, "b": 1, "c": 1, "d": 2}
    with pytest.raises(ValueError, match="held by no host"):
        greedy_cover(["x"], {"x": set()}, {})


def test_routing_table_expires_only_dead_segments():
    rt = RoutingTable(1.0)
    for g in range(4):
        rt.add("R1", g, hosts=(1,), tuples=1)
    rt.add("R2", 3, hosts=(2,), tuples=1)
    # next segment starts at 4: R1 segment g ends at g+1, dead once 4 - (g+1) >= W = 1.5
    gone = rt.expire(4.0, {"R1": 1.5, "R2": 1.5})
    assert [e.seg for e, _ in gone] == [("R1", 0), ("R1", 1)]
    assert rt.lookup("R1", 2.0) == [("R1", 2), ("R1", 3)]
    assert rt.expire(100.0, {"R1": math.inf, "R2": math.inf}) == []
    with pytest.raises(ValueError, match="added after"):
        rt.add("R1", 1, hosts=(1,), tuples=1)


def test_load_board_composite_weights_and_validation():
    b = LoadBoard([1, 2], (0.5, 0.25, 0.25), (100.0, 10.0, 4.0), 2.0)
    b.report(1, probes_rate=50.0, tuples=4, units_rate=2.0)
    b.sent(1, tuples=1, units=4.0)      # adds 1 tuple and 4/2 units per time unit
    assert b.load(1) == pytest.approx(0.5 * 0.5 + 0.25 * 0.5 + 0.25 * 1.0)
    assert b.least_loaded([1, 2]) == 2
    assert b.imbalance() == pytest.approx(2.0)
    with pytest.raises(ValueError, match="summing to 1"):
        LoadBoard([1], (0.5, 0.5, 0.5), (1, 1, 1), 1.0)
    with pytest.raises(ValueError, match="capacity"):
        LoadBoard([1], (1.0, 0.0, 0.0), (1, 0, 1), 1.0)


def test_extend_checks_window_both_ways_and_distance_pairs():
    w = {"A": 1.0, "B": 1.0, "C": 1.0}
    a = T("A", 0, 5.0, None, 0.0, 0.0, 0)
    b = T("B", 0, 5.5, None, 1.0, 0.0, 0)
    seg = StoredSegment([T("C", 0, 4.2, None, 0.5, 0.0, 0),    # 5.5 - 4.2 > W_C
                         T("C", 1, 4.6, None, 0.5, 0.5, 0),    # in window, near both
                         T("C", 2, 4.8, None, 2.0, 0.0, 0)])   # too far from A
    stats = {}
    out = extend([(a, b)], seg, "C", w, "distance", 1.0, stats)
    assert [p[-1].seq for p in out] == [1]
    assert stats == {("B", "C"): [2, 1]}


def test_routers_count_late_tuples():
    r = CtrRouter(["A", "B"], {"A": 1.0, "B": 1.0}, 1.0, board())
    assert r.add(T("A", 0, 0.5, 1, None, None, 0))
    r.flush(1.0)
    assert not r.add(T("B", 0, 0.9, 1, None, None, 0))
    assert r.late == 1
    a = AtrRouter(["A", "B"], {"A": 1.0, "B": 1.0}, 1.0, board())
    a.flush(2.0)
    assert not a.add(T("A", 0, 1.5, 1, None, None, 0)) and a.late == 1


def test_ctr_cover_storage_never_spreads_llf_does():
    # "cover" stores a segment where its probes ran, so new hosts never get data
    for store, expected_hosts in (("cover", 1), ("llf", 3)):
        r = CtrRouter(["A", "B"], {"A": 3.0, "B": 3.0}, 1.0, board(), store=store)
        rng = np.random.default_rng(0)
        for i in range(200):
            r.add(T("AB"[i % 2], i, float(rng.uniform(0, 20)), 1, None, None, 0))
        used = set()
        for route, _ in r.flush(20.0):
            used.update(route.store)
        assert len(used) == expected_hosts, store


def test_params_errors_name_the_field(small_grid):
    with pytest.raises(ValueError, match=r"params\.ctr\.store"):
        registry.ALGORITHMS.get("ctr").programs(
            make_plan("ctr", {"store": "nowhere"}, small_grid, [0, 8], [1.0, 1.0]))
    with pytest.raises(ValueError, match=r"params\.atr\.host_nodes"):
        registry.ALGORITHMS.get("atr").programs(
            make_plan("atr", {"hosts": 2, "host_nodes": [1, 99]}, small_grid, [0, 8],
                      [1.0, 1.0]))
    with pytest.raises(ValueError, match=r"params\.atr\.weights"):
        registry.ALGORITHMS.get("atr").programs(
            make_plan("atr", {"weights": [1.0, 1.0, 1.0]}, small_grid, [0, 8], [1.0, 1.0]))
    with pytest.raises(ValueError, match=r"params\.ctr\.bogus: unknown parameter"):
        make_plan("ctr", {"bogus": 1}, small_grid, [0, 8], [1.0, 1.0])


def test_placement_defaults(small_grid):
    plan = make_plan("ctr", {"hosts": 4}, small_grid, [0, 2, 6], [1.0, 1.0, 1.0], seed=7)
    setup = registry.ALGORITHMS.get("ctr").setup(plan)
    # total hops to sources 0, 2, 6 on the 3x3 grid: node 0 -> 0+2+2, nodes 1, 3 -> 5
    assert setup.diffusion == 0
    assert len(set(setup.hosts)) == 4
    assert setup.hosts == registry.ALGORITHMS.get("ctr").setup(plan).hosts      # seeded, repeatable
    programs = registry.ALGORITHMS.get("ctr").programs(plan)
    assert set(programs) == {0, 2, 6, plan.query.node, *setup.hosts}


@pytest.mark.parametrize("algorithm", ["atr", "ctr", "single-host"])
def test_programs_pickle_mid_run_and_are_deterministic(algorithm, small_grid):
    tuples = make_streams(np.random.default_rng(2), ["R1", "R2", "R3"], [0, 4, 8],
                          [2.0, 2.0, 2.0], 5.0, disorder=0.1)
    params = {} if algorithm == "single-host" else {"hosts": 3}
    plan = make_plan(algorithm, params, small_grid, [0, 4, 8], [1.0, 1.0, 1.0], duration=7.0)
    programs = registry.ALGORITHMS.get(algorithm).programs(plan)
    assert pickle.loads(pickle.dumps(programs)).keys() == programs.keys()
    out1, expected, _ = run_plan(plan, tuples)
    out2, _, _ = run_plan(plan, tuples)
    assert list(out1.results["group"]) == list(out2.results["group"])
    assert out1.ledger.equals(out2.ledger)
    assert set(out1.results["group"]) == expected


def test_ctr_route_covers_reuses_previous_hop_and_probes_each_segment_once():
    r = CtrRouter(["A", "B", "C"], {"A": 3.0, "B": 3.0, "C": 3.0}, 1.0, board((1, 2, 3, 4)))
    for stream, g, hosts in (("B", 0, (1, 2)), ("B", 1, (2, 3)), ("B", 2, (3,)),
                             ("C", 0, (2,)), ("C", 1, (4,)), ("C", 2, (3, 4))):
        r.table.add(stream, g, hosts, tuples=1)
    route = r.route("A", 3, [T("A", 0, 3.5, 1, None, None, 0)])
    assert route.sequence == ("B", "C")
    # hop 1: greedy cover of B0..B2 = {2 (B0, B1), 3 (B2)}; B1 lies on both, probed by 2
    assert route.hops[0] == ((2, (("B", 0), ("B", 1))), (3, (("B", 2),)))
    # hop 2: C0 and C2 are on hop-1 hosts 2 and 3 (reused); only C1 needs a new host, 4
    assert route.hops[1] == ((2, (("C", 0),)), (3, (("C", 2),)), (4, (("C", 1),)))
    assert route.store == (2, 3) and route.receivers() == (2, 3)
    # one probe task per (host, hop) on each copy; released with the count
    gone = {e.seg: probes for e, probes in r.table.drain()}
    assert gone[("B", 1)] == {2: 1, 3: 0} and gone[("C", 1)] == {4: 1}
    assert gone[("A", 3)] == {2: 0, 3: 0}
