"""Checks for the values found in topology files, schedules and specs.

Each check returns the clean value or raises :class:`BadValue` carrying what was
expected; the caller knows *where* the value came from and turns it into a
:class:`~topologies.errors.TopologyFileError` or a spec ``ValueError``.
"""
from __future__ import annotations

import math
import numbers


class BadValue(ValueError):
    """A value failed a check; ``expected`` says what would have passed."""

    def __init__(self, expected: str, got: object):
        self.expected, self.got = expected, got
        super().__init__(f"expected {expected}, got {got!r}")


def _number(value: object, *, from_text: bool) -> float | None:
    """``value`` as a float, or ``None`` when it is not a number (bools are not)."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    if from_text and isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def check_float(value: object, *, low: float = -math.inf, high: float = math.inf,
                low_open: bool = False, allow_inf: bool = False,
                from_text: bool = False) -> float:
    """Return ``value`` as a float within ``[low, high]`` (``(low, high]`` if ``low_open``).

    ``from_text`` also accepts strings such as ``"2.5"`` (CSV cells, GraphML data).
    Infinity passes only with ``allow_inf``; NaN never passes.

    Examples
    --------
    >>> check_float(" 2.5", low=0, from_text=True)
    2.5
    >>> check_float("abc", low=0)
    Traceback (most recent call last):
    ...
    topologies.values.BadValue: expected a number >= 0, got 'abc'
    """
    parts = []
    if low > -math.inf:
        parts.append(f"{'>' if low_open else '>='} {low:g}")
    if high < math.inf:
        parts.append(f"<= {high:g}")
    expected = "a number" + (" " + " and ".join(parts) if parts else "")
    if allow_inf:
        expected += " (or inf)"
    number = _number(value, from_text=from_text)
    if number is None or math.isnan(number):
        raise BadValue(expected, value)
    if math.isinf(number):
        if allow_inf and number > 0:
            return number
        raise BadValue(expected, value)
    too_low = number <= low if low_open else number < low
    if too_low or number > high:
        raise BadValue(expected, value)
    return number


def check_int(value: object, *, low: int | None = None, from_text: bool = False) -> int:
    """Return ``value`` as an int (``>= low`` if given); ``2.0`` and ``True`` are refused.

    Examples
    --------
    >>> check_int("7", from_text=True)
    7
    >>> check_int(2.0)
    Traceback (most recent call last):
    ...
    topologies.values.BadValue: expected an integer, got 2.0
    """
    expected = "an integer" + ("" if low is None else f" >= {low}")
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        number = int(value)
    elif from_text and isinstance(value, str):
        try:
            number = int(value.strip())
        except ValueError:
            raise BadValue(expected, value) from None
    else:
        raise BadValue(expected, value)
    if low is not None and number < low:
        raise BadValue(expected, value)
    return number


#: How each link attribute is checked: keyword arguments for :func:`check_float`.
LINK_ATTRIBUTE_RULES: dict[str, dict] = {
    "cost": {"low": 0.0},
    "delay": {"low": 0.0},
    "jitter": {"low": 0.0},
    "bandwidth": {"low": 0.0, "low_open": True, "allow_inf": True},
    "loss": {"low": 0.0, "high": 1.0},
}


def check_link_attribute(name: str, value: object, *, from_text: bool = False) -> float:
    """Check one link attribute (``cost``, ``delay``, ``jitter``, ``bandwidth``, ``loss``).

    ``None`` as a bandwidth means unlimited and becomes ``inf``.

    Examples
    --------
    >>> check_link_attribute("bandwidth", None)
    inf
    >>> check_link_attribute("loss", 1.5)
    Traceback (most recent call last):
    ...
    topologies.values.BadValue: expected a number >= 0 and <= 1, got 1.5
    """
    if name == "bandwidth" and value is None:
        return math.inf
    return check_float(value, from_text=from_text, **LINK_ATTRIBUTE_RULES[name])


def check_position(value: object) -> tuple[float, float]:
    """Return a node position ``(x, y)`` as two finite floats.

    Examples
    --------
    >>> check_position([0, 1.5])
    (0.0, 1.5)
    """
    expected = "a position [x, y] of two finite numbers"
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise BadValue(expected, value)
    try:
        return (check_float(value[0]), check_float(value[1]))
    except BadValue:
        raise BadValue(expected, value) from None
