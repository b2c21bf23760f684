"""Errors raised for bad topology input: files, generators, specs.

Both are ``ValueError`` subclasses, so callers that only care about "bad input" can catch
``ValueError``; the attributes let tools point at the exact place.
"""
from __future__ import annotations

from os import PathLike

_NOTHING = object()


class TopologyFileError(ValueError):
    """A topology, trace or schedule file holds something it should not.

    Parameters
    ----------
    path : str or PathLike
        The file, shown as given.
    where : int or str
        A line number (shown as ``line N``) or a field path such as ``links[4].cost``.
    expected : str
        What should have been there.
    got : object, optional
        What was there (shown with ``repr``).

    Examples
    --------
    >>> str(TopologyFileError("net.json", "links[4].cost", "a number >= 0", got="abc"))
    "net.json: links[4].cost: expected a number >= 0, got 'abc'"
    >>> str(TopologyFileError("net.json", 3, "valid JSON (Expecting ',' delimiter)"))
    "net.json: line 3: expected valid JSON (Expecting ',' delimiter)"
    """

    def __init__(self, path: str | PathLike, where: int | str, expected: str,
                 got: object = _NOTHING):
        self.path = str(path)
        self.where = f"line {where}" if isinstance(where, int) else str(where)
        self.expected = expected
        self._got = got
        self.got = None if got is _NOTHING else got
        message = f"{self.path}: {self.where}: expected {expected}"
        if got is not _NOTHING:
            message += f", got {got!r}"
        super().__init__(message)

    def __reduce__(self):
        # ValueError pickles only ``args``; keep the structured fields instead.
        args = (self.path, self.where, self.expected)
        return (type(self), args if self._got is _NOTHING else args + (self._got,))


class DisconnectedTopologyError(ValueError):
    """A random generator found no connected graph within its attempts.

    Examples
    --------
    >>> str(DisconnectedTopologyError(50, 0.05, 100))  # doctest: +ELLIPSIS
    'random_geometric(n=50, radius=0.05): no connected graph in 100 attempts; ...'
    """

    def __init__(self, n: int, radius: float, attempts: int):
        self.n, self.radius, self.attempts = n, radius, attempts
        super().__init__(
            f"random_geometric(n={n}, radius={radius}): no connected graph in "
            f"{attempts} attempts; raise the radius or the number of attempts")

    def __reduce__(self):
        return (type(self), (self.n, self.radius, self.attempts))


def check_new_link(path, where: str, graph, u: int, v: int, noun: str = "link") -> None:
    """A file's link must join two different nodes, and only once per pair.

    Examples
    --------
    >>> import networkx as nx
    >>> check_new_link("net.json", "links[0]", nx.Graph([(0, 1)]), 1, 0)
    Traceback (most recent call last):
    ...
    topologies.errors.TopologyFileError: net.json: links[0]: expected one link per node pair (1, 0 repeats)
    """
    if u == v:
        raise TopologyFileError(path, where, "two different end nodes", got=[u, v])
    if graph.has_edge(u, v):
        raise TopologyFileError(path, where, f"one {noun} per node pair ({u}, {v} repeats)")
