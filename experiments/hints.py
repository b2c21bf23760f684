"""What a run's data traffic says about its figures: messages lost for want of a route,
or still waiting for one at the end, and the likely fix.

A routing protocol's tables start empty: OLSR needs a few HELLO and TC intervals before
it has a route, AODV a discovery per destination. Messages sent meanwhile are lost as
``no_route`` (OLSR, Babel) or wait in a route queue (AODV), and the run's recall counts
that as the algorithm's loss. :func:`traffic_hints` names it, with the fix: measure
after ``[run] warmup``, or check ``routing.seconds_per_unit`` when it makes the
protocol's timers long against the run.

Example
-------
>>> fates = Fates(sent=200, delivered=40, drops={"no_route": 150, "ttl": 2})
>>> print(traffic_hints(fates, Timers("olsr", 5.0, 30.0, 0.0))[0])  # doctest: +NORMALIZE_WHITESPACE
150 of 200 data messages sent across the network (75 %) were lost for want of a route
(no_route): olsr's routes were not ready; measure after them with [run] warmup (its
slowest timer, tc_interval, is 5 time units: a few of them, e.g. 15)
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

#: A share of the messages sent at which the hints speak up.
NOTABLE = 0.05
#: A flow's first wait for a route, as a share of the measured run, that is named.
LONG_WAIT = 0.1
#: The timers that pace a protocol's first routes, slowest last (RFC names; RPL's
#: downward routes wait for DelayDAO at each hop).
PACING_TIMERS = ("hello_interval", "tc_interval", "update_interval", "dao_delay")


@dataclass(frozen=True)
class Fates:
    """What became of the data messages sent across the network (after the warm-up):
    delivered, dropped by reason, and the rest, still in flight or waiting for a route
    when the run ended."""

    sent: int
    delivered: int
    drops: dict = field(default_factory=dict)
    #: the mean wait of a flow's first packet for a route (NaN: none measured)
    first_wait: float = math.nan

    @property
    def dropped(self) -> int:
        return sum(self.drops.values())

    @property
    def unresolved(self) -> int:
        return max(self.sent - self.delivered - self.dropped, 0)

    @classmethod
    def of(cls, network: dict) -> "Fates | None":
        """From a backend's network figures (``sent``, ``delivered``,
        ``drops_by_reason``); None for a backend without them."""
        if "sent" not in network or "drops_by_reason" not in network:
            return None
        return cls(network["sent"], network["delivered"], dict(network["drops_by_reason"]),
                   float(network.get("route_discovery_latency_mean", math.nan)))

    def text(self) -> str:
        """``"of 20 data messages sent across the network: 12 delivered, 6 lost
        (no_route 6), 2 still in flight or waiting for a route at the end"``."""
        lost = ", ".join(f"{r} {n}" for r, n in sorted(self.drops.items()) if n)
        return (f"of {self.sent} data messages sent across the network: {self.delivered} "
                f"delivered, {self.dropped} lost{f' ({lost})' if lost else ''}, "
                f"{self.unresolved} still in flight or waiting for a route at the end")


@dataclass(frozen=True)
class Timers:
    """The routing a run used, its slowest pacing timer (time units), the run's
    measured span and its warm-up."""

    routing: str
    slowest: float
    span: float
    warmup: float
    slowest_name: str = "tc_interval"
    seconds_per_unit: float = 1.0

    @classmethod
    def of(cls, spec: dict) -> "Timers":
        """The timers of a resolved spec's ``network.routing`` (NaN for the oracle)."""
        from emulator.routing.params import resolve

        routing, run = spec["network"]["routing"], spec["run"]
        span, warmup = run["duration"] - run["warmup"], run["warmup"]
        if routing == "oracle":
            return cls(routing, math.nan, span, warmup, "")
        params = resolve(routing, spec.get("routing"))
        name = max((k for k in PACING_TIMERS if k in params), key=params.get)
        return cls(routing, params[name], span, warmup, name,
                   spec.get("routing", {}).get("seconds_per_unit", 1.0))


def traffic_hints(fates: Fates, timers: Timers, deaths: int = 0,
                  first_death: float = math.nan) -> list[str]:
    """One line for a run whose losses are mostly ``no_route`` (at least
    :data:`NOTABLE` of the messages sent), one for a run that ended with that share
    still in flight or waiting for a route, one for flows whose first packet waited
    :data:`LONG_WAIT` of the run for a route (without a warm-up); each names the likely
    fix. ``deaths`` nodes whose batteries ran out (the first at ``first_death``) are the
    likelier cause of missing routes than the protocol's start.

    >>> traffic_hints(Fates(100, 40, {"no_route": 60}), Timers("rpl", 1.0, 50.0, 10.0),
    ...               deaths=12, first_death=21.5)[0][-95:]
    '12 nodes ran out of energy during the run (the first at t = 21.5), and routes through them went'

    >>> traffic_hints(Fates(10, 10, {}, first_wait=4.0), Timers("aodv", 1.0, 30.0, 0.0))[0][:75]
    "a flow's first packet waited 4 time units for a route on average (13 % of t"
    """
    if fates.sent == 0:
        return []
    hints = []
    no_route = fates.drops.get("no_route", 0)
    if no_route * 2 > fates.dropped and no_route >= NOTABLE * fates.sent:
        hints.append(f"{no_route} of {fates.sent} data messages sent across the network "
                     f"({100 * no_route / fates.sent:.0f} %) were lost for want of a route "
                     f"(no_route): {_cause(timers, deaths, first_death)}")
    if fates.unresolved >= NOTABLE * fates.sent and fates.unresolved > 0:
        hints.append(f"{fates.unresolved} of {fates.sent} data messages sent across the "
                     f"network ({100 * fates.unresolved / fates.sent:.0f} %) were still in "
                     f"flight or waiting for a route at the end: "
                     f"{_cause(timers, deaths, first_death)}")
    # a whole-run figure: after a warm-up, the first waits fell in it
    if timers.warmup == 0 and fates.first_wait > LONG_WAIT * timers.span:
        hints.append(f"a flow's first packet waited {fates.first_wait:.3g} time units for a "
                     f"route on average ({100 * fates.first_wait / timers.span:.0f} % of the "
                     f"measured run): {_cause(timers)}")
    return hints


def _cause(timers: Timers, deaths: int = 0, first_death: float = math.nan) -> str:
    """Why routes were missing, and what to change."""
    if deaths > 0:
        return (f"{deaths} nodes ran out of energy during the run (the first at t = "
                f"{first_death:g}), and routes through them went")
    if timers.routing == "oracle":
        return ("the network was cut at those times (topology, mobility or dead nodes): "
                "the oracle routes at once wherever a path exists")
    slow = f"its slowest timer, {timers.slowest_name}, is {timers.slowest:g} time units"
    if timers.slowest * 3 > timers.span:
        return (f"{timers.routing}'s timers are long against the run ({slow}, the "
                f"measured run {timers.span:g}): routing.seconds_per_unit = "
                f"{timers.seconds_per_unit:g} makes the RFC's seconds that many time "
                "units; check it, or give the run time to converge ([run] warmup, "
                "run.duration)")
    if timers.warmup > 0:
        return (f"{timers.routing}'s routes were not ready or broke; [run] warmup = "
                f"{timers.warmup:g} may be short ({slow})")
    return (f"{timers.routing}'s routes were not ready; measure after them with [run] "
            f"warmup ({slow}: a few of them, e.g. {3 * timers.slowest:g})")
