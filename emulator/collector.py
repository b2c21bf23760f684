"""Keeping Python's cyclic garbage collector out of the testbed's hot work.

The emulator and the runtimes allocate millions of small objects (events, messages,
tuples, calendar entries) that form no reference cycles and die by reference counting.
The cyclic collector still counts every allocation and, every few hundred, rescans the
young objects, and at times every object of the process: that costs more than the work
itself in the places below. Three tools, one per situation:

- :class:`paused`: the collector off for a block that allocates much and keeps much
  (unpickling a step's 10^5 events: 2.9 -> 0.4 us per event; ``emulator.deliver``'s
  queueing of 10^6 messages: collections had taken 4-9 s of an 80 s run; a lookahead
  span's steps and outputs, kept until their windows: 0.86x the wall time of
  ``bench_emulator``'s network with its nodes declared a pure source and sink);
- :func:`earlier_objects_frozen`: for a whole run, the objects that exist before it
  (imported libraries, the topology, the tuples) left out of every scan;
- :func:`freeze_kept`: inside such a run, objects made in bulk and kept for long (a
  lookahead span's outputs) left out too, from when they are made.

Example
-------
>>> import gc
>>> with paused():
...     gc.isenabled()
False
>>> gc.isenabled()
True
"""
from __future__ import annotations

import gc
from contextlib import contextmanager


class paused:
    """The cyclic collector off for the block, back as it was after.

    A class, not a generator-based context manager: the transport pauses it for every
    advance of a run's steps (10^4 a run): entering and leaving cost 0.76 us with
    ``contextlib``, 0.19 us so."""

    __slots__ = ("_was_enabled",)

    def __enter__(self) -> None:
        self._was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc) -> None:
        if self._was_enabled:
            gc.enable()


@contextmanager
def earlier_objects_frozen():
    """Keep the objects that exist when the block starts out of the collector's scans.

    A run allocates millions of short-lived objects, so the collector runs often, and
    each full collection rescans every object of the process: the imported libraries
    (pandas, networkx, Spark's bridge), the topology, the tuples. ``gc.freeze`` moves
    those to a generation the collector skips until the block ends; what the block
    creates is collected as before. ``bench_emulator.py``, three runs each in turn: time
    in collections during the run 0.31-0.38 -> 0.14-0.18 s (the run 2.15-2.94 ->
    1.91-2.23 s, machine shared). Left alone when something else froze objects already
    (a server that forks, say): unfreezing would undo it.
    """
    global _owned
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    _owned = True
    try:
        yield
    finally:
        _owned = False
        gc.unfreeze()


#: Whether :func:`earlier_objects_frozen` froze, so that :func:`freeze_kept` may add to
#: what it unfreezes at the end.
_owned = False


def freeze_kept() -> None:
    """Inside :func:`earlier_objects_frozen` (when it froze), leave every object alive
    now out of the collector's scans too, until the block ends. For objects made in
    bulk and kept for long (a lookahead span's outputs, kept until their windows):
    scanned in every young collection they survive, and in every full one after, they
    cost more than making them. What is frozen still dies by reference counting; only
    cyclic garbage among it waits for the block's end (the testbed's objects form no
    cycles). Freezing splices the collector's lists, so it costs no scan.

    >>> with earlier_objects_frozen():
    ...     before = gc.get_freeze_count()
    ...     kept = [[i] for i in range(1000)]
    ...     freeze_kept()
    ...     gc.get_freeze_count() >= before + 1000
    True
    >>> gc.get_freeze_count()                  # all back in the collector's view
    0
    """
    if _owned:
        gc.freeze()
