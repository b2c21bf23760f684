"""A sweep's warnings, each said once with the number of runs that gave it.

Every point of a sweep builds its plan (twice: when the sweep checks it and when it
runs), and a setting that warns at one point usually warns at all of them: said as
raised, a 24-run sweep printed the same line 48 times. A :class:`WarningTally` records
the warnings raised while it :meth:`~WarningTally.records` a point (in this process) or
is :meth:`~WarningTally.given` them (from a worker process, see :func:`caught`), and
:meth:`~WarningTally.say` warns each line once, with its category, naming how many runs
gave it.

>>> import warnings
>>> tally = WarningTally(total=3)
>>> for point in ("seed 1", "seed 2", "seed 3"):
...     with tally.records(point):
...         warnings.warn("s.toml: topology.radius: 0.6 does not decide links")
...         warnings.warn("s.toml: topology.radius: 0.6 does not decide links")
>>> with tally.records("seed 3"):
...     warnings.warn("s.toml: query.window: longer than the run")
>>> with warnings.catch_warnings(record=True) as said:
...     warnings.simplefilter("always")
...     tally.say()
...     tally.say()      # said already: not again
>>> [str(w.message) for w in said]
['s.toml: topology.radius: 0.6 does not decide links (all 3 runs)', 's.toml: query.window: longer than the run (1 of 3 runs: seed 3)']
"""
from __future__ import annotations

import warnings
from contextlib import contextmanager


def caught(records) -> list[tuple[type, str]]:
    """``(category, message)`` of each warning in ``records`` (as
    ``warnings.catch_warnings(record=True)`` lists them), each once, in order."""
    return list(dict.fromkeys((w.category, str(w.message)) for w in records))


def runs_text(points: list[str], total: int) -> str:
    """How many of a sweep's ``total`` runs (named by their ``points``) gave a warning,
    for the end of its line.

    >>> runs_text(["seed 1", "seed 2"], 2), runs_text(["seed 1"], 1)
    (' (all 2 runs)', '')
    >>> runs_text(["streams.rate = 2.0, seed 1"], 6), runs_text(["seed 1", "seed 2"], 6)
    (' (1 of 6 runs: streams.rate = 2.0, seed 1)', ' (2 of 6 runs)')
    """
    if total <= 1:
        return ""   # a sweep of one run: nothing to count
    if len(points) == total:
        return f" (all {total} runs)"
    if len(points) == 1:
        return f" (1 of {total} runs: {points[0]})"
    return f" ({len(points)} of {total} runs)"


class WarningTally:
    """The warnings of a sweep's ``total`` runs, by line, with the points that gave each.

    A point names a run by its swept values (``"streams.rate = 2.0, seed 1"``, see
    :func:`experiments.sweep.point_text`); it counts once per line however often its run
    raised it.
    """

    def __init__(self, total: int):
        self.total = total
        self._points: dict[tuple[type, str], list[str]] = {}
        self._said: set[tuple[type, str]] = set()

    @contextmanager
    def records(self, point: str):
        """Record, as ``point``'s, every warning raised inside (instead of saying it),
        also when the body raises."""
        with warnings.catch_warnings(record=True) as records:
            warnings.simplefilter("always")   # each one, counted here; the filters
            try:                              # apply when it is said
                yield
            finally:
                self.given(point, caught(records))

    def given(self, point: str, lines: list[tuple[type, str]]) -> None:
        """Add the warnings ``(category, message)`` a run of ``point`` raised."""
        for line in lines:
            points = self._points.setdefault(line, [])
            if point not in points:
                points.append(point)

    def say(self) -> None:
        """Warn each line not said yet, once, with how many runs gave it."""
        for (category, message), points in self._points.items():
            if (category, message) in self._said:
                continue
            self._said.add((category, message))
            warnings.warn(message + runs_text(points, self.total), category, stacklevel=2)
