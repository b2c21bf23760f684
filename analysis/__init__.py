"""Analysis of testbed runs: load into pandas, derive metrics, aggregate seeds, report.

Examples
--------
>>> import analysis
>>> round(analysis.t_quantile(0.975, 9), 3)
2.262

Typical use::

    runs = analysis.load("out/sweep")                 # one row per run
    table = analysis.aggregate(runs, by=["algorithm", "streams.count"],
                               metrics=["comm_cost_per_time", "recall"])
    run = analysis.load_run(runs["run_dir"][0])       # raw tables, read lazily
    cost = analysis.cost_series(run.ledger, bin=1.0)
    changes = analysis.answer_changes(runs)           # swept axes that change the answer
    analysis.report.write_report("out/sweep")         # out/sweep/report/report.html
"""
from analysis import report
from analysis.answers import answer_changes, with_cost_per_result
from analysis.families import MissingFamilySection, section_families
from analysis.loading import (Run, RunFolderError, load, load_run, param_columns,
                              swept_params)
from analysis.series import (cost_series, duplicates, latencies, latency_cdf, latency_stats,
                             memory_series, recall_series)
from analysis.stats import aggregate, ci_halfwidth, t_quantile

__all__ = ["MissingFamilySection", "Run", "RunFolderError", "aggregate",
           "answer_changes", "ci_halfwidth", "cost_series", "duplicates", "latencies",
           "latency_cdf", "latency_stats", "load", "load_run", "memory_series",
           "param_columns", "recall_series", "report", "section_families", "swept_params",
           "t_quantile", "with_cost_per_result"]
