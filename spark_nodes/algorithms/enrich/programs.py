"""Node programs of the enrichment pipeline and its prefetching (docs/ALGORITHMS.md#enrichment).

Roles (a node may hold several):

- **source** (``source:<stream>``, at a stream's node): forwards each tuple to the
  enrichment node (kind ``data``), at once or, with ``batch_period`` > 0, in one message
  per period (a duty-cycled sensor radio), which puts time between the trigger and the
  need. With a profile, it is the trigger location: a tuple
  that matches a record starts a fetch of its key's item from the table node, addressed
  to the enrichment node, after the record's wait (``prefetch`` messages).
- **table** (the data source, at ``table_node``): answers each request with the row,
  sent to the request's ``reply_to``.
- **enrich** (at the query node): each tuple needs the row of its key. A cached row
  (not expired) serves it at once; otherwise the tuple waits (its *stall*) for an
  on-demand lookup (kind ``lookup``; one request per key in flight, sent again every
  ``lookup_timeout`` while no reply came, since a partition can lose it) or for a
  prefetch already under way, whichever reply comes first. Every tuple is emitted exactly once,
  enriched, whatever the mode: prefetching changes timing, never answers.

Metrics (source = the algorithm's name): at the enrichment node ``need`` (one per tuple),
``stall`` (its waiting time), ``lookup`` (an on-demand request), ``served_by_prefetch``,
``prefetch_arrived`` and ``prefetch_used`` (a prefetched row that served a tuple); at
sources ``prefetch`` (a request sent ahead of need). With ``trace``, every role writes
the trace tables :mod:`.profile` builds profiles from.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from contract.program import NodeProgram
from spark_nodes.algorithms.enrich.fetcher import Fetcher
from spark_nodes.algorithms.enrich.lookups import LookupReply, LookupRequest, reference_row
from spark_nodes.algorithms.enrich.profile import record_probability
from spark_nodes.workload.tuples import StreamTuple, member_id

#: The enrichment operator's location name and its data source's, as profiles name them.
ENRICH, TABLE = "enrich", "table"


def source_location(stream: str) -> str:
    """The location name of a stream's source operator.

    >>> source_location("R2")
    'source:R2'
    """
    return f"source:{stream}"


@dataclass(frozen=True)
class Trigger:
    """What a source does with the tuples of one stream: prefetch those with a lookup
    probability of at least ``threshold`` (``ids``: exactly these tuples), ``wait``
    after they arrive."""

    record: dict | None
    wait: float = 0.0
    threshold: float = 0.0
    ids: frozenset = frozenset()

    def fires(self, tup: StreamTuple) -> bool:
        if self.ids:
            return member_id(tup) in self.ids
        if self.record is None:
            return False
        return record_probability(self.record, tup.key) >= self.threshold


@dataclass(frozen=True)
class Setup:
    """Everything the roles of one run share (built by :mod:`.algorithms`)."""

    enrich_node: int
    table_node: int
    ttl: float
    row_units: float
    request_units: float
    trace: bool
    batch_period: float = 0.0
    lookup_timeout: float = 1.0
    bytes_per_unit: int = 32
    triggers: dict = field(default_factory=dict)     # stream -> Trigger


class EnrichNode(NodeProgram):
    """One node's roles in the enrichment pipeline (see the module docstring)."""

    def __init__(self, setup: Setup, node: int, streams: tuple = ()):
        self.s = setup
        self.streams = streams
        # the enrichment node's cache, tuples waiting for a row, requests in flight
        self.fetch = Fetcher(setup.ttl, setup.lookup_timeout) \
            if node == setup.enrich_node else None
        self.batch: list = []                    # tuples waiting for the next send

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
        if trigger is not None and trigger.fires(tup):
            if trigger.wait > 0:
                ctx.set_timer(ctx.now + trigger.wait, ("prefetch", tup.key))
            else:
                self._prefetch(ctx, tup.key)

    def on_timer(self, ctx, tag) -> None:
        if tag[0] == "flush":
            self._flush(ctx)
        elif tag[0] == "retry":
            if tag[1] in self.fetch.requested and self.fetch.waiting.get(tag[1]):
                ctx.record("lookup_retry", 1)
                self._request(ctx, tag[1])
        else:
            self._prefetch(ctx, tag[1])

    def finish(self, ctx) -> None:
        self._flush(ctx)

    def _flush(self, ctx) -> None:
        if self.batch:
            batch, self.batch = tuple(self.batch), []
            ctx.send(self.s.enrich_node, "data", batch, sum(t.size for t in batch))

    def _prefetch(self, ctx, key) -> None:
        ctx.send(self.s.table_node, "prefetch",
                 LookupRequest(key, self.s.enrich_node, True, ctx.now), self.s.request_units)
        ctx.record("prefetch", 1)

    # -- messages -------------------------------------------------------------------------
    def on_message(self, ctx, msg) -> None:
        p = msg.payload
        if isinstance(p, tuple) and p and isinstance(p[0], StreamTuple):
            for tup in p:
                self._need(ctx, tup)
        elif isinstance(p, LookupRequest):
            kind = "prefetch" if p.prefetch else "lookup"
            ctx.send(p.reply_to, kind, LookupReply(p.key, reference_row(p.key), p.prefetch,
                                                   p.sent_at), self.s.row_units)
        elif isinstance(p, LookupReply):
            self._arrived(ctx, p)
        else:
            raise TypeError(f"node {ctx.node}: unexpected payload {type(p).__name__}")

    # -- enrichment -----------------------------------------------------------------------
    def _need(self, ctx, tup: StreamTuple) -> None:
        ctx.record("need", 1)
        if self.s.trace:
            ctx.trace("tuples", location=ENRICH, tuple_id=member_id(tup), type=tup.stream,
                      key=tup.key, parents="")
        item, served = self.fetch.cached(ctx, tup.key)
        if item is not None:
            self._emit(ctx, tup, item, ctx.now, served)
        elif self.fetch.park(ctx, tup.key, tup):
            self._request(ctx, tup.key)

    def _request(self, ctx, key) -> None:
        self.fetch.asked(ctx, key)
        ctx.send(self.s.table_node, "lookup", LookupRequest(key, ctx.node, False, ctx.now),
                 self.s.request_units)

    def _arrived(self, ctx, reply: LookupReply) -> None:
        if self.s.trace:
            ctx.trace("fetches", key=reply.key, latency=ctx.now - reply.requested_at,
                      prefetch=reply.prefetch)
        # a prefetch started at a source does not answer this node's request in flight
        parked = self.fetch.arrived(ctx, reply.key, reply.item, reply.prefetch,
                                    settles=not reply.prefetch)
        for tup, since in parked:
            self._emit(ctx, tup, reply.item, since, "demand")

    def _emit(self, ctx, tup, item, since: float, served: str) -> None:
        stall = ctx.now - since
        ctx.record("stall", stall)
        ctx.emit((tup,), key=tup.key, item=item[0], stall=stall, served=served)
        if self.s.trace:
            ctx.trace("lookups", location=ENRICH, tuple_id=member_id(tup), type=tup.stream,
                      source=TABLE, key=tup.key, stall=stall, served=served, need_time=since)

    def memory(self) -> tuple[int, int]:
        held = len(self.batch)
        cached = 0
        if self.fetch is not None:
            held += len(self.fetch.held())
            cached = len(self.fetch.cache)
        units = held + cached * self.s.row_units
        return held + cached, int(round(units * self.s.bytes_per_unit))
