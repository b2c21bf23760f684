"""Spark on the emulated network: a standalone master in one host, workers in others.

The Spark driver stays in the root namespace, which :meth:`Emulation.attach_root` joins to
the master's host by an unshaped veth; every other byte between driver, master, workers
and executors crosses the emulated links (routes, delays, bandwidth caps and all). The
daemons and executors carry the run's JVM marker, so a crashed run's Java processes are
found and removed like its agents.

Example (root, Mininet), with ``[mininet] spark_master = 0, spark_workers = [2, 3]``::

    with emulated_spark(plan) as cluster:
        spark = cluster.session()          # a SparkSession on the emulated cluster
        SparkRuntime(spark=spark)          # node programs run on emulated executors

The network keeps the links and routes of epoch 0 while the cluster runs (the operators'
own messages are then carried by the step driver, not by this network).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from emulator.mininet.naming import process_argv


def spark_home() -> Path:
    """The Spark distribution that ships with PySpark."""
    import pyspark

    return Path(pyspark.__file__).parent


class SparkCluster:
    """A Spark standalone cluster whose daemons live in Mininet hosts.

    Parameters
    ----------
    em : a started :class:`~emulator.mininet.emulation.Emulation` (routes applied).
    master : node whose host runs the master (and which the root namespace attaches to).
    workers : nodes whose hosts run one worker each.
    worker_cores, worker_memory : resources each worker offers.
    timeout : wall seconds for the master to come up and every worker to register.
    """

    def __init__(self, em, master: int, workers, *, worker_cores: int = 1,
                 worker_memory: str = "1g", port: int = 7077, ui_port: int = 8080,
                 timeout: float = 300.0):
        unknown = [n for n in [master, *workers] if n not in em.hosts]
        if unknown:
            raise ValueError(f"spark nodes {unknown} are not in the emulated network "
                             f"(nodes {em.nodes[0]}..{em.nodes[-1]})")
        if not workers:
            raise ValueError("a Spark cluster needs at least one worker node")
        self.em = em
        self.master = master
        self.workers = list(workers)
        self.cores = worker_cores
        self.memory = worker_memory
        self.port = port
        self.ui_port = ui_port
        self.timeout = timeout
        self.procs: dict[str, subprocess.Popen] = {}
        self.driver_address: str | None = None

    @property
    def master_url(self) -> str:
        return f"spark://{self.em.names.address(self.master)}:{self.port}"

    @property
    def conf(self) -> dict[str, str]:
        """Spark settings a driver in the root namespace needs to use the cluster."""
        return {"spark.driver.host": self.driver_address,
                "spark.driver.bindAddress": self.driver_address,
                "spark.executor.extraJavaOptions": self.em.names.java_marker,
                "spark.executor.cores": str(self.cores),
                "spark.cores.max": str(self.cores * len(self.workers))}

    def _env(self, node: int) -> dict[str, str]:
        env = dict(os.environ, SPARK_HOME=str(spark_home()),
                   SPARK_LOCAL_IP=self.em.names.address(node),
                   SPARK_DAEMON_JAVA_OPTS=self.em.names.java_marker,
                   SPARK_LOG_DIR=str(self.em.names.state_dir),
                   PYSPARK_PYTHON=os.environ.get("PYSPARK_PYTHON", sys.executable))
        return env

    def _daemon(self, name: str, node: int, args: list[str]) -> None:
        log = open(self.em.names.state_dir / f"spark-{name}.log", "wb")
        cmd = [str(spark_home() / "bin" / "spark-class"), *args]
        self.procs[name] = self.em.hosts[node].popen(cmd, env=self._env(node),
                                                     stdin=subprocess.DEVNULL, stdout=log,
                                                     stderr=subprocess.STDOUT)

    def start(self) -> "SparkCluster":
        """Attach the root namespace, start master and workers, wait for registration."""
        self.driver_address = self.em.attach_root(self.master)
        addr = self.em.names.address(self.master)
        self._daemon("master", self.master, [
            "org.apache.spark.deploy.master.Master", "--host", addr, "--port", str(self.port),
            "--webui-port", str(self.ui_port)])
        for w in self.workers:
            work_dir = self.em.names.state_dir / f"spark-work{w}"
            self._daemon(f"worker{w}", w, [
                "org.apache.spark.deploy.worker.Worker", self.master_url,
                "--host", self.em.names.address(w), "--cores", str(self.cores),
                "--memory", self.memory, "--webui-port", str(self.ui_port + 1),
                "--work-dir", str(work_dir)])
        self._wait_for_workers()
        return self

    def _wait_for_workers(self) -> None:
        url = f"http://{self.em.names.address(self.master)}:{self.ui_port}/json/"
        deadline = time.monotonic() + self.timeout
        alive, last = 0, "no answer"
        while time.monotonic() < deadline:
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(f"spark {name} exited with {proc.returncode}; log: "
                                       f"{self._log_tail(name)}")
            try:
                with urllib.request.urlopen(url, timeout=2.0) as answer:
                    state = json.loads(answer.read())
                alive = int(state.get("aliveworkers", 0))
                last = f"{alive} of {len(self.workers)} workers alive"
                if alive >= len(self.workers):
                    return
            except OSError as exc:
                last = str(exc)
            time.sleep(0.5)
        raise RuntimeError(f"spark cluster on {self.master_url} not ready within "
                           f"{self.timeout:g} s ({last}); master log: "
                           f"{self._log_tail('master')}")

    def _log_tail(self, name: str) -> str:
        path = self.em.names.state_dir / f"spark-{name}.log"
        return path.read_text(errors="replace")[-600:] if path.exists() else "(none)"

    def session(self, app_name: str = "testbed-mininet", **kwargs):
        """A SparkSession on this cluster; ``kwargs`` are extra Spark settings (e.g. what
        the spark runtime needs, such as its state store provider)."""
        from pyspark.sql import SparkSession

        builder = SparkSession.builder.master(self.master_url).appName(app_name)
        for key, value in {**self.conf, **kwargs}.items():
            builder = builder.config(key, value)
        return builder.getOrCreate()

    def executor_nodes(self, spark) -> list[int]:
        """The nodes whose hosts run ``spark``'s executors, from Spark's status store (an
        executor binds its host's address, which exists only in that host's namespace)."""
        by_address = {self.em.names.address(n): n for n in self.em.nodes}
        executors = spark.sparkContext._jsc.sc().statusStore().executorList(True)
        hosts = {executors.apply(i).hostPort().rpartition(":")[0]
                 for i in range(executors.size()) if executors.apply(i).id() != "driver"}
        return sorted(by_address[h] for h in hosts if h in by_address)

    def bytes_sent_since(self, before: dict) -> dict[str, int]:
        """``{"u-v": bytes}`` each emulated link carried since ``before`` (an earlier
        ``em.tx_bytes()``): Spark's own traffic while nothing else uses the network."""
        now = self.em.tx_bytes()
        return {f"{u}-{v}": now[(u, v)] - before.get((u, v), 0)
                for u, v in sorted(now) if now[(u, v)] > before.get((u, v), 0)}

    def stop(self) -> None:
        """Stop workers (they stop their executors) and master, by pid."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 10.0
        for proc in self.procs.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.procs.clear()

    def java_processes(self) -> list[int]:
        """Pids of this run's Java processes still alive (daemons and executors)."""
        from emulator.mininet.naming import all_pids

        marker = self.em.names.java_marker
        return [p for p in all_pids() if marker in (process_argv(p) or [])]

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


@contextmanager
def emulated_spark(plan, options=None):
    """The plan's network (epoch 0) with a Spark cluster on the ``[mininet]`` nodes."""
    from emulator.mininet.backend import _edges, epoch_state
    from emulator.mininet.emulation import Emulation
    from emulator.mininet.options import MininetOptions
    from emulator.network import Network

    if options is None:
        options = MininetOptions.from_table(plan.spec.get("mininet"),
                                            source=f"spec of run {plan.name!r}")
    if options.spark_master is None or not options.spark_workers:
        raise ValueError("mininet.spark_master / mininet.spark_workers: expected a master "
                         "node and at least one worker node for Spark on the network")
    network = Network(plan.dynamics)
    view = network.view(0.0)
    edges = _edges(plan.dynamics, [0.0])
    em = Emulation(view.nodes, edges, time_scale=options.time_scale, seed=plan.seed,
                   shaping=options.shaping)
    try:
        em.start()
        em.apply(*epoch_state(view, edges, options.time_scale))
        with SparkCluster(em, options.spark_master, options.spark_workers) as cluster:
            yield cluster
    finally:
        em.stop()
