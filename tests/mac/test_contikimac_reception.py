"""ContikiMAC's receptions on the shared channel, copy by copy: a radio is busy only
while it takes a copy after its channel check (not for a whole train it is in range
of), and a sender that hears another frame between its copies stops its train
(Contiki's MAC_TX_COLLISION) instead of strobing on (docs/NOTES.md, "RPL over
ContikiMAC: what fails the trains", 2026-12-03)."""
import dataclasses

import numpy as np
import pytest

from emulator.mac import kernel as k
from emulator.mac.contikimac import ContikiMac
from emulator.mac.engine import REASONS, MacEngine
from emulator.mac.standards import CsmaCa802154

CM = ContikiMac()
STD = CsmaCa802154()
AIR = (40 + STD.header_bytes + 6) * 32e-6          # a 40-byte payload's frame
STEP = AIR + CM.inter_packet
NONE = -250.0


def _engine(rx_dbm, phases, duty=CM):
    """Nodes with the received powers ``rx_dbm[sender][receiver]`` and the channel
    checks' phases given (seconds into the period)."""
    engine = MacEngine(np.array(rx_dbm, float), STD, seed=1, duty=duty)
    engine._nf[:, k.PHASE] = phases
    return engine


def _fates(out):
    return [(h, n, round(t, 6), a, REASONS[r]) for h, n, t, a, r in
            zip(out.handle.tolist(), out.node.tolist(), out.time.tolist(),
                out.attempts.tolist(), out.reason.tolist())]


def test_a_receiver_woken_by_a_broadcast_takes_a_unicast_at_its_next_check():
    """Node 1 hears node 0's broadcast train and node 2's unicast to it; 0 and 2 do not
    hear each other. 1's check at 75 ms takes a copy of the broadcast and 1 sleeps;
    2's train, begun at about 83 ms while the broadcast is still on air, is taken at
    1's next check (200 ms): one attempt. (Locked onto the whole broadcast train, as
    the engine had it, node 1 missed every train that began during it: a full strobe
    and a retry.)"""
    rx = [[NONE, -75.0, NONE], [-75.0, NONE, -52.0], [NONE, -52.0, NONE]]
    engine = _engine(rx, [0.0, 0.075, 0.05])
    engine.enqueue(0.0, 0, -1, 40, handle=1)
    engine.enqueue(0.08, 2, 1, 40, handle=2)
    fates = _fates(engine.advance(1.0))
    bcast, t0 = fates[0], engine._nf[0, k.T0]
    assert bcast[:2] == (1, 1) and bcast[4] == "delivered"
    assert 0.075 < bcast[2] < 0.075 + 3 * STEP      # at 1's check, not the train's end
    unicast = [f for f in fates if f[0] == 2]
    assert [(f[1], f[3], f[4]) for f in unicast] == [(1, 1, "delivered")]
    assert 0.2 < unicast[0][2] < 0.2 + 3 * STEP     # 1's next check
    assert t0 + CM.strobe_time > 0.08              # the broadcast was on air at 2's start
    trains = engine.counters()["trains"]
    assert trains["acked"] == 1 and trains["no_check"] == 0


@pytest.mark.parametrize("requeue", [0, 3])
def test_a_sender_hearing_another_frame_stops_its_train(requeue):
    """Node 0 strobes to node 1, whose check comes at 100 ms; node 2 (which 0 hears
    and which does not hear 0) starts a broadcast at about 30 ms. 0 hears it between
    its copies and stops after the copy on air: MAC_TX_COLLISION, which csma.c requeues
    (``csma_max_mac_transmissions`` 3) or gives up as a channel access failure (0); the
    stopped train is no transmission for the link's statistics (attempts 1 at the
    delivery). Strobing on, as the engine had it, 0 reached 1 at its check at 100 ms."""
    duty = dataclasses.replace(CM, csma_max_mac_transmissions=requeue)
    rx = [[NONE, -52.0, NONE], [-52.0, NONE, NONE], [-70.0, NONE, NONE]]
    engine = _engine(rx, [0.0, 0.1, 0.0], duty)
    engine.enqueue(0.0, 0, 1, 40, handle=1)
    engine.enqueue(0.03, 2, -1, 40, handle=2)
    first = _fates(engine.advance(0.04))
    t0, heard = engine._nf[0, k.T0], engine._nf[2, k.T0]
    assert t0 < heard < 0.04
    fates = [f for f in first + _fates(engine.advance(3.0)) if f[0] == 1]
    trains = engine.counters()["trains"]
    assert trains["sender_stopped"] == 1
    stop = t0 + np.ceil((heard - t0) / STEP) * STEP   # the next copy is not sent
    if requeue == 0:
        assert fates == [(1, 0, round(stop, 6), 0, "channel_access_failure")]
    else:
        assert [(f[1], f[3], f[4]) for f in fates] == [(1, 1, "delivered")]
        assert fates[0][2] > stop + CM.period     # csma.c's requeue: a period at least
    tx = engine.radio_seconds()["tx"][0]
    copies = round((stop - t0) / STEP)
    assert tx >= copies * AIR and copies < round((0.1 - t0) / STEP)
