"""QJoin: quality-driven join of two out-of-order streams, with its baselines.

Modules, one job each:

- :mod:`.estimator` — the per-``L`` target ``Q_L*``, basic windows, the estimate
  ``Q_L(dx, dy)`` and Algorithm 1 (pure functions);
- :mod:`.statistics` — statistics over the last ``L`` and the per-``L`` counts of the
  user period ``P``;
- :mod:`.operator` — the symmetric join core (per tuple, and the exact vectorized
  equivalent on a whole arrival sequence);
- :mod:`.kslack`, :mod:`.mpkslack` — reorder buffers;
- :mod:`.programs` — the node programs placed in the network;
- :mod:`.spark_join` — Spark's built-in stream-stream join on an arrival sequence;
- :mod:`.algorithms` — the registered plug-ins.
"""
