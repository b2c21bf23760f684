"""What the nodes do, in three sub-packages:

- :mod:`spark_nodes.workload`: the input: stream tuples, sources built from a spec's
  ``[streams]`` table, arrival processes, the soccer sensor data;
- :mod:`spark_nodes.algorithms`: the operators, as node programs, and the registry of
  algorithms (centralized, SMJ and Lottery, QJoin and K-slack, ATR and CTR, enrichment,
  triggered windows, the exact answer);
- :mod:`spark_nodes.runtimes`: what executes the node programs: in process, or inside
  Spark, and the registry of runtimes.

The operator contract they code against (events, messages, ``NodeProgram``, the node
context, ``run_node_step``, state, run outputs, the ``Plan``) is the package
:mod:`contract`; the step driver and the backends are in :mod:`emulator`.
"""
