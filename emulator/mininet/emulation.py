"""The emulated network: Mininet hosts, host-to-host links, forwarding, shaping, routes.

One Mininet host per node, one veth link per edge that exists in any epoch (no switches,
no controller). Every interface of node ``n``'s host carries the node address
(:meth:`RunNames.address`, /32) and the hosts forward IP. Routes are host routes towards
each node address through the next hop of the least-cost path; :meth:`Emulation.apply`
replaces them (and the link settings) live when the network changes. With
``routes="daemons"`` the emulation installs no routes: a routing daemon on every host does
(:mod:`emulator.mininet.babel`), over IPv6 link-local addresses the veths then keep.

Link shaping: bandwidth with Mininet's ``TCLink`` (htb); delay, jitter and loss with netem
when the kernel has it, otherwise with the TUN shapers of :mod:`emulator.mininet.shaper`.
Which one is used is detected at start (``Emulation.shaping``) and never ignored: a
setting the chosen mechanism cannot apply raises.

Settings arrive in virtual units (delay/jitter in time units, bandwidth in bytes per time
unit) and are scaled with ``time_scale`` (wall seconds per time unit).

Where the TUN shapers sit depends on who routes. The controller's routes send traffic for
a neighbour into the sender's ``dl<neighbour>`` device. A daemon's routes point at the veth
itself, so instead every veth's ingress redirects IPv4 into the *receiver's* shaper
(``tc`` clsact + mirred; the kernel then routes what the shaper writes back), and a link
that is down also redirects everything else there — the daemons' own packets — to be
dropped, so a daemon notices a broken link only by missing hellos, as on a radio.
"""
from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from emulator.mininet import cleanup
from emulator.mininet.naming import RunNames, new_prefix

#: Mininet's TCLink ignores (with only a printed error) rates outside this range.
_MAX_MBIT = 1000.0
_TABLE_BASE = 1000
#: ``tc`` filter preferences on a veth's ingress with ``routes="daemons"`` and TUN shaping:
#: a link that is down sends every frame into the shaper (which drops it) before the
#: filter that sends IPv4 there to be delayed.
_PREF_DOWN, _PREF_SHAPE = 5, 10


@dataclass(frozen=True)
class LinkSetting:
    """One link's settings in one direction, in wall units (seconds, Mbit/s)."""

    delay: float = 0.0
    jitter: float = 0.0
    loss: float = 0.0
    mbit: float | None = None   # None: unlimited

    @classmethod
    def from_attrs(cls, attrs: dict, time_scale: float) -> "LinkSetting":
        """Scale an edge's virtual attributes (delay, jitter, bandwidth, loss).

        >>> LinkSetting.from_attrs({"delay": 0.5, "bandwidth": 1000.0}, 0.02)
        LinkSetting(delay=0.01, jitter=0.0, loss=0.0, mbit=0.4)
        """
        bw = attrs.get("bandwidth")
        mbit = None
        if bw is not None and math.isfinite(bw):
            if bw <= 0:
                raise ValueError(f"link bandwidth {bw}: expected > 0 bytes per time unit")
            mbit = bw / time_scale * 8 / 1e6
            if mbit > _MAX_MBIT:
                raise ValueError(
                    f"link bandwidth {bw} bytes/unit at time_scale {time_scale} is "
                    f"{mbit:.1f} Mbit/s; TCLink shapes at most {_MAX_MBIT:g} Mbit/s "
                    "(use bandwidth = inf for unlimited, or a larger time_scale)")
        loss = float(attrs.get("loss", 0.0) or 0.0)
        if not 0.0 <= loss <= 1.0:
            raise ValueError(f"link loss {loss}: expected a probability in [0, 1]")
        return cls(delay=float(attrs.get("delay", 0.0) or 0.0) * time_scale,
                   jitter=float(attrs.get("jitter", 0.0) or 0.0) * time_scale,
                   loss=loss, mbit=mbit)

    @property
    def needs_delay(self) -> bool:
        return self.delay > 0 or self.jitter > 0 or self.loss > 0


def next_hops(paths) -> dict[int, dict[int, int | None]]:
    """``{u: {v: first hop of the path u -> v, or None if unreachable}}``.

    ``paths`` maps ``(u, v)`` to the node list of the path (empty if unreachable).

    >>> next_hops({(1, 3): [1, 2, 3], (3, 1): []})
    {1: {3: 2}, 3: {1: None}}
    """
    hops: dict[int, dict[int, int | None]] = {}
    for (u, v), path in paths.items():
        hops.setdefault(u, {})[v] = path[1] if len(path) > 1 else None
    return hops


class Emulation:
    """A live emulated network of ``nodes`` and ``edges`` (every link that may ever be up).

    Parameters
    ----------
    nodes, edges : the node ids and the undirected links to build.
    time_scale : wall seconds per virtual time unit.
    seed : seeds the shapers' jitter and loss draws (node n's: ``seed * 1_000_003 + n``).
    shaping : ``"auto"`` (netem if the kernel has it, else TUN), ``"netem"`` or ``"tun"``.
    prefix : the run prefix (a fresh one by default).
    routes : ``"controller"`` (:meth:`apply` installs the next hops it is given) or
        ``"daemons"`` (routing daemons on the hosts install them; ``apply`` sets links only).
    """

    def __init__(self, nodes, edges, *, time_scale: float, seed: int,
                 shaping: str = "auto", prefix: str | None = None,
                 routes: str = "controller"):
        if shaping not in ("auto", "netem", "tun"):
            raise ValueError(f"shaping {shaping!r}: expected 'auto', 'netem' or 'tun'")
        if routes not in ("controller", "daemons"):
            raise ValueError(f"routes {routes!r}: expected 'controller' or 'daemons'")
        if not time_scale > 0:
            raise ValueError(f"time_scale {time_scale}: expected > 0 wall seconds per unit")
        self.nodes = sorted(int(n) for n in nodes)
        self.edges = sorted({tuple(sorted((int(u), int(v)))) for u, v in edges})
        self.neighbors: dict[int, list[int]] = {n: [] for n in self.nodes}
        for u, v in self.edges:
            self.neighbors[u].append(v)
            self.neighbors[v].append(u)
        self.time_scale = float(time_scale)
        self.seed = int(seed)
        self.requested_shaping = shaping
        self.routes = routes
        self.shaping: str | None = None
        self.netem_probe: str | None = None   # what tc said when netem was tried
        self.names = RunNames(prefix or new_prefix())
        self.net = None
        self.hosts: dict[int, object] = {}
        self._shapers: dict[int, subprocess.Popen] = {}
        self._settings: dict[tuple[int, int], LinkSetting] = {}
        self._routes: dict[int, dict[int, int | None]] = {}
        self._blocked: set[tuple[int, int]] = set()   # directions dropping all frames
        self.gateway: tuple[int, str] | None = None   # (node, root-side address)
        self.timings: dict[str, float] = {}

    # ------------------------------------------------------------------ start / stop
    def start(self) -> "Emulation":
        """Remove stale runs, build hosts and links, start shapers, configure hosts."""
        from mininet.link import TCLink
        from mininet.log import setLogLevel
        from mininet.net import Mininet

        t0 = time.monotonic()
        self.timings["stale_removed"] = len(cleanup.remove_stale_runs())
        cleanup.register(self.names)
        try:
            setLogLevel("error")
            self.net = Mininet(topo=None, build=False, controller=None, link=TCLink,
                               autoSetMacs=False, autoStaticArp=False, waitConnected=False)
            for n in self.nodes:
                self.hosts[n] = self.net.addHost(self.names.host(n), ip=None)
            for u, v in self.edges:
                self.net.addLink(self.hosts[u], self.hosts[v],
                                 intfName1=self.names.link_dev(v),
                                 intfName2=self.names.link_dev(u))
            self.net.build()
            self.timings["build_s"] = time.monotonic() - t0
            self.shaping = self._choose_shaping()
            if self.shaping == "tun":
                self._start_shapers()
            self._run_scripts({n: self._host_setup(n) for n in self.nodes})
        except BaseException:
            self.stop()
            raise
        self.timings["start_s"] = time.monotonic() - t0
        return self

    def stop(self) -> None:
        """Stop shapers and hosts and remove the run's state; safe to call twice."""
        t0 = time.monotonic()
        for proc in self._shapers.values():
            if proc.poll() is None:
                proc.stdin.close()
        for proc in self._shapers.values():
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._shapers.clear()
        if self.net is not None:
            from mininet.log import setLogLevel
            setLogLevel("error")
            self.net.stop()
            self.net = None
        # Anything still marked with our prefix (e.g. agents that ignored a stop) goes.
        cleanup.remove_run(self.names)
        self.timings["stop_s"] = time.monotonic() - t0

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # ------------------------------------------------------------------ shaping
    def _choose_shaping(self) -> str:
        host = self.hosts[self.nodes[0]]
        out = host.cmd("tc qdisc add dev lo root netem delay 1ms 2>&1; echo rc=$?")
        has_netem = out.strip().endswith("rc=0")
        if has_netem:
            host.cmd("tc qdisc del dev lo root")
        self.netem_probe = out.strip()
        if self.requested_shaping == "netem" and not has_netem:
            raise RuntimeError(f"shaping='netem' but this kernel has no netem: {out.strip()}")
        if self.requested_shaping == "auto":
            return "netem" if has_netem else "tun"
        return self.requested_shaping

    def _start_shapers(self) -> None:
        for n in self.nodes:
            devs = [a for v in self.neighbors[n] for a in ("--dev", self.names.tun_dev(v))]
            self._shapers[n] = self.hosts[n].popen(
                [sys.executable, "-m", "emulator.mininet.shaper", "--run", self.names.prefix,
                 "--node", str(n), "--seed", str(self.seed * 1_000_003 + n), *devs],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True)
        for n, proc in self._shapers.items():
            line = proc.stdout.readline()
            if line.strip() != "ready":
                raise RuntimeError(f"shaper of node {n} did not start: {line!r} "
                                   f"{proc.stderr.read() if proc.poll() is not None else ''}")

    def _host_setup(self, n: int) -> list[str]:
        """Shell lines that configure host ``n`` (few processes: one sysctl, one ip)."""
        addr = self.names.address(n)
        daemons = self.routes == "daemons"
        batch = [f"addr add {addr}/32 dev lo", "link set lo up"]
        procs = []
        ipv6 = []
        for v in self.neighbors[n]:
            dev = self.names.link_dev(v)
            batch += [f"addr flush dev {dev}", f"addr add {addr}/32 dev {dev}",
                      f"link set {dev} up"]
            if daemons:
                # Routing daemons speak over IPv6 link-local addresses (Babel does); no
                # duplicate detection, so they can send as soon as the link is up.
                ipv6 += [f"net.ipv6.conf.{dev}.accept_dad=0",
                         f"net.ipv6.conf.{dev}.disable_ipv6=0"]
            if self.shaping == "tun":
                tun = self.names.tun_dev(v)
                batch.append(f"link set {tun} up")
                if daemons:
                    # What arrives from v goes through this host's shaper for v, then
                    # the kernel routes it by the daemon's routes (module docstring).
                    procs += [f"tc qdisc add dev {dev} clsact",
                              f"tc filter add dev {dev} ingress protocol ip pref "
                              f"{_PREF_SHAPE} u32 match u32 0 0 action mirred egress "
                              f"redirect dev {tun}"]
                else:
                    table = _TABLE_BASE + v
                    batch += [f"rule add iif {tun} lookup {table}",
                              f"route add default via {self.names.address(v)} dev {dev} "
                              f"onlink table {table}"]
                # A packet coming back out of the shaper has a local source when this
                # host sent it: accept it on the TUN device.
                procs.append(f"echo 1 > /proc/sys/net/ipv4/conf/{tun}/accept_local")
        batch_file = self.names.state_dir / f"{self.names.host(n)}.setup.ip"
        batch_file.write_text("\n".join(batch) + "\n")
        return ["sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.disable_ipv6=1 "
                "net.ipv6.conf.default.disable_ipv6=1",
                f"ip -force -batch {batch_file}",
                # After the batch: its address flush would remove the link-local addresses.
                *([f"sysctl -qw {' '.join(ipv6)}"] if ipv6 else []), *procs,
                # Asymmetric routes and packets re-entering from a TUN must not be filtered.
                "for f in /proc/sys/net/ipv4/conf/*/rp_filter; do echo 0 > $f; done",
                "for f in /proc/sys/net/ipv4/conf/*/send_redirects; do echo 0 > $f; done"]

    def _run_scripts(self, scripts: dict[int, list[str]], batch: bool = False) -> None:
        """Run shell (or ``ip -batch``) lines in several hosts at once; raise with the
        output of any that failed."""
        cmds = {}
        for n, lines in scripts.items():
            path = self.names.state_dir / f"{self.names.host(n)}.{'ip' if batch else 'sh'}"
            path.write_text("\n".join(lines) + "\n")
            cmds[n] = f"ip -force -batch {path}" if batch else f"sh -e {path}"
            self.hosts[n].sendCmd(f"{cmds[n]} 2>&1; echo rc=$?")
        failed = []
        for n in scripts:
            out = self.hosts[n].waitOutput().strip()
            if not out.endswith("rc=0"):
                failed.append(f"node {n} ({cmds[n]}): {out}")
        if failed:
            raise RuntimeError("configuring hosts failed:\n" + "\n".join(failed))

    # ------------------------------------------------------------------ live changes
    def apply(self, settings: dict[tuple[int, int], LinkSetting],
              hops: dict[int, dict[int, int | None]]) -> None:
        """Set the links (``settings[(u, v)]``: direction u -> v; missing: link down) and
        the routes (``hops[u][v]``: next hop or None; ignored with ``routes="daemons"``)."""
        for (u, v) in settings:
            if tuple(sorted((u, v))) not in self.edges:
                raise ValueError(f"link {u}-{v} was not built; built links: {self.edges}")
        daemons = self.routes == "daemons"
        for u, v in self.edges:
            for a, b in ((u, v), (v, u)):
                new = settings.get((a, b))
                # Without routes of its own a link that starts down must be closed too, or
                # the daemons would route over it.
                if new != self._settings.get((a, b)) or (daemons and (a, b) not in self._settings):
                    self._set_link(a, b, new)
        if daemons:
            return
        changed = {u: hops.get(u, {}) for u in self.nodes
                   if hops.get(u, {}) != self._routes.get(u)}
        self._run_scripts({u: self._route_lines(u, t) for u, t in changed.items()}, batch=True)
        for u, table in changed.items():
            self._routes[u] = dict(table)

    def _set_link(self, u: int, v: int, new: LinkSetting | None) -> None:
        old = self._settings.get((u, v))
        intf = self.hosts[u].intf(self.names.link_dev(v))
        down = new is None
        setting = LinkSetting(loss=1.0) if down else new
        if self.shaping == "tun":
            mbit_changed = (old.mbit if old else None) != setting.mbit
            if mbit_changed:
                self._config_intf(intf, bw=setting.mbit)
            # The controller's routes feed the sender's shaper, a daemon's the receiver's.
            host, dev = (v, u) if self.routes == "daemons" else (u, v)
            proc = self._shapers[host]
            proc.stdin.write(json.dumps({"dev": self.names.tun_dev(dev), "delay": setting.delay,
                                         "jitter": setting.jitter, "loss": setting.loss})
                             + "\n")
            proc.stdin.flush()
            if self.routes == "daemons" and down != ((u, v) in self._blocked):
                self._block(u, v, down)
        else:
            self._config_intf(intf, bw=setting.mbit,
                              delay=f"{setting.delay * 1000:.3f}ms" if setting.delay else None,
                              jitter=f"{setting.jitter * 1000:.3f}ms" if setting.jitter else None,
                              loss=setting.loss * 100 if setting.loss else None)
        self._settings[(u, v)] = new

    def _block(self, u: int, v: int, down: bool) -> None:
        """Send every frame from ``u`` that reaches ``v`` into ``v``'s shaper for ``u``
        (whose loss is 1 while the link is down), or stop doing so."""
        dev, tun = self.names.link_dev(u), self.names.tun_dev(u)
        if down:
            cmd = (f"tc filter add dev {dev} ingress protocol all pref {_PREF_DOWN} u32 "
                   f"match u32 0 0 action mirred egress redirect dev {tun}")
        else:
            cmd = f"tc filter del dev {dev} ingress pref {_PREF_DOWN}"
        out = self.hosts[v].cmd(f"{cmd} 2>&1; echo rc=$?").strip()
        if not out.endswith("rc=0"):
            raise RuntimeError(f"link {u}-{v} {'down' if down else 'up'}: {cmd}: {out}")
        if down:
            self._blocked.add((u, v))
        else:
            self._blocked.discard((u, v))

    @staticmethod
    def _config_intf(intf, **params) -> None:
        from mininet.log import setLogLevel
        setLogLevel("error")
        if all(p is None for p in params.values()):
            # TCIntf.config with nothing set leaves an old qdisc in place: remove it.
            intf.tc("%s qdisc del dev %s root")
            return
        result = intf.config(**params)
        # TCIntf.config only prints tc's complaints; any output means it did not apply.
        failed = [out for out in (result or {}).get("tcoutputs", []) if out.strip()]
        if failed:
            raise RuntimeError(f"tc failed on {intf.name} with {params}: {failed}")

    # ------------------------------------------------------------------ root gateway
    def attach_root(self, node: int, address: str = "172.31.254.1") -> str:
        """Connect the root namespace to host ``node`` by an unshaped veth, so processes
        here (a Spark driver) reach every node address over the emulated links.

        The root side is ``<prefix>gw`` with ``address``; every host routes ``address``
        like it routes ``node`` (and follows route changes). Returns ``address``.
        """
        if self.routes != "controller":
            raise RuntimeError("attach_root: the root namespace is routed like the hosts by "
                               "the controller; with routes='daemons' it has no routes")
        if self.gateway is not None:
            raise RuntimeError(f"the root namespace is attached already (node "
                               f"{self.gateway[0]})")
        root_dev = f"{self.names.prefix}gw"
        host = self.hosts[node]
        subprocess.run(["ip", "link", "add", root_dev, "type", "veth", "peer", "name",
                        "toroot", "netns", str(host.pid)], check=True, capture_output=True)
        batch = [f"addr add {address}/32 dev {root_dev}", f"link set {root_dev} up"]
        batch += [f"route replace {self.names.address(n)}/32 via {self.names.address(node)} "
                  f"dev {root_dev} onlink src {address}" for n in self.nodes]
        path = self.names.state_dir / "root.ip"
        path.write_text("\n".join(batch) + "\n")
        subprocess.run(["ip", "-force", "-batch", str(path)], check=True, capture_output=True)
        Path(f"/proc/sys/net/ipv4/conf/{root_dev}/rp_filter").write_text("0\n")
        self.gateway = (node, address)
        self._run_scripts({node: ["ip addr add {a}/32 dev toroot".format(
                                      a=self.names.address(node)),
                                  "ip link set toroot up",
                                  "echo 0 > /proc/sys/net/ipv4/conf/toroot/rp_filter"]})
        self._run_scripts({u: self._route_lines(u, self._routes.get(u, {}))
                           for u in self.nodes}, batch=True)
        return address

    def _route_lines(self, u: int, table: dict[int, int | None]) -> list[str]:
        src = self.names.address(u)
        lines = []
        if self.gateway is not None:
            # The root namespace sits behind the gateway node: route to it like to that node.
            gw_node, gw_addr = self.gateway
            if u == gw_node:
                lines.append(f"route replace {gw_addr}/32 dev toroot src {src}")
            else:
                lines.append(self._route_line(src, gw_addr, table.get(gw_node)))
        for v in sorted(table):
            lines.append(self._route_line(src, self.names.address(v), table[v]))
        return lines

    def _route_line(self, src: str, dst: str, hop: int | None) -> str:
        """One ``ip -batch`` route towards ``dst`` through neighbour ``hop`` (None: none)."""
        if hop is None:
            return f"route replace unreachable {dst}/32"
        if self.shaping == "tun":
            return f"route replace {dst}/32 dev {self.names.tun_dev(hop)} src {src}"
        return (f"route replace {dst}/32 via {self.names.address(hop)} "
                f"dev {self.names.link_dev(hop)} onlink src {src}")

    # ------------------------------------------------------------------ measurements
    def up_links(self) -> list[tuple[int, int]]:
        """The directions ``(u, v)`` that are up now (as last set by :meth:`apply`)."""
        return sorted(link for link, s in self._settings.items() if s is not None)

    def tx_bytes(self) -> dict[tuple[int, int], int]:
        """Bytes each host has sent on each veth: ``{(u, v): bytes}`` (kernel counters)."""
        return {link: count for link, (count, _) in self.tx_counters().items()}

    def tx_counters(self) -> dict[tuple[int, int], tuple[int, int]]:
        """``{(u, v): (bytes, packets)}`` each host has sent on each veth (kernel counters)."""
        counts = {}
        for u in self.nodes:
            out = self.hosts[u].cmd("ip -j -s link show")
            for link in json.loads(out[out.index("["):]):
                name = link["ifname"]
                if name.startswith("to") and name[2:].isdigit():
                    tx = link["stats64"]["tx"]
                    counts[(u, int(name[2:]))] = (int(tx["bytes"]), int(tx["packets"]))
        return counts
