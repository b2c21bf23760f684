"""Grouping keys that spread the nodes evenly over a stateful query's state partitions.

Spark sends each group of a stateful operator to state partition
``pmod(murmur3(key, seed=42), partitions)`` (``HashPartitioning``). Keyed by node id, the
8 source nodes 1..8 of ``benchmarks/bench_spark_runtime.py`` land 3 : 5 on two
partitions, so one Python worker runs 5/8 of the node steps while the other idles. The
spark runtime therefore groups by a *slot*: for every node, in node order, the smallest
unused non-negative integer that Spark hashes to the next partition in turn, so the
partitions hold ``n // partitions`` or one more nodes each. The slot only chooses the
partition; the node id travels in every row, and the state of a run is keyed by slot
for the whole run (the mapping is fixed when the run opens).

:func:`spark_hash_int` is Spark's ``Murmur3_x86_32.hashInt`` written out in Python (a
py4j call per key costs about 1 ms); ``tests/spark/test_spark_runtime_steps.py`` checks it against
Spark's own ``hash()``. Should Spark change its hash, only the balance would suffer, not
the results: the state is found by whatever key Spark partitions.

Example
-------
>>> [spark_hash_int(n) % 2 for n in range(1, 9)]   # keyed by node id: 3 : 5
[1, 0, 1, 0, 0, 1, 1, 1]
>>> slots = balanced_slots(range(1, 9), 2)
>>> sorted(spark_hash_int(k) % 2 for k in slots.values())
[0, 0, 0, 0, 1, 1, 1, 1]
>>> balanced_slots([5, 7], 1)
{5: 0, 7: 1}
"""
from __future__ import annotations

from collections.abc import Iterable

_MASK = 0xFFFFFFFF
#: The seed of Spark's ``Murmur3Hash`` expression, which ``HashPartitioning`` uses.
SPARK_HASH_SEED = 42


def _rotate_left(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & _MASK


def spark_hash_int(value: int, seed: int = SPARK_HASH_SEED) -> int:
    """Spark's 32-bit Murmur3 hash of an ``int`` column value (a signed 32-bit result,
    as ``pyspark.sql.functions.hash`` gives it)."""
    k = (value * 0xCC9E2D51) & _MASK
    k = (_rotate_left(k, 15) * 0x1B873593) & _MASK
    h = _rotate_left((seed ^ k) & _MASK, 13)
    h = (h * 5 + 0xE6546B64) & _MASK
    h ^= 4                                   # the length in bytes
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    h ^= h >> 16
    return h - (1 << 32) if h >= 1 << 31 else h


def balanced_slots(nodes: Iterable[int], partitions: int) -> dict[int, int]:
    """``{node: slot}``: node ``i`` of the sorted nodes gets a slot that Spark puts on
    state partition ``i mod partitions``; slots are distinct non-negative integers."""
    if partitions < 1:
        raise ValueError(f"state partitions must be at least 1, got {partitions}")
    # Candidates not yet used, by the partition Spark gives them.
    spare: dict[int, list[int]] = {p: [] for p in range(partitions)}
    candidate = 0
    slots = {}
    for i, node in enumerate(sorted(nodes)):
        wanted = i % partitions
        while not spare[wanted]:
            spare[spark_hash_int(candidate) % partitions].append(candidate)
            candidate += 1
        slots[node] = spare[wanted].pop(0)
    return slots
