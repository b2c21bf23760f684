"""How an operator's windows answer bursts and faults: the triggers section's "bursts
handled sooner" and "work skipped while an upstream operator fails" (docs/ALGORITHMS.md#triggers).

A burst starts where the input rate, counted in bins of ``bin_width``, reaches
``factor`` times the run's mean rate after a bin below it; its onset is the first
arrival in that bin. The reaction is the time from the onset to the first window fired
at or after it (bursts after the last window are left out).

>>> import numpy as np
>>> calm = np.arange(0.5, 10.0, 1.0)                      # 1 per time unit
>>> burst = 4.2 + np.arange(10) * 0.05                    # 20 per time unit at 4.2
>>> onsets = burst_onsets(np.sort(np.r_[calm, burst]), bin_width=0.5)
>>> [round(t, 2) for t in onsets]
[4.2]
>>> round(reaction(onsets, fired=[1.0, 2.0, 4.5, 6.0]), 6)
0.3

Node 7 is down in ``[3, 5)``: two windows in those 2 time units (1 per time unit), three
in the other 8 (0.375 per time unit):

>>> while_down([1.0, 2.0, 3.5, 4.5, 8.0], outages=[(7, 3.0, 5.0)], duration=10.0)
(1.0, 0.375)
"""
from __future__ import annotations

import math

import numpy as np

#: A bin at this many times the mean rate is part of a burst.
FACTOR = 2.0


def burst_onsets(arrivals, bin_width: float = 0.5, factor: float = FACTOR) -> list[float]:
    """Onsets of the bursts in sorted arrival times (see the module docstring)."""
    arrivals = np.asarray(arrivals, dtype=float)
    if arrivals.size < 2:
        return []
    end = float(arrivals.max())
    edges = np.arange(0.0, end + bin_width, bin_width)
    counts, _ = np.histogram(arrivals, edges)
    mean = arrivals.size / max(end, bin_width)
    high = counts / bin_width >= factor * mean
    onsets = []
    for k in np.flatnonzero(high):
        if k == 0 or not high[k - 1]:
            first = np.searchsorted(arrivals, edges[k])
            onsets.append(float(arrivals[first]))
    return onsets


def reaction(onsets, fired) -> float:
    """Mean time from a burst's onset to the next window (NaN without one)."""
    fired = np.sort(np.asarray(fired, dtype=float))
    waits = []
    for t in onsets:
        k = np.searchsorted(fired, t)
        if k < fired.size:
            waits.append(float(fired[k] - t))
    return float(np.mean(waits)) if waits else math.nan


def down_time(outages, duration: float) -> list[tuple[float, float]]:
    """The intervals in ``[0, duration)`` in which at least one node is down (merged)."""
    spans = sorted((max(0.0, a), min(duration, b)) for _, a, b in outages if a < duration)
    merged: list[list[float]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [(a, b) for a, b in merged if b > a]


def while_down(fired, outages, duration: float) -> tuple[float, float]:
    """Windows per time unit while some node is down, and while every node is up
    (NaN for a part of the run that has no time)."""
    spans = down_time(outages, duration)
    down = sum(b - a for a, b in spans)
    fired = np.asarray(fired, dtype=float)
    inside = sum(int(((fired >= a) & (fired < b)).sum()) for a, b in spans)
    up = duration - down
    return (inside / down if down > 0 else math.nan,
            (fired.size - inside) / up if up > 0 else math.nan)
