"""SMJ's periods ended by a window trigger (docs/ALGORITHMS.md#triggers-in-the-operators).

Under ``[trigger.<algorithm>]`` a period no longer ends every ``P``. The query node keeps
the period clock (:class:`PeriodClock`) and ends the current period at ``now`` when

- its own conditions fire (``at = "here"``: elapsed time, and the exceptions it observes
  — its messages lost); it sees no tuples, so conditions on tuples are measured at
  the sites;
- a site signals that its conditions fired (``at = "sources"``, :class:`SiteSignals`:
  the tuples of the node's streams and its messages lost), by a ``trigger`` control
  message over the network or, with ``signal = "free"``, at once;
- the run reaches ``duration - margin`` (the last period; counted as ``time``).

A signal that arrives within ``poll`` of the last close is absorbed: two sites that see
the same burst end one period, not two. The clock records ``window_fired:<kind>`` and
``period_close`` (value: the close) and announces the close to every site node (kind
``control``) with the :data:`ANNOUNCED` latest closes, so that one lost announcement is
repaired by the next. A site files the tuples entered before the close into the period,
closes its block and SMJ goes on as under the clock: synopses to the center, a new
filter and order. The exact answer follows the recorded closes
(:class:`~spark_nodes.algorithms.smj.semantics.FiredPeriods`).

>>> from spark_nodes.algorithms.triggers.spec import trigger_spec
>>> t = trigger_spec({"use": "burst", "burst": {"conditions": [
...     {"kind": "rate", "above": 8.0, "interval": 0.5, "at": "sources"},
...     {"kind": "time", "above": 3.0}]}}, "trigger.smj-h", streams=["R1", "R2"])
>>> clock = PeriodClock(t, sites=(4, 7), unit=0.25)
>>> clock.initiator.condition.parts[0].above, SiteSignals(t, 0, 0.25).initiator is None
(3.0, False)
"""
from __future__ import annotations

import math

from spark_nodes.algorithms.smj.semantics import FiredPeriods

#: Closes an announcement carries (the newest last): one lost announcement is repaired
#: by the next. Each close costs a synopsis entry; with 4 closes the announcements cost
#: more than the synopses themselves (triggers_bursty_reliable.toml).
ANNOUNCED = 2
#: Message kind of a site's signal (as QJoin's sources).
SIGNAL = "trigger"


class PeriodClock:
    """The query node's part: ends periods, records them and says what to announce.

    Parameters
    ----------
    trigger : TriggerSpec
    sites : tuple of int
        Nodes that hold a site (each gets every announcement).
    unit : float
        Size units of one close in an announcement (a synopsis entry).
    """

    def __init__(self, trigger, sites, unit: float):
        self.trigger = trigger
        self.initiator = trigger.initiator("here", keep=False)
        self.sites = tuple(sites)
        self.unit = unit
        self.periods = FiredPeriods()
        self.done = False

    def start(self, ctx, limit: float) -> None:
        ctx.set_timer(ctx.now + self.trigger.poll, ("clock", "poll"))
        ctx.set_timer(limit, ("clock", "last"))

    def poll(self, ctx) -> list[str]:
        """The kinds of the windows the clock's own conditions fire now."""
        if self.done:
            return []
        ctx.set_timer(ctx.now + self.trigger.poll, ("clock", "poll"))
        return [w.kind for w in self.initiator.poll(ctx.now)] \
            if self.initiator is not None else []

    def lost(self, ctx, reason: str) -> list[str]:
        if self.initiator is None or self.done:
            return []
        return [w.kind for w in self.initiator.exception(reason, ctx.now)]

    def end(self, ctx, kind: str, last: bool = False) -> tuple | None:
        """End the current period now (``kind``: what fired it; ``last``: the run's
        end). Returns the announcement to send to :attr:`sites`, or None (absorbed)."""
        closes = self.periods.closes
        previous = closes[-1] if closes else -math.inf
        if self.done or ctx.now - previous < self.trigger.poll - 1e-12:
            self.done = self.done or last
            return None
        self.done = last
        self.periods.learn(len(closes), ctx.now)
        ctx.record(f"window_fired:{kind}", 1)
        ctx.record("period_close", ctx.now)
        if self.initiator is not None:
            self.initiator.restart(ctx.now)
        recent = tuple(closes[-ANNOUNCED:])
        return ("period", len(closes) - len(recent), recent)


class SiteSignals:
    """A node's sites watching their own input (conditions ``at = "sources"``): every
    tuple, polls and the node's messages lost; a window that fires is signalled to the
    query node. The window restarts when a period end is learned."""

    def __init__(self, trigger, query_node: int, unit: float):
        self.trigger = trigger
        self.initiator = trigger.initiator("sources", keep=False)
        self.query_node = query_node
        self.unit = unit

    def start(self, ctx) -> None:
        if self.initiator is not None:
            ctx.set_timer(ctx.now + self.trigger.poll, ("sites", "poll"))

    def on_tuple(self, ctx, tup) -> None:
        if self.initiator is not None:
            self._signal(ctx, self.initiator.tuple(tup.stream, None, ctx.now))

    def on_timer(self, ctx) -> None:
        self._signal(ctx, self.initiator.poll(ctx.now))
        ctx.set_timer(ctx.now + self.trigger.poll, ("sites", "poll"))

    def exception(self, ctx, kind: str) -> None:
        """A fault at this node's sites: a message lost (``kind`` its reason) or a plan
        request that timed out (``peer_timeout``)."""
        if self.initiator is not None:
            self._signal(ctx, self.initiator.exception(kind, ctx.now))

    def restart(self, t: float) -> None:
        if self.initiator is not None:
            self.initiator.restart(t)

    def _signal(self, ctx, fired) -> None:
        for window in fired:
            ctx.signal(self.query_node, SIGNAL, ("signal", window.kind), self.unit,
                       free=self.trigger.signal == "free")
