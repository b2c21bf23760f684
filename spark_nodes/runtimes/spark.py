"""The spark runtime: node programs run inside one Spark structured-streaming query.

Every node's program state lives in Spark's RocksDB state store, keyed by the node's
*slot* (a key that puts the nodes evenly on the state partitions,
:mod:`spark_nodes.runtimes.partitions`), and every micro-batch of the query is one
emulation step. :class:`SparkRuntime` offers the same interface as
:class:`spark_nodes.runtimes.inproc.InprocRuntime` and gives the same outputs, because
both call :func:`contract.program.run_node_step`.

How a step travels
------------------
1. The driver writes one Parquet file per step into the query's *inbox* directory: one
   row per node that has events, ``(step, slot, node, t0, t1, run, net_epoch, program,
   net, events)``. ``events`` is the list of :class:`~contract.program.Event`, pickled;
   ``program`` is set only on a node's first step (the initial program, seed and
   algorithm name) and ``net`` only when the node has not seen the current topology epoch
   yet, so the routing snapshot crosses to Spark once per node and epoch. Events and
   step outputs cross by columns (:mod:`spark_nodes.runtimes.codec`).
2. ``query.processAllAvailable()`` runs the micro-batch: the file source reads the file,
   ``groupBy("slot").transformWithStateInPandas(NodeStepProcessor())`` loads each node's
   program from its typed Spark state (:mod:`spark_nodes.runtimes.state`: scalars in a
   ``ValueState``, every buffered tuple and map entry a ``MapState`` row; or the program
   the Python worker kept, when the state's version says it is current), calls
   ``run_node_step`` and writes back only the rows the step changed (``ValueState``
   ``net`` holds the node's NetView).
3. ``foreachBatch`` hands the pickled :class:`~contract.program.StepOutput` rows to a
   driver-side buffer, which :meth:`SparkRuntime.run_step` returns to the backend for
   transport over the emulated links.

Where each step's wall time went (the driver's packing and unpacking, Spark's offsets,
write-ahead log, planning, the node steps in the Python worker, the state commit, the
rest) is kept in :attr:`SparkRuntime.step_times` (:func:`step_breakdown`);
``benchmarks/bench_spark_runtime.py`` prints it.

After every micro-batch the query's state metrics (``numRowsTotal``, ``memoryUsedBytes``)
and the rows its node steps wrote become metric rows ``(t1, -1, "spark", "state_rows" |
"state_bytes" | "state_upserts" | "state_removals", value)``, returned by
:meth:`SparkRuntime.close`; :func:`state_summary` turns them into the summary keys
``spark_state_rows_peak``, ``spark_state_bytes_peak``, ``spark_state_upserts`` and
``spark_state_removals``.

Running on a cluster
--------------------
``SparkRuntime(master="spark://host:7077")`` (``testbed run SPEC --runtime spark
--spark-master spark://host:7077``) runs the node programs on the cluster's executors.
The inbox and checkpoint directories must then be on a file system the executors share
with the driver (``work_dir=``, or the ``TESTBED_SPARK_DIR`` environment variable, e.g.
an NFS mount); on one machine the system temp folder works. ``PYSPARK_PYTHON`` must name
an interpreter with this project installed, of the driver's Python version, on every
worker.

Example
-------
>>> state_summary([(0.1, -1, "spark", "state_rows", 3.0),
...                (0.2, -1, "spark", "state_rows", 5.0),
...                (0.2, -1, "spark", "state_bytes", 900.0),
...                (0.2, -1, "spark", "state_upserts", 4.0)])
{'spark_state_rows_peak': 5.0, 'spark_state_bytes_peak': 900.0, 'spark_state_upserts': 4.0, 'spark_state_removals': 0.0}
"""
from __future__ import annotations

import functools
import logging
import os
import shutil
import tempfile
import time
import uuid
import weakref
from collections import OrderedDict

import pandas as pd
from pyspark import TaskContext
from pyspark.sql.streaming import StatefulProcessor

from contract.program import NodeCall, run_node_calls, run_node_step
from emulator import collector
from spark_nodes.runtimes.codec import (decode_events, decode_output, dumps, dumps_by_value,
                                        encode_events, encode_output, loads)
from spark_nodes.runtimes.partitions import balanced_slots
from spark_nodes.runtimes.state import NodeStore

#: One row per (step, node) written by the driver: the columns and their Spark types.
INPUT_COLUMNS = (("step", "long"), ("slot", "int"), ("node", "int"), ("t0", "double"),
                 ("t1", "double"), ("run", "string"), ("keep", "boolean"),
                 ("net_epoch", "double"), ("program", "binary"), ("net", "binary"),
                 ("events", "binary"), ("calls", "binary"), ("nets", "binary"))
INPUT_DDL = ", ".join(f"{name} {kind}" for name, kind in INPUT_COLUMNS)
#: One row per (step, node) returned by the processor (``seconds``: the node step's time
#: in the Python worker, state reads and writes included; ``upserts``, ``removals``: the
#: state rows the step wrote and removed, see :mod:`spark_nodes.runtimes.state`;
#: ``partition``: the state partition that ran it).
OUTPUT_DDL = ("node int, step long, output binary, seconds double, upserts long, "
              "removals long, partition int")
#: Metric names the runtime records (source ``"spark"``, node -1 = the whole query).
STATE_ROWS, STATE_BYTES = "state_rows", "state_bytes"
STATE_UPSERTS, STATE_REMOVALS = "state_upserts", "state_removals"
#: Set to 1 to rebuild every program from its state rows at every step.
REBUILD_ENV = "TESTBED_SPARK_REBUILD"
#: How Spark words a Python worker that did not connect back within its fixed 10 s.
CONNECT_BACK = "Python worker failed to connect back"

log = logging.getLogger(__name__)

# NetViews already unpickled in this Python worker, by (run, epoch): executors' Python
# workers are reused across micro-batches, so most steps skip unpickling the topology.
_NET_CACHE: OrderedDict = OrderedDict()
_NET_CACHE_SIZE = 8


@functools.cache
def _input_arrow_schema():
    """:data:`INPUT_COLUMNS` as the Arrow schema of the inbox files."""
    import pyarrow as pa

    types = {"long": pa.int64(), "int": pa.int32(), "double": pa.float64(),
             "string": pa.string(), "boolean": pa.bool_(), "binary": pa.binary()}
    return pa.schema([(name, types[kind]) for name, kind in INPUT_COLUMNS])


def _net_epoch(net) -> float:
    # A run without topology (unit tests) has net None: one "epoch" for the whole run.
    return float("-inf") if net is None else float(net.epoch_start)


class NodeStepProcessor(StatefulProcessor):
    """Runs one node's step on its Spark state (see the module docstring)."""

    def init(self, handle) -> None:
        self._store = NodeStore(handle)
        self._net = handle.getValueState("net", "blob binary")

    def handleInputRows(self, key, rows, timerValues=None):
        # The key is the node's slot (its state partition); the node id is in the rows.
        frames = list(rows)
        pdf = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
        node = int(pdf["node"].iat[0])
        out = {name: [] for name in ("step", "output", "seconds", "upserts", "removals")}
        # One micro-batch is one step, but keep step order if a batch ever holds more.
        for row in pdf.sort_values("step").itertuples(index=False):
            started = time.perf_counter()
            out["step"].append(int(row.step))
            # The step allocates an object or more per event and frees nearly all of them
            # by reference counting; the cyclic collector would only rescan them.
            with collector.paused():
                out["output"].append(self._one_step(node, row))
            out["seconds"].append(time.perf_counter() - started)
            out["upserts"].append(self._store.last_write.upserts)
            out["removals"].append(self._store.last_write.removals)
        yield pd.DataFrame({"node": [node] * len(out["step"]), **out,
                            "partition": TaskContext.get().partitionId()})

    def _one_step(self, node: int, row) -> bytes:
        self._store.cache = bool(row.keep)
        state = self._store.load(row.run, node, row.program)
        if row.calls is not None:
            return self._many_steps(node, row, state)
        net = self._load_net(row)
        out = run_node_step(state.program, node, decode_events(row.events),
                            float(row.t0), float(row.t1), net, seed=state.seed,
                            rng_state=state.rng_state, algorithm=state.algorithm,
                            next_local_id=state.next_local_id)
        state.rng_state = out.rng_state
        state.next_local_id = out.next_local_id
        self._store.save(row.run, node, state)
        # The generator state stays in Spark; the driver gets what the inproc runtime gives.
        out.rng_state = None
        return encode_output(out)

    def _many_steps(self, node: int, row, state) -> bytes:
        """Many steps of a run-ahead or deferred node (``emulator.lookahead``)."""
        work = loads(row.calls)
        calls = [NodeCall(t0, t1, decode_events(events)) for t0, t1, events in work["calls"]]
        steps, state.rng_state, state.next_local_id = run_node_calls(
            state.program, node, calls, step=work["step"], horizon=work["horizon"],
            limit=work["limit"], nets=loads(row.nets), timers=work["timers"],
            seed=state.seed, rng_state=state.rng_state, algorithm=state.algorithm,
            next_local_id=state.next_local_id)
        self._store.save(row.run, node, state)
        return dumps(([(t0, t1, first, encode_output(out)) for t0, t1, first, out in steps],
                             work["timers"]))

    def _load_net(self, row):
        cache_key = (row.run, float(row.net_epoch))
        if row.net is not None:
            self._net.update((bytes(row.net),))
            net = loads(row.net)
        elif cache_key in _NET_CACHE:
            return _NET_CACHE[cache_key]
        else:
            net = loads(self._net.get()[0])
        _NET_CACHE[cache_key] = net
        while len(_NET_CACHE) > _NET_CACHE_SIZE:
            _NET_CACHE.popitem(last=False)
        return net

    def close(self) -> None:
        pass


class SparkRuntime:
    """Run node programs inside a Spark structured-streaming query.

    Parameters
    ----------
    master : str
        Spark master URL; ``local[*]`` embeds Spark in this process.
    partitions : int, optional
        State partitions (``spark.sql.shuffle.partitions``); default: the master's cores.
    work_dir : str, optional
        Where the inbox and checkpoint directories go (default: ``$TESTBED_SPARK_DIR``,
        else the system temp folder); on a cluster, a folder every executor sees.
    timeout : float
        Seconds to wait for a cluster master / first executor before failing.
    spark : SparkSession, optional
        An existing session to use instead of building one.
    close_facts : callable, optional
        Called by :meth:`close` while the query's session still runs; the dict it returns
        joins :attr:`facts` (e.g. what an emulated cluster carried on its links).
    keep_programs : bool, optional
        Whether Python workers continue from the programs they ran at the same state
        version (default) or rebuild every program from its state rows at every step
        (``False``; the default follows ``$TESTBED_SPARK_REBUILD=1``: the tests use it to
        show that the typed state alone carries the run, see
        :mod:`spark_nodes.runtimes.state`).

    Attributes
    ----------
    on_phase : callable or None
        Called with a short note on each slow thing the runtime starts (``"starting Spark
        (local[*])…"``, ``"micro-batch 3"``), so a progress bar can say where the time goes;
        the driver sets it for the length of a run.
    """

    name = "spark"
    #: Facts for meta.json (e.g. the emulated cluster it runs on).
    facts: dict = {}
    #: Restarts allowed per micro-batch after Spark's Python worker failed to connect back.
    RESTARTS = 5

    def __init__(self, master: str | None = "local[*]", partitions: int | None = None,
                 work_dir: str | None = None, timeout: float = 300.0, spark=None,
                 close_facts=None, keep_programs: bool | None = None):
        if keep_programs is None:
            keep_programs = os.environ.get(REBUILD_ENV, "") not in ("1", "true", "yes")
        self.keep_programs = keep_programs
        self.master = "local[*]" if master is None else master
        self.partitions = partitions
        self.work_dir = os.environ.get("TESTBED_SPARK_DIR") if work_dir is None else work_dir
        self.timeout = timeout
        self._spark = spark
        self._close_facts = close_facts
        self._query = None
        self._dir = None
        self.restarts = 0   # queries started again from their checkpoint (see _process)
        self.on_phase = None

    # -- Runtime interface -------------------------------------------------------------
    def open(self, plan, programs: dict) -> None:
        """Start the streaming query that will hold ``programs`` (one per node)."""
        if self._spark is None:
            from spark_nodes.runtimes.session import build_session

            self._note(f"starting Spark ({self.master})…")
            self._spark = build_session(self.master, partitions=self.partitions,
                                        timeout=self.timeout)
        self._seed = int(plan.seed)
        self._algorithm = plan.algorithm
        self._programs = dict(programs)
        self._slots = balanced_slots(
            self._programs, int(self._spark.conf.get("spark.sql.shuffle.partitions")))
        self._started: set[int] = set()
        self._net_seen: dict[int, float] = {}
        self._step = 0
        self._run = uuid.uuid4().hex
        self._outputs: dict[int, dict[int, bytes]] = {}
        self._python_seconds: dict[int, float] = {}
        self._rows_written: dict[int, list] = {}
        self._node_partitions: dict[int, int] = {}
        self._metrics: list[tuple] = []
        self.step_times: list[dict] = []
        self._dir = tempfile.mkdtemp(prefix="testbed-spark-", dir=self.work_dir)
        # Removed by close(), or at exit when a failed run never reached close().
        self._remove_dir = weakref.finalize(self, shutil.rmtree, self._dir, True)
        self._inbox = os.path.join(self._dir, "inbox")
        os.makedirs(self._inbox)
        self._query = self._start_query()

    def _start_query(self):
        """The query over the inbox; started again from its checkpoint after a restart."""
        stream = (self._spark.readStream.schema(INPUT_DDL)
                  .option("maxFilesPerTrigger", 1)
                  .option("cleanSource", "delete")   # the inbox stays small over many steps
                  .parquet(self._inbox))
        nodes = stream.groupBy("slot").transformWithStateInPandas(
            statefulProcessor=NodeStepProcessor(), outputStructType=OUTPUT_DDL,
            outputMode="Append", timeMode="None")
        return (nodes.writeStream.foreachBatch(self._collect)
                .option("checkpointLocation", os.path.join(self._dir, "checkpoint"))
                .queryName(f"testbed_nodes_{self._run[:8]}")
                .start())

    def run_step(self, t0: float, t1: float, events_by_node: dict, net) -> dict:
        """Run one step on Spark: one micro-batch with the inbox of every listed node."""
        if self._query is None:
            raise RuntimeError("SparkRuntime.run_step called before open()")
        unknown = sorted(set(events_by_node) - set(self._programs))
        if unknown:
            raise KeyError(f"events for nodes without a program: {unknown}")
        started = time.perf_counter()
        step = self._step
        self._step += 1
        epoch = _net_epoch(net)
        net_blob = None
        rows = {name: [] for name, _ in INPUT_COLUMNS}
        for node in sorted(events_by_node):
            ship_net = None
            if self._net_seen.get(node) != epoch:
                if net_blob is None:
                    net_blob = dumps_by_value(net)
                ship_net = net_blob
                self._net_seen[node] = epoch
            self._add_row(rows, step=step, node=node, t0=t0, t1=t1, net_epoch=epoch,
                          net=ship_net, events=encode_events(events_by_node[node]))
        if not rows["node"]:
            return {}
        return self._micro_batch(step, rows, started, lambda outputs: t1)

    def run_calls(self, work: dict, nets, step: float, limit: float) -> dict:
        """Many steps of some nodes in one micro-batch (``emulator.lookahead``): ``work``
        is ``{node: (calls, timers, horizon)}``; returns ``{node: [(t0, t1, first,
        StepOutput)]}`` and updates each node's ``timers`` in place."""
        started = time.perf_counter()
        batch = self._step
        self._step += 1
        nets_blob = dumps_by_value(nets)
        rows = {name: [] for name, _ in INPUT_COLUMNS}
        t0 = min((calls[0].t0 for calls, _, _ in work.values() if calls), default=0.0)
        for node in sorted(work):
            calls, timers, horizon = work[node]
            blob = dumps({
                "calls": [(c.t0, c.t1, encode_events(c.events)) for c in calls],
                "timers": timers, "horizon": horizon, "step": step, "limit": limit})
            self._add_row(rows, step=batch, node=node, t0=t0, t1=horizon, calls=blob,
                          nets=nets_blob)
        done = {}
        # Spark's state is that of the end of the last step the batch ran.
        def last_t1(outputs):
            return max((t1 for steps, _ in outputs.values() for _, t1, _, _ in steps),
                       default=t0)

        def decode_steps(blob):
            steps, book = loads(blob)
            return [(t0, t1, first, decode_output(out)) for t0, t1, first, out in steps], book

        for node, (steps, book) in self._micro_batch(batch, rows, started, last_t1,
                                                     decode_steps).items():
            timers = work[node][1]
            timers.pending[:] = book.pending
            timers.filed = book.filed
            done[node] = steps
        return done

    def _add_row(self, rows: dict, **values) -> None:
        """One inbox row (columns of :data:`INPUT_DDL`; those not given are null), with
        the run's id and, on the node's first row, its program."""
        node = values["node"]
        values.update(run=self._run, keep=self.keep_programs, slot=self._slots[node],
                      program=self._program_blob(node))
        for column, cells in rows.items():
            cells.append(values.get(column))

    def _program_blob(self, node: int):
        """The node's initial program on its first step (it lives in Spark state after)."""
        if node in self._started:
            return None
        self._started.add(node)
        return dumps_by_value({"program": self._programs[node], "seed": self._seed,
                       "algorithm": self._algorithm})

    def _micro_batch(self, step: int, rows: dict, started: float, when,
                     decode=None) -> dict:
        """Write one inbox file, run its micro-batch; the outputs by node, unpickled.
        Records the state metrics at the virtual time ``when(outputs)`` and where the
        step's time went. ``decode`` unpacks one node's output (default: one step's)."""
        decode = decode_output if decode is None else decode
        # the first micro-batch also starts the Python workers and plans the query
        self._note(f"micro-batch {step + 1}" + (" (warm-up)" if step == 0 else ""))
        self._write_inbox(step, rows)
        written = time.perf_counter()
        self._process()
        processed = time.perf_counter()
        blobs = self._outputs.pop(step, {})
        missing = sorted(set(rows["node"]) - set(blobs))
        if missing:
            raise RuntimeError(f"step {step}: Spark returned no output for nodes {missing}")
        outputs = {node: decode(blobs[node]) for node in sorted(blobs)}
        progress = self._record_state_metrics(when(outputs),
                                              self._rows_written.pop(step, (0, 0)))
        self.step_times.append(step_breakdown(
            started, written, processed, time.perf_counter(), progress,
            self._python_seconds.pop(step, 0.0)))
        return outputs

    def close(self) -> list[tuple]:
        """Stop the query, delete its directories; return the Spark state metric rows.

        :attr:`facts` then holds ``spark_state_partitions``: the executors that ran each
        state partition's tasks, from Spark's status store; ``spark_node_partitions``: the
        state partition that ran each node (``{"node": partition}``, as the Python worker's
        task reported it); and ``spark_query_restarts`` (see :meth:`_process`)."""
        if self._query is not None:
            self.facts = {**self.facts, "spark_state_partitions": state_partition_executors(
                self._spark, self._query.name), "spark_node_partitions": {
                    str(node): p for node, p in sorted(self._node_partitions.items())},
                "spark_query_restarts": self.restarts}
            self._query.stop()
            self._query = None
            if self._close_facts is not None:
                self.facts = {**self.facts, **self._close_facts()}
        if self._dir is not None:
            self._remove_dir()
            self._dir = None
        return list(getattr(self, "_metrics", []))

    # -- internals ---------------------------------------------------------------------
    def _note(self, phase: str) -> None:
        if self.on_phase is not None:
            self.on_phase(phase)

    def _write_inbox(self, step: int, rows: dict) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.table(rows, schema=_input_arrow_schema())
        # Written under a hidden name, then renamed: the file source never sees half a file.
        tmp = os.path.join(self._inbox, f".step-{step:09d}.parquet")
        pq.write_table(table, tmp, compression="none")
        os.rename(tmp, os.path.join(self._inbox, f"step-{step:09d}.parquet"))

    def _process(self) -> None:
        """Run the micro-batches of the inbox's new files.

        Spark starts part of ``transformWithStateInPandas``'s Python side as a process that
        must connect back within a hard-coded 10 s (``PythonWorkerFactory``); on a loaded
        machine it sometimes does not, and the query fails before the micro-batch commits.
        Such a query is started again from its checkpoint, which replays that micro-batch
        (the outputs are keyed by step, the state is the last committed version), up to
        :attr:`RESTARTS` times; any other failure is the node program's.
        """
        from pyspark.errors import StreamingQueryException

        for attempt in range(self.RESTARTS + 1):
            try:
                self._query.processAllAvailable()
                return
            except StreamingQueryException as exc:
                if CONNECT_BACK not in str(exc) or attempt == self.RESTARTS:
                    raise RuntimeError(f"a node program failed inside Spark: {exc}") from exc
                log.warning("micro-batch %d: Spark's Python worker did not connect back in time; "
                            "restarting the query from its checkpoint (%d of %d)",
                            self._step - 1, attempt + 1, self.RESTARTS)
                self.restarts += 1
                self._query = self._start_query()

    def _collect(self, batch_df, batch_id: int) -> None:
        # By Arrow rather than collect(): the outputs are a few large binary cells, which
        # Arrow hands over as they are (10^5-tuple steps: about 0.1 s less, paired, busy
        # machine).
        columns = batch_df.toArrow().to_pydict()
        for node, step, output, seconds, upserts, removals, partition in zip(
                columns["node"], columns["step"], columns["output"], columns["seconds"],
                columns["upserts"], columns["removals"], columns["partition"]):
            self._outputs.setdefault(step, {})[node] = output
            self._node_partitions[node] = partition
            self._python_seconds[step] = self._python_seconds.get(step, 0.0) + seconds
            written = self._rows_written.setdefault(step, [0, 0])
            written[0] += upserts
            written[1] += removals

    def _record_state_metrics(self, t: float, written):
        """Spark's state figures of the last micro-batch as metric rows (its rows and
        memory; the rows the node steps upserted and removed); returns its progress
        report (None if Spark has none)."""
        upserts, removals = written
        self._metrics.append((t, -1, "spark", STATE_UPSERTS, float(upserts)))
        self._metrics.append((t, -1, "spark", STATE_REMOVALS, float(removals)))
        progress = self._query.lastProgress
        if progress is None:
            return None
        operators = progress["stateOperators"]
        rows = sum(int(op["numRowsTotal"]) for op in operators)
        used = sum(int(op["memoryUsedBytes"]) for op in operators)
        self._metrics.append((t, -1, "spark", STATE_ROWS, float(rows)))
        self._metrics.append((t, -1, "spark", STATE_BYTES, float(used)))
        return progress


#: The parts of a step's wall time :func:`step_breakdown` reports, in the order they
#: happen (seconds).
STEP_PARTS = ("driver_encode", "spark_offsets", "spark_wal", "spark_planning",
              "python_steps", "state_commit", "spark_tasks_other", "spark_commit",
              "spark_other", "driver_decode")


def step_breakdown(started, written, processed, done, progress, python_seconds) -> dict:
    """Where one step's wall time went, in seconds (keys :data:`STEP_PARTS` and
    ``wall``), from the driver's clock and the micro-batch's progress report.

    ``driver_encode``: packing and writing the inbox; ``spark_offsets``: the source's
    ``latestOffset`` and ``getBatch`` (file listing); ``spark_wal``: the offset log;
    ``spark_planning``: query planning; ``python_steps``: the node steps in the Python
    worker(s) (summed over nodes, so more than their share of the wall time when
    partitions run in parallel); ``state_commit``: the state store commit;
    ``spark_tasks_other``: the rest of ``addBatch`` (scheduling, shuffle, Arrow transfer,
    state reads and writes, the driver's ``foreachBatch``); ``spark_commit``: the commit
    log; ``spark_other``: the rest of the driver's wait (polling for the new file,
    progress reporting); ``driver_decode``: unpickling the outputs.

    >>> parts = step_breakdown(0.0, 0.01, 0.51, 0.52, {"durationMs": {
    ...     "latestOffset": 40, "getBatch": 5, "walCommit": 40, "queryPlanning": 30,
    ...     "addBatch": 300, "commitOffsets": 40, "triggerExecution": 470},
    ...     "stateOperators": [{"commitTimeMs": 20}]}, 0.08)
    >>> {k: round(v, 3) for k, v in parts.items() if k in ("spark_tasks_other", "spark_other")}
    {'spark_tasks_other': 0.2, 'spark_other': 0.045}
    >>> round(sum(v for k, v in parts.items() if k != "wall"), 3) == parts["wall"]
    True
    """
    ms = (progress or {}).get("durationMs", {})
    commit = sum(op.get("commitTimeMs", 0) for op in (progress or {}).get("stateOperators", []))
    part = {"driver_encode": written - started,
            "spark_offsets": (ms.get("latestOffset", 0) + ms.get("getBatch", 0)) / 1000,
            "spark_wal": ms.get("walCommit", 0) / 1000,
            "spark_planning": ms.get("queryPlanning", 0) / 1000,
            "python_steps": python_seconds,
            "state_commit": commit / 1000,
            "spark_commit": ms.get("commitOffsets", 0) / 1000,
            "driver_decode": done - processed}
    part["spark_tasks_other"] = ms.get("addBatch", 0) / 1000 - python_seconds - commit / 1000
    part["spark_other"] = (processed - written) - sum(
        part[k] for k in ("spark_offsets", "spark_wal", "spark_planning", "python_steps",
                          "state_commit", "spark_tasks_other", "spark_commit"))
    return {**{k: part[k] for k in STEP_PARTS}, "wall": done - started}


def state_partition_executors(spark, query_name: str) -> dict[str, list[str]]:
    """``{state partition: sorted executor ids}`` of the query ``query_name``, from
    Spark's status store: the tasks of its stages that read the shuffle (the stateful
    stages; the file scan writes it). Stages Spark no longer retains are not counted
    (``spark.ui.retainedStages``)."""
    sc = spark.sparkContext
    store = sc._jsc.sc().statusStore()
    gateway = sc._gateway
    stages = store.stageList(None, False, False, gateway.new_array(gateway.jvm.double, 0),
                             None)
    ran: dict[str, set] = {}
    for i in range(stages.size()):
        stage = stages.apply(i)
        description = stage.description()
        if (stage.shuffleReadBytes() == 0 or not description.isDefined()
                or query_name not in description.get()):
            continue
        tasks = store.taskList(stage.stageId(), stage.attemptId(), stage.numTasks())
        for j in range(tasks.size()):
            task = tasks.apply(j)
            ran.setdefault(str(task.index()), set()).add(task.executorId())
    return {p: sorted(ran[p]) for p in sorted(ran, key=int)}


def state_summary(metric_rows) -> dict:
    """Summary keys ``spark_state_rows_peak`` / ``spark_state_bytes_peak`` and the state
    rows the run wrote, ``spark_state_upserts`` / ``spark_state_removals``, from metric
    rows ``(time, node, source, metric, value)`` (other rows are ignored; no rows give
    0.0)."""
    peaks = {STATE_ROWS: 0.0, STATE_BYTES: 0.0}
    totals = {STATE_UPSERTS: 0.0, STATE_REMOVALS: 0.0}
    for _, _, source, metric, value in metric_rows:
        if source != "spark":
            continue
        if metric in peaks:
            peaks[metric] = max(peaks[metric], float(value))
        elif metric in totals:
            totals[metric] += float(value)
    return {"spark_state_rows_peak": peaks[STATE_ROWS],
            "spark_state_bytes_peak": peaks[STATE_BYTES],
            "spark_state_upserts": totals[STATE_UPSERTS],
            "spark_state_removals": totals[STATE_REMOVALS]}
