"""QJoin's quality model: ``Q_L*``, basic windows, ``Q_L(dx, dy)`` and Algorithm 1.

Everything here is a pure function of the statistics of the last adaptation interval
``L`` (see ``docs/ALGORITHMS.md#qjoin``). The formulas of the source were figures that did not
survive; what is implemented is the reconstruction of ``docs/ALGORITHMS.md#quality-estimate``:

- ``Q_L* = (Q_user (N_true(P-L) + N_L) - N_prod(P-L)) / N_L`` (Ji et al.'s Gamma_L),
  **[recon]**, or with a surplus spread over the coming intervals (``spread``,
  :func:`q_target_raw`), or over the user's period with a deficit spread too
  (``period``, ``deficit_too``);
- coarse delay ``D``: 0 for a delay in ``[0, g]``, 1 in ``(g, 2g]``, ... (the source's
  definition; ``docs/ALGORITHMS.md#qjoin`` writes ``ceil(delay / g)`` beside it, which disagrees on
  ``(0, g]`` — kept as ``coarse_delay="ceil"``);
- ``|W'_S(dy)| = sum_l Vs b_l F_S(floor((dy + (l-1) b) / g))`` over ``n = ceil(w / b)``
  basic windows **[recon]**, used at the largest delays only: the cross-join
  ``N_x(Max)`` of the interval;
- ``N_L = sel(Max) N_x(Max)`` with the basic-window ``N_x`` (``ideal="basic"``,
  **[recon]**) or the source's literal formula (10), ``Vr L Vs (w + Maxdy) +
  Vs L Vr (w + Maxdx)`` (``ideal="literal"``), which is inconsistent with (7);
- ``Q_L(dx, dy) = min(1, sel(Max) (a(dx) + b(dy)) N_x(Max) / N_L)``, ``a + b`` the
  share of the pairs the symmetric join finds under its purge rule
  (:func:`found_shares`; the testbed's). It replaces the source's K-slack count
  ``N_x(dx, dy)``, which does not see a *probing* tuple's lateness and puts a late
  stream's allowance on its own buffer, and its selectivity by delay class
  ``sel(dx, dy)``, which made the estimate optimistic.

Examples
--------
>>> round(q_target_raw(0.9, 900, 820, 100), 6)
0.8
>>> basic_windows(4.0, 1.5).tolist()
[1.5, 1.5, 1.0]
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: Slack on float comparisons of grid points (``dy + (l-1) b`` divided by ``g``).
_EPS = 1e-9

COARSE_DELAY_RULES = ("paper", "ceil")
IDEAL_RULES = ("basic", "literal")


def q_target_raw(q_user: float, n_true_prev: float, n_prod_prev: float,
                 n_l: float, spread: float = 1.0, deficit_too: bool = False) -> float:
    """The unclamped target recall of the next ``L``.

    Parameters
    ----------
    q_user : float
        The user's recall requirement over a period ``P``.
    n_true_prev, n_prod_prev : float
        True and produced result counts over the latest ``P - L``.
    n_l : float
        Estimated true result count of the next ``L``.
    spread : float
        Intervals a surplus is spread over. With ``surplus = n_prod_prev - q_user
        n_true_prev``, the target is ``q_user - surplus / (spread n_l)`` when the surplus
        is positive and ``q_user - surplus / n_l`` (a deficit made up at once) when it is
        not; ``spread = 1`` is Ji et al.'s Gamma_L, which spends a surplus at once.
    deficit_too : bool
        Spread a deficit over ``spread`` intervals as well (``spend = "period"``:
        ``spread`` is then the intervals left in the user's period).

    Returns
    -------
    float
        ``(q_user (n_true_prev + n_l) - n_prod_prev) / n_l`` (with ``spread`` 1); above 1
        means the period cannot reach ``q_user`` any more. With ``n_l == 0`` it is 0 when
        the period already meets ``q_user`` and ``inf`` otherwise.

    Examples
    --------
    >>> round(q_target_raw(0.9, 900, 790, 100), 6)
    1.1
    >>> q_target_raw(0.9, 900, 900, 100)
    0.0
    >>> q_target_raw(0.9, 100, 50, 0)
    inf

    A surplus of 90 results spread over 9 intervals of 100 costs 0.1 of recall in each:

    >>> round(q_target_raw(0.9, 900, 900, 100, spread=9), 6)
    0.8
    >>> round(q_target_raw(0.9, 900, 790, 100, spread=9), 6)
    1.1

    ``spend = "period"``: a deficit of 20 with 4 intervals of the period left:

    >>> round(q_target_raw(0.9, 900, 790, 100, spread=4, deficit_too=True), 6)
    0.95
    """
    if spread < 1:
        raise ValueError(f"spread: expected >= 1 interval, got {spread!r}")
    surplus = n_prod_prev - q_user * n_true_prev
    if n_l <= 0:
        return 0.0 if q_user * n_l - surplus <= _EPS else math.inf
    if surplus > 0 or deficit_too:
        return q_user - surplus / (spread * n_l)
    return q_user - surplus / n_l


def q_target(q_user: float, n_true_prev: float, n_prod_prev: float,
             n_l: float, spread: float = 1.0, deficit_too: bool = False) -> tuple[float, bool]:
    """``(Q_L* clamped to [0, 1], feasible)``; infeasible means "use the largest buffers".

    Examples
    --------
    >>> q_target(0.9, 900, 820, 100)[1], q_target(0.9, 900, 790, 100)
    (True, (1.0, False))
    """
    raw = q_target_raw(q_user, n_true_prev, n_prod_prev, n_l, spread, deficit_too)
    feasible = raw <= 1.0 + _EPS
    return float(min(1.0, max(0.0, raw))), bool(feasible)


def coarse_delay(delay, g: float, rule: str = "paper") -> np.ndarray:
    """Coarse delays ``D`` of the given delays at granularity ``g``.

    ``"paper"``: ``D = 0`` on ``[0, g]``, ``1`` on ``(g, 2g]``, ...; ``"ceil"``:
    ``D = ceil(delay / g)``.

    Examples
    --------
    >>> coarse_delay([0.0, 0.01, 0.015, 0.02, 0.021], 0.01).tolist()
    [0, 0, 1, 1, 2]
    >>> coarse_delay([0.0, 0.01, 0.015], 0.01, "ceil").tolist()
    [0, 1, 2]
    """
    if rule not in COARSE_DELAY_RULES:
        raise ValueError(f"coarse_delay rule: expected one of {COARSE_DELAY_RULES}, "
                         f"got {rule!r}")
    if not g > 0:
        raise ValueError(f"coarse_delay: granularity g must be > 0, got {g!r}")
    units = np.ceil(np.asarray(delay, dtype=float) / g - _EPS)
    units = np.maximum(units, 0)
    if rule == "paper":
        units = np.maximum(units - 1, 0)
    return units.astype(np.int64)


def basic_windows(w: float, b: float) -> np.ndarray:
    """Lengths ``b_l`` of the ``n = ceil(w / b)`` basic windows splitting ``w``.

    Examples
    --------
    >>> basic_windows(4.0, 1.0).tolist()
    [1.0, 1.0, 1.0, 1.0]
    >>> len(basic_windows(2.0, 0.01))
    200
    """
    if not (w > 0 and b > 0):
        raise ValueError(f"basic_windows: w and b must be > 0, got w={w!r}, b={b!r}")
    n = max(1, math.ceil(w / b - _EPS))
    out = np.full(n, float(b))
    out[-1] = w - (n - 1) * b
    return out


def delay_cdf(coarse, k) -> np.ndarray:
    """Empirical ``F(k) = P[D <= k]`` of the coarse delays ``coarse`` at integers ``k``.

    No observation gives ``F = 1`` (nothing is known to be late).

    Examples
    --------
    >>> delay_cdf([0, 0, 1, 2], [0, 1, 2, 5]).tolist()
    [0.5, 0.75, 1.0, 1.0]
    """
    d = np.sort(np.asarray(coarse))
    k = np.asarray(k)
    if d.size == 0:
        return np.ones(k.shape)
    return np.searchsorted(d, k, side="right") / d.size


def window_counts(rate: float, cdf, allowances, w: float, b: float, g: float) -> np.ndarray:
    """``|W'(d)|`` for each allowance ``d``: tuples of a stream found in one window.

    Parameters
    ----------
    rate : float
        Tuples per time unit of the stream.
    cdf : callable
        ``cdf(k)`` = ``F(k)`` of the stream's coarse delays (vectorized over ``k``).
    allowances : array_like
        Delay allowances ``d``.
    w, b, g : float
        Window, basic window and delay granularity.

    Examples
    --------
    >>> f = {0: .6, 1: .8}
    >>> cdf = lambda k: np.array([f.get(int(i), 1.0) for i in np.ravel(k)]).reshape(np.shape(k))
    >>> window_counts(20, cdf, [0, 1, 2], 4, 1, 1).round(6).tolist()
    [68.0, 76.0, 80.0]
    """
    bl = basic_windows(w, b)
    offsets = np.arange(bl.size) * b
    d = np.asarray(allowances, dtype=float)
    k = np.floor((d[:, None] + offsets[None, :]) / g + _EPS).astype(np.int64)
    return rate * (np.asarray(cdf(k), dtype=float) * bl[None, :]).sum(axis=1)


def delay_grid(max_delay: float, g: float) -> np.ndarray:
    """Allowances ``0, g, 2g, ...`` up to the first one covering ``max_delay``.

    Examples
    --------
    >>> delay_grid(2.0, 1.0).tolist(), delay_grid(0.025, 0.01).round(3).tolist()
    ([0.0, 1.0, 2.0], [0.0, 0.01, 0.02, 0.03])
    """
    steps = max(0, math.ceil(max(max_delay, 0.0) / g - _EPS))
    return np.arange(steps + 1) * g


@dataclass(frozen=True)
class StreamStats:
    """What the estimator needs of one stream over the last ``L``.

    ``delays`` are the per-tuple delays, ``results`` and ``comparisons`` the results a
    tuple produced and the window-qualified tuples it was compared with on arrival.
    """

    rate: float
    delays: np.ndarray
    results: np.ndarray
    comparisons: np.ndarray
    max_delay: float


@dataclass(frozen=True)
class Choice:
    """Algorithm 1's outcome."""

    dx: float
    dy: float
    x: float
    y: float
    q_estimate: float
    n_ideal: float
    feasible: bool


def delay_classes(delays, g: float, rule: str = "paper") -> tuple[np.ndarray, np.ndarray]:
    """Distinct coarse delays of a stream, as times (``D g``), and the share of each.

    No observation gives one class, delay 0 (nothing is known to be late), as
    :func:`delay_cdf` does.

    Examples
    --------
    >>> v, p = delay_classes([0.0, 0.005, 0.025, 0.03], 0.01)
    >>> v.round(3).tolist(), p.tolist()
    ([0.0, 0.02], [0.5, 0.5])
    >>> delay_classes([], 0.01)[1].tolist()
    [1.0]
    """
    d = coarse_delay(delays, g, rule)
    if d.size == 0:
        return np.zeros(1), np.ones(1)
    units, counts = np.unique(d, return_counts=True)
    return units * g, counts / d.size


def _relu_sums(knots, weights, grid) -> np.ndarray:
    """``sum_i weights_i max(0, x - knots_i)`` at each ``x`` of ``grid``.

    >>> a = np.array
    >>> _relu_sums(a([0.0, 1.0]), a([1.0, 2.0]), a([0.0, 0.5, 2.0])).tolist()
    [0.0, 0.5, 4.0]
    """
    order = np.argsort(knots, kind="stable")
    k, wt = knots[order], weights[order]
    cum_w = np.concatenate([[0.0], np.cumsum(wt)])
    cum_wk = np.concatenate([[0.0], np.cumsum(wt * k)])
    m = np.searchsorted(k, grid, side="right")     # knots at or left of x
    return cum_w[m] * grid - cum_wk[m]


def _capped_ramps(knots, caps, weights, grid) -> np.ndarray:
    # sum_i weights_i min(max(0, x - knots_i), caps_i): a ramp of slope 1 from knot_i
    # that levels off cap_i higher, as two relu sums (one O(n log n) pass each)
    return _relu_sums(knots, weights, grid) - _relu_sums(knots + caps, weights, grid)


def found_shares(r_delays, r_shares, s_delays, s_shares, w: float, dx_grid,
                 dy_grid) -> tuple[np.ndarray, np.ndarray]:
    """Shares of the ideal results the symmetric join finds, split by who arrives first.

    A result ``(r, s)``, ``u = r.ts - s.ts`` uniform on ``[-w, w]``, delays ``δr, δs``
    drawn independently from the given classes: each tuple reaches the join when its
    stream's largest timestamp is ``ts + δ``. If ``r`` comes first (``u + δr <= δs``),
    ``s`` then finds it iff it is above R's horizon ``T - (w + dx)``, ``T`` taken as
    ``s.ts + δs`` (``T`` is at most that: the estimate leans to the pessimistic side):
    ``δs - u <= w + dx``. If ``s`` comes first, ``u + δr <= w + dy``. The first share
    depends on ``dx`` only, the second on ``dy`` only; they sum to 1 at allowances
    covering every delay. (``docs/ALGORITHMS.md#quality-estimate``.)

    Returns
    -------
    a, b : numpy.ndarray
        ``a[i]``: share found with ``r`` first at ``dx_grid[i]``; ``b[j]``: with ``s``
        first at ``dy_grid[j]``. ``Q = a[:, None] + b[None, :]``.

    Examples
    --------
    Every R tuple on time, half the S tuples 1 s late, ``w`` = 1: a late ``s`` finds
    only the R tuples above ``s.ts + 1 - (1 + dx)``, half its window at ``dx`` = 0.

    >>> a, b = found_shares([0.0], [1.0], [0.0, 1.0], [.5, .5], 1.0, [0.0, 0.5, 1.0],
    ...                     [0.0, 1.0])
    >>> a.tolist(), b.tolist()
    ([0.5, 0.625, 0.75], [0.25, 0.25])
    """
    dr, ds = (m.ravel() for m in np.meshgrid(np.asarray(r_delays, dtype=float),
                                              np.asarray(s_delays, dtype=float),
                                              indexing="ij"))
    pair = np.outer(r_shares, s_shares).ravel()   # one entry per pair of delay classes
    lag = ds - dr                                 # r comes first iff u <= lag
    # r first: u in [max(-w, δs - w - dx), min(w, lag)], a ramp in dx from δs - w - hi
    hi = np.minimum(w, lag)
    a = _capped_ramps(ds - w - hi, np.maximum(0.0, hi + w), pair,
                      np.asarray(dx_grid, dtype=float))
    # s first: u in (max(-w, lag), min(w, w + dy - δr)], a ramp in dy from δr + lo - w
    lo = np.maximum(-w, lag)
    b = _capped_ramps(dr + lo - w, np.maximum(0.0, w - lo), pair,
                      np.asarray(dy_grid, dtype=float))
    return a / (2 * w), b / (2 * w)


def quality_grid(r: StreamStats, s: StreamStats, w: float, L: float, b: float, g: float,
                 coarse_rule: str = "paper", ideal: str = "basic"):
    """``Q_L(dx, dy)`` on the allowance grid, and ``N_L``.

    ``Q_L(dx, dy) = min(1, sel(Max) N_x(dx, dy) / N_L)`` with the found cross-join
    ``N_x(dx, dy) = (a(dx) + b(dy)) N_x(Max)`` of :func:`found_shares`: with the basic
    ``N_L`` simply ``a(dx) + b(dy)``.

    Returns
    -------
    dx_grid, dy_grid : numpy.ndarray
        Allowances searched: steps of ``g`` up to the larger of the two streams'
        largest delays (``max_delay``), for both.
    q : numpy.ndarray
        ``q[i, j] = Q_L(dx_grid[i], dy_grid[j])``.
    n_ideal : float
        ``N_L``, the estimated ideal result count of an interval ``L``.

    Examples
    --------
    R on time, half of S 1 s late (as in :func:`found_shares`), largest delays 1 s:

    >>> st = lambda d: StreamStats(2.0, np.array(d), np.ones(2), np.ones(2), 1.0)
    >>> dx, dy, q, n_ideal = quality_grid(st([0.0, 0.0]), st([0.0, 1.0]), 1.0, 1.0, 1.0,
    ...                                   1.0, "ceil")
    >>> q.tolist(), float(n_ideal)
    ([[0.75, 0.75], [1.0, 1.0]], 8.0)
    """
    if ideal not in IDEAL_RULES:
        raise ValueError(f"ideal: expected one of {IDEAL_RULES}, got {ideal!r}")
    # A late s is saved by R's buffer (dx) and a late r by S's: each allowance is
    # searched up to the larger of the two largest delays, where Q_L reaches 1.
    top = max(r.max_delay, s.max_delay)
    dx_grid = delay_grid(top, g)
    dy_grid = delay_grid(top, g)
    cr = coarse_delay(r.delays, g, coarse_rule)
    cs = coarse_delay(s.delays, g, coarse_rule)
    # the cross-join with every partner found: the K-slack count at the largest delays
    w_r = window_counts(r.rate, lambda k: delay_cdf(cr, k), dx_grid[-1:], w, b, g)[0]
    w_s = window_counts(s.rate, lambda k: delay_cdf(cs, k), dy_grid[-1:], w, b, g)[0]
    cross_max = r.rate * L * w_s + s.rate * L * w_r
    total_cmp = float(np.sum(r.comparisons) + np.sum(s.comparisons))
    sel_max = float(np.sum(r.results) + np.sum(s.results)) / total_cmp if total_cmp else 0.0
    if ideal == "basic":
        n_ideal = sel_max * cross_max
    else:
        n_ideal = sel_max * (r.rate * L * s.rate * (w + s.max_delay)
                             + s.rate * L * r.rate * (w + r.max_delay))
    if n_ideal <= 0:    # nothing expected: any buffer meets any target
        return dx_grid, dy_grid, np.ones((dx_grid.size, dy_grid.size)), n_ideal
    a, b_ = found_shares(*delay_classes(r.delays, g, coarse_rule),
                         *delay_classes(s.delays, g, coarse_rule), w, dx_grid, dy_grid)
    scale = sel_max * cross_max / n_ideal
    q = np.minimum(1.0, (a * scale)[:, None] + (b_ * scale)[None, :])
    return dx_grid, dy_grid, q, n_ideal


def algorithm1(q, target: float, dx_grid, dy_grid, v_r: float, v_s: float,
               w: float) -> tuple[float, float, float, float, bool]:
    """Algorithm 1: the cheapest ``(dx, dy)`` whose estimate meets ``target``.

    For each ``dy`` the smallest ``dx`` with ``q >= target`` is recorded; the record with
    the least ``(dx + w) Vr + (dy + w) Vs`` wins (ties: smaller ``dy``); no record gives
    the largest allowances.

    Returns
    -------
    tuple
        ``(dx, dy, x, y, found)`` with ``x = (dx + w) Vr`` and ``y = (dy + w) Vs``.

    Examples
    --------
    >>> q = np.array([[0.5, 0.9], [0.95, 1.0]])
    >>> algorithm1(q, 0.9, [0.0, 1.0], [0.0, 1.0], 10, 1, 1)
    (0.0, 1.0, 10.0, 2.0, True)
    """
    q = np.asarray(q, dtype=float)
    dx_grid = np.asarray(dx_grid, dtype=float)
    dy_grid = np.asarray(dy_grid, dtype=float)
    ok = q >= target - _EPS
    has = ok.any(axis=0)
    if not has.any():
        dx, dy = float(dx_grid[-1]), float(dy_grid[-1])
        return dx, dy, (dx + w) * v_r, (dy + w) * v_s, False
    first = np.argmax(ok, axis=0)              # smallest dx meeting the target, per dy
    cost = np.where(has, (dx_grid[first] + w) * v_r + (dy_grid + w) * v_s, np.inf)
    j = int(np.argmin(cost))                   # first minimum: the smaller dy wins ties
    dx, dy = float(dx_grid[first[j]]), float(dy_grid[j])
    return dx, dy, (dx + w) * v_r, (dy + w) * v_s, True


def decide(grid, q_user: float, n_true_prev: float, n_prod_prev: float, v_r: float,
           v_s: float, w: float, spread: float = 1.0,
           deficit_too: bool = False) -> tuple[Choice, float]:
    """``Q_L*`` (a surplus spread over ``spread`` intervals, :func:`q_target_raw`) then
    Algorithm 1 on a :func:`quality_grid` result.

    Returns the :class:`Choice` and the clamped target. An infeasible target gives the
    largest allowances (``feasible=False``).
    """
    dx_grid, dy_grid, q, n_ideal = grid
    target, feasible = q_target(q_user, n_true_prev, n_prod_prev, n_ideal, spread,
                                deficit_too)
    if feasible:
        dx, dy, x, y, found = algorithm1(q, target, dx_grid, dy_grid, v_r, v_s, w)
    else:
        dx, dy, found = float(dx_grid[-1]), float(dy_grid[-1]), False
        x, y = (dx + w) * v_r, (dy + w) * v_s
    i = int(np.searchsorted(dx_grid, dx - _EPS))
    j = int(np.searchsorted(dy_grid, dy - _EPS))
    return Choice(dx, dy, x, y, float(q[i, j]), n_ideal, feasible and found), target


def choose_buffers(r: StreamStats, s: StreamStats, w: float, L: float, b: float, g: float,
                   q_user: float, n_true_prev: float, n_prod_prev: float,
                   coarse_rule: str = "paper", ideal: str = "basic") -> tuple[Choice, float]:
    """One adaptation from the statistics of the last ``L``: :func:`quality_grid`, then
    :func:`decide`."""
    grid = quality_grid(r, s, w, L, b, g, coarse_rule, ideal)
    return decide(grid, q_user, n_true_prev, n_prod_prev, r.rate, s.rate, w)
