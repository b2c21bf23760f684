"""How soon an operator's windows answer a burst (the triggers section's "bursts handled
sooner", ALGORITHMS.md §4).

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
