"""Gated operators (source 001, Fig. 7): an operator runs its code only while an upstream
operator runs without faults, to save the processing an unreliable input would waste.

::

    [trigger.qjoin]
    gate = { upstream = "R1", exception_rate_below = 2.0, interval = 1.0,
             silence = 1.0, while_shut = "buffer" }

- ``upstream``: the operator watched — a node id, or an operator's name (QJoin: a
  stream, meaning its source node). It must be one of the algorithm's operators.
- ``exception_rate_below``: the gate is open while the upstream's exceptions over the
  last ``interval`` number fewer than this per time unit.
- The upstream's exceptions: those it raises itself (its lost messages, its route
  changes, reported to the gated operator as ``gate_exception`` signals, over the
  network or free as ``[trigger] signal`` says), and those the gated operator attributes
  to it (a late tuple from it; with ``silence``, a ``peer_timeout`` at every poll while
  nothing has come from it for ``silence`` time units: a dead node raises nothing).
- ``while_shut``: what arrives while the gate is shut — ``buffer`` (evaluated in
  arrival order when it opens again; what is still held at the end is never evaluated)
  or ``drop`` (never evaluated).

:class:`Gate` counts ``evaluations`` (items evaluated), ``evaluations_skipped`` (items
dropped, or held at the end) and ``gate_closed_time``. The gate is looked at when an item
arrives and at every poll, so it opens and shuts at those instants.

>>> g = Gate(GateSpec(upstream=3, exception_rate_below=2.0, interval=1.0, silence=None,
...                   while_shut="drop"))
>>> g.admit(0.5, "a"), g.admit(1.0, "b")
(['a'], ['b'])
>>> g.exception("link_loss", 1.2); g.exception("no_route", 1.3)
>>> g.admit(1.4, "c"), g.is_open(1.4)      # two in the last unit: shut, "c" dropped
([], False)
>>> g.poll(2.4)                            # (1.4, 2.4] is quiet: open again
[]
>>> g.counts(3.0)                          # shut from 1.4 (when it was looked at) to 2.4
{'evaluations': 2, 'evaluations_skipped': 1, 'gate_closed_time': 1.0}
"""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

#: What happens to what arrives while the gate is shut.
WHILE_SHUT = ("buffer", "drop")
#: Message kind of an upstream operator's report of one of its exceptions.
REPORT = "gate_exception"
#: An operator's counts (summary keys): tuples evaluated, tuples a gate dropped or still
#: held at the end, and the time the gate was shut.
EVALUATION_KEYS = ("evaluations", "evaluations_skipped", "gate_closed_time")
_KEYS = {"upstream", "exception_rate_below", "interval", "silence", "while_shut"}


@dataclass(frozen=True)
class GateSpec:
    """A checked ``gate`` table (``upstream``: a node once the plan resolved it)."""

    upstream: int | str
    exception_rate_below: float
    interval: float = 1.0
    silence: float | None = None
    while_shut: str = "buffer"


def gate_spec(table, field: str) -> GateSpec | None:
    """Check a ``gate`` table (None: no gate); a problem is a one-line ``ValueError``
    naming the field.

    >>> gate_spec({"upstream": 3, "exception_rate_below": -1}, "trigger.qjoin.gate")
    Traceback (most recent call last):
    ...
    ValueError: trigger.qjoin.gate.exception_rate_below: expected a number >= 0, got -1
    """
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ValueError(f"{field}: expected a table {{upstream = ..., "
                         "exception_rate_below = ...}}")
    bad = sorted(set(table) - _KEYS)
    if bad:
        raise ValueError(f"{field}.{bad[0]}: unknown key; valid: {', '.join(sorted(_KEYS))}")
    for key in ("upstream", "exception_rate_below"):
        if key not in table:
            raise ValueError(f"{field}.{key}: a gate needs {key}")
    up = table["upstream"]
    if isinstance(up, bool) or not (isinstance(up, int) and up >= 0 or
                                    isinstance(up, str) and up):
        raise ValueError(f"{field}.upstream: expected a node id or an operator's name, "
                         f"got {up!r}")
    silence = table.get("silence")
    return GateSpec(
        upstream=up,
        exception_rate_below=_number(f"{field}.exception_rate_below",
                                     table["exception_rate_below"], positive=False),
        interval=_number(f"{field}.interval", table.get("interval", 1.0), positive=True),
        silence=None if silence is None else _number(f"{field}.silence", silence,
                                                     positive=True),
        while_shut=_while_shut(f"{field}.while_shut", table.get("while_shut", "buffer")))


def _number(field: str, value, positive: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value) or value < 0 or (positive and value == 0):
        raise ValueError(f"{field}: expected a number {'>' if positive else '>='} 0, "
                         f"got {value!r}")
    return float(value)


def _while_shut(field: str, value) -> str:
    if value not in WHILE_SHUT:
        raise ValueError(f"{field}: expected one of {', '.join(WHILE_SHUT)}, got {value!r}")
    return value


def resolve_upstream(gate: GateSpec, field: str, operators: dict) -> int:
    """The node of the gate's upstream operator, from ``operators`` (``{name: node}``
    of the algorithm's operators other than the gated one).

    >>> resolve_upstream(GateSpec("R2", 1.0), "g", {"R1": 4, "R2": 9})
    9
    >>> resolve_upstream(GateSpec(5, 1.0), "g", {"R1": 4, "R2": 9})
    Traceback (most recent call last):
    ...
    ValueError: g.upstream: node 5 is not an operator upstream of the gated one; valid: R1 (node 4), R2 (node 9)
    """
    if gate.upstream in operators:
        return operators[gate.upstream]
    if gate.upstream in operators.values() and not isinstance(gate.upstream, str):
        return gate.upstream
    what = f"node {gate.upstream}" if isinstance(gate.upstream, int) else repr(gate.upstream)
    valid = ", ".join(f"{name} (node {node})" for name, node in sorted(operators.items()))
    raise ValueError(f"{field}.upstream: {what} is not an operator upstream of the gated "
                     f"one; valid: {valid or 'none'}")


class Gate:
    """The gate of one operator (see the module docstring): the upstream's exceptions,
    whether it is open, what is held, and the counts."""

    def __init__(self, spec: GateSpec):
        self.spec = spec
        self._faults: list[float] = []       # the upstream's exceptions, sorted times
        self._heard = 0.0                    # when something last came from upstream
        self._shut_since: float | None = None
        self.closed_time = 0.0
        self.evaluations = 0
        self.skipped = 0
        self.held: list = []

    def exception(self, kind: str, t: float) -> None:
        """The upstream raised (or was charged with) an exception of ``kind`` at ``t``."""
        bisect.insort(self._faults, t)

    def heard(self, t: float) -> None:
        """Something arrived from the upstream at ``t``."""
        self._heard = t

    def is_open(self, t: float) -> bool:
        """Whether the upstream's exception rate over the last interval is below the
        threshold; keeps the time spent shut."""
        lo = bisect.bisect_right(self._faults, t - self.spec.interval)
        self._faults = self._faults[lo:]          # older ones are never looked at again
        n = bisect.bisect_right(self._faults, t)
        is_open = n / self.spec.interval < self.spec.exception_rate_below
        if is_open and self._shut_since is not None:
            self.closed_time += t - self._shut_since
            self._shut_since = None
        elif not is_open and self._shut_since is None:
            self._shut_since = t
        return is_open

    def admit(self, t: float, item) -> list:
        """An item arrived at ``t``: the items to evaluate now (those held first, in
        arrival order), or none while shut (``item`` held or dropped)."""
        if self.is_open(t):
            ready, self.held = self.held + [item], []
            self.evaluations += len(ready)
            return ready
        if self.spec.while_shut == "buffer":
            self.held.append(item)
        else:
            self.skipped += 1
        return []

    def poll(self, t: float) -> list:
        """A poll at ``t``: a ``peer_timeout`` if the upstream has been silent for
        ``silence``; the held items to evaluate if the gate is open."""
        if self.spec.silence is not None and t - self._heard >= self.spec.silence - 1e-12:
            self.exception("peer_timeout", t)
        if not self.is_open(t) or not self.held:
            return []
        ready, self.held = self.held, []
        self.evaluations += len(ready)
        return ready

    def counts(self, t: float) -> dict:
        """The counts as of ``t``, as if the run ended then: what is still held is
        counted as skipped (never evaluated)."""
        shut = 0.0 if self._shut_since is None else t - self._shut_since
        return {"evaluations": self.evaluations,
                "evaluations_skipped": self.skipped + len(self.held),
                "gate_closed_time": round(self.closed_time + shut, 9)}


class CountBook:
    """Records an operator's evaluation counts (:data:`EVALUATION_KEYS`) as metric rows:
    nothing before the run ends, then the counts at the end, then each change while
    tuples still in flight arrive (the drain). ``gate_closed_time`` keeps its value at
    the end of the run.

    >>> rows = []
    >>> ctx = type("Ctx", (), {"record": lambda self, m, v: rows.append((m, v))})()
    >>> book = CountBook()
    >>> book.record(ctx, {"evaluations": 3})            # the run has not ended
    >>> book.finished = True
    >>> book.record(ctx, {"evaluations": 3, "gate_closed_time": 1.5})
    >>> book.record(ctx, {"evaluations": 5, "gate_closed_time": 2.0})
    >>> rows
    [('evaluations', 3.0), ('gate_closed_time', 1.5), ('evaluations', 2.0)]
    """

    def __init__(self):
        self.finished = False
        self._recorded: dict = {}

    def record(self, ctx, counts: dict) -> None:
        if not self.finished:
            return
        for metric, value in counts.items():
            if metric == "gate_closed_time" and metric in self._recorded:
                continue
            delta = value - self._recorded.get(metric, 0)
            if delta or metric not in self._recorded:
                ctx.record(metric, float(delta))
                self._recorded[metric] = value
