"""The local sweep's worker processes: a sweep's missing runs, several at a time.

Each worker is a fresh Python (the ``spawn`` start method: nothing of the sweep's process
is copied into it half-way, such as numba's threads, a Spark session's sockets or a
progress bar's lock), started once and reused for run after run, so that imports and
numba's cache on disk are loaded once per worker, not once per run. A worker runs
:func:`experiments.runner.run_spec`, which writes its run folder whole (a hidden
``.tmp-<run_id>-<pid>`` folder, renamed when complete): the sweep gives each run id to
one worker, so no two write the same folder, and a worker or a sweep killed mid-run
leaves at most a hidden folder, which the next run written there removes.

What the sweep's process sees of a worker's run: when it completes (its progress bar
advances), the warnings it raised (said once per sweep, see
:mod:`experiments.sweep_warnings`), its log records (handed to this process's loggers of
the same names, so ``-v`` shows them as a run here would), and its error: the first run
that fails stops the sweep with its error, raised here as the run raised it, after the
other workers are stopped. A worker whose sweep is gone (killed) stops within a second.

Runs that must not run side by side (:func:`one_at_a_time`) run in the sweep's process.

>>> one_at_a_time({"run": {"backend": "simpy", "runtime": "inproc"},
...                "algorithm": {"name": "centralized"}}) is None
True
>>> one_at_a_time({"run": {"backend": "mininet", "runtime": "inproc"},
...                "algorithm": {"name": "centralized"}})[0]
'run.backend'
"""
from __future__ import annotations

import logging
import multiprocessing
import os
import queue
import signal
import threading
import time
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from logging.handlers import QueueHandler
from pathlib import Path
from typing import Callable

from experiments.sweep_spark import SweepRunError
from experiments.sweep_warnings import caught

#: How often a worker looks whether its sweep is still there (seconds).
PARENT_CHECK_S = 0.5


def one_at_a_time(spec: dict) -> tuple[str, str] | None:
    """``(field, why)`` if runs of ``spec`` cannot run side by side on one machine, else
    None."""
    if spec["run"]["backend"] == "mininet":
        return "run.backend", ('"mininet" builds its hosts, links and routes in the '
                               "machine's own network stack, one network at a time")
    if spec["run"]["runtime"] == "spark":
        return "run.runtime", ('"spark" starts a JVM per run, which uses every core '
                               "(local[*]) already")
    if spec["algorithm"]["name"] == "spark-join":
        return "algorithm.name", ('"spark-join" starts a JVM after each run, which uses '
                                  "every core (local[*]) already")
    return None


def run_in_workers(runs: list[tuple[dict, str]], out: Path, base_dir: Path, source: str,
                   jobs: int, done: Callable[[str, list], None]) -> None:
    """Run ``runs`` (resolved spec, the point's name) in ``jobs`` worker processes.

    ``done(point, warnings)`` is called in this process as each run completes, with the
    ``(category, message)`` of every warning the run raised.

    Raises
    ------
    Exception
        The first error a run raised (a :class:`experiments.spec.SpecError`, ...), as
        it was raised, once the other workers are stopped.
    experiments.sweep_spark.SweepRunError
        If a worker process ended before its run was complete (killed, out of memory,
        or it could not start: a script run by path is imported again in each worker,
        so its call of :func:`experiments.sweep` must sit under
        ``if __name__ == "__main__":``, as for any ``spawn`` process).
    """
    context = multiprocessing.get_context("spawn")
    logs = _LogForwarder(context)
    pool = ProcessPoolExecutor(jobs, mp_context=context, initializer=_start_worker,
                               initargs=(logs.queue, _levels(), os.getpid()))
    try:
        futures = {pool.submit(_run, spec, out, base_dir, source): point
                   for spec, point in runs}
        for future in as_completed(futures):
            try:
                said = future.result()
            except BrokenProcessPool:
                raise SweepRunError(
                    f"a worker process ended before run {futures[future]} was complete "
                    "(killed? out of memory? or it could not start: see its error above; "
                    "a script that calls experiments.sweep does so under if __name__ == "
                    f"\"__main__\":, since each worker imports it again); the complete runs "
                    f"are kept in {out}: run the sweep again to run the others") from None
            done(futures[future], said)
    except BaseException:
        _stop_workers(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        logs.close()


def _run(spec: dict, out: Path, base_dir: Path, source: str) -> list[tuple[type, str]]:
    """A worker's task: one run; returns the warnings it raised (sent to the sweep's
    process to be counted, not said here)."""
    from experiments.runner import run_spec

    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        run_spec(spec, out, base_dir, source)
    return caught(records)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Stop every worker now, in the middle of its run (which leaves a hidden folder only).

    ``ProcessPoolExecutor`` has no public way before Python 3.14's ``terminate_workers``;
    ``shutdown`` alone would wait for the runs under way to finish."""
    for process in list((pool._processes or {}).values()):
        process.terminate()


def _levels() -> dict[str, int]:
    """The levels set on this process's loggers (``-v`` sets its packages' to INFO), for
    the workers' loggers: a record a worker would drop here is not sent."""
    loggers = [logging.getLogger(), *(logger for logger in
                                      logging.root.manager.loggerDict.values()
                                      if isinstance(logger, logging.Logger))]
    return {logger.name: logger.level for logger in loggers if logger.level != logging.NOTSET}


def _start_worker(records, levels: dict[str, int], sweep_pid: int) -> None:
    """Set a worker up: its log records go to the sweep's process, at the sweep's levels;
    Ctrl-C is the sweep's to handle (it stops the workers); it ends when its sweep does."""
    root = logging.getLogger()
    root.handlers[:] = [QueueHandler(records)]
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_end_with_sweep, args=(sweep_pid,), daemon=True,
                     name="end-with-sweep").start()


def _end_with_sweep(sweep_pid: int) -> None:
    """End this worker once its sweep's process is gone (``kill -9``): the worker is then
    the child of another process. Nothing else would end it; it would wait for work for
    ever, or finish a run nobody waits for."""
    while os.getppid() == sweep_pid:
        time.sleep(PARENT_CHECK_S)
    os._exit(1)


class _LogForwarder:
    """The workers' log records, handed to this process's loggers of the same names by a
    thread of its own."""

    def __init__(self, context):
        self.queue = context.Queue()
        self._closing = threading.Event()
        # a daemon: a worker stopped while it wrote a record leaves that record half in
        # the pipe, and the thread waiting for its end must not keep the sweep's process
        self._thread = threading.Thread(target=self._forward, daemon=True,
                                        name="worker-logs")
        self._thread.start()

    def _forward(self) -> None:
        while not (self._closing.is_set() and self.queue.empty()):
            try:
                record = self.queue.get(timeout=0.1)
            except queue.Empty:
                continue
            logging.getLogger(record.name).handle(record)

    def close(self) -> None:
        """Forward what the workers sent, then stop (the workers have ended)."""
        self._closing.set()
        self._thread.join(timeout=5.0)
