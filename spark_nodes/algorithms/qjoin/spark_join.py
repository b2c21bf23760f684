"""Spark's built-in stream-stream join run on an arrival sequence, in virtual time.

The ``spark-join`` baseline's join node only records its arrivals (the trace table
:data:`ARRIVALS`); after the run, the runner hands them to :func:`join_pass`, which runs
the query below in the driver and turns its output into the run's results and metrics.

The arrivals are cut into micro-batches of ``trigger`` virtual time units by arrival
time; batch ``k`` is written as one parquet file and a real local SparkSession reads the
folder with a file stream source (``maxFilesPerTrigger = 1``, files ordered by their
modification times, which are set to the batch numbers), ``trigger(availableNow=True)``,
so each file is exactly one micro-batch. The query is Spark's own inner stream-stream
join: a watermark of ``watermark`` time units on each side and the time-range condition
``r.t BETWEEN s.t - w AND s.t + w`` (widened by one microsecond, with the exact
``abs(r.ts - s.ts) <= w`` on the float times beside it, so results equal the oracle's
semantics). Spark refuses a stream-stream join without an equality, so the distance join
is an equi-join on grid cells of size ``theta`` (R in its 3 x 3 neighbourhood) plus
``hypot(dx, dy) <= theta``.

A result of batch ``k`` is emitted at the batch's end, ``(k + 1) * trigger`` (Spark's
processing time is not part of virtual time). Spark's state metrics (``numRowsTotal``,
``memoryUsedBytes``) come from each batch's progress report.

Event times are shifted by :data:`EPOCH_OFFSET` seconds before becoming timestamps:
Spark treats a watermark of 0 (the Unix epoch) as "no watermark yet" and drops the
first results of a stream whose times start at 0.
"""
from __future__ import annotations

import hashlib
import math
import os
import tempfile
from pathlib import Path

import numpy as np

from spark_nodes.algorithms.oracle import cell_size
from spark_nodes.algorithms.qjoin.programs import JoinNode
from spark_nodes.runtimes.session import master_cores

#: Seconds added to event times before they become Spark timestamps (see module text).
EPOCH_OFFSET = 1_000_000_000
#: Modification time of batch file 0; batch k gets this + k seconds (fixed, never "now").
_MTIME_BASE = 1_500_000_000


def _micros(seconds) -> np.ndarray:
    return np.round((np.asarray(seconds, dtype=float) + EPOCH_OFFSET) * 1e6).astype(np.int64)


def write_batches(folder: Path, side, idx, ts, key, x, y, time, trigger: float,
                  theta: float | None) -> list[float]:
    """Write one parquet file per non-empty micro-batch; return each batch's end time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    side = np.asarray(side, dtype=np.int8)
    ts = np.asarray(ts, dtype=float)
    xs = np.asarray(x, dtype=float) if x is not None else np.full(ts.size, np.nan)
    ys = np.asarray(y, dtype=float) if y is not None else np.full(ts.size, np.nan)
    keys = np.asarray(key, dtype=np.int64) if key is not None else np.zeros(ts.size, np.int64)
    size = cell_size(theta) if theta is not None else 1.0
    with np.errstate(invalid="ignore"):
        cx = np.nan_to_num(np.floor(xs / size)).astype(np.int64)
        cy = np.nan_to_num(np.floor(ys / size)).astype(np.int64)
    batch = np.floor(np.asarray(time, dtype=float) / trigger + 1e-9).astype(np.int64)
    ends = []
    for n, b in enumerate(np.unique(batch)):
        sel = batch == b
        table = pa.table({
            "side": pa.array(side[sel]), "idx": pa.array(np.asarray(idx)[sel], pa.int64()),
            "ts": pa.array(ts[sel]), "t_us": pa.array(_micros(ts[sel])),
            "key": pa.array(keys[sel]), "x": pa.array(xs[sel]), "y": pa.array(ys[sel]),
            "cx": pa.array(cx[sel]), "cy": pa.array(cy[sel])})
        path = folder / f"batch-{n:08d}.parquet"
        pq.write_table(table, path)
        os.utime(path, (_MTIME_BASE + n, _MTIME_BASE + n))
        ends.append(float((b + 1) * trigger))
    return ends


def build_query(spark, folder: Path, w: float, predicate: str, theta: float | None,
                watermark: float):
    """The streaming DataFrame of joined ``(r_idx, s_idx)`` pairs read from ``folder``."""
    from pyspark.sql import functions as F

    schema = spark.read.parquet(str(folder)).schema
    src = (spark.readStream.schema(schema).option("maxFilesPerTrigger", 1)
           .parquet(str(folder)).withColumn("t", F.timestamp_micros("t_us")))
    delay = f"{int(round(watermark * 1e6))} microseconds"

    def side(k, p):
        cols = [F.col(c).alias(f"{p}_{c}") for c in ("idx", "ts", "t", "key", "x", "y")]
        df = src.filter(F.col("side") == k)
        if predicate == "distance" and p == "r":
            shifts = [F.struct((F.col("cx") + i).alias("cx"), (F.col("cy") + j).alias("cy"))
                      for i in (-1, 0, 1) for j in (-1, 0, 1)]
            df = df.withColumn("cell", F.explode(F.array(*shifts)))
            cols += [F.col("cell.cx").alias("r_cx"), F.col("cell.cy").alias("r_cy")]
        else:
            cols += [F.col("cx").alias(f"{p}_cx"), F.col("cy").alias(f"{p}_cy")]
        return df.select(*cols).withWatermark(f"{p}_t", delay)

    r, s = side(0, "r"), side(1, "s")
    span = f"INTERVAL {int(math.ceil(w * 1e6)) + 1} MICROSECONDS"
    cond = (f"r_t >= s_t - {span} AND r_t <= s_t + {span} "
            f"AND abs(r_ts - s_ts) <= {float(w)!r}")
    if predicate == "equality":
        cond = f"r_key = s_key AND {cond}"
    else:
        cond = (f"r_cx = s_cx AND r_cy = s_cy AND {cond} "
                f"AND hypot(r_x - s_x, r_y - s_y) <= {float(theta)!r}")
    return r.join(s, F.expr(cond)).select("r_idx", "s_idx")


def spark_stream_join(side, ts, time, w: float, predicate: str = "equality", key=None,
                      x=None, y=None, theta: float | None = None, watermark: float = 0.0,
                      trigger: float = 1.0, master: str = "local[1]", spark=None,
                      work_dir: Path | None = None):
    """Run Spark's stream-stream join on an arrival sequence (arrays in arrival order).

    Returns
    -------
    results : numpy.ndarray
        Rows ``(r_index, s_index, batch)`` (arrival indices, batch number).
    batch_end : list of float
        Virtual end time of each batch.
    state : list of tuple
        ``(batch, numRowsTotal, memoryUsedBytes)`` per batch.

    The input files and the checkpoint go to a temporary folder inside ``work_dir``
    (default: the system's), removed on return.
    """
    from spark_nodes.runtimes.session import build_session

    if spark is None:
        spark = build_session(master)
    spark.conf.set("spark.sql.streaming.numRecentProgressUpdates", "1000000")
    idx = np.arange(len(ts))
    if work_dir is not None:
        Path(work_dir).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="spark-join-", dir=work_dir) as tmp:
        folder = Path(tmp) / "in"
        folder.mkdir()
        ends = write_batches(folder, side, idx, ts, key, x, y, time, trigger, theta)
        if not ends:
            return np.empty((0, 3), dtype=np.int64), [], []
        collected: list = []

        def sink(df, batch_id):
            rows = df.toPandas()
            if len(rows):
                collected.append(np.column_stack([rows["r_idx"].to_numpy(np.int64),
                                                  rows["s_idx"].to_numpy(np.int64),
                                                  np.full(len(rows), batch_id, np.int64)]))

        query = (build_query(spark, folder, w, predicate, theta, watermark)
                 .writeStream.foreachBatch(sink).trigger(availableNow=True)
                 .option("checkpointLocation", str(Path(tmp) / "checkpoint")).start())
        query.awaitTermination()
        state = []
        for p in query.recentProgress:
            ops = p["stateOperators"]
            state.append((int(p["batchId"]), sum(int(o["numRowsTotal"]) for o in ops),
                          sum(int(o["memoryUsedBytes"]) for o in ops)))
    results = np.concatenate(collected) if collected else np.empty((0, 3), dtype=np.int64)
    # Spark does not promise an order within a batch: sort for a deterministic output.
    results = results[np.lexsort((results[:, 0], results[:, 1], results[:, 2]))]
    return results, ends, state


def cache_key(*parts) -> str:
    """SHA-256 over arrays and scalars (and the PySpark version): the identity of a Spark
    join's input.

    >>> cache_key(np.arange(3), 0.5) == cache_key(np.arange(3), 0.5) != cache_key(np.arange(3), 1.0)
    True
    """
    import pyspark

    h = hashlib.sha256(pyspark.__version__.encode())
    for part in parts:
        a = np.asarray(part)
        h.update(repr((a.dtype.str, a.shape)).encode())
        h.update(np.ascontiguousarray(a).tobytes() if a.dtype != object else repr(part).encode())
    return h.hexdigest()


#: The trace table of the arrivals a :class:`SparkJoinNode` records for the Spark pass.
ARRIVALS = "spark_join_arrivals"


class SparkJoinNode(JoinNode):
    """Join node of the ``spark-join`` baseline: it records the arrival sequence.

    Every arrival before ``finish`` becomes a row of the trace table :data:`ARRIVALS`
    (``time``, ``node``, ``side``, the tuple's fields); Spark's own stream-stream join
    runs over that table after the run, in the driver (:func:`join_pass`, called by the
    runner), because a node program may run inside a Spark task, which cannot start a
    query of its own. Tuples that arrive after ``finish`` (network drain) are not joined;
    their number is recorded as ``spark_late_arrivals``. ``memory()`` reports nothing:
    the join's state is Spark's, read from its own metrics. The join's parameters are
    the plan's; the pass reads them there.
    """

    def __init__(self, streams, bytes_per_unit: int = 32, source=None):
        super().__init__(streams, bytes_per_unit, source)
        self.done = False

    def arrive(self, ctx, side, tup) -> None:
        if self.done:
            ctx.record("spark_late_arrivals", 1)
        else:
            ctx.trace(ARRIVALS, side=side, stream=tup.stream, seq=tup.seq, ts=tup.ts,
                      key=tup.key, x=tup.x, y=tup.y, entered_at=tup.entered_at)

    def finish(self, ctx) -> None:
        self.done = True


def join_pass(plan, arrivals, previous: Path | None, scratch: Path):
    """Run Spark's stream-stream join over a run's recorded ``arrivals`` (the trace table
    :data:`ARRIVALS`, rows in arrival order); return ``(result rows, metric rows, output
    file bytes)``.

    A result of batch ``k`` is emitted by the join node at the batch's end; Spark's state
    rows and bytes become metrics ``spark_state_rows`` / ``spark_state_bytes`` at each
    batch's end. The session is the process's active one (the spark runtime's), else one
    on ``params.master``; the query gets as many state partitions as ``params.master``
    has cores either way, so its state figures do not depend on the runtime.

    ``scratch`` holds the query's input files and checkpoint (removed afterwards). The
    output file (``np.savez``: the input's hash, results, batch ends, state) goes into the
    run folder; with ``params.cache``, the same file in ``previous`` (the run folder of
    an earlier run of the same spec) answers an identical input without Spark.
    """
    import io

    p, q = plan.params, plan.query
    w = float(plan.query.windows[plan.stream_names[0]])
    equality = q.predicate == "equality"
    side = arrivals["side"].to_numpy(np.int8)
    ts = arrivals["ts"].to_numpy(float)
    time = arrivals["time"].to_numpy(float)
    key = arrivals["key"].to_numpy(np.int64) if equality else None
    x = None if equality else arrivals["x"].to_numpy(float)
    y = None if equality else arrivals["y"].to_numpy(float)
    digest = cache_key(side, ts, time, w, q.predicate, key if key is not None else 0,
                       x if x is not None else 0, y if y is not None else 0,
                       q.theta if q.theta is not None else -1.0, p["watermark"],
                       p["trigger"], master_cores(p["master"]))
    cached = _read_output(previous, digest) if p["cache"] and previous else None
    if cached is None:
        cached = _spark_output(side, ts, time, w, q.predicate, key, x, y, q.theta,
                               p["watermark"], p["trigger"], p["master"], scratch)
    results, ends, state = cached
    node = int(arrivals["node"].iloc[0])
    names = (arrivals["stream"].astype(str) + ":" + arrivals["seq"].astype(str)).tolist()
    entered = arrivals["entered_at"].to_numpy(float)
    rows = []
    for r_i, s_i, b in results.tolist():
        pair = (r_i, s_i)
        rows.append({"group": "|".join(sorted(names[i] for i in pair)),
                     "emitted_at": float(ends[b]), "node": node,
                     "first_entered": float(min(entered[i] for i in pair)),
                     "last_entered": float(max(entered[i] for i in pair))})
    metrics = []
    for b, n_rows, nbytes in state:
        at = float(ends[b]) if b < len(ends) else float(plan.duration)
        metrics.append((at, node, plan.algorithm, "spark_state_rows", float(n_rows)))
        metrics.append((at, node, plan.algorithm, "spark_state_bytes", float(nbytes)))
    buf = io.BytesIO()
    np.savez(buf, key=np.array(digest), results=results, ends=np.asarray(ends, dtype=float),
             state=np.asarray(state, dtype=np.int64).reshape(-1, 3))
    return rows, metrics, buf.getvalue()


def _read_output(path: Path, digest: str):
    """``(results, ends, state)`` of an output file whose input hash is ``digest``."""
    if not path.is_file():
        return None
    with np.load(path) as z:
        if str(z["key"]) != digest:
            return None
        return z["results"], z["ends"].tolist(), [tuple(r) for r in z["state"].tolist()]


def _spark_output(side, ts, time, w, predicate, key, x, y, theta, watermark, trigger,
                  master, scratch: Path):
    from pyspark.sql import SparkSession

    from spark_nodes.runtimes.session import build_session

    spark = SparkSession.getActiveSession() or build_session(master)
    partitions = spark.conf.get("spark.sql.shuffle.partitions")
    # The join's state partitions are fixed when its query starts.
    spark.conf.set("spark.sql.shuffle.partitions", str(master_cores(master)))
    try:
        return spark_stream_join(side, ts, time, w, predicate, key, x, y, theta, watermark,
                                 trigger, master, spark=spark, work_dir=scratch)
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", partitions)
