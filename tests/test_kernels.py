"""``emulator.kernels.ready`` makes ready every compiled kernel a run calls, so that a
benchmark's timed run neither compiles nor loads one: checked in a fresh process (in
this one, other tests have loaded them already)."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_PROLOGUE = """
import json, sys
import numpy as np, pandas as pd
from numba.core.dispatcher import Dispatcher
from benchmarks.bench_scale import mobile_network
from emulator import deliver

def signatures():
    return {f"{name}.{key}": len(f.signatures)
            for name, module in list(sys.modules.items())
            if name.startswith("emulator") and module is not None
            for key, f in vars(module).items() if isinstance(f, Dispatcher)}

def messages(n, count):
    rng = np.random.default_rng(1)
    src = rng.integers(n, size=count)
    return pd.DataFrame({"msg_id": np.arange(count), "src": src,
                         "dst": (src + rng.integers(1, n, size=count)) % n,
                         "sent_at": np.sort(rng.uniform(0, 10.0, count)), "size_bytes": 56})
"""

_SCRIPT = _PROLOGUE + """
from emulator.kernels import ready

routings, media = ["oracle", "aodv", "olsr", "babel"], ["links", "shared"]
ready(routings, media)
before = signatures()
topo, dynamics = mobile_network(40, 10.0, 3)
msgs = messages(40, 400)
sent = {}
for medium in media:
    for routing in routings:
        out = deliver(topo.graph, msgs, medium=medium, seed=2, dynamics=dynamics,
                      routing=routing)
        sent[f"{routing} {medium}"] = out.attrs.get("routing", {}).get("control_sent", {})
after = signatures()
print(json.dumps({"new": sorted(k for k in after if after[k] > before.get(k, 0)),
                  "sent": sent}))
"""


def test_a_routed_run_after_ready_makes_no_kernel_ready_itself():
    out = subprocess.run([sys.executable, "-c", _SCRIPT], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["new"] == []
    # the runs took the paths that matter: AODV's RERRs and OLSR's TCs were heard
    assert found["sent"]["aodv links"].get("RERR", 0) > 0
    assert found["sent"]["aodv shared"].get("RERR", 0) > 0
    assert found["sent"]["olsr links"].get("TC", 0) > 0


_MAC_SCRIPT = _PROLOGUE + """
import io, contextlib
from emulator.kernels import MACS, main

with contextlib.redirect_stdout(io.StringIO()) as said:
    main(["oracle", "aodv", "--mac"])
before = signatures()
topo, dynamics = mobile_network(30, 10.0, 3)
msgs = messages(30, 200)
attempts = {}
for mac in MACS:
    for routing in ("oracle", "aodv"):
        out = deliver(topo.graph, msgs, medium="shared", seed=2, dynamics=dynamics,
                      routing=routing, mac=mac)
        attempts[f"{routing} {mac}"] = int(out.attrs["mac"]["mac_retries"])
after = signatures()
print(json.dumps({"said": said.getvalue(), "attempts": attempts,
                  "new": sorted(k for k in after if after[k] > before.get(k, 0))}))
"""


def test_the_command_makes_the_macs_kernels_ready_for_a_mobile_run():
    """``python -m emulator.kernels ... --mac`` (what ``make test`` runs before the
    tests) leaves nothing for a MAC run over a moving network to compile."""
    out = subprocess.run([sys.executable, "-c", _MAC_SCRIPT], cwd=ROOT,
                         capture_output=True, text=True, check=True)
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["said"].startswith("compiled kernels ready in ")
    assert found["new"] == []
    assert sum(found["attempts"].values()) > 0   # frames were retried: the MAC ran
