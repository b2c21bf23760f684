"""Node programs of the enrichment pipeline and its prefetching (docs/ALGORITHMS.md#enrichment).

Roles (a node may hold several):

- **source** (``source:<stream>``, at a stream's node): forwards each tuple to the
  enrichment node (kind ``data``), at once or, with ``batch_period`` > 0, in one message
  per period (a duty-cycled sensor radio), which puts time between the trigger and the
  need. With a profile, it is the trigger location: a tuple that matches a record starts
  a fetch of its key's item from its table node, addressed to the enrichment node, after
  the record's wait (``prefetch`` messages).
- **table** (the data source, at each of ``[enrich.table] nodes``, key ``k`` at
  ``nodes[k % count]``; :mod:`.table`): serves each request in FIFO order with
  ``servers`` servers of ``service_time`` each, then sends the row, at its current
  version, to the request's ``reply_to``. Rows are updated ``update_rate`` times per
  time unit; with ``invalidate`` the table pushes each update (kind ``update``) to the
  nodes it sent the row to within ``cache_ttl``. The driver files no timer past the
  run's duration, so a request due after it (in the drain) is answered on arrival.
- **enrich** (at the query node): each tuple needs the row of its key. A cached row
  (not expired) serves it at once; otherwise the tuple waits (its *stall*) for an
  on-demand lookup (kind ``lookup``; one request per key in flight, sent again every
  ``lookup_timeout`` while no reply came, since a partition can lose it) or for a
  prefetch already under way, whichever reply comes first (a tuple a prefetch serves on
  arrival is labelled ``"prefetch"``). The cache holds at most ``cache_rows`` rows
  (least recently used evicted). Every tuple is emitted exactly once, enriched, whatever
  the mode: prefetching changes timing, never answers. A row older than the table's
  current version when used is a *stale use*.

A prefetch travels source -> table -> enrichment node: the source times it on that path,
with the hops of both legs at the trigger (:func:`.profile.prefetch_wait`).

Metrics (source = the algorithm's name): at the enrichment node ``need`` (one per tuple),
``stall`` (its waiting time), ``lookup`` (an on-demand request), ``served_by_prefetch``,
``prefetch_arrived`` and ``prefetch_used`` (a prefetched row that served a tuple),
``cache_eviction``, ``stale_use``; at sources ``prefetch`` (a request sent ahead of
need) and ``prefetch_wait`` (how long it waited before leaving); at tables
``table_wait`` (a request's time in the queue before service), ``table_queue``
(requests in the table after one arrived) and ``update_pushed``; for the in-order
operator behind the enrichment node (:mod:`.downstream`) ``downstream_wait`` (a tuple's
time held behind an earlier one) and ``downstream_held`` (tuples held after each
enrichment). With ``trace``, every role writes the trace tables :mod:`.profile` builds
profiles from; the enriched tuple an enrichment creates is traced with its input as
parent (lineage, as the source's tuple header carries it).

With ``refresh_every``, every that many time units the enrichment node sends each
stream's source (kind ``profile``; metric ``profile_refresh``) the share of its tuples
that needed a lookup since the last refresh and the key ranges where it clearly
differs; the source's trigger uses them in place of the profile's (the waits stay the
profile's).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import pandas as pd

from contract.program import NodeProgram
from spark_nodes.algorithms.enrich.downstream import InOrderBuffer
from spark_nodes.algorithms.enrich.fetcher import Fetcher
from spark_nodes.algorithms.enrich.lookups import (LookupReply, LookupRequest, RowUpdate,
                                                   reference_row)
from spark_nodes.algorithms.enrich.profile import key_ranges, prefetch_wait, record_probability
from spark_nodes.algorithms.enrich.table import RowClock, ServiceQueue, table_for
from spark_nodes.workload.tuples import StreamTuple, member_id

#: The enrichment operator's location name and its data source's, as profiles name them.
ENRICH, TABLE = "enrich", "table"


def source_location(stream: str) -> str:
    """The location name of a stream's source operator.

    >>> source_location("R2")
    'source:R2'
    """
    return f"source:{stream}"


def enriched_id(tup: StreamTuple) -> str:
    """The id of the tuple an enrichment makes of ``tup`` (its lineage: ``tup``).

    >>> from spark_nodes.workload.tuples import StreamTuple
    >>> enriched_id(StreamTuple("R1", 4, 0.5, 7, None, None, 3))
    'R1:4+table'
    """
    return f"{member_id(tup)}+{TABLE}"


class ProfileRefresh(NamedTuple):
    """What the enrichment node saw of one stream's tuples since the last refresh: the
    share that needed a lookup and the key ranges where it clearly differs."""

    stream: str
    probability: float
    key_ranges: list


@dataclass(frozen=True)
class Trigger:
    """What a source does with the tuples of one stream: prefetch those with a lookup
    probability of at least ``threshold`` (``ids``: exactly these tuples; ``every``:
    all); at once, or (``confidence``) as late as arrives before the need with that
    probability, or (``waits``) after each tuple's own wait."""

    record: dict | None
    threshold: float = 0.0
    ids: frozenset = frozenset()
    confidence: float | None = None
    every: bool = False
    waits: dict = field(default_factory=dict)        # tuple id -> wait (the oracle's)
    day: float | None = None                         # the day its time ranges are on

    def fires(self, tup: StreamTuple, now: float | None = None,
              record: dict | None = None) -> bool:
        """Whether ``tup``, seen at ``now``, starts a prefetch (``record``: a refreshed
        one in place of the profile's)."""
        if self.every:
            return True
        if self.ids:
            return member_id(tup) in self.ids
        record = self.record if record is None else record
        if record is None:
            return False
        return record_probability(record, tup.key, now, self.day) >= self.threshold

    def wait(self, hops: int) -> float:
        """The wait before fetching over a path of ``hops`` (source -> table ->
        enrichment node; < 1: unknown, the profile's round trips stand in)."""
        if self.confidence is None or self.record is None:
            return 0.0
        return prefetch_wait(self.record, self.confidence, hops=hops if hops > 0 else None)


@dataclass(frozen=True)
class Setup:
    """Everything the roles of one run share (built by :mod:`.algorithms`)."""

    enrich_node: int
    tables: tuple
    ttl: float
    row_units: float
    request_units: float
    trace: bool
    batch_period: float = 0.0
    lookup_timeout: float = 1.0
    bytes_per_unit: int = 32
    triggers: dict = field(default_factory=dict)     # stream -> Trigger
    cache_rows: int | None = None
    service_time: float = 0.0
    servers: int = 1
    rows: RowClock | None = None                     # None: rows never change
    invalidate: bool = False
    duration: float = math.inf                       # the sources' end: no timer after it
    refresh_every: float | None = None               # None: the profile never changes
    stream_nodes: tuple = ()                         # (stream, its source's node)


class EnrichNode(NodeProgram):
    """One node's roles in the enrichment pipeline (see the module docstring)."""

    def __init__(self, setup: Setup, node: int, streams: tuple = ()):
        self.s = setup
        self.streams = streams
        # the enrichment node's cache, tuples waiting for a row, requests in flight
        self.fetch = Fetcher(setup.ttl, setup.lookup_timeout, capacity=setup.cache_rows) \
            if node == setup.enrich_node else None
        # the in-order operator behind it: its buffer, and each waiting tuple's place
        self.order = InOrderBuffer()
        self.places: dict = {}
        self.batch: list = []                    # tuples waiting for the next send
        self.waits: dict = {}                    # (stream, hops) -> prefetch wait
        # profile refresh: what the enrichment node saw (stream -> [(key, needed)]),
        # and at a source the records refreshed from it (stream -> record)
        self.observed: dict = {}
        self.refreshed: dict = {}
        # the table's servers and, for invalidation, who was sent which row when
        self.queue = ServiceQueue(setup.servers, setup.service_time) \
            if node in setup.tables else None
        self.holders: dict = {}                  # key -> {node: when the row left}

    # -- source ---------------------------------------------------------------------------
    def on_tuple(self, ctx, tup) -> None:
        if self.s.trace:
            ctx.trace("tuples", location=source_location(tup.stream), tuple_id=member_id(tup),
                      type=tup.stream, key=tup.key, parents="")
        if self.s.batch_period > 0:
            if not self.batch:
                period = self.s.batch_period
                ctx.set_timer((ctx.now // period + 1) * period, ("flush",))
            self.batch.append(tup)
        else:
            ctx.send(self.s.enrich_node, "data", (tup,), tup.size)
        trigger = self.s.triggers.get(tup.stream)
        if trigger is not None and trigger.fires(tup, ctx.now, self.refreshed.get(tup.stream)):
            wait = trigger.waits.get(member_id(tup)) if trigger.waits else None
            if wait is None:
                wait = self._wait(trigger, tup.stream, self._prefetch_hops(ctx, tup.key))
            ctx.record("prefetch_wait", wait)
            if wait > 0:
                ctx.set_timer(ctx.now + wait, ("prefetch", tup.key))
            else:
                self._prefetch(ctx, tup.key)

    def _prefetch_hops(self, ctx, key) -> int:
        """Hops of a prefetch's real path now: here -> table -> enrichment node (-1:
        a leg unreachable)."""
        table = table_for(key, self.s.tables)
        legs = (ctx.net.hops(ctx.node, table), ctx.net.hops(table, self.s.enrich_node))
        return -1 if min(legs) < 0 else sum(legs)

    def _wait(self, trigger: Trigger, stream: str, hops: int) -> float:
        # the wait depends on the stream's record and the path only: computed once each
        if (stream, hops) not in self.waits:
            self.waits[(stream, hops)] = trigger.wait(hops)
        return self.waits[(stream, hops)]

    def start(self, ctx) -> None:
        if self.fetch is not None and self.s.refresh_every is not None:
            ctx.set_timer(self.s.refresh_every, ("refresh",))

    def on_timer(self, ctx, tag) -> None:
        if tag[0] == "refresh":
            self._refresh(ctx)
        elif tag[0] == "flush":
            self._flush(ctx)
        elif tag[0] == "retry":
            if tag[1] in self.fetch.requested and self.fetch.waiting.get(tag[1]):
                ctx.record("lookup_retry", 1)
                self._request(ctx, tag[1])
        elif tag[0] == "serve":
            self._answer(ctx, tag[1], tag[2])
        elif tag[0] == "update":
            self._push_update(ctx, tag[1])
        else:
            self._prefetch(ctx, tag[1])

    def finish(self, ctx) -> None:
        self._flush(ctx)

    def _flush(self, ctx) -> None:
        if self.batch:
            batch, self.batch = tuple(self.batch), []
            ctx.send(self.s.enrich_node, "data", batch, sum(t.size for t in batch))

    def _prefetch(self, ctx, key) -> None:
        request = LookupRequest(key, self.s.enrich_node, True, ctx.now,
                                self._prefetch_hops(ctx, key))
        ctx.send(table_for(key, self.s.tables), "prefetch", request, self.s.request_units)
        ctx.record("prefetch", 1)

    # -- messages -------------------------------------------------------------------------
    def on_message(self, ctx, msg) -> None:
        p = msg.payload
        if isinstance(p, tuple) and p and isinstance(p[0], StreamTuple):
            for tup in p:
                self._need(ctx, tup)
        elif isinstance(p, LookupRequest):
            self._serve(ctx, p)
        elif isinstance(p, LookupReply):
            self._arrived(ctx, p)
        elif isinstance(p, RowUpdate):
            self.fetch.cache.update(p.key, p.item, p.version)
        elif isinstance(p, ProfileRefresh):
            trigger = self.s.triggers.get(p.stream)
            if trigger is not None and trigger.record is not None:
                self.refreshed[p.stream] = {**trigger.record, "probability": p.probability,
                                            "key_ranges": p.key_ranges}
        else:
            raise TypeError(f"node {ctx.node}: unexpected payload {type(p).__name__}")

    # -- table ----------------------------------------------------------------------------
    def _serve(self, ctx, request: LookupRequest) -> None:
        """Queue ``request`` for a server (answered at once when service takes no time)."""
        if self.s.service_time <= 0:
            self._answer(ctx, request, ctx.now)
            return
        done = self.queue.admit(ctx.now)
        ctx.record("table_wait", done - self.s.service_time - ctx.now)
        ctx.record("table_queue", self.queue.in_system(ctx.now))
        if done > self.s.duration:
            # the driver files no timer past the run's duration (the drain only
            # delivers): a request due after it is answered on arrival
            self._answer(ctx, request, ctx.now)
        else:
            ctx.set_timer(done, ("serve", request, ctx.now))

    def _answer(self, ctx, request: LookupRequest, arrived: float) -> None:
        key = request.key
        version = self._version(key, ctx.now)
        kind = "prefetch" if request.prefetch else "lookup"
        reply = LookupReply(key, reference_row(key), request.prefetch, request.sent_at,
                            ctx.now - arrived, version, request.hops)
        ctx.send(request.reply_to, kind, reply, self.s.row_units)
        if self.s.invalidate and self.s.rows is not None:
            self._hold(ctx, request.reply_to, key)

    def _version(self, key, now: float) -> int:
        return 0 if self.s.rows is None else self.s.rows.version(key, now)

    def _hold(self, ctx, node: int, key) -> None:
        """``node`` may cache ``key`` until ``cache_ttl`` after now: push it the updates."""
        held = self.holders.setdefault(key, {})
        if not held:
            ctx.set_timer(self.s.rows.next_update(key, ctx.now), ("update", key))
        held[node] = ctx.now

    def _push_update(self, ctx, key) -> None:
        """Row ``key`` changed: send it to every node that may still cache it."""
        held = {n: t for n, t in self.holders.get(key, {}).items() if ctx.now - t < self.s.ttl}
        update = RowUpdate(key, reference_row(key), self._version(key, ctx.now))
        for node in sorted(held):
            ctx.send(node, "update", update, self.s.row_units)
            ctx.record("update_pushed", 1)
        self.holders[key] = held
        if held:
            ctx.set_timer(self.s.rows.next_update(key, ctx.now), ("update", key))

    # -- enrichment -----------------------------------------------------------------------
    def _need(self, ctx, tup: StreamTuple) -> None:
        ctx.record("need", 1)
        self.places[member_id(tup)] = self.order.admit()
        if self.s.trace:
            ctx.trace("tuples", location=ENRICH, tuple_id=member_id(tup), type=tup.stream,
                      key=tup.key, parents="")
        entry = self.fetch.cache.entry(tup.key)
        first_prefetched = entry is not None and entry.prefetched and not entry.used
        item, served = self.fetch.cached(ctx, tup.key)
        if item is not None:
            self._emit(ctx, tup, item, ctx.now, served, self.fetch.cache.entry(tup.key).version)
        elif self.fetch.park(ctx, tup.key, tup):
            self._request(ctx, tup.key)
        if self.s.refresh_every is not None:
            # it needed a lookup unless a row it did not bring was there: one fetched
            # before, or a prefetched one an earlier tuple already used
            needed = item is None or (served == "prefetch" and first_prefetched)
            self.observed.setdefault(tup.stream, []).append((tup.key, needed))

    def _refresh(self, ctx) -> None:
        """Send each stream's source what this node saw since the last refresh (its
        lookup probability and key ranges, as a profile's record holds them)."""
        nodes = dict(self.s.stream_nodes)
        for stream in sorted(self.observed):
            seen = pd.DataFrame(self.observed[stream], columns=["key", "needed"])
            p = float(seen["needed"].mean())
            refresh = ProfileRefresh(stream, p, key_ranges(seen["key"], seen["needed"], p))
            ctx.send(nodes[stream], "profile", refresh, self.s.request_units)
            ctx.record("profile_refresh", 1)
        self.observed = {}
        ctx.set_timer(ctx.now + self.s.refresh_every, ("refresh",))

    def _request(self, ctx, key) -> None:
        self.fetch.asked(ctx, key)
        table = table_for(key, self.s.tables)
        hops = max(0, ctx.net.hops(ctx.node, table)) * 2
        ctx.send(table, "lookup", LookupRequest(key, ctx.node, False, ctx.now, hops),
                 self.s.request_units)

    def _arrived(self, ctx, reply: LookupReply) -> None:
        if self.s.trace:
            ctx.trace("fetches", key=reply.key, latency=ctx.now - reply.requested_at,
                      prefetch=reply.prefetch, hops=reply.hops, queued=reply.queued)
        # a prefetch started at a source does not answer this node's request in flight
        parked = self.fetch.arrived(ctx, reply.key, reply.item, reply.prefetch,
                                    settles=not reply.prefetch, version=reply.version)
        served = "prefetch" if reply.prefetch else "demand"
        for tup, since in parked:
            self._emit(ctx, tup, reply.item, since, served, reply.version)

    def _emit(self, ctx, tup, item, since: float, served: str, version: int) -> None:
        stall = ctx.now - since
        ctx.record("stall", stall)
        if version < self._version(tup.key, ctx.now):
            ctx.record("stale_use", 1)
        ctx.emit((tup,), key=tup.key, item=item[0], stall=stall, served=served)
        self._downstream(ctx, self.places.pop(member_id(tup)))
        if self.s.trace:
            ctx.trace("lookups", location=ENRICH, tuple_id=member_id(tup), type=tup.stream,
                      source=TABLE, key=tup.key, stall=stall, served=served, need_time=since)
            ctx.trace("tuples", location=ENRICH, tuple_id=enriched_id(tup),
                      type=f"{tup.stream}+{TABLE}", key=tup.key, parents=member_id(tup))

    def _downstream(self, ctx, place: int) -> None:
        """The in-order operator takes what its buffer releases; a stall shows as the
        tuples held behind it (recorded after each enrichment)."""
        for _, waited in self.order.served(place, ctx.now):
            ctx.record("downstream_wait", waited)
        ctx.record("downstream_held", self.order.held())

    def memory(self) -> tuple[int, int]:
        held = len(self.batch) + self.order.held()
        cached = 0
        if self.fetch is not None:
            held += len(self.fetch.held())
            cached = len(self.fetch.cache)
        units = held + cached * self.s.row_units
        return held + cached, int(round(units * self.s.bytes_per_unit))
