"""How long a frame occupies the channel, for each PHY.

802.11b: a DSSS PPDU is the long PLCP preamble and header (192 µs) then the PSDU (the
MAC header, the payload and the FCS) at its rate: unicast data at the data rate,
broadcast data and RTS at the basic rate, and an answer (ACK, CTS) at the highest
802.11b rate not above the rate of the frame it answers (802.11-2020 10.6.6.5, every
802.11b rate being mandatory): an ACK at the data rate, a CTS at the basic rate. ns-3
3.44 does the same (measured: one saturated station at 11 Mbit/s spends 203.6 µs a
frame beyond DIFS, backoff, data and SIFS, an ACK at 11 Mbit/s being 203 µs; at
5.5 Mbit/s 212.6 against 213; ``docs/NOTES.md``). 802.15.4 O-QPSK:
the SHR and PHR (6 bytes) then the PSDU, all at 250 kbit/s (32 µs a byte).

>>> from emulator.mac.standards import Dcf80211, CsmaCa802154
>>> dcf = Dcf80211()
>>> [round(x * 1e6) for x in (data_80211(dcf, 1500, False), data_80211(dcf, 1500, True))]
[1304, 12416]
>>> [round(x * 1e6) for x in (ack_80211(dcf), control_80211(dcf, dcf.rts_bytes))]
[203, 352]
>>> lr = CsmaCa802154()
>>> round(data_802154(lr, 100) * 1e6), round(ack_802154(lr) * 1e6)   # (6 + 111) x 32, 11 x 32
(3744, 352)
"""
from __future__ import annotations

import math


def dsss_airtime(nbytes: int, rate: float, preamble_header: float) -> float:
    """A DSSS PPDU's duration: preamble and header, then the PSDU rounded up to a µs.

    The PLCP header's LENGTH field counts whole microseconds (802.11-2020 16.2.3.5).

    >>> round(dsss_airtime(14, 1e6, 192e-6) * 1e6)    # an ACK at 1 Mbit/s
    304
    >>> round(dsss_airtime(1528, 11e6, 192e-6) * 1e6)  # 1,500 B of payload at 11
    1304
    """
    return preamble_header + math.ceil(nbytes * 8 / rate * 1e6 - 1e-9) * 1e-6


def data_80211(dcf, payload_bytes: int, broadcast: bool) -> float:
    """An 802.11b data frame of ``payload_bytes`` (header and FCS added) on air."""
    rate = dcf.basic_rate if broadcast else dcf.data_rate
    return dsss_airtime(payload_bytes + dcf.header_bytes, rate, dcf.preamble_header)


def control_80211(dcf, nbytes: int) -> float:
    """An 802.11b control frame of ``nbytes`` at the basic rate (RTS; CTS, answering one)."""
    return dsss_airtime(nbytes, dcf.basic_rate, dcf.preamble_header)


def ack_80211(dcf) -> float:
    """The ACK of a unicast data frame: at the data rate, the frame's own."""
    return dsss_airtime(dcf.ack_bytes, dcf.data_rate, dcf.preamble_header)


def data_802154(params, payload_bytes: int) -> float:
    """An 802.15.4 data frame of ``payload_bytes`` (MHR and FCS added) on air."""
    return (params.shr_phr_bytes + payload_bytes + params.header_bytes) * 8 / params.bit_rate


def ack_802154(params) -> float:
    """An 802.15.4 ACK on air."""
    return (params.shr_phr_bytes + params.ack_bytes) * 8 / params.bit_rate
