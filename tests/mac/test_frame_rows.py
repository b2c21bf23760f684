"""The engine reuses the rows of frames done with: memory follows the frames in flight,
and the outcomes are those of a table that never reuses a row, counter for counter."""
import hashlib

import numpy as np
import pandas as pd
import pytest

from emulator import deliver
from emulator.mac.engine import MacEngine, unit_disk_rx_dbm
from emulator.mac.standards import CsmaCa802154, Dcf80211
from tests.mac.test_wiring import _line


def _busy_channel(standard, rows, seed=3):
    """Six nodes on a line (hidden terminals two apart), unicasts and broadcasts queued
    in steps, the channel advanced between them as a transport does."""
    pos = np.c_[np.arange(6.0), np.zeros(6)]
    engine = MacEngine(unit_disk_rx_dbm(pos, 1.0, 1.5), standard, seed=seed, rows=rows)
    rng = np.random.default_rng(seed)
    outcomes, released, handle = [], [], 0
    for step in range(40):
        t = max(step * 0.02, engine.now)
        for node in range(6):
            for _ in range(int(rng.integers(0, 4))):
                dst = -1 if rng.random() < 0.2 else int((node + rng.choice([-1, 1])) % 6)
                engine.enqueue(t, node, dst, int(rng.integers(20, 100)), handle)
                handle += 1
        out = engine.advance(t + 0.02)
        outcomes.append(np.c_[out.handle, out.node, out.time, out.attempts, out.reason])
        released += [(h, step) for h in engine.released()]
    c = engine.counters()
    return outcomes, c, released, len(engine._fr_i), handle


@pytest.mark.parametrize("standard", [Dcf80211(queue_limit=10), CsmaCa802154(queue_limit=10)])
def test_reused_rows_change_no_outcome(standard):
    reused, c, released, rows, frames = _busy_channel(standard, rows=8)
    never, c0, _, rows0, _ = _busy_channel(standard, rows=100_000)
    np.testing.assert_array_equal(np.concatenate(reused), np.concatenate(never))
    assert {k: np.asarray(v).tolist() if k != "drops_by_reason" else v
            for k, v in c.items()} == {k: np.asarray(v).tolist() if k != "drops_by_reason"
                                       else v for k, v in c0.items()}
    assert rows0 == 100_000 and rows < frames / 3, (rows, frames)
    # a frame is released once, and nothing more comes of it after
    handles = [h for h, _ in released]
    assert len(handles) == len(set(handles)) > frames / 2
    last = {int(h): step for step, out in enumerate(reused) for h in out[:, 0]}
    assert all(last.get(h, -1) <= step for h, step in released)


#: The run's fingerprint before rows were reused (commit e9bab26): more frames than
#: the engine's first table (1,024 rows), so rows are reused here.
BEFORE = {"802.11": ("cd13ad66ac7ca638", 659, 706, 26, 746),
          "802.15.4": ("8d0bfe62b8f00784", 20, 137, 2, 843)}


@pytest.mark.parametrize("model", sorted(BEFORE))
def test_a_routed_run_is_what_it_was_before_rows_were_reused(model):
    """AODV on a line of five, flows both ways: the frame ledger and the MAC's counters."""
    rows = [(2 * k + d, 0 if d == 0 else 4, 4 if d == 0 else 0, 0.004 * k)
            for k in range(500) for d in (0, 1)]
    ids, src, dst, at = zip(*rows)
    msgs = pd.DataFrame({"msg_id": ids, "src": src, "dst": dst, "sent_at": at,
                         "size_bytes": 1000 if model == "802.11" else 60})
    mac = {"model": "802.11", "carrier_sense_radius": 1.5} if model == "802.11" else \
        {"model": "802.15.4", "queue_limit": 30}
    out = deliver(_line(5, 1e7), msgs, medium="shared", routing="aodv", seed=1, mac=mac)
    digest = hashlib.sha256(pd.util.hash_pandas_object(out, index=True).values.tobytes())
    m = out.attrs["mac"]
    assert (digest.hexdigest()[:16], m["mac_collisions"], m["mac_retries"],
            m["mac_drops_by_reason"]["retry_limit"], int(out["lost"].sum())) == BEFORE[model]
