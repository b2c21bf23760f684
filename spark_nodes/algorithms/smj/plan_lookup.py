"""SMJ sites that fetch the center's plan as a lookup instead of having it pushed.

With ``plan = "push"`` (the default, the source's protocol) the synopsis center sends
each block's filter and visiting order to its site as soon as it has decided the
period. With ``plan = "lookup"`` the center keeps, per site, the latest plan it decided
(:class:`PlanDesk`) and answers requests; a site that must forward a block asks for it
(docs/ALGORITHMS.md#plans-and-routes-as-lookups, :mod:`spark_nodes.algorithms.enrich.lookups`):

- a block closes (its synopsis has just been sent) and needs a plan. A plan in the
  site's cache that has not expired (``plan_ttl`` after it arrived) serves it at once;
  it is the plan of an earlier period, so the block goes unfiltered along that
  period's order (any order and no filter give the same answer: the filter only drops
  tuples that would join nothing, and each visited site joins exactly). Otherwise the
  block waits (its *stall*) for the reply to a request for its own period, which the
  center answers once it has decided that period: the exact, filtered plan.
- ``plan_fetch = "on-demand"`` asks only when a block finds no plan; ``"eager"`` asks
  for every non-empty block's plan as soon as its synopsis is sent (kind ``prefetch``),
  whether the block needs it or not: the cache is then refreshed every period, so with
  ``plan_ttl`` above the period blocks never wait but always travel unfiltered along the
  previous period's order.
- A request with no reply after ``plan_timeout`` is sent again (a partition may lose it).

Requests and replies are messages (kinds ``lookup``/``prefetch``, in the ledger). The
center's desk travels with the center when it moves; requests that reach a node the
center left are passed on like synopses. Profile-driven prediction (``enrich-predicted``)
is not offered: the trigger a profile would use (the period's close, when the synopsis
is sent) is the need itself, so the only earlier signal is the previous period, which
is what eager uses.

Examples
--------
>>> plan_options("smj-h", {"plan": "lookup", "plan_fetch": "eager", "plan_ttl": 1.5,
...                        "plan_timeout": 1.0})
FetchOptions(fetch='eager', ttl=1.5, timeout=1.0)
>>> plan_options("smj-h", {"plan": "push", "plan_fetch": "on-demand", "plan_ttl": 0.0,
...                        "plan_timeout": 1.0}) is None
True
>>> desk = PlanDesk()
>>> desk.ask(PlanRequest(site=1, period=3, reply_to=7, prefetch=False, sent_at=3.0))
>>> desk.answers(next_period=3)          # period 3 not decided yet
[]
>>> desk.decided(1, Plan(3, (4, 5), (0, 2)))
>>> [(r.reply_to, p.period) for r, p in desk.answers(next_period=4)]
[(7, 3)]
"""
from __future__ import annotations

from typing import NamedTuple

from spark_nodes.algorithms.enrich.fetcher import (FetchOptions, Fetcher, fetch_options,
                                                   fetch_params)

#: ``plan``: pushed by the center (default) or fetched by the site.
PLAN_MODES = ("push", "lookup")
PARAMS = fetch_params("plan", PLAN_MODES, "plan", ttl=0.0)


def plan_options(name: str, p: dict) -> FetchOptions | None:
    """The checked options of algorithm ``name``'s params ``p`` (None: plans are pushed).

    >>> plan_options("smj-e", {"plan": "pull", "plan_fetch": "on-demand", "plan_ttl": 0.0,
    ...                        "plan_timeout": 1.0})
    Traceback (most recent call last):
    ...
    ValueError: params.smj-e.plan: expected one of push, lookup, got 'pull'
    """
    return fetch_options(name, p, "plan", PLAN_MODES, "plan")


class Plan(NamedTuple):
    """The center's plan for a block of ``period``: the keys its filter keeps and the
    other sites in visiting order."""

    period: int
    keep: tuple
    order: tuple


class PlanRequest(NamedTuple):
    """A site asks the center for site ``site``'s plan of ``period`` (or a later one)."""

    site: int
    period: int
    reply_to: int
    prefetch: bool
    sent_at: float


class PlanReply(NamedTuple):
    """The center's latest plan of ``site`` on its way to the site."""

    site: int
    plan: Plan
    prefetch: bool
    requested_at: float


def request_size(unit: float) -> float:
    """Units of a request: one synopsis entry."""
    return unit


def plan_size(keep, order, unit: float) -> float:
    """Units of a plan on the wire, pushed as a filter or sent as a reply: an entry per
    kept key and per order position, at least one.

    >>> plan_size((3, 5), (1, 2), 0.25), plan_size((), (), 0.25)
    (1.0, 0.25)
    """
    return (len(keep) + len(order) or 1) * unit


class PlanDesk:
    """At the center: the latest plan of each site and the requests waiting for a
    period to be decided (picklable; it moves with the center)."""

    def __init__(self):
        self.latest: dict[int, Plan] = {}
        self.waiting: list[PlanRequest] = []

    def ask(self, req: PlanRequest) -> None:
        self.waiting.append(req)

    def decided(self, site: int, plan: Plan) -> None:
        self.latest[site] = plan

    def answers(self, next_period: int) -> list[tuple[PlanRequest, Plan]]:
        """Requests that can be answered now (their period is decided and the site has
        a plan), removed from the desk, each with the site's latest plan."""
        ready, keep = [], []
        for req in self.waiting:
            plan = self.latest.get(req.site)
            if req.period < next_period and plan is not None:
                ready.append((req, plan))
            else:
                keep.append(req)
        self.waiting = keep
        return ready

    def entries(self) -> int:
        """Plans and requests held (synopsis-sized entries when the center moves)."""
        return sum(len(p.keep) + len(p.order) for p in self.latest.values()) + \
            len(self.waiting)


class PlanFetcher:
    """At a site node: the plan fetches of its sites (keyed by site index).

    ``send(ctx, kind, payload, size)`` sends to the center (the node program's own
    send, which holds messages across partitions); ``forward(ctx, k, j, plan,
    filtered)`` sends block ``(k, j)`` on its way.
    """

    def __init__(self, opts: FetchOptions, unit: float):
        self.eager = opts.fetch == "eager"
        self.unit = unit
        self.f = Fetcher(opts.ttl, opts.timeout, ("plan_retry",))

    def closed(self, ctx, k: int, j: int, send, forward) -> None:
        """Block ``(k, j)`` (non-empty) has closed and its synopsis was sent."""
        if self.eager:
            ctx.record("prefetch", 1)
            self._ask(ctx, k, j, True, send)
        plan, _ = self.f.cached(ctx, k)
        if plan is not None:
            ctx.record("stall", 0.0)
            forward(ctx, k, j, plan, plan.period == j)
        elif self.f.park(ctx, k, j):
            self._ask(ctx, k, j, False, send)

    def _ask(self, ctx, k: int, j: int, prefetch: bool, send) -> None:
        self.f.asked(ctx, k)
        send(ctx, "prefetch" if prefetch else "lookup",
             ("plan?", PlanRequest(k, j, ctx.node, prefetch, ctx.now)), request_size(self.unit))

    def retry(self, ctx, k: int, send) -> bool:
        """A request's timeout: ask again (for the latest waiting block) if due; whether
        it was (the center did not answer in time: a peer timeout)."""
        due = self.f.retry_due(ctx, k)
        if due:
            self._ask(ctx, k, max(j for j, _ in self.f.waiting[k]), False, send)
        return due

    def arrived(self, ctx, reply: PlanReply, forward) -> None:
        """A plan arrived: cache it and send the blocks that waited for it."""
        plan = reply.plan
        for j, since in sorted(self.f.arrived(ctx, reply.site, plan, reply.prefetch)):
            ctx.record("stall", ctx.now - since)
            forward(ctx, reply.site, j, plan, plan.period == j)

    def held(self) -> int:
        """Blocks waiting for a plan (their tuples are in the site's memory already)."""
        return len(self.f.held())
