"""A node program in typed Spark state: scalars, buffered tuples and keyed entries as rows.

The spark runtime's stateful processor keeps each node's program in four state variables
(declared once per query, in ``init``):

=========  ==========  =================================================================
``node``   ValueState  ``version, seed, algorithm, next_local_id, rng, next_container``:
                       the step count, the program's generator and numbering
``scalars``ValueState  ``blob``: the program pickled with every
                       :class:`~contract.state.StateList` / :class:`~contract.state.StateMap`
                       replaced by a reference (its number and its items' slots, in order)
``tuples`` MapState    ``(container, slot) -> (stream, seq, ts, key, x, y, origin, size,
                       entered_at)``: one typed row per buffered stream tuple
``objects``MapState    ``(container, slot) -> (key, value)``: one row per item of any
                       other buffer (``key`` null) and per map entry (both serialized)
=========  ==========  =================================================================

so Spark's own ``numRowsTotal`` counts every buffered tuple, and a step writes only what
changed: the rows its containers' journals added and removed, ``scalars`` only when its
bytes differ, ``node`` always (one row). A container the program dropped has its rows
removed.

Reading every row back at every step would cost as much as the step itself, so a Python
worker keeps the programs it ran, each with the ``version`` it had: a step whose node
state has the same version continues from the kept program; any other (a node new to
this worker, a micro-batch replayed after a failure, another worker's partition) is
rebuilt from the rows. ``cache=False`` always rebuilds (the tests run so too).

Spark's state TTL is not used: it counts processing time (wall clock), while the
operators expire tuples by event or virtual time; an expiry is a journalled removal.
"""
from __future__ import annotations

import io
import pickle
from collections import defaultdict
from dataclasses import dataclass, field

from pyspark import cloudpickle

from contract.state import StateList, StateMap
from spark_nodes.workload.tuples import StreamTuple

NODE_DDL = ("version long, seed long, algorithm string, next_local_id long, rng binary, "
            "next_container long")
SLOT_DDL = "container long, slot long"
TUPLE_DDL = ("stream string, seq long, ts double, key long, x double, y double, "
             "origin int, size double, entered_at double")
OBJECT_DDL = "key binary, value binary"

_PICKLE = pickle.HIGHEST_PROTOCOL
#: Programs this Python worker ran last: {run: {node: NodeState}}, the latest
#: :data:`_KEPT_RUNS` runs only (a new run's first save forgets the oldest).
_KEPT: dict = {}
_KEPT_RUNS = 2


@dataclass
class NodeState:
    """One node's program and the bookkeeping that travels with it in Spark state."""

    program: object
    seed: int
    algorithm: str
    rng_state: dict | None
    next_local_id: int
    version: int = 0
    next_container: int = 0
    #: containers by number, as the store holds them after the last save
    live: dict = field(default_factory=dict)
    blob: bytes | None = None


@dataclass
class WriteCount:
    """Rows one save wrote: upserted and removed."""

    upserts: int = 0
    removals: int = 0


class NodeStore:
    """The state variables of one node (the processor's current grouping key)."""

    def __init__(self, handle, cache: bool = True):
        self._node = handle.getValueState("node", NODE_DDL)
        self._scalars = handle.getValueState("scalars", "blob binary")
        self._tuples = handle.getMapState("tuples", SLOT_DDL, TUPLE_DDL)
        self._objects = handle.getMapState("objects", SLOT_DDL, OBJECT_DDL)
        self.cache = cache
        self.last_write = WriteCount()

    # -- loading ---------------------------------------------------------------------
    def load(self, run: str, node: int, first_blob) -> NodeState:
        """The node's state: from ``first_blob`` (the initial program) on its first step,
        else the kept program of the same version, else rebuilt from the rows."""
        meta = self._node.get()
        if meta is None:
            if first_blob is None:
                raise RuntimeError(f"node {node}: a step arrived without the node's program "
                                   f"in Spark state")
            init = pickle.loads(first_blob)
            return NodeState(init["program"], init["seed"], init["algorithm"], None, 0)
        version = int(meta[0])
        kept = _KEPT.get(run, {}).get(node)
        if self.cache and kept is not None and kept.version == version:
            return kept
        return self._rebuild(meta)

    def _rebuild(self, meta) -> NodeState:
        version, seed, algorithm, next_local_id, rng, next_container = meta
        rows: dict = defaultdict(dict)
        for (container, slot), value in self._tuples.iterator():
            rows[container][slot] = StreamTuple._make(value)
        for (container, slot), (key, value) in self._objects.iterator():
            item = pickle.loads(value)
            rows[container][slot] = item if key is None else (pickle.loads(key), item)
        live: dict = {}

        def container(ref):
            kind, number, slots, typed = ref
            if number not in live:      # one container, however many references
                items = [rows[number][s] for s in slots]
                made = StateList(items, typed) if kind == "list" else StateMap(items)
                made.cid = number
                made.track(slots)
                live[number] = made
            return live[number]

        blob = self._scalars.get()[0]
        unpickler = pickle.Unpickler(io.BytesIO(blob))
        unpickler.persistent_load = container
        program = unpickler.load()
        return NodeState(program, int(seed), algorithm,
                         None if rng is None else pickle.loads(rng), int(next_local_id),
                         int(version), int(next_container), live, bytes(blob))

    # -- saving ----------------------------------------------------------------------
    def save(self, run: str, node: int, state: NodeState) -> None:
        """Write what the step changed (see the module docstring); keep the program."""
        seen: dict = {}

        def reference(obj):
            cls = type(obj)
            if cls is not StateList and cls is not StateMap:
                return None
            if obj.cid is None or (obj.cid not in state.live and obj.cid not in seen):
                # new to the store (the initial program's, or made in this step)
                obj.cid = state.next_container
                state.next_container += 1
                obj.track()
            seen[obj.cid] = obj
            kind = "list" if cls is StateList else "map"
            return (kind, obj.cid, tuple(obj.slots), obj.rows)

        buffer = io.BytesIO()
        pickler = cloudpickle.CloudPickler(buffer, _PICKLE)
        pickler.persistent_id = reference
        pickler.dump(state.program)
        blob = buffer.getvalue()
        count = WriteCount()
        if blob != state.blob:
            self._scalars.update((blob,))
            state.blob = blob
        for number, made in seen.items():
            self._write(number, made, count)
        for number in state.live.keys() - seen.keys():   # dropped by the program
            self._drop(number, state.live[number], count)
        state.live = seen
        state.version += 1
        self._node.update((state.version, int(state.seed), state.algorithm,
                           int(state.next_local_id),
                           None if state.rng_state is None
                           else pickle.dumps(state.rng_state, _PICKLE),
                           state.next_container))
        self.last_write = count
        if self.cache:
            keep(run, node, state)

    def _rows_of(self, made):
        return self._tuples if made.rows == "tuple" else self._objects

    def _write(self, number: int, made, count: WriteCount) -> None:
        added, removed = made.changes()
        target = self._rows_of(made)
        for slot in removed:
            target.removeKey((number, slot))
        for slot, item in added.items():
            target.updateValue((number, slot), self._row(made, item))
        count.upserts += len(added)
        count.removals += len(removed)
        made.commit()

    def _drop(self, number: int, made, count: WriteCount) -> None:
        added, removed = made.changes()
        stored = (set(made.slots) - set(added)) | removed
        target = self._rows_of(made)
        for slot in stored:
            target.removeKey((number, slot))
        count.removals += len(stored)

    @staticmethod
    def _row(made, item) -> tuple:
        if type(made) is StateMap:
            key, value = item
            return (pickle.dumps(key, _PICKLE), cloudpickle.dumps(value, _PICKLE))
        if made.rows == "object":
            return (None, cloudpickle.dumps(item, _PICKLE))
        if type(item) is not StreamTuple:
            raise TypeError(f"a StateList of rows='tuple' holds a {type(item).__name__}, "
                            f"not a StreamTuple")
        return (item.stream, int(item.seq), float(item.ts),
                None if item.key is None else int(item.key),
                None if item.x is None else float(item.x),
                None if item.y is None else float(item.y),
                int(item.origin), float(item.size), float(item.entered_at))


def keep(run: str, node: int, state: NodeState) -> None:
    """Keep ``state`` in this worker; a run new to it makes room by forgetting the
    oldest run's programs (dicts keep insertion order)."""
    programs = _KEPT.get(run)
    if programs is None:
        while len(_KEPT) >= _KEPT_RUNS:
            del _KEPT[next(iter(_KEPT))]
        programs = _KEPT[run] = {}
    programs[node] = state
