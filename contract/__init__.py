"""The operator contract: what node programs and every backend and runtime agree on.

The bottom layer; it imports nothing of the project. Operators (``spark_nodes``), the
backends and the step driver (``emulator``) and the runner (``experiments``) import it.

- :mod:`contract.events`: the events due at a node (``Event``, its kinds) and the grid of
  driver windows (``window_of``);
- :mod:`contract.messages`: the ``Message`` that crosses the network, its kinds, its size
  on the wire;
- :mod:`contract.program`: ``NodeProgram``, the node context it acts through, and
  ``run_node_step`` / ``run_node_calls``, which run one node for one or many steps;
- :mod:`contract.state`: ``StateList`` and ``StateMap``, the state a runtime may keep as rows;
- :mod:`contract.outputs`: ``RunOutput`` and the columns of the metrics and results tables;
- :mod:`contract.plan`: the typed ``Plan`` of one run, which algorithms and the driver read.
- :mod:`contract.registry`: ``Registry``, the one mechanism that names backends, runtimes
  and algorithms (unknown and duplicate names fail loudly).

>>> from contract.program import NodeProgram
>>> NodeProgram().memory()
(0, 0)
"""
