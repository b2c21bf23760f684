"""Generators: sizes, connectivity, determinism under a seed, cost ranges."""
import networkx as nx
import numpy as np
import pytest

from topologies import DisconnectedTopologyError, complete, grid, line, random_geometric


def test_line_and_grid_shapes_and_positions():
    topo = line(5)
    assert topo.nodes == [0, 1, 2, 3, 4]
    assert sorted(topo.graph.edges) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert topo.graph.nodes[4]["pos"] == (4.0, 0.0)
    g = grid(3, 4)
    assert g.graph.number_of_nodes() == 12
    assert g.graph.number_of_edges() == 3 * 3 + 2 * 4
    assert g.graph.nodes[7]["pos"] == (3.0, 1.0)   # row 1, column 3
    assert set(g.graph[5]) == {1, 4, 6, 9}
    assert nx.is_connected(g.graph)
    assert line(1).graph.number_of_edges() == 0


def test_generators_take_link_defaults():
    topo = grid(2, 2, defaults={"delay": 0.2, "loss": 0.1})
    assert {d for _, _, d in topo.graph.edges(data="delay")} == {0.2}
    assert {x for _, _, x in topo.graph.edges(data="loss")} == {0.1}


@pytest.mark.parametrize("call, message", [
    (lambda: line(0), r"n: expected an integer >= 1, got 0"),
    (lambda: grid(2, 1.5), r"cols: expected an integer >= 1, got 1.5"),
    (lambda: random_geometric(5, 0, seed=1), r"radius: expected a number > 0"),
    (lambda: complete(3, (5, 2), seed=1), r"cost_range\[1\]: expected an integer >= 5"),
    (lambda: complete(3, seed=None), r"seed: expected an int >= 0"),
])
def test_generators_reject_bad_arguments(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_random_geometric_connected_deterministic_and_in_unit_square():
    topo = random_geometric(40, 0.3, seed=11)
    assert len(topo.nodes) == 40 and topo.is_connected() and topo.radius == 0.3
    pos = np.array([topo.graph.nodes[n]["pos"] for n in topo.nodes])
    assert ((pos >= 0) & (pos <= 1)).all()
    for u, v in topo.graph.edges:
        assert np.hypot(*(pos[u] - pos[v])) <= 0.3
    # Every pair within range is linked.
    d = np.hypot(*(pos[:, None, :] - pos[None, :, :]).transpose(2, 0, 1))
    assert topo.graph.number_of_edges() == int(((d <= 0.3).sum() - 40) / 2)
    assert random_geometric(40, 0.3, seed=11) == topo
    assert random_geometric(40, 0.3, seed=12) != topo
    rng = np.random.default_rng(11)
    assert random_geometric(40, 0.3, seed=rng) == topo


def test_random_geometric_disconnected_error_names_arguments():
    with pytest.raises(DisconnectedTopologyError) as info:
        random_geometric(50, 0.01, seed=1, max_attempts=3)
    err = info.value
    assert isinstance(err, ValueError)
    assert (err.n, err.radius, err.attempts) == (50, 0.01, 3)
    assert "n=50" in str(err) and "radius=0.01" in str(err) and "3 attempts" in str(err)


def test_complete_costs_are_integers_in_range_and_seeded():
    topo = complete(12, (2, 5), seed=3)
    assert topo.graph.number_of_edges() == 66
    costs = np.array([c for _, _, c in topo.graph.edges(data="cost")])
    assert ((costs >= 2) & (costs <= 5)).all()
    assert (costs == np.round(costs)).all()
    assert set(costs) == {2.0, 3.0, 4.0, 5.0}   # 66 draws hit every value
    assert complete(12, (2, 5), seed=3) == topo
    assert complete(12, (2, 5), seed=4) != topo
    assert {c for _, _, c in complete(4, (7, 7), seed=0).graph.edges(data="cost")} == {7.0}
