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

from dataclasses import dataclass

from topologies.schema import Field, FieldError, check_table


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
        """Validate a ``[mininet]`` table against :data:`MININET_SCHEMA`; errors name
        ``source`` and the field."""
        try:
            opts = check_table(MININET_SCHEMA, {} if table is None else table, "mininet")
            if opts["spark_workers"] and opts["spark_master"] is None:
                raise FieldError("mininet.spark_workers", "expected a list of node ids "
                                 f"(with spark_master set), got {opts['spark_workers']!r}")
            bad = [w for w in opts["spark_workers"] if not _is_int(w)]
            if bad:
                raise FieldError("mininet.spark_workers", f"expected a list of node ids, "
                                 f"got {opts['spark_workers']!r}")
        except FieldError as err:
            raise ValueError(f"{source}: {err}") from None
        return cls(opts["time_scale"], opts["shaping"], opts["agent_timeout"], opts["port"],
                   opts["spark_master"], tuple(opts["spark_workers"]))


#: The ``[mininet]`` table (``docs/SPEC.md`` is generated from it).
MININET_SCHEMA = {
        "agent_timeout": Field("number", 120.0, low=0, low_open=True,
                               doc="wall seconds the node agents have to start"),
        "port": Field("integer", 7100, low=1024, high=65535,
                      doc="TCP port the agents listen on (at their node address)"),
        "shaping": Field("choice", "auto", choices=("auto", "netem", "tun"),
                         doc="delay shaping: netem where the kernel has it, else TUN"),
        "spark_master": Field("integer", None, none=True,
                              doc="node whose host runs a Spark standalone master"),
        "spark_workers": Field("list", [], doc="nodes whose hosts run Spark workers"),
        "time_scale": Field("number", 1.0, low=0, low_open=True,
                            doc="wall seconds per virtual time unit"),
}


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
