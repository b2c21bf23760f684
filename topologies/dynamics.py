"""How the network changes over time: :class:`Dynamics`, the base of every kind
(:mod:`topologies.static`, :mod:`topologies.mobility`, :mod:`topologies.schedule`).

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


class Dynamics:
    """Base class: epochs plus a per-epoch graph builder.

    Subclasses pass their epochs to ``__init__`` and implement ``_build(index)``, which
    returns the (unfrozen) graph of epoch ``index``.

    Examples
    --------
    >>> from topologies.generators import line
    >>> from topologies.static import static_dynamics
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
