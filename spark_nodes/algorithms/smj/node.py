"""The node program of the SMJ family: one class, the roles a node plays.

A node may be a *site* (one per stream it produces), the *synopsis center* (smj-e,
smj-h; the role moves), the *query node*, or only a relay for the center. Messages
(payload tag → handler):

=========  ==============  ==========================================================
kind       tag             meaning
=========  ==============  ==========================================================
synopsis   ``delta``       site → center: ``ΔS`` and ``∇S`` of one period
synopsis   ``state``       old center → new center: the whole :class:`Center`
filter     ``filter``      center → site: the keys the filter keeps and the order
data       ``hop``/``lot`` a block's first hop (smj / lottery)
intermed.  ``hop``/``lot`` a partial result on to the next site
report     ``report``      lottery: result count back to the sender
result     ``result``      final results to the query node
data       ``block``       naive: a whole block to the query node
lookup     ``plan?``       plan = "lookup": site → center, a request for a plan
lookup     ``plan``        center → site: the reply (kind ``prefetch`` for eager ones)
=========  ==============  ==========================================================

Under a window trigger the query node ends the periods and announces them
(:mod:`spark_nodes.algorithms.smj.triggered`): tags ``period`` (query node → site nodes, kind
``control``) and ``signal`` (a site's condition fired → query node, kind ``trigger``).
A hop of a period whose end has not reached its site yet waits there for it.

A message whose destination is cut off (a partition: the network would drop it) is held
at its sender and retried every ``retry`` time units.

Sizes: a tuple or a (partial) result tuple is one unit; a synopsis entry, an order
position and a lottery report count ``synopsis_unit`` each; a period message carries at
least one entry (the center needs it even when the block is empty).
"""
from __future__ import annotations

from contract.program import NodeProgram
from spark_nodes.algorithms.smj.center import Center
from spark_nodes.algorithms.smj.lottery import LotteryCounters
from spark_nodes.algorithms.smj.naive import QueryJoin
from spark_nodes.algorithms.smj.plan_lookup import (Plan, PlanDesk, PlanFetcher, PlanReply,
                                                    plan_size)
from spark_nodes.algorithms.smj.semantics import FiredPeriods, close_of
from spark_nodes.algorithms.smj.site import Site, by_key, count
from spark_nodes.algorithms.smj.synopsis import Sparse
from spark_nodes.algorithms.smj.triggered import PeriodClock, SiteSignals


class SmjNode(NodeProgram):
    """All SMJ-family roles of one node (see the module docstring)."""

    def __init__(self, cfg, node: int, center: bool = False):
        self.cfg = cfg
        self.node = node
        self.sites = {k: Site(cfg, k) for k in range(cfg.n) if cfg.stream_nodes[k] == node}
        self.by_stream = {s.stream: s for s in self.sites.values()}
        self.counters = {k: LotteryCounters() for k in self.sites}
        self.query = QueryJoin(cfg) if cfg.mode == "naive" and node == cfg.query_node \
            else None
        self.center = Center(cfg) if center else None
        self.center_at = cfg.initial_center    # where this node's sites send synopses
        self.center_next = None                # where the center went from here
        self.center_pending: list = []         # center messages that arrived before it
        self.center_epoch = None               # epoch of the last placement check
        self.outbox: list = []                 # messages held while their target is cut off
        self.retrying = False                  # a retry timer is pending
        lookup = cfg.plan_lookup               # plan = "lookup": sites fetch their plans
        self.plans = PlanFetcher(lookup, cfg.synopsis_unit) \
            if lookup is not None and self.sites else None
        self.desk = PlanDesk() if lookup is not None and center else None
        self._triggered(cfg, node)

    def _triggered(self, cfg, node):
        """Roles under a window trigger (:mod:`spark_nodes.algorithms.smj.triggered`)."""
        trigger = cfg.trigger
        self.clock = PeriodClock(trigger, sorted(set(cfg.stream_nodes)), cfg.synopsis_unit) \
            if trigger is not None and node == cfg.query_node else None
        self.signals = SiteSignals(trigger, cfg.query_node, cfg.synopsis_unit) \
            if trigger is not None and self.sites else None
        self.periods = None if trigger is None else \
            self.clock.periods if self.clock is not None else FiredPeriods()
        for holder in [*self.sites.values(), self.query]:
            if holder is not None and self.periods is not None:
                holder.periods = self.periods
        self.closed = 0                        # periods this node's sites have closed
        self.parked: list = []                 # hops waiting for their period's end

    # ---- events -------------------------------------------------------------------
    def start(self, ctx):
        if self.cfg.trigger is not None:
            if self.clock is not None:
                self.clock.start(ctx, self.cfg.limit)
            if self.signals is not None:
                self.signals.start(ctx)
        elif self.sites and self.cfg.periods > 0:
            ctx.set_timer(close_of(0, self.cfg.period), ("close", 0))

    def on_tuple(self, ctx, tup):
        site = self.by_stream.get(tup.stream)
        if site is None:
            raise ValueError(f"node {self.node} got a tuple of {tup.stream}, which it "
                             f"does not produce")
        site.add(tup)
        ctx.record(f"arrival:{tup.stream}", tup.seq)     # the input rate, for the report
        if self.signals is not None:
            self.signals.on_tuple(ctx, tup)

    def on_lost(self, ctx, msg, reason):
        if self.cfg.resend and reason != "late":
            # held and retried as if its target were cut off: the network dropped it
            self._hold(ctx, msg.dst, msg.kind, msg.payload, msg.size_units)
            ctx.record("resent", 1)
        if self.signals is not None:
            self.signals.exception(ctx, reason)
        if self.clock is not None:
            for kind in self.clock.lost(ctx, reason):
                self._end_period(ctx, kind)

    def listens_to_losses(self):
        return self.cfg.resend or (self.signals is not None and self.signals.initiator is not None) or \
            (self.clock is not None and self.clock.initiator is not None)

    def on_timer(self, ctx, tag):
        if tag[0] == "clock":
            if tag[1] == "last":
                self._end_period(ctx, "time", last=True)
            for kind in self.clock.poll(ctx) if tag[1] == "poll" else ():
                self._end_period(ctx, kind)
            return
        if tag[0] == "sites":
            self.signals.on_timer(ctx)
            return
        if tag[0] == "retry":
            self.retrying = False
            held, self.outbox = self.outbox, []
            for dst, kind, payload, size in held:
                self._send(ctx, dst, kind, payload, size)
            return
        if tag[0] == "plan_retry":
            if self.plans.retry(ctx, tag[1], self._to_center) and self.signals is not None:
                self.signals.exception(ctx, "peer_timeout")
            return
        _, j = tag
        for k in sorted(self.sites):
            self._close(ctx, self.sites[k], j)
        if 0 in self.sites:                    # one record per period, at the first site
            ctx.record("window_fired:time", 1)
        if j + 1 < self.cfg.periods:
            ctx.set_timer(close_of(j + 1, self.cfg.period), ("close", j + 1))

    def on_message(self, ctx, msg):
        tag = msg.payload[0]
        if tag in ("delta", "state", "plan?"):
            self._center_message(ctx, msg)
        elif tag == "filter":
            self._filtered(ctx, msg)
        elif tag == "plan":
            self.center_at = msg.src
            self.plans.arrived(ctx, msg.payload[1], self._forward_plan)
        elif tag == "period":
            self._learn(ctx, *msg.payload[1:])
        elif tag == "signal":
            if self.clock is None:
                raise ValueError(f"SMJ node {self.node}: a window signal, but the period "
                                 "clock is at the query node")
            self._end_period(ctx, msg.payload[1])
        elif tag == "hop":
            self._hop(ctx, *msg.payload[1:])
        elif tag == "lot":
            self._lottery_hop(ctx, *msg.payload[1:])
        elif tag == "report":
            _, sender, target, n_out = msg.payload
            self.counters[sender].reported(target, n_out)
        elif tag == "result":
            for combos in msg.payload[1].values():
                for combo in combos:
                    ctx.emit(combo)
        elif tag == "block":
            self.query.expire(ctx.now)
            for t in msg.payload[3]:
                for combo in self.query.add(t):
                    ctx.emit(combo)
        else:
            raise ValueError(f"SMJ node {self.node}: unknown message {tag!r}")

    def memory(self):
        tuples = sum(s.tuples() for s in self.sites.values())
        tuples += int(sum(size for _, kind, _, size in self.outbox if kind != "synopsis"))
        if self.query is not None:
            tuples += self.query.tuples()
        units = tuples
        if self.center is not None:
            units += self.center.entries() * self.cfg.synopsis_unit
        return tuples, int(units * self.cfg.bytes_per_unit)

    def _send(self, ctx, dst, kind, payload, size):
        """Send now, or hold the message while ``dst`` is cut off from this node (the
        network would drop it) and try again every ``retry`` time units."""
        if ctx.net.cost(self.node, dst) < float("inf"):
            ctx.send(dst, kind, payload, size)
            return
        self._hold(ctx, dst, kind, payload, size)

    def _hold(self, ctx, dst, kind, payload, size):
        """Keep a message in the outbox, retried every ``retry`` time units."""
        self.outbox.append((dst, kind, payload, size))
        ctx.record("held", 1)
        if not self.retrying:
            self.retrying = True
            ctx.set_timer(ctx.now + self.cfg.retry, ("retry",))

    # ---- sites ----------------------------------------------------------------------
    def _close(self, ctx, site, j):
        cfg = self.cfg
        block = site.close(j)
        site.expire(ctx.now)
        if cfg.uses_center:
            dec = site.decrement(j, block)
            delta = Sparse.of_keys(t.key for t in block)
            if delta.entries:
                site.blocks[j] = block
                ctx.record("need", 1)          # the block needs its plan from now on
            size = max(1, delta.entries + dec.entries) * cfg.synopsis_unit
            self._send(ctx, self.center_at, "synopsis", ("delta", site.index, j, delta, dec),
                       size)
            if delta.entries and self.plans is not None:
                self.plans.closed(ctx, site.index, j, self._to_center, self._forward_plan)
        elif not block:
            return
        elif cfg.mode == "lottery":
            others = frozenset(k for k in range(cfg.n) if k != site.index)
            self._lottery_forward(ctx, site.index, j, others, by_key(block), site.index,
                                  "data")
        else:
            self._send(ctx, cfg.query_node, "data", ("block", site.index, j, block),
                       len(block))

    def _filtered(self, ctx, msg):
        _, k, j, keep, order = msg.payload
        self.center_at = msg.src      # the center may have moved: answer comes from it
        ctx.record("stall", ctx.now - close_of(j, self.cfg.period))
        self._forward(ctx, k, j, set(int(a) for a in keep), order)

    def _to_center(self, ctx, kind, payload, size):
        self._send(ctx, self.center_at, kind, payload, size)

    def _forward_plan(self, ctx, k, j, plan, filtered):
        # a plan of another period: its filter does not fit this block, its order does
        self._forward(ctx, k, j, set(plan.keep) if filtered else None, plan.order)

    def _forward(self, ctx, k, j, keep, order):
        """Send block ``(k, j)``, filtered to ``keep`` (None: unfiltered), along ``order``."""
        block = self.sites[k].blocks.pop(j)
        kept = block if keep is None else [t for t in block if t.key in keep]
        ctx.record("filtered", len(block) - len(kept))
        if kept:
            self._send(ctx, self.cfg.stream_nodes[order[0]], "data",
                     ("hop", k, j, order, by_key(kept)), len(kept))

    # ---- periods ended by a trigger -----------------------------------------------------
    def _end_period(self, ctx, kind, last=False):
        """The query node ends the current period now and tells every site node."""
        announcement = self.clock.end(ctx, kind, last)
        if announcement is None:
            return
        size = len(announcement[2]) * self.cfg.synopsis_unit
        for v in self.clock.sites:
            self._send(ctx, v, "control", announcement, size)

    def _learn(self, ctx, first, closes):
        """Period ends arrived: close this node's sites' blocks of every period whose
        end is now known, in order, then run the hops that waited for them."""
        for i, close in enumerate(closes):
            self.periods.learn(first + i, close)
        if not self.periods.known(self.closed):
            return
        for site in self.sites.values():
            site.learned()
        if self.signals is not None:
            self.signals.restart(ctx.now)
        while self.periods.known(self.closed):
            for k in sorted(self.sites):
                self._close(ctx, self.sites[k], self.closed)
            self.closed += 1
        parked, self.parked = self.parked, []
        for hop, args in parked:
            getattr(self, hop)(ctx, *args)

    def _waits(self, hop, args, j) -> bool:
        """Park a hop of period ``j`` until this node knows when ``j`` ended."""
        if self.periods is None or self.periods.known(j):
            return False
        self.parked.append((hop, args))     # by name: programs are pickled
        return True

    def _hop(self, ctx, origin, j, route, partial):
        if self._waits("_hop", (origin, j, route, partial), j):
            return
        out = self.sites[route[0]].join(partial, j, origin)
        if not out:
            return
        rest = route[1:]
        if rest:
            self._send(ctx, self.cfg.stream_nodes[rest[0]], "intermediate",
                     ("hop", origin, j, rest, out), count(out))
        else:
            self._send(ctx, self.cfg.query_node, "result", ("result", out), count(out))

    def _lottery_hop(self, ctx, origin, j, remaining, partial, sender, target):
        if self._waits("_lottery_hop", (origin, j, remaining, partial, sender, target), j):
            return
        out = self.sites[target].join(partial, j, origin)
        self._send(ctx, self.cfg.stream_nodes[sender], "report",
                 ("report", sender, target, count(out)), self.cfg.synopsis_unit)
        if not out:
            return
        if remaining:
            self._lottery_forward(ctx, origin, j, remaining, out, target, "intermediate")
        else:
            self._send(ctx, self.cfg.query_node, "result", ("result", out), count(out))

    def _lottery_forward(self, ctx, origin, j, remaining, partial, at, kind):
        nxt = self.counters[at].choose(remaining, ctx.rng, self.cfg.lottery_draw)
        n = count(partial)
        self.counters[at].sent_to(nxt, n)
        self._send(ctx, self.cfg.stream_nodes[nxt], kind,
                 ("lot", origin, j, remaining - {nxt}, partial, at, nxt), n)

    # ---- synopsis center ------------------------------------------------------------
    def _center_message(self, ctx, msg):
        if msg.payload[0] == "state":
            self.center, self.center_next, self.center_epoch = msg.payload[1], None, None
            self.desk = msg.payload[2]
            pending, self.center_pending = self.center_pending, []
            for m in pending:
                self._center_file(m)
        elif self.center is not None:
            self._center_file(msg)
        elif self.center_next is not None:      # the center moved on: pass it along
            self._send(ctx, self.center_next, msg.kind, msg.payload, msg.size_units)
            return
        else:                                    # the center is on its way here
            self.center_pending.append(msg)
            return
        self._center_run(ctx)

    def _center_file(self, msg):
        if msg.payload[0] == "plan?":
            self.desk.ask(msg.payload[1])
            return
        _, k, j, delta, dec = msg.payload
        self.center.receive(k, j, delta, dec)

    def _center_run(self, ctx):
        cfg = self.cfg
        center = self.center
        while center.ready():
            w = ctx.net.cost_matrix(list(cfg.stream_nodes) + [cfg.query_node])
            for d in center.decide(w):
                ctx.record("hindsight_cost", d.hindsight)
                ctx.record("estimated_cost", d.estimate)
                if self.desk is not None:       # sites fetch their plans: keep it
                    others = tuple(k for k in range(cfg.n) if k != d.site)
                    self.desk.decided(d.site, Plan(d.period, tuple(int(a) for a in d.keep),
                                                   d.order or others))
                    continue
                self._send(ctx, cfg.stream_nodes[d.site], "filter",
                         ("filter", d.site, d.period, d.keep, d.order),
                         plan_size(d.keep, d.order, cfg.synopsis_unit))
        if self.desk is not None:
            for req, plan in self.desk.answers(center.next_period):
                self._send(ctx, req.reply_to, "prefetch" if req.prefetch else "lookup",
                           ("plan", PlanReply(req.site, plan, req.prefetch, req.sent_at)),
                           plan_size(plan.keep, plan.order, cfg.synopsis_unit))
        if ctx.net.epoch_start != self.center_epoch:
            self.center_epoch = ctx.net.epoch_start
            best = ctx.net.center(sorted(set(cfg.stream_nodes)))
            # never move the state across a partition: it would be lost on the way
            if best != self.node and ctx.net.cost(self.node, best) < float("inf"):
                desk = self.desk
                held = center.entries() + (desk.entries() if desk is not None else 0)
                self._send(ctx, best, "synopsis", ("state", center, desk),
                           max(1, held) * cfg.synopsis_unit)
                ctx.record("center_move", 1)
                self.center, self.center_next, self.desk = None, best, None
