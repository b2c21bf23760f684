"""Link-cost models from distances."""
import networkx as nx
import numpy as np
import pytest

from topologies import ETX_MAX_LOSS, Topology, apply_link_cost, complete, line, link_costs


def test_model_values():
    d = np.array([0.0, 0.1, 0.2, 0.4])
    np.testing.assert_allclose(link_costs("hop", d), [1, 1, 1, 1])
    np.testing.assert_allclose(link_costs("distance", d), d)
    np.testing.assert_allclose(link_costs("distance2", d), [0, 0.01, 0.04, 0.16])
    loss = np.minimum((d / 0.4) ** 4, ETX_MAX_LOSS)
    np.testing.assert_allclose(link_costs("etx", d, radius=0.4), 1 / (1 - loss) ** 2)
    assert link_costs("etx", np.array([0.2]), radius=0.4)[0] == pytest.approx(1 / (15 / 16) ** 2)
    assert link_costs("etx", np.array([0.4]), radius=0.4)[0] == pytest.approx(100.0)


def test_etx_grows_with_distance():
    costs = link_costs("etx", np.linspace(0, 1, 11), radius=1.0)
    assert (np.diff(costs) >= 0).all() and costs[0] == 1.0


def test_apply_link_cost_on_graph_and_topology():
    g = nx.Graph()
    g.add_node(0, pos=(0.0, 0.0))
    g.add_node(1, pos=(0.3, 0.4))
    g.add_edge(0, 1, cost=9.0)
    out = apply_link_cost(g, "distance2")
    assert out.edges[0, 1]["cost"] == pytest.approx(0.25)
    assert g.edges[0, 1]["cost"] == 9.0            # input untouched
    topo = apply_link_cost(Topology(g), "etx", radius=1.0)
    assert isinstance(topo, Topology)
    assert (topo.link_cost, topo.radius) == ("etx", 1.0)
    assert topo.graph.edges[0, 1]["cost"] == pytest.approx(1 / (1 - 0.5 ** 4) ** 2)
    assert apply_link_cost(line(3), "distance").graph.edges[1, 2]["cost"] == 1.0


def test_apply_link_cost_errors():
    with pytest.raises(ValueError, match="unknown link cost model 'cheap'"):
        apply_link_cost(line(3), "cheap")
    with pytest.raises(ValueError, match="'etx' needs the radio range"):
        apply_link_cost(line(3), "etx")
    with pytest.raises(ValueError, match="needs node positions; node 0 has no pos"):
        apply_link_cost(complete(3, seed=1), "distance")
    assert {c for *_, c in apply_link_cost(complete(3, seed=1), "hop")
            .graph.edges(data="cost")} == {1.0}
