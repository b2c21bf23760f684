"""The driver's side of the node agents: start them in their hosts and talk to them.

Agents connect to a Unix socket in the run's state folder (Unix sockets cross network
namespaces; the emulated network carries only the agents' own traffic). Each agent says
``hello``, gets its setup and answers ``ready``; one that has not done so within the
timeout fails the run with its exit status and the end of its stderr.
"""
from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time

from emulator.mininet.naming import process_argv
from emulator.mininet.protocol import recv_frame, send_frame


class AgentError(RuntimeError):
    """An agent failed to start, crashed, or reported an error."""


class Agents:
    """The agents of one run (one per node that runs a program)."""

    def __init__(self, em, nodes):
        self.em = em
        self.nodes = sorted(nodes)
        self.path = em.names.state_dir / "ctl.sock"
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(self.path))
        self.server.listen(len(self.nodes) + 8)
        self.frames: queue.Queue = queue.Queue()
        self.conns: dict[int, socket.socket] = {}
        self.pids: dict[int, int] = {}
        self.zygote = None
        self._stderr = {}
        self.done: set[int] = set()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn: socket.socket) -> None:
        node = None
        try:
            while (frame := recv_frame(conn)) is not None:
                if frame[0] == "hello":
                    node = frame[1]
                    self.conns[node] = conn
                self.frames.put(frame)
        except OSError:
            pass
        self.frames.put(("closed", node))

    def spawn(self, preload=()) -> None:
        """Start one agent per node in its host, forked from one zygote process that has
        imported ``preload`` (module names) once."""
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
        cmd = [sys.executable, "-m", "emulator.mininet.agent", "--run", self.em.names.prefix,
               "--ctl", str(self.path), "--state-dir", str(self.em.names.state_dir)]
        for module in sorted(set(preload)):
            cmd += ["--preload", module]
        self.zygote = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=open(self.em.names.state_dir / "zygote.err", "wb"),
                                       text=True, env=env)
        for n in self.nodes:
            self._stderr[n] = self.em.names.state_dir / f"agent{n}.err"
            self.zygote.stdin.write(f"{n} {self.em.hosts[n].pid}\n")
        self.zygote.stdin.close()
        # The zygote reports each child as it forks it; read that beside the handshake, so
        # a slow or failed zygote is caught by the start timeout.
        threading.Thread(target=self._read_pids, daemon=True).start()

    def _read_pids(self) -> None:
        for line in self.zygote.stdout:
            node, pid = (int(x) for x in line.split())
            self.pids[node] = pid

    def handshake(self, setups: dict[int, dict], timeout: float) -> None:
        """Send each agent its setup; return when all are ready, else raise AgentError."""
        def reply(frame):
            if frame[0] == "hello":
                send_frame(self.conns[frame[1]], ("setup", setups[frame[1]]))

        self.collect("ready", timeout, on_other=reply, failure="did not start")

    def _next(self, deadline: float):
        """The next frame before ``deadline`` (None on timeout); raises on agent errors."""
        while True:
            try:
                frame = self.frames.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return None
            if frame[0] == "error":
                raise AgentError(f"run {self.em.names.prefix}: agent of node {frame[1]} "
                                 f"failed:\n{frame[2]}")
            if frame[0] == "outputs":
                self.done.add(frame[1])
            if frame[0] != "closed":
                return frame
            if frame[1] not in self.done:  # an agent that finished may hang up
                raise AgentError(f"run {self.em.names.prefix}: agent of node {frame[1]} "
                                 f"closed its connection:\n"
                                 + self.describe([frame[1]] if frame[1] is not None else []))

    def describe(self, nodes) -> str:
        """State and stderr tail of the given nodes' agents."""
        lines = []
        for n in nodes:
            pid = self.pids.get(n)
            if pid is None:
                state = "not forked (see zygote.err: " + self._zygote_err() + ")"
            else:
                state = f"pid {pid} " + ("running" if self._alive(pid) else "exited")
            tail = ""
            if n in self._stderr and self._stderr[n].exists():
                tail = self._stderr[n].read_text(errors="replace")[-800:]
            lines.append(f"  node {n}: {state}; stderr: {tail.strip() or '(empty)'}")
        return "\n".join(lines)

    def _zygote_err(self) -> str:
        path = self.em.names.state_dir / "zygote.err"
        return (path.read_text(errors="replace")[-400:].strip() or "empty") \
            if path.exists() else "missing"

    def _alive(self, pid: int) -> bool:
        argv = process_argv(pid)
        return argv is not None and self.em.names.owns_process(argv)

    def broadcast(self, frame) -> None:
        """Send ``frame`` to every agent; an agent that is gone fails the run with what it
        reported (or its stderr)."""
        for n in self.nodes:
            try:
                send_frame(self.conns[n], frame)
            except OSError as exc:
                self.check(wait=2.0)   # raises with the agent's own error if it sent one
                raise AgentError(f"run {self.em.names.prefix}: agent of node {n} is gone "
                                 f"({exc}):\n" + self.describe([n])) from exc

    def check(self, wait: float = 0.0) -> None:
        """Raise if an agent reported an error or hung up (during the run nothing else
        arrives from the agents)."""
        deadline = time.monotonic() + wait
        while self._next(deadline) is not None:
            pass

    def collect(self, what: str, timeout: float, on_other=None,
                failure: str | None = None) -> dict[int, tuple]:
        """Wait for one ``what`` frame from every agent: ``{node: frame}``.

        Other frames go to ``on_other`` (if given); agents still missing at the timeout
        fail the run with ``agents of nodes [...] <failure> within <timeout> s``.
        """
        deadline = time.monotonic() + timeout
        got: dict[int, tuple] = {}
        while len(got) < len(self.nodes):
            frame = self._next(deadline)
            if frame is None:
                missing = [n for n in self.nodes if n not in got]
                raise AgentError(f"run {self.em.names.prefix}: agents of nodes {missing} "
                                 f"{failure or f'sent no {what!r}'} within {timeout:g} s:\n"
                                 + self.describe(missing))
            if frame[0] == what:
                got[frame[1]] = frame
            elif on_other is not None:
                on_other(frame)
        return got

    def counts(self, timeout: float = 10.0) -> tuple[int, int, bool]:
        """(messages sent, messages received, all finished) over all agents."""
        self.broadcast(("status",))
        frames = self.collect("counts", timeout).values()
        return (sum(f[2] for f in frames), sum(f[3] for f in frames),
                all(f[4] for f in frames))

    def close(self, timeout: float = 3.0) -> None:
        """Hang up on the agents (an agent whose driver hangs up exits), wait for them,
        kill stragglers by pid, close the socket."""
        for conn in self.conns.values():
            conn.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(self._alive(p) for p in self.pids.values()):
            time.sleep(0.02)
        for pid in self.pids.values():
            if self._alive(pid):
                os.kill(pid, signal.SIGKILL)
        if self.zygote is not None:
            try:
                self.zygote.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.zygote.kill()
                self.zygote.wait()
        self.server.close()
        self.path.unlink(missing_ok=True)
