"""Trajectories, random waypoint and link epochs from movement."""
import networkx as nx
import numpy as np
import pytest

from topologies import (Topology, Trajectories, apply_link_cost, line, link_costs,
                        mobility_dynamics, random_geometric, random_waypoint)


def test_trajectories_validate_input():
    with pytest.raises(ValueError, match="non-decreasing times"):
        Trajectories({0: [(2, 0, 0), (1, 1, 1)]})
    with pytest.raises(ValueError, match="at least one waypoint"):
        Trajectories({0: []})
    with pytest.raises(ValueError, match="node 3 has no trajectory"):
        Trajectories({0: [(0, 0, 0)]}).position(3, 1.0)


def test_sample_matches_position():
    tr = random_waypoint(5, 20.0, (0.05, 0.1), 0.5, seed=9)
    times = np.linspace(0, 25, 11)
    grid = tr.sample(times)
    assert grid.shape == (11, 5, 2)
    for k, t in enumerate(times):
        for n in range(5):
            assert tuple(grid[k, n]) == pytest.approx(tr.position(n, t))


def test_random_waypoint_speeds_pauses_area_and_seed():
    tr = random_waypoint([3, 8], 200.0, (0.02, 0.04), 2.0, seed=1, area=(2.0, 1.0),
                         start={3: (0.5, 0.5)})
    assert tr.nodes == [3, 8]
    assert tr.waypoints(3)[0] == (0.0, 0.5, 0.5)
    for node in tr.nodes:
        points = np.array(tr.waypoints(node))
        assert points[-1, 0] >= 200.0
        assert (points[:, 1] <= 2.0).all() and (points[:, 2] <= 1.0).all()
        assert (points[:, 1:] >= 0).all()
        # legs alternate: move (speed within range), pause (2.0, no motion)
        steps = np.diff(points, axis=0)
        moves, pauses = steps[0::2], steps[1::2]
        speed = np.hypot(moves[:, 1], moves[:, 2]) / moves[:, 0]
        assert ((speed >= 0.02 - 1e-12) & (speed <= 0.04 + 1e-12)).all()
        np.testing.assert_allclose(pauses[:, 0], 2.0)
        np.testing.assert_allclose(pauses[:, 1:], 0.0)
    again = random_waypoint([3, 8], 200.0, (0.02, 0.04), 2.0, seed=1, area=(2.0, 1.0),
                            start={3: (0.5, 0.5)})
    assert again.waypoints(8) == tr.waypoints(8)
    other = random_waypoint([3, 8], 200.0, (0.02, 0.04), 2.0, seed=2, area=(2.0, 1.0))
    assert other.waypoints(8) != tr.waypoints(8)


@pytest.mark.parametrize("kwargs, message", [
    ({"speed": (0.0, 1.0)}, "speed: expected two numbers > 0"),
    ({"speed": (2.0, 1.0)}, "low <= high"),
    ({"pause": -1}, "pause: expected a number >= 0"),
    ({"duration": 0}, "duration: expected a number > 0"),
    ({"area": (1, 0)}, "area: expected two numbers > 0"),
    ({"seed": -3}, "seed: expected an int >= 0"),
])
def test_random_waypoint_rejects_bad_arguments(kwargs, message):
    args = {"nodes": 3, "duration": 10.0, "speed": (0.1, 0.2), "pause": 0.0, "seed": 1}
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        random_waypoint(**args)


def test_links_appear_and_vanish_at_sampled_epochs():
    # Node 1 leaves node 0 at speed 0.5 and comes back: in range (<= 1.2) while
    # x <= 1.2, i.e. t <= 0.4 on the way out and t >= 7.6 on the way back.
    topo = Topology(line(2).graph, defaults={"delay": 0.3})
    tr = Trajectories({1: [(0, 1, 0), (4, 3, 0), (8, 1, 0)]})
    dyn = mobility_dynamics(topo, tr, duration=10, resolution=1, radius=1.2,
                            link_cost="distance2")
    assert dyn.epochs == [0.0, 1.0, 8.0]      # back at x=1 from t=8 on: no change after
    assert dyn.snapshot(0.5).edges[0, 1]["cost"] == pytest.approx(1.0)
    assert dyn.snapshot(0.5).edges[0, 1]["delay"] == 0.01   # the topology's own link
    assert dyn.snapshot(4.0).number_of_edges() == 0
    assert dyn.snapshot(8.0).edges[0, 1]["cost"] == pytest.approx(1.0)
    assert dyn.snapshot(4.0).nodes[1]["pos"] == pytest.approx((1.5, 0.0))   # t=1
    assert all(a for _, a in dyn.snapshot(4.0).nodes(data="alive"))


def test_new_links_take_topology_defaults_and_costs_follow_model():
    g = nx.Graph()
    g.add_nodes_from([(0, {"pos": (0.0, 0.0)}), (1, {"pos": (0.5, 0.0)})])
    topo = Topology(g, defaults={"delay": 0.3, "loss": 0.1}, radius=0.6, link_cost="etx")
    dyn = mobility_dynamics(topo, Trajectories({}), duration=5)
    assert dyn.epochs == [0.0]          # nothing moves: one epoch
    attrs = dyn.snapshot(3).edges[0, 1]
    assert attrs["delay"] == 0.3 and attrs["loss"] == 0.1
    assert attrs["cost"] == pytest.approx(link_costs("etx", np.array([0.5]), 0.6)[0])


def test_node_events_drop_links_and_add_epochs():
    topo = line(3)
    dyn = mobility_dynamics(topo, Trajectories({}), duration=10, resolution=5, radius=1.0,
                            node_events=[(2.5, 1, False), (7.0, 1, True)])
    assert dyn.epochs == [0.0, 2.5, 7.0]
    down = dyn.snapshot(3.0)
    assert down.nodes[1]["alive"] is False and down.number_of_edges() == 0
    assert dyn.snapshot(7.0).number_of_edges() == 2


def test_node_liveness_from_a_schedule_file():
    from importlib.resources import files

    from topologies import read_schedule, read_topology
    data = files("topologies") / "data"
    topo = read_topology(data / "five_nodes.json")
    events = read_schedule(data / "five_nodes_schedule.csv", topo).node_events()
    assert events == [(8.0, 3, False), (12.0, 3, True)]
    dyn = mobility_dynamics(topo, Trajectories({}), duration=20, resolution=10,
                            node_events=events)
    assert dyn.epochs == [0.0, 8.0, 12.0]
    assert dyn.snapshot(9).degree(3) == 0 and dyn.snapshot(12).degree(3) == 3   # 0, 1 and 2 within 0.5


def test_mobility_errors():
    topo = line(3)
    with pytest.raises(ValueError, match="needs a radio range"):
        mobility_dynamics(topo, Trajectories({}), duration=5)
    with pytest.raises(ValueError, match="trajectory of node 9: not a node"):
        mobility_dynamics(topo, Trajectories({9: [(0, 0, 0)]}), duration=5, radius=1)
    no_pos = Topology(nx.Graph([(0, 1)]), radius=1.0)
    with pytest.raises(ValueError, match="node 1 has neither a trajectory nor a pos"):
        mobility_dynamics(no_pos, Trajectories({0: [(0, 0, 0)]}), duration=5)
    with pytest.raises(ValueError, match="resolution: expected a number > 0"):
        mobility_dynamics(topo, Trajectories({}), duration=5, radius=1, resolution=0)
    with pytest.raises(ValueError, match=r"node event \(1.0, 5\)"):
        mobility_dynamics(topo, Trajectories({}), duration=5, radius=1,
                          node_events=[(1.0, 5, False)])


def test_large_mobility_links_match_pairwise_distances():
    topo = apply_link_cost(random_geometric(200, 0.15, seed=1, max_attempts=1000), "distance")
    tr = random_waypoint(topo.nodes, 100.0, (0.005, 0.02), 1.0, seed=2, start=topo.positions)
    dyn = mobility_dynamics(topo, tr, duration=100.0, resolution=1.0)
    assert len(dyn.epochs) == 100
    t = dyn.epochs[57]
    snap = dyn.snapshot(t + 0.5)
    pos = tr.sample([t])[0]
    d = np.hypot(*(pos[:, None, :] - pos[None, :, :]).transpose(2, 0, 1))
    expected = {(i, j) for i, j in zip(*np.nonzero(np.triu(d <= 0.15, k=1)))}
    assert set(snap.edges) == expected
    u, v = next(iter(expected))
    assert snap.edges[u, v]["cost"] == pytest.approx(d[u, v])


def _epochs_sample_by_sample(topo, tr, duration, resolution, radius, model, radio, rng,
                             events):
    """mobility_dynamics's epochs as it found them before it took all samples at once:
    one pass per sample, Radio.links or geometric_edges on that sample's positions, a
    sample kept when its links, costs, liveness or bers differ from the last epoch's."""
    from topologies.generators import geometric_edges

    nodes = topo.nodes
    index = {node: k for k, node in enumerate(nodes)}
    times = np.unique(np.concatenate([np.arange(0.0, duration, resolution),
                                      [t for t, _, _ in events if t < duration]]))
    paths, moving = tr.sample(times), [index[n] for n in tr.nodes]
    alive, events, epochs, states = np.ones(len(nodes), bool), sorted(events), [], []
    for k, t in enumerate(times):
        for when, node, up in events:
            if when == t or (k and times[k - 1] < when < t):
                alive[index[node]] = up
        positions = np.array([topo.graph.nodes[n].get("pos", (0.0, 0.0)) for n in nodes],
                             dtype=float)
        positions[moving] = paths[k]
        if radio is not None:
            pairs, dist, bers = radio.links(positions, alive, rng)
        else:
            pairs, dist = geometric_edges(positions, radius)
            live = alive[pairs[:, 0]] & alive[pairs[:, 1]]
            pairs, dist, bers = pairs[live], dist[live], np.zeros(live.sum())
        state = (pairs, link_costs(model, dist, radius), alive.copy(), positions, bers,
                 dist * (radio.meters_per_unit if radio is not None else 1.0))
        if states and all(np.array_equal(state[i], states[-1][i]) for i in (0, 1, 2, 4)):
            continue
        epochs.append(float(t))
        states.append(state)
    return epochs, states


@pytest.mark.parametrize("block", [1 << 20, 7])
@pytest.mark.parametrize("case", ["unit_disk", "log_distance", "shadowed"])
def test_epochs_from_all_samples_at_once_equal_a_pass_per_sample(case, block, monkeypatch):
    # mobility_dynamics takes every sample in a few array operations (in blocks of
    # _BLOCK pair-samples, 7 here to cross many); its epochs must be the reference's to
    # the last bit: links, costs, liveness, positions, bers, lengths, shadowing draws
    import topologies.mobility as mobility
    from topologies.radio import Radio

    monkeypatch.setattr(mobility, "_BLOCK", block)
    topo = random_geometric(12, 0.4, seed=3, max_attempts=1000)
    tr = random_waypoint(range(9), 30.0, (0.01, 0.05), 1.0, seed=4, start=topo.positions)
    events = [(3.0, 2, False), (3.1, 10, False), (7.5, 2, True), (12.25, 10, True),
              (12.25, 10, False), (40.0, 1, False)]
    radio = {"unit_disk": None,
             "log_distance": Radio(meters_per_unit=200.0, sensitivity_dbm=-82.0),
             "shadowed": Radio(meters_per_unit=300.0, shadowing_db=4.0)}[case]
    model = "etx" if case != "log_distance" else "distance"
    radius = 0.3 if radio is None else radio.range_m() / radio.meters_per_unit
    dyn = mobility_dynamics(topo, tr, duration=20.0, resolution=0.25, radius=0.3,
                            link_cost=model, node_events=events, radio=radio, seed=11)
    epochs, states = _epochs_sample_by_sample(topo, tr, 20.0, 0.25, radius, model, radio,
                                              np.random.default_rng(11), events)
    assert 10 < len(epochs) and dyn.epochs == epochs
    for got, expected in zip(dyn._states, states):
        for a, b in zip(got, expected):
            assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
