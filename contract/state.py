"""Operator state by concern: the rows a runtime may keep in a state store of its own.

A node program keeps its buffers (join buffers, window contents, stored segments) in a
:class:`StateList` and its keyed state (synopses, histories, routing entries) in a
:class:`StateMap`; whatever else it holds is its *scalars*. The in-process runtime uses
the containers as the list and dict they behave like, and never looks inside. The Spark
runtime keeps every item of every container as one row of Spark state and, after a step,
writes only the rows that changed: a container it *tracks* numbers its items with
*slots* and keeps a journal of the slots added and removed since the last
:meth:`~StateList.commit` (see ``spark_nodes/runtimes/state.py``).

Both containers are picklable as plain values (the driver ships initial programs so),
and neither may hold an item whose contents change in place: a journal sees
assignments, not mutations of what is already stored (replace the value instead).

Examples
--------
>>> buf = StateList(rows="tuple")
>>> buf.extend([3, 1]); buf.insert(1, 2); del buf[0]
>>> list(buf), len(buf), buf[0], buf[-1:]
([2, 1], 2, 2, [1])
>>> buf.track(); buf.append(7); del buf[0]
>>> buf.changes()    # added since tracking, by slot (2 came and went: never stored)
({1: 1, 2: 7}, set())
>>> buf.commit(); del buf[:2]; buf.changes()
({}, {1, 2})
>>> m = StateMap(); m["a"] = 1; m.track(); m["b"] = 2; m["a"] = 3; del m["b"]
>>> dict(m), m.changes()
({'a': 3}, ({0: ('a', 3)}, {1}))
"""
from __future__ import annotations

from collections.abc import MutableMapping


class _Journal:
    """What a tracked container changed since the store last saved it: the slots it
    added (with their items) and the slots it removed."""

    __slots__ = ()
    #: how a state store types the rows (see :class:`StateList`)
    rows = "object"

    def changes(self) -> tuple[dict, set]:
        """``({slot: item} added, {slot} removed)`` since tracking or the last commit
        (a map's items are ``(key, value)``)."""
        return self._added, self._removed

    def commit(self) -> None:
        """The store holds the changes: start a new journal."""
        self._added, self._removed = {}, set()


class StateList(_Journal):
    """A list whose items a runtime may keep as rows of its own state.

    Parameters
    ----------
    items : iterable, optional
        The initial items.
    rows : {"object", "tuple"}
        How a state store types the rows: ``"tuple"`` when every item is a stream tuple
        (typed columns), ``"object"`` for anything else (one serialized value a row).

    Supports ``len``, iteration, indexing and slicing (reads give plain lists),
    ``append``, ``extend``, ``insert``, ``pop``, ``clear``, :meth:`retain`, ``del`` of an
    index or a slice and assignment to an index.
    """

    __slots__ = ("_items", "_slots", "_next", "_added", "_removed", "rows", "cid")

    def __init__(self, items=(), rows: str = "object"):
        if rows not in ("object", "tuple"):
            raise ValueError(f"StateList rows must be 'object' or 'tuple', got {rows!r}")
        self._items = list(items)
        self._slots: list[int] | None = None   # parallel to _items while tracked
        self._next = 0
        self._added: dict = {}
        self._removed: set = set()
        self.rows = rows
        self.cid: int | None = None            # the container's number in its node's store

    # -- reading ------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self):
        return iter(self._items)

    def __getitem__(self, i):
        return self._items[i]

    def __bool__(self) -> bool:
        return bool(self._items)

    def __contains__(self, item) -> bool:
        return item in self._items

    def __eq__(self, other) -> bool:
        if isinstance(other, StateList):
            return self._items == other._items
        return isinstance(other, list) and self._items == other

    __hash__ = None

    def __repr__(self) -> str:
        return f"StateList({self._items!r})"

    # -- writing ------------------------------------------------------------------------
    def append(self, item) -> None:
        self._items.append(item)
        if self._slots is not None:
            self._slots.append(self._add(item))

    def extend(self, items) -> None:
        if self._slots is None:
            self._items.extend(items)
            return
        for item in items:
            self.append(item)

    def insert(self, i: int, item) -> None:
        self._items.insert(i, item)
        if self._slots is not None:
            self._slots.insert(i, self._add(item))

    def pop(self, i: int = -1):
        item = self._items.pop(i)
        if self._slots is not None:
            self._drop(self._slots.pop(i))
        return item

    def clear(self) -> None:
        del self[:]

    def retain(self, keep) -> list:
        """Keep the items for which ``keep(item)`` is true, in order; return the others.

        >>> buf = StateList([1, 5, 2, 7]); buf.retain(lambda x: x < 5), list(buf)
        ([5, 7], [1, 2])
        """
        kept, gone = [], []
        if self._slots is None:
            for item in self._items:
                (kept if keep(item) else gone).append(item)
            self._items = kept
            return gone
        slots = []
        for item, slot in zip(self._items, self._slots):
            if keep(item):
                kept.append(item)
                slots.append(slot)
            else:
                gone.append(item)
                self._drop(slot)
        self._items, self._slots = kept, slots
        return gone

    def __delitem__(self, i) -> None:
        del self._items[i]
        if self._slots is not None:
            gone = self._slots[i]
            del self._slots[i]
            for slot in (gone if isinstance(i, slice) else (gone,)):
                self._drop(slot)

    def __setitem__(self, i: int, item) -> None:
        if isinstance(i, slice):
            raise TypeError("StateList: assign items one at a time, or delete and extend")
        self._items[i] = item
        if self._slots is not None:
            self._drop(self._slots[i])
            self._slots[i] = self._add(item)

    # -- the journal ----------------------------------------------------------------------
    def track(self, slots=None) -> None:
        """Start numbering items and journalling changes. ``slots`` (one per item) are
        the numbers a store already holds them under; without it every item is new."""
        if slots is None:
            self._slots = []
            self._next = 0
            for item in self._items:
                self._slots.append(self._add(item))
        else:
            self._slots = list(slots)
            self._next = max(self._slots, default=-1) + 1

    @property
    def slots(self) -> list[int]:
        """The items' slot numbers, in item order (tracked containers only)."""
        return self._slots

    def _add(self, item) -> int:
        slot = self._next
        self._next += 1
        self._added[slot] = item
        return slot

    def _drop(self, slot: int) -> None:
        if self._added.pop(slot, _MISSING) is _MISSING:
            self._removed.add(slot)

    def __reduce__(self):
        return (_rebuild_list, (self._items, self.rows))


class StateMap(_Journal, MutableMapping):
    """A dict whose entries a runtime may keep as rows of its own state.

    Iteration follows insertion order, as a dict's. Values must not change in place
    (assign a new value: the journal sees assignments).
    """

    def __init__(self, entries=()):
        self._data: dict = dict(entries)
        self._slot_of: dict | None = None      # key -> slot while tracked
        self._next = 0
        self._added: dict = {}
        self._removed: set = set()
        self.cid: int | None = None

    def __getitem__(self, key):
        return self._data[key]

    def __setitem__(self, key, value) -> None:
        self._data[key] = value
        if self._slot_of is not None:
            old = self._slot_of.get(key)
            if old is None:
                old = self._slot_of[key] = self._next
                self._next += 1
            self._added[old] = (key, value)   # a changed entry is rewritten in its slot

    def __delitem__(self, key) -> None:
        del self._data[key]
        if self._slot_of is not None:
            # A slot is rewritten in place, so it may be in the store even when this
            # journal wrote it too: always remove it there.
            slot = self._slot_of.pop(key)
            self._added.pop(slot, None)
            self._removed.add(slot)

    def __iter__(self):
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key) -> bool:
        return key in self._data

    def get(self, key, default=None):
        return self._data.get(key, default)

    def __repr__(self) -> str:
        return f"StateMap({self._data!r})"

    def track(self, slots=None) -> None:
        """Start journalling; ``slots`` (one per entry, in order) as in
        :meth:`StateList.track`."""
        if slots is None:
            self._slot_of, self._next = {}, 0
            for key, value in self._data.items():
                self._slot_of[key] = self._next
                self._added[self._next] = (key, value)
                self._next += 1
        else:
            self._slot_of = dict(zip(self._data, slots))
            self._next = max(slots, default=-1) + 1

    @property
    def slots(self) -> list[int]:
        """The entries' slot numbers, in entry order (tracked maps only)."""
        return [self._slot_of[key] for key in self._data]

    def __reduce__(self):
        return (_rebuild_map, (self._data,))


_MISSING = object()


def _rebuild_list(items, rows):
    return StateList(items, rows)


def _rebuild_map(data):
    return StateMap(data)
