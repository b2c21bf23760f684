"""Load programs for measuring the emulated network (benchmarks and tests).

They are node programs (the contract of :mod:`contract.program`, which sits below
:mod:`spark_nodes`); agents run them like any algorithm's programs.

>>> from contract.program import run_node_step
>>> from contract.events import START, Event
>>> out = run_node_step(Flood(dst=3, count=5, burst=2, interval=0.1), 0,
...                     [Event(0.0, 0, START, None)], 0.0, 1.0, None)
>>> len(out.messages), [m.sent_at for m in out.messages][-1]
(5, 0.2)
"""
from __future__ import annotations

from contract.program import NodeProgram


class Flood(NodeProgram):
    """Sends ``count`` messages of ``size_units`` to ``dst``, ``burst`` every ``interval``."""

    def __init__(self, dst: int, count: int, burst: int = 1, interval: float = 0.01,
                 size_units: float = 1.0):
        self.dst, self.count, self.burst = dst, count, burst
        self.interval, self.size_units = interval, size_units
        self.sent = 0

    def start(self, ctx) -> None:
        self.on_timer(ctx, "send")

    def on_timer(self, ctx, tag) -> None:
        for _ in range(min(self.burst, self.count - self.sent)):
            ctx.send(self.dst, "data", self.sent, self.size_units)
            self.sent += 1
        if self.sent < self.count:
            ctx.set_timer(ctx.now + self.interval, "send")

    def on_tuple(self, ctx, tup) -> None:
        raise ValueError(f"Flood at node {ctx.node} takes no tuples")

    def on_message(self, ctx, msg) -> None:
        raise ValueError(f"Flood at node {ctx.node} got a message from {msg.src}")


class Sink(NodeProgram):
    """Counts what arrives; records ``received`` (the message's number) at each arrival."""

    def __init__(self):
        self.received = 0

    def on_tuple(self, ctx, tup) -> None:
        raise ValueError(f"Sink at node {ctx.node} takes no tuples")

    def on_message(self, ctx, msg) -> None:
        self.received += 1
        ctx.record("received", msg.payload)

    def finish(self, ctx) -> None:
        ctx.record("received_total", self.received)
