"""Babel routing daemons (Debian's ``babeld``) on the hosts of an emulated network.

With ``[network] routing = "babel"`` every host runs one ``babeld`` on its veths, and the
daemons, not the controller, install the routes (``ip route … proto babel``). They find
their neighbours by multicast hellos over IPv6 link-local addresses, measure each link
by the hellos that arrive (``type wireless``: link-quality estimation, no split horizon,
as on a radio) and route by Babel's own additive metric, so the spec's link ``cost``
plays no part. The :class:`~emulator.mininet.emulation.Emulation` must be built with
``routes="daemons"``: it then installs no routes, keeps IPv6 on the veths and closes a
link that goes down to the daemons' packets as well (they notice by missing hellos).

Each daemon's configuration, pid file, state file and log live in the run's state folder
(never ``/etc`` or ``/var``); a daemon is stopped by the pid it was started with. A
daemon's command line names its configuration in that folder, which is how
:mod:`~emulator.mininet.cleanup` finds the daemons of a run whose driver died.

>>> print(config("/run/x/mab12", 3, ["to1", "to4"], hello_interval=0.5), end="")
# babeld of node 3 (emulator.mininet.babel)
pid-file /run/x/mab12/babel3.pid
state-file /run/x/mab12/babel3.state
router-id 02:00:00:00:00:03
default type wireless channel interfering hello-interval 0.5
interface to1
interface to4
redistribute local ip 10.0.0.4/32 allow
redistribute local deny
"""
from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import networkx as nx

from emulator.mininet.naming import RunNames

#: Wall seconds between two hellos on every interface. babeld's default for wireless
#: interfaces is 4 s; a smoke run lasts seconds, so the daemons must notice a broken link
#: within one. Full updates follow babeld's default of four hello intervals.
HELLO_INTERVAL = 0.5
#: The UDP port Babel speaks on (RFC 8966).
BABEL_PORT = 6696
#: Wall seconds between two looks at the kernel's routes while waiting for convergence.
POLL = 0.05


def config(state_dir, node: int, interfaces, hello_interval: float = HELLO_INTERVAL,
           half_life: float | None = None) -> str:
    """The configuration file of node ``node``'s daemon.

    It announces the node's address only (every local address is announced by default)
    and keeps its files in ``state_dir``. ``half_life``: babeld's
    ``smoothing-half-life`` in seconds (None: babeld's default, 4 s; 0: no smoothing).
    The router id is the node id (a locally administered MAC-48), not a random one, so
    runs and logs read the same; ``channel interfering`` says what babeld cannot detect
    on a veth (one shared radio channel).
    """
    state = Path(state_dir)
    mac = ":".join(f"{b:02x}" for b in (0x02, 0) + tuple(int(node).to_bytes(4, "big")))
    lines = [f"# babeld of node {node} (emulator.mininet.babel)",
             f"pid-file {state / f'babel{node}.pid'}",
             f"state-file {state / f'babel{node}.state'}",
             f"router-id {mac}"]
    if half_life is not None:
        lines.append(f"smoothing-half-life {half_life:g}")
    lines.append(f"default type wireless channel interfering hello-interval {hello_interval:g}")
    lines += [f"interface {dev}" for dev in interfaces]
    lines += [f"redistribute local ip {RunNames.address(node)}/32 allow",
              "redistribute local deny"]
    return "\n".join(lines) + "\n"


def working_path(hops: dict, up, src: int, dst: int) -> list[int] | None:
    """The nodes from ``src`` to ``dst`` following each host's next hop, or None if a
    host has no route, a hop crosses a link that is not in ``up`` or the path loops.

    >>> hops = {0: {2: 1}, 1: {2: 2}}
    >>> working_path(hops, {(0, 1), (1, 2)}, 0, 2), working_path(hops, {(0, 1)}, 0, 2)
    ([0, 1, 2], None)
    """
    path = [src]
    while path[-1] != dst:
        hop = hops.get(path[-1], {}).get(dst)
        if hop is None or (path[-1], hop) not in up or hop in path:
            return None
        path.append(hop)
    return path


def reachable_pairs(nodes, up) -> list[tuple[int, int]]:
    """Ordered pairs of distinct nodes joined by links up in both directions (a Babel
    neighbour must hear and be heard).

    >>> reachable_pairs([0, 1, 2], {(0, 1), (1, 0), (1, 2)})
    [(0, 1), (1, 0)]
    """
    g = nx.Graph()
    g.add_nodes_from(nodes)
    g.add_edges_from((u, v) for u, v in up if (v, u) in up)
    return sorted((s, d) for part in nx.connected_components(g)
                  for s in part for d in part if s != d)


def unrouted(hops: dict, up, nodes) -> list[tuple[int, int]]:
    """The reachable pairs (:func:`reachable_pairs`) without a :func:`working_path`."""
    up = set(up)
    return [(s, d) for s, d in reachable_pairs(nodes, up)
            if working_path(hops, up, s, d) is None]


class BabelDaemons:
    """One ``babeld`` per host of ``em`` (an emulation built with ``routes="daemons"``).

    ``start`` starts them, ``wait_converged`` returns once every reachable pair has a
    working route, ``stop`` stops them by pid (also usable as a context manager).
    """

    def __init__(self, em, hello_interval: float = HELLO_INTERVAL,
                 half_life: float | None = None):
        if em.routes != "daemons":
            raise ValueError(f"BabelDaemons needs an Emulation built with routes='daemons' (its "
                             f"own routes would compete with the daemons'), got {em.routes!r}")
        if not hello_interval > 0:
            raise ValueError(f"hello_interval {hello_interval}: expected > 0 seconds")
        self.em = em
        self.hello_interval = float(hello_interval)
        self.half_life = half_life
        self.procs: dict[int, subprocess.Popen] = {}
        self.started_at: float | None = None
        self.converged_s: float | None = None
        self.exit_codes: dict[int, int] = {}
        self.died_early: list[int] = []

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def _path(self, node: int, suffix: str) -> Path:
        return self.em.names.state_dir / f"babel{node}.{suffix}"

    def start(self) -> None:
        """Write each host's configuration and start its daemon in the host's namespace
        (hosts without links run none: they have nothing to route)."""
        exe = shutil.which("babeld")
        if exe is None:
            raise FileNotFoundError("network.routing = 'babel': no babeld on PATH; install "
                                    "Debian's babeld (apt-get install babeld; make setup "
                                    "does as root)")
        self.started_at = time.monotonic()
        for n in self.em.nodes:
            devs = [self.em.names.link_dev(v) for v in sorted(self.em.neighbors[n])]
            if not devs:
                continue
            conf = self._path(n, "conf")
            conf.write_text(config(self.em.names.state_dir, n, devs, self.hello_interval,
                                   self.half_life))
            with open(self._path(n, "log"), "wb") as log:
                self.procs[n] = self.em.hosts[n].popen(
                    [exe, "-c", str(conf)], stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT)

    @property
    def pids(self) -> dict[int, int]:
        """``{node: pid}`` of the daemons started."""
        return {n: p.pid for n, p in self.procs.items()}

    def hops(self) -> dict[int, dict[int, int]]:
        """``{u: {v: next hop}}``: the routes the daemons have installed in every host."""
        nodes = {RunNames.address(n): n for n in self.em.nodes}
        for n in self.procs:   # ask every host at once, then read the answers
            self.em.hosts[n].sendCmd("ip -j -4 route show proto babel")
        hops: dict[int, dict[int, int]] = {}
        for n in self.procs:
            out = self.em.hosts[n].waitOutput()
            table = hops.setdefault(n, {})
            for route in json.loads(out[out.index("["):]):
                dev = route.get("dev", "")
                if route.get("dst") in nodes and dev.startswith("to") and dev[2:].isdigit():
                    table[nodes[route["dst"]]] = int(dev[2:])
        return hops

    def unrouted(self) -> list[tuple[int, int]]:
        """Reachable pairs (over the links up now) without a working route now."""
        return unrouted(self.hops(), self.em.up_links(), self.em.nodes)

    def check_alive(self) -> None:
        """Raise if a daemon has exited, with the end of its log."""
        for n, proc in self.procs.items():
            if proc.poll() is not None:
                raise RuntimeError(f"babeld of node {n} exited with {proc.returncode}: "
                                   f"{self.log_tail(n)}")

    def log_tail(self, node: int, chars: int = 400) -> str:
        path = self._path(node, "log")
        text = path.read_text(errors="replace") if path.exists() else ""
        return text[-chars:].strip() or "(empty log)"

    def wait_converged(self, timeout: float = 30.0) -> float:
        """Wait until every reachable pair has a working route; returns the wall seconds
        since :meth:`start` started the first daemon. Raises after ``timeout`` seconds
        naming the missing pairs.

        Working, not best: babeld selects by a smoothed metric, so a route may still
        move to a shorter path for a few seconds after this returns (data keeps flowing
        on the working one meanwhile)."""
        deadline = time.monotonic() + timeout
        while True:
            self.check_alive()
            missing = self.unrouted()
            if not missing:
                self.converged_s = time.monotonic() - self.started_at
                return self.converged_s
            if time.monotonic() > deadline:
                raise RuntimeError(f"network.routing = 'babel': no working route for "
                                   f"{len(missing)} pairs {missing[:6]} after {timeout:g} s "
                                   f"(hello interval {self.hello_interval:g} s)")
            time.sleep(POLL)

    def stop(self, timeout: float = 3.0) -> dict[int, int]:
        """Stop the daemons by pid (SIGTERM: each withdraws its routes; SIGKILL for one
        still alive after ``timeout``); returns ``{node: exit code}``. Safe to call twice."""
        self.died_early = sorted(set(self.died_early) | {
            n for n, p in self.procs.items() if p.poll() is not None and n not in self.exit_codes})
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        deadline = time.monotonic() + timeout
        for n, proc in self.procs.items():
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            self.exit_codes[n] = proc.returncode
        return dict(self.exit_codes)

    def info(self) -> dict:
        """What a run records about its daemons (``meta.json``'s ``backend_info.babel``)."""
        return {"daemons": len(self.procs), "hello_interval_s": self.hello_interval,
                "smoothing_half_life_s": self.half_life, "converged_s": self.converged_s,
                "pids": self.pids, "exit_codes": dict(self.exit_codes),
                "died_early": list(self.died_early)}
