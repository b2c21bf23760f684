"""What the SMJ family computes: periods, blocks and the exact answer.

The source (Yin & Zhang 2009) joins each period's new block ``ΔR_i`` with the *older*
data of the other sites. Read literally, two blocks of the same period would never meet,
so this module fixes one precise, network-independent semantics [recon] that every
variant (smj-e, smj-h, lottery, naive) implements and :func:`exact_groups` computes
centrally.

Definitions
-----------
* Streams ``R_1..R_n`` have *indices* ``1..n`` in spec order.
* Period ``j = 0, 1, ...`` covers entry times ``[j·P, (j+1)·P)`` and *closes* at
  ``c_j = (j+1)·P`` (``P`` = param ``period``). A tuple belongs to the period of its
  ``entered_at`` (:func:`period_of`). Only periods closing at or before
  ``duration - margin`` are processed (:func:`n_periods`); later tuples take no part.
* The *rank* of a tuple of stream ``R_k`` in period ``p`` is ``(p, k)``.
* Under a window trigger (``[trigger.<algorithm>]``) the periods end where the trigger
  fired instead: period ``j`` covers ``[c_{j-1}, c_j)`` for the fired closes
  ``c_0 < c_1 < ...`` (:class:`FiredPeriods`; ``c_{-1} = -inf``), and only periods that
  closed are processed. Everything below holds with those ``c_j``.
* A stream's window ``W_k`` (``None`` or ``inf`` = none) keeps a tuple ``r`` *for a
  block that closed at* ``c`` when ``c - r.ts <= W_k``.

The block ``ΔR_i`` of period ``j`` joins, at every other site ``k``, the tuples ``r`` of
``R_k`` with ``rank(r) < (j, i)`` that its window keeps at ``c_j``. Hence a combination
``(r_1, ..., r_n)`` (one tuple per stream, equal keys) is produced exactly once — by the
block of its member of largest rank — and it is in the answer iff every member ``r`` of
stream ``k`` satisfies ``c_J - r.ts <= W_k`` where ``J`` is the largest period among the
members. That rule does not depend on the network, delays or the execution order.

Examples
--------
>>> from spark_nodes.workload.tuples import StreamTuple
>>> a = StreamTuple("R1", 0, 0.2, 7, None, None, 1, entered_at=0.2)
>>> b = StreamTuple("R2", 0, 2.5, 7, None, None, 2, entered_at=2.5)
>>> sorted(exact_groups({"R1": [a], "R2": [b]}, ["R1", "R2"], {"R1": None, "R2": None},
...                     period=1.0, periods=30))
['R1:0|R2:0']
>>> exact_groups({"R1": [a], "R2": [b]}, ["R1", "R2"], {"R1": 2.0, "R2": 2.0},
...              period=1.0, periods=30)      # c_2 = 3.0 and 3.0 - 0.2 > 2
set()
"""
from __future__ import annotations

import bisect
import itertools
import math
from collections import defaultdict

from spark_nodes.workload.tuples import group_id


def period_of(t: float, period: float) -> int:
    """The period whose interval ``[j·P, (j+1)·P)`` holds time ``t``.

    Periods are defined by :func:`close_of` as computed in floating point, so a tuple
    always enters before its period closes (``close_of(2, 0.1)`` is
    0.30000000000000004, hence 0.3 falls in period 2).

    >>> period_of(0.3, 0.1), period_of(0.31, 0.1), period_of(2.0, 1.0)
    (2, 3, 2)
    """
    j = int(math.floor(t / period))
    if t >= close_of(j, period):
        j += 1
    elif j > 0 and t < close_of(j - 1, period):
        j -= 1
    return j


def close_of(j: int, period: float) -> float:
    """Closing time of period ``j``.

    >>> close_of(0, 1.0), close_of(4, 0.5)
    (1.0, 2.5)
    """
    return (j + 1) * period


def n_periods(duration: float, margin: float, period: float) -> int:
    """Number of processed periods: those closing at or before ``duration - margin``
    (as :func:`close_of` computes the closing time in floating point).

    >>> n_periods(30.0, 1.0, 1.0), n_periods(30.0, 0.0, 1.0), n_periods(0.5, 1.0, 1.0)
    (29, 30, 0)
    >>> n_periods(0.3, 0.0, 0.1)      # close_of(2, 0.1) = 0.30000000000000004 > 0.3
    2
    """
    if period <= 0:
        raise ValueError(f"period must be > 0, got {period}")
    limit = duration - margin
    j = max(0, int(math.floor(limit / period + 1e-9)))
    while j > 0 and close_of(j - 1, period) > limit:
        j -= 1
    return j


def window_value(w) -> float:
    """A window as a float (``None`` -> inf).

    >>> window_value(None), window_value(3)
    (inf, 3.0)
    """
    return math.inf if w is None else float(w)


def keeps(window: float, close: float, ts: float) -> bool:
    """Whether a window of length ``window`` keeps a tuple of time ``ts`` at ``close``.

    >>> keeps(3.0, 4.0, 1.0), keeps(3.0, 4.0, 0.5), keeps(math.inf, 1e9, 0.0)
    (True, False, True)
    """
    return close - ts <= window


class FixedPeriods:
    """Periods of the fixed clock ``P`` (:func:`period_of`, :func:`close_of`).

    >>> clock = FixedPeriods(0.5)
    >>> clock.of(1.2), clock.close(2), clock.known(10**6)
    (2, 1.5, True)
    """

    def __init__(self, period: float):
        self.period = float(period)

    def of(self, t: float) -> int:
        return period_of(t, self.period)

    def close(self, j: int) -> float:
        return close_of(j, self.period)

    def known(self, j: int) -> bool:
        """Whether period ``j``'s close is known (always, on a clock)."""
        return True


class FiredPeriods:
    """Periods that end where a window trigger fired: ``closes[j]`` is ``c_j``.

    A node learns the closes as they are announced, possibly out of order (``learn``);
    only the consecutive ones from period 0 count. A time at or after the last known
    close lies in a period whose end is not known yet (``of`` gives None).

    >>> fired = FiredPeriods()
    >>> fired.learn(1, 2.5); fired.of(0.3), fired.known(0)
    (None, False)
    >>> fired.learn(0, 1.0); fired.of(0.3), fired.of(1.0), fired.of(2.5), fired.close(1)
    (0, 1, None, 2.5)
    """

    def __init__(self, closes=()):
        self.closes: list[float] = [float(c) for c in closes]
        self._later: dict[int, float] = {}      # announced beyond a gap

    def learn(self, j: int, close: float) -> None:
        if j >= len(self.closes):
            self._later[j] = float(close)
        while len(self.closes) in self._later:
            self.closes.append(self._later.pop(len(self.closes)))

    def of(self, t: float) -> int | None:
        j = bisect.bisect_right(self.closes, t)
        return j if j < len(self.closes) else None

    def close(self, j: int) -> float:
        return self.closes[j]

    def known(self, j: int) -> bool:
        return j < len(self.closes)


def as_periods(period):
    """A period object: :class:`FixedPeriods` for a number, else ``period`` itself."""
    return period if isinstance(period, (FixedPeriods, FiredPeriods)) else \
        FixedPeriods(period)


def exact_groups(tuples_by_stream, order, windows, period, periods: int) -> set[str]:
    """The groups the query must produce, computed centrally from all tuples.

    Parameters
    ----------
    tuples_by_stream : dict
        ``{stream: iterable of StreamTuple}``.
    order : list of str
        Stream names in index order (``R1``, ``R2``, ...).
    windows : dict
        ``{stream: window or None}``.
    period : float, FixedPeriods or FiredPeriods
        Period length ``P``, or the periods a trigger ended.
    periods : int
        Number of processed periods (:func:`n_periods`).

    Returns
    -------
    set of str
        Group ids (see :func:`spark_nodes.workload.tuples.group_id`).
    """
    clock = as_periods(period)
    index = {s: k for k, s in enumerate(order)}
    win = {s: window_value(windows.get(s)) for s in order}
    by_key: dict = defaultdict(lambda: defaultdict(list))
    for s in order:
        for t in tuples_by_stream.get(s, ()):
            p = clock.of(t.entered_at)
            if p is not None and p < periods and t.key is not None:
                by_key[t.key][s].append((p, index[s], t))
    out: set[str] = set()
    for per_stream in by_key.values():
        if len(per_stream) < len(order):
            continue
        for s in order:
            for p, k, t in per_stream[s]:
                close = clock.close(p)
                if not keeps(win[s], close, t.ts):
                    continue
                # t is the member of largest rank: the others rank below it
                cands = [[u for (pu, ku, u) in per_stream[o]
                          if (pu, ku) < (p, k) and keeps(win[o], close, u.ts)]
                         for o in order if o != s]
                for combo in itertools.product(*cands):
                    out.add(group_id(combo + (t,)))
    return out
