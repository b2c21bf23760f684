"""Find and remove what an emulated run left behind.

A run registers itself in :data:`~emulator.mininet.naming.STATE_ROOT` as
``<prefix>.json`` with its driver's pid and start time. A run is *stale* when that driver
is gone (or the pid now belongs to another process). Removing a stale run kills, by pid,
only the processes whose command line carries the run's prefix (its host shells, agents
and shapers — killing them releases its network namespaces, veth links and TUN devices),
deletes root-namespace links named with the prefix, and removes its state.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time

from emulator.mininet.naming import STATE_ROOT, RunNames, all_pids, process_argv, process_start


def register(names: RunNames) -> None:
    """Record that this process drives the run ``names``."""
    STATE_ROOT.mkdir(parents=True, exist_ok=True)
    if names.state_file.exists():
        raise RuntimeError(f"run prefix {names.prefix} is already registered "
                           f"({names.state_file}); pick another prefix")
    names.state_dir.mkdir(parents=True, exist_ok=True)
    record = {"prefix": names.prefix, "driver_pid": os.getpid(),
              "driver_start": process_start(os.getpid())}
    tmp = names.state_file.with_suffix(".tmp")
    tmp.write_text(json.dumps(record))
    tmp.rename(names.state_file)


def run_processes(names: RunNames) -> list[int]:
    """Pids of the processes that belong to run ``names``."""
    own = os.getpid()
    found = []
    for pid in all_pids():
        argv = process_argv(pid)
        if pid != own and argv and names.owns_process(argv):
            found.append(pid)
    return found


def root_links(names: RunNames) -> list[str]:
    """Links in the root namespace whose name starts with the run's prefix."""
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True,
                         check=True).stdout
    links = []
    for line in out.splitlines():
        name = line.split(":")[1].strip().split("@")[0]
        if name.startswith(names.prefix):
            links.append(name)
    return links


def remove_run(names: RunNames, timeout: float = 5.0) -> dict:
    """Kill the run's processes (by pid), delete its links and state; returns counts."""
    pids = run_processes(names)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(process_argv(p) is not None for p in pids):
        time.sleep(0.02)
    links = root_links(names)
    for link in links:
        subprocess.run(["ip", "link", "del", link], capture_output=True)
    shutil.rmtree(names.state_dir, ignore_errors=True)
    names.state_file.unlink(missing_ok=True)
    return {"prefix": names.prefix, "processes": len(pids), "links": len(links)}


def stale_runs() -> list[RunNames]:
    """Registered runs whose driver is no longer alive."""
    if not STATE_ROOT.is_dir():
        return []
    stale = []
    for path in sorted(STATE_ROOT.glob("m*.json")):
        try:
            record = json.loads(path.read_text())
            names = RunNames(record["prefix"])
            pid, start = int(record["driver_pid"]), record["driver_start"]
        except (ValueError, KeyError, TypeError) as exc:
            raise RuntimeError(f"{path}: unreadable run record ({exc}); expected JSON with "
                               "prefix, driver_pid, driver_start") from exc
        if process_start(pid) is None or process_start(pid) != start:
            stale.append(names)
    return stale


def remove_stale_runs() -> list[dict]:
    """Remove every stale run's leftovers; returns what was removed per run."""
    return [remove_run(names) for names in stale_runs()]
