"""topologies package.

What the network is: graphs with link attributes, generators, files, link-cost models,
mobility and link schedules, all turned into :class:`Dynamics` (epochs + snapshots).

- model: :class:`Topology`, :data:`LINK_DEFAULTS`, :func:`path_cost_matrix`,
  :func:`topology_settings` (the resolved settings a run uses)
- generators: :func:`line`, :func:`grid`, :func:`random_geometric`, :func:`complete`
- link costs: :func:`apply_link_cost`, :func:`link_costs` (hop, distance, distance2, etx)
- files: :func:`read_topology` / :func:`write_topology` (JSON node-link, GraphML),
  :func:`parse_topology` (a :class:`TopologyFile`: what a file states, before a spec's),
  :func:`read_ns2_trace` (ns-2 / BonnMotion movements), :func:`read_schedule` (CSV)
- dynamics: :class:`Dynamics`, :func:`static_dynamics`, :func:`mobility_dynamics`,
  :func:`schedule_dynamics`, :class:`Trajectories`, :func:`random_waypoint`
- motion models (ns-3's): :func:`gauss_markov`, :func:`random_walk`,
  :func:`random_direction`; group mobility (BonnMotion's RPGM): :func:`rpgm`
- radio: :class:`Radio` (log-distance path loss, bit and frame errors),
  :data:`RADIO_SCHEMA`
- specs: :func:`topology_from_spec`, :func:`dynamics_from_spec`, :func:`radio_from_spec`,
  :func:`node_outages`
- errors: :class:`TopologyFileError`, :class:`DisconnectedTopologyError` (ValueErrors)

Examples
--------
>>> import topologies
>>> topo = topologies.grid(3, 3)
>>> topologies.path_cost_matrix(topo, [0, 8]).tolist()
[[0.0, 4.0], [4.0, 0.0]]
"""
from topologies.dynamics import Dynamics
from topologies.errors import DisconnectedTopologyError, TopologyFileError
from topologies.files import parse_topology, read_topology, write_topology
from topologies.generators import complete, grid, line, random_geometric
from topologies.link_cost import ETX_MAX_LOSS, apply_link_cost, link_costs
from topologies.mobility import Trajectories, mobility_dynamics, random_waypoint
from topologies.group_motion import GroupTrajectories, rpgm
from topologies.motion_models import gauss_markov, random_direction, random_walk
from topologies.model import (LINK_COST_MODELS, LINK_DEFAULTS, Topology, path_cost_matrix,
                              topology_settings)
from topologies.ns2 import loads_ns2_trace, read_ns2_trace
from topologies.radio import RADIO_SCHEMA, Radio
from topologies.schedule import Schedule, loads_schedule, read_schedule, schedule_dynamics
from topologies.static import StaticDynamics, static_dynamics
from topologies.spec import (dynamics_from_spec, node_outages, radio_from_spec,
                             topology_from_spec)
from topologies.topology_file import TopologyFile

__all__ = [
    "Dynamics", "StaticDynamics", "static_dynamics", "DisconnectedTopologyError",
    "TopologyFileError", "parse_topology", "read_topology", "write_topology",
    "TopologyFile", "complete", "grid", "line", "random_geometric", "ETX_MAX_LOSS",
    "apply_link_cost", "link_costs", "Trajectories", "mobility_dynamics",
    "random_waypoint", "LINK_COST_MODELS", "LINK_DEFAULTS", "Topology", "path_cost_matrix",
    "topology_settings", "loads_ns2_trace", "read_ns2_trace", "Schedule", "loads_schedule",
    "read_schedule", "schedule_dynamics", "dynamics_from_spec", "node_outages",
    "topology_from_spec", "Radio", "RADIO_SCHEMA", "radio_from_spec", "gauss_markov",
    "random_walk", "random_direction", "rpgm", "GroupTrajectories",
]
