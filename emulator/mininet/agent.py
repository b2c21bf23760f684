"""A node agent: one process per Mininet host running that node's program in wall-clock time.

The agent connects to the driver's Unix socket, receives its setup (the pickled program,
the tuples its sources produce, the run's constants and the routing view of every epoch
of the run — the same views the driver installs as kernel routes at those instants, so
``ctx.net`` at virtual time t is the view of the epoch in force at t, as on the simpy
backend, however long the kernel update takes), listens
on its node address, and reports ``ready``. After ``go`` (a ``time.monotonic`` instant
shared by all agents, since the clock is the same in every namespace) virtual time is
``(monotonic() - t0) / time_scale``. The agent is the backend of the one step driver
(:mod:`emulator.driver`) for its node: the driver files ``start``, the tuples, ``finish``
and the timers by the run's rules, and asks for one window per instant at which something
is due; a message delivered by the network is due at the virtual time it arrived. The
runtime the controller shipped (in-process) runs the program — the same operator code as
on the simpy backend — and the messages it sends go out over TCP, one persistent
connection per destination, in order ``(sent_at, local id)``.

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
import dataclasses
import heapq
import math
import os
import pickle
import queue
import socket
import sys
import threading
import time
import traceback

from contract.events import DELIVER, FINISH, Event
from contract.messages import Message, wire_bytes
from emulator.driver import execute
from emulator.ledger import Ledger
from emulator.mininet.protocol import encode, recv_frame, send_frame

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
    """One node's backend for the step driver (see the module docstring): a calendar of
    the node's own events in wall-clock time, deliveries from TCP, sends over TCP."""

    name = "mininet-agent"

    def __init__(self, node: int, ctl: socket.socket, setup: dict):
        self.node = node
        self.ctl = ctl
        self.program = pickle.loads(setup["program"])
        self.runtime = pickle.loads(setup["runtime"])
        self.plan = dataclasses.replace(pickle.loads(setup["plan"]), name=f"node {node}")
        self.drain = setup["drain"]
        self.scale = setup["time_scale"]
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
        self.ledger = Ledger()
        self.sent = 0
        self.received = 0
        self.payload_hop_bytes = 0
        self.finished = False
        self.lost_controller = False
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

    def wall(self, vt: float) -> float:
        return self.t0 + vt * self.scale

    def virtual(self, wall: float) -> float:
        return (wall - self.t0) / self.scale

    def run(self, t0: float) -> None:
        """Run the node through the step driver from wall-clock instant ``t0`` (virtual
        time 0) until the controller says stop; then report the outputs."""
        self.t0 = t0
        tuples = {"": list(self.tuples)}   # already in the calendar's order
        output = execute(self.plan, {self.node: self.program}, tuples, self.runtime,
                         drain=self.drain, backend=self)
        if self.lost_controller:
            return   # the controller went away: nobody to report to
        self.tell(("outputs", self.node, {
            "ledger": output.ledger, "results": output.results, "metrics": output.metrics,
            "dropped": output.info["dropped"], "sent": self.sent,
            "received": self.received, "payload_hop_bytes": self.payload_hop_bytes,
            "traces": output.traces}))

    # ------------------------------------------------------- backend of the step driver
    def schedule(self, vt: float, node: int, kind: str, payload) -> None:
        """File an event of this node at virtual time ``vt``."""
        self.order += 1
        heapq.heappush(self.agenda, (vt, self.order, kind, payload))

    def schedule_all(self, events) -> None:
        """File ``(vt, node, kind, payload)`` events of this node, in the given order."""
        for vt, node, kind, payload in events:
            self.schedule(vt, node, kind, payload)

    def next_time(self) -> float:
        """Wait (in wall-clock time) until an event is due or a message arrives; its
        virtual time. Inf once the controller says stop (or disappears)."""
        while not self.stopping.is_set():
            timeout = None
            if self.agenda:
                due = self.wall(self.agenda[0][0]) - time.monotonic()
                if due <= 0:
                    return self.agenda[0][0]
                timeout = due
            try:
                kind, frame, at = self.inbox.get(timeout=timeout)
            except queue.Empty:
                continue
            if kind == "deliver":
                self.received += 1
                self.schedule(self.virtual(at), self.node, DELIVER, frame)
            else:
                self.control(frame)
        return math.inf

    def window(self, t_prev: float, t_next: float, step: float) -> tuple[float, float]:
        """One window per instant: events run as soon as they are due."""
        t0 = max(t_prev, t_next)
        return t0, t0

    def collect(self, until: float) -> dict[int, list]:
        """The events due by ``until`` (inclusive: a window here is one instant)."""
        due = []
        while self.agenda and self.agenda[0][0] <= until:
            vt, order, kind, payload = heapq.heappop(self.agenda)
            self.finished = self.finished or kind == FINISH
            due.append(Event(vt, order, kind, payload))
        return {self.node: due} if due else {}

    def view(self, vt: float):
        """The routing view of the epoch in force at virtual time ``vt``."""
        return self.views[max(0, bisect.bisect_right(self.epochs, vt) - 1)]

    def next_change(self, vt: float) -> float:
        """The first epoch after ``vt`` (inf if none)."""
        k = bisect.bisect_right(self.epochs, vt)
        return self.epochs[k] if k < len(self.epochs) else math.inf

    def inject(self, outgoing) -> None:
        """Write the ledger rows of each message (the path in force at its ``sent_at``)
        and ship it over TCP; a message to an unreachable node is one lost row."""
        for m in outgoing:
            if m.free:
                raise ValueError("a free signal (e.g. [trigger] signal = \"free\") needs "
                                 "the simpy backend: real hosts have no channel outside "
                                 "the network")
            msg = Message(self.node * MSG_ID_BASE + m.local_id, m.kind, m.src, m.dst,
                          m.sent_at, m.size_units,
                          wire_bytes(m.size_units, self.bytes_per_unit, self.header_bytes),
                          m.payload)
            view = self.view(msg.sent_at)
            path = view.path(msg.src, msg.dst) if view.alive(msg.dst) else []
            if len(path) < 2:
                self.ledger.add(msg.sent_at, msg.msg_id, msg.kind, msg.src, msg.dst, msg.src,
                                msg.dst, msg.size_units, msg.size_bytes, math.inf, True)
                continue
            for a, b in zip(path, path[1:]):
                self.ledger.add(msg.sent_at, msg.msg_id, msg.kind, msg.src, msg.dst, a, b,
                                msg.size_units, msg.size_bytes, view.cost(a, b), False)
            peer = self.peers.get(msg.dst)
            if peer is None:
                peer = self.peers[msg.dst] = _Peer((self.addresses[msg.dst], self.port),
                                                   self.stopping)
            frame = encode(("msg", msg))
            # what TCP carries over each hop of the path (the pickled message, framed)
            self.payload_hop_bytes += len(frame) * (len(path) - 1)
            peer.queue.put(frame)
            self.sent += 1

    def ledger_frame(self):
        """This node's ledger rows."""
        return self.ledger.frame()

    def info(self) -> dict:
        """Counts for the controller."""
        return {"messages": self.sent, "received": self.received}

    def control(self, frame) -> None:
        """Handle a controller frame."""
        what = frame[0]
        if what == "status":
            self.tell(("counts", self.node, self.sent, self.received, self.finished))
        elif what in ("stop", "lost"):
            self.stopping.set()
            self.lost_controller = what == "lost"
        else:
            raise ValueError(f"agent {self.node}: unknown control frame {what!r}")


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
        agent.run(frame[1])
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
