"""Spark's built-in stream-stream join run on an arrival sequence, in virtual time.

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

from spark_nodes.oracle import cell_size
from spark_nodes.qjoin.programs import JoinNode

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
                      trigger: float = 1.0, master: str = "local[1]", spark=None):
    """Run Spark's stream-stream join on an arrival sequence (arrays in arrival order).

    Returns
    -------
    results : numpy.ndarray
        Rows ``(r_index, s_index, batch)`` (arrival indices, batch number).
    batch_end : list of float
        Virtual end time of each batch.
    state : list of tuple
        ``(batch, numRowsTotal, memoryUsedBytes)`` per batch.
    """
    from spark_nodes.spark_session import build_session

    if spark is None:
        spark = build_session(master)
    spark.conf.set("spark.sql.streaming.numRecentProgressUpdates", "1000000")
    idx = np.arange(len(ts))
    with tempfile.TemporaryDirectory(prefix="spark-join-") as tmp:
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


def cached_spark_stream_join(cache_dir: Path | None, side, ts, time, w, predicate, key, x, y,
                             theta, watermark, trigger, master):
    """:func:`spark_stream_join`, memoized on disk by the full input when ``cache_dir``.

    Sweeps that vary only other algorithms' parameters give Spark the same arrival
    sequence again; the cache answers those runs with the stored output of the first.
    """
    if cache_dir is None:
        return spark_stream_join(side, ts, time, w, predicate, key, x, y, theta, watermark,
                                 trigger, master)
    k = cache_key(side, ts, time, w, predicate, key if key is not None else 0,
                  x if x is not None else 0, y if y is not None else 0,
                  theta if theta is not None else -1.0, watermark, trigger)
    path = Path(cache_dir) / f"{k}.npz"
    if path.is_file():
        with np.load(path) as z:
            return z["results"], z["ends"].tolist(), [tuple(r) for r in z["state"].tolist()]
    results, ends, state = spark_stream_join(side, ts, time, w, predicate, key, x, y, theta,
                                             watermark, trigger, master)
    Path(cache_dir).mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")
    np.savez(tmp, results=results, ends=np.asarray(ends, dtype=float),
             state=np.asarray(state, dtype=np.int64).reshape(-1, 3))
    os.replace(tmp, path)
    return results, ends, state


#: Where ``cache = true`` keeps Spark outputs.
CACHE_DIR = Path(tempfile.gettempdir()) / "testbed-spark-join-cache"


class SparkJoinNode(JoinNode):
    """Join node that hands the arrival sequence to Spark's stream-stream join.

    Arrivals are kept (with their times) during the run; at ``finish`` Spark runs over
    them and every result is emitted at its batch's end time, Spark's state rows and
    bytes recorded per batch (metrics ``spark_state_rows``, ``spark_state_bytes``).
    Tuples that arrive after ``finish`` (network drain) are not joined; their number is
    recorded as ``spark_late_arrivals``. ``memory()`` reports nothing during the run:
    the join's state is Spark's, read from its own metrics. With ``cache``, outputs are
    memoized in :data:`CACHE_DIR` by their full input (:func:`cached_spark_stream_join`).
    """

    def __init__(self, streams, w, predicate, theta, watermark: float, trigger: float,
                 master: str = "local[1]", bytes_per_unit: int = 32, source=None,
                 cache: bool = False):
        super().__init__(streams, bytes_per_unit, source)
        self.w, self.predicate, self.theta = float(w), predicate, theta
        self.watermark, self.trigger, self.master = watermark, trigger, master
        self.cache = cache
        self.log: list = []
        self.done = False

    def arrive(self, ctx, side, tup) -> None:
        if self.done:
            ctx.record("spark_late_arrivals", 1)
        else:
            self.log.append((ctx.now, side, tup))

    def finish(self, ctx) -> None:
        self.done = True
        if not self.log:
            return
        now = ctx.now
        times = np.array([a[0] for a in self.log])
        sides = np.array([a[1] for a in self.log], dtype=np.int8)
        tups = [a[2] for a in self.log]
        ts = np.array([t.ts for t in tups])
        key = x = y = None
        if self.predicate == "equality":
            key = np.array([t.key for t in tups], dtype=np.int64)
        else:
            x = np.array([t.x for t in tups], dtype=float)
            y = np.array([t.y for t in tups], dtype=float)
        results, ends, state = cached_spark_stream_join(
            CACHE_DIR if self.cache else None, sides, ts, times, self.w, self.predicate, key,
            x, y, self.theta, self.watermark, self.trigger, self.master)
        # Results and Spark's metrics belong to the batch ends in virtual time.
        for r_i, s_i, b in results:
            ctx.emit((tups[r_i], tups[s_i]), at=ends[b])
        for b, rows, nbytes in state:
            at = ends[b] if b < len(ends) else now
            ctx.record("spark_state_rows", rows, at=at)
            ctx.record("spark_state_bytes", nbytes, at=at)
        self.log = []
