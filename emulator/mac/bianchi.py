"""Bianchi's (2000) saturation throughput of 802.11 DCF, basic access and RTS/CTS.

G. Bianchi, "Performance analysis of the IEEE 802.11 distributed coordination function",
IEEE JSAC 18(3), 2000. Each of ``n`` stations always has a frame; a transmission
collides with constant, independent probability ``p``. With ``W = CWmin + 1`` and ``m``
backoff stages (``CWmax + 1 = 2^m W``), a station transmits in a slot with probability

    tau = 2 (1 - 2p) / ((1 - 2p)(W + 1) + p W (1 - (2p)^m)),   p = 1 - (1 - tau)^(n - 1)

(solved here as one equation in ``p``, by bisection), and the channel carries

    S = Ps Ptr E[P] / ((1 - Ptr) sigma + Ptr Ps Ts + Ptr (1 - Ps) Tc)

with ``Ptr = 1 - (1 - tau)^n`` and ``Ps = n tau (1 - tau)^(n-1) / Ptr``. ``Ts`` and ``Tc``
are the times the channel is taken by a success and by a collision; :func:`exchange_times`
gives them for 802.11b as the engine runs it (see there).

In the paper's Table I setting (FHSS: slot 50 µs, 1 Mbit/s, 8,184-bit payloads; RTS/CTS
Ts = 8,982 and Tc = 417 µs, basic access Ts = Tc = 8,713 µs, no propagation delay) with
W = 32 and m = 3, RTS/CTS stays near 0.89 as n grows and basic access falls from 0.83
at n = 5 to 0.56 at n = 50, the shape of the paper's Figs. 6 and 8:

>>> tau, p = solve(5, 32, 3)
>>> round(tau, 4), round(p, 4)
(0.0482, 0.1792)
>>> [round(throughput(n, 32, 3, 8184e-6, 8982e-6, 417e-6, 50e-6), 3) for n in (5, 50)]
[0.887, 0.879]
>>> [round(throughput(n, 32, 3, 8184e-6, 8713e-6, 8713e-6, 50e-6), 3) for n in (5, 50)]
[0.832, 0.563]
"""
from __future__ import annotations

import math

from emulator.mac.airtime import ack_80211, control_80211, data_80211


def tau_of(p: float, w: int, m: int) -> float:
    """A station's probability of transmitting in a slot, given ``p`` (Bianchi eq. 7).

    Written as ``2 / (1 + W + p W sum_{k<m} (2p)^k)``, the same value without the 0/0
    of the closed form at ``p = 1/2``.

    >>> round(tau_of(0.0, 32, 5), 6) == round(2 / 33, 6)
    True
    """
    return 2.0 / (1.0 + w + p * w * sum((2 * p) ** k for k in range(m)))


def solve(n: int, w: int, m: int) -> tuple[float, float]:
    """``(tau, p)`` for ``n`` saturated stations: the fixed point, by bisection on ``p``.

    ``p - (1 - (1 - tau(p))^(n-1))`` rises from ``<= 0`` at ``p = 0`` to ``> 0`` at 1, once.

    >>> solve(1, 32, 5)[1]
    0.0
    """
    if n < 1:
        raise ValueError(f"bianchi.n: expected >= 1 station, got {n}")
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid - (1 - (1 - tau_of(mid, w, m)) ** (n - 1)) > 0:
            hi = mid
        else:
            lo = mid
    p = 0.0 if n == 1 else lo
    return tau_of(p, w, m), p


def throughput(n: int, w: int, m: int, payload_time: float, ts: float, tc: float,
               slot: float) -> float:
    """The fraction of time carrying payload (Bianchi eq. 13), times in seconds."""
    tau, _ = solve(n, w, m)
    p_tr = 1 - (1 - tau) ** n
    p_s = n * tau * (1 - tau) ** (n - 1) / p_tr
    busy = p_tr * p_s * ts + p_tr * (1 - p_s) * tc
    return p_s * p_tr * payload_time / ((1 - p_tr) * slot + busy)


def stages(cw_min: int, cw_max: int) -> int:
    """``m``, the backoff stages from CWmin to CWmax: log2((CWmax + 1) / (CWmin + 1)).

    >>> stages(31, 1023)
    5
    """
    return round(math.log2((cw_max + 1) / (cw_min + 1)))


def exchange_times(dcf, payload_bytes: int, rts: bool) -> tuple[float, float]:
    """``(Ts, Tc)`` of 802.11b for one unicast frame of ``payload_bytes``, no propagation delay.

    Basic access: ``Ts = DATA + SIFS + ACK + DIFS``; RTS/CTS: ``Ts = RTS + SIFS + CTS +
    SIFS + DATA + SIFS + ACK + DIFS``. ``Tc = DATA + DIFS`` (``RTS + DIFS``) as Bianchi
    has it: frames that start in the same slot at equal power leave every bystander
    below the 4 dB a preamble needs, so it detects none, takes no EIFS and counts down
    again DIFS after the energy ends (ns-3's rule, and the engine's).

    >>> from emulator.mac.standards import Dcf80211
    >>> [round(t * 1e6) for t in exchange_times(Dcf80211(), 1500, rts=False)]
    [1567, 1354]
    """
    data = data_80211(dcf, payload_bytes, broadcast=False)
    ack = ack_80211(dcf)
    if not rts:
        return data + dcf.sifs + ack + dcf.difs, data + dcf.difs
    rts_time = control_80211(dcf, dcf.rts_bytes)
    cts = control_80211(dcf, dcf.cts_bytes)
    ts = rts_time + cts + data + ack + 3 * dcf.sifs + dcf.difs
    return ts, rts_time + dcf.difs


def saturation_throughput(n: int, dcf, payload_bytes: int, rts: bool = False) -> float:
    """Bianchi's saturation throughput of ``n`` stations, payload bits per second.

    >>> from emulator.mac.standards import Dcf80211
    >>> [round(saturation_throughput(n, Dcf80211(), 1500) / 1e6, 2) for n in (1, 10, 50)]
    [6.39, 6.38, 5.29]
    """
    ts, tc = exchange_times(dcf, payload_bytes, rts)
    fraction = throughput(n, dcf.cw_min + 1, stages(dcf.cw_min, dcf.cw_max),
                          payload_bytes * 8 / dcf.data_rate, ts, tc, dcf.slot)
    return fraction * dcf.data_rate
