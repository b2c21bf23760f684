"""The centralized join: every source ships its tuples to the query node, which joins.

The baseline every distributed algorithm is compared with. Each source node sends each
tuple (or a batch of ``batch`` tuples) to the query node as a ``data`` message of
``size_units`` = the tuples' sizes; the query node runs a
:class:`~spark_nodes.algorithms.multiway.MultiwayJoin` and emits every group it completes. With
``retention = none`` (the default) nothing is dropped, so the answer equals the exact
answer whatever the network does to the arrival order (as long as nothing is lost).

Parameters (``[params.centralized]``):

- ``batch`` (int, default 1): tuples per message; an unfilled batch is sent at the end
  of the run.
- ``retention`` (float or none, default none): allowed lateness in event time at the
  query node (see :class:`~spark_nodes.algorithms.multiway.MultiwayJoin`).

Examples
--------
>>> sorted(Centralized.params), Centralized.params["batch"].default
(['batch', 'retention'], 1)
"""

from __future__ import annotations

from contract.program import NodeProgram
from contract.state import StateList
from spark_nodes.algorithms.multiway import MultiwayJoin
from spark_nodes.algorithms.registry import ALGORITHMS, Algorithm, Param


class CentralizedNode(NodeProgram):
    """One node of the centralized join: a source, the query node, or both.

    Parameters
    ----------
    query_node : int
        Where tuples are sent.
    join : MultiwayJoin or None
        The join engine (query node only).
    batch : int
        Tuples per ``data`` message sent by a source.
    bytes_per_unit : int
        Bytes of one data unit (memory accounting of batches being filled).

    Examples
    --------
    >>> from contract.program import run_node_step
    >>> from contract.events import TUPLE, Event
    >>> from spark_nodes.workload.tuples import StreamTuple
    >>> src = CentralizedNode(query_node=5, join=None, batch=2)
    >>> t = StreamTuple("R1", 0, 0.0, 1, None, None, 0)
    >>> out = run_node_step(src, 0, [Event(0.0, 0, TUPLE, t)], 0.0, 1.0, None, seed=1)
    >>> out.messages, src.memory()
    ([], (1, 32))
    """

    def __init__(self, query_node: int, join: MultiwayJoin | None, batch: int = 1,
                 bytes_per_unit: int = 32):
        self.query_node = query_node
        self.join = join
        self.batch = batch
        self.bytes_per_unit = bytes_per_unit
        self.pending = StateList(rows="tuple")   # tuples of the batch being filled

    def on_tuple(self, ctx, tup) -> None:
        if self.join is not None:           # a source at the query node joins at once
            self._join(ctx, tup)
            return
        if self.batch == 1:                 # nothing to batch: no state to keep either
            ctx.send(self.query_node, "data", (tup,), tup.size)
            return
        self.pending.append(tup)
        if len(self.pending) >= self.batch:
            self._flush(ctx)

    def on_message(self, ctx, msg) -> None:
        if msg.kind != "data" or self.join is None:
            raise ValueError(f"centralized node {ctx.node}: unexpected {msg.kind!r} message "
                             f"from node {msg.src}")
        for tup in msg.payload:
            self._join(ctx, tup)

    def finish(self, ctx) -> None:
        self._flush(ctx)

    def receives_messages(self) -> bool:
        """Only the query node receives (a source sends and is never sent to)."""
        return self.join is not None

    def sends_messages(self) -> bool:
        """Only sources send (the query node joins what reaches it)."""
        return self.join is None

    def takes_tuple_spans(self) -> bool:
        """A source that ships each tuple as it comes (``batch = 1``) takes its tuples
        by the span (``emulator.tuple_spans``), through the default ``on_tuples`` loop;
        one that fills batches keeps them in memory, whose samples need its steps."""
        return self.join is None and self.batch == 1

    def memory(self) -> tuple[int, int]:
        units = sum(t.size for t in self.pending)
        n, nbytes = self.join.buffered() if self.join is not None else (0, 0)
        return n + len(self.pending), nbytes + int(round(units * self.bytes_per_unit))

    def _join(self, ctx, tup) -> None:
        for group in self.join.insert(tup):
            ctx.emit(group)

    def _flush(self, ctx) -> None:
        if self.pending:
            batch = tuple(self.pending)
            self.pending.clear()
            ctx.send(self.query_node, "data", batch, sum(t.size for t in batch))


class Centralized(Algorithm):
    """Ship everything to the query node and join there."""

    name = "centralized"
    family = "centralized"
    params = {
        "batch": Param((int,), 1, "tuples per data message (>= 1)", low=1),
        "retention": Param((float, type(None)), None,
                           "allowed lateness at the query node; none keeps every tuple",
                           low=0, allow_inf=True),
    }

    def programs(self, plan) -> dict:
        """A :class:`CentralizedNode` at every source node and at the query node."""
        batch, retention = plan.params["batch"], plan.params["retention"]
        q = plan.query
        names = [s.name for s in plan.streams]
        progs = {}
        for node in sorted({s.node for s in plan.streams} | {q.node}):
            join = None
            if node == q.node:
                join = MultiwayJoin(names, q.windows, q.predicate, q.theta, retention,
                                    plan.bytes_per_unit)
            progs[node] = CentralizedNode(q.node, join, batch, plan.bytes_per_unit)
        return progs


ALGORITHMS.register(Centralized.name, Centralized())
