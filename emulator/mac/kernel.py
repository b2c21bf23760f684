"""The MAC engine's compiled core: one channel, N nodes, 802.11 DCF or 802.15.4 CSMA/CA.

Everything is a number in arrays the wrapper (:class:`emulator.mac.engine.MacEngine`)
owns, so a run can stop at any time and go on: per node a row of floats ``nf`` and a
row of ints ``ni`` (the columns below), per frame a row of the frame table, and a few
global cells. :func:`advance` runs the events up to a time and writes outcome rows.

The channel (ns-3's ``InterferenceHelper`` and preamble rule): every node hears every
transmission at ``rx_mw[sender, node]``; a node not transmitting and not already
receiving locks onto a frame that starts with SINR >= ``sinr`` (the others on air,
those starting at the same instant included, are the interference) and power >=
``detect``; the frame is received if its SINR stays above ``sinr`` to its end (the
interference only rises when a frame starts, so it is checked then). Under the
error-rate reception (``ip[RECEPTION]``) the lock is the same (``sinr`` is then ns-3's
preamble-detection threshold), and the frame is received with the product over its
chunks of constant interference of each chunk's success rate under the PHY's error
curve (:mod:`emulator.mac.error_rate`), one draw at its end. No capture: a
locked receiver ignores any later, stronger frame, as ns-3 does without a
``FrameCaptureModel``. A node that starts transmitting loses what it was receiving
(half duplex). A node senses the channel busy while it transmits, receives, or hears a
total power >= ``cs``.

Frames that start at the same instant do not sense each other (a slot is long enough
for carrier sense to miss a frame begun in the same slot): the events of one instant
are taken in three phases, ends, then arrivals and timers, then every transmission
they start at once.

>>> SLOT, DCF, CSMA
(0, 0, 1)
"""
from __future__ import annotations

import numpy as np
from numba import njit

from emulator.mac.contikimac import caught, first_copy
from emulator.mac.error_rate import R_DBPSK, log_ok_per_bit, oqpsk_ber

# Standards (ip[STD]).
DCF, CSMA = 0, 1

# Float parameters (p).
SLOT, SIFS, DIFS, EIFS, ACK_TIMEOUT, CTS_TIMEOUT, CTS_AIR, RTS_AIR, LIFETIME, NOISE, DETECT, \
    SINR, CS, UNIT, CCA, TURN, ACK_WAIT = range(17)
# ContikiMAC (802.15.4 with duty cycling): its timing, in contikimac.TIMING's order from
# CM_TIMING (the slice first_copy takes), and the longest train (STROBE_TIME).
CM_TIMING, STROBE = 17, 23
# The phase lock's GUARD_TIME, how long after a locked neighbour's expected wake-up
# a train to it gives up (Contiki's t0 + MAX_PHASE_STROBE_TIME, its t0 the end of the
# CCA_COUNT_MAX_TX CCAs after the wait: MAX_PHASE_STROBE_TIME - GUARD_TIME +
# CHECK_TIME_TX), a woken radio's LISTEN_TIME_AFTER_PACKET_DETECTED, and the period.
GUARD, LOCK_MISS, LISTEN_AFTER, PERIOD = range(24, 28)
# The error-rate reception (ip[RECEPTION] == ERROR_RATE): the data and basic rates in
# bit/s, and a frame's preamble (not judged: it is only detected) and PLCP header (judged
# at DBPSK 1 Mbit/s) in seconds. The cells from N_P on hold the CCK curve
# (:func:`cck_curve`) under it.
DATA_BPS, BASIC_BPS, PRE_AIR, HDR_AIR = range(28, 32)
N_P = 32
# Int parameters (ip).
STD, CW_MIN, CW_MAX, RETRY_LIMIT, QUEUE_LIMIT, MIN_BE, MAX_BE, MAX_NB, DUTY = range(9)
# ContikiMAC's options (0 or 1, counts): the phase lock, booking the radios woken by
# trains not for them, fast sleep, MAX_SILENCE_PERIODS, MAX_NONACTIVITY_PERIODS, and
# csma.c's requeue of a frame that found the channel busy (CSMA_MAX_MAC_TRANSMISSIONS,
# 0: off; CSMA_MAX_BACKOFF_EXPONENT).
PHASE_LOCK, OVERHEAR, FAST_SLEEP, MAX_SILENCE, MAX_NONACT, CSMA_TX, CSMA_BE = range(9, 16)
# How a reception is decided (THRESHOLD or ERROR_RATE), and the curves (R_DBPSK...) of the
# data rate and of the basic rate.
RECEPTION, DATA_CODE, BASIC_CODE = range(16, 19)
N_IP = 19
# Receptions: all or nothing at the SINR threshold; or the error curves chunk by chunk.
THRESHOLD, ERROR_RATE = 0, 1

# Node floats (nf columns).
T_MAC, RESP_T, RESP_NAV, RESP_AIR, TX_END, TX_NAV, NAV, IDLE_FROM, BLOCK, EIFS_UNTIL, \
    DEADLINE, BUSY_SINCE, BUSY_TIME, TOT_MW, TX_AIR, MIN_SINR = range(16)
# Duty cycling: the node's wake-up phase, and the seconds its radio spent in exchanges
# (sending, receiving, listening beyond its channel checks).
PHASE, R_TX, R_RX, R_LISTEN = range(16, 20)
# The error-rate reception: where the receiver's current chunk of constant interference
# began, and the log of the success rate of the chunks before it.
CHUNK_T, LOG_OK = range(20, 22)
# Duty cycling: the start of the node's current train and when its strobing ends (the
# full strobe, or the phase lock's miss); the node's next channel check; and, while it
# takes a copy of another node's train, when that copy ends and when its CCA found it.
T0, STROBE_END, NEXT_CHECK, W_END, W_FOUND = range(22, 27)
N_NF = 27
# Node ints (ni columns).
STATE, CUR, SLOTS, CW, NB, BE, RESP_KIND, RESP_DST, TX_KIND, TX_DST, TX_FRAME, LOCK, \
    LOCK_OK, BUSY, CCA_BUSY, COLLISIONS, RETRIES, Q_HEAD, Q_TAIL, Q_LEN = range(20)
TX_MISS = 20   # duty cycling: the receiver's checks missed this unicast train
# csma.c's counters for the current frame: access failures since the last counted
# transmission (n->collisions), and transmissions counted (n->transmissions).
CS_COLL, CS_TX = 21, 22
# duty cycling: the sender of this unicast train heard another frame begin during it
# (1), and stopped the train on it (ABORTED: Contiki's "collisions while sending")
TX_HEARD = 23
ABORTED = 2
W_SRC = 24     # duty cycling: whose train the node is taking a copy of (-1: none)
N_NI = 25
# Under duty cycling, node d's columns N_NI + i hold 1 once d has had its fate of i's
# current broadcast train (received, or lost).
# Under the phase lock, node j's columns N_NF + d hold when it last sent the copy
# neighbour d acknowledged (Contiki's encounter time; NaN: d's phase unknown).

# MAC states.
S_IDLE, S_CONTEND, S_TX, S_WAIT_CTS, S_WAIT_ACK, S_SEND_DATA, S_BACKOFF, S_CCA, S_TURN, \
    S_IFS, S_RESTART = range(11)
# Frame kinds on air (ni[TX_KIND], ni[RESP_KIND]); -1: none.
K_DATA, K_BCAST, K_RTS, K_CTS, K_ACK = range(5)

# Outcome reasons.
DELIVERED, RETRY_LIMIT_R, CHANNEL_ACCESS_FAILURE, COLLISION, QUEUE_FULL, QUEUE_EXPIRED = \
    range(6)
N_REASONS = 6
# Duty cycling's train outcomes, counted in ``drops`` after the reasons (diagnostics:
# :meth:`emulator.mac.engine.MacEngine.counters`' ``trains``). Unicast trains; those
# whose receiver, as the train starts, is out of range or dead, sending, or busy with
# a broadcast, a unicast train or another frame (what the receiver's state is then,
# not a loss: it takes a copy at a later check); trains ended with no copy taken by
# their receiver; copies it took; its checks skipped because it was busy; its copies
# lost (interference, or it began sending), taken whole; ACKs received; trains whose
# sender heard another frame, and those of them not acknowledged; a wait for an ACK
# given up to acknowledge another frame; broadcast trains; checks of a receiver that
# took another train's copy while one for it was on air; trains stopped by their
# sender on hearing another frame (Contiki's MAC_TX_COLLISION).
TR_UNICAST, TR_OUT, TR_DST_TX, TR_DST_BCAST, TR_DST_TRAIN, TR_DST_OTHER, TR_NO_CHECK, \
    TR_FOUND, TR_BUSY_AT_CHECK, TR_CORRUPT, TR_TAKEN, TR_ACKED, TR_HEARD, TR_HEARD_FAILED, \
    TR_ABANDONED, TR_BCAST, TR_TOOK_OTHER, TR_STOPPED = range(N_REASONS, N_REASONS + 18)
N_DROPS = N_REASONS + 18

# Global cells (g): the next arrival to take, the outcome rows written, and whether to
# stop after the first instant that writes one (a transport that must act on an outcome
# before the channel goes on); the RNG state lives in its own array.
G_ARRIVAL, G_OUT, G_STOP = range(3)

#: Two times closer than this are one instant (sums of the same durations in another order).
EPS = 1e-12


@njit(cache=True)
def _draw(rng, k):
    """A uniform integer in ``0..k`` from splitmix64 (its state in ``rng[0]``)."""
    z = rng[0] + np.uint64(0x9E3779B97F4A7C15)
    rng[0] = z
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.int64(z % np.uint64(k + 1))


@njit(cache=True)
def _busy(nf, ni, p, j):
    """Node ``j`` senses the channel busy: transmitting, receiving, or energy >= cs."""
    return ni[j, TX_KIND] >= 0 or ni[j, LOCK] >= 0 or nf[j, TOT_MW] >= p[CS]


@njit(cache=True)
def _resume(nf, p, j):
    """When ``j``'s backoff counts its first slot: ns-3's access-grant start + AIFS."""
    r = nf[j, IDLE_FROM] + p[DIFS]
    r = max(r, nf[j, NAV] + p[DIFS])
    r = max(r, nf[j, BLOCK] + p[DIFS])
    return max(r, nf[j, EIFS_UNTIL])


@njit(cache=True)
def _emit(out_h, out_node, out_t, out_att, out_r, g, handle, node, t, att, reason):
    k = g[G_OUT]
    out_h[k], out_node[k], out_t[k], out_att[k], out_r[k] = handle, node, t, att, reason
    g[G_OUT] = k + 1


@njit(cache=True)
def _transitions(now, nf, ni, p, ip):
    """Book every change between busy and idle at ``now``: busy time, frozen backoffs."""
    for j in range(nf.shape[0]):
        busy = _busy(nf, ni, p, j)
        if busy and ni[j, BUSY] == 0:
            ni[j, BUSY] = 1
            nf[j, BUSY_SINCE] = now
            if ip[STD] == DCF and ni[j, SLOTS] > 0:
                start = _resume(nf, p, j)
                if now > start:
                    gone = np.int64(np.floor((now - start) / p[SLOT] + 1e-9))
                    ni[j, SLOTS] = max(0, ni[j, SLOTS] - gone)
            if ni[j, STATE] == S_CCA:
                ni[j, CCA_BUSY] = 1
        elif not busy and ni[j, BUSY] == 1:
            ni[j, BUSY] = 0
            nf[j, BUSY_TIME] += now - nf[j, BUSY_SINCE]
            nf[j, IDLE_FROM] = now


@njit(cache=True)
def _total_power(nf, ni, rx_mw):
    """Each node's received power from every transmission on air (its own left out)."""
    n = nf.shape[0]
    for j in range(n):
        nf[j, TOT_MW] = 0.0
    for i in range(n):
        if ni[i, TX_KIND] >= 0:
            for j in range(n):
                if j != i:
                    nf[j, TOT_MW] += rx_mw[i, j]


@njit(cache=True)
def _add_power(nf, rx_mw, i, sign):
    """Node ``i``'s transmission starts (``sign`` 1) or ends (-1): every other node's
    received power follows, in O(n) rather than :func:`_total_power`'s O(n x frames on
    air)."""
    for j in range(nf.shape[0]):
        if j != i:
            nf[j, TOT_MW] += sign * rx_mw[i, j]


@njit(cache=True)
def _next_frame(now, j, nf, ni, p, fr_i, fr_f, out_h, out_node, out_t, out_att, out_r,
                g, drops):
    """Take ``j``'s next queued frame (dropping the expired ones), or -1."""
    while ni[j, Q_LEN] > 0:
        f = ni[j, Q_HEAD]
        ni[j, Q_HEAD] = fr_i[f, F_NEXT]
        ni[j, Q_LEN] -= 1
        if ni[j, Q_LEN] == 0:
            ni[j, Q_TAIL] = -1
        if now - fr_f[f, F_READY] > p[LIFETIME] + EPS:
            drops[QUEUE_EXPIRED] += 1
            _emit(out_h, out_node, out_t, out_att, out_r, g, fr_i[f, F_HANDLE], j, now,
                  0, QUEUE_EXPIRED)
            continue
        return f
    return -1


# Frame table columns: ints fr_i, floats fr_f.
F_NODE, F_DST, F_HANDLE, F_SEQ, F_RTS, F_ATT, F_NEXT = range(7)
N_FI = 7
F_READY, F_AIR, F_IFS, F_ACK = range(4)   # F_ACK: its ACK's airtime
N_FF = 4


@njit(cache=True)
def _phase_wait(now, j, dst, nf, p):
    """ContikiMAC's phase lock (Contiki's ``phase_wait``): how long ``j`` waits before
    its train to ``dst`` so that it starts GUARD_TIME before ``dst``'s next expected
    wake-up (the encounter time ``j`` learnt from ``dst``'s last ACK plus whole
    periods, at least a guard away); 0 if ``dst``'s phase is unknown."""
    e = nf[j, N_NF + dst]
    if e != e:
        return 0.0
    wait = (e - now) - np.floor((e - now) / p[PERIOD]) * p[PERIOD]
    if wait < p[GUARD]:
        wait += p[PERIOD]
    return wait - p[GUARD]


@njit(cache=True)
def _start_csma(j, ni, nf, p, ip, rng, now, fr_i):
    """802.15.4: NB = 0, BE = macMinBE, and the first random backoff (under the phase
    lock, after the wait for the receiver's phase: CSMA-CA stands in for ContikiMAC's
    CCAs before a train, which Contiki makes after ``phase_wait``)."""
    ni[j, NB] = 0
    ni[j, BE] = ip[MIN_BE]
    ni[j, STATE] = S_BACKOFF
    wait = 0.0
    if ip[PHASE_LOCK] == 1 and ni[j, CUR] >= 0 and fr_i[ni[j, CUR], F_DST] >= 0:
        wait = _phase_wait(now, j, fr_i[ni[j, CUR], F_DST], nf, p)
    nf[j, T_MAC] = now + wait + _draw(rng, (1 << ip[MIN_BE]) - 1) * p[UNIT]


@njit(cache=True)
def _begin(now, j, nf, ni, p, ip, rng, fr_i, fr_f, out_h, out_node, out_t, out_att, out_r,
           g, drops):
    """Node ``j`` is free: take its next frame and start contending, or go idle."""
    f = _next_frame(now, j, nf, ni, p, fr_i, fr_f, out_h, out_node, out_t, out_att, out_r,
                    g, drops)
    ni[j, CUR] = f
    nf[j, T_MAC] = np.inf
    ni[j, CS_COLL], ni[j, CS_TX] = 0, 0
    if f < 0:
        ni[j, STATE] = S_IDLE
    elif ip[STD] == CSMA:
        _start_csma(j, ni, nf, p, ip, rng, now, fr_i)
    else:
        ni[j, STATE] = S_CONTEND
        if ni[j, SLOTS] < 0 or (ni[j, SLOTS] == 0 and _busy(nf, ni, p, j)):
            # No backoff left over: none if the channel is idle, one if it is busy.
            ni[j, SLOTS] = _draw(rng, ni[j, CW]) if _busy(nf, ni, p, j) else 0


@njit(cache=True)
def _finish(now, j, nf, ni, p, ip, rng, fr_i, fr_f, out_h, out_node, out_t, out_att,
            out_r, g, drops):
    """``j``'s frame is done (acknowledged, broadcast or dropped): reset and go on."""
    f = ni[j, CUR]
    ni[j, CUR] = -1
    if ip[STD] == DCF:
        ni[j, CW] = ip[CW_MIN]
        ni[j, SLOTS] = _draw(rng, ni[j, CW])     # the post-backoff after every frame
        _begin(now, j, nf, ni, p, ip, rng, fr_i, fr_f, out_h, out_node, out_t, out_att,
               out_r, g, drops)
    else:
        ni[j, STATE] = S_IFS
        nf[j, T_MAC] = now + fr_f[f, F_IFS]


@njit(cache=True)
def _fail(now, j, nf, ni, p, ip, rng, fr_i, fr_f, out_h, out_node, out_t, out_att, out_r,
          g, drops):
    """No CTS or ACK came for ``j``'s frame: retry it, or drop it at the retry limit."""
    f = ni[j, CUR]
    if ip[DUTY] == 1 and ni[j, TX_HEARD] == 1:
        drops[TR_HEARD_FAILED] += 1
    if fr_i[f, F_ATT] >= ip[RETRY_LIMIT]:
        drops[RETRY_LIMIT_R] += 1
        _emit(out_h, out_node, out_t, out_att, out_r, g, fr_i[f, F_HANDLE], j, now,
              fr_i[f, F_ATT], RETRY_LIMIT_R)
        _finish(now, j, nf, ni, p, ip, rng, fr_i, fr_f, out_h, out_node, out_t, out_att,
                out_r, g, drops)
        return
    ni[j, RETRIES] += 1
    if ip[STD] == DCF:
        ni[j, CW] = min(2 * ni[j, CW] + 1, ip[CW_MAX])
        ni[j, SLOTS] = _draw(rng, ni[j, CW])
        nf[j, BLOCK] = now                       # access again DIFS after the timeout
        ni[j, STATE] = S_CONTEND
        nf[j, T_MAC] = np.inf
    else:
        _start_csma(j, ni, nf, p, ip, rng, now, fr_i)


@njit(cache=True)
def _receive(now, i, j, nf, ni, p, ip, rng, rx_mw, last_seq, fr_i, fr_f, out_h, out_node,
             out_t, out_att, out_r, g, drops):
    """Node ``j`` ends receiving ``i``'s frame, received whole (ok) or not."""
    kind, dst, f = ni[i, TX_KIND], ni[i, TX_DST], ni[i, TX_FRAME]
    ok = ni[j, LOCK_OK] == 1
    ni[j, LOCK] = -1
    if dst == j and kind == K_DATA and ni[i, TX_MISS] == 1:
        return   # asleep at every check of the train: it never took a copy
    if not ok:
        ni[j, COLLISIONS] += 1
        if ip[STD] == DCF:
            nf[j, EIFS_UNTIL] = now + p[EIFS]
    else:
        nf[j, EIFS_UNTIL] = 0.0
        if dst != j:
            if kind != K_BCAST:
                nf[j, NAV] = max(nf[j, NAV], nf[i, TX_NAV])   # virtual carrier sense
        elif kind == K_DATA:
            if last_seq[i, j] != fr_i[f, F_SEQ]:                # not a duplicate
                last_seq[i, j] = fr_i[f, F_SEQ]
                _emit(out_h, out_node, out_t, out_att, out_r, g, fr_i[f, F_HANDLE], j, now,
                      fr_i[f, F_ATT], DELIVERED)
            ni[j, RESP_KIND], ni[j, RESP_DST] = K_ACK, i
            nf[j, RESP_T] = now + (p[SIFS] if ip[STD] == DCF else p[TURN])
            nf[j, RESP_AIR] = fr_f[f, F_ACK]
            if ip[STD] == CSMA:
                _answer_first(now, j, nf, ni, p, ip, rng, fr_i, fr_f, out_h, out_node,
                              out_t, out_att, out_r, g, drops)
                return
        elif kind == K_RTS:
            if nf[j, NAV] <= now + EPS:                          # CTS only with NAV idle
                ni[j, RESP_KIND], ni[j, RESP_DST] = K_CTS, i
                nf[j, RESP_T] = now + p[SIFS]
                nf[j, RESP_NAV] = nf[i, TX_NAV]
                nf[j, RESP_AIR] = p[CTS_AIR]
        elif kind == K_CTS:
            if ni[j, STATE] == S_WAIT_CTS and fr_i[ni[j, CUR], F_DST] == i:
                ni[j, STATE] = S_SEND_DATA
                nf[j, T_MAC] = now + p[SIFS]
                return
        elif kind == K_ACK:
            if ni[j, STATE] == S_WAIT_ACK and fr_i[ni[j, CUR], F_DST] == i:
                if ip[DUTY] == 1:
                    drops[TR_ACKED] += 1
                if ip[PHASE_LOCK] == 1:   # the acknowledged copy's start: i's phase
                    nf[j, N_NF + i] = nf[j, TX_END] - fr_f[ni[j, CUR], F_AIR]
                _finish(now, j, nf, ni, p, ip, rng, fr_i, fr_f, out_h, out_node, out_t,
                        out_att, out_r, g, drops)
                return
    # Anything else heard while waiting for a CTS or an ACK: a failure once past the timeout.
    if (ni[j, STATE] == S_WAIT_ACK or ni[j, STATE] == S_WAIT_CTS) and \
            now + EPS >= nf[j, DEADLINE]:
        _fail(now, j, nf, ni, p, ip, rng, fr_i, fr_f, out_h, out_node, out_t, out_att, out_r,
              g, drops)


@njit(cache=True)
def _answer_first(now, j, nf, ni, p, ip, rng, fr_i, fr_f, out_h, out_node, out_t, out_att,
                  out_r, g, drops):
    """802.15.4: ``j`` must acknowledge a data frame; what becomes of its own, as ns-3's
    ``LrWpanMac`` decides: a CSMA-CA under way is cancelled, a wait for its own ACK is
    given up (an attempt spent: retried, or dropped at the limit), and CSMA-CA starts
    afresh (NB 0, BE macMinBE) once the ACK has been sent."""
    st = ni[j, STATE]
    if st == S_WAIT_ACK:
        if ip[DUTY] == 1:
            drops[TR_ABANDONED] += 1
        _fail(now, j, nf, ni, p, ip, rng, fr_i, fr_f, out_h, out_node, out_t, out_att,
              out_r, g, drops)
        st = ni[j, STATE]
    if (st == S_BACKOFF or st == S_CCA) and ni[j, CUR] >= 0:
        ni[j, STATE] = S_RESTART
        nf[j, T_MAC] = nf[j, RESP_T] + nf[j, RESP_AIR]   # the ACK's end


@njit(cache=True)
def _end_of_own(now, i, nf, ni, p, ip, rng, fr_i, fr_f, out_h, out_node, out_t, out_att,
                out_r, g, drops):
    """Sender ``i``'s frame has left the antenna: wait for the answer, or be done."""
    kind = ni[i, TX_KIND]
    if kind == K_DATA and ip[DUTY] == 1 and ni[i, TX_HEARD] == ABORTED:
        # Contiki's "collisions while sending": no ACK is awaited, and the train is not
        # a transmission for the link's statistics (csma.c counts it as its collisions)
        fr_i[ni[i, CUR], F_ATT] -= 1
        _collision(now, i, nf, ni, p, ip, rng, fr_i, fr_f, out_h, out_node, out_t, out_att,
                   out_r, g, drops)
    elif kind == K_DATA:
        ni[i, STATE] = S_WAIT_ACK
        nf[i, DEADLINE] = now + (p[ACK_TIMEOUT] if ip[STD] == DCF else p[ACK_WAIT])
        nf[i, T_MAC] = nf[i, DEADLINE]
    elif kind == K_RTS:
        ni[i, STATE] = S_WAIT_CTS
        nf[i, DEADLINE] = now + p[CTS_TIMEOUT]
        nf[i, T_MAC] = nf[i, DEADLINE]
    elif kind == K_BCAST:
        _finish(now, i, nf, ni, p, ip, rng, fr_i, fr_f, out_h, out_node, out_t, out_att,
                out_r, g, drops)


@njit(cache=True)
def _ends(now, nf, ni, p, ip, rng, rx_mw, last_seq, fr_i, fr_f, out_h, out_node, out_t,
          out_att, out_r, g, drops, ending):
    """Every transmission ending at ``now`` leaves the air, then is received or not."""
    n = nf.shape[0]
    m = 0
    for i in range(n):
        if ni[i, TX_KIND] >= 0 and nf[i, TX_END] <= now + EPS:
            ending[m] = i
            m += 1
    chunks = ip[RECEPTION] == ERROR_RATE
    if chunks and m > 0:
        _close_chunks(now, nf, ni, p, ip, rx_mw)
    if ip[STD] == CSMA or chunks:   # an error curve judges each frame's receivers once:
        # the chunks' product (error rate), or 802.15.4's least SINR (threshold)
        for k in range(m):
            i = ending[k]
            for j in range(n):
                if ni[j, LOCK] == i and ni[j, LOCK_OK] == 1:
                    if chunks:
                        ok = _chance(rng, np.exp(nf[j, LOG_OK]))
                    else:
                        ok = _oqpsk_ok(rng, nf[j, MIN_SINR], nf[i, TX_AIR])
                    if not ok:
                        ni[j, LOCK_OK] = 0
    if ip[DUTY] == 1:
        for k in range(m):
            _train_over(now, ending[k], nf, ni, p, ip, rx_mw, fr_i, out_h, out_node, out_t,
                        out_att, out_r, g, drops)
    for k in range(m):
        i = ending[k]
        if ni[i, TX_KIND] == K_BCAST and ip[DUTY] == 0:   # every node in range: received,
            # or lost to the channel (duty cycling: each at its copy, :func:`_copy_ends`)
            f = ni[i, TX_FRAME]
            for j in range(n):
                if j != i and rx_mw[i, j] >= p[DETECT] and rx_mw[i, j] >= p[SINR] * p[NOISE]:
                    got = ni[j, LOCK] == i and ni[j, LOCK_OK] == 1
                    if not got:
                        drops[COLLISION] += 1
                    _emit(out_h, out_node, out_t, out_att, out_r, g, fr_i[f, F_HANDLE], j,
                          now, fr_i[f, F_ATT], DELIVERED if got else COLLISION)
    for k in range(m):
        i = ending[k]
        for j in range(n):
            if ni[j, LOCK] == i:
                _receive(now, i, j, nf, ni, p, ip, rng, rx_mw, last_seq, fr_i, fr_f, out_h,
                         out_node, out_t, out_att, out_r, g, drops)
    for k in range(m):
        i = ending[k]
        _end_of_own(now, i, nf, ni, p, ip, rng, fr_i, fr_f, out_h, out_node, out_t, out_att,
                    out_r, g, drops)
        ni[i, TX_KIND] = -1
        _add_power(nf, rx_mw, i, -1.0)
    if m > 0:   # nothing left on air: exact zeros, not what the sums' rounding left
        quiet = True
        for i in range(n):
            if ni[i, TX_KIND] >= 0:
                quiet = False
                break
        if quiet:
            for j in range(n):
                nf[j, TOT_MW] = 0.0
    return m


@njit(cache=True)
def _put_on_air(now, i, kind, dst, f, end, nav, nf, ni):
    ni[i, TX_KIND], ni[i, TX_DST], ni[i, TX_FRAME] = kind, dst, f
    nf[i, TX_END], nf[i, TX_NAV], nf[i, TX_AIR] = end, nav, end - now
    ni[i, LOCK] = -1                  # half duplex: whatever it was receiving is lost
    ni[i, STATE] = S_TX if kind <= K_RTS else ni[i, STATE]


@njit(cache=True)
def _overhear(now, j, dst, air, end, nf, ni, p, ip, rx_mw):
    """ContikiMAC: the radios other than the addressee that a train of ``j``'s (``now``
    to ``end``) wakes, booked as listening from the CCA that found it. One that can
    decode the copies takes the next whole one, reads that it is not for it and sleeps
    (a broadcast's receivers are booked at its end instead, :func:`_book_broadcast`);
    one that only senses the energy listens until LISTEN_TIME_AFTER_PACKET_DETECTED
    is over or the train has been silent for more than MAX_SILENCE_PERIODS, and with
    fast sleep at most MAX_NONACTIVITY_PERIODS. Nodes sending or receiving another
    frame are left out (their radio is on anyway)."""
    step = air + p[CM_TIMING + 5]
    spacing = p[CM_TIMING + 2] + p[CM_TIMING + 3]
    for b in range(nf.shape[0]):
        if b == j or b == dst or ni[b, TX_KIND] >= 0 or ni[b, LOCK] >= 0 or \
                rx_mw[j, b] < p[CS]:
            continue
        decodes = rx_mw[j, b] >= p[DETECT]
        if decodes and dst < 0:
            continue
        # a check that finds the last copy has no whole copy after it: look one on
        copy, found = first_copy(p[CM_TIMING:STROBE], now, air, nf[b, PHASE], end + step)
        if copy < 0 or found - p[CM_TIMING + 2] >= end:
            continue
        if decodes:
            if now + copy * step < end:
                nf[b, R_LISTEN] += now + copy * step - found
                nf[b, R_RX] += air
            continue
        off = min(found + p[LISTEN_AFTER], end + (ip[MAX_SILENCE] + 1) * spacing)
        if ip[FAST_SLEEP] == 1:
            off = min(off, found + ip[MAX_NONACT] * spacing)
        nf[b, R_LISTEN] += max(off - found, 0.0)


@njit(cache=True)
def _count_start(j, dst, nf, ni, p, ip, rx_mw, drops):
    """Count a train's start (diagnostics, ``TR_*``): a broadcast, or a unicast and
    why its receiver cannot take it, if it cannot."""
    if dst < 0:
        drops[TR_BCAST] += 1
        return
    drops[TR_UNICAST] += 1
    if rx_mw[j, dst] < p[DETECT]:
        drops[TR_OUT] += 1
    elif ni[dst, TX_KIND] >= 0:
        drops[TR_DST_TX] += 1
    elif ni[dst, LOCK] >= 0:
        k = ni[dst, LOCK]
        if ni[k, TX_KIND] == K_BCAST:
            drops[TR_DST_BCAST] += 1
        elif ni[k, TX_KIND] == K_DATA:
            drops[TR_DST_TRAIN] += 1
        else:
            drops[TR_DST_OTHER] += 1


@njit(cache=True)
def _train(now, j, dst, air, nf, ni, p, ip, rx_mw, drops):
    """ContikiMAC: ``j`` starts a train of copies of an ``air``-second frame at ``now``;
    return when its strobing ends at the latest: ``strobe_time`` (a broadcast always
    lasts that long), or under the phase lock, for a neighbour whose phase is known,
    ``p[LOCK_MISS]`` after its expected wake-up (Contiki's "miss"). A unicast train ends
    sooner, at the end of the copy its receiver takes whole (:func:`_checks`,
    :func:`_copy_ends`); ``ni[TX_MISS]`` stays 1 until the receiver takes one. The
    radios' time is booked as the copies are taken and as the train ends
    (:func:`_train_over`)."""
    limit = p[STROBE]
    if ip[PHASE_LOCK] == 1 and dst >= 0 and nf[j, N_NF + dst] == nf[j, N_NF + dst]:
        e = nf[j, N_NF + dst]
        expected = (e - now) - np.floor((e - now) / p[PERIOD]) * p[PERIOD]
        # at most Contiki's MAX_PHASE_STROBE_TIME after its t0 (CHECK_TIME_TX after the
        # train's start at the latest): a train whose CSMA-CA outlasted the guard misses
        limit = min(expected, p[GUARD]) + p[LOCK_MISS]
    ni[j, TX_MISS] = 1 if dst >= 0 else 0
    ni[j, TX_HEARD] = 0
    _count_start(j, dst, nf, ni, p, ip, rx_mw, drops)
    nf[j, T0], nf[j, STROBE_END] = now, now + limit
    if dst < 0:
        for d in range(nf.shape[0]):
            ni[d, N_NI + j] = 0
    # the checks that can find it: from the first whose CCAs can still overlap it
    check_len = p[CM_TIMING + 1] * (p[CM_TIMING + 2] + p[CM_TIMING + 3])
    for d in range(nf.shape[0]):
        if nf[d, NEXT_CHECK] < now - check_len:
            nf[d, NEXT_CHECK] = nf[d, PHASE] + np.ceil(
                (now - check_len - nf[d, PHASE]) / p[PERIOD] - 1e-12) * p[PERIOD]
    return _strobe_over(now, limit, air, p)


@njit(cache=True)
def _strobe_over(t0, limit, air, p):
    """When a train of ``air``-second copies begun at ``t0`` that strobes for ``limit``
    ends: with the last copy begun within it, sent whole (Contiki's loop tests the
    time before each copy)."""
    step = air + p[CM_TIMING + 5]
    return t0 + np.ceil(limit / step - 1e-12) * step - p[CM_TIMING + 5]


@njit(cache=True)
def _train_over(now, i, nf, ni, p, ip, rx_mw, fr_i, out_h, out_node, out_t, out_att,
                out_r, g, drops):
    """ContikiMAC: ``i``'s train leaves the air at ``now``: the sender's radio time (its
    copies, listening in the gaps), the overheard radios' (:func:`_overhear`), a copy
    still being taken of it abandoned, and every node in range of a broadcast that took
    no copy of it lost it."""
    kind = ni[i, TX_KIND]
    if kind != K_DATA and kind != K_BCAST:
        return
    air, t0 = nf[i, TX_AIR], nf[i, T0]
    step = air + p[CM_TIMING + 5]
    copies = np.ceil((now - t0) / step - 1e-12)
    nf[i, R_TX] += copies * air
    nf[i, R_LISTEN] += (copies - 1) * p[CM_TIMING + 5]
    if kind == K_DATA:
        if ni[i, TX_HEARD] >= 1:
            drops[TR_HEARD] += 1
        if ni[i, TX_HEARD] == ABORTED:
            drops[TR_STOPPED] += 1
        if ni[i, TX_MISS] == 1:
            drops[TR_NO_CHECK] += 1
    if ip[OVERHEAR] == 1:
        _overhear(t0, i, ni[i, TX_DST] if kind == K_DATA else -1, air, now, nf, ni, p, ip,
                  rx_mw)
    f = ni[i, TX_FRAME]
    for d in range(nf.shape[0]):
        if ni[d, W_SRC] == i:   # a bystander's copy of a train that ended before it
            ni[d, W_SRC] = -1
            nf[d, W_END] = np.inf
            if ni[d, LOCK] == i:
                ni[d, LOCK] = -1
        elif kind == K_BCAST and d != i and ni[d, N_NI + i] == 0 and \
                rx_mw[i, d] >= p[DETECT] and rx_mw[i, d] >= p[SINR] * p[NOISE]:
            drops[COLLISION] += 1
            _emit(out_h, out_node, out_t, out_att, out_r, g, fr_i[f, F_HANDLE], d, now,
                  fr_i[f, F_ATT], COLLISION)


@njit(cache=True)
def _copy_of(now, d, i, tc, nf, ni, p):
    """The copy of ``i``'s train that ``d``'s channel check begun at ``tc`` takes whole:
    its start and when the check's CCA found the train, or (inf, -inf) if the check
    finds no copy that can still be taken (after its strobing or its last copy)."""
    air, t0 = nf[i, TX_AIR], nf[i, T0]
    found = caught(p[CM_TIMING:STROBE], t0, air, tc)
    if found == -np.inf:
        return np.inf, -np.inf
    step = air + p[CM_TIMING + 5]
    cs = t0 + np.ceil((found - t0) / step - 1e-12) * step
    if cs >= nf[i, STROBE_END] - EPS:
        return np.inf, -np.inf
    return cs, found


@njit(cache=True)
def _take_copy(now, d, i, cs, found, nf, ni, p, rx_mw, drops):
    """``d`` starts taking ``i``'s copy that begins at ``cs`` (its radio on from
    ``found``): locked onto ``i`` until the copy's end, its radio time booked if the copy
    is for it (a unicast to it, a broadcast); a unicast to it ends there."""
    air = nf[i, TX_AIR]
    s = rx_mw[i, d]
    ni[d, LOCK], ni[d, LOCK_OK], ni[d, W_SRC] = i, 1, i
    nf[d, MIN_SINR] = s / (p[NOISE] + max(nf[d, TOT_MW] - s, 0.0))
    nf[d, W_END], nf[d, W_FOUND] = cs + air, found
    addressed = ni[i, TX_KIND] == K_BCAST or ni[i, TX_DST] == d
    if addressed:
        nf[d, R_RX] += air
        nf[d, R_LISTEN] += max(cs - found, 0.0)
    if ni[i, TX_KIND] == K_DATA and ni[i, TX_DST] == d:
        ni[i, TX_MISS] = 0
        nf[i, TX_END] = cs + air
        drops[TR_FOUND] += 1


@njit(cache=True)
def _checks(now, nf, ni, p, ip, rx_mw, drops):
    """ContikiMAC: every node whose channel check is due at ``now`` while trains are on
    air looks for one: a node sending, receiving, or waiting for its ACK makes no
    check; else its CCAs find the trains it can decode, and it takes the first whole
    copy after the CCA that found one (the earliest to begin; a tie to the strongest)."""
    n = nf.shape[0]
    for d in range(n):
        tc = nf[d, NEXT_CHECK]
        if tc > now + EPS:
            continue
        nf[d, NEXT_CHECK] = tc + p[PERIOD]
        busy = ni[d, TX_KIND] >= 0 or ni[d, LOCK] >= 0 or ni[d, STATE] == S_WAIT_ACK \
            or ni[d, STATE] == S_TURN
        best, best_cs, best_found, mine = -1, np.inf, -np.inf, False
        for i in range(n):
            kind = ni[i, TX_KIND]
            if i == d or (kind != K_DATA and kind != K_BCAST) or rx_mw[i, d] < p[DETECT]:
                continue
            if kind == K_BCAST and ni[d, N_NI + i] == 1:
                continue
            if busy:
                if kind == K_DATA and ni[i, TX_DST] == d:
                    drops[TR_BUSY_AT_CHECK] += 1
                continue
            cs, found = _copy_of(now, d, i, tc, nf, ni, p)
            mine = mine or (kind == K_DATA and ni[i, TX_DST] == d and cs < np.inf)
            if cs < best_cs - EPS or (cs <= best_cs + EPS and best >= 0 and
                                      rx_mw[i, d] > rx_mw[best, d]):
                best, best_cs, best_found = i, cs, found
        if best >= 0:
            _take_copy(now, d, best, best_cs, best_found, nf, ni, p, rx_mw, drops)
            if mine and not (ni[best, TX_KIND] == K_DATA and ni[best, TX_DST] == d):
                drops[TR_TOOK_OTHER] += 1


@njit(cache=True)
def _copy_ends(now, nf, ni, p, ip, rng, rx_mw, last_seq, fr_i, fr_f, out_h, out_node,
               out_t, out_att, out_r, g, drops):
    """ContikiMAC: every copy being taken that ends at ``now`` is judged (the O-QPSK
    curve at the least SINR it met; lost if its taker began sending). A copy for its
    taker that is lost keeps the radio on for the train's next copy while
    LISTEN_TIME_AFTER_PACKET_DETECTED since the CCA lasts (a CRC error is no frame);
    else a broadcast's fate is the taker's, and a unicast is received as any frame
    (:func:`_receive`: delivered and acknowledged)."""
    for d in range(nf.shape[0]):
        i = ni[d, W_SRC]
        if i < 0 or nf[d, W_END] > now + EPS:
            continue
        ni[d, W_SRC] = -1
        nf[d, W_END] = np.inf
        air = nf[i, TX_AIR]
        ok = ni[d, LOCK] == i and ni[d, LOCK_OK] == 1 and \
            _oqpsk_ok(rng, nf[d, MIN_SINR], air)
        kind = ni[i, TX_KIND]
        mine = kind == K_BCAST or ni[i, TX_DST] == d
        if not ok and mine and ni[d, TX_KIND] < 0:
            nxt = now + p[CM_TIMING + 5]
            if nxt < nf[d, W_FOUND] + p[LISTEN_AFTER] and nxt < nf[i, STROBE_END] - EPS:
                if kind == K_DATA:
                    drops[TR_CORRUPT] += 1
                found = nf[d, W_FOUND]
                _take_copy(now, d, i, nxt, found, nf, ni, p, rx_mw, drops)
                nf[d, R_LISTEN] -= max(nxt - found, 0.0) - (nxt - now)   # on since found
                continue
        if ni[d, LOCK] == i:
            ni[d, LOCK_OK] = 1 if ok else 0
        if kind == K_BCAST:
            ni[d, N_NI + i] = 1
            if not ok:
                drops[COLLISION] += 1
            f = ni[i, TX_FRAME]
            _emit(out_h, out_node, out_t, out_att, out_r, g, fr_i[f, F_HANDLE], d, now,
                  fr_i[f, F_ATT], DELIVERED if ok else COLLISION)
        elif mine:
            if ok:
                drops[TR_TAKEN] += 1
            else:
                drops[TR_CORRUPT] += 1
                # no ACK: it strobes on, to the last copy begun in time
                nf[i, TX_END] = max(_strobe_over(nf[i, T0], nf[i, STROBE_END] - nf[i, T0],
                                                 air, p), now)
        if ni[d, LOCK] == i:
            _receive(now, i, d, nf, ni, p, ip, rng, rx_mw, last_seq, fr_i, fr_f, out_h,
                     out_node, out_t, out_att, out_r, g, drops)


@njit(cache=True)
def _book_ack(j, dst, nf, p):
    """ContikiMAC: ``j`` acknowledges ``dst``'s copy: both radios stay on through the
    turnaround, then ``j`` sends the ACK and ``dst`` receives it."""
    nf[j, R_LISTEN] += p[TURN]
    nf[dst, R_LISTEN] += p[TURN]
    nf[j, R_TX] += nf[j, RESP_AIR]
    nf[dst, R_RX] += nf[j, RESP_AIR]


@njit(cache=True)
def _start_data(now, j, nf, ni, p, ip, fr_i, fr_f, rx_mw, drops):
    """Node ``j`` puts its current frame (or its RTS) on air (with duty cycling, its
    train of copies; ``TX_AIR`` stays one copy's airtime, which the error curve judges)."""
    f = ni[j, CUR]
    dst = fr_i[f, F_DST]
    air, ack = fr_f[f, F_AIR], fr_f[f, F_ACK]
    if ip[DUTY] == 1:
        fr_i[f, F_ATT] += 1
        end = _train(now, j, dst, air, nf, ni, p, ip, rx_mw, drops)
        _put_on_air(now, j, K_DATA if dst >= 0 else K_BCAST, dst, f, end, 0.0, nf, ni)
        nf[j, TX_AIR] = air
    elif dst < 0:
        fr_i[f, F_ATT] += 1
        _put_on_air(now, j, K_BCAST, -1, f, now + air, 0.0, nf, ni)
    elif ni[j, STATE] == S_SEND_DATA:             # after the CTS: not a new attempt
        _put_on_air(now, j, K_DATA, dst, f, now + air, now + air + p[SIFS] + ack, nf, ni)
    elif fr_i[f, F_RTS] == 1:
        fr_i[f, F_ATT] += 1
        end = now + p[RTS_AIR]
        nav = end + 3 * p[SIFS] + p[CTS_AIR] + air + ack
        _put_on_air(now, j, K_RTS, dst, f, end, nav, nf, ni)
    else:
        fr_i[f, F_ATT] += 1
        _put_on_air(now, j, K_DATA, dst, f, now + air, now + air + p[SIFS] + ack, nf, ni)
    ni[j, SLOTS] = -1


@njit(cache=True)
def _trains_hear(now, nf, ni, p, rx_mw, started, m):
    """Duty cycling: a unicast train's sender listens between its copies for its ACK;
    one of the ``m`` frames just started that it senses (CCA: power >= ``cs``) is heard
    at the gap's check, and Contiki's sender stops the train there ("collisions while
    sending", MAC_TX_COLLISION: ``TX_HEARD`` = ABORTED, the train ending at the next
    copy's start), unless its receiver is taking the copy on air (that copy and its ACK
    decide). A train that heard one is marked (``TX_HEARD``) either way."""
    gap = p[CM_TIMING + 5]
    for j in range(nf.shape[0]):
        if ni[j, TX_KIND] != K_DATA or ni[j, TX_HEARD] != 0:
            continue
        for q in range(m):
            i = started[q]
            if i != j and rx_mw[i, j] >= p[CS]:
                ni[j, TX_HEARD] = 1
                if ni[ni[j, TX_DST], W_SRC] != j:
                    ni[j, TX_HEARD] = ABORTED
                    step = nf[j, TX_AIR] + gap
                    t0 = nf[j, T0]
                    stop = t0 + np.ceil((now - t0) / step - 1e-12) * step
                    nf[j, TX_END] = min(nf[j, TX_END], max(stop, now))
                break


@njit(cache=True)
def _locks(nf, ni, p, ip, rx_mw, started, m):
    """After ``m`` transmissions start: locked receivers re-judged, idle ones lock on.

    802.11: a frame is kept while its SINR stays above the threshold (ns-3's preamble
    detection and threshold rule). 802.15.4: a receiver locks onto a frame whose power
    reaches the detection threshold and keeps the least SINR the frame meets
    (``MIN_SINR``); at its end the O-QPSK error curve decides (:func:`_oqpsk_ok`), as
    ns-3's ``LrWpanErrorModel`` does. Under the error-rate reception the locks are
    taken by the same rules, and a locked frame is judged only at its end, by the
    product of its chunks (:func:`_chunk`)."""
    n = nf.shape[0]
    curve = ip[STD] == CSMA
    chunks = ip[RECEPTION] == ERROR_RATE
    for j in range(n):
        if ni[j, TX_KIND] >= 0:
            continue
        k = ni[j, LOCK]
        if k >= 0 and chunks:
            continue   # its chunk was closed before the powers changed
        if k >= 0:
            s = rx_mw[k, j]
            sinr = s / (p[NOISE] + nf[j, TOT_MW] - s)
            if curve:
                nf[j, MIN_SINR] = min(nf[j, MIN_SINR], sinr)
            elif sinr < p[SINR]:
                ni[j, LOCK_OK] = 0
            continue
        best, best_s = -1, 0.0
        for q in range(m):
            i = started[q]
            if ip[DUTY] == 1 and ni[i, TX_KIND] != K_ACK:
                continue   # a train is taken a copy at a time, at a check (_checks)
            if rx_mw[i, j] > best_s:
                best, best_s = i, rx_mw[i, j]
        if best < 0 or best_s < p[DETECT]:
            continue
        sinr = best_s / (p[NOISE] + nf[j, TOT_MW] - best_s)
        if curve:
            ni[j, LOCK], ni[j, LOCK_OK] = best, 1
            nf[j, MIN_SINR] = sinr
        elif sinr >= p[SINR]:
            ni[j, LOCK], ni[j, LOCK_OK] = best, 1
        if chunks and ni[j, LOCK] == best:
            nf[j, CHUNK_T], nf[j, LOG_OK] = nf[best, TX_END] - nf[best, TX_AIR], 0.0


#: O-QPSK's bytes a second at 250 kbit/s, and its SHR and PHR (not judged by the curve).
OQPSK_BYTES_PER_S = 31250.0
OQPSK_SHR_PHR_BYTES = 6


@njit(cache=True)
def _chance(rng, success):
    """One draw: True with probability ``success`` (to a millionth)."""
    return _draw(rng, 999999) < success * 1000000.0


@njit(cache=True)
def _oqpsk_ok(rng, sinr, air):
    """Whether a frame of ``air`` seconds is received at least SINR ``sinr``: its PSDU's
    bits each right with 1 - BER (one draw)."""
    psdu_bits = 8.0 * max(air * OQPSK_BYTES_PER_S - OQPSK_SHR_PHR_BYTES, 0.0)
    return _chance(rng, (1.0 - oqpsk_ber(sinr)) ** psdu_bits)


@njit(cache=True)
def _chunk(now, j, nf, ni, p, ip, rx_mw):
    """The error-rate reception: receiver ``j``'s chunk of its frame from ``CHUNK_T`` to
    ``now``, under the interference that held over it (call before the powers change),
    adds its bits' log success to ``LOG_OK`` (ns-3's ``InterferenceHelper``: the PLCP
    header's bits at DBPSK 1 Mbit/s, the payload's at its rate, the preamble not
    judged; the bits of a chunk are its duration x the rate)."""
    i = ni[j, LOCK]
    t0 = nf[j, CHUNK_T]
    nf[j, CHUNK_T] = now
    if now <= t0:
        return
    s = rx_mw[i, j]
    sinr = s / (p[NOISE] + max(nf[j, TOT_MW] - s, 0.0))
    header = nf[i, TX_END] - nf[i, TX_AIR] + p[PRE_AIR]   # where the PLCP header begins
    payload = header + p[HDR_AIR]
    # answers and unicast data at the data rate; broadcasts, RTS and CTS at the basic
    data = ni[i, TX_KIND] == K_DATA or ni[i, TX_KIND] == K_ACK
    code = ip[DATA_CODE] if data else ip[BASIC_CODE]
    bps = p[DATA_BPS] if data else p[BASIC_BPS]
    h_bits = max(min(now, payload) - max(t0, header), 0.0) * 1e6
    p_bits = max(now - max(t0, payload), 0.0) * bps
    curve = p[N_P:]
    if h_bits > 0.0:
        nf[j, LOG_OK] += h_bits * log_ok_per_bit(R_DBPSK, sinr, curve)
    if p_bits > 0.0:
        nf[j, LOG_OK] += p_bits * log_ok_per_bit(code, sinr, curve)


@njit(cache=True)
def _close_chunks(now, nf, ni, p, ip, rx_mw):
    """The error-rate reception: every receiver still holding a frame closes its chunk
    at ``now`` (the interference is about to change: a frame starts or ends)."""
    for j in range(nf.shape[0]):
        if ni[j, LOCK] >= 0 and ni[j, LOCK_OK] == 1:
            _chunk(now, j, nf, ni, p, ip, rx_mw)


@njit(cache=True)
def _timer(now, j, nf, ni, p, ip, rng, fr_i, fr_f, out_h, out_node, out_t, out_att, out_r,
           g, drops):
    """``j``'s MAC timer fires; return True if ``j`` starts transmitting its frame now."""
    st = ni[j, STATE]
    nf[j, T_MAC] = np.inf
    if st == S_CONTEND or st == S_SEND_DATA or st == S_TURN:
        return True
    if st == S_WAIT_ACK or st == S_WAIT_CTS:
        if ni[j, LOCK] < 0:        # else the frame being received decides, at its end
            _fail(now, j, nf, ni, p, ip, rng, fr_i, fr_f, out_h, out_node, out_t, out_att,
                  out_r, g, drops)
    elif st == S_BACKOFF:
        ni[j, STATE] = S_CCA
        if ip[DUTY] == 1:   # the radio on for the CCA
            nf[j, R_LISTEN] += p[CCA]
        ni[j, CCA_BUSY] = 1 if _busy(nf, ni, p, j) else 0
        nf[j, T_MAC] = now + p[CCA]
    elif st == S_CCA:
        if ni[j, CCA_BUSY] == 1 or _busy(nf, ni, p, j):
            ni[j, NB] += 1
            if ni[j, NB] > ip[MAX_NB]:
                _collision(now, j, nf, ni, p, ip, rng, fr_i, fr_f, out_h, out_node, out_t,
                           out_att, out_r, g, drops)
            else:
                ni[j, BE] = min(ni[j, BE] + 1, ip[MAX_BE])
                ni[j, STATE] = S_BACKOFF
                nf[j, T_MAC] = now + _draw(rng, (1 << ni[j, BE]) - 1) * p[UNIT]
        else:
            ni[j, STATE] = S_TURN
            nf[j, T_MAC] = now + p[TURN]
    elif st == S_IFS:
        _begin(now, j, nf, ni, p, ip, rng, fr_i, fr_f, out_h, out_node, out_t, out_att,
               out_r, g, drops)
    elif st == S_RESTART:
        _start_csma(j, ni, nf, p, ip, rng, now, fr_i)
    return False


@njit(cache=True)
def _collision(now, j, nf, ni, p, ip, rng, fr_i, fr_f, out_h, out_node, out_t, out_att,
               out_r, g, drops):
    """``j``'s frame found the channel busy (CSMA-CA's last CCA; under ContikiMAC also
    another frame heard during its train: MAC_TX_COLLISION): csma.c's requeue
    (:func:`_requeue`), or dropped as a channel access failure."""
    if ip[CSMA_TX] > 0 and _requeue(now, j, nf, ni, p, ip, rng):
        return
    f = ni[j, CUR]
    drops[CHANNEL_ACCESS_FAILURE] += 1
    _emit(out_h, out_node, out_t, out_att, out_r, g, fr_i[f, F_HANDLE], j, now,
          fr_i[f, F_ATT], CHANNEL_ACCESS_FAILURE)
    ni[j, CUR] = -1
    _begin(now, j, nf, ni, p, ip, rng, fr_i, fr_f, out_h, out_node, out_t, out_att, out_r,
           g, drops)


@njit(cache=True)
def _requeue(now, j, nf, ni, p, ip, rng):
    """Contiki's csma.c above ContikiMAC: ``j``'s frame found the channel busy
    (MAC_TX_COLLISION); count it (every CSMA_MAX_BACKOFF_EXPONENT + 1 of them count a
    transmission) and, below CSMA_MAX_MAC_TRANSMISSIONS, try again after one period
    plus U[0, 2^collisions periods) (csma.c's ``rexmit``). False: give it up."""
    ni[j, CS_COLL] += 1
    if ni[j, CS_COLL] > ip[CSMA_BE]:
        ni[j, CS_COLL] = 0
        ni[j, CS_TX] += 1
    if ni[j, CS_TX] >= ip[CSMA_TX]:
        return False
    spread = (1 << ni[j, CS_COLL]) * p[PERIOD]
    ni[j, STATE] = S_RESTART
    nf[j, T_MAC] = now + p[PERIOD] + _draw(rng, 999999) * 1e-6 * spread
    return True


@njit(cache=True)
def _arrive(now, f, nf, ni, p, ip, rng, fr_i, fr_f, out_h, out_node, out_t, out_att, out_r,
            g, drops):
    """Frame ``f`` reaches its node's queue (or is refused: the queue is full)."""
    j = fr_i[f, F_NODE]
    if ni[j, Q_LEN] + (1 if ni[j, CUR] >= 0 else 0) >= ip[QUEUE_LIMIT]:
        drops[QUEUE_FULL] += 1
        _emit(out_h, out_node, out_t, out_att, out_r, g, fr_i[f, F_HANDLE], j, now, 0,
              QUEUE_FULL)
        return
    fr_i[f, F_NEXT] = -1
    if ni[j, Q_LEN] == 0:
        ni[j, Q_HEAD] = f
    else:
        fr_i[ni[j, Q_TAIL], F_NEXT] = f
    ni[j, Q_TAIL] = f
    ni[j, Q_LEN] += 1
    if ni[j, STATE] == S_IDLE:
        _begin(now, j, nf, ni, p, ip, rng, fr_i, fr_f, out_h, out_node, out_t, out_att,
               out_r, g, drops)


@njit(cache=True)
def _mark_live(ni, fr_i, live):
    """Set ``live[f]`` for every frame the nodes still hold: queued, current (contending,
    on air, waiting for its answer) or on air. A frame not marked here, nor waiting to
    arrive, has had its last outcome: its row of the frame table may be reused."""
    for j in range(ni.shape[0]):
        f = ni[j, Q_HEAD]
        for _ in range(ni[j, Q_LEN]):
            live[f] = True
            f = fr_i[f, F_NEXT]
        if ni[j, CUR] >= 0:
            live[ni[j, CUR]] = True
        if ni[j, TX_KIND] >= 0 and ni[j, TX_FRAME] >= 0:
            live[ni[j, TX_FRAME]] = True


@njit(cache=True)
def _contend_times(now, nf, ni, p, ip):
    """802.11: when each contending node's backoff ends, or never while it senses busy."""
    for j in range(nf.shape[0]):
        if ni[j, STATE] == S_CONTEND:
            if _busy(nf, ni, p, j):
                nf[j, T_MAC] = np.inf
            else:
                nf[j, T_MAC] = max(now, _resume(nf, p, j) + ni[j, SLOTS] * p[SLOT])


@njit(cache=True)
def _next_event(nf, ni, ip, fr_f, arrivals, g):
    """When the next event is due: a frame's arrival, a timer, an answer, an end; under
    duty cycling also a copy's end and, while a train is on air, a channel check."""
    t = np.inf
    a = g[G_ARRIVAL]
    if a < arrivals.shape[0]:
        t = fr_f[arrivals[a], F_READY]
    trains = False
    for j in range(nf.shape[0]):
        t = min(t, nf[j, T_MAC], nf[j, RESP_T])
        if ni[j, TX_KIND] >= 0:
            t = min(t, nf[j, TX_END])
            trains = trains or ni[j, TX_KIND] == K_DATA or ni[j, TX_KIND] == K_BCAST
    if ip[DUTY] == 1:
        for j in range(nf.shape[0]):
            t = min(t, nf[j, W_END])
            if trains:
                t = min(t, nf[j, NEXT_CHECK])
    return t


@njit(cache=True)
def advance(until, p, ip, rx_mw, nf, ni, last_seq, g, gf, rng, fr_i, fr_f, arrivals,
            out_h, out_node, out_t, out_att, out_r, drops, scratch):
    """Run every event at or before ``until``; return False if the outputs filled first.
    With ``g[G_STOP]`` 1 it returns after the first instant that writes an outcome,
    the clock at that instant.

    ``arrivals`` are frame numbers in ready order, from ``g[G_ARRIVAL]`` on; ``gf[0]``
    is the clock, ``gf[1]`` is left at the time of the next event once it returns True
    (inf: none). Outcome rows are written from ``g[G_OUT]``; the wrapper empties them.
    """
    n = nf.shape[0]
    room = out_h.shape[0] - (n * n + 4 * n)
    while True:
        if g[G_OUT] > room:
            return False
        t = _next_event(nf, ni, ip, fr_f, arrivals, g)
        if t > until or t == np.inf:
            gf[0] = max(gf[0], until) if until < np.inf else gf[0]
            gf[1] = t
            return True
        now = max(t, gf[0])
        gf[0] = now
        # 0. Copies of trains taken (duty cycling); 1. ends of transmissions, and what
        # they leave received.
        if ip[DUTY] == 1:
            _copy_ends(now, nf, ni, p, ip, rng, rx_mw, last_seq, fr_i, fr_f, out_h,
                       out_node, out_t, out_att, out_r, g, drops)
        if _ends(now, nf, ni, p, ip, rng, rx_mw, last_seq, fr_i, fr_f, out_h, out_node,
                 out_t, out_att, out_r, g, drops, scratch) > 0:
            _transitions(now, nf, ni, p, ip)
            if ip[STD] == DCF:
                _contend_times(now, nf, ni, p, ip)
        # 2. Arrivals.
        while g[G_ARRIVAL] < arrivals.shape[0] and \
                fr_f[arrivals[g[G_ARRIVAL]], F_READY] <= now + EPS:
            _arrive(now, arrivals[g[G_ARRIVAL]], nf, ni, p, ip, rng, fr_i, fr_f, out_h,
                    out_node, out_t, out_att, out_r, g, drops)
            g[G_ARRIVAL] += 1
        if ip[STD] == DCF:
            _contend_times(now, nf, ni, p, ip)
        # 3. Timers and answers due now; every frame they start goes on air together.
        m = 0
        for j in range(n):
            if nf[j, RESP_T] <= now + EPS:
                nf[j, RESP_T] = np.inf
                if ni[j, TX_KIND] < 0:
                    kind = ni[j, RESP_KIND]
                    nav = nf[j, RESP_NAV] if kind == K_CTS else 0.0
                    _put_on_air(now, j, kind, ni[j, RESP_DST], -1, now + nf[j, RESP_AIR], nav,
                                nf, ni)
                    if ip[DUTY] == 1:
                        _book_ack(j, ni[j, RESP_DST], nf, p)
                    scratch[m] = j
                    m += 1
            elif nf[j, T_MAC] <= now + EPS and ni[j, TX_KIND] >= 0:
                nf[j, T_MAC] = nf[j, TX_END]    # sending an answer: the timer waits for it
            elif nf[j, T_MAC] <= now + EPS:
                if _timer(now, j, nf, ni, p, ip, rng, fr_i, fr_f, out_h, out_node, out_t,
                          out_att, out_r, g, drops):
                    _start_data(now, j, nf, ni, p, ip, fr_i, fr_f, rx_mw, drops)
                    scratch[m] = j
                    m += 1
        if m > 0:
            if ip[RECEPTION] == ERROR_RATE:
                _close_chunks(now, nf, ni, p, ip, rx_mw)
            for q in range(m):
                if ip[STD] == DCF:   # 802.11 recomputes its contention times below; an
                    # 802.15.4 node answering keeps its timer (it waits for the answer's end)
                    nf[scratch[q], T_MAC] = np.inf
                _add_power(nf, rx_mw, scratch[q], 1.0)
            _locks(nf, ni, p, ip, rx_mw, scratch, m)
            if ip[DUTY] == 1:
                _trains_hear(now, nf, ni, p, rx_mw, scratch, m)
        if ip[DUTY] == 1:   # 4. channel checks (they find the trains begun now too)
            _checks(now, nf, ni, p, ip, rx_mw, drops)
        _transitions(now, nf, ni, p, ip)
        if ip[STD] == DCF:
            _contend_times(now, nf, ni, p, ip)
        if g[G_STOP] == 1 and g[G_OUT] > 0:
            gf[1] = _next_event(nf, ni, ip, fr_f, arrivals, g)
            return True
