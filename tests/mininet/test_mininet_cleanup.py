"""Robustness: nothing left after a run, a killed driver's leftovers removed by the next
start (and nothing else), an agent that does not start fails the run clearly."""
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from emulator import mininet
from emulator.mininet import cleanup
from emulator.mininet.control import AgentError
from emulator.mininet.emulation import Emulation
from emulator.mininet.loadgen import Flood, Sink
from emulator.mininet.naming import RunNames, all_pids, process_argv
from emulator.mininet.options import MininetOptions
from spark_nodes.runtimes.inproc import InprocRuntime
from experiments.planning import make_plan
from topologies import line

pytestmark = pytest.mark.mininet


def namespaces() -> set[str]:
    found = set()
    for pid in all_pids():
        try:
            found.add(os.readlink(f"/proc/{pid}/ns/net"))
        except OSError:
            pass
    return found


def flood_plan(duration=0.5):
    return make_plan(topology=line(3, defaults={"delay": 0.005}), name="flood",
                     duration=duration, step=0.005, backend="mininet", memory_interval=0.25,
                     algorithm="flood", spec={"run": {"drain": None}})


def test_clean_shutdown_leaves_no_namespaces_links_or_processes():
    before = namespaces()
    # 4 wall seconds per time unit: the run has no drain, so a loaded machine's agents
    # must deliver within the 0.5 units of the run itself
    out = mininet.run(flood_plan(), {0: Flood(2, 50, burst=5, interval=0.02), 2: Sink()},
                      {}, InprocRuntime(), options=MininetOptions(time_scale=4.0))
    received = out.metrics[out.metrics["metric"] == "received"]
    assert sorted(received["value"]) == list(range(50))
    assert out.ledger["hop_u"].tolist().count(1) == 50          # every message 0 -> 1 -> 2
    names = RunNames(out.info["run_prefix"])
    assert cleanup.run_processes(names) == []
    assert cleanup.root_links(names) == []
    assert not names.state_file.exists() and not names.state_dir.exists()
    assert namespaces() - before == set()


DEAD_DRIVER = """
import subprocess, sys, time
from emulator.mininet.emulation import Emulation, LinkSetting, next_hops
em = Emulation(range(2), [(0, 1)], time_scale=1.0, seed=1).start()
em.apply({(0, 1): LinkSetting(), (1, 0): LinkSetting()}, {0: {1: 1}, 1: {0: 0}})
server = em.hosts[1].popen([sys.executable, "-m", "emulator.mininet.probe", "--run",
                            em.names.prefix, "--addr", em.names.address(1), "server"],
                           stdout=subprocess.PIPE, text=True)
server.stdout.readline()
print(em.names.prefix, server.pid, flush=True)
time.sleep(300)
"""


def test_next_start_removes_only_what_a_killed_driver_left():
    dead = subprocess.Popen([sys.executable, "-c", DEAD_DRIVER], stdout=subprocess.PIPE,
                            text=True)
    prefix, server = dead.stdout.readline().split()
    server = int(server)
    bystander = subprocess.Popen(["sleep", "300"])
    os.kill(dead.pid, signal.SIGKILL)
    dead.wait()
    names = RunNames(prefix)
    # The probe server keeps running (and keeps its host's namespace alive).
    assert process_argv(server) is not None and names.state_file.exists()
    live = Emulation(range(2), [(0, 1)], time_scale=1.0, seed=1)
    live.start()                                      # the next start cleans up
    try:
        assert live.timings["stale_removed"] >= 1
        assert process_argv(server) is None
        assert cleanup.run_processes(names) == []
        assert not names.state_file.exists()
        # Only the root namespace and the live run's hosts remain (inode numbers are
        # reused, so the dead one's number may come back for a live host).
        live_ns = {os.readlink(f"/proc/{h.pid}/ns/net") for h in live.hosts.values()}
        assert namespaces() == {os.readlink("/proc/self/ns/net")} | live_ns
        assert bystander.poll() is None               # not ours: untouched
        # The live run is not stale: cleaning again leaves it alone.
        procs = cleanup.run_processes(live.names)         # host shells and shapers
        assert sum(live.names.owns_shell(process_argv(p)) for p in procs) == 2
        cleanup.remove_stale_runs()
        assert all(process_argv(p) is not None for p in procs)
    finally:
        live.stop()
        bystander.kill()
        bystander.wait()


def test_an_agent_that_does_not_start_in_time_fails_the_run_clearly():
    with pytest.raises(AgentError, match=r"agents of nodes \[0, 2\] did not start within") \
            as err:
        mininet.run(flood_plan(), {0: Flood(2, 5), 2: Sink()}, {}, InprocRuntime(),
                        options=MininetOptions(agent_timeout=0.001))
    prefix = re.match(r"run (m[a-z0-9]{4}):", str(err.value)).group(1)
    names = RunNames(prefix)
    time.sleep(0.2)
    assert cleanup.run_processes(names) == []
    assert not names.state_file.exists()


def test_a_program_that_raises_in_an_agent_fails_the_run_with_its_traceback():
    # Flood takes no messages: node 2's Flood raises when node 0's first message arrives.
    with pytest.raises(AgentError, match=r"agent of node 2 failed:(.|\n)*got a message "
                                         r"from 0") as err:
        mininet.run(flood_plan(), {0: Flood(2, 3), 2: Flood(0, 0)}, {}, InprocRuntime(),
                        options=MininetOptions(time_scale=1.0))
    names = RunNames(re.match(r"run (m[a-z0-9]{4}):", str(err.value)).group(1))
    assert cleanup.run_processes(names) == []
