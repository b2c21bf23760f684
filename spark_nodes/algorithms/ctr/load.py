"""Host load for least-loaded-first (LLF) host choice [source: docs/ALGORITHMS.md#host-load].

For host ``v``: ``w = ω1·Φ_cpu + ω2·Φ_mem + ω3·Φ_bw`` with ``Φ_R = used_R / capacity_R``
and ``Σω = 1``. What "used" means here (the testbed's definitions):

- ``cpu``: join probes per time unit the host measured in its last report interval (a
  probe = one candidate tuple compared with a partial group);
- ``mem``: tuples the host buffered at its last report, plus the tuples the diffusion
  node sent it since that report (reports lag; without this the diffusion node would
  send every segment to the host that looked idle in the last report);
- ``bw``: data units the host received per time unit in its last interval, plus the
  units sent to it since that report divided by the interval.

Examples
--------
>>> b = LoadBoard([1, 2], weights=(0.0, 1.0, 0.0), capacity=(1.0, 10.0, 1.0), interval=1.0)
>>> b.report(1, probes_rate=0.0, tuples=5, units_rate=0.0)
>>> b.sent(2, tuples=2, units=2.0)
>>> b.load(1), b.load(2), b.least_loaded([1, 2])
(0.5, 0.2, 2)
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence


def check_weights(weights: Sequence[float], field: str = "weights") -> tuple[float, float, float]:
    """Validate ``[ω1, ω2, ω3]``: three numbers in [0, 1] summing to 1.

    >>> check_weights([0.2, 0.3, 0.5])
    (0.2, 0.3, 0.5)
    >>> check_weights([1, 1, 0])
    Traceback (most recent call last):
    ...
    ValueError: weights: expected three weights in [0, 1] summing to 1, got [1, 1, 0]
    """
    ok = (len(weights) == 3 and all(isinstance(w, (int, float)) and 0 <= w <= 1
                                     for w in weights)
          and math.isclose(sum(weights), 1.0, abs_tol=1e-9))
    if not ok:
        raise ValueError(f"{field}: expected three weights in [0, 1] summing to 1, "
                         f"got {list(weights)!r}")
    return tuple(float(w) for w in weights)


class LoadBoard:
    """The diffusion node's view of every host's composite load.

    Parameters
    ----------
    hosts : iterable of int
    weights : (ω1, ω2, ω3)
    capacity : (probes per time unit, tuples, units per time unit)
    interval : float
        The hosts' report interval (turns units sent since a report into a rate).
    """

    def __init__(self, hosts: Iterable[int], weights, capacity, interval: float):
        self.hosts = sorted(hosts)
        self.weights = check_weights(weights)
        if len(capacity) != 3 or not all(c > 0 for c in capacity):
            raise ValueError(f"capacity: expected three positive numbers, got {capacity!r}")
        self.capacity = tuple(float(c) for c in capacity)
        self.interval = float(interval)
        self._reported = {h: (0.0, 0.0, 0.0) for h in self.hosts}
        self._since = {h: [0.0, 0.0] for h in self.hosts}   # tuples, units since report

    def report(self, host: int, probes_rate: float, tuples: float, units_rate: float) -> None:
        """A host's measured load (replaces what was sent to it since the last one)."""
        self._reported[host] = (float(probes_rate), float(tuples), float(units_rate))
        self._since[host] = [0.0, 0.0]

    def sent(self, host: int, tuples: float, units: float) -> None:
        """The diffusion node sent ``tuples`` (``units`` data units) to ``host``."""
        s = self._since[host]
        s[0] += tuples
        s[1] += units

    def load(self, host: int) -> float:
        """Composite load ``w`` of ``host``."""
        cpu, mem, bw = self._reported[host]
        extra_tuples, extra_units = self._since[host]
        w1, w2, w3 = self.weights
        c_cpu, c_mem, c_bw = self.capacity
        return (w1 * cpu / c_cpu + w2 * (mem + extra_tuples) / c_mem
                + w3 * (bw + extra_units / self.interval) / c_bw)

    def least_loaded(self, candidates: Iterable[int]) -> int:
        """The candidate with the lowest load (ties: lowest node id)."""
        return min(candidates, key=lambda h: (self.load(h), h))

    def imbalance(self) -> float:
        """``max(w) / mean(w)`` over all hosts (1.0 when all are idle)."""
        loads = [self.load(h) for h in self.hosts]
        mean = sum(loads) / len(loads)
        return max(loads) / mean if mean > 0 else 1.0
