"""The input of a run: stream tuples (:mod:`.tuples`), the sources a spec's ``[streams]``
table builds (:mod:`.sources`), arrival processes (:mod:`.arrivals`) and the soccer
sensor data (:mod:`.soccer`).

>>> from spark_nodes.workload.tuples import StreamTuple
>>> StreamTuple("R1", 0, 1.5, 7, None, None, 3).size
1.0
"""
