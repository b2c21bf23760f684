"""An ATR host's own windows, its siblings' signals and its gate (source 001, Figs. 5-7).

ATR's hosts are siblings in the source's sense (Fig. 7: operators 710-725 all take
their tuples from 730 and send to 705): each takes segments from the diffusion node and
sends its results to the fusion node. ``[trigger.atr]`` reaches them in three ways:

- conditions measured ``at = "hosts"``: each host watches what it receives (tuples per
  stream, its own lost messages) and holds the tuples until its window fires; then it
  joins them, in arrival order (metric ``host_window:<kind>``);
- conditions measured ``at = "siblings"``: each host watches the same things for the
  *other* hosts, and when the condition fires it signals them (kind ``trigger``, over
  the network or free as ``[trigger] signal`` says; metric ``sibling_signal:<kind>``);
  a host that is signalled joins what its window holds (``host_window:sibling``). A host
  whose tuples wait for its siblings' signals is triggered on an operator that is not
  upstream of it, the source's Fig. 7;
- a ``gate`` (:mod:`spark_nodes.algorithms.triggers.gate`) whose upstream is the
  diffusion node (every host is gated) or one host (its siblings are gated): a gated
  host joins a tuple only while the watched operator's exceptions stay below the rate;
  the gated hosts hear of the watched operator's exceptions (kind ``gate_exception``):
  the diffusion node reports its lost parts and the late tuples it drops; a watched
  host reports its lost results, load reports and signals, and the diffusion node the
  parts for it that were lost (exceptions attributed to it, as a lost message is to the
  node it was for: a dead host raises nothing itself).

The run's end is every host's last window: what a window holds then is joined (what
a gate holds is not, and counts as skipped: the host's ``evaluations_skipped``).

>>> from spark_nodes.algorithms.triggers.spec import trigger_spec
>>> spec = trigger_spec({"use": "w", "w": {"conditions": [
...     {"kind": "count", "above": 3, "at": "hosts"}]}}, "trigger.atr", ["R1", "R2"],
...     places={"hosts": ("count",)})
>>> rows, sent = [], []
>>> ctx = type("Ctx", (), {"now": 1.0, "node": 5,
...     "record": lambda self, m, v: rows.append((m, v)),
...     "signal": lambda self, *a, **k: sent.append(a)})()
>>> hw = HostWindows(spec, node=5, hosts=(5, 6), diffusion=2, signal_units=0.25)
>>> tup = type("T", (), {"stream": "R1", "size": 1.0})()
>>> hw.arrive(ctx, [("b0", tup), ("b0", tup)])          # held: the window has two
([], [])
>>> ready, dropped = hw.arrive(ctx, [("b1", tup)])      # the third fires it
>>> len(ready), rows
(3, [('host_window:count', 1)])
"""
from __future__ import annotations

from spark_nodes.algorithms.triggers.gate import REPORT, Gate

#: Message kind of a sibling's window signal.
SIGNAL = "trigger"
#: Kinds a host sends (its lost messages are the host's exceptions).
HOST_SENDS = ("result", "report", SIGNAL)


def gated_hosts(gate, hosts, diffusion: int) -> tuple:
    """The hosts a gate stands at: every host when it watches the diffusion node, the
    other hosts when it watches one host (its siblings); none without a gate.

    >>> from spark_nodes.algorithms.triggers.gate import GateSpec
    >>> gated_hosts(GateSpec(2, 1.0), (5, 6, 7), diffusion=2)
    (5, 6, 7)
    >>> gated_hosts(GateSpec(6, 1.0), (5, 6, 7), diffusion=2)
    (5, 7)
    """
    if gate is None:
        return ()
    if gate.upstream == diffusion:
        return tuple(hosts)
    return tuple(h for h in hosts if h != gate.upstream)


class HostWindows:
    """One ATR host's windows, signals and gate (see the module docstring).

    ``arrive``, ``poll``, ``signalled`` and ``finish`` return the items (``(batch,
    tuple)``) to join now, in arrival order; ``arrive`` also the items a gate dropped.
    """

    def __init__(self, trigger, node: int, hosts, diffusion: int, signal_units: float):
        self.node = node
        self.siblings = tuple(h for h in hosts if h != node)
        self.free = trigger.signal == "free"
        self.signal_units = signal_units
        self.own = trigger.initiator("hosts")
        self.for_siblings = trigger.initiator("siblings")
        gate = trigger.gate
        self.gate = Gate(gate) if node in gated_hosts(gate, hosts, diffusion) else None
        self.watches_diffusion = gate is not None and gate.upstream == diffusion
        # the host a gate watches reports its exceptions to the gated ones
        self.report_to = gated_hosts(gate, hosts, diffusion) \
            if gate is not None and gate.upstream == node and node != diffusion else ()
        self.windowed = self.own is not None or self.for_siblings is not None
        self.poll_every = trigger.poll if self.windowed or self.gate is not None else None
        self.holding = self.windowed  # False from the run's end: the drain joins at once
        self.window: list = []       # (batch, tuple) waiting for this host's window

    @property
    def listens_to_losses(self) -> bool:
        return self.windowed or bool(self.report_to)

    def arrive(self, ctx, items: list) -> tuple[list, list]:
        """A part's items arrived (from the diffusion node): ``(to join now, dropped)``."""
        fired_own, fired_siblings = [], []
        for _, tup in items:
            if self.own is not None:
                fired_own += self.own.tuple(tup.stream, None, ctx.now)
            if self.for_siblings is not None:
                fired_siblings += self.for_siblings.tuple(tup.stream, None, ctx.now)
        admitted, dropped = items, []
        if self.gate is not None:
            if self.watches_diffusion:
                self.gate.heard(ctx.now)
            admitted = []
            for item in items:
                skipped = self.gate.skipped
                admitted += self.gate.admit(ctx.now, item)
                if self.gate.skipped > skipped:
                    dropped.append(item)
        return self._take(admitted) + self._fire(ctx, fired_own, fired_siblings), dropped

    def exception(self, ctx, kind: str, origin) -> list:
        """A fault observed here (a lost message): told to the initiators, reported to
        the hosts gated on this one; the items a window it fires releases."""
        fired_own = self.own.exception(kind, ctx.now, origin) if self.own else []
        fired_siblings = self.for_siblings.exception(kind, ctx.now, origin) \
            if self.for_siblings else []
        for host in self.report_to:
            ctx.signal(host, REPORT, kind, self.signal_units, free=self.free)
        return self._fire(ctx, fired_own, fired_siblings)

    def reported(self, ctx, kind: str) -> None:
        """The watched operator reported an exception of ``kind``."""
        if self.gate is None:
            raise ValueError(f"host {ctx.node}: an exception report, but this host has no "
                             "gate")
        self.gate.exception(kind, ctx.now)

    def signalled(self, ctx, kind: str) -> list:
        """A sibling's condition fired: this host's window fires."""
        if not self.windowed:
            raise ValueError(f"host {ctx.node}: a sibling's window signal, but this host "
                             "has no window")
        ctx.record("host_window:sibling", 1)
        return self._release()

    def poll(self, ctx) -> list:
        """Time-based conditions, the gate's silence and reopening."""
        fired_own = self.own.poll(ctx.now) if self.own is not None else []
        fired_siblings = self.for_siblings.poll(ctx.now) \
            if self.for_siblings is not None else []
        ready = self._fire(ctx, fired_own, fired_siblings)
        if self.gate is not None:
            ready += self._take(self.gate.poll(ctx.now))
        return ready

    def finish(self) -> list:
        """The run's end closes the last window; from now on what arrives is joined at
        once (the drain)."""
        self.holding = False
        return self._release()

    def counts(self, now: float) -> dict:
        """The gate's counts as of ``now`` (none without a gate)."""
        return self.gate.counts(now) if self.gate is not None else {}

    def held(self) -> list:
        """The items waiting for a window or for the gate to open."""
        return self.window + (self.gate.held if self.gate is not None else [])

    def _take(self, items: list) -> list:
        if not self.holding:
            return list(items)
        self.window += items
        return []

    def _release(self) -> list:
        ready, self.window = self.window, []
        return ready

    def _fire(self, ctx, fired_own, fired_siblings) -> list:
        ready = []
        for window in fired_own:
            ctx.record(f"host_window:{window.kind}", 1)
            ready += self._release()
        for window in fired_siblings:
            ctx.record(f"sibling_signal:{window.kind}", 1)
            for host in self.siblings:
                ctx.signal(host, SIGNAL, window.kind, self.signal_units, free=self.free)
        return ready
