"""Real Babel daemons route the emulated network (``[network] routing = "babel"``)."""
import json
import os
import shutil
import sys
import time

import pytest

import experiments
from emulator.mininet.babel import BabelDaemons, working_path
from emulator.mininet.emulation import Emulation, LinkSetting
from emulator.mininet.naming import RunNames, process_argv
from .mininet_specs import smoke_spec

pytestmark = [pytest.mark.mininet,
              pytest.mark.skipif(shutil.which("babeld") is None,
                                 reason="needs Debian's babeld (make setup installs it as root)")]

SMOKE_NODES = range(5)
SMOKE_EDGES = [(0, 1), (1, 2), (2, 3), (3, 4), (1, 3), (0, 4)]


@pytest.fixture(scope="module")
def babel_run(tmp_path_factory):
    raw = smoke_spec(**{"run.backend": "mininet", "network.routing": "babel",
                        "mininet.time_scale": 1.0})
    return experiments.run(raw, out=tmp_path_factory.mktemp("babel"))


def test_babel_routes_the_smoke_run_to_the_exact_answer(babel_run):
    info = json.loads((babel_run.path / "meta.json").read_text())["backend_info"]
    babel = info["babel"]
    assert info["routing"] == "babel" and babel["daemons"] == 5
    assert 0 < babel["converged_s"] < 10 and babel["hello_interval_s"] > 0
    # every daemon ran until the end and left on SIGTERM
    assert babel["died_early"] == [] and set(babel["exit_codes"].values()) == {0}
    groups = set(babel_run.results["group"])
    assert len(groups) > 20 and groups == set(babel_run.expected["group"])
    assert babel_run.summary["recall"] == 1.0 and babel_run.summary["duplicates"] == 0
    # The wire carries Babel's hellos and updates beside the agents' TCP
    assert info["bytes_on_wire"] > info["bytes"] > 0


def test_the_daemons_are_gone_after_the_run(babel_run):
    info = json.loads((babel_run.path / "meta.json").read_text())["backend_info"]
    names = RunNames(info["run_prefix"])
    for pid in info["babel"]["pids"].values():
        argv = process_argv(pid)
        assert argv is None or not names.owns_process(argv), f"babeld {pid} still runs"


def connect_refused(em, src: int, dst: int) -> bool:
    """True if a TCP connection from ``src`` to a closed port of ``dst`` is refused (the
    SYN got there and the reset came back)."""
    code = ("import socket\ntry:\n    socket.create_connection(('%s', 9), timeout=2)\n"
            "except ConnectionRefusedError:\n    print('refused')\nexcept OSError as e:\n"
            "    print(e)\n" % RunNames.address(dst))
    path = em.names.state_dir / "connect.py"
    path.write_text(code)
    return em.hosts[src].cmd(f"{sys.executable} {path}").strip() == "refused"


def path_settled(babel, up, src: int, dst: int, want, timeout: float = 60.0) -> list[int]:
    """The path from ``src`` to ``dst`` once ``want(path)`` holds, or the last one seen
    after ``timeout`` wall seconds. Babel chooses by a smoothed metric (half-life 4 s), so
    the first working route after convergence need not be the best one yet: in one CI run
    node 0 reached 1 through 4 and 3 at first and took the direct link later; in a full
    suite on two busy cores it still went through them after 20 s (the daemons and the
    links' shaper starved, hellos late, the direct link's cost high), alone it settles
    in under 10 s."""
    deadline = time.monotonic() + timeout
    while True:
        path = working_path(babel.hops(), up, src, dst)
        if (path and want(path)) or time.monotonic() > deadline:
            return path
        time.sleep(0.1)


def test_babel_routes_around_a_broken_link_and_its_daemons_stop_by_pid():
    em = Emulation(SMOKE_NODES, SMOKE_EDGES, time_scale=1.0, seed=1, routes="daemons")
    up = {(a, b): LinkSetting(delay=0.005) for u, v in SMOKE_EDGES
          for a, b in ((u, v), (v, u))}
    try:
        em.start()
        em.apply(up, {})
        babel = BabelDaemons(em)
        with babel:
            babel.wait_converged(timeout=20.0)
            # the pids this test will see gone are the daemons' own
            for n, pid in babel.pids.items():
                assert os.path.basename(process_argv(pid)[0]) == "babeld"
                assert int((em.names.state_dir / f"babel{n}.pid").read_text()) == pid
            assert path_settled(babel, set(up), 0, 1, lambda p: p == [0, 1]) == [0, 1]
            assert connect_refused(em, 0, 1)
            down = {link: s for link, s in up.items() if set(link) != {0, 1}}
            em.apply(down, {})
            babel.wait_converged(timeout=20.0)
            around = path_settled(babel, set(down), 0, 1, lambda p: len(p) > 2)
            assert around[0] == 0 and around[-1] == 1 and len(around) > 2
            assert connect_refused(em, 0, 1)
        assert set(babel.exit_codes.values()) == {0} and babel.died_early == []
        assert all(process_argv(pid) is None or not em.names.owns_process(process_argv(pid))
                   for pid in babel.pids.values())
    finally:
        em.stop()


def test_daemons_are_stopped_when_the_run_fails_before_its_agents_start(tmp_path, monkeypatch):
    started = {}

    def fail(self, timeout=30.0):
        started.update(prefix=self.em.names.prefix, pids=self.pids)
        raise RuntimeError("no convergence (on purpose)")

    monkeypatch.setattr(BabelDaemons, "wait_converged", fail)
    raw = smoke_spec(**{"run.backend": "mininet", "network.routing": "babel"})
    with pytest.raises(RuntimeError, match="on purpose"):
        experiments.run(raw, out=tmp_path)
    names = RunNames(started["prefix"])
    assert len(started["pids"]) == 5
    for pid in started["pids"].values():
        argv = process_argv(pid)
        assert argv is None or not names.owns_process(argv), f"babeld {pid} still runs"
