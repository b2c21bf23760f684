"""What executes node programs: the in-process runtime (:mod:`.inproc`, the reference)
and the Spark runtime (:mod:`.spark`), by name in :mod:`.registry`.

The Spark runtime's parts: the session it starts (:mod:`.session`), a node's program as
rows of Spark state (:mod:`.state`), the grouping keys that spread nodes over state
partitions (:mod:`.partitions`) and the codec that carries a step's events and outputs
to and from the Python workers (:mod:`.codec`). Importing this package starts nothing.
"""
