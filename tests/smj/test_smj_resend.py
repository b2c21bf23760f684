"""SMJ under a routing protocol: the network drops messages the oracle view calls
deliverable (a stale route, a broken link), and only their loss notices tell the sender.
With ``resend`` the sender holds and retries them and the answer stays exact."""
import pytest

from experiments import run

pytestmark = pytest.mark.slow


def spec(resend: bool) -> dict:
    return {
        "run": {"name": "smj_resend", "seed": 1, "duration": 30.0, "step": 0.01,
                "memory_interval": 1.0, "drain": 5.0},
        "topology": {"generator": "random_geometric", "nodes": 30, "radius": 0.35,
                     "link_cost": "distance", "delay": 0.01},
        "mobility": {"model": "random_waypoint", "speed": [0.01, 0.05], "pause": 1.0,
                     "resolution": 1.0},
        "streams": {"count": 8, "rate": 5.0, "keys": "uniform", "key_domain": 20},
        "query": {"node": 0, "predicate": "equality", "window": 3.0},
        "network": {"routing": "aodv"},
        "algorithm": {"name": "smj-h"},
        "params": {"smj-h": {"period": 1.0, "grace": 10.0, "resend": resend}},
    }


def test_resend_keeps_smj_exact_when_aodv_drops_what_the_oracle_would_deliver(tmp_path):
    without = run(spec(False), out=tmp_path).summary
    with_resend = run(spec(True), out=tmp_path)
    assert without["lost_messages"] > 0 and without["recall"] < 0.5
    s = with_resend.summary
    assert s["recall"] == 1.0 and s["false_results"] == 0
    resent = with_resend.metrics.query("metric == 'resent'").value.sum()
    assert 0 < resent <= s["lost_messages"]
