"""Node programs of ATR, CTR and the single-host baseline.

A node may hold several roles (a stream source, the diffusion node, a host, the fusion
node); :class:`DistributedJoinNode` holds them and dispatches on the payload type
(:mod:`.messages`) and on the timer tag's first element (the role name).

Roles
-----
- source: sends each tuple of its streams to the diffusion node (kind ``data``); at the
  end of the run it tells the diffusion node how many it sent (:class:`EndOfStream`).
- diffusion: buffers, closes and routes (:class:`AtrDiffusion`, :class:`CtrDiffusion`,
  :class:`SingleDiffusion`); ticks every ``flush`` time units with watermark
  ``tick time - slack``. It closes everything once the run has finished *and* every
  source's end-of-stream has arrived with as many tuples as it announced: tuples sent just
  before the end are still in flight at ``finish``, and closing there would drop them
  (the cause of runs that lost a result or two with no message lost). A tuple message
  lost on the way leaves the last ranges open, so their results are missing too. Tuples
  arriving after their range closed are late: dropped, counted in metric ``late``.
- host: joins (:class:`AtrHost`, :class:`CtrHost`, :class:`SingleHost`); reports its
  measured load to the diffusion node every ``report_interval`` (kind ``report``).
- fusion: emits every group it receives, once per received copy (so a duplicate would
  show in the run's ``duplicates``), with the producing host in column ``host``.

Metrics (source = the algorithm's name), used by :mod:`.overhead`: at the diffusion
node ``closed:<stream>`` (tuples closed), ``copies:<stream>`` (base tuples sent to
hosts), ``late``; ATR ``segment:<master>:<kind>`` (value: its length, one per segment);
ATR and CTR ``window_fired:<kind>`` (a segment ended by its length: ``time``; cut by a
trigger: the condition's kind) and ``segment_cut:<master | grid>``;
at hosts ``probes`` (comparisons), ``cmp:<a>:<b>`` / ``match:<a>:<b>``, and CTR
``inter_made:<stream>:<k>`` / ``inter_sent:<stream>:<k>`` (partials produced for hop
``k``, and copies sent to its hosts).
"""
from __future__ import annotations

from contract.program import NodeProgram
from spark_nodes.algorithms.ctr.diffusion import AtrDiffusion, CtrDiffusion, SingleDiffusion
from spark_nodes.algorithms.ctr.host_trigger import HOST_SENDS, SIGNAL
from spark_nodes.algorithms.ctr.hosts import AtrHost, CtrHost, SingleHost
from spark_nodes.algorithms.ctr.messages import (AtrPart, CtrBase, CtrPartial, EndOfStream,
                                                 Flush, LoadReport, Release, Results)
from spark_nodes.algorithms.ctr.setup import Setup
from spark_nodes.algorithms.enrich.lookups import LookupReply, LookupRequest
from spark_nodes.algorithms.triggers.gate import REPORT
from spark_nodes.workload.tuples import StreamTuple


# -- sources and fusion -------------------------------------------------------------------
class Source:
    """Forwards every tuple produced here to the diffusion node; at the end, says how many."""

    def __init__(self, setup: Setup):
        self.diffusion = setup.diffusion
        self.synopsis_unit = setup.synopsis_unit
        self.sent = 0

    def on_tuple(self, ctx, tup) -> None:
        ctx.send(self.diffusion, "data", tup, tup.size)
        self.sent += 1

    def finish(self, ctx) -> None:
        ctx.send(self.diffusion, "control", EndOfStream(self.sent), self.synopsis_unit)


class Fusion:
    """Emits each received group (members = StreamTuples), tagged with its host."""

    def on_results(self, ctx, msg) -> None:
        for g in msg.payload.groups:
            ctx.emit(g, host=msg.src)


# -- the node program ---------------------------------------------------------------------
_DIFFUSION = {"atr": AtrDiffusion, "ctr": CtrDiffusion, "single": SingleDiffusion}
_HOST = {"atr": AtrHost, "ctr": CtrHost, "single": SingleHost}


class DistributedJoinNode(NodeProgram):
    """One node's roles in a distributed join run.

    Parameters
    ----------
    setup : Setup
    node : int
        The node this program runs on (decides its roles).
    sources : bool
        Whether a stream is produced here.
    """

    def __init__(self, setup: Setup, node: int, sources: bool):
        self.source = Source(setup) if sources else None
        self.diffusion = _DIFFUSION[setup.scheme](setup) if node == setup.diffusion else None
        host = _HOST[setup.scheme]
        self.host = None if node not in setup.hosts else \
            host(setup, node) if host is AtrHost else host(setup)
        self.fusion = Fusion() if node == setup.fusion else None

    def _roles(self):
        return [r for r in (self.diffusion, self.host) if r is not None]

    def start(self, ctx) -> None:
        for role in self._roles():
            role.start(ctx)

    def on_tuple(self, ctx, tup) -> None:
        self.source.on_tuple(ctx, tup)

    def on_message(self, ctx, msg) -> None:
        p = msg.payload
        if msg.kind in (SIGNAL, REPORT):
            self.host.on_signal(ctx, msg)
        elif isinstance(p, StreamTuple):
            self.diffusion.on_tuple_message(ctx, msg)
        elif isinstance(p, EndOfStream):
            self.diffusion.on_end(ctx, msg)
        elif isinstance(p, LoadReport):
            self.diffusion.on_report(ctx, msg)
        elif isinstance(p, Results):
            self.fusion.on_results(ctx, msg)
        elif isinstance(p, AtrPart):
            self.host.on_part(ctx, p)
        elif isinstance(p, CtrBase):
            self.host.on_base(ctx, p)
        elif isinstance(p, CtrPartial):
            self.host.on_partial(ctx, p)
        elif isinstance(p, Release):
            self.host.on_release(ctx, p)
        elif isinstance(p, Flush):
            self.host.on_flush(ctx, p)
        elif isinstance(p, LookupRequest):
            self.diffusion.desk.answer(ctx, p, self.diffusion.s.synopsis_unit)
        elif isinstance(p, LookupReply):
            self.host.on_route(ctx, p)
        else:
            raise TypeError(f"node {ctx.node}: unexpected payload {type(p).__name__}")

    def on_timer(self, ctx, tag) -> None:
        getattr(self, tag[0]).on_timer(ctx, tag)

    def on_lost(self, ctx, msg, reason) -> None:
        # a loss is an exception of the role that sent the message: the diffusion node's
        # parts (its window trigger, a gate watching it), a host's results, load reports
        # and signals (its windows, a gate watching it)
        host = self.host
        host_sent = msg.kind in HOST_SENDS or (
            msg.kind == REPORT and host is not None and host.listens_to_losses())
        role = host if host_sent else self.diffusion
        if role is not None:
            role.on_lost(ctx, msg, reason)

    def listens_to_losses(self) -> bool:
        return any(role.listens_to_losses() for role in self._roles())

    def finish(self, ctx) -> None:
        # a source's end-of-stream first (a local send, delivered at once), then the
        # diffusion node closes, so a host on the same node reports after it
        if self.source is not None:
            self.source.finish(ctx)
        for role in self._roles():
            role.finish(ctx)

    def memory(self) -> tuple[int, int]:
        n = b = 0
        for role in self._roles():
            tn, tb = role.memory()
            n += tn
            b += tb
        return n, b
