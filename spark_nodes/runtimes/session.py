"""Building the SparkSession the spark runtime and the spark sweep engine use.

Before starting a JVM the checks a user can fail are done here, each with a message that
says what is wrong and how to fix it (instead of a Py4J stack trace or a hang):

- :func:`check_java` — Java missing, or older than Spark 4 needs (17);
- :func:`check_python` — ``PYSPARK_PYTHON`` missing, not executable, another Python
  version than the driver's, or without this project installed;
- :func:`check_master` — a ``spark://`` master that does not answer within a timeout;
- :func:`wait_for_executors` — a cluster that accepted the application but gives it no
  executor (no worker running), again with a timeout.

:func:`build_session` runs them and configures what ``transformWithStateInPandas``
needs (the RocksDB state store provider, the ``protobuf`` package).

Examples
--------
>>> master_kind("local[*]"), master_kind("spark://10.0.0.1:7077"), master_kind("yarn")
('local', 'standalone', 'other')
>>> standalone_endpoints("spark://a:7077,b:7078")
[('a', 7077), ('b', 7078)]
>>> java_major('openjdk version "17.0.15" 2025-04-15'), java_major('java version "1.8.0_392"')
(17, 8)
"""
from __future__ import annotations

import functools
import glob
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import zipfile
from contextlib import contextmanager
from pathlib import Path

#: Spark 4 runs on Java 17 or newer.
MIN_JAVA = 17
#: Where the RocksDB state store provider lives (transformWithStateInPandas needs it).
ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
#: The checkpoint file manager that writes through Hadoop's FileSystem, where Spark 4.0
#: and where later versions keep it.
CHECKPOINT_FILE_MANAGERS = (
    "org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager",
    "org.apache.spark.sql.execution.streaming.FileSystemBasedCheckpointFileManager")


class SparkSetupError(RuntimeError):
    """Spark cannot start or reach its cluster; the message says why and what to do."""


def master_kind(master: str) -> str:
    """``"local"``, ``"standalone"`` (``spark://``) or ``"other"`` (yarn, k8s, ...)."""
    if master == "local" or master.startswith("local["):
        return "local"
    if master.startswith("spark://"):
        return "standalone"
    return "other"


def standalone_endpoints(master: str) -> list[tuple[str, int]]:
    """``(host, port)`` of each master of a ``spark://h1:p1[,h2:p2]`` URL."""
    out = []
    for part in master[len("spark://"):].split(","):
        host, sep, port = part.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise SparkSetupError(f"master URL {master!r}: expected spark://HOST:PORT "
                                  f"(comma-separated for several masters), got {part!r}")
        out.append((host, int(port)))
    return out


def java_major(version_text: str) -> int:
    """The major Java version in the output of ``java -version`` (``1.8`` counts as 8)."""
    m = re.search(r'version "(\d+)(?:\.(\d+))?', version_text)
    if m is None:
        raise SparkSetupError(f"cannot read the Java version from: {version_text.strip()!r}")
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


def java_executable() -> str | None:
    """The ``java`` Spark will start: ``$JAVA_HOME/bin/java``, else the one on ``PATH``."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = os.path.join(home, "bin", "java")
        return candidate if os.access(candidate, os.X_OK) else None
    return shutil.which("java")


def check_java(minimum: int = MIN_JAVA, timeout: float = 30.0) -> int:
    """Return the Java major version; raise :class:`SparkSetupError` if missing or too old."""
    java = java_executable()
    if java is None:
        where = (f"JAVA_HOME={os.environ['JAVA_HOME']} has no bin/java"
                 if os.environ.get("JAVA_HOME") else "no `java` on PATH and JAVA_HOME unset")
        raise SparkSetupError(f"Java not found ({where}): Spark needs Java {minimum} or newer; "
                              f"install it (e.g. apt-get install openjdk-17-jre-headless) "
                              f"or set JAVA_HOME")
    try:
        proc = subprocess.run([java, "-version"], capture_output=True, text=True,
                              timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SparkSetupError(f"cannot run {java} -version: {exc}") from exc
    major = java_major(proc.stderr + proc.stdout)
    if major < minimum:
        raise SparkSetupError(f"{java} is Java {major}; Spark needs Java {minimum} or newer "
                              f"(install openjdk-17 and point JAVA_HOME at it)")
    return major


def check_python(python: str, timeout: float = 180.0) -> None:
    """Check that ``python`` (what ``PYSPARK_PYTHON`` names) can run this project's tasks.

    It must exist, be executable, have the driver's ``major.minor`` version (PySpark
    refuses a mismatch) and import ``pyspark`` and ``spark_nodes``.
    """
    label = f"PYSPARK_PYTHON={python}"
    if not (os.path.isfile(python) and os.access(python, os.X_OK)):
        found = shutil.which(python)
        if found is None:
            raise SparkSetupError(f"{label}: no such executable; set PYSPARK_PYTHON to the "
                                  f"project's interpreter (this driver runs {sys.executable})")
        python = found
    probe = "import sys, pyspark, spark_nodes; print('%d.%d' % sys.version_info[:2])"
    try:
        proc = subprocess.run([python, "-c", probe], capture_output=True, text=True,
                              timeout=timeout, cwd=os.path.dirname(os.path.abspath(__file__)))
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SparkSetupError(f"{label}: cannot run it: {exc}") from exc
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SparkSetupError(f"{label}: cannot import pyspark and spark_nodes ({last}); "
                              f"set PYSPARK_PYTHON to the interpreter where this project is "
                              f"installed (this driver runs {sys.executable})")
    ours = "%d.%d" % sys.version_info[:2]
    theirs = proc.stdout.strip()
    if theirs != ours:
        raise SparkSetupError(f"{label} is Python {theirs} but the driver is Python {ours}; "
                              f"PySpark needs the same version on both sides")


def check_master(master: str, timeout: float = 10.0) -> None:
    """Raise :class:`SparkSetupError` if a ``spark://`` master does not accept a connection
    within ``timeout`` seconds (a standalone master that is down otherwise makes the driver
    retry for minutes). Other masters are left to Spark."""
    kind = master_kind(master)
    if kind == "local":
        if not re.fullmatch(r"local(\[(\*|\d+)(,\d+)?\])?", master):
            raise SparkSetupError(f"master {master!r}: expected local, local[N], local[*] "
                                  f"or local[N,F]")
        return
    if kind != "standalone":
        return
    errors = []
    for host, port in standalone_endpoints(master):
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return
        except OSError as exc:
            errors.append(f"{host}:{port}: {exc}")
    raise SparkSetupError(f"Spark master {master} unreachable within {timeout:g} s "
                          f"({'; '.join(errors)}); is the master running and the URL right?")


def wait_for_executors(spark, count: int = 1, timeout: float = 60.0) -> int:
    """Wait until ``count`` executors have registered (cluster masters only).

    A standalone master with no live worker accepts the application and then starves it;
    without this check the first job would wait forever.
    """
    sc = spark.sparkContext
    if master_kind(sc.master) == "local":
        return 0
    deadline = time.monotonic() + timeout
    while True:
        # The status tracker lists the driver too.
        live = sc._jsc.sc().getExecutorMemoryStatus().size() - 1
        if live >= count:
            return live
        if time.monotonic() > deadline:
            raise SparkSetupError(f"no executor registered with {sc.master} within "
                                  f"{timeout:g} s (found {live}, need {count}); "
                                  f"is a worker running and does it have free cores?")
        time.sleep(0.2)


#: Environment variable naming the file the JVM's console output goes to (its log4j
#: lines, its warnings, and what its Python workers print); unset: the terminal.
LOG_ENV = "TESTBED_SPARK_LOG"


@contextmanager
def jvm_output_to(path: str | None):
    """Start the JVM (inside the block) with its stderr and stdout on ``path``.

    The JVM and the Python workers it forks inherit the process's file descriptors 1
    and 2 when it starts; pointing them at the log file for that moment, and back
    afterwards, sends everything they ever print there while this process keeps its own
    console (the progress bar, the summary).
    """
    if not path:
        yield
        return
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    log = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        os.dup2(log, 1)
        os.dup2(log, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved + [log]:
            os.close(fd)


def stop_active_session() -> None:
    """Stop this process's active SparkSession, if any (the py4j gateway JVM stays up, so
    the next :func:`build_session`, on any master, starts in seconds)."""
    pyspark_sql = sys.modules.get("pyspark.sql")
    if pyspark_sql is None:      # Spark never started here: nothing to stop, nothing to load
        return
    active = pyspark_sql.SparkSession.getActiveSession()
    if active is not None:
        active.stop()


def build_session(master: str = "local[*]", app_name: str = "testbed",
                  partitions: int | None = None, conf: dict | None = None,
                  timeout: float = 300.0, check: bool = True):
    """Start (or reuse) the SparkSession for ``master``, after the setup checks.

    Parameters
    ----------
    master : str
        ``local[*]`` (embedded, default), ``local[N]``, ``spark://host:port`` or any URL
        Spark accepts.
    partitions : int, optional
        ``spark.sql.shuffle.partitions``; default the number of cores of ``local[N]``, else
        Spark's default parallelism. Every partition of a stateful query runs a task per
        micro-batch, so few partitions keep the step overhead low.
    conf : dict, optional
        Extra Spark settings.
    timeout : float
        Seconds to wait for the master and then for a first executor.
    check : bool
        Run the Java / PYSPARK_PYTHON / master checks (a reused session skips them).
    """
    _require_protobuf()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and active.sparkContext.master == master:
        return active
    if check:   # the master first: the quickest check, and a wrong URL is the likeliest
        check_master(master, timeout=timeout)
    if active is not None:
        raise SparkSetupError(f"a SparkSession on {active.sparkContext.master} is already "
                              f"running in this process; stop it before using {master}")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if master_kind(master) == "local":
        # else Spark warns that the hostname resolves to a loopback address
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    if check:
        check_java()
        if master_kind(master) == "local" or _is_loopback_master(master):
            check_python(os.environ["PYSPARK_PYTHON"])
    settings = _session_settings(master, partitions, conf)
    return _start_session(master, app_name, settings, timeout)


def _require_protobuf() -> None:
    try:
        import google.protobuf  # noqa: F401  (transformWithStateInPandas speaks protobuf)
    except ImportError as exc:
        raise SparkSetupError("the spark runtime needs the `protobuf` package "
                              "(pip install protobuf)") from exc


def _session_settings(master: str, partitions: int | None, conf: dict | None) -> dict:
    """The Spark settings of :func:`build_session`'s session: ours (each with its reason),
    then ``conf``."""
    settings = {
        "spark.sql.streaming.stateStore.providerClass": ROCKSDB_PROVIDER,
        # Commit a step by appending a changelog instead of checkpointing RocksDB
        # every micro-batch (one micro-batch is one emulation step)...
        "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
        # and never turn the changelogs into a snapshot. A snapshot only shortens the
        # recovery of a restarted query (it then replays every changelog of the run), and
        # a state store maintenance pass uploads it in the background, also after the
        # query has stopped: it made the folder of a finished query again, after the run
        # had removed it (two leftovers per full test run, one in a run folder).
        "spark.sql.streaming.stateStore.minDeltasForSnapshot": str(2**31 - 1),
        "spark.sql.shuffle.partitions": str(partitions or master_cores(master)),
        "spark.sql.streaming.noDataMicroBatches.enabled": "false",
        # Whatever writes through Hadoop's FileContext (all the query's logs and state
        # changelogs with the default checkpoint manager, some changelog writes with the
        # one below) gets its default checksummed local file system, which adds a .crc
        # file to every write and rename. The raw one skips them: a small step's state
        # commit 156-222 -> 98-151 ms, its wall 0.97-1.22 -> 0.87-1.06 s (paired, machine
        # busy; docs/NOTES.md); with the manager below, the changelogs of 5 micro-batches
        # still cost 22 `chmod`s with it and 35 without. (The RocksDB store itself
        # needs the checksummed FileSystem class, so only FileContext's is swapped.)
        "spark.hadoop.fs.AbstractFileSystem.file.impl": "org.apache.hadoop.fs.local.RawLocalFs",
        # Without Hadoop's native library (pyspark ships none) the FileContext-based
        # checkpoint manager spawns a shell process from the JVM for every log file it
        # writes: `chmod` for the new file, `readlink` for each side of the rename, 15 or
        # more per micro-batch (offsets, commits, the file source's log, a changelog per
        # state partition). The FileSystem-based one renames with java.io (a `chmod` per
        # file and its .crc remain): state commit 68-91 -> 7-16 ms, a small step
        # 0.55-0.61 -> 0.44-0.53 s, a 10^5-tuple step 0.84-0.88 -> 0.76-0.78 s (three
        # runs each, in turn; docs/NOTES.md). Renames on a local or NFS path are atomic.
        # (Set below: checkpoint_file_manager().)
        # A query that found no new input waits pollingDelay before it looks again, so a
        # step's file waits half of it on average: 50 ms cost a measured 45 ms per step,
        # 5 ms costs 4 ms. The query is idle only between the steps of a run (the
        # driver's own work, a few ms), so the faster polling burns little.
        "spark.sql.streaming.pollingDelay": "5ms",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
    }
    manager = checkpoint_file_manager()
    if manager is not None:
        settings["spark.sql.streaming.checkpointFileManagerClass"] = manager
    if master_kind(master) == "local" or _is_loopback_master(master):
        # Named, not left to Spark: it would pick a non-loopback address of this machine
        # (which may not be bindable, e.g. an IPv6 one).
        settings["spark.driver.host"] = settings["spark.driver.bindAddress"] = "127.0.0.1"
    settings.update({key: str(value) for key, value in (conf or {}).items()})
    return settings


def _start_session(master: str, app_name: str, settings: dict, timeout: float):
    """Start the SparkSession with ``settings`` (the JVM's output to ``$TESTBED_SPARK_LOG``
    if set); on a cluster, wait up to ``timeout`` s for a first executor."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    _forget_earlier_settings(set(settings))
    with jvm_output_to(os.environ.get(LOG_ENV)):
        spark = builder.getOrCreate()
    _SETTINGS_SET.update(settings)
    spark.sparkContext.setLogLevel("ERROR")
    if master_kind(master) != "local":
        try:
            wait_for_executors(spark, timeout=timeout)
        except SparkSetupError:
            spark.stop()
            raise
    return spark


#: Spark settings an earlier :func:`build_session` of this process configured.
_SETTINGS_SET: set[str] = set()


def _forget_earlier_settings(keep: set[str]) -> None:
    """Remove from the JVM's system properties the Spark settings an earlier session of
    this process configured and this one does not.

    The first session of a process launches the JVM with its settings as system
    properties, and every later SparkConf starts from them: without this, a session on
    an emulated cluster would leave its driver address, ``spark.cores.max`` and executor
    options to the next session on another master (measured: a driver bound to an
    address gone with its network, and one executor where two workers were free).
    """
    from pyspark import SparkContext

    jvm = SparkContext._jvm
    if jvm is None or not _SETTINGS_SET:     # no JVM yet, or none of ours in it
        return
    properties = jvm.java.lang.System.getProperties()
    for key in sorted(_SETTINGS_SET - keep):
        properties.remove(key)


@functools.cache
def checkpoint_file_manager() -> str | None:
    """The FileSystem-based checkpoint file manager's class in the installed Spark (it
    moved between 4.0 and 4.3), or None when the spark-sql jar holds neither name (then
    Spark keeps its default)."""
    import pyspark

    jars = glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars", "spark-sql_*.jar"))
    if not jars:
        return None
    with zipfile.ZipFile(jars[0]) as jar:
        names = set(jar.namelist())
    return next((cls for cls in CHECKPOINT_FILE_MANAGERS
                 if cls.replace(".", "/") + ".class" in names), None)


def _is_loopback_master(master: str) -> bool:
    if master_kind(master) != "standalone":
        return False
    return all(h in ("localhost", "127.0.0.1", socket.gethostname())
               for h, _ in standalone_endpoints(master))


def master_cores(master: str) -> int:
    """The cores of a ``local[N]`` master, else this machine's.

    >>> master_cores("local[3]"), master_cores("local[2,4]")
    (3, 2)
    """
    m = re.fullmatch(r"local\[(\d+)(,\d+)?\]", master)
    if m:
        return int(m.group(1))
    return os.cpu_count() or 2
