"""Topology model and least-cost path matrices."""
import math
import pickle

import networkx as nx
import numpy as np
import pytest

from topologies import LINK_DEFAULTS, Topology, path_cost_matrix, static_dynamics


def diamond() -> nx.Graph:
    # 0 -1- 1 -1- 3 and 0 -5- 2 -1- 3, plus an isolated node 4.
    g = nx.Graph()
    g.add_edge(0, 1, cost=1.0)
    g.add_edge(1, 3, cost=1.0)
    g.add_edge(0, 2, cost=5.0)
    g.add_edge(2, 3, cost=1.0)
    g.add_node(4)
    return g


def test_path_cost_matrix_values_on_hand_made_graph():
    w = path_cost_matrix(diamond(), [0, 1, 2, 3, 4])
    expected = np.array([
        [0, 1, 3, 2, np.inf],
        [1, 0, 2, 1, np.inf],
        [3, 2, 0, 1, np.inf],
        [2, 1, 1, 0, np.inf],
        [np.inf, np.inf, np.inf, np.inf, 0]])
    np.testing.assert_array_equal(w, expected)


def test_path_cost_matrix_order_subset_and_weight_callable():
    topo = Topology(diamond())
    np.testing.assert_array_equal(path_cost_matrix(topo, [2, 0]), [[0, 3], [3, 0]])
    hops = path_cost_matrix(topo, [0, 3], weight=lambda u, v, a: 1)
    np.testing.assert_array_equal(hops, [[0, 2], [2, 0]])
    by_delay = path_cost_matrix(topo, [0, 3], weight="delay")
    assert by_delay[0, 1] == pytest.approx(0.02)


def test_path_cost_matrix_rejects_unknown_and_repeated_nodes():
    with pytest.raises(ValueError, match=r"nodes \[9\] are not in the graph"):
        path_cost_matrix(diamond(), [0, 9])
    with pytest.raises(ValueError, match="listed twice"):
        path_cost_matrix(diamond(), [0, 0])


def test_topology_fills_defaults_and_freezes():
    topo = Topology(diamond(), defaults={"delay": 0.5, "bandwidth": 100})
    attrs = topo.graph.edges[0, 1]
    assert attrs == {"cost": 1.0, "delay": 0.5, "jitter": 0.0, "bandwidth": 100.0,
                     "loss": 0.0}
    assert all(isinstance(v, float) for v in attrs.values())
    assert topo.nodes == [0, 1, 2, 3, 4]
    assert not topo.is_connected()
    with pytest.raises(nx.NetworkXError):
        topo.graph.add_edge(0, 4)
    assert LINK_DEFAULTS == {"cost": 1.0, "delay": 0.01, "jitter": 0.0,
                             "bandwidth": math.inf, "loss": 0.0}


@pytest.mark.parametrize("mutate, message", [
    (lambda g: g.add_edge(0, 1, cost=-1.0), r"link \(0, 1\): cost: expected a number >= 0"),
    (lambda g: g.add_edge(0, 1, loss=2.0), r"loss: expected a number >= 0 and <= 1"),
    (lambda g: g.add_edge(0, 1, cost="abc"), r"cost: expected a number >= 0, got 'abc'"),
    (lambda g: g.add_edge(0, 1, weight=3), r"unknown attribute\(s\) \['weight'\]"),
    (lambda g: g.add_node("a"), r"node id 'a': expected an integer"),
    (lambda g: g.add_node(1, pos=(0, "x")), r"node 1: pos: expected a position"),
    (lambda g: g.add_edge(2, 2), r"two different nodes"),
])
def test_topology_rejects_bad_graphs(mutate, message):
    g = diamond()
    mutate(g)
    with pytest.raises(ValueError, match=message):
        Topology(g)


def test_topology_rejects_bad_metadata():
    with pytest.raises(ValueError, match="unknown link attribute 'speed'"):
        Topology(diamond(), defaults={"speed": 3})
    with pytest.raises(ValueError, match="radius: expected a number > 0"):
        Topology(diamond(), radius=0)
    with pytest.raises(ValueError, match="link_cost: expected one of hop"):
        Topology(diamond(), link_cost="euclid")
    with pytest.raises(ValueError, match="undirected"):
        Topology(nx.DiGraph([(0, 1)]))


def test_topology_equality_and_pickle():
    a, b = Topology(diamond()), Topology(diamond())
    assert a == b
    assert pickle.loads(pickle.dumps(a)) == a
    assert Topology(diamond(), radius=0.3) != a
    g = diamond()
    g.edges[0, 1]["cost"] = 2.0
    assert Topology(g) != a


def test_static_dynamics_snapshot_is_cached_and_marks_nodes_alive():
    dyn = static_dynamics(Topology(diamond()))
    assert dyn.epochs == [0.0]
    snap = dyn.snapshot(0.0)
    assert snap is dyn.snapshot(1e9)
    assert dict(snap.nodes(data="alive")) == {n: True for n in range(5)}
    assert snap.edges[0, 2]["cost"] == 5.0
    with pytest.raises(ValueError, match="snapshot time: expected a number >= 0"):
        dyn.snapshot(-1.0)
    clone = pickle.loads(pickle.dumps(dyn))
    assert sorted(clone.snapshot(0).edges) == sorted(snap.edges)
