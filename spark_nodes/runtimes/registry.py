"""The runtimes that execute node programs, by name: ``inproc`` and ``spark``.

A runtime entry is a context manager ``open_runtime(plan)`` that yields the runtime object
the driver calls (``open``, ``run_step``, ``close``) and releases what it started.

>>> RUNTIMES.names()
['inproc', 'spark']
"""
from __future__ import annotations

from contextlib import contextmanager

from contract.registry import Registry


@contextmanager
def open_inproc(plan):
    """The in-process runtime (the reference)."""
    from spark_nodes.runtimes.inproc import InprocRuntime

    yield InprocRuntime()


@contextmanager
def open_spark(plan):
    """The Spark runtime on ``run.spark_master`` (default ``local[*]``), or, with
    ``[mininet] spark_master`` in the spec, on a standalone cluster whose master and
    workers sit in Mininet hosts, so Spark's own traffic crosses emulated links (the
    testbed's messages still use the run's backend)."""
    from spark_nodes.runtimes.spark import SparkRuntime

    table = plan.spec.get("mininet") or {}
    if table.get("spark_master") is None:
        yield SparkRuntime(master=plan.spec["run"]["spark_master"])
        return
    from emulator.mininet.options import MininetOptions
    from emulator.mininet.spark_cluster import emulated_spark
    from spark_nodes.runtimes.session import build_session

    options = MininetOptions.from_table(table, f"spec of run {plan.name!r}")
    with emulated_spark(plan, options) as cluster:
        sent_before = cluster.em.tx_bytes()
        spark = build_session(cluster.master_url, conf=cluster.conf)

        def cluster_facts() -> dict:
            return {"spark_cluster": {"master": options.spark_master,
                                      "workers": list(options.spark_workers),
                                      "executor_nodes": cluster.executor_nodes(spark),
                                      "link_bytes": cluster.bytes_sent_since(sent_before)}}

        try:
            yield SparkRuntime(spark=spark, close_facts=cluster_facts)
        finally:
            spark.stop()


def spark_summary(plan, output) -> dict:
    """The spark runtime's keys of a run's summary (its entry's ``summary_keys``): Spark's
    state figures, ``spark_state_*`` (:func:`spark_nodes.runtimes.spark.state_summary`),
    on the simpy backend."""
    if plan.backend != "simpy":
        return {}
    from spark_nodes.runtimes.spark import state_summary

    return state_summary(
        output.metrics[["time", "node", "source", "metric", "value"]].itertuples(index=False))


open_spark.summary_keys = spark_summary


RUNTIMES = Registry("runtime", {"inproc": "spark_nodes.runtimes.registry:open_inproc",
                                "spark": "spark_nodes.runtimes.registry:open_spark"})
