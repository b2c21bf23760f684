"""Radio propagation and frame errors: log-distance path loss, a modulation's bit-error
curve, and the frame error rate of a frame of a given size.

``[radio] model = "unit_disk"`` (the default) links nodes within ``radius`` with a fixed
loss; ``"log_distance"`` gives every pair of nodes a received power

    P_r = P_t - PL_0 - 10 n log10(d / d_0) + X,    X ~ N(0, sigma^2) dB (shadowing),

a signal-to-noise ratio ``P_r - N`` (noise floor ``N``), a bit error rate from the
modulation's curve (those of ns-3's ``DsssErrorRateModel`` and ``LrWpanErrorModel``, so
the testbed and ns-3 agree on the same SNR), and a frame of ``b`` bytes is lost with
probability ``FER = 1 - (1 - BER)^(8 b)``. A link exists where a reference frame's FER is
below ``link_fer``. The defaults are ns-3's (``LogDistancePropagationLossModel``:
exponent 3, 46.6777 dB at 1 m; ``WifiPhy``: 16.0206 dBm; thermal noise over 22 MHz with
a 7 dB noise figure: -93.97 dBm), 802.11b at 1 Mbit/s.

What it leaves out: interference between simultaneous frames (the shared medium
schedules them apart instead), fading faster than an epoch, antenna gains, capture, and
rate adaptation.

Examples
--------
>>> radio = Radio()
>>> round(float(radio.snr_db(100.0)), 2)     # dB at 100 m: 16.02 - 106.68 + 93.97
3.31
>>> round(float(radio.fer(150.0, 100)), 5), round(float(radio.fer(150.0, 1500)), 4)
(0.00034, 0.0051)
>>> round(radio.range_m(), 1)                 # a 100-byte frame lost half the time
195.0
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from topologies.schema import Field, check_table

#: The modulations: ``name -> (bit rate in bit/s, channel bandwidth in Hz)``.
MODULATIONS = {"dsss_1mbps": (1e6, 22e6), "dsss_2mbps": (2e6, 22e6),
               "oqpsk_250kbps": (250e3, 2e6)}
MODELS = ("unit_disk", "log_distance")

#: ``[radio]``: what a spec may set (docs/SPEC.md lists it).
RADIO_SCHEMA = {
    "model": Field("choice", "unit_disk", choices=MODELS,
                   doc="unit_disk: links within radius, fixed loss; log_distance: loss by "
                       "distance and frame size (positions needed)"),
    "exponent": Field("number", 3.0, low=1, doc="path-loss exponent n"),
    "reference_loss_db": Field("number", 46.6777, doc="path loss at the reference "
                                                      "distance, dB"),
    "reference_distance_m": Field("number", 1.0, low=0, low_open=True,
                                  doc="the reference distance d_0, metres"),
    "meters_per_unit": Field("number", 1.0, low=0, low_open=True,
                             doc="metres in one unit of the nodes' positions"),
    "shadowing_db": Field("number", 0.0, low=0, doc="sigma of log-normal shadowing, dB, "
                                                    "drawn per link and epoch"),
    "tx_power_dbm": Field("number", 16.0206, doc="transmit power, dBm"),
    "noise_floor_dbm": Field("number", -93.97, doc="noise power over the channel, dBm"),
    "modulation": Field("choice", "dsss_1mbps", choices=tuple(MODULATIONS),
                        doc="the bit-error curve and bit rate"),
    "reference_bytes": Field("integer", 100, low=1, doc="the frame size that decides "
                                                        "whether a link exists"),
    "link_fer": Field("number", 0.5, low=0, high=1, low_open=True,
                      doc="a link exists where the reference frame's error rate is below "
                          "this"),
    "sensitivity_dbm": Field("number", None, none=True,
                             doc="receiver sensitivity, dBm: a link exists only where the "
                                 "received power reaches it (ns-3's 802.11 preamble "
                                 "detection: -82); none: no cut"),
}


def _dbpsk(ebn0):
    return 0.5 * np.exp(-ebn0)


def _dqpsk(ebn0):
    # ns-3 DsssErrorRateModel::DqpskFunction
    return ((math.sqrt(2) + 1) / math.sqrt(8 * math.pi * math.sqrt(2))
            / np.sqrt(ebn0) * np.exp(-(2 - math.sqrt(2)) * ebn0))


def _oqpsk(snr):
    # ns-3 LrWpanErrorModel: IEEE 802.15.4-2006 Annex E
    total = sum((-1) ** k * math.comb(16, k) * np.exp(20 * snr * (1.0 / k - 1.0))
                for k in range(2, 17))
    return 8.0 / 15 / 16 * total


@dataclass(frozen=True)
class Radio:
    """A ``[radio]`` table's model (defaults as :data:`RADIO_SCHEMA`)."""

    model: str = "log_distance"
    exponent: float = 3.0
    reference_loss_db: float = 46.6777
    reference_distance_m: float = 1.0
    meters_per_unit: float = 1.0
    shadowing_db: float = 0.0
    tx_power_dbm: float = 16.0206
    noise_floor_dbm: float = -93.97
    modulation: str = "dsss_1mbps"
    reference_bytes: int = 100
    link_fer: float = 0.5
    sensitivity_dbm: float | None = None

    def rx_dbm(self, d_m, shadow_db=0.0):
        """Received power at ``d_m`` metres (arrays welcome), dBm."""
        return self.snr_db(d_m, shadow_db) + self.noise_floor_dbm

    def snr_db(self, d_m, shadow_db=0.0):
        """Signal-to-noise ratio at ``d_m`` metres (arrays welcome), dB."""
        d = np.maximum(np.asarray(d_m, dtype=float), self.reference_distance_m)
        loss = self.reference_loss_db + 10 * self.exponent * np.log10(
            d / self.reference_distance_m)
        return self.tx_power_dbm - loss + shadow_db - self.noise_floor_dbm

    def ber(self, d_m, shadow_db=0.0):
        """Bit error rate at ``d_m`` metres."""
        return self._ber_at(self.snr_db(d_m, shadow_db))

    def _ber_at(self, snr_db):
        """Bit error rate at a signal-to-noise ratio of ``snr_db`` dB."""
        snr = 10 ** (np.asarray(snr_db) / 10)
        rate, band = MODULATIONS[self.modulation]
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            if self.modulation == "oqpsk_250kbps":
                ber = _oqpsk(snr)
            else:
                ebn0 = snr * band / rate
                ber = _dbpsk(ebn0) if self.modulation == "dsss_1mbps" else _dqpsk(ebn0)
        return np.clip(np.nan_to_num(ber, nan=0.5), 0.0, 0.5)

    def fer(self, d_m, size_bytes, shadow_db=0.0):
        """Frame error rate of ``size_bytes`` at ``d_m`` metres."""
        return frame_error(self.ber(d_m, shadow_db), size_bytes)

    def range_m(self, shadow_db: float = 0.0) -> float:
        """The distance at which the reference frame's FER reaches ``link_fer`` or, if
        nearer, the received power falls below ``sensitivity_dbm``, without shadowing (or
        with ``shadow_db`` of it), by bisection on a monotone curve.

        >>> round(Radio(sensitivity_dbm=-82.0).range_m(), 2)     # ns-3's 802.11b reach
        51.46
        """
        return _range_m(self, float(shadow_db))

    def links(self, positions, alive=None, rng=None):
        """The links among nodes at ``positions`` (an ``n x 2`` array in position units):
        ``(pairs, distance, ber)`` with ``pairs`` the index pairs ``(i, j)``, ``i < j``,
        of live nodes whose reference frame's FER is below ``link_fer``, ``distance``
        their distance in position units and ``ber`` their bit error rate.

        With ``shadowing_db > 0`` one shadowing value per pair is drawn from ``rng``
        (a ``numpy.random.Generator``), the same in both directions, truncated at
        ±4 sigma so that the pairs worth drawing for lie within :meth:`range_m` at
        +4 sigma; every pair within that distance is drawn for, live or not, so a node's
        failure does not move the other links' draws.

        >>> import numpy as np
        >>> radio = Radio(meters_per_unit=100.0)          # range 1.95 units
        >>> pairs, dist, ber = radio.links(np.array([[0, 0], [1, 0], [3, 0]]))
        >>> pairs.tolist(), dist.tolist(), bool(ber[0] < 1e-20)
        ([[0, 1]], [1.0], True)
        """
        from topologies.generators import geometric_edges

        positions = np.asarray(positions, dtype=float).reshape(-1, 2)
        self._check_rng(rng)
        pairs, dist = geometric_edges(positions, self.reach())
        keep, ber = self.judge(dist, rng)
        if alive is not None:
            alive = np.asarray(alive, dtype=bool)
            keep &= alive[pairs[:, 0]] & alive[pairs[:, 1]]
        return pairs[keep], dist[keep], ber[keep]

    def reach(self) -> float:
        """How far apart, in position units, two nodes may be linked at all: the range
        at +4 sigma of shadowing (the draws are truncated there), a hair wider so that
        rounding keeps a pair at the edge. :meth:`links` looks at the pairs within it.

        >>> round(Radio(sensitivity_dbm=-82.0, meters_per_unit=10.0).reach(), 3)
        5.146
        """
        return self.range_m(4 * self.shadowing_db) * (1 + 1e-9) / self.meters_per_unit

    def judge(self, dist, rng=None) -> tuple[np.ndarray, np.ndarray]:
        """Of pairs ``dist`` position units apart (a 1-D array, each within
        :meth:`reach`): ``(linked, ber)``, whether each is a link and its bit error rate,
        one shadowing value drawn per pair from ``rng``, in order (:meth:`links` over
        one set of positions; :func:`topologies.mobility.mobility_dynamics` over every
        sample at once, which draws the same values as sample after sample).

        >>> linked, ber = Radio(sensitivity_dbm=-82.0).judge(np.array([10.0, 51.0, 52.0]))
        >>> linked.tolist()
        [True, True, False]
        """
        self._check_rng(rng)
        sigma = self.shadowing_db
        shadow = np.clip(rng.normal(0.0, sigma, len(dist)), -4 * sigma, 4 * sigma) \
            if sigma > 0 else 0.0
        # the SNR once: the bit error rate and the received power (rx_dbm) both follow it
        snr_db = self.snr_db(dist * self.meters_per_unit, shadow)
        ber = self._ber_at(snr_db)
        keep = frame_error(ber, self.reference_bytes) < self.link_fer
        if self.sensitivity_dbm is not None:
            keep &= snr_db + self.noise_floor_dbm >= self.sensitivity_dbm
        return keep, ber

    def _check_rng(self, rng) -> None:
        if self.shadowing_db > 0 and rng is None:
            raise ValueError("radio.shadowing_db: shadowing needs a seed (rng)")


@functools.lru_cache(maxsize=64)
def _range_m(radio: Radio, shadow_db: float) -> float:
    def linked(d):
        return radio.fer(d, radio.reference_bytes, shadow_db) < radio.link_fer and (
            radio.sensitivity_dbm is None
            or radio.rx_dbm(d, shadow_db) >= radio.sensitivity_dbm)

    lo, hi = radio.reference_distance_m, radio.reference_distance_m
    while linked(hi):
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if linked(mid) else (lo, mid)
    return lo


def radio_from_table(table=None, where: str = "radio") -> Radio:
    """The :class:`Radio` a ``[radio]`` table describes (keys and values checked against
    :data:`RADIO_SCHEMA`; ``None`` or ``{}``: the unit disk).

    >>> radio_from_table({"model": "log_distance"}).exponent
    3.0
    >>> radio_from_table({"model": "log_distance", "exponent": 0.5})
    Traceback (most recent call last):
    ...
    topologies.schema.FieldError: radio.exponent: expected a number >= 1, got 0.5
    """
    if isinstance(table, Radio):
        return table
    return Radio(**check_table(RADIO_SCHEMA, {} if table is None else table, where))


def check_positions(radio: Radio, nodes, positions) -> None:
    """Refuse ``log_distance`` when a node in ``nodes`` has no entry in ``positions``.

    >>> check_positions(Radio(), [0, 1, 2], {0: (0.0, 0.0)})
    Traceback (most recent call last):
    ...
    ValueError: radio.model: "log_distance" needs every node's position (pos); nodes 1, 2 have none
    """
    if radio.model != "log_distance":
        return
    missing = [n for n in nodes if positions.get(n) is None]
    if missing:
        shown = ", ".join(str(n) for n in missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise ValueError(f'radio.model: "log_distance" needs every node\'s position (pos); '
                         f"node{'s' if len(missing) > 1 else ''} {shown} "
                         f"ha{'ve' if len(missing) > 1 else 's'} none")


def frame_error(ber, size_bytes):
    """``1 - (1 - BER)^(8 b)``: every bit must arrive.

    >>> round(float(frame_error(1e-4, 100)), 4)
    0.0769
    """
    return 1.0 - (1.0 - np.asarray(ber, dtype=float)) ** (8 * np.asarray(size_bytes))
