"""Per-source disorder models and delay statistics.

A disorder model draws, for each tuple a source produces, the delay between its event
time ``ts`` and the moment it enters the system (``entered_at = ts + delay``). Tuples of
one stream then enter out of timestamp order whenever a later tuple has a smaller delay
than an earlier one by more than their time gap.

:func:`delay_statistics` measures disorder the QJoin way: ``delay(t)`` is the largest
timestamp seen on ``t``'s stream when ``t`` arrives, minus ``t.ts``, never below 0.

Examples
--------
>>> import numpy as np
>>> draw = make_disorder("exponential", 2.0, np.random.default_rng(1))
>>> d = draw(20000)
>>> d.shape, bool(abs(d.mean() - 2.0) < 0.1), bool(d.min() >= 0)
((20000,), True, True)
>>> make_disorder("none", 0.0, np.random.default_rng(1))(3)
array([0., 0., 0.])
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np


def _check_mean(name: str, mean: float) -> float:
    mean = float(mean)
    if not math.isfinite(mean) or mean < 0:
        raise ValueError(f"disorder {name!r}: mean must be a finite number >= 0, got {mean!r}")
    return mean


@dataclass(frozen=True)
class NoDisorder:
    """Every tuple enters at its event time (delay 0)."""

    def delays(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Return ``n`` zero delays."""
        return np.zeros(n)


@dataclass(frozen=True)
class Exponential:
    """Exponential delays with the given mean."""

    mean: float

    def delays(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Return ``n`` delays drawn from ``rng``."""
        return rng.exponential(self.mean, n) if self.mean > 0 else np.zeros(n)


@dataclass(frozen=True)
class LogNormal:
    """Log-normal delays with the given mean and shape ``sigma`` (of the underlying normal).

    The location is ``log(mean) - sigma**2 / 2`` so that the delays' mean is ``mean``.
    """

    mean: float
    sigma: float = 1.0

    def delays(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Return ``n`` delays drawn from ``rng``."""
        if self.mean == 0:
            return np.zeros(n)
        mu = math.log(self.mean) - self.sigma ** 2 / 2
        return rng.lognormal(mu, self.sigma, n)


@dataclass(frozen=True)
class Pareto:
    """Heavy-tailed Pareto (Lomax, type II) delays with the given mean and tail ``alpha``.

    Lomax starts at 0, so most tuples are only a little late while a few are very late;
    its mean is ``scale / (alpha - 1)``, hence ``alpha > 1`` is required.
    """

    mean: float
    alpha: float = 2.5

    def delays(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Return ``n`` delays drawn from ``rng``."""
        if self.mean == 0:
            return np.zeros(n)
        return self.mean * (self.alpha - 1) * rng.pareto(self.alpha, n)


@dataclass(frozen=True)
class Bursts:
    """Most tuples on time, with bursts of late ones.

    Each on-time tuple starts a burst with probability ``burst_prob``; the burst makes
    that tuple and the next ``burst_len - 1`` ones late by ``burst_delay`` (a constant:
    the burst enters together, shifted, as after a temporary outage of the source's link).
    Bursts do not overlap. With ``burst_delay=None`` the delay is chosen so that the mean
    delay over all tuples is about ``mean``.
    """

    mean: float
    burst_prob: float = 0.05
    burst_len: int = 10
    burst_delay: float | None = None

    def late_fraction(self) -> float:
        """Long-run fraction of late tuples (renewal argument: a burst of ``L`` late
        tuples follows on average ``1/p - 1`` on-time ones)."""
        p, ln = self.burst_prob, self.burst_len
        if p == 0:
            return 0.0
        return ln / (ln + 1 / p - 1)

    def delay(self) -> float:
        """Delay of a late tuple."""
        if self.burst_delay is not None:
            return self.burst_delay
        frac = self.late_fraction()
        return self.mean / frac if frac > 0 else 0.0

    def delays(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Return ``n`` delays drawn from ``rng``."""
        out = np.zeros(n)
        starts = rng.random(n) < self.burst_prob
        d = self.delay()
        i = 0
        while i < n:
            if starts[i]:
                out[i:i + self.burst_len] = d
                i += self.burst_len
            else:
                i += 1
        return out


def _none(mean):
    return NoDisorder()


def _exponential(mean):
    return Exponential(_check_mean("exponential", mean))


def _lognormal(mean, sigma=1.0):
    sigma = float(sigma)
    if not math.isfinite(sigma) or sigma <= 0:
        raise ValueError(f"disorder 'lognormal': sigma must be > 0, got {sigma!r}")
    return LogNormal(_check_mean("lognormal", mean), sigma)


def _pareto(mean, alpha=2.5):
    alpha = float(alpha)
    if not math.isfinite(alpha) or alpha <= 1:
        raise ValueError(f"disorder 'pareto': alpha must be > 1 (finite mean), got {alpha!r}")
    return Pareto(_check_mean("pareto", mean), alpha)


def _bursts(mean, burst_prob=0.05, burst_len=10, burst_delay=None):
    burst_prob = float(burst_prob)
    if not 0 <= burst_prob <= 1:
        raise ValueError(f"disorder 'bursts': burst_prob must be in [0, 1], got {burst_prob!r}")
    if isinstance(burst_len, bool) or int(burst_len) != burst_len or burst_len < 1:
        raise ValueError(f"disorder 'bursts': burst_len must be an integer >= 1, got {burst_len!r}")
    if burst_delay is not None:
        burst_delay = _check_mean("bursts", burst_delay)
    return Bursts(_check_mean("bursts", mean), burst_prob, int(burst_len), burst_delay)


MODELS: dict[str, Callable] = {
    "none": _none,
    "exponential": _exponential,
    "lognormal": _lognormal,
    "pareto": _pareto,
    "bursts": _bursts,
}


@dataclass(frozen=True)
class Disorder:
    """A disorder model bound to a random generator; call it with ``n`` to draw delays."""

    model: object
    rng: np.random.Generator

    def __call__(self, n: int) -> np.ndarray:
        if n < 0:
            raise ValueError(f"number of tuples must be >= 0, got {n}")
        return self.model.delays(int(n), self.rng)


def make_disorder(name: str, mean: float, rng: np.random.Generator, **opts) -> Disorder:
    """Return the disorder model ``name`` with mean delay ``mean``, drawing from ``rng``.

    Parameters
    ----------
    name : str
        One of ``none, exponential, lognormal, pareto, bursts``.
    mean : float
        Mean delay in time units (ignored by ``none``).
    rng : numpy.random.Generator
        Source of the draws.
    **opts
        Model options: ``sigma`` (lognormal, default 1.0), ``alpha`` (pareto, default
        2.5), ``burst_prob``, ``burst_len``, ``burst_delay`` (bursts).

    Raises
    ------
    ValueError
        Unknown model name (the message lists the valid ones), unknown or invalid option.

    Examples
    --------
    >>> import numpy as np
    >>> draw = make_disorder("bursts", 0.0, np.random.default_rng(0),
    ...                      burst_prob=1.0, burst_len=2, burst_delay=3.0)
    >>> draw(3)
    array([3., 3., 3.])
    >>> make_disorder("gamma", 1.0, np.random.default_rng(0))
    Traceback (most recent call last):
    ...
    ValueError: unknown disorder model 'gamma'; expected one of: bursts, exponential, lognormal, none, pareto
    """
    try:
        factory = MODELS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown disorder model {name!r}; expected one of: "
                         f"{', '.join(sorted(MODELS))}") from None
    valid = [p for p in inspect.signature(factory).parameters if p != "mean"]
    unknown = sorted(set(opts) - set(valid))
    if unknown:
        raise ValueError(f"disorder {name!r}: unknown option(s) {unknown}; "
                         f"valid options: {valid or 'none'}")
    return Disorder(factory(mean, **opts), rng)


def arrival_delays(ts, arrival, streams=None) -> np.ndarray:
    """Return the QJoin delay of every tuple, aligned with the input.

    Tuples are taken in arrival order (ties keep input order); ``delay(t)`` = largest
    ``ts`` seen so far on ``t``'s stream (``t`` included) minus ``t.ts``.

    Examples
    --------
    >>> arrival_delays([1, 2, 5, 3, 4], [0, 1, 2, 3, 4]).tolist()
    [0.0, 0.0, 0.0, 2.0, 1.0]
    """
    ts = np.asarray(ts, dtype=float)
    arrival = np.asarray(arrival, dtype=float)
    if ts.shape != arrival.shape or ts.ndim != 1:
        raise ValueError(f"ts and arrival must be 1-d arrays of equal length, got shapes "
                         f"{ts.shape} and {arrival.shape}")
    labels = np.zeros(len(ts), dtype=int) if streams is None else np.asarray(streams)
    if labels.shape != ts.shape:
        raise ValueError(f"streams must have the length of ts ({len(ts)}), got {labels.shape}")
    delays = np.zeros(len(ts))
    order = np.argsort(arrival, kind="stable")
    for label in np.unique(labels):
        idx = order[labels[order] == label]
        seen = np.maximum.accumulate(ts[idx])
        delays[idx] = seen - ts[idx]
    return delays


def delay_statistics(ts, arrival, streams=None) -> dict:
    """Return per-tuple QJoin delays and their summary.

    Parameters
    ----------
    ts : array-like of float
        Event times.
    arrival : array-like of float
        Arrival (or entry) times, same length.
    streams : array-like, optional
        Stream label of each tuple; delays are measured per stream. Default: one stream.

    Returns
    -------
    dict
        ``delays`` (numpy array aligned with the input), ``mean``, ``p50``, ``p95``,
        ``max`` and ``out_of_order`` (fraction of tuples with a positive delay, i.e.
        arriving after a tuple of their stream with a larger timestamp).

    Examples
    --------
    >>> s = delay_statistics([1, 2, 5, 3, 4, 6], [0, 1, 2, 3, 4, 5])
    >>> s["delays"].tolist(), s["mean"], s["max"], s["out_of_order"]
    ([0.0, 0.0, 0.0, 2.0, 1.0, 0.0], 0.5, 2.0, 0.3333333333333333)
    """
    delays = arrival_delays(ts, arrival, streams)
    if len(delays) == 0:
        nan = float("nan")
        return {"delays": delays, "mean": nan, "p50": nan, "p95": nan, "max": nan,
                "out_of_order": nan}
    return {
        "delays": delays,
        "mean": float(delays.mean()),
        "p50": float(np.percentile(delays, 50)),
        "p95": float(np.percentile(delays, 95)),
        "max": float(delays.max()),
        "out_of_order": float((delays > 0).mean()),
    }
