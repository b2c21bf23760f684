"""Throughput of the QJoin join core against Spark's built-in stream-stream join.

Two streams of ``--tuples`` tuples in total (half each) arrive out of order (event
times at ``--rate`` tuples per second per stream, exponential delays of mean
``--delay`` s). The same arrival sequence is joined by

1. QJoin's symmetric join core in-process, vectorized (:func:`join_arrivals`), with
   fixed delay allowances ``--allowance`` (as Algorithm 1 would set them), on one core;
2. the tuple-at-a-time operator (:class:`SymmetricJoin`) on the first ``--check``
   arrivals, whose results must equal the vectorized core's on the same prefix (the
   exactness check: the fast path changes how results are found, not which);
3. Spark's stream-stream join (watermark ``--allowance`` s, time-range condition) in a
   ``local[1]`` session, micro-batches of ``--trigger`` s of arrivals.

Both an equality join (``--keys`` distinct keys, window ``--w-eq``) and a distance join
(positions uniform on a 105 x 68 m field, ``theta`` = ``--theta`` m, window
``--w-dist``) are run. Printed: tuples per second per core of each engine, result counts.
Spark's time excludes starting the session (and counts the time of writing its input
files). Targets: >= 1e6 tuples/s for the in-process equality join; the distance join
at least as fast as Spark's.

Run: ``PYSPARK_PYTHON=.venv/bin/python .venv/bin/python benchmarks/bench_qjoin.py``
(``--no-spark`` for the in-process part only, ``--tuples 100000`` for a quick look).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from spark_nodes.algorithms.qjoin.operator import SymmetricJoin, join_arrivals
from spark_nodes.workload.tuples import StreamTuple


def make_arrivals(n: int, rate: float, delay: float, keys: int, seed: int):
    """Arrays ``side, ts, time, key, x, y`` of ``n`` tuples in arrival order."""
    rng = np.random.default_rng(seed)
    half = n // 2
    side = np.repeat(np.array([0, 1], dtype=np.int8), [half, n - half])
    ts = np.concatenate([np.cumsum(rng.exponential(1 / rate, half)),
                         np.cumsum(rng.exponential(1 / rate, n - half))])
    arrival = ts + rng.exponential(delay, n)
    key = rng.integers(0, keys, n)
    x = rng.uniform(-52.5, 52.5, n)
    y = rng.uniform(-34.0, 34.0, n)
    o = np.argsort(arrival, kind="stable")
    return side[o], ts[o], arrival[o], key[o], x[o], y[o]


def per_tuple(side, ts, key, x, y, w, predicate, theta, allowance):
    """Results of the tuple-at-a-time operator as ``(later, earlier)`` index pairs."""
    join = SymmetricJoin(w, predicate, theta)
    join.set_allowance(0, allowance)
    join.set_allowance(1, allowance)
    out = []
    for i in range(len(ts)):
        t = StreamTuple("RS"[side[i]], i, float(ts[i]), int(key[i]), float(x[i]), float(y[i]),
                        0)
        partners, _, _ = join.arrive(int(side[i]), t)
        out.extend((i, p.seq) for p in partners)
    return out


def bench(label, data, w, predicate, theta, args, spark):
    side, ts, arrival, key, x, y = data
    n = len(ts)
    attrs = {"key": key} if predicate == "equality" else {"x": x, "y": y, "theta": theta}
    started = time.perf_counter()
    later, earlier = join_arrivals(side, ts, w, predicate, allowance_r=args.allowance,
                                   allowance_s=args.allowance, **attrs)
    fast = time.perf_counter() - started
    print(f"{label}: QJoin core in-process  {n / fast:12,.0f} tuples/s  "
          f"({fast:.2f} s, {len(later):,} results)")

    m = min(args.check, n)
    started = time.perf_counter()
    ref = per_tuple(side[:m], ts[:m], key[:m], x[:m], y[:m], w, predicate, theta,
                    args.allowance)
    slow = time.perf_counter() - started
    pl, pe = join_arrivals(side[:m], ts[:m], w, predicate, allowance_r=args.allowance,
                           allowance_s=args.allowance,
                           **{k: (v[:m] if hasattr(v, "__len__") else v)
                              for k, v in attrs.items()})
    same = ref == list(zip(pl.tolist(), pe.tolist()))
    print(f"{label}: per-tuple operator      {m / slow:12,.0f} tuples/s  "
          f"(first {m:,} arrivals; identical results: {same})")
    if not same:
        sys.exit(f"{label}: vectorized core and per-tuple operator disagree")

    if spark is None:
        return
    from spark_nodes.algorithms.qjoin.spark_join import spark_stream_join

    started = time.perf_counter()
    res, ends, state = spark_stream_join(side, ts, arrival, w, predicate,
                                         watermark=args.allowance, trigger=args.trigger,
                                         spark=spark, **attrs)
    sp = time.perf_counter() - started
    peak = max((s[1] for s in state), default=0)
    print(f"{label}: Spark stream-stream join {n / sp:12,.0f} tuples/s  "
          f"({sp:.1f} s, {len(ends)} micro-batches, {len(res):,} results, "
          f"peak state {peak:,} rows)")
    print(f"{label}: QJoin core / Spark        {sp / fast:10.1f} x")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tuples", type=int, default=1_000_000)
    ap.add_argument("--rate", type=float, default=5000.0, help="tuples/s per stream")
    ap.add_argument("--delay", type=float, default=0.01, help="mean delay (s)")
    ap.add_argument("--allowance", type=float, default=0.02, help="delay allowance (s)")
    ap.add_argument("--keys", type=int, default=1000)
    ap.add_argument("--w-eq", type=float, default=0.1)
    ap.add_argument("--w-dist", type=float, default=0.1)
    ap.add_argument("--theta", type=float, default=1.0)
    ap.add_argument("--trigger", type=float, default=5.0, help="Spark micro-batch (s)")
    ap.add_argument("--check", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-spark", action="store_true")
    args = ap.parse_args(argv)

    data = make_arrivals(args.tuples, args.rate, args.delay, args.keys, args.seed)
    print(f"{args.tuples:,} tuples, {args.rate:g}/s per stream, mean delay {args.delay} s, "
          f"allowance {args.allowance} s")
    spark = None
    if not args.no_spark:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        from spark_nodes.runtimes.session import build_session

        spark = build_session("local[1]")
    bench("equality", data, args.w_eq, "equality", None, args, spark)
    bench("distance", data, args.w_dist, "distance", args.theta, args, spark)


if __name__ == "__main__":
    main()
