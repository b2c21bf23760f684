"""What the nodes do: tuples, stream sources, node programs (the operator contract),
the algorithms, the step driver and the runtimes (in-process and Spark).

>>> from spark_nodes import StreamTuple
>>> StreamTuple("R1", 0, 1.5, 7, None, None, 3).size
1.0
"""
from spark_nodes.tuples import StreamTuple

__all__ = ["StreamTuple"]
