"""Packets waiting at their source for a route (RFC 3561 §6.3 leaves the buffer to the
implementation; ns-3 keeps 64 packets per node): bounded, first in first out per
destination.

>>> queue = RequestQueue(capacity=2)
>>> queue.push("a", 3), queue.push("b", 4), queue.push("c", 3)
(True, True, False)
>>> queue.take(3), len(queue)
(['a'], 1)
"""
from __future__ import annotations

from collections import deque


class RequestQueue:
    """At most ``capacity`` packets, by destination."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self._waiting: dict[int, deque] = {}
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def push(self, msg, dst: int) -> bool:
        """Hold ``msg`` for ``dst``; False (not held) when the queue is full."""
        if self._size >= self.capacity:
            return False
        self._waiting.setdefault(dst, deque()).append(msg)
        self._size += 1
        return True

    def take(self, dst: int) -> list:
        """Every packet held for ``dst``, oldest first; they leave the queue."""
        held = self._waiting.pop(dst, ())
        self._size -= len(held)
        return list(held)
