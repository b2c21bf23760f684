"""A node agent: one process per Mininet host running that node's program in wall-clock time.

The agent connects to the driver's Unix socket, receives its setup (the pickled program,
the tuples its sources produce, the run's constants and the routing view of every epoch
of the run — the same views the driver installs as kernel routes at those instants, so
``ctx.net`` at virtual time t is the view of the epoch in force at t, as on the simpy
backend, however long the kernel update takes), listens
on its node address, and reports ``ready``. After ``go`` (a ``time.monotonic`` instant
shared by all agents, since the clock is the same in every namespace) virtual time is
``(monotonic() - t0) / time_scale``. Events run in that time: ``start`` at 0, each tuple at
its ``entered_at``, timers the program set (those due by the end of the run), ``finish``
at the run's duration, and every message delivered by the network at the virtual time it
arrived. Each event goes through :func:`spark_nodes.program.run_node_step` — the same
operator code as the simpy backend — and the messages it sends go out over TCP, one
persistent connection per destination, in order ``(sent_at, local id)``.

The ledger is written here, on the sending side: one row per hop of the least-cost path
in the view in force at ``sent_at``, all stamped with ``sent_at`` (the hop times inside the kernel
are not observable from the application). A message to an unreachable node is one lost
row and is not sent. Message ids are ``src * 1_000_000_000 + local id``.

Agents are forked from one *zygote* process the driver starts in the root namespace
(``python -m emulator.mininet.agent --run PREFIX --ctl SOCKET --state-dir DIR``); each
child enters its host's network namespace (``setns``) before it opens a socket.
"""
from __future__ import annotations

import argparse
import bisect
import heapq
import os
import pickle
import queue
import socket
import sys
import threading
import time
import traceback

from emulator.events import DELIVER, FINISH, START, TIMER, TUPLE, Event
from emulator.messages import Message, wire_bytes
from emulator.mininet.protocol import encode, recv_frame, send_frame

# Memory samples see the state before the events of their instant, as on the simpy backend.
_RANK = {"sample": -1, START: 0, DELIVER: 1, TUPLE: 2, TIMER: 3, FINISH: 4}
MSG_ID_BASE = 1_000_000_000


class _Peer:
    """A persistent TCP connection to one destination agent, fed from a queue."""

    def __init__(self, addr: tuple[str, int], stopping: threading.Event):
        self.addr = addr
        self.queue: queue.Queue = queue.Queue()
        self._stopping = stopping
        threading.Thread(target=self._run, daemon=True).start()

    def _connect(self) -> socket.socket | None:
        delay = 0.01
        while not self._stopping.is_set():
            try:
                sock = socket.create_connection(self.addr, timeout=5.0)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.settimeout(None)
                return sock
            except OSError:
                # No route yet (links change) or the peer is busy: try again shortly.
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
        return None

    def _run(self) -> None:
        sock = None
        while True:
            frame = self.queue.get()
            while not self._stopping.is_set():
                if sock is None:
                    sock = self._connect()
                    if sock is None:
                        return
                try:
                    sock.sendall(frame)
                    break
                except OSError:
                    # Only possible if the peer went away mid-run; resend on a new connection.
                    sock.close()
                    sock = None


class Agent:
    """Runs one node's program; see the module docstring."""

    def __init__(self, node: int, ctl: socket.socket, setup: dict):
        self.node = node
        self.ctl = ctl
        self.program = pickle.loads(setup["program"])
        self.seed = setup["seed"]
        self.algorithm = setup["algorithm"]
        self.scale = setup["time_scale"]
        self.duration = setup["duration"]
        self.interval = setup["memory_interval"]
        self.addresses = setup["addresses"]
        self.port = setup["port"]
        self.bytes_per_unit = setup["bytes_per_unit"]
        self.header_bytes = setup["header_bytes"]
        self.views = pickle.loads(setup["views"])
        self.epochs = [v.epoch_start for v in self.views]
        self.tuples = setup["tuples"]
        self.inbox: queue.Queue = queue.Queue()
        self.stopping = threading.Event()
        self.peers: dict[int, _Peer] = {}
        self.agenda: list = []
        self.order = 0
        self.rng_state = None
        self.next_local_id = 0
        self.last_vt = 0.0
        self.memory = (0, 0)
        self.ledger: list[tuple] = []
        self.results: list[dict] = []
        self.metrics: list[tuple] = []
        self.dropped: dict[str, int] = {}
        self.sent = 0
        self.received = 0
        self.finished = False
        self.t0 = None

    # ------------------------------------------------------------------ sockets
    def listen(self) -> None:
        """Bind the data listener on the node address and start accepting."""
        server = socket.create_server((self.addresses[self.node], self.port), backlog=256)
        threading.Thread(target=self._accept, args=(server,), daemon=True).start()
        threading.Thread(target=self._read_control, daemon=True).start()

    def _accept(self, server: socket.socket) -> None:
        while True:
            conn, _ = server.accept()
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._read_peer, args=(conn,), daemon=True).start()

    def _read_peer(self, conn: socket.socket) -> None:
        while (frame := recv_frame(conn)) is not None:
            self.inbox.put(("deliver", frame[1], time.monotonic()))

    def _read_control(self) -> None:
        while (frame := recv_frame(self.ctl)) is not None:
            self.inbox.put(("ctl", frame, None))
        self.inbox.put(("ctl", ("lost",), None))

    def tell(self, frame) -> None:
        """Send a frame to the driver (only the main thread does)."""
        send_frame(self.ctl, frame)

    # ------------------------------------------------------------------ events
    def schedule(self, vt: float, kind: str, payload) -> None:
        self.order += 1
        heapq.heappush(self.agenda, (vt, _RANK[kind], self.order, kind, payload))

    def wall(self, vt: float) -> float:
        return self.t0 + vt * self.scale

    def virtual(self, wall: float) -> float:
        return (wall - self.t0) / self.scale

    def begin(self, t0: float) -> None:
        """Schedule the run's own events; virtual time 0 is ``t0``."""
        self.t0 = t0
        self.schedule(0.0, START, None)
        for tup in self.tuples:
            self.schedule(tup.entered_at, TUPLE, tup)
        self.schedule(self.duration, FINISH, None)
        self.schedule(0.0, "sample", 0)

    def run(self) -> None:
        """The event loop, until the driver says stop (or disappears)."""
        while True:
            timeout = None
            if self.agenda:
                timeout = max(0.0, self.wall(self.agenda[0][0]) - time.monotonic())
            try:
                kind, frame, at = self.inbox.get(timeout=timeout)
            except queue.Empty:
                self.run_due(time.monotonic())
                continue
            if kind == "deliver":
                vt = self.virtual(at)
                self.run_due(at)
                self.received += 1
                self.process(max(vt, self.last_vt), DELIVER, frame)
            elif not self.control(frame):
                return
            self.run_due(time.monotonic())

    def run_due(self, wall: float) -> None:
        vt_now = self.virtual(wall)
        while self.agenda and self.agenda[0][0] <= vt_now:
            vt, _, _, kind, payload = heapq.heappop(self.agenda)
            if kind == "sample":
                self.metrics.append((vt, self.node, "testbed", "tuples", self.memory[0]))
                self.metrics.append((vt, self.node, "testbed", "bytes", self.memory[1]))
                self.schedule((payload + 1) * self.interval, "sample", payload + 1)
                continue
            if kind == FINISH:
                self.finished = True
            if not self.view_at(vt).alive(self.node):
                self.postpone(vt, kind, payload)
                continue
            self.process(vt, kind, payload)

    def postpone(self, vt: float, kind: str, payload) -> None:
        """An event at a dead node (as on the simpy backend): a tuple is dropped, anything
        else waits for the node's next epoch alive (dropped if there is none)."""
        if kind != TUPLE:
            for at, view in zip(self.epochs, self.views):
                if at > vt and view.alive(self.node):
                    self.schedule(at, kind, payload)
                    return
        key = f"{kind}s_at_dead_node" if kind == TUPLE else f"{kind}_at_dead_node"
        self.dropped[key] = self.dropped.get(key, 0) + 1

    def view_at(self, vt: float):
        """The routing view of the epoch in force at virtual time ``vt``."""
        return self.views[max(0, bisect.bisect_right(self.epochs, vt) - 1)]

    def control(self, frame) -> bool:
        """Handle a driver frame; False ends the agent."""
        what = frame[0]
        if what == "status":
            self.tell(("counts", self.node, self.sent, self.received, self.finished))
        elif what == "stop":
            self.stopping.set()
            self.tell(("outputs", self.node, {
                "ledger": self.ledger, "results": self.results, "metrics": self.metrics,
                "dropped": self.dropped, "sent": self.sent, "received": self.received}))
            return False
        elif what == "lost":
            self.stopping.set()
            return False
        else:
            raise ValueError(f"agent {self.node}: unknown control frame {what!r}")
        return True

    def process(self, vt: float, kind: str, payload) -> None:
        """Run one event through the program and ship what it produced."""
        from spark_nodes.program import run_node_step

        self.last_vt = max(self.last_vt, vt)
        self.order += 1
        out = run_node_step(self.program, self.node, [Event(vt, self.order, kind, payload)],
                            vt, vt, self.view_at(vt), seed=self.seed, rng_state=self.rng_state,
                            algorithm=self.algorithm, next_local_id=self.next_local_id)
        self.rng_state = out.rng_state
        self.next_local_id = out.next_local_id
        self.memory = out.memory
        self.results.extend(out.results)
        self.metrics.extend(out.metrics)
        for at, tag in out.timers:
            # As on the simpy backend, timers after the end of the run are not fired.
            if at <= self.duration:
                self.schedule(at, TIMER, tag)
        for m in sorted(out.messages, key=lambda m: (m.sent_at, m.local_id)):
            self.send(m)

    def send(self, m) -> None:
        msg = Message(self.node * MSG_ID_BASE + m.local_id, m.kind, m.src, m.dst, m.sent_at,
                      m.size_units, wire_bytes(m.size_units, self.bytes_per_unit,
                                               self.header_bytes), m.payload)
        view = self.view_at(msg.sent_at)
        path = view.path(msg.src, msg.dst) if view.alive(msg.dst) else []
        row = (msg.sent_at, msg.msg_id, msg.kind, msg.src, msg.dst)
        if len(path) < 2:
            self.ledger.append(row + (msg.src, msg.dst, msg.size_units, msg.size_bytes,
                                      float("inf"), True))
            return
        for a, b in zip(path, path[1:]):
            self.ledger.append(row + (a, b, msg.size_units, msg.size_bytes,
                                      view.cost(a, b), False))
        peer = self.peers.get(msg.dst)
        if peer is None:
            peer = self.peers[msg.dst] = _Peer((self.addresses[msg.dst], self.port),
                                               self.stopping)
        peer.queue.put(encode(("msg", msg)))
        self.sent += 1


def run_agent(node: int, ctl_path: str) -> None:
    """Be the agent of ``node``: connect to the driver, set up, run until stopped."""
    ctl = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ctl.connect(ctl_path)
    send_frame(ctl, ("hello", node))
    try:
        frame = recv_frame(ctl)
        if frame is None:
            return
        agent = Agent(node, ctl, frame[1])
        agent.listen()
        agent.tell(("ready", node))
        while True:
            _, frame, _ = agent.inbox.get()
            if frame[0] == "go":
                break
            if frame[0] == "lost":
                return
            agent.control(frame)
        agent.begin(frame[1])
        agent.run()
    except Exception:
        try:
            send_frame(ctl, ("error", node, traceback.format_exc()))
        except OSError:
            pass
        raise


_CLONE_NEWNET = 0x40000000


def enter_netns(pid: int) -> None:
    """Move this (single-threaded) process into the network namespace of ``pid``."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
    try:
        if libc.setns(fd, _CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns into the network namespace of pid {pid}: "
                               f"{os.strerror(err)}")
    finally:
        os.close(fd)


def zygote(ctl_path: str, preload: list[str], state_dir: str) -> None:
    """Fork one agent per ``node host_pid`` line of stdin, each in its host's namespace.

    Importing numpy, pandas and the programs' modules once, here, and forking is what
    makes a 50-node run start in seconds: each fork inherits the imports. Prints each
    child's ``node pid``; after stdin ends, waits for the children.
    """
    import importlib

    for module in preload:
        importlib.import_module(module)
    children = []
    for line in sys.stdin:
        node, host_pid = (int(x) for x in line.split())
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                err = os.open(os.path.join(state_dir, f"agent{node}.err"),
                              os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(err, 2)
                # Let go of the pipe the zygote reports on, so the driver sees its end.
                os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
                enter_netns(host_pid)
                run_agent(node, ctl_path)
            except BaseException:
                traceback.print_exc()
                code = 1
            finally:
                sys.stderr.flush()
                os._exit(code)
        children.append(pid)
        print(node, pid, flush=True)
    for pid in children:
        os.waitpid(pid, 0)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="run prefix (marks the process)")
    parser.add_argument("--ctl", required=True, help="the driver's Unix socket")
    parser.add_argument("--state-dir", required=True, help="where agents write stderr")
    parser.add_argument("--preload", action="append", default=[],
                        help="module to import before forking (repeatable)")
    args = parser.parse_args(argv)
    zygote(args.ctl, args.preload, args.state_dir)


if __name__ == "__main__":
    main()
