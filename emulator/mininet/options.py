"""Options of the Mininet backend: the ``[mininet]`` table of a spec.

>>> opts = MininetOptions.from_table({"time_scale": 0.5}, source="demo.toml")
>>> opts.time_scale, opts.shaping
(0.5, 'auto')
>>> MininetOptions.from_table({"timescale": 1}, source="demo.toml")
Traceback (most recent call last):
...
ValueError: demo.toml: mininet.timescale: unknown key; valid: agent_timeout, port, shaping, spark_master, spark_workers, time_scale
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields


@dataclass(frozen=True)
class MininetOptions:
    """How a run is emulated.

    Attributes
    ----------
    time_scale : wall seconds per virtual time unit (a link delay of 0.01 units at
        time_scale 1.0 is 10 ms on the wire).
    shaping : ``"auto"`` (netem if the kernel has it, else TUN shapers), ``"netem"``, ``"tun"``.
    agent_timeout : wall seconds the node agents have to start; more fails the run.
    port : TCP port the agents listen on (at their node address).
    spark_master, spark_workers : nodes whose hosts run a Spark standalone master and
        workers (:func:`emulator.mininet.spark_cluster.emulated_spark`); None / [] = none.
    """

    time_scale: float = 1.0
    shaping: str = "auto"
    agent_timeout: float = 120.0
    port: int = 7100
    spark_master: int | None = None
    spark_workers: tuple[int, ...] = ()

    @classmethod
    def from_table(cls, table: dict | None, source: str = "<spec>") -> "MininetOptions":
        """Validate a ``[mininet]`` table; errors name ``source`` and the field."""
        table = {} if table is None else table
        valid = sorted(f.name for f in fields(cls))
        for key in sorted(table):
            if key not in valid:
                raise ValueError(f"{source}: mininet.{key}: unknown key; valid: "
                                 f"{', '.join(valid)}")
        opts = cls(**table)
        checks = [
            ("time_scale", isinstance(opts.time_scale, (int, float))
             and not isinstance(opts.time_scale, bool) and math.isfinite(opts.time_scale)
             and opts.time_scale > 0, "a number > 0"),
            ("shaping", opts.shaping in ("auto", "netem", "tun"), "auto, netem or tun"),
            ("agent_timeout", isinstance(opts.agent_timeout, (int, float))
             and not isinstance(opts.agent_timeout, bool) and opts.agent_timeout > 0,
             "a number > 0"),
            ("port", isinstance(opts.port, int) and not isinstance(opts.port, bool)
             and 1024 <= opts.port <= 65535, "an integer port in 1024..65535"),
            ("spark_master", opts.spark_master is None or _is_int(opts.spark_master),
             "a node id"),
            ("spark_workers", isinstance(opts.spark_workers, (list, tuple))
             and all(_is_int(w) for w in opts.spark_workers)
             and (opts.spark_master is not None or not opts.spark_workers),
             "a list of node ids (with spark_master set)"),
        ]
        for name, ok, expected in checks:
            if not ok:
                raise ValueError(f"{source}: mininet.{name}: expected {expected}, "
                                 f"got {getattr(opts, name)!r}")
        return cls(float(opts.time_scale), opts.shaping, float(opts.agent_timeout), opts.port,
                   opts.spark_master, tuple(opts.spark_workers))


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
