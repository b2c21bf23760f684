"""A node's link statistics learnt from its MAC's acknowledgements, as Contiki-NG's
``os/net/link-stats.c`` keeps them: per neighbour an ETX estimate, a freshness count and
the time of the last unicast.

- **First guess**: a neighbour heard for the first time (its DIO) gets an ETX from the
  power it was received with (``LINK_STATS_INIT_ETX_FROM_RSSI``, on by default there):
  the delivery ratio taken as linear from 0 at ``RSSI_LOW`` (-90 dBm) to 1 at
  ``RSSI_HIGH`` (-60 dBm), its ETX capped at ``ETX_INIT_MAX`` (3); ``ETX_DEFAULT`` (2)
  when the power is not known (a MAC without the log-distance radio).
- **Each unicast's outcome** (``MAC_TX_OK`` after ``attempts`` transmissions, or
  ``MAC_TX_NOACK`` at the retry limit, counted as ``ETX_NOACK_PENALTY`` = 16
  transmissions) moves the ETX by an EWMA: ``etx = (1 - a) etx + a x this``, with ``a``
  = ``EWMA_ALPHA`` (0.10) once the statistics are fresh, ``EWMA_BOOTSTRAP_ALPHA`` (0.25)
  before. A frame that never got on air (channel access failure, queue full) says
  nothing of the link and changes nothing, as in Contiki-NG.
- **Freshness**: each outcome adds its transmissions to the count (at most
  ``FRESHNESS_MAX``, 16); the count halves every ``FRESHNESS_HALF_LIFE`` (15 min);
  statistics are fresh with a count of at least ``FRESHNESS_TARGET`` (4) and a unicast
  in the last ``FRESHNESS_EXPIRATION_TIME`` (10 min). The halving is applied lazily
  (by whole half-lives since the last update) rather than by a periodic timer.

Contiki-NG keeps the ETX as an integer, ETX x 128 (``ETX_DIVISOR``), truncating each
update; here it is a float (the difference is below 1/128 of an ETX per update).

>>> stats = LinkStats()
>>> stats.heard(3, rx_dbm=-75.0), stats.heard(4, rx_dbm=None), stats.heard(5, rx_dbm=-93.0)
(2.0, 2.0, 3.0)
>>> round(stats.sent(0.0, 3, attempts=1, acked=True), 4)    # 1 tx: bootstrap alpha 0.25
1.75
>>> stats.fresh(0.0, 3)
False
>>> round(stats.sent(1.0, 3, attempts=4, acked=False), 4)   # 5 tx: fresh, alpha 0.10; no ACK counts 16
3.175
>>> stats.fresh(1.0, 3), stats.fresh(1.0, 4), stats.fresh(1.0 + 600, 3)
(True, False, False)
>>> round(stats.sent(2.0, 3, attempts=1, acked=True), 4)
2.9575
"""
from __future__ import annotations

#: Contiki-NG's constants (``os/net/link-stats.c``), times in seconds.
ETX_DEFAULT = 2.0
ETX_NOACK_PENALTY = 16
ETX_INIT_MAX = 3.0
RSSI_HIGH, RSSI_LOW = -60.0, -90.0
EWMA_ALPHA, EWMA_BOOTSTRAP_ALPHA = 0.10, 0.25
FRESHNESS_TARGET, FRESHNESS_MAX = 4, 16
FRESHNESS_HALF_LIFE = 15 * 60.0
FRESHNESS_EXPIRATION_TIME = 10 * 60.0


def guess_etx(rx_dbm: float | None) -> float:
    """The first ETX of a link whose frames arrive at ``rx_dbm`` (None: unknown).

    >>> guess_etx(-50.0), guess_etx(-80.0), guess_etx(-89.5), guess_etx(None)
    (1.0, 3.0, 3.0, 2.0)
    >>> guess_etx(-70.0)
    1.5
    """
    if rx_dbm is None:
        return ETX_DEFAULT
    bounded = max(min(rx_dbm, RSSI_HIGH), RSSI_LOW + 1)
    return min((RSSI_HIGH - RSSI_LOW) / (bounded - RSSI_LOW), ETX_INIT_MAX)


class LinkStats:
    """One node's statistics of its links (see the module docstring), in seconds of
    the protocol's clock."""

    __slots__ = ("_etx", "_freshness", "_last")

    def __init__(self):
        self._etx: dict[int, float] = {}
        self._freshness: dict[int, int] = {}
        self._last: dict[int, float] = {}   # time of the last unicast outcome

    def heard(self, neighbour: int, rx_dbm: float | None) -> float:
        """A frame of ``neighbour`` arrived at ``rx_dbm``: its first ETX guess if it is
        new (``link_stats_input_callback``); its ETX."""
        etx = self._etx.get(neighbour)
        if etx is None:
            etx = self._etx[neighbour] = guess_etx(rx_dbm)
            self._freshness[neighbour] = 0
        return etx

    def etx(self, neighbour: int) -> float:
        """The link's ETX now (ETX_DEFAULT for a neighbour never heard)."""
        return self._etx.get(neighbour, ETX_DEFAULT)

    def _aged(self, t: float, neighbour: int) -> int:
        """The freshness count at ``t``, halved once per half-life since the last
        update."""
        count, last = self._freshness.get(neighbour, 0), self._last.get(neighbour)
        if last is not None and t - last >= FRESHNESS_HALF_LIFE:
            count >>= int((t - last) // FRESHNESS_HALF_LIFE)
        return count

    def last(self, neighbour: int) -> float:
        """When the last unicast to ``neighbour`` had its outcome (-inf: never)."""
        return self._last.get(neighbour, float("-inf"))

    def fresh(self, t: float, neighbour: int) -> bool:
        """Whether the link's statistics are fresh at ``t`` (``link_stats_is_fresh``)."""
        last = self._last.get(neighbour)
        return (last is not None and t - last < FRESHNESS_EXPIRATION_TIME
                and self._aged(t, neighbour) >= FRESHNESS_TARGET)

    def sent(self, t: float, neighbour: int, attempts: int, acked: bool) -> float:
        """A unicast to ``neighbour`` took ``attempts`` transmissions and was
        acknowledged or not (``link_stats_packet_sent``); the link's new ETX."""
        etx = self.heard(neighbour, None)
        count = min(self._aged(t, neighbour) + attempts, FRESHNESS_MAX)
        self._freshness[neighbour], self._last[neighbour] = count, t
        alpha = EWMA_ALPHA if self.fresh(t, neighbour) else EWMA_BOOTSTRAP_ALPHA
        this = attempts if acked else ETX_NOACK_PENALTY
        etx = self._etx[neighbour] = (1.0 - alpha) * etx + alpha * this
        return etx
