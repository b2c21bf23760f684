"""The operators: each algorithm places one node program
(:class:`contract.program.NodeProgram`) per node that has a role, and registers itself by
name (:mod:`.registry`).

Families, one sub-package each: :mod:`.smj` (SMJ-E/H, Lottery, naive), :mod:`.qjoin`
(QJoin, K-slack, MP-K-slack, Spark's join), :mod:`.ctr` (ATR, CTR, single host),
:mod:`.enrich` (lookups); :mod:`.centralized` is the baseline every family is compared
with. Shared pieces: :mod:`.multiway` (the incremental multi-way join), :mod:`.oracle`
(the exact answer and the join semantics) and :mod:`.triggers` (windows triggered by
rates and exceptions). Operators never import pyspark or mininet.
"""
