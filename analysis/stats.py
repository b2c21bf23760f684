"""Statistics over repeated seeds: Student-t quantiles, confidence intervals, aggregates.

SciPy is not a dependency, so the Student t distribution is computed here from the
regularized incomplete beta function (continued fraction, Lentz's method) and its
quantile by bisection; both agree with published tables to the printed digits.

Examples
--------
>>> round(t_quantile(0.975, 4), 3)
2.776
>>> round(ci_halfwidth([1.0, 2.0, 3.0, 4.0, 5.0]), 4)
1.9632
"""
from __future__ import annotations

import math
from statistics import NormalDist
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from analysis.loading import param_columns

_EPS = 1e-15
_TINY = 1e-300
_MAX_ITER = 500


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    # Modified Lentz evaluation of the continued fraction for I_x(a, b).
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_ITER + 1):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + aa / c
            c = c if abs(c) > _TINY else _TINY
            step = d * c
            h *= step
        if abs(step - 1.0) < _EPS:
            return h
    raise ArithmeticError(f"incomplete beta did not converge for a={a}, b={b}, x={x}")


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta function ``I_x(a, b)``.

    Parameters
    ----------
    a, b : float
        Shape parameters, both > 0.
    x : float
        Point in [0, 1].

    Returns
    -------
    float

    Examples
    --------
    >>> round(betainc(2.0, 3.0, 0.4), 6)   # 1 - 0.6**4 - 4*0.4*0.6**3
    0.5248
    """
    if a <= 0 or b <= 0:
        raise ValueError(f"betainc: a and b must be > 0, got a={a}, b={b}")
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"betainc: x must be in [0, 1], got {x}")
    if x == 0.0 or x == 1.0:
        return x
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    front = math.exp(log_front)
    # The continued fraction converges fast only on this side of the mean.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_continued_fraction(a, b, x) / a
    return 1.0 - front * _beta_continued_fraction(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """Cumulative distribution function of Student's t with ``df`` degrees of freedom.

    Examples
    --------
    >>> t_cdf(0.0, 3)
    0.5
    >>> round(t_cdf(2.776445, 4), 4)
    0.975
    """
    if not df > 0:
        raise ValueError(f"t_cdf: df must be > 0, got {df}")
    if math.isinf(df):
        return NormalDist().cdf(t)
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, df: float) -> float:
    """Quantile (inverse CDF) of Student's t distribution.

    Parameters
    ----------
    p : float
        Probability in (0, 1).
    df : float
        Degrees of freedom (> 0; ``math.inf`` gives the normal quantile).

    Returns
    -------
    float
        ``t`` with ``P(T <= t) = p`` to about 1e-12 relative precision.

    Examples
    --------
    >>> [round(t_quantile(0.975, df), 3) for df in (4, 9, 29)]
    [2.776, 2.262, 2.045]
    >>> round(t_quantile(0.025, 1), 3)
    -12.706
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"t_quantile: p must be in (0, 1), got {p}")
    if not df > 0:
        raise ValueError(f"t_quantile: df must be > 0, got {df}")
    if math.isinf(df):
        return NormalDist().inv_cdf(p)
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, 2.0 * hi
    # Bisection: the CDF is monotone, so this cannot miss the root.
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:
            break
    return 0.5 * (lo + hi)


def ci_halfwidth(values: Iterable[float], level: float = 0.95) -> float:
    """Half-width of the Student-t confidence interval of the mean.

    NaN values are ignored; fewer than two values give NaN (no spread to estimate).

    Parameters
    ----------
    values : iterable of float
    level : float
        Confidence level in (0, 1).

    Returns
    -------
    float
        ``t_{(1+level)/2, n-1} * s / sqrt(n)`` with ``s`` the sample standard deviation.

    Examples
    --------
    >>> round(ci_halfwidth([2.0, 4.0]), 3)   # 12.706 * sqrt(2) / sqrt(2)
    12.706
    >>> import math; math.isnan(ci_halfwidth([3.0]))
    True
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"ci_halfwidth: level must be in (0, 1), got {level}")
    arr = np.asarray(list(values), dtype=float)
    arr = arr[~np.isnan(arr)]
    n = arr.size
    if n < 2:
        return math.nan
    return t_quantile((1.0 + level) / 2.0, n - 1) * float(arr.std(ddof=1)) / math.sqrt(n)


def mean_ci(values) -> tuple[float, float, int]:
    """``(mean, 95 % CI half-width, n)`` of the numeric values (NaN and text ignored).

    >>> m, ci, n = mean_ci([2.0, 4.0, float("nan")])
    >>> m, round(ci, 3), n
    (3.0, 12.706, 2)
    """
    v = pd.to_numeric(pd.Series(values), errors="coerce").dropna().to_numpy(dtype=float)
    if v.size == 0:
        return math.nan, math.nan, 0
    return float(v.mean()), ci_halfwidth(v) if v.size > 1 else math.nan, int(v.size)


def fmt_ci(mean, ci, digits=3) -> str:
    """``mean ± ci`` for a table cell (``–`` without a mean, no ``±`` without a CI).

    >>> fmt_ci(0.5, 0.0123), fmt_ci(2.0, float("nan")), fmt_ci(float("nan"), 1.0)
    ('0.5 ± 0.012', '2', '–')
    """
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "–"
    if ci is None or math.isnan(ci):
        return f"{mean:.{digits}g}"
    return f"{mean:.{digits}g} ± {ci:.2g}"


def mean_band(matrix: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Column-wise mean and CI half-width of a (runs × points) matrix, NaN-aware.

    Examples
    --------
    >>> mean, half = mean_band(np.array([[1.0, 2.0], [3.0, 2.0]]))
    >>> mean.tolist(), np.round(half, 3).tolist()
    ([2.0, 2.0], [12.706, 0.0])
    """
    matrix = np.atleast_2d(np.asarray(matrix, dtype=float))
    n = np.sum(~np.isnan(matrix), axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        total = np.nansum(matrix, axis=0)
        mean = np.where(n > 0, total / np.maximum(n, 1), np.nan)
        sq = np.nansum((matrix - mean) ** 2, axis=0)
        std = np.where(n > 1, np.sqrt(sq / np.maximum(n - 1, 1)), np.nan)
    tq = {k: t_quantile((1.0 + level) / 2.0, k - 1) for k in set(n.tolist()) if k > 1}
    factor = np.array([tq.get(k, np.nan) for k in n.tolist()])
    return mean, factor * std / np.sqrt(np.maximum(n, 1))


def ci_column(level: float) -> str:
    """Name of the CI half-width column for a confidence level.

    >>> ci_column(0.95), ci_column(0.9)
    ('ci95', 'ci90')
    """
    return f"ci{round(level * 100):g}"


def aggregate(runs: pd.DataFrame, by: Sequence[str] | None = None,
              metrics: Sequence[str] | None = None, level: float = 0.95) -> pd.DataFrame:
    """Mean, standard deviation, count and CI half-width of metrics over seeds.

    Parameters
    ----------
    runs : DataFrame
        One row per run, as returned by :func:`analysis.load`.
    by : list of str, optional
        Grouping columns. Default: ``algorithm`` plus every swept parameter column
        (see :func:`analysis.loading.param_columns`). Missing values form their own
        group (an algorithm without a given parameter).
    metrics : list of str, optional
        Metric columns. Default: every numeric column that is not a grouping column,
        a parameter or ``seed``.
    level : float
        Confidence level of the interval (column ``ci95`` for 0.95).

    Returns
    -------
    DataFrame
        Long form: the ``by`` columns, ``metric``, ``n`` (non-missing values), ``mean``,
        ``std`` (sample, ddof=1) and the CI half-width column; NaN where ``n < 2`` or a
        value is infinite.

    Examples
    --------
    >>> runs = pd.DataFrame({"algorithm": ["a"] * 3, "seed": [1, 2, 3],
    ...                      "recall": [0.8, 0.9, 1.0]})
    >>> row = aggregate(runs).iloc[0]
    >>> row["metric"], round(float(row["mean"]), 3), int(row["n"]), round(float(row["ci95"]), 3)
    ('recall', 0.9, 3, 0.248)
    """
    by = ["algorithm", *param_columns(runs)] if by is None else list(by)
    missing = [c for c in by if c not in runs.columns]
    if missing:
        raise KeyError(f"aggregate: grouping columns {missing} not in the runs table; "
                       f"columns are {sorted(map(str, runs.columns))}")
    if metrics is None:
        skip = set(by) | set(param_columns(runs)) | {"seed"}
        metrics = [c for c in runs.columns
                   if c not in skip and pd.api.types.is_numeric_dtype(runs[c])
                   and not pd.api.types.is_bool_dtype(runs[c])]
    else:
        metrics = list(metrics)
        absent = [m for m in metrics if m not in runs.columns]
        if absent:
            raise KeyError(f"aggregate: metrics {absent} not in the runs table; "
                           f"columns are {sorted(map(str, runs.columns))}")
    ci_name = ci_column(level)
    rows = []
    groups = runs.groupby(by, dropna=False, sort=True) if by else [((), runs)]
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        for metric in metrics:
            values = pd.to_numeric(group[metric], errors="coerce").to_numpy(dtype=float)
            values = values[~np.isnan(values)]
            n = values.size
            # an infinite value (energy per result without results) makes the mean
            # infinite and leaves no spread to estimate
            spread = n > 1 and bool(np.isfinite(values).all())
            rows.append({**dict(zip(by, key)), "metric": metric, "n": n,
                         "mean": float(values.mean()) if n else math.nan,
                         "std": float(values.std(ddof=1)) if spread else math.nan,
                         ci_name: ci_halfwidth(values, level) if spread else math.nan})
    columns = [*by, "metric", "n", "mean", "std", ci_name]
    return pd.DataFrame(rows, columns=columns)
