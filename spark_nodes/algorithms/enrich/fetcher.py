"""The demand side of a lookup, shared by every operator that fetches remote items.

A :class:`Fetcher` lives in a node program (so in Spark state on the spark runtime):
a :class:`~spark_nodes.algorithms.enrich.lookups.Cache` with expiry, the items that wait for
a key (each with the time it began waiting: its stall ends when the reply arrives), and the
requests in flight with their retry timers. The program sends the request messages
itself (what a request carries and where it goes is the operator's); the fetcher does
the bookkeeping and records the metrics :mod:`.lookup_summary` reads (``need`` is the
operator's: it knows what a need is).

:func:`fetch_params` and :func:`fetch_options` give an operator its spec options: a
switch whose first value is today's behaviour and whose second fetches, plus
``<what>_fetch`` (``on-demand`` | ``eager``), ``<what>_ttl`` and ``<what>_timeout``.

Examples
--------
>>> sorted(fetch_params("routes", ("carried", "lookup"), "route", ttl=2.0))
['route_fetch', 'route_timeout', 'route_ttl', 'routes']
>>> p = {"routes": "lookup", "route_fetch": "eager", "route_ttl": 2.0, "route_timeout": 1.0}
>>> fetch_options("ctr", p, "routes", ("carried", "lookup"), "route")
FetchOptions(fetch='eager', ttl=2.0, timeout=1.0)
>>> fetch_options("ctr", {**p, "route_ttl": -1.0}, "routes", ("carried", "lookup"), "route")
Traceback (most recent call last):
...
ValueError: params.ctr.route_ttl: expected a number >= 0 (or inf), got -1.0
"""
from __future__ import annotations

from dataclasses import dataclass

from spark_nodes.algorithms.enrich.lookups import Cache
from spark_nodes.algorithms.registry import Param, check_range

FETCH_MODES = ("on-demand", "eager")


@dataclass(frozen=True)
class FetchOptions:
    """How an operator fetches: ``fetch`` mode, cache ``ttl``, request ``timeout``."""

    fetch: str
    ttl: float
    timeout: float


def fetch_params(switch: str, modes: tuple[str, str], what: str, ttl: float) -> dict:
    """The spec options of an operator that may fetch its ``what`` (see the module
    docstring); ``modes[0]`` is the default, ``modes[1]`` fetches."""
    on = f"{switch} = '{modes[1]}'"
    return {
        switch: Param((str,), modes[0], f"'{modes[0]}' (as the source) or '{modes[1]}' "
                      f"(fetched as a lookup, docs/ALGORITHMS.md#plans-and-routes-as-lookups)", choices=tuple(modes)),
        f"{what}_fetch": Param((str,), "on-demand", f"{on}: 'on-demand' (when a need finds "
                               "nothing cached) or 'eager' (as soon as the need is known)",
                               choices=FETCH_MODES),
        f"{what}_ttl": Param((float,), ttl, f"{on}: time units a fetched {what} stays cached "
                             "for later needs (0: every need fetches its own)", low=0,
                             allow_inf=True),
        f"{what}_timeout": Param((float,), 1.0, f"{on}: a request with no reply by then is "
                                 "sent again", low=0, low_open=True),
    }


def fetch_options(name: str, p: dict, switch: str, modes: tuple[str, str],
                  what: str) -> FetchOptions | None:
    """The checked options of algorithm ``name``'s params ``p``; None when the switch
    keeps the default behaviour. Bad values raise ``params.<name>.<field>: ...``, checked
    against the ranges :func:`fetch_params` declares (which do not depend on ``ttl``)."""
    for key, param in fetch_params(switch, modes, what, ttl=0.0).items():
        check_range(name, key, param, p[key])
    if p[switch] == modes[0]:
        return None
    return FetchOptions(p[f"{what}_fetch"], float(p[f"{what}_ttl"]),
                        float(p[f"{what}_timeout"]))


class Fetcher:
    """Cache, waiting items and requests in flight of one node (module docstring).

    ``retry_tag``: the timer tag a request's timeout fires with, ``retry_tag + (key,)``.
    """

    def __init__(self, ttl: float, timeout: float, retry_tag: tuple = ("retry",),
                 capacity: int | None = None):
        self.cache = Cache(ttl, capacity)
        self.timeout = float(timeout)
        self.retry_tag = tuple(retry_tag)
        self.waiting: dict = {}          # key -> [(item, since)]
        self.requested: dict = {}        # key -> when its latest request left

    def cached(self, ctx, key):
        """``(value, served)`` of a fresh cached ``key`` (``served``: ``"prefetch"`` or
        ``"cache"``), recording a prefetched value's use; ``(None, None)`` on a miss."""
        entry = self.cache.entry(key)
        first_use = entry is not None and entry.prefetched and not entry.used
        value = self.cache.get(key, ctx.now)
        if value is None:
            return None, None
        if entry.prefetched:
            ctx.record("served_by_prefetch", 1)
        if first_use:
            ctx.record("prefetch_used", 1)
        return value, "prefetch" if entry.prefetched else "cache"

    def park(self, ctx, key, item) -> bool:
        """Let ``item`` wait for ``key``; True when no request is in flight for it (the
        caller then sends one on demand: counted as a ``lookup``)."""
        self.waiting.setdefault(key, []).append((item, ctx.now))
        if key in self.requested:
            return False
        ctx.record("lookup", 1)
        return True

    def asked(self, ctx, key, timer: bool = True) -> None:
        """A request for ``key`` left now; its timeout fires ``retry_tag + (key,)``."""
        self.requested[key] = ctx.now
        if timer:
            ctx.set_timer(ctx.now + self.timeout, self.retry_tag + (key,))

    def retry_due(self, ctx, key) -> bool:
        """At a timeout: whether items still wait for ``key`` with no reply since the
        latest request (an earlier request's timer does nothing); counted."""
        due = bool(self.waiting.get(key)) and key in self.requested and \
            ctx.now - self.requested[key] >= self.timeout - 1e-9
        if due:
            ctx.record("lookup_retry", 1)
        return due

    def arrived(self, ctx, key, value, prefetch: bool, settles: bool = True,
                version: int = 0) -> list:
        """A reply brought ``value`` (at ``version``): cache it and return the
        ``(item, since)`` that waited for it (the caller serves them: their stall is
        ``now - since``). ``settles``: the reply answers the request in flight (not an
        unrelated prefetch addressed here). Items a prefetch serves on arrival count as
        ``served_by_prefetch`` as much as those it serves from the cache: the row came
        ahead of the on-demand reply, whichever waited longer."""
        if prefetch:
            ctx.record("prefetch_arrived", 1)
        if settles:
            self.requested.pop(key, None)
        evictions = self.cache.evictions
        self.cache.put(key, value, ctx.now, prefetched=prefetch, version=version)
        if self.cache.evictions > evictions:
            ctx.record("cache_eviction", self.cache.evictions - evictions)
        parked = self.waiting.pop(key, [])
        if parked:
            self.cache.get(key, ctx.now)                # marks the value used
            if prefetch:
                ctx.record("prefetch_used", 1)
                ctx.record("served_by_prefetch", len(parked))
        return parked

    def held(self) -> list:
        """Items waiting for a reply."""
        return [item for parked in self.waiting.values() for item, _ in parked]
