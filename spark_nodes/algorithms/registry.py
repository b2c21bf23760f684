"""The registry of algorithms: names map to plug-ins; unknown or duplicate names fail loudly.

An algorithm declares its parameters (type, range, default, help) so a spec can be
validated before anything runs, and builds one :class:`~contract.program.NodeProgram`
per node that has a role. A parameter's range is a :class:`topologies.schema.Field`, the
project's one validation layer, so its error and its line in the field reference use
the same words as every other input's.

>>> sorted(p for p in Algorithm.params)
[]
>>> validate_params(Toy(), {"batch": 4})
{'batch': 4, 'label': 'x'}
>>> validate_params(Toy(), {"bach": 4})
Traceback (most recent call last):
...
ValueError: params.toy.bach: unknown parameter; valid: batch, label
>>> validate_params(Toy(), {"batch": 0})
Traceback (most recent call last):
...
ValueError: params.toy.batch: expected an integer >= 1, got 0
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from contract.registry import Registry
from topologies.schema import Field
from topologies.values import BadValue

#: Modules that register algorithms when imported (:data:`ALGORITHMS` loads them lazily so
#: that importing one family never pays for the others).
PLUGIN_MODULES = (
    "spark_nodes.algorithms.centralized",
    "spark_nodes.algorithms.smj.algorithms",
    "spark_nodes.algorithms.qjoin.algorithms",
    "spark_nodes.algorithms.ctr.algorithms",
    "spark_nodes.algorithms.enrich.algorithms",
)


#: How the field reference names a parameter's types when it declares no range.
_TYPE_NAMES = {int: "integer", float: "number", bool: "bool", str: "string", list: "list",
               dict: "table", type(None): "`none`"}


@dataclass(frozen=True)
class Param:
    """One algorithm parameter: accepted types, default, a line of help and its range.

    ``types`` may include ``type(None)`` where "none" is a meaningful value (none then
    passes the range too). The range of a number (``int`` or ``float`` in ``types``) is
    ``low``/``high`` (``low_open``: ``> low``; infinity passes only with ``allow_inf``);
    that of a string is ``choices``. Without either, any value of the types passes.

    Examples
    --------
    >>> Param((int,), 1, low=1).expected
    'an integer >= 1'
    >>> Param((float, type(None)), None, low=0, allow_inf=True).type_text
    'number >= 0 (or inf) or `none`'
    >>> Param((str,), "mask", choices=("mask", "product")).expected
    'one of mask, product'
    >>> Param((list, type(None)), None).type_text
    'list or `none`'
    """

    types: tuple
    default: Any
    help: str = ""
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    allow_inf: bool = False
    choices: tuple = ()

    def __post_init__(self):
        ranged = self.low is not None or self.high is not None
        if ranged and not {int, float} & set(self.types):
            raise ValueError(f"Param: low/high bound a number, not {self.types}")
        if self.choices and str not in self.types:
            raise ValueError(f"Param: choices are strings, not {self.types}")

    @cached_property
    def field(self) -> Field | None:
        """The range as a :class:`~topologies.schema.Field` (None: no range); built once,
        read at every check of the parameter."""
        if self.choices:
            kind = "choice"
        elif self.low is not None or self.high is not None:
            kind = "number" if float in self.types else "integer"
        else:
            return None
        return Field(kind, self.default, low=self.low, high=self.high,
                     low_open=self.low_open, allow_inf=self.allow_inf,
                     none=type(None) in self.types, choices=self.choices, doc=self.help)

    @property
    def expected(self) -> str:
        """What a valid value is, in the words of the error messages."""
        return self.types_expected if self.field is None else self.field.expected

    @property
    def types_expected(self) -> str:
        """The accepted types, in the words of the error messages (``int or none``)."""
        return " or ".join("none" if t is type(None) else t.__name__ for t in self.types)

    @property
    def type_text(self) -> str:
        """The type and range as the field reference prints them."""
        if self.field is not None:
            return self.field.type_text
        return " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in self.types)


class Algorithm:
    """Base class of algorithm plug-ins (see docs/DESIGN.md)."""

    name: str = ""
    #: The family it belongs to; ``analysis.families`` knows every family and which
    #: report section draws it.
    family: str = ""
    #: Whether it may fetch what it needs (plans, routes) as lookups, so the enrichment
    #: report section also draws its runs.
    lookups: bool = False
    params: dict[str, Param] = {}
    #: Whether a ``[trigger.<name>]`` table can drive this algorithm's windows
    #: (:mod:`spark_nodes.algorithms.triggers`); others run on their fixed clock only.
    triggered: bool = False
    #: Where a trigger's conditions may be measured (``at``) and which kinds each place
    #: sees; None: here and at the sources, every kind.
    trigger_places: dict | None = None

    #: The ``[trigger.<name>] evaluate`` modes its operators support.
    evaluate_modes: tuple = ("on_arrival",)

    def gate_operators(self, stream_nodes: dict, query_node: int, *, net0=None,
                       params: dict | None = None, seed: int = 0) -> dict | None:
        """``{name: node}`` of the operators a ``[trigger.<name>] gate`` may watch
        (:mod:`spark_nodes.algorithms.triggers.gate`); None: this algorithm has no gate.
        ``net0`` (the network at time 0), ``params`` (checked) and ``seed`` for an
        algorithm that places its operators itself (ATR's diffusion node and hosts)."""
        return None

    def programs(self, plan) -> dict:
        """Return ``{node: NodeProgram}`` for every node with a role."""
        raise NotImplementedError(f"{type(self).__name__} must build its node programs")

    def exact_answer(self, plan, tuples_by_stream) -> set[str]:
        """Groups the query should produce (default: the windowed multi-way join)."""
        from spark_nodes.algorithms.oracle import exact_groups

        q = plan.query
        return exact_groups(tuples_by_stream, q.windows, q.predicate, q.theta)

    def exact_answer_of_run(self, plan, tuples_by_stream, metrics) -> set[str]:
        """The exact answer of a finished run, for algorithms whose answer depends on
        decisions the run recorded in ``metrics`` (SMJ's periods ended by a trigger);
        default: :meth:`exact_answer`."""
        return self.exact_answer(plan, tuples_by_stream)

    def summarize(self, plan, run) -> dict:
        """Extra summary keys computed from the finished run (default: none)."""
        return {}

    #: The file ``after_run`` may write into the run folder (None: it has no pass).
    after_run_output: str | None = None

    def after_run(self, plan, output, previous, scratch) -> dict:
        """A pass over the finished run in the driver's process, after the node programs
        ran on either runtime (``spark-join``: Spark's own query over the arrivals its
        join node recorded). It may add rows to ``output.results`` and
        ``output.metrics``; ``previous`` is where a run of the same spec left
        :attr:`after_run_output` (it may be missing), ``scratch`` a folder of its own that
        the runner removes afterwards. Returns files for the run folder,
        ``{name: bytes}``. Default: no pass."""
        return {}

    def prepare(self, spec: dict, run_first) -> dict:
        """The resolved spec to plan this run with, after the runs it depends on (a
        training run whose trace it learns from). ``run_first(spec)`` runs another
        resolved spec, once per output folder, and returns its finished run (an
        :class:`experiments.store.Run`). Default: ``spec`` as it is."""
        return spec


class Toy(Algorithm):
    """A two-parameter algorithm used by the doctest above."""

    name = "toy"
    params = {"batch": Param((int,), 1, "tuples per message", low=1),
              "label": Param((str,), "x")}


#: The registered algorithms, by name (each plug-in module registers its own).
ALGORITHMS = Registry("algorithm", plugins=PLUGIN_MODULES)


def _accepts(param: Param, value) -> bool:
    if value is None:
        return type(None) in param.types
    if isinstance(value, bool):
        return bool in param.types
    if float in param.types and isinstance(value, int):
        return True
    if float in param.types and isinstance(value, str) and value in ("inf", "-inf"):
        return True
    return isinstance(value, tuple(t for t in param.types if t is not type(None)))


def check_param(algorithm: str, params: dict, key: str, ok: bool, expected: str) -> None:
    """Raise ``params.<algorithm>.<key>: expected ..., got ...`` unless ``ok``.

    >>> check_param("toy", {"batch": 0}, "batch", False, "an integer >= 1")
    Traceback (most recent call last):
    ...
    ValueError: params.toy.batch: expected an integer >= 1, got 0
    """
    if not ok:
        raise ValueError(f"params.{algorithm}.{key}: expected {expected}, got {params[key]!r}")


def check_range(algorithm: str, key: str, param: Param, value) -> None:
    """Raise ``params.<algorithm>.<key>: expected ..., got ...`` unless ``value`` is in
    ``param``'s range (a value of its types; :func:`validate_params` checks those first).

    >>> check_range("toy", "batch", Toy.params["batch"], 0)
    Traceback (most recent call last):
    ...
    ValueError: params.toy.batch: expected an integer >= 1, got 0
    """
    if param.field is not None:
        try:
            param.field.check(value)
        except BadValue as bad:
            raise ValueError(f"params.{algorithm}.{key}: {bad}") from None


def validate_params(algorithm: Algorithm, given: dict) -> dict:
    """Defaults overlaid with ``given``; unknown names, wrong types and values out of
    their range raise ValueError naming ``params.<algorithm>.<name>``."""
    out = {k: p.default for k, p in algorithm.params.items()}
    for key, value in given.items():
        field = f"params.{algorithm.name}.{key}"
        if key not in algorithm.params:
            raise ValueError(f"{field}: unknown parameter; valid: "
                             f"{', '.join(sorted(algorithm.params)) or '(none)'}")
        param = algorithm.params[key]
        if not _accepts(param, value):
            raise ValueError(f"{field}: expected {param.types_expected}, got {value!r}")
        if isinstance(value, str) and float in param.types and value in ("inf", "-inf"):
            value = float(value)  # TOML has inf, but JSON specs spell it as a string
        elif isinstance(value, int) and not isinstance(value, bool) \
                and float in param.types and int not in param.types:
            value = float(value)
        check_range(algorithm.name, key, param, value)
        out[key] = value
    return out
