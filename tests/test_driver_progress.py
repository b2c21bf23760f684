"""The run's progress bar: a runtime with slow phases names them on it while it runs."""
from emulator.driver import execute
from spark_nodes.runtimes.inproc import InprocRuntime
from experiments.planning import make_plan
from tests.test_driver import Collect, Forward, chain_dynamics, tuples


class PhasedRuntime(InprocRuntime):
    """Reports a phase when it opens and at every step, as the spark runtime does."""

    def __init__(self):
        super().__init__()
        self.on_phase = None
        self.hooked = []

    def open(self, plan, programs):
        self.hooked.append(self.on_phase is not None)
        if self.on_phase is not None:
            self.on_phase("starting")
        super().open(plan, programs)

    def _phase(self, t0):
        self.hooked.append(self.on_phase is not None)
        if self.on_phase is not None:
            self.on_phase(f"step at {t0:g}")

    def run_step(self, t0, t1, events_by_node, net):
        self._phase(t0)
        return super().run_step(t0, t1, events_by_node, net)

    def run_window(self, t0, t1, events_by_node, net):   # what the driver calls here
        self._phase(t0)
        return super().run_window(t0, t1, events_by_node, net)


def run(progress):
    runtime = PhasedRuntime()
    out = execute(make_plan(dynamics=chain_dynamics()), {0: Forward(3), 3: Collect()},
                  tuples(20), runtime, progress=progress, run_ahead=False)
    return out, runtime


def test_the_bar_hears_every_phase_and_lets_go_after_the_run():
    out, runtime = run(progress=True)
    assert len(out.results) == 20
    assert len(runtime.hooked) > 2 and all(runtime.hooked)   # open and every step
    assert runtime.on_phase is None


def test_without_a_bar_the_runtime_is_left_alone():
    out, runtime = run(progress=False)
    assert not any(runtime.hooked) and runtime.on_phase is None
    assert out.results.equals(run(progress=True)[0].results)
