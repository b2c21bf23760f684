"""Keeping Python's cyclic garbage collector out of the testbed's hot work.

The emulator and the runtimes allocate millions of small objects (events, messages,
tuples, calendar entries) that form no reference cycles and die by reference counting.
The cyclic collector still counts every allocation and, every few hundred, rescans the
young objects, and at times every object of the process: that costs more than the work
itself in the places below. Two tools, one per situation:

- :func:`paused`: the collector off for a block that allocates much and keeps much
  (unpickling a step's 10^5 events: 2.9 -> 0.4 us per event; ``emulator.deliver``'s
  queueing of 10^6 messages: collections had taken 4-9 s of an 80 s run; a lookahead
  span's steps and outputs, kept until their windows: 0.86x the wall time of
  ``bench_emulator``'s network with its nodes declared a pure source and sink);
- :func:`earlier_objects_frozen`: for a whole run, the objects that exist before it
  (imported libraries, the topology, the tuples) left out of every scan.

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


@contextmanager
def paused():
    """The cyclic collector off for the block, back as it was after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
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
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
