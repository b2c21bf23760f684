"""The MAC engine: frames queued per node contend for one radio channel, stepwise.

:class:`MacEngine` owns the arrays of the compiled core (:mod:`emulator.mac.kernel`)
and speaks in frames: ``enqueue(t, node, dst, nbytes, handle)`` queues one (``dst`` -1:
a broadcast), ``advance(until)`` runs the channel to ``until`` and returns what became
of the frames meanwhile, as arrays (:class:`Outcomes`). A transport interleaves the
two: it enqueues what its nodes send up to a time, advances, and reads the outcomes.

A unicast frame gives a ``delivered`` row (at its receiver, when first received whole;
a retransmission the receiver already has is acknowledged, not delivered again) and,
if the sender gives up, a ``retry_limit`` row (at the sender: the link-layer feedback
a routing protocol takes as a broken link), possibly both when only the ACKs were
lost. A broadcast has no ACK and no retry; it gives one row per node in range of its
sender: ``delivered`` or ``collision``. A frame refused or dropped from a queue gives
``queue_full``, ``queue_expired`` or (802.15.4) ``channel_access_failure``.

Two stations in one collision domain (1,000 µs of data each way, 802.11b):

>>> import numpy as np
>>> from emulator.mac.standards import Dcf80211
>>> engine = MacEngine(unit_disk_rx_dbm(np.array([[0.0, 0], [1, 0]]), 1.5), Dcf80211(),
...                    seed=1)
>>> engine.enqueue(0.0, 0, 1, 1000, handle=7)
>>> engine.enqueue(0.0, 1, 0, 1000, handle=8)
>>> out = engine.advance(0.1)
>>> out.handle.tolist(), [REASONS[r] for r in out.reason], out.attempts.tolist()
([7, 8], ['delivered', 'delivered'], [1, 1])
>>> engine.counters()["drops_by_reason"]["retry_limit"]
0
"""
from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass, field

import numpy as np

from emulator.mac import kernel as k
from emulator.mac.airtime import ack_80211, ack_802154, control_80211, data_802154, data_80211
from emulator.mac.error_rate import DSSS_CODES, R_OQPSK, cck_curve
from emulator.mac.standards import CsmaCa802154, Dcf80211

#: Duty cycling's train outcomes (:data:`emulator.mac.kernel.TR_UNICAST` on): counts
#: for diagnosis, in :meth:`MacEngine.counters` under ``trains``.
TRAIN_OUTCOMES = ("unicast", "receiver_out_of_range", "receiver_sending",
                  "receiver_on_broadcast", "receiver_on_train", "receiver_on_other",
                  "no_check", "found", "receiver_busy_at_check", "corrupted", "taken", "acked",
                  "sender_heard_other", "sender_heard_other_failed", "ack_wait_abandoned",
                  "broadcast", "receiver_took_another", "sender_stopped")
#: Outcome reasons by code (``Outcomes.reason``).
REASONS = ("delivered", "retry_limit", "channel_access_failure", "collision", "queue_full",
           "queue_expired")

#: What became of frames: one row each (a broadcast: one per receiver in range).
Outcomes = namedtuple("Outcomes", "handle node time attempts reason")

#: How a reception is decided (``Channel.reception``); the first is the default.
RECEPTIONS = ("threshold", "error_rate")
#: 802.11b's PLCP header: 48 bits at DBPSK 1 Mbit/s, the last part of the 192 µs.
PLCP_HEADER = 48e-6
#: Why ContikiMAC refuses the error-rate reception.
DUTY_ERROR_RATE = ('mac.reception: "error_rate" judges one frame on air, not ContikiMAC\'s '
                   'trains of copies; use "threshold" with duty_cycle')


@dataclass(frozen=True)
class Channel:
    """The radio's thresholds, dBm and dB.

    ``noise_dbm``: thermal noise over 22 MHz with ns-3's 7 dB noise figure.
    ``detect_dbm``: the least power whose preamble is detected (ns-3's
    ``ThresholdPreambleDetectionModel`` ``MinimumRssi``). ``sinr_db``: the SINR a frame
    needs at its start to be detected and throughout to be received (ns-3's preamble
    threshold, 4 dB; no bit-error curve yet). ``cs_threshold_dbm``: the total power of
    the frames on air at which a node senses the channel busy. ns-3 senses a frame from
    -82 dBm, where it detects it; here the default is 14 dB lower, ns-2's ratio of
    ``CSThresh`` to ``RXThresh`` (550 m beside 250 m under two-ray ground), so that
    carrier sense reaches farther than decoding; -82 gives ns-3's rule.

    ``reception``: ``"threshold"`` (a frame is all or nothing: received if its SINR stays
    at ``sinr_db`` or above to its end) or ``"error_rate"`` (ns-3's rule: a frame whose
    start clears ``sinr_db`` and ``detect_dbm`` is locked onto, then received with the
    product, over its chunks of constant interference, of each chunk's success rate
    under the PHY's error curve, :mod:`emulator.mac.error_rate`; ``sinr_db`` is then only
    the preamble-detection threshold and may be negative, as DSSS's spreading lets a
    receiver decode below the noise).

    >>> Channel(sinr_db=-1).check()
    Traceback (most recent call last):
    ...
    ValueError: mac.sinr_db: expected >= 0 dB under reception = "threshold", got -1
    >>> Channel(sinr_db=-6, reception="error_rate").check().sinr_db
    -6
    """

    noise_dbm: float = -93.6
    detect_dbm: float = -82.0
    cs_threshold_dbm: float = -96.0
    sinr_db: float = field(default=4.0, metadata={
        "doc": "dB: the SINR a frame's start needs to be locked onto (the preamble); under "
               "threshold also its whole length, and >= 0"})
    reception: str = field(default=RECEPTIONS[0], metadata={
        "choices": RECEPTIONS,
        "doc": "threshold: a frame is all or nothing at sinr_db; error_rate: the PHY's "
               "error curve over the frame's chunks of constant interference (ns-3's "
               "rule), sinr_db then only detects the preamble and may be negative"})

    def check(self) -> "Channel":
        if self.reception not in RECEPTIONS:
            raise ValueError(f"mac.reception: expected one of {', '.join(RECEPTIONS)}, "
                             f"got {self.reception!r}")
        if not (self.sinr_db >= 0 or self.reception == "error_rate" and
                np.isfinite(self.sinr_db)):
            raise ValueError(f'mac.sinr_db: expected >= 0 dB under reception = '
                             f'"{self.reception}", got {self.sinr_db:g}')
        for name in ("noise_dbm", "detect_dbm", "cs_threshold_dbm"):
            if not np.isfinite(getattr(self, name)):
                raise ValueError(f"mac.{name}: expected a finite power in dBm, "
                                 f"got {getattr(self, name)}")
        return self


def unit_disk_rx_dbm(positions, radius: float, carrier_sense_radius: float | None = None,
                     channel: Channel = Channel()) -> np.ndarray:
    """Received powers for a unit disk: decoded within ``radius``, sensed within the other.

    Within ``radius``: 30 dB above detection (a frame decodes unless another in range
    overlaps it). Beyond, within ``carrier_sense_radius`` (default 2.2 x ``radius``, as
    ns-2's 550 m beside 250 m): halfway between the carrier-sense threshold and
    detection, so it is sensed, never decoded, and too weak to corrupt a frame in range.
    Farther: nothing (-250 dBm).

    >>> unit_disk_rx_dbm(np.array([[0.0, 0], [1, 0], [3, 0]]), 1.0)
    array([[ -inf,  -52., -250.],
           [ -52.,  -inf,  -89.],
           [-250.,  -89.,  -inf]])
    """
    channel.check()
    if carrier_sense_radius is None:
        carrier_sense_radius = 2.2 * radius
    if carrier_sense_radius > radius and channel.cs_threshold_dbm >= channel.detect_dbm:
        raise ValueError(f"mac.cs_threshold_dbm: a carrier_sense_radius beyond the radius "
                         f"needs it below detect_dbm ({channel.detect_dbm:g}), "
                         f"got {channel.cs_threshold_dbm:g}")
    pos = np.asarray(positions, float)
    dist = np.linalg.norm(pos[:, None, :] - pos[None, :, :], axis=-1)
    sensed = (channel.cs_threshold_dbm + channel.detect_dbm) / 2
    rx = np.where(dist <= radius, channel.detect_dbm + 30.0,
                  np.where(dist <= carrier_sense_radius, sensed, -250.0))
    np.fill_diagonal(rx, -np.inf)
    return rx


def _mw(dbm):
    return 10.0 ** (np.asarray(dbm, float) / 10.0)


class MacEngine:
    """One channel of ``len(rx_dbm)`` nodes under 802.11 DCF or 802.15.4 CSMA/CA.

    ``rx_dbm[i, j]``: the power at ``j`` of ``i``'s transmissions (the caller builds it
    from its radio model; :func:`unit_disk_rx_dbm` from positions). ``standard``: a
    :class:`Dcf80211` or :class:`CsmaCa802154`. ``seed``: an int or a
    ``numpy.random.Generator``; the kernel's own generator is seeded from it, so the
    same seed gives the same outcomes. ``duty``: a
    :class:`~emulator.mac.contikimac.ContikiMac` to duty-cycle the radios (802.15.4
    only): each node's wake-up phase is drawn from the seed, uniform over a period;
    a unicast goes on air as its train of copies up to the one its receiver takes, a
    broadcast as a full ``strobe_time`` train (:func:`emulator.mac.kernel._train`), and
    :meth:`radio_seconds` gives each radio's time on. ``rows``: the frame table's first
    size (it doubles when too few of its rows are free; the outcomes do not depend on it).

    Duty cycling makes a hop wait for its receiver's wake-up (a 40-byte frame, one
    hop, about half of the 125 ms period):

    >>> from emulator.mac.contikimac import ContikiMac
    >>> from emulator.mac.standards import CsmaCa802154
    >>> engine = MacEngine(unit_disk_rx_dbm(np.array([[0.0, 0], [1, 0]]), 1.5),
    ...                    CsmaCa802154(), seed=3, duty=ContikiMac())
    >>> engine.enqueue(0.0, 0, 1, 40, handle=1)
    >>> out = engine.advance(1.0)
    >>> [REASONS[r] for r in out.reason], 0.0 < float(out.time[0]) < 0.13
    (['delivered'], True)
    """

    def __init__(self, rx_dbm, standard, channel: Channel = Channel(), seed=None,
                 duty=None, rows: int = 1024):
        rx = np.ascontiguousarray(rx_dbm, float)
        if rx.ndim != 2 or rx.shape[0] != rx.shape[1] or rx.shape[0] < 1:
            raise ValueError(f"mac.rx_dbm: expected a square N x N matrix, got shape "
                             f"{rx.shape}")
        if not isinstance(standard, (Dcf80211, CsmaCa802154)):
            raise ValueError(f"mac.standard: expected Dcf80211 or CsmaCa802154, got "
                             f"{type(standard).__name__}")
        self.standard = standard.check()
        if duty is not None and not isinstance(standard, CsmaCa802154):
            raise ValueError(f'mac.duty_cycle: expected model "802.15.4" (CSMA/CA) under '
                             f"ContikiMAC, got {type(standard).__name__}")
        self.duty = None if duty is None else duty.check()
        self.channel = channel.check()
        if self.duty is not None and self.channel.reception == "error_rate":
            raise ValueError(DUTY_ERROR_RATE)
        n = rx.shape[0]
        self.n = n
        self._rx_mw = np.ascontiguousarray(_mw(rx))
        np.fill_diagonal(self._rx_mw, 0.0)
        self._p, self._ip = _parameters(self.standard, self.channel, self.duty)
        # the phase lock's memory: a column per neighbour (k.N_NF + d), NaN: unknown
        locks = n if self.duty is not None and self.duty.phase_lock else 0
        self._nf = np.zeros((n, k.N_NF + locks))
        self._nf[:, k.N_NF:] = np.nan
        # duty cycling: a column per sender (k.N_NI + i), its broadcast's fate had
        self._ni = np.zeros((n, k.N_NI + (n if self.duty is not None else 0)), np.int64)
        self._nf[:, [k.T_MAC, k.RESP_T]] = np.inf
        self._nf[:, [k.NAV, k.BLOCK, k.EIFS_UNTIL]] = -np.inf   # the channel idle since 0
        self._ni[:, [k.CUR, k.SLOTS, k.RESP_KIND, k.TX_KIND, k.TX_FRAME, k.LOCK,
                     k.Q_HEAD, k.Q_TAIL, k.W_SRC]] = -1
        self._nf[:, [k.NEXT_CHECK]] = -np.inf
        self._nf[:, [k.W_END]] = np.inf
        self._ni[:, k.CW] = self._ip[k.CW_MIN]
        self._last_seq = np.full((n, n), -1, np.int64)
        self._g = np.zeros(3, np.int64)
        self._clock = np.zeros(2)   # the clock, and the next event when advance returns
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        self._rng = np.array([rng.integers(0, 2 ** 63)], np.uint64)
        if self.duty is not None:   # drawn after the kernel's seed: its draws stay as they are
            self._nf[:, k.PHASE] = rng.random(n) * self.duty.period
        if isinstance(standard, Dcf80211):   # ns-3's Txop draws a backoff as it starts
            self._ni[:, k.SLOTS] = [k._draw(self._rng, standard.cw_min) for _ in range(n)]
        self._fr_i = np.zeros((max(int(rows), 1), k.N_FI), np.int64)   # the frame table
        self._fr_f = np.zeros((max(int(rows), 1), k.N_FF))
        self._frames = 0            # rows of the frame table used at least once
        self._free: list[int] = []  # rows to reuse (:meth:`_slot`)
        self._released: list[int] = []
        self._seq = np.zeros(n, np.int64)
        self._pending: list[int] = []
        self._next: float | None = None   # next_time(), until the state changes
        self._last_ready = np.full(n, -np.inf)
        self._drops = np.zeros(k.N_DROPS, np.int64)
        self._scratch = np.zeros(n, np.int64)
        self._out = _outputs(max(4096, 4 * (n * n + 4 * n)))

    @property
    def now(self) -> float:
        """The engine's clock: where the last ``advance`` stopped."""
        return float(self._clock[0])

    def enqueue(self, t: float, node: int, dst: int, nbytes: int, handle: int) -> None:
        """Queue at ``node``, from time ``t``, a frame of ``nbytes`` payload to ``dst`` (-1: all)."""
        node, dst, nbytes = int(node), int(dst), int(nbytes)
        if not 0 <= node < self.n:
            raise ValueError(f"mac.node: expected a node in 0..{self.n - 1}, got {node}")
        if not (dst == -1 or 0 <= dst < self.n) or dst == node:
            raise ValueError(f"mac.dst: expected -1 (broadcast) or another node in "
                             f"0..{self.n - 1}, got {dst}")
        if t < max(self.now, self._last_ready[node]):
            raise ValueError(f"mac.t: expected a time >= {max(self.now, self._last_ready[node])}"
                             f" (the clock, and node {node}'s last frame), got {t}")
        air, ifs, ack = self._airtime(nbytes, dst < 0)
        f = self._slot()
        rts = isinstance(self.standard, Dcf80211) and dst >= 0 and \
            nbytes + self.standard.header_bytes > self.standard.rts_threshold_bytes
        self._fr_i[f] = (node, dst, handle, self._seq[node], int(rts), 0, -1)
        self._fr_f[f] = (t, air, ifs, ack)
        self._seq[node] += 1
        self._last_ready[node] = t
        self._pending.append(f)
        if self._next is not None:   # a frame queued adds one event, at t
            self._next = min(self._next, float(t))

    def _slot(self) -> int:
        """A row of the frame table for a new frame: a fresh row while there is one, else
        a row whose frame has had its last outcome (:meth:`_collect`), so that the table
        follows the frames in flight, not every frame ever queued. Which row a frame
        takes changes nothing else: the kernel never orders frames by their row."""
        if self._frames < len(self._fr_i):
            self._frames += 1
            return self._frames - 1
        if not self._free:
            self._collect()
            if self._frames < len(self._fr_i):   # it grew
                return self._slot()
        return self._free.pop()

    def _collect(self) -> None:
        """Free the rows of the frames done with (acknowledged, dropped, broadcast: no
        node holds them and none waits to arrive), and note their handles for
        :meth:`released`; double the table when less than a quarter of it was free."""
        live = np.zeros(len(self._fr_i), bool)
        live[self._pending] = True
        k._mark_live(self._ni, self._fr_i, live)
        dead = np.flatnonzero(~live)
        self._released.extend(self._fr_i[dead, k.F_HANDLE].tolist())
        self._free = dead[::-1].tolist()      # popped lowest first
        if len(dead) < len(live) // 4:
            self._fr_i = np.concatenate([self._fr_i, np.zeros_like(self._fr_i)])
            self._fr_f = np.concatenate([self._fr_f, np.zeros_like(self._fr_f)])

    def released(self) -> list[int]:
        """The handles of frames that will have no further outcome (their rows of the
        frame table were reused), since the last call: a caller keeping something per
        frame may let it go. A unicast frame delivered is not done (a ``retry_limit``
        row may follow when its ACKs are lost), and the engine does not say when it is
        acknowledged: this is how the caller learns it.

        >>> engine = MacEngine(unit_disk_rx_dbm(np.array([[0.0, 0], [1, 0]]), 1.5),
        ...                    Dcf80211(), seed=1)
        >>> for h in range(1024):
        ...     engine.enqueue(h * 0.01, 0, 1, 100, handle=h)
        >>> _ = engine.advance(20.0)
        >>> engine.enqueue(20.0, 0, 1, 100, handle=1024)   # the table is full: rows reused
        >>> len(engine.released()), len(engine._fr_i), engine.released()
        (1024, 1024, [])
        """
        out, self._released = self._released, []
        return out

    def _airtime(self, nbytes: int, broadcast: bool) -> tuple[float, float, float]:
        """A frame's time on air, the sender's wait after it (802.15.4), its ACK's airtime."""
        std = self.standard
        if isinstance(std, Dcf80211):
            if nbytes < 0:
                raise ValueError(f"mac.nbytes: expected >= 0, got {nbytes}")
            return data_80211(std, nbytes, broadcast), 0.0, ack_80211(std)
        mpdu = nbytes + std.header_bytes
        if not (0 <= nbytes and mpdu <= std.max_psdu_bytes):
            raise ValueError(f"mac.nbytes: expected 0..{std.max_psdu_bytes - std.header_bytes}"
                             f" (aMaxPHYPacketSize {std.max_psdu_bytes}), got {nbytes}")
        return data_802154(std, nbytes), std.ifs(mpdu), ack_802154(std)

    def advance(self, until: float, first: bool = False) -> Outcomes:
        """Run the channel to ``until``; the outcomes of frames decided meanwhile. With
        ``first``, stop at the first instant that decides one (the clock there), so that
        a transport can act on it (forward a frame received) before the channel goes on.

        >>> engine = MacEngine(unit_disk_rx_dbm(np.array([[0.0, 0], [1, 0]]), 1.5),
        ...                    Dcf80211(), seed=1)
        >>> engine.enqueue(0.0, 0, 1, 1000, handle=7)
        >>> engine.enqueue(0.0, 1, 0, 1000, handle=8)
        >>> out = engine.advance(0.1, first=True)
        >>> out.handle.tolist(), engine.now == float(out.time[0]), engine.next_time() < 0.1
        ([7], True, True)
        """
        if until < self.now:
            raise ValueError(f"mac.until: expected >= the clock {self.now}, got {until}")
        order = sorted(self._pending, key=lambda f: self._fr_f[f, k.F_READY])
        arrivals = np.array(order, np.int64)
        self._g[k.G_ARRIVAL] = 0
        self._g[k.G_STOP] = int(first)
        parts = []
        while True:
            done = k.advance(until, self._p, self._ip, self._rx_mw, self._nf, self._ni,
                             self._last_seq, self._g, self._clock, self._rng, self._fr_i,
                             self._fr_f, arrivals, *self._out, self._drops, self._scratch)
            m = int(self._g[k.G_OUT])
            parts.append([col[:m].copy() for col in self._out])
            self._g[k.G_OUT] = 0
            if done:
                break
        self._pending = order[int(self._g[k.G_ARRIVAL]):]
        self._next = float(self._clock[1])   # the kernel's, the frames queued included
        if len(parts) == 1:
            return Outcomes(*parts[0])
        return Outcomes(*(np.concatenate(cols) for cols in zip(*parts)))

    def next_time(self) -> float:
        """When the channel's next event is due (a frame queued, a timer, an answer, the
        end of a transmission): inf when it has nothing to do."""
        if self._next is not None:
            return self._next
        nf, ni = self._nf, self._ni
        t = min(nf[:, k.T_MAC].min(), nf[:, k.RESP_T].min())
        on_air = ni[:, k.TX_KIND] >= 0
        if on_air.any():
            t = min(t, nf[on_air, k.TX_END].min())
        if self._pending:
            t = min(t, self._fr_f[self._pending, k.F_READY].min())
        self._next = float(t)
        return self._next

    def set_rx_dbm(self, rx_dbm) -> None:
        """New powers between the nodes (they moved, or died: -inf), from the clock on.

        Frames on air stay on air; a receiver keeps the frame it locked onto at its
        start, judged from now on with the new powers (the interference is summed anew
        here and at every start and end), and carrier sense follows the new powers at
        once (a backoff freezes or resumes as the channel turns busy or idle here)."""
        rx = np.asarray(rx_dbm, float)
        if rx.shape != self._rx_mw.shape:
            raise ValueError(f"mac.rx_dbm: expected a {self.n} x {self.n} matrix, got "
                             f"shape {rx.shape}")
        old = self._rx_mw.copy()
        self._rx_mw[:] = _mw(rx)
        self._next = None
        np.fill_diagonal(self._rx_mw, 0.0)
        now = self.now
        if self._ip[k.RECEPTION] == k.ERROR_RATE:   # the chunks so far, at the old powers
            k._close_chunks(now, self._nf, self._ni, self._p, self._ip, old)
        k._total_power(self._nf, self._ni, self._rx_mw)
        k._transitions(now, self._nf, self._ni, self._p, self._ip)
        if self._ip[k.STD] == k.DCF:
            k._contend_times(now, self._nf, self._ni, self._p, self._ip)

    def radio_seconds(self) -> dict:
        """Duty cycling: each node's radio time up to the clock, seconds by state:
        ``tx``, ``rx``, ``listen`` (its channel checks, ``idle_on_fraction`` of the time,
        and its listening in exchanges: CSMA's CCAs, the gaps of its trains, the wait
        from a CCA that found a train to the copy it takes, turnarounds). An exchange is
        booked whole when its train starts. None without duty cycling."""
        if self.duty is None:
            return None
        tx, rx, listen = self.exchange_seconds()
        return {"tx": tx, "rx": rx, "listen": listen + self.duty.idle_on_fraction() * self.now}

    def exchange_seconds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Duty cycling: each node's seconds sending, receiving and listening in
        exchanges so far (:meth:`radio_seconds` without the channel checks)."""
        nf = self._nf
        return nf[:, k.R_TX].copy(), nf[:, k.R_RX].copy(), nf[:, k.R_LISTEN].copy()

    def counters(self) -> dict:
        """Collisions (frames a node locked onto and lost) and retries per node, drops by
        reason, and the time each node sensed the channel busy up to the clock."""
        busy = self._nf[:, k.BUSY_TIME].copy()
        now_busy = self._ni[:, k.BUSY] == 1
        busy[now_busy] += self.now - self._nf[now_busy, k.BUSY_SINCE]
        return {"collisions": self._ni[:, k.COLLISIONS].copy(),
                "retries": self._ni[:, k.RETRIES].copy(),
                "drops_by_reason": {r: int(self._drops[i]) for i, r in enumerate(REASONS)
                                    if r != "delivered"},
                "busy_time": busy,
                **({} if self.duty is None else {"trains": dict(zip(
                    TRAIN_OUTCOMES, self._drops[k.N_REASONS:].tolist()))})}


def _outputs(size: int):
    return (np.zeros(size, np.int64), np.zeros(size, np.int64), np.zeros(size),
            np.zeros(size, np.int64), np.zeros(size, np.int64))


def _parameters(std, channel: Channel, duty=None) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's float and int parameter cells for a standard, a channel and
    ContikiMAC's timing (``duty``; None: the radios always on)."""
    p = np.zeros(k.N_P)
    ip = np.zeros(k.N_IP, np.int64)
    p[k.NOISE] = _mw(channel.noise_dbm)
    p[k.DETECT] = _mw(channel.detect_dbm)
    p[k.CS] = _mw(channel.cs_threshold_dbm)
    p[k.SINR] = 10 ** (channel.sinr_db / 10)
    if isinstance(std, Dcf80211):
        ip[k.STD] = k.DCF
        p[k.SLOT], p[k.SIFS], p[k.DIFS], p[k.EIFS] = std.slot, std.sifs, std.difs, std.eifs
        p[k.ACK_TIMEOUT], p[k.CTS_TIMEOUT] = std.ack_timeout, std.cts_timeout
        p[k.CTS_AIR] = control_80211(std, std.cts_bytes)
        p[k.RTS_AIR] = control_80211(std, std.rts_bytes)
        ip[k.CW_MIN], ip[k.CW_MAX] = std.cw_min, std.cw_max
        ip[k.RETRY_LIMIT] = std.retry_limit
    else:
        ip[k.STD] = k.CSMA
        p[k.UNIT], p[k.CCA], p[k.TURN] = std.unit_backoff, std.cca, std.turnaround
        p[k.ACK_WAIT] = std.ack_wait
        ip[k.MIN_BE], ip[k.MAX_BE], ip[k.MAX_NB] = std.min_be, std.max_be, \
            std.max_csma_backoffs
        ip[k.RETRY_LIMIT] = std.max_frame_retries + 1    # retries after the first attempt
    p[k.LIFETIME] = std.lifetime
    if duty is not None:
        ip[k.DUTY] = 1
        p[k.CM_TIMING:k.STROBE] = duty.timing()
        p[k.STROBE] = duty.strobe_time
        p[k.GUARD] = duty.guard_time
        p[k.LOCK_MISS] = duty.max_phase_strobe - duty.guard_time + \
            duty.cca_count_tx * duty.cca_spacing
        p[k.LISTEN_AFTER], p[k.PERIOD] = duty.listen_after_detect, duty.period
        ip[k.PHASE_LOCK], ip[k.OVERHEAR] = int(duty.phase_lock), int(duty.overhearing)
        ip[k.FAST_SLEEP] = int(duty.fast_sleep)
        ip[k.MAX_SILENCE] = duty.max_silence_periods
        ip[k.MAX_NONACT] = duty.max_nonactivity_periods
        ip[k.CSMA_TX] = duty.csma_max_mac_transmissions
        ip[k.CSMA_BE] = duty.csma_max_backoff_exponent
    ip[k.QUEUE_LIMIT] = std.queue_limit
    if channel.reception == "error_rate":
        p = np.concatenate([p, cck_curve()])
        _error_rate_cells(std, p, ip)
    return p, ip


def _error_rate_cells(std, p: np.ndarray, ip: np.ndarray) -> None:
    """The error-rate reception's cells: the curves and bit rates of the data and basic
    rates, the preamble (detected, not judged) and the PLCP header (judged at DBPSK).
    802.15.4: O-QPSK throughout, its SHR and PHR not judged (as the threshold rule's
    :func:`emulator.mac.kernel._oqpsk_ok`)."""
    ip[k.RECEPTION] = k.ERROR_RATE
    if isinstance(std, Dcf80211):
        ip[k.DATA_CODE], ip[k.BASIC_CODE] = DSSS_CODES[std.data_rate], \
            DSSS_CODES[std.basic_rate]
        p[k.DATA_BPS], p[k.BASIC_BPS] = std.data_rate, std.basic_rate
        p[k.HDR_AIR] = min(PLCP_HEADER, std.preamble_header)
        p[k.PRE_AIR] = std.preamble_header - p[k.HDR_AIR]
    else:
        ip[k.DATA_CODE] = ip[k.BASIC_CODE] = R_OQPSK
        p[k.DATA_BPS] = p[k.BASIC_BPS] = std.bit_rate
        p[k.PRE_AIR] = std.shr_phr_bytes * 8 / std.bit_rate
