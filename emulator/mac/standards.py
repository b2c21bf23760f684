"""The MAC and PHY constants of 802.11b DCF and 802.15.4 unslotted CSMA/CA, by their names.

Every default is ns-3 3.44's: an ``AdhocWifiMac`` with its ``Txop`` on an 802.11b DSSS
PHY, and ``LrWpanMac``/``LrWpanCsmaCa`` on the 2.4 GHz O-QPSK PHY, so that one scenario
description means the same channel here and there. Times are in seconds, sizes in bytes.

>>> dcf = Dcf80211()
>>> round(dcf.difs * 1e6), round(dcf.eifs * 1e6), round(dcf.ack_timeout * 1e6)
(50, 364, 222)
>>> lr = CsmaCa802154()
>>> round(lr.unit_backoff * 1e6), round(lr.cca * 1e6), round(lr.ack_wait * 1e6)
(320, 128, 864)
>>> Dcf80211(cw_min=63, cw_max=31).check()
Traceback (most recent call last):
...
ValueError: mac.cw_min: expected cw_min <= cw_max, got 63 > 31
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields

from emulator.mac.airtime import dsss_airtime

#: The DSSS/CCK data rates 802.11b allows, bit/s (clause 16/17: 1 and 2 DSSS, 5.5 and 11 CCK).
DSSS_RATES = (1e6, 2e6, 5.5e6, 11e6)


@dataclass(frozen=True)
class Dcf80211:
    """802.11b DCF: the ``Txop`` and ``FrameExchangeManager`` rules' constants.

    ``ack_timeout`` and ``cts_timeout`` count from the end of the frame they answer, as
    ns-3's ``FrameExchangeManager`` sets them: SIFS + a slot + the answer's preamble and
    PLCP header (the answer is expected to have begun by then). ``eifs`` is SIFS + an ACK
    at 1 Mbit/s, the lowest rate, + DIFS (802.11-2020 10.3.2.3.7), the wait after a frame
    received in error. ``queue_limit`` and ``lifetime`` are ns-3's ``WifiMacQueue`` ``MaxSize``
    (500 frames) and ``MaxDelay`` (500 ms). ``retry_limit`` counts transmission attempts
    of a frame, as ns-3's ``FrameRetryLimit`` ("the maximum number of transmission
    attempts of a frame that are made before a failure condition is indicated") and the
    standard's dot11ShortRetryLimit do; an RTS that gets no CTS is an attempt too.
    ns-3 3.44's ``RtsCtsThreshold`` is 4,692,480 bytes (RTS/CTS off); a frame whose PSDU
    is larger than ``rts_threshold_bytes`` is preceded by RTS/CTS. (The values were read
    from ns-3 3.44's attribute table: ``TypeId.LookupByName`` in the venv's ``ns3``.)
    """

    slot: float = 20e-6               # aSlotTime, DSSS (clause 16.3.8.4)
    sifs: float = 10e-6               # aSIFSTime, DSSS
    preamble_header: float = 192e-6   # long PLCP preamble (144 µs) + PLCP header (48 µs)
    data_rate: float = 11e6           # unicast data, bit/s (ns-3 examples' DsssRate11Mbps)
    basic_rate: float = 1e6           # broadcast and control frames (DsssRate1Mbps)
    cw_min: int = 31                  # aCWmin, DSSS
    cw_max: int = 1023                # aCWmax, DSSS
    ack_bytes: int = 14
    rts_bytes: int = 20
    cts_bytes: int = 14
    header_bytes: int = 28            # MAC header (24) + FCS (4) of a data frame
    retry_limit: int = 7              # attempts: ns-3 WifiMac FrameRetryLimit, see above
    rts_threshold_bytes: int = 4692480  # ns-3 RtsCtsThreshold: above any PSDU, so off
    queue_limit: int = 500            # ns-3 WifiMacQueue MaxSize "500p"
    lifetime: float = 0.5             # ns-3 WifiMacQueue MaxDelay

    @property
    def difs(self) -> float:
        """DIFS = SIFS + 2 slots (802.11-2020 10.3.2.3.4)."""
        return self.sifs + 2 * self.slot

    @property
    def eifs(self) -> float:
        """EIFS = SIFS + an ACK at the basic rate + DIFS."""
        return self.sifs + dsss_airtime(self.ack_bytes, DSSS_RATES[0], self.preamble_header) \
            + self.difs

    @property
    def ack_timeout(self) -> float:
        """From a data frame's end: SIFS + slot + the ACK's preamble and header."""
        return self.sifs + self.slot + self.preamble_header

    @property
    def cts_timeout(self) -> float:
        """From an RTS's end: SIFS + slot + the CTS's preamble and header."""
        return self.sifs + self.slot + self.preamble_header

    def check(self) -> "Dcf80211":
        """Raise a one-line ``ValueError`` naming the first bad field; return self."""
        _check_common(self)
        for name in ("data_rate", "basic_rate"):
            if getattr(self, name) not in DSSS_RATES:
                raise ValueError(f"mac.{name}: expected one of 1, 2, 5.5, 11 Mbit/s "
                                 f"(802.11b), got {getattr(self, name) / 1e6:g} Mbit/s")
        if self.cw_min < 1:
            raise ValueError(f"mac.cw_min: expected >= 1, got {self.cw_min}")
        if self.cw_min > self.cw_max:
            raise ValueError(f"mac.cw_min: expected cw_min <= cw_max, "
                             f"got {self.cw_min} > {self.cw_max}")
        if self.retry_limit < 1:
            raise ValueError(f"mac.retry_limit: expected >= 1 attempt, got {self.retry_limit}")
        return self


@dataclass(frozen=True)
class CsmaCa802154:
    """802.15.4 unslotted CSMA/CA on the 2.4 GHz O-QPSK PHY (``LrWpanCsmaCa``, ``LrWpanMac``).

    ``ack_wait`` is macAckWaitDuration = aUnitBackoffPeriod + aTurnaroundTime +
    phySHRDuration + ceil(6 × phySymbolsPerOctet) symbols (802.15.4-2011 6.4.3:
    20 + 12 + 10 + 12 = 54 symbols), counted from the end of the data frame.
    ``header_bytes`` is a data frame's MHR with short addresses and PAN ID compression
    (frame control 2, sequence 1, PAN 2, two addresses 2 + 2) and its FCS (2). After a
    frame, the sender waits macLIFSPeriod (40 symbols) if the frame was longer than
    aMaxSIFSFrameSize (18 bytes) and macSIFSPeriod (12 symbols) otherwise.
    """

    bit_rate: float = 250e3
    symbol: float = 16e-6             # one O-QPSK symbol (4 bits at 62.5 ksymbol/s)
    shr_phr_bytes: int = 6            # preamble 4 + SFD 1 + PHR 1
    unit_backoff_symbols: int = 20    # aUnitBackoffPeriod
    cca_symbols: int = 8              # phyCCADuration
    turnaround_symbols: int = 12      # aTurnaroundTime
    min_be: int = 3                   # macMinBE
    max_be: int = 5                   # macMaxBE
    max_csma_backoffs: int = 4        # macMaxCSMABackoffs
    max_frame_retries: int = 3        # macMaxFrameRetries
    ack_bytes: int = 5                # MPDU of an ACK: frame control, sequence, FCS
    header_bytes: int = 11
    max_psdu_bytes: int = 127         # aMaxPHYPacketSize
    lifs_symbols: int = 40            # macLIFSPeriod
    sifs_symbols: int = 12            # macSIFSPeriod
    max_sifs_frame_bytes: int = 18    # aMaxSIFSFrameSize
    queue_limit: int = 500            # frames; the same bound as the 802.11 queue
    lifetime: float = 0.5

    @property
    def unit_backoff(self) -> float:
        return self.unit_backoff_symbols * self.symbol

    @property
    def cca(self) -> float:
        return self.cca_symbols * self.symbol

    @property
    def turnaround(self) -> float:
        return self.turnaround_symbols * self.symbol

    @property
    def ack_wait(self) -> float:
        """macAckWaitDuration, from the end of the data frame."""
        per_octet = 8 / 4                                 # O-QPSK: 4 bits a symbol
        shr_symbols = (self.shr_phr_bytes - 1) * per_octet   # the SHR without the PHR
        return (self.unit_backoff_symbols + self.turnaround_symbols + shr_symbols
                + math.ceil(6 * per_octet)) * self.symbol

    def ifs(self, mpdu_bytes: int) -> float:
        """The interframe space after a frame of ``mpdu_bytes`` (LIFS or SIFS)."""
        long = mpdu_bytes > self.max_sifs_frame_bytes
        return (self.lifs_symbols if long else self.sifs_symbols) * self.symbol

    def check(self) -> "CsmaCa802154":
        """Raise a one-line ``ValueError`` naming the first bad field; return self."""
        _check_common(self)
        if not 0 <= self.min_be <= self.max_be:
            raise ValueError(f"mac.min_be: expected 0 <= min_be <= max_be, "
                             f"got {self.min_be} and {self.max_be}")
        for name in ("max_csma_backoffs", "max_frame_retries"):
            if getattr(self, name) < 0:
                raise ValueError(f"mac.{name}: expected >= 0, got {getattr(self, name)}")
        return self


def _check_common(params) -> None:
    """Times must be >= 0 and sizes > 0 where the standard needs them positive."""
    for field in fields(params):
        value = getattr(params, field.name)
        if isinstance(value, float) and not value >= 0:
            raise ValueError(f"mac.{field.name}: expected a time >= 0, got {value}")
    for name in ("bit_rate", "symbol", "slot"):
        if hasattr(params, name) and not getattr(params, name) > 0:
            raise ValueError(f"mac.{name}: expected > 0, got {getattr(params, name)}")
    if params.queue_limit < 1:
        raise ValueError(f"mac.queue_limit: expected >= 1 frame, got {params.queue_limit}")
