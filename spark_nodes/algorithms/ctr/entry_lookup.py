"""CTR hosts that fetch the placement a route needs beyond its first hop as a lookup.

With ``routes = "carried"`` (the default, the source's source routing) a segment
travels with its whole route: every hop's hosts and the segments each probes there.
With ``routes = "lookup"`` the segment carries only its first hop; the rest of the
route — where the segments of the later probe streams live and who probes them, the
routing table's answer — stays at the diffusion node (:class:`RouteDesk`), and a host
that finished its hop-1 probe asks for it before it can send the partial results on
(docs/ALGORITHMS.md#plans-and-routes-as-lookups, :mod:`spark_nodes.algorithms.enrich.lookups`):

- a hop-1 host's probe is done and there is a next hop: a route in the host's cache
  (not expired, ``route_ttl`` after it arrived) serves at once; otherwise the partial
  results wait (their *stall*) for the reply to a request (kind ``lookup``), sent again
  every ``route_timeout`` while none came;
- ``route_fetch = "eager"`` asks as soon as the segment arrives (kind ``prefetch``),
  so the route is fetched while the probe may still wait for stored segments;
- later hops get the whole route with the partial results, as before.

The routes and the probes are the diffusion node's, exactly as when carried, so the
answer is the same; only when partial results move changes. The desk keeps every
route it made until the end of the run (a retried request must still find it).
Profile-driven prediction is not offered: the segment's arrival, the only earlier
signal, is what eager uses.

Examples
--------
>>> from spark_nodes.algorithms.ctr.ctr import Route
>>> r = Route(("R1", 3), ("R2", "R3"), (5,), (((5, (("R2", 2),)),), ((6, (("R3", 2),)),)))
>>> s = first_hop(r)
>>> s.hops, needs_rest(s), needs_rest(r)
((((5, (('R2', 2),)),),), True, False)
>>> rest_size(r, 0.25)
0.25
"""
from __future__ import annotations

from spark_nodes.algorithms.enrich.fetcher import (FetchOptions, Fetcher, fetch_options,
                                                   fetch_params)
from spark_nodes.algorithms.enrich.lookups import LookupReply, LookupRequest

#: ``routes``: carried by the segment (default) or fetched by the hop-1 hosts.
ROUTE_MODES = ("carried", "lookup")
PARAMS = fetch_params("routes", ROUTE_MODES, "route", ttl=2.0)


def route_options(name: str, p: dict) -> FetchOptions | None:
    """The checked options of algorithm ``name``'s params ``p`` (None: routes carried).

    >>> route_options("ctr", {"routes": "carried", "route_fetch": "later",
    ...                       "route_ttl": 2.0, "route_timeout": 1.0})
    Traceback (most recent call last):
    ...
    ValueError: params.ctr.route_fetch: expected one of on-demand, eager, got 'later'
    """
    return fetch_options(name, p, "routes", ROUTE_MODES, "route")


def first_hop(route):
    """The route as a segment carries it under ``routes = "lookup"``."""
    return route._replace(hops=route.hops[:1])


def needs_rest(route) -> bool:
    """Whether ``route`` lacks hops its probe sequence has (a route with no hops has
    nothing to probe, so it lacks nothing)."""
    return 0 < len(route.hops) < len(route.sequence)


def rest_size(route, unit: float) -> float:
    """Units of the hops after the first: an entry per (host, segment), at least one."""
    return max(1, sum(len(zs) for hop in route.hops[1:] for _, zs in hop)) * unit


class RouteDesk:
    """At the diffusion node: every route made, to answer hosts' requests."""

    def __init__(self):
        self.routes: dict[tuple, object] = {}

    def keep(self, route):
        """Remember ``route``; return what its segment carries."""
        self.routes[route.seg] = route
        return first_hop(route)

    def answer(self, ctx, req: LookupRequest, unit: float) -> None:
        route = self.routes[req.key]
        ctx.send(req.reply_to, "prefetch" if req.prefetch else "lookup",
                 LookupReply(req.key, route, req.prefetch, req.sent_at),
                 rest_size(route, unit))


class RouteFetcher:
    """At a host: the route fetches, keyed by segment. ``forward(ctx, route, hop,
    out)`` sends partial results on."""

    def __init__(self, opts: FetchOptions, diffusion: int, unit: float):
        self.eager = opts.fetch == "eager"
        self.diffusion = diffusion
        self.unit = unit
        self.f = Fetcher(opts.ttl, opts.timeout, ("host", "route_retry"))

    def arrived_segment(self, ctx, route) -> None:
        """A segment came with its first hop only: eager fetching asks now if this
        host probes at hop 1 (a host that only stores the segment needs no route)."""
        if self.eager and needs_rest(route) and ctx.node in dict(route.hops[0]) and \
                route.seg not in self.f.requested and self.f.cache.entry(route.seg) is None:
            ctx.record("prefetch", 1)
            self._ask(ctx, route.seg, True)

    def need(self, ctx, route, hop: int, out, forward) -> None:
        """Hop ``hop``'s probe made ``out``, which must go on along ``route``."""
        ctx.record("need", 1)
        full, _ = self.f.cached(ctx, route.seg)
        if full is not None:
            ctx.record("stall", 0.0)
            forward(ctx, full, hop, out)
        elif self.f.park(ctx, route.seg, (hop, out)):
            self._ask(ctx, route.seg, False)

    def _ask(self, ctx, seg, prefetch: bool) -> None:
        self.f.asked(ctx, seg)
        ctx.send(self.diffusion, "prefetch" if prefetch else "lookup",
                 LookupRequest(seg, ctx.node, prefetch, ctx.now), self.unit)

    def retry(self, ctx, seg) -> None:
        """A request's timeout: ask again if results still wait and no reply came."""
        if self.f.retry_due(ctx, seg):
            self._ask(ctx, seg, False)

    def arrived(self, ctx, reply: LookupReply, forward) -> None:
        """A route arrived: cache it and send on the results that waited for it."""
        for (hop, out), since in self.f.arrived(ctx, reply.key, reply.item, reply.prefetch):
            ctx.record("stall", ctx.now - since)
            forward(ctx, reply.item, hop, out)

    def held(self):
        """Partial results waiting for a route."""
        return [out for _, out in self.f.held()]
