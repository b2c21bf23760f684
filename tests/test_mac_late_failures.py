"""A frame its receiver got whose sender gives up later (its ACKs lost, then the channel
found busy on a retry) is delivered, not lost: the packet went on, and its source is not
told to send it again. Found by SMJ's synopsis centre receiving a synopsis twice on
sensor_lifetime.toml's field under ContikiMAC (docs/NOTES.md, "6LoWPAN fragments")."""
import json
from pathlib import Path

from experiments.runner import run
from experiments.spec import load

SPEC = Path(__file__).parent.parent / "experiments" / "specs" / "sensor_lifetime.toml"


def test_a_delivered_frame_whose_retry_finds_the_channel_busy_is_not_a_loss(tmp_path):
    spec, _ = load(SPEC)
    spec.pop("sweep")
    for section in ("params.smj-e", "params.lottery", "params.ctr"):
        spec["params"].pop(section.split(".")[1])
    spec["network"]["routing"] = "oracle"
    spec.pop("routing")
    spec["energy"]["model"] = "radio_states"
    spec["mac"] = {"model": "802.15.4", "duty_cycle": "contikimac", "detect_dbm": -95.0,
                   "cs_threshold_dbm": -95.0, "noise_dbm": -100.0, "lifetime": 60.0,
                   "csma_max_mac_transmissions": 3}
    out = run(spec, out=tmp_path)   # raised "duplicate synopsis of site 0 for period 15"
    mac = json.loads(out.summary["mac_drops_by_reason"])
    assert mac["channel_access_failure"] > 0 and mac["retry_limit"] > 0
    lost = out.ledger[out.ledger.lost]
    arrived = out.ledger[~out.ledger.lost]
    # every data hop is either delivered or lost, never both
    both = set(zip(lost.msg_id, lost.hop_u, lost.hop_v)) & \
        set(zip(arrived.msg_id, arrived.hop_u, arrived.hop_v))
    assert not {key for key in both if key[0] >= 0}
