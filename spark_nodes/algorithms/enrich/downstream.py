"""The in-order operator behind the enrichment node, where a stall backs up.

The source's argument for prefetching is not one tuple's wait but what it does
downstream: an operator that consumes tuples in order cannot take a later tuple while an
earlier one waits for its row, so the later ones pile up in its input buffer. The
:class:`InOrderBuffer` is that operator's buffer at the enrichment node: tuples take a
place in arrival order; a tuple enriched while an earlier one still waits is held; when
the earlier one is served, every tuple behind it that is ready goes on at once.

Example
-------
>>> b = InOrderBuffer()
>>> first, second, third = b.admit(), b.admit(), b.admit()
>>> b.served(second, 1.0), b.held()          # the first still waits for its row
([], 1)
>>> b.served(third, 1.5), b.held()
([], 2)
>>> b.served(first, 2.0)                     # all three go on, held 0, 1.0 and 0.5
[(0, 0.0), (1, 1.0), (2, 0.5)]
"""
from __future__ import annotations


class InOrderBuffer:
    """Places in arrival order, released in that order (see the module docstring)."""

    def __init__(self):
        self.arrivals = 0            # places given out
        self.next = 0                # the place the operator takes next
        self.ready: dict = {}        # place -> when its tuple was enriched

    def admit(self) -> int:
        """A tuple arrived: its place."""
        self.arrivals += 1
        return self.arrivals - 1

    def served(self, place: int, now: float) -> list[tuple[int, float]]:
        """The tuple at ``place`` was enriched at ``now``: ``(place, time held)`` of
        every tuple the operator takes now, in order."""
        self.ready[place] = now
        out = []
        while self.next in self.ready:
            out.append((self.next, now - self.ready.pop(self.next)))
            self.next += 1
        return out

    def held(self) -> int:
        """Tuples enriched but held behind an earlier one."""
        return len(self.ready)
