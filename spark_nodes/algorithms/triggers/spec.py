"""The ``[trigger.<algorithm>]`` spec tables: which conditions fire an operator's windows.

::

    [trigger.qjoin]
    use = "rate"            # a variant below; "clock" (the default): the fixed clock
    poll = 0.1              # how often time-based conditions are checked
    signal = "network"      # how a condition measured elsewhere reaches the operator:
                            # a control message over the network, or "free" (instantly)
    evaluate = "on_arrival" # or "on_window": the operator evaluates only when a window fires
    gate = { upstream = "R1", exception_rate_below = 2.0 }   # optional: see gate.py

    [trigger.qjoin.rate]
    mode = "tumbling"       # or "sliding" (size, slide, slide_by)
    when = "any"            # any | all | k (with k = ...)
    conditions = [
        {kind = "time", above = 4.0},
        {kind = "rate", input = "R1", above = 60.0, interval = 1.0},
        {kind = "exception", type = "link_loss", above = 3, at = "sources"},
    ]

Condition keys: ``kind`` (count | time | rate | deviation | exception), ``above``,
``below``, ``interval``, ``input`` (a stream), ``warmup``, ``direction`` (up | down |
both), ``profile`` (deviation: a CSV file ``time,rate``), ``type`` (exception: one of
:data:`EXCEPTION_TYPES`), ``measure`` (exception: count | rate), ``upstream`` (exception:
node ids counted each on its own, ``need`` of them must reach the thresholds; deviation:
one node), ``of`` (deviation: tuples | exceptions), ``at`` (where it is measured: here,
the operator itself; sources, the stream sources, which signal the operator; for ATR also
hosts, each host for its own window, and siblings, each host for the other hosts, which
it signals: the source's Fig. 7).

Every problem is a ``ValueError`` naming the dotted field.

>>> t = trigger_spec({"use": "burst", "burst": {"conditions": [
...     {"kind": "rate", "above": 40.0, "interval": 0.5}, {"kind": "time", "above": 4}]}},
...     "trigger.qjoin", streams=["R1", "R2"])
>>> t.variant, [c["kind"] for c in t.conditions], t.initiator("here").condition.parts[0].above
('burst', ['rate', 'time'], 40.0)
>>> trigger_spec({"use": "burst"}, "trigger.qjoin", streams=["R1"])
Traceback (most recent call last):
...
ValueError: trigger.qjoin.use: no variant table [trigger.qjoin.burst]
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass, replace
from pathlib import Path

from spark_nodes.algorithms.triggers.conditions import (AllOf, AnyOf, Count, Deviation,
                                                        Elapsed, Exceptions, KOfN, Rate)
from spark_nodes.algorithms.triggers.gate import GateSpec, gate_spec, resolve_upstream
from spark_nodes.algorithms.triggers.windows import MODES, SLIDE_BY, WindowInitiator
from topologies.schema import REQUIRED, Field

#: When an operator evaluates what arrives (``[trigger.<algorithm>] evaluate``).
EVALUATE = ("on_arrival", "on_window")
KINDS = {"count": Count, "time": Elapsed, "rate": Rate, "deviation": Deviation,
         "exception": Exceptions}
#: Where a condition may be measured (``at``): at the operator, at the stream sources
#: (which signal it), at each host for its own window, at each host for its siblings
#: (which it signals). An algorithm lists the places it has (``trigger_places``).
PLACES = ("here", "sources", "hosts", "siblings")
#: The places of an algorithm that lists none: every kind here and at the sources.
DEFAULT_PLACES = {"here": tuple(KINDS), "sources": tuple(KINDS)}
#: Faults an operator observes in this testbed.
EXCEPTION_TYPES = ("dead_node", "no_route", "link_loss", "peer_timeout", "late",
                   "route_change", "operator_error")
_KEYS = {"count": {"above", "below"}, "time": {"above"},
         "rate": {"above", "below", "interval", "input"},
         "deviation": {"above", "interval", "warmup", "direction", "input", "profile", "of",
                       "type", "upstream"},
         "exception": {"above", "below", "type", "measure", "interval", "upstream", "need"}}
#: A ``[trigger.<algorithm>]`` table's own keys; its other keys are variant tables.
TRIGGER_SCHEMA = {
    "use": Field("str", "clock", doc="the variant table in force; \"clock\": the "
                                     "algorithm's fixed clock"),
    "poll": Field("number", 0.1, low=0, low_open=True,
                  doc="how often time-based conditions are checked"),
    "signal": Field("choice", "network", choices=("network", "free"),
                    doc="a condition measured elsewhere reaches the operator as a control "
                        "message, or instantly"),
    "evaluate": Field("choice", "on_arrival", choices=EVALUATE,
                      doc="when the operator evaluates a tuple: at once, or only when a "
                          "window fires (on_window)"),
    "gate": Field("table", None, none=True,
                  doc="{upstream = node or operator, exception_rate_below = r, interval, "
                      "silence, while_shut = buffer | drop}: the operator evaluates only "
                      "while the gate is open (triggers/gate.py)"),
}
#: A variant table ``[trigger.<algorithm>.<variant>]``.
VARIANT_SCHEMA = {
    "mode": Field("choice", "tumbling", choices=MODES, doc="window mode"),
    "size": Field("integer", None, low=1, none=True,
                  doc="sliding: windows of this many units of `slide_by`"),
    "slide": Field("number", 1.0, low=0, low_open=True, doc="sliding: step between windows"),
    "slide_by": Field("choice", "count", choices=SLIDE_BY, doc="sliding: unit of size, slide"),
    "when": Field("choice", "any", choices=("any", "all", "k"),
                  doc="which of the conditions must hold"),
    "k": Field("integer", 1, low=1, doc="when = \"k\": how many"),
    "conditions": Field("list", REQUIRED, doc="condition tables, below"),
}
#: One condition table in a variant's ``conditions`` (which keys each kind takes:
#: ``_KEYS``).
CONDITION_SCHEMA = {
    "kind": Field("choice", REQUIRED, choices=tuple(KINDS), doc="what is measured"),
    "at": Field("choice", "here", choices=PLACES,
                doc="measured at the operator, at the stream sources (which signal it), "
                    "at each host for its own window or at each host for its siblings "
                    "(ATR)"),
    "above": Field("number", None, low=0, none=True, doc="fires above this"),
    "below": Field("number", None, low=0, none=True, doc="fires below this"),
    "interval": Field("number", None, low=0, low_open=True, none=True,
                      doc="rate, deviation, exception: measuring interval"),
    "input": Field("str", None, none=True, doc="rate, deviation: one stream (default all)"),
    "warmup": Field("number", None, low=0, none=True, doc="deviation: history before it "
                                                          "may fire"),
    "direction": Field("choice", None, choices=("up", "down", "both"), none=True,
                       doc="deviation: which way counts"),
    "profile": Field("str", None, none=True, doc="deviation: a CSV file time,rate of the "
                                                 "expected rate"),
    "type": Field("choice", None, choices=EXCEPTION_TYPES, none=True,
                  doc="exception, deviation of exceptions: which fault"),
    "upstream": Field("list", None, none=True,
                      doc="exception: node ids of the operators counted each on its own "
                          "(a list; k of n with `need`); deviation of exceptions: one node"),
    "need": Field("integer", None, low=1, none=True,
                  doc="exception: how many of the `upstream` operators must reach the "
                      "thresholds (default 1)"),
    "of": Field("choice", None, choices=("tuples", "exceptions"), none=True,
                doc="deviation: the rate of tuples (default) or of exceptions"),
    "measure": Field("choice", None, choices=("count", "rate"), none=True,
                     doc="exception: count or rate of faults"),
}
_TOP = set(TRIGGER_SCHEMA)
_VARIANT = set(VARIANT_SCHEMA)


@dataclass(frozen=True)
class TriggerSpec:
    """A resolved ``[trigger.<algorithm>]`` table (picklable: programs keep it)."""

    variant: str = "clock"
    poll: float = 0.1
    signal: str = "network"
    mode: str = "tumbling"
    size: int | None = None
    slide: float = 1.0
    slide_by: str = "count"
    when: str = "any"
    k: int = 1
    conditions: tuple = ()
    gate: GateSpec | None = None
    evaluate: str = "on_arrival"

    @property
    def clock(self) -> bool:
        """The fixed clock (no initiator: the operator keeps its own timer)."""
        return self.variant == "clock"

    def resolved_gate(self, field: str, operators: dict | None) -> "TriggerSpec":
        """This spec with its gate's upstream a node of ``operators`` (``{name: node}``;
        None: the algorithm has no gate)."""
        if self.gate is None:
            return self
        if operators is None:
            raise ValueError(f"{field}: this algorithm's operators cannot be gated")
        node = resolve_upstream(self.gate, field, operators)
        return replace(self, gate=replace(self.gate, upstream=node))

    def measured_at(self, where: str) -> list[dict]:
        return [c for c in self.conditions if c.get("at", "here") == where]

    def initiator(self, where: str = "here", keep: bool = False) -> WindowInitiator | None:
        """A fresh initiator of the conditions measured ``where`` (None if none are)."""
        mine = self.measured_at(where)
        if not mine:
            return None
        parts = [_condition(c) for c in mine]
        if self.when == "all":
            cond = AllOf(parts)
        elif self.when == "k":
            cond = KOfN(min(self.k, len(parts)), parts)
        else:
            cond = AnyOf(parts)
        mode = self.mode if where == "here" else "tumbling"
        return WindowInitiator(cond, mode, self.size, self.slide, self.slide_by, keep=keep)


def _condition(c: dict):
    kwargs = {k: v for k, v in c.items() if k not in ("kind", "at")}
    if "profile" in kwargs:
        kwargs["profile"] = tuple(kwargs["profile"])
    return KINDS[c["kind"]](**kwargs)


def _number(field: str, value, *, positive: bool = False, low: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{field}: expected a number, got {value!r}")
    if positive and value <= 0:
        raise ValueError(f"{field}: expected a number > 0, got {value!r}")
    if low is not None and value < low:
        raise ValueError(f"{field}: expected a number >= {low:g}, got {value!r}")
    return float(value)


def _choice(field: str, value, valid) -> str:
    if value not in valid:
        raise ValueError(f"{field}: expected one of {', '.join(valid)}, got {value!r}")
    return value


def _read_profile(field: str, path, base_dir: Path) -> list:
    path = Path(path) if Path(path).is_absolute() else base_dir / path
    try:
        rows = list(csv.DictReader(path.read_text(encoding="utf-8").splitlines()))
    except FileNotFoundError:
        raise ValueError(f"{field}: no such file: {path}") from None
    try:
        out = sorted((float(r["time"]), float(r["rate"])) for r in rows)
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"{field}: {path}: expected CSV columns time,rate with numbers") \
            from None
    if not out:
        raise ValueError(f"{field}: {path}: expected at least one row")
    return out


def _check_place(field: str, kind: str, where: str, places: dict | None) -> None:
    """An algorithm measures some kinds only at some places (SMJ: tuples at its sites;
    ATR: at its hosts too)."""
    places = DEFAULT_PLACES if places is None else places
    valid = [p for p, kinds in places.items() if kind in kinds]
    if where not in valid:
        raise ValueError(f"{field}.at: a {kind} condition cannot be measured at {where!r} "
                         f"by this algorithm; valid: {', '.join(valid)}")


def _check_condition(field: str, c, streams, base_dir: Path, places=None) -> dict:
    if not isinstance(c, dict):
        raise ValueError(f"{field}: expected a table {{kind = ..., ...}}")
    kind = _choice(f"{field}.kind", c.get("kind"), tuple(KINDS))
    bad = sorted(set(c) - _KEYS[kind] - {"kind", "at"})
    if bad:
        raise ValueError(f"{field}.{bad[0]}: unknown key for kind {kind!r}; valid: "
                         f"{', '.join(sorted(_KEYS[kind] | {'at'}))}")
    out = {"kind": kind, "at": _choice(f"{field}.at", c.get("at", "here"), PLACES)}
    _check_place(field, kind, out["at"], places)
    for key in ("above", "below"):
        if key in c:
            out[key] = _number(f"{field}.{key}", c[key], low=0.0)
    if kind in ("count", "rate", "exception") and "above" not in out and "below" not in out:
        raise ValueError(f"{field}: a {kind} condition needs above or below")
    if kind == "time" and "above" not in out:
        raise ValueError(f"{field}.above: a time condition needs above (time units)")
    for key in ("interval", "warmup"):
        if key in c:
            out[key] = _number(f"{field}.{key}", c[key], positive=key == "interval",
                               low=0.0)
    if "input" in c:
        out["input"] = _choice(f"{field}.input", c["input"], tuple(streams))
    if "direction" in c:
        out["direction"] = _choice(f"{field}.direction", c["direction"],
                                   ("up", "down", "both"))
    if "type" in c:
        out["type"] = _choice(f"{field}.type", c["type"], EXCEPTION_TYPES)
    if "measure" in c:
        out["measure"] = _choice(f"{field}.measure", c["measure"], ("count", "rate"))
    if "profile" in c:
        out["profile"] = _read_profile(f"{field}.profile", c["profile"], base_dir)
    if "of" in c:
        out["of"] = _choice(f"{field}.of", c["of"], ("tuples", "exceptions"))
    if "upstream" in c:
        out["upstream"] = _upstream(f"{field}.upstream", c["upstream"], many=kind == "exception")
    if "need" in c:
        n = len(out.get("upstream", ()))
        need = c["need"]
        if isinstance(need, bool) or not isinstance(need, int) or not 1 <= need <= n:
            raise ValueError(f"{field}.need: expected an integer in 1..{n} (the upstream "
                             f"operators listed), got {need!r}")
        out["need"] = need
    if kind == "deviation" and out.get("of", "tuples") == "tuples" and \
            ({"type", "upstream"} & set(c)):
        raise ValueError(f"{field}.of: type and upstream need of = \"exceptions\"")
    return out


def _upstream(field: str, value, many: bool):
    """Node ids of upstream operators: a list (``many``) or one node."""
    values = value if many and isinstance(value, list) else [value]
    if (not many and isinstance(value, list)) or not values or any(
            isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in values):
        what = "a node id or a non-empty list of node ids" if many else "a node id"
        raise ValueError(f"{field}: expected {what} (integers >= 0), got {value!r}")
    return tuple(values) if many else values[0]


def trigger_spec(table: dict | None, field: str, streams, base_dir: Path = Path("."),
                 places: dict | None = None) -> TriggerSpec:
    """Check a ``[trigger.<algorithm>]`` table; no table is the fixed clock. ``places``:
    ``{at: kinds measured there}`` for an algorithm that cannot measure every kind
    everywhere (None: no limit)."""
    if not table:
        return TriggerSpec()
    if not isinstance(table, dict):
        raise ValueError(f"{field}: expected a table")
    use = table.get("use", "clock")
    variants = {k for k, v in table.items() if isinstance(v, dict) and k not in _TOP}
    bad = sorted(set(table) - _TOP - variants)
    if bad:
        raise ValueError(f"{field}.{bad[0]}: unknown key; valid: {', '.join(sorted(_TOP))} "
                         "and variant tables")
    poll = _number(f"{field}.poll", table.get("poll", 0.1), positive=True)
    signal = _choice(f"{field}.signal", table.get("signal", "network"), ("network", "free"))
    gate = gate_spec(table.get("gate"), f"{field}.gate")
    evaluate = _choice(f"{field}.evaluate", table.get("evaluate", "on_arrival"), EVALUATE)
    if use == "clock":
        return TriggerSpec(poll=poll, signal=signal, gate=gate, evaluate=evaluate)
    if use not in variants:
        raise ValueError(f"{field}.use: no variant table [{field}.{use}]")
    v, at = table[use], f"{field}.{use}"
    bad = sorted(set(v) - _VARIANT)
    if bad:
        raise ValueError(f"{at}.{bad[0]}: unknown key; valid: {', '.join(sorted(_VARIANT))}")
    mode = _choice(f"{at}.mode", v.get("mode", "tumbling"), MODES)
    when = _choice(f"{at}.when", v.get("when", "any"), ("any", "all", "k"))
    conditions = v.get("conditions")
    if not isinstance(conditions, list) or not conditions:
        raise ValueError(f"{at}.conditions: expected a non-empty list of condition tables")
    checked = tuple(_check_condition(f"{at}.conditions[{i}]", c, streams, base_dir, places)
                    for i, c in enumerate(conditions))
    k = v.get("k", 1)
    if when == "k" and (not isinstance(k, int) or not 1 <= k <= len(checked)):
        raise ValueError(f"{at}.k: expected an integer in 1..{len(checked)}, got {k!r}")
    size = v.get("size")
    if mode == "sliding" and (not isinstance(size, int) or size < 1):
        raise ValueError(f"{at}.size: a sliding window needs a size (integer >= 1)")
    return TriggerSpec(variant=use, poll=poll, signal=signal, mode=mode, size=size,
                       slide=_number(f"{at}.slide", v.get("slide", 1.0), positive=True),
                       slide_by=_choice(f"{at}.slide_by", v.get("slide_by", "count"),
                                        SLIDE_BY),
                       when=when, k=k, conditions=checked, gate=gate, evaluate=evaluate)


def rate_profile(times, duration: float, interval: float = 1.0) -> list[tuple[float, float]]:
    """``[(start, tuples per time unit)]`` over consecutive intervals of ``interval``:
    the rate profile a deviation condition's ``profile`` file holds.

    >>> rate_profile([0.1, 0.2, 1.5], duration=2.0, interval=1.0)
    [(0.0, 2.0), (1.0, 1.0)]
    """
    edges = [k * interval for k in range(int(math.ceil(duration / interval)) + 1)]
    counts = [0] * (len(edges) - 1)
    for t in times:
        k = int(t // interval)
        if 0 <= k < len(counts):
            counts[k] += 1
    return [(edges[k], counts[k] / interval) for k in range(len(counts))]
