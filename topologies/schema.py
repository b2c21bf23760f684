"""One validation layer: every value a user hands in is checked against a :class:`Field`.

A field says what a value must be (its kind, range, whether ``none`` is allowed), its
default, and one line of meaning. A schema is a ``{key: Field}`` table. The same
schemas check spec tables, topology files, graphs and frames given to the Python API,
and generate the field reference in ``docs/SPEC.md``, so the checks and the documentation
cannot drift apart.

Why not pydantic or attrs validators: the testbed's inputs are plain TOML tables,
JSON documents, networkx attribute dictionaries and pandas columns, and its errors are
one line that names the file, the dotted field and what was expected
(``quick.toml: run.step: expected a number > 0, got -1``). pydantic's errors are
multi-line reports whose locations and wording would have to be rewritten anyway, and
its models would sit beside, not replace, the dictionaries every layer passes on; the
checks here are short and are the ones :mod:`topologies.values` already used.

Examples
--------
>>> schema = {"duration": Field("number", 10.0, low=0, low_open=True, doc="run length"),
...           "medium": Field("choice", "links", choices=("links", "shared"))}
>>> check_table(schema, {"duration": 5}, "run")
{'duration': 5.0, 'medium': 'links'}
>>> check_table(schema, {"duration": -1}, "run")
Traceback (most recent call last):
...
topologies.schema.FieldError: run.duration: expected a number > 0, got -1
>>> check_table(schema, {"duraton": 5}, "run")
Traceback (most recent call last):
...
topologies.schema.FieldError: run.duraton: unknown key; valid: duration, medium
"""
from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from topologies.values import BadValue, check_float, check_int, check_position

#: The default of a field that has none: the key must be given.
REQUIRED = type("Required", (), {"__repr__": lambda self: "REQUIRED"})()

KINDS = ("number", "integer", "seed", "bool", "str", "table", "choice", "position", "list")


class FieldError(ValueError):
    """A value that failed its field: ``field: what was expected``.

    >>> str(FieldError("run.step", "expected a number > 0, got 0"))
    'run.step: expected a number > 0, got 0'
    """

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message

    def __reduce__(self):
        return (type(self), (self.field, self.message))


@dataclass(frozen=True)
class Field:
    """What one value must be.

    Parameters
    ----------
    kind : str
        One of :data:`KINDS`: ``number`` (a float; ``low``/``high`` bound it), ``integer``,
        ``seed`` (an integer >= 0), ``bool``, ``str`` (non-empty), ``table``, ``choice``
        (one of ``choices``), ``position`` (``[x, y]``), ``list``.
    default : object
        Used when the key is absent; :data:`REQUIRED` when it must be given.
    low, high, low_open, allow_inf
        The range of a number (``low_open``: ``> low`` instead of ``>= low``; infinity
        passes only with ``allow_inf``, written ``"inf"`` in TOML and JSON).
    none : bool
        ``None`` (or the string ``"none"``) is a valid value too.
    choices : tuple
        The valid values of a ``choice``.
    doc : str
        One line on what the value means (the field reference prints it).

    Examples
    --------
    >>> Field("number", 0.0, low=0, high=1).check(0.25)
    0.25
    >>> Field("number", None, low=0, none=True).check("none") is None
    True
    >>> Field("seed", 1).expected
    'a non-negative integer (numpy seeds cannot be negative)'
    """

    kind: str
    default: Any = REQUIRED
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    allow_inf: bool = False
    none: bool = False
    choices: tuple = ()
    doc: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"Field.kind: expected one of {', '.join(KINDS)}, "
                             f"got {self.kind!r}")

    @property
    def expected(self) -> str:
        """What a valid value is, in the words of the error messages."""
        return self._expected_value + (" or none" if self.none else "")

    @property
    def _expected_value(self) -> str:
        if self.kind == "number":
            parts = []
            if self.low is not None:
                parts.append(f"{'>' if self.low_open else '>='} {self.low:g}")
            if self.high is not None:
                parts.append(f"<= {self.high:g}")
            text = "a number" + (" " + " and ".join(parts) if parts else "")
            return text + (" (or inf)" if self.allow_inf else "")
        if self.kind == "integer":
            bounds = ([] if self.low is None else [f">= {self.low:g}"]) + \
                ([] if self.high is None else [f"<= {self.high:g}"])
            return "an integer" + (" " + " and ".join(bounds) if bounds else "")
        return {"seed": "a non-negative integer (numpy seeds cannot be negative)",
                "bool": "true or false", "str": "a non-empty string", "table": "a table",
                "choice": "one of " + ", ".join(map(str, self.choices)),
                "position": "a position [x, y] of two finite numbers",
                "list": "a list"}[self.kind]

    def check(self, value: object) -> Any:
        """``value`` cleaned (numbers as float, ``"inf"`` as infinity), or
        :class:`~topologies.values.BadValue` naming what was expected. A numpy scalar
        is checked as the Python value it holds (:func:`plain`)."""
        value = plain(value)
        if self.none and (value is None or value == "none"):
            return None
        if self.kind == "number":
            if self.allow_inf and value in ("inf", "+inf"):
                value = math.inf   # JSON cannot spell infinity; a resolved spec writes "inf"
            try:
                return check_float(value, low=-math.inf if self.low is None else self.low,
                                   high=math.inf if self.high is None else self.high,
                                   low_open=self.low_open, allow_inf=self.allow_inf)
            except BadValue:
                raise BadValue(self.expected, value) from None
        if self.kind == "seed":
            number = check_int(value)   # 1.5: "expected an integer"
            if number < 0:
                raise BadValue(self.expected, value)
            return number
        if self.kind == "integer":
            try:
                number = check_int(value, low=None if self.low is None else int(self.low))
            except BadValue:
                raise BadValue(self.expected, value) from None
            if self.high is not None and number > self.high:
                raise BadValue(self.expected, value)
            return number
        if self.kind == "position":
            return check_position(value)
        valid = {"bool": lambda v: isinstance(v, bool),
                 "str": lambda v: isinstance(v, str) and bool(v),
                 "table": lambda v: isinstance(v, Mapping),
                 "list": lambda v: isinstance(v, list),
                 "choice": lambda v: isinstance(v, (str, int, float)) and v in self.choices}
        if not valid[self.kind](value):
            raise BadValue(self.expected, value)
        return value

    @property
    def type_text(self) -> str:
        """The kind and range as the field reference prints them."""
        text = self._expected_value.removeprefix("a ").removeprefix("an ")
        if self.kind == "choice":
            text = " \\| ".join(f"`{c}`" for c in self.choices)
        return text + (" or `none`" if self.none else "")

    @property
    def default_text(self) -> str:
        """The default as the field reference prints it."""
        if self.default is REQUIRED:
            return "required"
        if self.default is None:
            return "none"
        if isinstance(self.default, bool):
            return str(self.default).lower()
        if isinstance(self.default, float) and math.isinf(self.default):
            return "inf"
        return f'`"{self.default}"`' if isinstance(self.default, str) else str(self.default)


def plain(value: object) -> object:
    """A numpy scalar as the Python value it holds (what a graph or frame built from
    arrays carries: ``np.bool_`` is no ``bool``, and ``np.float64(1.0)`` should read
    ``1.0`` in a message); anything else as it is.

    >>> plain(np.int64(3)), plain(np.True_), plain("a")
    (3, True, 'a')
    """
    return value.item() if isinstance(value, np.generic) else value


def check_value(field: str, rule: Field, value: object) -> Any:
    """``rule.check(value)``, its error turned into a :class:`FieldError` naming ``field``.

    >>> check_value("topology.loss", Field("number", low=0, high=1), 2)
    Traceback (most recent call last):
    ...
    topologies.schema.FieldError: topology.loss: expected a number >= 0 and <= 1, got 2
    """
    try:
        return rule.check(value)
    except BadValue as bad:
        raise FieldError(field, str(bad)) from None


def check_table(schema: Mapping[str, Field], given: object, where: str, *,
                fill_defaults: bool = True) -> dict:
    """Check a table against ``schema``: unknown keys, missing required keys, values.

    Returns the clean table with defaults filled in (``fill_defaults``) for absent keys.
    """
    if not isinstance(given, Mapping):
        raise FieldError(where, f"expected a table, got {given!r}")
    unknown = sorted(set(given) - set(schema), key=str)
    if unknown:
        raise FieldError(f"{where}.{unknown[0]}",
                         f"unknown key; valid: {', '.join(sorted(schema))}")
    clean = {}
    for key, rule in schema.items():
        if key in given:
            clean[key] = check_value(f"{where}.{key}", rule, given[key])
        elif rule.default is REQUIRED:
            raise FieldError(f"{where}.{key}", f"required ({rule.expected})")
        elif fill_defaults:
            clean[key] = copy.deepcopy(rule.default)
    return clean


def cell(text: str) -> str:
    """``text`` safe inside a Markdown table cell (a ``|`` would end the cell).

    >>> cell("mask | product")
    'mask \\\\| product'
    """
    return text.replace("|", "\\|")


def reference_table(schema: Mapping[str, Field], prefix: str = "") -> str:
    """A Markdown table of ``schema``: key, type and range, default, meaning.

    >>> print(reference_table({"seed": Field("seed", 1, doc="seeds every draw")}, "run."))
    | key | type and range | default | meaning |
    |---|---|---|---|
    | `run.seed` | non-negative integer (numpy seeds cannot be negative) | 1 | seeds every draw |
    """
    lines = ["| key | type and range | default | meaning |", "|---|---|---|---|"]
    for key, rule in schema.items():
        lines.append(f"| `{prefix}{key}` | {rule.type_text} | {rule.default_text} | "
                     f"{cell(rule.doc)} |")
    return "\n".join(lines)
