"""Routing views: least path costs, next hops, dead nodes, epochs."""
import math

import networkx as nx
import numpy as np
import pytest

from emulator.network import NetView, Network


def diamond():
    g = nx.Graph()
    g.add_edge(0, 1, cost=1.0)
    g.add_edge(1, 3, cost=1.0)
    g.add_edge(0, 2, cost=1.0)
    g.add_edge(2, 3, cost=3.0)
    g.add_edge(3, 4, cost=2.0)
    return g


def test_costs_and_paths_match_dijkstra():
    g = diamond()
    view = NetView.from_graph(g)
    for u in g:
        lengths = nx.single_source_dijkstra_path_length(g, u, weight="cost")
        for v, d in lengths.items():
            assert view.cost(u, v) == pytest.approx(d)
    assert view.path(0, 4) == [0, 1, 3, 4]
    # 2-0-1-3-4 and 2-3-4 both cost 5: ties go to the neighbour with the smaller id
    assert view.path(2, 4) == [2, 0, 1, 3, 4] and view.hops(2, 4) == 4
    np.testing.assert_allclose(view.cost_matrix([0, 4]), [[0, 4], [4, 0]])


def test_dead_node_neither_forwards_nor_is_reachable():
    g = diamond()
    g.nodes[1]["alive"] = False
    view = NetView.from_graph(g)
    assert view.path(0, 4) == [0, 2, 3, 4]
    assert view.cost(0, 4) == 6.0
    assert math.isinf(view.cost(0, 1))
    assert view.next_hop(0, 1) is None and view.path(0, 1) == []


def test_link_down_and_partition():
    g = diamond()
    g.edges[3, 4]["up"] = False
    view = NetView.from_graph(g)
    assert math.isinf(view.cost(0, 4)) and view.hops(0, 4) == -1


def test_center_minimises_sum_of_costs():
    # the SMJ worked example: W12 = 18, W23 = 20, W13 = 25 -> center is site 2
    g = nx.Graph()
    g.add_edge(1, 2, cost=18.0)
    g.add_edge(2, 3, cost=20.0)
    g.add_edge(1, 3, cost=25.0)
    assert NetView.from_graph(g).center([1, 2, 3]) == 2


class TwoEpochs:
    epochs = [0.0, 5.0]

    def snapshot(self, t):
        g = diamond()
        if t >= 5.0:
            g.edges[0, 1]["cost"] = 10.0
        return g


def test_network_switches_views_at_epochs():
    net = Network(TwoEpochs())
    assert net.view(4.99).path(0, 3) == [0, 1, 3]
    assert net.view(5.0).path(0, 3) == [0, 2, 3]
    assert net.view(7.0) is net.view(5.5)
    assert net.next_change(1.0) == 5.0 and math.isinf(net.next_change(5.0))


@pytest.mark.parametrize("seed", range(12))
def test_compiled_trees_equal_networkx_trees_ties_included(seed):
    """Next hops and costs from SciPy's Dijkstra equal networkx's on random graphs,
    with integer costs (many equal-cost paths: the smaller node id must win) and with
    real costs, dead nodes and down links."""
    import random

    rng = random.Random(seed)
    g = nx.gnm_random_graph(40, 90, seed=seed)
    for u, v in g.edges:
        g.edges[u, v]["cost"] = float(rng.randint(1, 3)) if seed % 2 else rng.random() + 0.1
        g.edges[u, v]["up"] = rng.random() > 0.1
    for u in g.nodes:
        g.nodes[u]["alive"] = rng.random() > 0.05
    view = NetView.from_graph(g)
    assert view._compiled
    for dst in view.nodes:
        assert view._compiled_tree(dst) == view._networkx_tree(dst)


@pytest.mark.parametrize("seed", range(6))
def test_compiled_trees_equal_networkx_trees_where_sums_differ_in_the_last_bit(seed):
    """Costs of 0.1, 0.2 and 0.3 (0.1 + 0.2 is 0.30000000000000004): paths whose costs
    are equal on paper and not in floats, which the next-hop rule must tell apart
    exactly as networkx's sums do (the compiled search keeps its candidates as it
    relaxes, comparing the same sums)."""
    import random

    rng = random.Random(seed)
    g = nx.gnm_random_graph(60, 180, seed=seed)
    for u, v in g.edges:
        g.edges[u, v]["cost"] = rng.choice([0.1, 0.2, 0.3])
    view = NetView.from_graph(g)
    assert view._compiled
    tables = [view._compiled_tree(dst) for dst in view.nodes]
    assert tables == [view._networkx_tree(dst) for dst in view.nodes]


@pytest.mark.parametrize("seed", range(3))
def test_views_from_link_tables_equal_views_from_snapshots(seed):
    """A mobility epoch read as arrays gives the same nodes, liveness, links, attributes
    and trees as its networkx snapshot, new links (default attributes) and dead nodes
    included."""
    import topologies

    topo = topologies.topology_from_spec(
        {"generator": "random_geometric", "nodes": 40, "radius": 0.3, "link_cost": "distance",
         "delay": 0.02, "jitter": 0.001, "bandwidth": 5000.0}, seed=seed)
    moves = topologies.random_waypoint(topo.nodes, 6.0, (0.05, 0.1), 0.5, seed=seed,
                                       start=topo.positions)
    dyn = topologies.mobility_dynamics(topo, moves, duration=6.0, resolution=1.0,
                                       node_events=[(2.0, 3, False), (4.0, 3, True)])
    for k, t in enumerate(dyn.epochs):
        fast, slow = NetView(t, *dyn.link_table(k)), NetView.from_graph(dyn.snapshot(t), t)
        assert fast.nodes == slow.nodes
        for u in fast.nodes:
            assert fast.alive(u) == slow.alive(u)
            assert fast.neighbors(u) == slow.neighbors(u)
            assert [fast.link(u, v) for v in fast.neighbors(u)] == \
                [slow.link(u, v) for v in slow.neighbors(u)]
        for dst in fast.nodes:
            assert fast._compiled_tree(dst) == slow._networkx_tree(dst)


def test_network_keeps_only_the_views_used_last():
    net = Network(TwoEpochs())
    first = net.view(1.0)
    net.keep = 1
    net.view(6.0)
    assert net.view(1.0) is not first and net.view(1.0).path(0, 3) == first.path(0, 3)


def test_a_pickled_view_ships_its_links_and_routes_the_same():
    import pickle

    view = NetView.from_graph(diamond())
    before = {(u, v): view.next_hop(u, v) for u in view.nodes for v in view.nodes}
    copy = pickle.loads(pickle.dumps(view))
    assert copy._routing is None and not copy._tables
    assert {(u, v): copy.next_hop(u, v) for u in view.nodes for v in view.nodes} == before
    assert copy.link(0, 1) == view.link(0, 1) and copy.cost(2, 4) == view.cost(2, 4)


def mobile_dynamics(seed: int, nodes: int = 40, duration: float = 6.0):
    """A random geometric network moving by random waypoint, one node down for a while."""
    import topologies

    topo = topologies.topology_from_spec(
        {"generator": "random_geometric", "nodes": nodes, "radius": 0.3,
         "link_cost": "distance", "delay": 0.02, "bandwidth": 5000.0}, seed=seed)
    moves = topologies.random_waypoint(topo.nodes, duration, (0.05, 0.1), 0.5, seed=seed,
                                       start=topo.positions)
    return topo, topologies.mobility_dynamics(topo, moves, duration=duration, resolution=1.0,
                                              node_events=[(2.0, 3, False), (4.0, 3, True)])


@pytest.mark.parametrize("seed", range(6))
def test_all_next_hops_equal_the_trees_built_on_demand(seed):
    """One Dijkstra call for every destination gives, row by row, the tables built one
    destination at a time: on mobility epochs (real costs, a dead node) and on graphs
    with integer costs (equal-cost paths everywhere: the tie rule must hold)."""
    from emulator.network import all_next_hops

    _, dyn = mobile_dynamics(seed)
    views = [NetView(t, *dyn.link_table(k)) for k, t in enumerate(dyn.epochs)]
    rng = np.random.default_rng(seed)
    g = nx.gnm_random_graph(50, 150, seed=seed)
    for u, v in g.edges:
        g.edges[u, v]["cost"] = float(rng.integers(1, 4))
    views.append(NetView.from_graph(g))
    for view in views:
        tables = all_next_hops(*view.routing_links())
        assert tables.shape == (len(view.nodes), len(view.nodes))
        for d, dst in enumerate(view.nodes):
            assert tables[d].tolist() == view.route(dst)


def test_a_view_not_routed_compiled_has_no_routing_links():
    g = diamond()
    g.edges[0, 1]["cost"] = 0.0
    assert NetView.from_graph(g).routing_links() is None


@pytest.mark.parametrize("seed", range(2))
def test_prefetched_networks_route_like_lazy_ones(seed):
    """A network prefetching its trees in worker processes gives every epoch the same
    next hops and costs as one building them on demand, whatever order the epochs are
    visited in (skipped epochs, going back after a view was dropped)."""
    _, dyn = mobile_dynamics(seed, nodes=30, duration=8.0)
    lazy, ahead = Network(dyn), Network(dyn, keep=2, prefetch=True)
    prefetched = 0
    try:
        for t in (0.0, 0.5, 1.2, 4.7, 5.1, 0.3, 7.9, 2.0):
            a, b = lazy.view(t), ahead.view(t)
            for dst in a.nodes:
                assert b.route(dst) == a.route(dst)
                assert b.next_hops_towards(dst) == a.next_hops_towards(dst)
            assert b.cost_matrix(b.nodes[:5]).tolist() == a.cost_matrix(a.nodes[:5]).tolist()
            prefetched += isinstance(b._prefetched, np.ndarray)
    finally:
        ahead.close()
    # epochs 0, 1, 4, 5 and 7 come from the workers (2 and 6 were skipped and
    # cancelled or computed here, epoch 0 again after its view was dropped)
    assert prefetched >= 4


@pytest.mark.parametrize("workers", [1, 3])
def test_prefetched_tables_are_the_same_whatever_the_number_of_workers(workers):
    """Epochs computed by one worker or spread over several give each view the tables
    built on demand."""
    from emulator.network import TreePrefetch
    _, dyn = mobile_dynamics(3, nodes=25, duration=6.0)
    lazy, network = Network(dyn), Network(dyn)
    prefetch = TreePrefetch(network, workers=workers)
    try:
        assert prefetch.ahead >= workers + 1
        for k in range(len(network.epochs)):
            view, plain = prefetch.view(k), lazy.view(network.epochs[k])
            tables = view.prefetched_routes()
            assert tables is not None
            for dst in plain.nodes:
                assert view.route_array(dst).tolist() == plain.route_array(dst).tolist()
    finally:
        prefetch.close()


def test_a_node_with_more_links_than_the_search_holds_is_routed_by_networkx():
    """The compiled search keeps a node's links in room for as many as there are nodes;
    a self-loop on a complete graph gives node 0 more (the loop counts both ways), so
    that view is routed by networkx, and gets the same next hops."""
    g = nx.complete_graph(4)
    nx.set_edge_attributes(g, 1.0, "cost")
    g.add_edge(0, 0, cost=1.0)
    view = NetView.from_graph(g)
    assert not view._compiled
    assert view.path(1, 3) == [1, 3] and view.path(0, 2) == [0, 2]
