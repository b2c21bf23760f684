"""ContikiMAC radio duty cycling: when a hop's frame is delivered and how long each radio is on.

ContikiMAC (Dunkels, SICS T2011:13; Contiki 3.0's ``core/net/mac/contikimac/contikimac.c``)
keeps the radio asleep and wakes it ``channel_check_rate_hz`` times a second for a
*channel check*: ``cca_count`` clear-channel assessments ``cca_sleep`` apart, each the
radio's start-up (``radio_startup``) and one CCA (``cca_check``). A sender does not
wake its receiver with a preamble: it sends the whole data frame again and again,
``inter_packet`` apart, listening for the acknowledgement in between, until the ACK
comes (unicast) or for a full ``strobe_time`` (broadcast: a period and two checks). A
receiver whose CCA finds energy stays on, takes the next whole copy (it cannot decode a
frame it caught in the middle), acknowledges it after the turnaround, and sleeps again.
ContikiMAC's timing constraints (``inter_packet`` < the CCAs' spacing < the shortest
frame's airtime + ``inter_packet``) make one of the two CCAs fall on a copy whatever
the phase; :meth:`ContikiMac.check` refuses timings that break them.

This module is the MAC's clock only, exact for one sender and one receiver: given the
receiver's phase (the instant of its first check), :meth:`ContikiMac.unicast` gives the
hop's end and each radio's seconds on air, listening and asleep; :meth:`broadcast` the
same for a set of neighbours. With ``phase_lock``, a sender that knows the receiver's
phase (from an earlier ACK) sleeps until ``guard_time`` before its next check and
strobes from there, as Contiki's phase optimisation does.

What it leaves out (the shared medium decides these where it runs it): other traffic
(a receiver woken by another sender's train, the fast-sleep rule cutting a wake-up
short when the channel stays busy with no frame, collisions between trains), clock
drift between phases, and the energy of the radio's start-up beyond its time on.

The defaults are Contiki 3.0's (``RTIMER_ARCH_SECOND`` = 32,768 on the Tmote Sky/CC2420
where its figures were measured; constants as fractions of a second as the source
writes them) and the CC2420's start-up and turnaround (192 µs = 12 symbols).

Examples
--------
An idle radio is on for two start-ups and two CCAs each eighth of a second:

>>> mac = ContikiMac()
>>> round(mac.idle_on_fraction() * 100, 3)           # 8 x 2 x (192 + 122) µs
0.503

A 40-byte frame (46 bytes with the SHR and PHR: 1.47 ms at 250 kbit/s) to a receiver
whose check comes at 60 ms: the train starts after the sender's six CCAs (3.7 ms), a copy
every 1.87 ms; the receiver's first CCA falls inside copy 30, so it takes copy 31 whole
and acknowledges it after the turnaround.

>>> hop = mac.unicast(0.0, frame_s=46 * 32e-6, receiver_phase=0.060)
>>> hop.copies, round(hop.end * 1e3, 2), round(hop.sender.tx * 1e3, 2)
(32, 63.78, 47.1)
>>> round(hop.receiver.rx * 1e3, 3), round(hop.receiver.tx * 1e3, 3)
(1.472, 0.352)
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np
from numba import njit

#: What a radio did during one exchange, seconds by state (``listen``: receiver on,
#: nothing being received; the rest of the exchange it sleeps).
STATE_NAMES = ("tx", "rx", "listen")


@dataclass(frozen=True)
class RadioTime:
    """Seconds a radio spent sending, receiving and listening in one exchange."""

    tx: float = 0.0
    rx: float = 0.0
    listen: float = 0.0

    @property
    def on(self) -> float:
        return self.tx + self.rx + self.listen

    def __add__(self, other: "RadioTime") -> "RadioTime":
        return RadioTime(self.tx + other.tx, self.rx + other.rx, self.listen + other.listen)


@dataclass(frozen=True)
class Hop:
    """One frame's exchange: when it starts (the train's first copy), when it ends (the
    ACK received, or the train over), how many copies were sent, and each radio's time."""

    start: float
    end: float
    copies: int
    sender: RadioTime
    receiver: RadioTime
    delivered: bool = True


#: The fields of :class:`ContikiMac` the compiled functions read, by position.
TIMING = ("channel_check_rate_hz", "cca_count", "cca_check", "cca_sleep", "radio_startup",
          "inter_packet")
_RATE, _CCAS, _CCA, _SLEEP, _STARTUP, _GAP = range(len(TIMING))


@njit(cache=True)
def caught(timing, start, frame_s, check):
    """When a channel check at ``check`` finds a train of copies of ``frame_s`` seconds
    begun at ``start`` (the end of its first CCA that overlaps a copy), or -inf if its
    CCAs all fall in gaps or before the train. ``timing``: :meth:`ContikiMac.timing`."""
    step = frame_s + timing[_GAP]
    spacing = timing[_CCA] + timing[_SLEEP]
    for k in range(int(timing[_CCAS])):
        cca_from = check + k * spacing + timing[_STARTUP]
        cca_to = cca_from + timing[_CCA]
        if cca_to <= start:
            continue
        begin = max(cca_from, start)
        into = (begin - start) % step
        if into < frame_s or step - into < cca_to - begin:
            return cca_to
    return -np.inf


@njit(cache=True)
def first_copy(timing, start, frame_s, phase, until):
    """The copy (index from 0) a receiver whose checks come at ``phase + k × period``
    takes whole from a train begun at ``start`` whose copies start before ``until``, and
    when its CCA found the train; ``(-1, -inf)`` if no check found it in time."""
    period = 1.0 / timing[_RATE]
    step = frame_s + timing[_GAP]
    check_time = timing[_CCAS] * (timing[_CCA] + timing[_SLEEP])
    t = start - check_time
    check = phase + np.ceil((t - phase) / period - 1e-12) * period
    while check < until:
        found = caught(timing, start, frame_s, check)
        if found > -np.inf:
            copy = int(np.ceil((found - start) / step - 1e-12))
            if start + copy * step < until:   # a copy is sent if it starts in time
                return copy, found
            return -1, -np.inf
        check += period
    return -1, -np.inf


@dataclass(frozen=True)
class ContikiMac:
    """ContikiMAC's timing (see the module docstring); seconds unless named otherwise."""

    channel_check_rate_hz: float = 8.0     # NETSTACK_RDC_CHANNEL_CHECK_RATE
    cca_count: int = 2                     # CCA_COUNT_MAX: CCAs of a channel check
    cca_count_tx: int = 6                  # CCA_COUNT_MAX_TX: CCAs before a train
    cca_check: float = 1 / 8192            # CCA_CHECK_TIME
    cca_sleep: float = 1 / 2000            # CCA_SLEEP_TIME
    radio_startup: float = 192e-6          # CC2420: receiver on before a CCA is valid
    turnaround: float = 192e-6             # aTurnaroundTime: a frame's end to its ACK
    ack_s: float = 11 * 32e-6              # 802.15.4 ACK: 5 bytes + SHR/PHR at 250 kbit/s
    inter_packet: float = 1 / 2500         # INTER_PACKET_INTERVAL
    max_phase_strobe: float = 1 / 60       # MAX_PHASE_STROBE_TIME
    guard_copies_checks: int = 10          # GUARD_TIME = 10 x CHECK_TIME + CHECK_TIME_TX
    phase_lock: bool = False               # WITH_PHASE_OPTIMIZATION
    # A check that found energy (Contiki's powercycle after packet_seen): the radio
    # stays on at most LISTEN_TIME_AFTER_PACKET_DETECTED, goes off after more than
    # MAX_SILENCE_PERIODS silent CCA periods, and with WITH_FAST_SLEEP after more than
    # MAX_NONACTIVITY_PERIODS periods without a frame being received.
    listen_after_detect: float = 1 / 80    # LISTEN_TIME_AFTER_PACKET_DETECTED
    max_silence_periods: int = 5           # MAX_SILENCE_PERIODS
    max_nonactivity_periods: int = 10      # MAX_NONACTIVITY_PERIODS
    fast_sleep: bool = True                # WITH_FAST_SLEEP
    #: Book the radio time of nodes woken by trains not meant for them (False: only
    #: the addressee's and a broadcast's receivers' time, as before).
    overhearing: bool = False
    #: Contiki's csma.c above the RDC: a frame whose transmission found the channel
    #: busy is requeued (CSMA_MAX_MAC_TRANSMISSIONS; 0: dropped at once, as before).
    csma_max_mac_transmissions: int = 0
    csma_max_backoff_exponent: int = 3     # CSMA_MAX_BACKOFF_EXPONENT

    @property
    def period(self) -> float:
        return 1.0 / self.channel_check_rate_hz

    @property
    def cca_spacing(self) -> float:
        """From one CCA of a check to the next."""
        return self.cca_check + self.cca_sleep

    @property
    def nonactivity_time(self) -> float:
        """How long fast sleep lets a woken radio listen without a frame starting:
        MAX_NONACTIVITY_PERIODS CCA periods, against LISTEN_TIME_AFTER_PACKET_DETECTED
        without it.

        >>> mac = ContikiMac()
        >>> round(mac.nonactivity_time * 1e3, 2), mac.listen_after_detect * 1e3
        (6.22, 12.5)
        """
        return self.max_nonactivity_periods * self.cca_spacing

    @property
    def check_time(self) -> float:
        """CHECK_TIME: a channel check's CCAs and the sleeps between them."""
        return self.cca_count * self.cca_spacing

    @property
    def strobe_time(self) -> float:
        """STROBE_TIME: the longest train, a period and two checks."""
        return self.period + 2 * self.check_time

    @property
    def guard_time(self) -> float:
        """GUARD_TIME: how long before a locked receiver's check the train starts."""
        return (self.guard_copies_checks * self.check_time
                + self.cca_count_tx * self.cca_spacing)

    def check(self, frame_s: float | None = None) -> "ContikiMac":
        """Refuse values and timings ContikiMAC cannot work with, in one line naming the
        field (``mac.<field>``); with ``frame_s``, also a frame too short to be caught.

        >>> ContikiMac(channel_check_rate_hz=0).check()
        Traceback (most recent call last):
        ...
        ValueError: mac.channel_check_rate_hz: expected a number > 0, got 0
        >>> ContikiMac(inter_packet=0.001).check()
        Traceback (most recent call last):
        ...
        ValueError: mac.inter_packet: expected less than the CCAs' spacing (0.000622 s: a train's gap must not fall between a check's two CCAs), got 0.001
        """
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool):
                continue
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0 \
                    or (value == 0 and f.name in ("channel_check_rate_hz", "cca_count",
                                                   "cca_check", "inter_packet")):
                low = "> 0" if f.name in ("channel_check_rate_hz", "cca_count", "cca_check",
                                          "inter_packet") else ">= 0"
                raise ValueError(f"mac.{f.name}: expected a number {low}, got {value!r}")
        if self.inter_packet >= self.cca_spacing:
            raise ValueError(f"mac.inter_packet: expected less than the CCAs' spacing "
                             f"({self.cca_spacing:.3g} s: a train's gap must not fall "
                             f"between a check's two CCAs), got {self.inter_packet:g}")
        if self.cca_count < 2:
            raise ValueError(f"mac.cca_count: expected at least 2 (one CCA can fall in a "
                             f"train's gap), got {self.cca_count}")
        if self.check_time >= self.period:
            raise ValueError(f"mac.channel_check_rate_hz: expected a period longer than a "
                             f"channel check ({self.check_time:.3g} s), got "
                             f"{self.channel_check_rate_hz:g} Hz")
        if frame_s is not None and frame_s + self.inter_packet <= self.cca_spacing:
            raise ValueError(f"mac: a frame of {frame_s * 1e6:.0f} µs is too short for "
                             f"ContikiMAC's checks: a frame plus the inter-packet interval "
                             f"must exceed the CCAs' spacing ({self.cca_spacing * 1e6:.0f} µs)")
        return self

    # -- a radio left alone ------------------------------------------------------------

    def idle_on_fraction(self) -> float:
        """The share of time an idle radio is on: each check's CCAs, each a start-up
        and one CCA long (``channel_check_rate_hz × cca_count × (radio_startup +
        cca_check)``)."""
        return self.channel_check_rate_hz * self.cca_count * (self.radio_startup +
                                                              self.cca_check)

    def idle(self, seconds: float) -> RadioTime:
        """An idle radio over ``seconds``: its checks, as listening."""
        return RadioTime(listen=self.idle_on_fraction() * seconds)

    # -- a train of copies -------------------------------------------------------------

    def next_check(self, phase: float, t: float) -> float:
        """The first check of a radio whose checks come at ``phase + k × period`` that
        starts at or after ``t``."""
        return phase + math.ceil((t - phase) / self.period - 1e-12) * self.period

    def timing(self) -> np.ndarray:
        """The constants the compiled functions below take, in :data:`TIMING`'s order."""
        return np.array([getattr(self, name) for name in TIMING], dtype=np.float64)

    def _receive(self, start: float, frame_s: float, phase: float, until: float):
        """The receiver's side of a train from ``start`` whose copies start before
        ``until``: the copy it takes (index) and when its first CCA found the train;
        None if no check in time found it (:func:`first_copy`)."""
        copy, found = first_copy(self.timing(), start, frame_s, phase, until)
        return None if copy < 0 else (copy, found)

    def _sender_cca(self) -> RadioTime:
        """The CCAs a sender makes before its train (CCA_COUNT_MAX_TX)."""
        return RadioTime(listen=self.cca_count_tx * (self.radio_startup + self.cca_check))

    def unicast(self, t: float, frame_s: float, receiver_phase: float,
                locked: bool | None = None) -> Hop:
        """A unicast frame of ``frame_s`` airtime handed to the MAC at ``t``, to a
        receiver whose checks start at ``receiver_phase + k × period``.

        Unlocked, the train starts at ``t`` after the sender's CCAs; with the phase lock
        (``locked``, default :attr:`phase_lock`) it starts :attr:`guard_time` before the
        receiver's next check (at once if that is past) and lasts at most
        :attr:`max_phase_strobe` + the guard. The receiver takes the first whole copy
        after its CCA found the train, answers after the turnaround; the sender, which
        listens between copies, stops at the ACK's end."""
        locked = self.phase_lock if locked is None else locked
        ready = t + self.cca_count_tx * self.cca_spacing
        if locked:
            wake = self.next_check(receiver_phase, ready + self.guard_time)
            start = max(ready, wake - self.guard_time)
            limit = start + self.guard_time + self.max_phase_strobe
        else:
            start, limit = ready, ready + self.strobe_time
        step = frame_s + self.inter_packet
        got = self._receive(start, frame_s, receiver_phase, limit)
        if got is None:   # the train ran out (a locked sender whose guess was wrong)
            copies = math.ceil((limit - start) / step)
            return Hop(start, start + copies * step, copies,
                       self._sender_cca() + RadioTime(tx=copies * frame_s,
                                                      listen=copies * self.inter_packet),
                       RadioTime(), delivered=False)
        copy, found = got
        received = start + copy * step + frame_s
        end = received + self.turnaround + self.ack_s
        copies = copy + 1
        sender = self._sender_cca() + RadioTime(
            tx=copies * frame_s, listen=copy * self.inter_packet + self.turnaround,
            rx=self.ack_s)
        # the receiver: on from the end of the CCA that found the train (the check
        # itself is the idle radio's, :meth:`idle`) to the copy it takes, receiving it,
        # then sending the ACK (its turnaround counted as listening)
        waited = (start + copy * step) - found
        receiver = RadioTime(tx=self.ack_s, rx=frame_s, listen=waited + self.turnaround)
        return Hop(start, end, copies, sender, receiver)

    def broadcast(self, t: float, frame_s: float, phases) -> tuple[Hop, list]:
        """A broadcast from ``t``: a train of copies for :attr:`strobe_time`, no ACK;
        each neighbour (its phase in ``phases``) takes the first whole copy after its
        check found the train and sleeps again. Returns the sender's :class:`Hop`
        (``receiver`` empty) and, per neighbour, when it had the frame (None: the train
        ended first) and its :class:`RadioTime`."""
        start = t + self.cca_count_tx * self.cca_spacing
        step = frame_s + self.inter_packet
        copies = math.ceil(self.strobe_time / step)
        end = start + (copies - 1) * step + frame_s
        sender = self._sender_cca() + RadioTime(tx=copies * frame_s,
                                                listen=(copies - 1) * self.inter_packet)
        heard = []
        for phase in phases:
            got = self._receive(start, frame_s, phase, end)
            if got is None:
                heard.append((None, RadioTime()))
                continue
            copy, found = got
            waited = (start + copy * step) - found
            heard.append((start + copy * step + frame_s,
                          RadioTime(rx=frame_s, listen=waited)))
        return Hop(start, end, copies, sender, RadioTime()), heard
