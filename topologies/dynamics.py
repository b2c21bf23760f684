"""How the network changes over time: :class:`Dynamics` and the static case.

A ``Dynamics`` is a piecewise-constant sequence of graphs. ``epochs`` lists the times at
which something changes (first ``0.0``); ``snapshot(t)`` is the graph valid at ``t``:
every node with ``alive=True/False`` (and ``pos`` where known), and only the links that
are up between live nodes, with their current attributes. Links of a dead node are left
out, so routing on a snapshot never goes through it.

Snapshots are built once per epoch, cached and frozen (``networkx.freeze``), so calling
``snapshot`` again is a dictionary lookup after a bisection.
"""
from __future__ import annotations

import math
import numbers
from bisect import bisect_right
from collections.abc import Sequence

import networkx as nx

from topologies.model import Topology


class Dynamics:
    """Base class: epochs plus a per-epoch graph builder.

    Subclasses pass their epochs to ``__init__`` and implement ``_build(index)``, which
    returns the (unfrozen) graph of epoch ``index``.

    Examples
    --------
    >>> from topologies.generators import line
    >>> dyn = static_dynamics(line(3))
    >>> dyn.epochs
    [0.0]
    >>> snap = dyn.snapshot(12.5)
    >>> sorted(snap.edges), snap.nodes[0]["alive"]
    ([(0, 1), (1, 2)], True)
    >>> dyn.snapshot(12.5) is snap
    True
    """

    def __init__(self, epochs: Sequence[float]):
        epochs = [float(e) for e in epochs]
        if not epochs or epochs[0] != 0.0:
            raise ValueError(f"dynamics epochs: expected a list starting at 0.0, got "
                             f"{epochs[:3]}")
        if any(b <= a for a, b in zip(epochs, epochs[1:])):
            raise ValueError("dynamics epochs: expected strictly increasing times")
        self._epochs = epochs
        self._cache: dict[int, nx.Graph] = {}

    @property
    def epochs(self) -> list[float]:
        """Times at which the network changes, sorted, the first being ``0.0``."""
        return list(self._epochs)

    def epoch_index(self, t: float) -> int:
        """Index of the epoch in force at time ``t`` (``t >= 0``)."""
        if not (isinstance(t, numbers.Real) and not isinstance(t, bool) and t >= 0):
            raise ValueError(f"snapshot time: expected a number >= 0, got {t!r}")
        return bisect_right(self._epochs, t) - 1

    def snapshot(self, t: float) -> nx.Graph:
        """The frozen graph valid at time ``t`` (see the module docstring)."""
        index = self.epoch_index(t)
        graph = self._cache.get(index)
        if graph is None:
            graph = nx.freeze(self._build(index))
            self._cache[index] = graph
        return graph

    def _build(self, index: int) -> nx.Graph:
        raise NotImplementedError

    def __getstate__(self):
        # Snapshots are rebuilt on demand; do not ship them (e.g. to Spark workers).
        state = dict(self.__dict__)
        state["_cache"] = {}
        return state

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self._epochs)} epochs)"


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


def set_lengths(graph: nx.Graph, meters_per_unit: float) -> None:
    """Give every link of ``graph`` between two nodes with a ``pos`` its ``length_m``:
    their distance times ``meters_per_unit`` (the radio's scale). At one metre a unit
    the graph is left as it is: a routing view takes a missing ``length_m`` from the
    positions (:meth:`emulator.network.NetView.from_graph`), the same number."""
    if meters_per_unit == 1.0:
        return
    where = graph.nodes(data="pos")
    for u, v, attrs in graph.edges(data=True):
        if where[u] is not None and where[v] is not None:
            attrs["length_m"] = math.dist(where[u], where[v]) * meters_per_unit


def static_dynamics(topo: Topology, *, radio=None, seed=None) -> Dynamics:
    """Dynamics of a network that never changes.

    ``radio``: a :class:`~topologies.radio.Radio` or a ``[radio]`` table (none: the unit
    disk, the topology's own links). Under ``log_distance`` the radio links the nodes
    from their positions, each link with its bit error rate, and ``seed`` draws the
    shadowing once (the one epoch): :func:`~topologies.mobility.mobility_dynamics` with
    nobody moving.

    >>> from topologies.generators import line
    >>> dyn = static_dynamics(line(4), radio={"model": "log_distance",
    ...                                       "meters_per_unit": 100})
    >>> sorted(dyn.snapshot(0).edges)        # the range is 1.95 units
    [(0, 1), (1, 2), (2, 3)]
    >>> static_dynamics(line(4), radio={"meters_per_unit": 100}).snapshot(0).edges[0, 1]
    {'cost': 1.0, 'delay': 0.01, 'jitter': 0.0, 'bandwidth': inf, 'loss': 0.0, 'length_m': 100.0}
    """
    from topologies.radio import check_positions, radio_from_table

    radio = radio_from_table(radio)
    if radio.model == "unit_disk":
        return StaticDynamics(topo, radio.meters_per_unit)
    from topologies.mobility import Trajectories, mobility_dynamics

    check_positions(radio, topo.nodes, topo.positions)
    return mobility_dynamics(topo, Trajectories({}), duration=1.0, resolution=1.0,
                             radio=radio, seed=seed)
