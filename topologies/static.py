"""A network that never changes: :class:`StaticDynamics` (one epoch, the topology's own
links) and :func:`static_dynamics`, which puts a topology under a radio (the links from
the positions, with nobody moving: :func:`~topologies.mobility.mobility_dynamics`).
"""
from __future__ import annotations

import networkx as nx

from topologies.dynamics import Dynamics, set_lengths
from topologies.mobility import Trajectories, mobility_dynamics
from topologies.model import Topology
from topologies.radio import check_positions, radio_from_table


class StaticDynamics(Dynamics):
    """A topology that never changes: one epoch, all nodes alive. A link between two
    nodes with positions gets ``length_m``: their distance times ``meters_per_unit``."""

    def __init__(self, topo: Topology, meters_per_unit: float = 1.0):
        super().__init__([0.0])
        self.topology = topo
        self.meters_per_unit = meters_per_unit

    def with_radio(self, radio, seed) -> Dynamics:
        """The same topology under ``radio`` (a ``Radio`` or a ``[radio]`` table);
        ``seed`` draws its shadowing."""
        return static_dynamics(self.topology, radio=radio, seed=seed)

    def _build(self, index: int) -> nx.Graph:
        graph = nx.Graph(self.topology.graph)
        nx.set_node_attributes(graph, True, "alive")
        set_lengths(graph, self.meters_per_unit)
        return graph


def static_dynamics(topo: Topology, *, radio=None, seed=None) -> Dynamics:
    """Dynamics of a network that never changes.

    ``radio``: a :class:`~topologies.radio.Radio` or a ``[radio]`` table (none: the unit
    disk, the topology's own links). Under ``log_distance`` the radio links the nodes
    from their positions, each link with its bit error rate, and ``seed`` draws the
    shadowing once (the one epoch): :func:`mobility_dynamics` with nobody moving.

    >>> from topologies.generators import line
    >>> dyn = static_dynamics(line(4), radio={"model": "log_distance",
    ...                                       "meters_per_unit": 100})
    >>> sorted(dyn.snapshot(0).edges)        # the range is 1.95 units
    [(0, 1), (1, 2), (2, 3)]
    >>> static_dynamics(line(4), radio={"meters_per_unit": 100}).snapshot(0).edges[0, 1]
    {'cost': 1.0, 'delay': 0.01, 'jitter': 0.0, 'bandwidth': inf, 'loss': 0.0, 'length_m': 100.0}
    """
    radio = radio_from_table(radio)
    if radio.model == "unit_disk":
        return StaticDynamics(topo, radio.meters_per_unit)
    check_positions(radio, topo.nodes, topo.positions)
    return mobility_dynamics(topo, Trajectories({}), duration=1.0, resolution=1.0,
                             radio=radio, seed=seed)
