"""Errors users meet before Spark runs get clear messages: Java missing or too old,
PYSPARK_PYTHON wrong, a master that does not answer (within a timeout, not a hang)."""
import socket
import sys
import time

import pytest

from spark_nodes.runtimes import session as ss
from spark_nodes.runtimes.session import SparkSetupError

pytestmark = pytest.mark.spark


def fake_executable(tmp_path, name, script):
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)
    return path


def test_real_java_is_recent_enough():
    assert ss.check_java() >= 17


def test_java_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(SparkSetupError, match=r"Java not found \(JAVA_HOME=.* has no bin/java\)"):
        ss.check_java()


def test_java_missing_from_path(tmp_path, monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SparkSetupError, match="no `java` on PATH and JAVA_HOME unset"):
        ss.check_java()


def test_java_too_old(tmp_path, monkeypatch):
    (tmp_path / "bin").mkdir()
    fake_executable(tmp_path / "bin", "java",
                    "echo 'openjdk version \"11.0.21\" 2023-10-17' >&2\n")
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(SparkSetupError, match="is Java 11; Spark needs Java 17 or newer"):
        ss.check_java()


def test_java_version_parsing():
    assert ss.java_major('openjdk version "21" 2023-09-19') == 21
    assert ss.java_major('java version "1.8.0_392"') == 8
    with pytest.raises(SparkSetupError, match="cannot read the Java version"):
        ss.java_major("command not found")


def test_project_python_passes():
    ss.check_python(sys.executable)


def test_pyspark_python_missing():
    with pytest.raises(SparkSetupError, match=r"PYSPARK_PYTHON=/no/such/python: no such "
                                              r"executable"):
        ss.check_python("/no/such/python")


def test_pyspark_python_other_version(tmp_path):
    python = fake_executable(tmp_path, "python", "echo 3.9\n")
    with pytest.raises(SparkSetupError, match=r"is Python 3.9 but the driver is Python 3\.\d+"):
        ss.check_python(str(python))


def test_pyspark_python_without_the_project(tmp_path):
    python = fake_executable(tmp_path, "python",
                             "echo \"ModuleNotFoundError: No module named 'spark_nodes'\" >&2\n"
                             "exit 1\n")
    with pytest.raises(SparkSetupError, match="cannot import pyspark and spark_nodes "
                                              r"\(ModuleNotFoundError"):
        ss.check_python(str(python))


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_master_unreachable_fails_fast():
    port = closed_port()
    started = time.monotonic()
    with pytest.raises(SparkSetupError, match=rf"Spark master spark://127.0.0.1:{port} "
                                              r"unreachable within 2 s"):
        ss.check_master(f"spark://127.0.0.1:{port}", timeout=2.0)
    assert time.monotonic() - started < 5


def test_master_that_never_answers_times_out():
    # A listening socket whose backlog is full: the SYN is never answered.
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(0)
        port = server.getsockname()[1]
        fillers = []
        for _ in range(4):
            c = socket.socket()
            c.setblocking(False)
            c.connect_ex(("127.0.0.1", port))
            fillers.append(c)
        started = time.monotonic()
        try:
            with pytest.raises(SparkSetupError, match=r"unreachable within 1 s .*timed out"):
                ss.check_master(f"spark://127.0.0.1:{port}", timeout=1.0)
        finally:
            for c in fillers:
                c.close()
        assert 0.9 < time.monotonic() - started < 4


def test_bad_master_urls():
    with pytest.raises(SparkSetupError, match="expected spark://HOST:PORT"):
        ss.check_master("spark://nohostport")
    with pytest.raises(SparkSetupError, match=r"expected local, local\[N\]"):
        ss.check_master("local[two]")


def test_build_session_refuses_unreachable_master():
    port = closed_port()
    with pytest.raises(SparkSetupError, match="unreachable"):
        ss.build_session(f"spark://127.0.0.1:{port}", timeout=1.0)


def test_build_session_configures_rocksdb():
    spark = ss.build_session("local[2]", partitions=2)
    assert spark.conf.get("spark.sql.streaming.stateStore.providerClass") == ss.ROCKSDB_PROVIDER
    assert spark.conf.get("spark.sql.shuffle.partitions") == "2"
    # The FileSystem-based checkpoint manager, under a name this Spark's JVM can load.
    manager = spark.conf.get("spark.sql.streaming.checkpointFileManagerClass")
    assert manager in ss.CHECKPOINT_FILE_MANAGERS
    assert spark.sparkContext._jvm.java.lang.Class.forName(manager).getName() == manager
    assert ss.build_session("local[2]") is spark
    with pytest.raises(SparkSetupError, match="already running in this process"):
        ss.build_session("local[1]")


def test_a_session_does_not_inherit_an_earlier_sessions_settings():
    """The JVM keeps the first session's settings as system properties; a later session
    must not run with what an earlier one configured (an emulated cluster's driver
    address and core cap once reached the next session on another master)."""
    ss.stop_active_session()
    first = ss.build_session("local[1]", conf={"spark.cores.max": "1",
                                               "spark.executor.extraJavaOptions": "-Dx=1"})
    assert first.sparkContext.getConf().get("spark.cores.max") == "1"
    ss.stop_active_session()
    second = ss.build_session("local[1]")
    conf = second.sparkContext.getConf()
    assert conf.get("spark.cores.max", None) is None
    assert "-Dx=1" not in (conf.get("spark.executor.extraJavaOptions", None) or "")
    assert conf.get("spark.driver.host") == "127.0.0.1"
    ss.stop_active_session()
