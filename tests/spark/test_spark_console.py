"""A run on the spark runtime keeps the console to the testbed: the JVM's output (log4j
lines, warnings, what its Python workers print) goes to spark.log, and the part written
during a run is copied into the run's folder."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.cluster, pytest.mark.slow]

SPEC = Path(__file__).resolve().parents[2] / "experiments" / "specs" / "quickstart.toml"


# In the full suite (a driver and its JVM in a fresh process, 50 s): make test keeps the
# spark runtime on a standalone cluster and in local mode.
@pytest.mark.full_suite
def test_the_jvm_writes_to_spark_log_not_to_the_console(tmp_path):
    text = SPEC.read_text()
    assert "duration = 20.0" in text
    path = tmp_path / "tiny.toml"
    path.write_text(text.replace("duration = 20.0", "duration = 1.0"))
    env = {k: v for k, v in os.environ.items() if k != "TESTBED_SPARK_LOG"}
    proc = subprocess.run([sys.executable, "-m", "testbed.cli", "run", str(path),
                           "--out", str(tmp_path / "runs")], capture_output=True,
                          text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    for noise in ("log4j", "WARN", "NativeCodeLoader", "incubator", "Python worker"):
        assert noise not in proc.stderr and noise not in proc.stdout
    run_dir = Path(proc.stdout.splitlines()[0])
    log = (run_dir / "spark.log").read_text()
    assert "log4j" in log                          # the JVM's start, in the run folder
    assert (tmp_path / "runs" / "spark.log").read_text().startswith(log[:40])
