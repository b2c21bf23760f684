"""Arrival times of a stream: Poisson, on/off bursts, or a two-state MMPP.

``[streams] pattern`` chooses the process; ``pattern_options`` shape it. Every pattern
keeps the stream's mean rate ``rate``, so runs with different patterns carry the same
load on average and differ in how it is spread:

- ``poisson`` (default): homogeneous Poisson arrivals at ``rate``.
- ``onoff``: alternating on and off periods with exponential lengths of means ``on``
  and ``off`` (default 2 and 6 time units); arrivals only while on, at
  ``rate · (on + off) / on``.
- ``mmpp``: a two-state Markov-modulated Poisson process: a low and a high state with
  exponential sojourns of means ``low_time`` and ``high_time`` (default 6 and 2) and
  the high state ``burst`` times (default 5) as fast as the low one, the two rates
  scaled so that the long-run mean is ``rate``.

Both modulated processes start in a state drawn from their stationary distribution.

>>> rng = np.random.default_rng(1)
>>> ts = arrivals("onoff", 10.0, 400.0, rng, {})
>>> bool(np.all(np.diff(ts) >= 0)), abs(len(ts) / 400.0 - 10.0) < 2.0
(True, True)
>>> arrivals("waves", 1.0, 1.0, rng, {})
Traceback (most recent call last):
...
ValueError: streams.pattern: expected one of mmpp, onoff, poisson, got 'waves'
"""
from __future__ import annotations

import numpy as np

PATTERNS = ("mmpp", "onoff", "poisson")
_OPTIONS = {"poisson": {}, "onoff": {"on": 2.0, "off": 6.0},
            "mmpp": {"low_time": 6.0, "high_time": 2.0, "burst": 5.0}}


def check_pattern(pattern: str, options: dict) -> dict:
    """The pattern's options with defaults filled in; bad ones name their field."""
    if pattern not in PATTERNS:
        raise ValueError(f"streams.pattern: expected one of {', '.join(PATTERNS)}, "
                         f"got {pattern!r}")
    if not isinstance(options, dict):
        raise ValueError(f"streams.pattern_options: expected a table, got {options!r}")
    valid = _OPTIONS[pattern]
    bad = sorted(set(options) - set(valid))
    if bad:
        raise ValueError(f"streams.pattern_options.{bad[0]}: unknown option of pattern "
                         f"{pattern!r}; valid: {', '.join(sorted(valid)) or '(none)'}")
    out = dict(valid, **options)
    for key, value in out.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ValueError(f"streams.pattern_options.{key}: expected a number > 0, "
                             f"got {value!r}")
    if pattern == "mmpp" and out["burst"] < 1:
        raise ValueError(f"streams.pattern_options.burst: expected a number >= 1, "
                         f"got {out['burst']!r}")
    return {k: float(v) for k, v in out.items()}


def _modulated(states: list[tuple[float, float]], start_p: list[float], duration: float,
               rng: np.random.Generator) -> np.ndarray:
    """Arrivals of a process alternating between ``states`` ``(mean sojourn, rate)``."""
    k = int(rng.random() >= start_p[0])
    t, out = 0.0, []
    while t < duration:
        mean, rate = states[k]
        end = min(duration, t + rng.exponential(mean))
        n = rng.poisson(rate * (end - t))
        out.append(rng.uniform(t, end, n))
        t, k = end, 1 - k
    return np.sort(np.concatenate(out)) if out else np.array([])


def arrivals(pattern: str, rate: float, duration: float, rng: np.random.Generator,
             options: dict) -> np.ndarray:
    """Sorted arrival times on ``[0, duration)`` (see the module docstring)."""
    o = check_pattern(pattern, options)
    if pattern == "poisson":
        # given the count, Poisson arrival times are sorted uniform draws
        return np.sort(rng.uniform(0.0, duration, int(rng.poisson(rate * duration))))
    if pattern == "onoff":
        share = o["on"] / (o["on"] + o["off"])
        return _modulated([(o["on"], rate / share), (o["off"], 0.0)], [share], duration, rng)
    p_high = o["high_time"] / (o["low_time"] + o["high_time"])
    low = rate / (1.0 - p_high + p_high * o["burst"])
    return _modulated([(o["low_time"], low), (o["high_time"], low * o["burst"])],
                      [1.0 - p_high], duration, rng)
