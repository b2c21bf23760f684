"""The PHY's error-rate curves, compiled for the MAC engine: how likely a bit is to
arrive at a given SINR, for 802.11b's four rates and 802.15.4's O-QPSK.

The curves are ns-3 3.44's: ``DsssErrorRateModel`` (DBPSK at 1 Mbit/s, DQPSK at 2, CCK at
5.5 and 11, its GSL form) and ``LrWpanErrorModel`` (802.15.4-2006 Annex E); the SINR is
linear, over the channel (22 MHz for DSSS), so DSSS's processing gain is in the curves
(DBPSK's Eb/N0 is 22 x the SINR), as in :mod:`topologies.radio`. The engine asks for
the log of a bit's success rate (:func:`log_ok_per_bit`): a frame's success rate is the
product over its chunks of constant interference of each chunk's rate to the power of
its bits, so the logs add up chunk by chunk.

CCK's symbol error rate is an integral (Pursley and Royster's equation 18, which ns-3
evaluates with GSL at every call): :func:`cck_curve` tabulates it once over the SINR in
dB and the engine interpolates.

>>> import math
>>> round(math.exp(1000 * log_ok_per_bit(R_DBPSK, 1.0, cck_curve())), 9)  # ns-3: 0.999999861
0.999999861
>>> round(math.exp(1000 * log_ok_per_bit(R_CCK11, 4.0, cck_curve())), 4)    # ns-3: 0.9023
0.9023
"""
from __future__ import annotations

import functools
import math

import numpy as np
from numba import njit

from topologies import radio

#: The radio's own DBPSK and DQPSK curves (ns-3's ``DsssErrorRateModel``), compiled for
#: the engine: one formula for the links and the MAC.
_dbpsk = njit(cache=True)(radio._dbpsk)
_dqpsk = njit(cache=True)(radio._dqpsk)

#: The curves, by code: 802.11b's 1, 2, 5.5 and 11 Mbit/s, and 802.15.4's O-QPSK.
R_DBPSK, R_DQPSK, R_CCK55, R_CCK11, R_OQPSK = range(5)
#: 802.11b's rates (bit/s) and their curves' codes.
DSSS_CODES = {1e6: R_DBPSK, 2e6: R_DQPSK, 5.5e6: R_CCK55, 11e6: R_CCK11}

#: The CCK table's grid: the 16-CCK symbol's energy ratio (``e2`` of ns-3's
#: ``SymbolErrorProb16Cck``) in dB, from CCK_LO_DB by CCK_STEP_DB, CCK_POINTS values
#: (-10 to +30 dB: below, a symbol is a guess; above, never wrong in a frame).
CCK_LO_DB, CCK_STEP_DB, CCK_POINTS = -10.0, 0.01, 4001


@njit(cache=True)
def oqpsk_ber(sinr):
    """802.15.4-2006 Annex E's O-QPSK bit error rate at a linear SINR (ns-3's
    ``LrWpanErrorModel``, :func:`topologies.radio._oqpsk`)."""
    total = 0.0
    binom = 1.0
    for k in range(1, 17):
        binom = binom * (16 - k + 1) / k
        if k >= 2:
            total += (-1.0) ** k * binom * np.exp(20.0 * sinr * (1.0 / k - 1.0))
    return min(max(8.0 / 15.0 / 16.0 * total, 0.0), 1.0)


@njit(cache=True)
def _phi(x):
    """The standard normal distribution function."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


@njit(cache=True)
def cck16_correct(e2):
    """The probability that a 16-CCK symbol at energy ratio ``e2`` is decoded right:
    the integral over ``x >= -beta`` of ``(2 Phi(x + beta) - 1)^7 phi(x)``, ``beta =
    sqrt(2 e2)`` (ns-3's ``IntegralFunction``, ``n`` = 8), by Simpson's rule where the
    normal density counts (|x| <= 12).

    >>> round(1 - cck16_correct(8.0), 4)    # ns-3's SymbolErrorProb16Cck(8)
    0.024
    """
    beta = math.sqrt(2.0 * e2)
    lo, hi = max(-beta, -12.0), 12.0
    steps = 2400
    h = (hi - lo) / steps
    total = 0.0
    for s in range(steps + 1):
        x = lo + s * h
        f = (2.0 * _phi(x + beta) - 1.0) ** 7 * math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
        w = 1.0 if s == 0 or s == steps else (4.0 if s % 2 == 1 else 2.0)
        total += w * f
    return min(total * h / 3.0, 1.0)


@njit(cache=True)
def _cck_table(lo_db, step_db, points):
    out = np.empty(points)
    for q in range(points):
        e2 = 10.0 ** ((lo_db + q * step_db) / 10.0)
        out[q] = math.log(max(cck16_correct(e2), 1.0 / 16.0)) / 4.0   # per bit
    return out


@functools.lru_cache(maxsize=1)
def cck_curve() -> np.ndarray:
    """The log of a CCK bit's success rate (a 16-CCK symbol's, over its 4 bits) at
    each point of the grid (CCK_LO_DB...): computed once per process (about 0.2 s).

    >>> curve = cck_curve()
    >>> len(curve), bool(np.all(np.diff(curve) >= -1e-12)), float(curve[-1]) > -1e-12
    (4001, True, True)
    """
    curve = _cck_table(CCK_LO_DB, CCK_STEP_DB, CCK_POINTS)
    curve.flags.writeable = False
    return curve


@njit(cache=True)
def _cck(e2, curve):
    """The tabulated log success per bit at ``e2`` (linear), interpolated in dB."""
    if e2 <= 0.0:
        return curve[0]
    x = (10.0 * math.log10(e2) - CCK_LO_DB) / CCK_STEP_DB
    if x <= 0.0:
        return curve[0]
    q = int(x)
    if q >= CCK_POINTS - 1:
        return curve[CCK_POINTS - 1]
    frac = x - q
    return curve[q] * (1.0 - frac) + curve[q + 1] * frac


@njit(cache=True)
def log_ok_per_bit(code, sinr, curve):
    """The log of one bit's success rate under the curve ``code`` at the linear
    ``sinr``; ``curve`` is :func:`cck_curve` (read only for CCK). A bit error rate is
    held at most 0.5 (DQPSK's approximation exceeds it far below its range).

    >>> round(math.exp(1000 * log_ok_per_bit(R_DQPSK, 1.0, cck_curve())), 4)  # ns-3 0.8235
    0.8235
    """
    if code == R_DBPSK:
        ber = _dbpsk(22.0 * sinr)                    # Eb/N0: 22 MHz / 1 Msymbol/s
    elif code == R_DQPSK:
        x = 11.0 * sinr                              # 2 bits a symbol
        ber = 0.5 if x <= 0.0 else _dqpsk(x)
    elif code == R_CCK55:
        return _cck(8.0 * sinr, curve)               # ns-3: e2 = 2 Eb/N0, Eb/N0 = 4 SINR
    elif code == R_CCK11:
        return _cck(4.0 * sinr, curve)               # 256-CCK: two 16-CCK halves
    else:
        ber = oqpsk_ber(sinr)
    return math.log1p(-min(ber, 0.5))
