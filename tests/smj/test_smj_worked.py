"""Every worked number of the source (docs/ALGORITHMS.md#smj-worked-example, tests 1-6)."""
import networkx as nx
import numpy as np
import pytest

from emulator.network import NetView
from spark_nodes.algorithms.smj.orders import (OrderProblem, hop_greedy, mask_filter,
                                               product_filter, smje, smjh)
from spark_nodes.workload.tuples import StreamTuple
from .smj_harness import make_plan, run_algorithm

# sites 1, 2, 3 are indices 0, 1, 2; the query node (index 3) is not used (no final hop)
W = np.array([[0, 18, 25, 0], [18, 0, 20, 0], [25, 20, 0, 0], [0, 0, 0, 0]], float)
S1 = [1, 0, 2, 1, 1, 0, 1, 0, 0, 1]
S3 = [1, 1, 1, 1, 0, 0, 1, 0, 1, 0]


def synopses(s1=S1, s3=S3):
    return np.array([s1, [0] * 10, s3], float)


def ids(*keys):
    x = np.zeros(10)
    x[[k - 1 for k in keys]] = 1
    return x


def problem(x, s=None):
    return OrderProblem(x, synopses() if s is None else s, W, origin=1, final=False)


def test_1_unfiltered_block_costs_129_and_110():
    p = problem(ids(3, 4, 8))
    assert p.sizes((0,))[1] == 3 and p.sizes((2,))[1] == 2   # |ΔR2⋈R1|, |ΔR2⋈R3|
    assert p.cost((0, 2)) == 129 and p.cost((2, 0)) == 110
    assert smje(p) == (110.0, (2, 0))


def test_2_mask_filter_costs_111_and_90_and_smje_smjh_agree():
    f2 = mask_filter(ids(3, 4, 8), synopses(), origin=1)
    assert f2.tolist() == ids(3, 4).tolist()
    p = problem(f2)
    assert p.cost((0, 2)) == 111 and p.cost((2, 0)) == 90
    assert smje(p) == smjh(p) == (90.0, (2, 0))
    assert smje(problem(ids(3, 4, 8)))[0] - smje(p)[0] == 20   # ID 8 no longer sent


def test_2_plain_hop_greedy_picks_the_wrong_order():
    assert hop_greedy(problem(mask_filter(ids(3, 4, 8), synopses(), 1))) == (111.0, (0, 2))


def test_3_second_block_costs_104_and_110_then_43_filtered():
    p = problem(ids(1, 5, 9))
    assert p.cost((0, 2)) == 104 and p.cost((2, 0)) == 110
    f = mask_filter(ids(1, 5, 9), synopses(), origin=1)
    assert f.tolist() == ids(1).tolist()
    assert smje(problem(f)) == smjh(problem(f)) == (43.0, (0, 2))


def test_4_literal_product_filter_contradicts_the_source():
    s = synopses(s1=ids(3, 4, 8).tolist())
    f = product_filter(ids(3, 4, 8), s, origin=1)
    assert problem(f, s).cost((0, 2)) == 86      # cheaper than 90: {1,3} would win
    assert smje(problem(f, s)) == (86.0, (0, 2))
    # and with the source's own synopses the product inflates the estimate of {3,1}
    g = product_filter(ids(3, 4, 8), synopses(), origin=1)
    assert problem(g).cost((2, 0)) == 135 != 90


def example_graph():
    g = nx.Graph()
    g.add_edge(1, 2, cost=18.0)
    g.add_edge(2, 3, cost=20.0)
    g.add_edge(1, 3, cost=25.0)
    return g


def example_net():
    return NetView.from_graph(example_graph())


def test_5_synopsis_center_is_site_2():
    net = example_net()
    assert net.center([1, 2, 3]) == 2
    assert net.cost(2, 1) + net.cost(2, 3) == 38


def example_tuples():
    """R1, R3 hold the source's tables in period 0; ΔR2 = {3,4,8} in period 1 and
    ΔR'2 = {1,5,9} in period 2."""
    def stream(name, node, ts, keys):
        return [StreamTuple(name, i, ts, k, None, None, node, 1.0, ts)
                for i, k in enumerate(keys)]
    r1 = [k + 1 for k, c in enumerate(S1) for _ in range(c)]
    r3 = [k + 1 for k, c in enumerate(S3) for _ in range(c)]
    return {"R1": stream("R1", 1, 0.5, r1),
            "R2": stream("R2", 2, 1.5, [3, 4, 8]) + [
                StreamTuple("R2", 3 + i, 2.5, k, None, None, 2, 1.0, 2.5)
                for i, k in enumerate([1, 5, 9])],
            "R3": stream("R3", 3, 0.5, r3)}


def block_costs(run):
    """Data cost of R2's blocks (first hop and intermediates) per period close."""
    led = run.ledger[run.ledger.kind.isin(["data", "intermediate"]) & (run.ledger.time >= 2)]
    return led.groupby(np.floor(led.time))["cost"].sum().to_dict(), led


@pytest.mark.parametrize("name", ["smj-e", "smj-h"])
def test_end_to_end_smj_sends_blocks_at_90_and_43(name):
    plan = make_plan(example_graph(), {"R1": 1, "R2": 2, "R3": 3}, 3, None, 4.0,
                     {"include_final": False}, name=name)
    run = run_algorithm(name, plan, example_tuples())
    costs, led = block_costs(run)
    assert costs == {2.0: 90.0, 3.0: 43.0}
    assert led[led.time < 3][["src", "dst"]].values.tolist() == [[2, 3], [3, 1]]
    filtered = run.metrics.query("metric == 'filtered'").groupby("node")["value"].sum()
    # period 0: R1's 7 and R3's 6 tuples (R2 is still empty); then ID 8, and IDs 5, 9
    assert filtered.to_dict() == {1: 7.0, 3: 6.0, 2: 3.0}


def test_6_lottery_with_zero_counters_routes_along_1_3_at_129():
    plan = make_plan(example_graph(), {"R1": 1, "R2": 2, "R3": 3}, 3, None, 4.0,
                     name="lottery")
    run = run_algorithm("lottery", plan, example_tuples())
    costs, led = block_costs(run)
    assert costs[2.0] == 129.0
    assert led[led.time < 3][["src", "dst"]].values.tolist() == [[2, 1], [1, 3]]
    assert costs[3.0] == 104.0     # ΔR'2: the counters still tie, so again [1, 3]
