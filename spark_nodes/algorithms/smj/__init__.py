"""The SMJ family: synopsis-based multi-join in an ad hoc network and its baselines.

Algorithms (registered by :mod:`spark_nodes.algorithms.smj.algorithms`):

* ``smj-e`` / ``smj-h`` — sites send per-period synopsis deltas to a *synopsis center*
  that filters each block and chooses its execution order exactly (SMJE) or by one-step
  look-ahead (SMJH); the center sits at the node with the least sum of path costs to the
  sources and moves when the topology changes.
* ``lottery`` — lottery routing over selectivity factors, no synopses.
* ``naive`` — every block shipped to the query node and joined there.

All four compute exactly :func:`spark_nodes.algorithms.smj.semantics.exact_groups`, over
periods of length ``period`` or, under ``[trigger.<name>]``, over the periods a window
trigger ended (:mod:`spark_nodes.algorithms.smj.triggered`).
"""
