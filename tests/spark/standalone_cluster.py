"""A real Spark standalone master and worker as local processes, stopped by pid."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def descendants(pid: int) -> list[int]:
    """Pids of every process below ``pid`` (from /proc), deepest last."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def kill_tree(proc: subprocess.Popen, sig=signal.SIGKILL) -> None:
    """Signal ``proc`` and everything it started (by pid), then reap ``proc``."""
    below = descendants(proc.pid)
    for pid in [proc.pid] + below:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=30)
    for pid in below:   # anything that ignored the first signal
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


class Standalone:
    """A standalone master plus workers, each a ``spark-class`` process we own."""

    def __init__(self, root: Path):
        self.root = root
        self.port = free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.env = dict(os.environ, SPARK_HOME=str(SPARK_HOME), SPARK_LOCAL_IP="127.0.0.1",
                        PYSPARK_PYTHON=sys.executable,
                        SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false")
        self.master = None
        self.workers: list[subprocess.Popen] = []
        self.started = 0   # workers ever started: names stay unique when one is removed

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen:
        log = open(self.root / f"{name}.log", "ab")
        return subprocess.Popen([str(SPARK_HOME / "bin" / "spark-class"), *args], env=self.env,
                                stdout=log, stderr=subprocess.STDOUT, cwd=self.root)

    def start_master(self, timeout: float = 300.0) -> None:
        self.master = self._spawn("master", ["org.apache.spark.deploy.master.Master",
                                             "--host", "127.0.0.1", "--port", str(self.port),
                                             "--webui-port", "0"])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.master.poll() is not None:
                raise RuntimeError(f"master exited: {self.log('master')}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"master not listening after {timeout} s: {self.log('master')}")

    def start_worker(self, cores: int = 1, timeout: float = 300.0) -> subprocess.Popen:
        name = f"worker{self.started}"
        self.started += 1
        registered = self.log("master").count("Registering worker")
        work = self.root / name
        work.mkdir()
        worker = self._spawn(name, ["org.apache.spark.deploy.worker.Worker", self.url,
                                    "--host", "127.0.0.1", "--webui-port", "0",
                                    "--cores", str(cores), "--memory", "1g",
                                    "--work-dir", str(work)])
        self.workers.append(worker)
        deadline = time.monotonic() + timeout
        while self.log("master").count("Registering worker") <= registered:
            if worker.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not register: {self.log(name)}")
            time.sleep(0.3)
        return worker

    def log(self, name: str) -> str:
        path = self.root / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        for proc in reversed(self.workers + [self.master]):
            if proc is not None and proc.poll() is None:
                kill_tree(proc, signal.SIGTERM)


