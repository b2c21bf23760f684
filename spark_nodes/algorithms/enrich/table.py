"""The reference table as a served, changing data source: ``[enrich.table]``.

The enrichment pipeline's table (docs/ALGORITHMS.md#enrichment) is a node program that
takes time to answer and whose rows change:

- **service** (:class:`ServiceQueue`): ``servers`` requests are served at once, each for
  ``service_time``; the others wait in one FIFO queue. A burst of prefetches therefore
  delays the lookups behind it, which is what makes a wasted fetch cost time.
- **several tables** (``nodes``): the keys are split among them, key ``k`` held by
  ``nodes[k % len(nodes)]`` (:func:`table_for`).
- **updates** (:class:`RowClock`): every row is updated ``update_rate`` times per time
  unit, periodically, with a phase drawn per row from the run's seed; a cached row
  whose version is older than the table's when a tuple uses it is a *stale use*.
  ``invalidate = true``: the table pushes each update (kind ``update``) to the nodes it
  sent the row to within their cache's ``cache_ttl``.

Examples
--------
>>> check_enrich({"table": {"service_time": 0.05, "servers": 2}})["table"]["servers"]
2
>>> check_enrich({"table": {"service_time": -1}})
Traceback (most recent call last):
...
topologies.schema.FieldError: enrich.table.service_time: expected a number >= 0, got -1
>>> q = ServiceQueue(servers=1, service_time=0.5)
>>> [q.admit(now) for now in (0.0, 0.1, 2.0)]      # the second waits for the first
[0.5, 1.0, 2.5]
>>> rows = RowClock(rate=2.0, seed=1)
>>> [rows.version(3, t) for t in (0.0, 0.6, 1.1)] == [rows.version(3, 0.0) + i for i in (0, 1, 2)]
True
"""
from __future__ import annotations

import functools
import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from topologies.schema import Field, FieldError, check_table

#: ``[enrich.table]``: where the table is, how it serves, how its rows change.
TABLE_SCHEMA = {
    "nodes": Field("list", None, none=True,
                   doc="nodes holding the table, key k at nodes[k % count]; none: one "
                       "table at the algorithm's `table_node`"),
    "service_time": Field("number", 0.0, low=0,
                          doc="time one server takes to answer a request (0: at once)"),
    "servers": Field("integer", 1, low=1,
                     doc="requests served at once; the others wait in a FIFO queue"),
    "update_rate": Field("number", 0.0, low=0,
                         doc="updates of every row per time unit (periodic, phase drawn "
                             "per row from the seed); 0: rows never change"),
    "invalidate": Field("bool", False,
                        doc="push each update to the nodes sent the row within their "
                            "cache_ttl (kind `update`)"),
}
#: Mixed into the seed of the rows' update phases (the word "table" in ASCII).
PHASE_SALT = 0x7461626C65
#: ``[enrich]``: what the enrichment pipeline's environment holds besides the network.
ENRICH_SCHEMA = {
    "table": Field("table", {}, doc="the reference table (`[enrich.table]`, below)"),
}


def check_enrich(table: dict, where: str = "enrich") -> dict:
    """``[enrich]`` checked, its ``table`` too, defaults filled in (a
    :class:`~topologies.schema.FieldError` naming the field otherwise)."""
    clean = check_table(ENRICH_SCHEMA, table, where)
    clean["table"] = check_table(TABLE_SCHEMA, clean["table"], f"{where}.table")
    nodes = clean["table"]["nodes"]
    if nodes is not None and (not nodes or not all(
            isinstance(n, int) and not isinstance(n, bool) for n in nodes)):
        raise FieldError(f"{where}.table.nodes", f"expected a non-empty list of node ids, "
                         f"got {nodes!r}")
    return clean


@functools.lru_cache(maxsize=1 << 16)
def _phase(seed: int, key: int) -> float:
    # drawn once per (seed, key): a row's versions are asked at every use; the salt
    # keeps these draws apart from every other use of the run's seed
    return float(np.random.default_rng([seed, PHASE_SALT, key]).random())


def table_for(key, nodes: tuple) -> int:
    """The table node holding ``key``.

    >>> table_for(7, (4, 9)), table_for(8, (4, 9)), table_for(None, (4, 9))
    (9, 4, 4)
    """
    return nodes[0] if key is None else nodes[int(key) % len(nodes)]


@dataclass
class ServiceQueue:
    """``servers`` servers taking ``service_time`` each, one FIFO queue.

    With equal service times, giving each arrival the server that frees first is
    first-come first-served; :meth:`admit` returns when the request is done.
    """

    servers: int
    service_time: float
    _free: list = field(default_factory=list)        # heap of the servers' free times
    _done: list = field(default_factory=list)        # heap of admitted requests' ends

    def admit(self, now: float) -> float:
        """A request arrived at ``now``: the time its answer leaves."""
        if len(self._free) < self.servers:
            start = now
        else:
            start = max(now, heapq.heappop(self._free))
        done = start + self.service_time
        heapq.heappush(self._free, done)
        heapq.heappush(self._done, done)
        return done

    def in_system(self, now: float) -> int:
        """Requests admitted and not yet answered at ``now`` (queued or in service).

        >>> q = ServiceQueue(1, 1.0); _ = [q.admit(0.0) for _ in range(3)]
        >>> q.in_system(0.5), q.in_system(2.5), q.in_system(3.0)
        (3, 1, 0)
        """
        while self._done and self._done[0] <= now:
            heapq.heappop(self._done)
        return len(self._done)


@dataclass(frozen=True)
class RowClock:
    """The version of every row over time: row ``k`` is updated at times
    ``(n - phase_k) / rate`` for n = 1, 2, ..., ``phase_k`` uniform in [0, 1) drawn from
    ``(seed, k)`` (so every node computes the same versions, with no shared state)."""

    rate: float
    seed: int

    def phase(self, key) -> float:
        return _phase(self.seed, int(key or 0))

    def version(self, key, now: float) -> int:
        """Updates of row ``key`` up to ``now`` (0 while the rate is 0)."""
        if self.rate <= 0:
            return 0
        return int(math.floor(now * self.rate + self.phase(key)))

    def next_update(self, key, now: float) -> float:
        """The first time after ``now`` at which row ``key`` has a newer version
        (infinity while the rate is 0).

        >>> rows = RowClock(rate=4.0, seed=2)
        >>> t = rows.next_update(5, 1.0)
        >>> 1.0 < t <= 1.25 and rows.version(5, t) == rows.version(5, 1.0) + 1
        True
        """
        if self.rate <= 0:
            return math.inf
        v = self.version(key, now)
        t = (v + 1 - self.phase(key)) / self.rate
        while self.version(key, t) <= v:                 # rounding: step past the edge
            t = float(np.nextafter(t, math.inf))
        return max(t, float(np.nextafter(now, math.inf)))
