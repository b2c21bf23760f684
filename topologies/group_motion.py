"""Reference Point Group Mobility (RPGM; Hong, Gerla, Pei & Chiang, MSWiM 1999), as
BonnMotion's ``RPGM`` generates it: nodes move in groups, each group around an
invisible reference point that moves by random waypoint, each member at a random place
within ``max_distance`` of its group's reference point.

:func:`rpgm` returns :class:`GroupTrajectories`: the members' trajectories, plus the
reference points' (:attr:`GroupTrajectories.references`) and who belonged to which group
when (:attr:`GroupTrajectories.membership`), so that the model can be checked from
outside (every member within ``max_distance`` of its reference point at every time).

Why the members stay within ``max_distance``: a member's waypoints are at its reference
point's waypoint times (the ends of its legs and pauses), each at a point of the disk of
radius ``max_distance`` around the reference point at that time. Between two of them the
reference point moves on a straight line, so the member's offset from it moves on a
straight line between two points of the disk, and a disk is convex. The reference points
move on the area shrunk by ``max_distance`` on every side (as in BonnMotion), so that no
member leaves the area either.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np

from topologies.mobility import Trajectories, _positive_pair, _speed_range, random_waypoint
from topologies.motion_models import _number
from topologies.rng import as_generator


class GroupTrajectories(Trajectories):
    """The members' trajectories of a group movement, with its reference points.

    Parameters
    ----------
    waypoints : mapping of int to sequence of (t, x, y)
        The members' waypoints, as :class:`~topologies.mobility.Trajectories` takes.
    references : Trajectories
        One trajectory per group (group ids ``0 .. groups-1``).
    membership : mapping of int to list of (t, group)
        Per member, the times it joined a group (its first at ``t = 0``).

    Examples
    --------
    >>> ref = Trajectories({0: [(0.0, 0.5, 0.5), (4.0, 0.5, 0.9)]})
    >>> tr = GroupTrajectories({7: [(0.0, 0.6, 0.5), (4.0, 0.4, 0.9)]}, ref,
    ...                        {7: [(0.0, 0)]})
    >>> tr.group_of(7, 3.0), tr.reference_positions([2.0]).tolist()
    (0, [[[0.5, 0.7]]])
    """

    def __init__(self, waypoints: Mapping[int, list], references: Trajectories,
                 membership: Mapping[int, list[tuple[float, int]]]):
        super().__init__(waypoints)
        self.references = references
        self.membership = {node: list(membership[node]) for node in self.nodes}

    @property
    def groups(self) -> int:
        """How many groups (reference points) there are."""
        return len(self.references.nodes)

    def _groups_at(self, node: int, times: np.ndarray) -> np.ndarray:
        """The group of ``node`` at each of ``times`` (a member that changes group at
        ``t`` belongs to its new one at ``t``)."""
        joined = np.array(self.membership[node])
        at = np.searchsorted(joined[:, 0], times, side="right") - 1
        return joined[np.maximum(at, 0), 1].astype(int)

    def group_of(self, node: int, t: float) -> int:
        """The group ``node`` belongs to at time ``t``."""
        return int(self._groups_at(node, np.array([float(t)]))[0])

    def reference_positions(self, times) -> np.ndarray:
        """Per time and member (in :attr:`nodes` order), the position of the reference
        point of the member's group at that time: shape ``(len(times), nodes, 2)``."""
        times = np.asarray(times, dtype=float)
        refs = self.references.sample(times)
        out = np.empty((len(times), len(self.nodes), 2))
        for k, node in enumerate(self.nodes):
            out[:, k] = refs[np.arange(len(times)), self._groups_at(node, times)]
        return out


def group_sizes(n: int, rng: np.random.Generator, *, groups: int | None = None,
                group_size: float = 3.0, group_size_sd: float = 2.0) -> list[int]:
    """How ``n`` nodes split into groups: ``groups`` groups as equal as possible, or
    (as BonnMotion draws them) sizes ``round(N(group_size, group_size_sd))``, drawn
    again while below 1, the last one cut to the nodes left.

    >>> group_sizes(10, np.random.default_rng(1), groups=3)
    [4, 3, 3]
    >>> sizes = group_sizes(40, np.random.default_rng(1), group_size=4.0)
    >>> sum(sizes), min(sizes) >= 1
    (40, True)
    """
    if groups is not None:
        return [len(block) for block in np.array_split(np.arange(n), groups)]
    sizes = []
    while sum(sizes) < n:
        size = 0
        while size < 1:
            size = int(round(rng.normal(group_size, group_size_sd)))
        sizes.append(min(size, n - sum(sizes)))
    return sizes


def _in_disk(rng: np.random.Generator, radius: float) -> np.ndarray:
    """A point uniform in the disk of ``radius`` around the origin."""
    length, angle = radius * math.sqrt(rng.random()), 2.0 * math.pi * rng.random()
    return np.array([length * math.cos(angle), length * math.sin(angle)])


def _check_groups(n: int, groups, group_size, group_size_sd, group_change_prob):
    """The group parameters checked (one-line ``ValueError`` naming the parameter)."""
    if groups is not None:
        if isinstance(groups, bool) or not isinstance(groups, int) or not 1 <= groups <= n:
            raise ValueError(f"groups: expected an integer from 1 to the {n} nodes, "
                             f"got {groups!r}")
    return (groups, _number("group_size", group_size, low=1.0),
            _number("group_size_sd", group_size_sd, low=0.0),
            _number("group_change_prob", group_change_prob, low=0.0, high=1.0))


def rpgm(nodes: int | Iterable[int], duration: float, speed: tuple[float, float],
         max_distance: float, seed: int | np.random.Generator, *, pause: float = 0.0,
         groups: int | None = None, group_size: float = 3.0, group_size_sd: float = 2.0,
         group_change_prob: float = 0.01,
         area: tuple[float, float] = (1.0, 1.0)) -> GroupTrajectories:
    """Reference Point Group Mobility (BonnMotion's RPGM, its parameters so named).

    The nodes, in id order, are split into groups (:func:`group_sizes`: ``groups`` of
    them, or sizes drawn around ``group_size``). Each group's reference point moves by
    random waypoint (speed uniform in ``speed``, rest ``pause`` at each destination) on
    the area less ``max_distance`` at every edge. Each member starts uniform in the disk
    of radius ``max_distance`` around its reference point; at each of the reference
    point's waypoints it is at a new point uniform in that disk, moving there in a
    straight line, and it rests while its reference point rests. At each of those
    waypoints a member within ``max_distance`` of other groups' reference points joins
    the nearest of them with probability ``group_change_prob``.

    Parameters
    ----------
    nodes : int or iterable of int
    duration : float
        Time to cover (> 0).
    speed : (low, high)
        The reference points' speed range, ``0 < low <= high``.
    max_distance : float
        Largest distance of a member from its reference point (> 0, less than half
        the area's shorter side).
    seed : int or numpy.random.Generator
    pause : float
        The reference points' rest at each destination (>= 0).
    groups : int, optional
        A fixed number of groups (1 to the number of nodes); given, ``group_size`` and
        ``group_size_sd`` are not read.
    group_size, group_size_sd : float
        Mean (>= 1) and standard deviation (>= 0) of a group's size.
    group_change_prob : float
        Probability, in ``[0, 1]``, that a member near another group joins it.
    area : (width, height)

    Examples
    --------
    >>> tr = rpgm(6, 20.0, (0.05, 0.1), 0.1, seed=3, groups=2)
    >>> tr.groups, [tr.group_of(n, 0.0) for n in tr.nodes]
    (2, [0, 0, 0, 1, 1, 1])
    >>> times = np.linspace(0.0, 20.0, 81)
    >>> gap = np.linalg.norm(tr.sample(times) - tr.reference_positions(times), axis=2)
    >>> bool(gap.max() <= 0.1 + 1e-12)
    True
    """
    rng = as_generator(seed)
    node_ids = list(range(nodes)) if isinstance(nodes, int) else sorted(nodes)
    _number("duration", duration, low=0.0, low_open=True)
    size = np.array(_positive_pair("area", area))
    low, high = _speed_range(speed)
    pause = _number("pause", pause, low=0.0)
    radius = _number("max_distance", max_distance, low=0.0, low_open=True)
    if 2.0 * radius >= size.min():
        raise ValueError(f"max_distance: expected less than half the area's shorter side "
                         f"({size.min() / 2:g}), got {max_distance!r}")
    groups, group_size, group_size_sd, group_change_prob = _check_groups(
        len(node_ids), groups, group_size, group_size_sd, group_change_prob)
    sizes = group_sizes(len(node_ids), rng, groups=groups, group_size=group_size,
                        group_size_sd=group_size_sd)
    inner = random_waypoint(len(sizes), duration, (low, high), pause, rng,
                            area=tuple(size - 2.0 * radius))
    references = Trajectories({g: [(t, x + radius, y + radius)
                                   for t, x, y in inner.waypoints(g)]
                               for g in inner.nodes})
    changes = {g: np.array([p[0] for p in references.waypoints(g)]) for g in references.nodes}
    first_group = np.repeat(np.arange(len(sizes)), sizes)
    waypoints, membership = {}, {}
    for node, group in zip(node_ids, first_group):
        waypoints[node], membership[node] = _member(
            references, changes, int(group), radius, duration, group_change_prob, rng)
    return GroupTrajectories(waypoints, references, membership)


def _member(references: Trajectories, changes: dict[int, np.ndarray], group: int,
            radius: float, duration: float, change_prob: float,
            rng: np.random.Generator) -> tuple[list, list]:
    """One member's waypoints and group changes (see :func:`rpgm`); ``changes`` holds
    each reference point's waypoint times."""
    t = 0.0
    pos = np.array(references.position(group, t)) + _in_disk(rng, radius)
    points, joined = [(t, *pos)], [(t, group)]
    while t < duration:
        later = changes[group][changes[group] > t]
        if len(later) == 0:   # the reference point's walk ends at or after duration
            break
        following = float(later[0])
        here, there = (np.array(references.position(group, w)) for w in (t, following))
        # resting with the reference point, else a new place in the disk around it
        pos = pos if np.array_equal(here, there) else there + _in_disk(rng, radius)
        t = following
        points.append((t, *pos))
        group = _maybe_change(references, group, pos, t, radius, change_prob, rng)
        if group != joined[-1][1]:
            joined.append((t, group))
    return points, joined


def _maybe_change(references: Trajectories, group: int, pos: np.ndarray, t: float,
                  radius: float, change_prob: float, rng: np.random.Generator) -> int:
    """The group of a member at ``pos`` at time ``t``: the nearest other reference point
    within ``radius``, with probability ``change_prob``; else ``group``."""
    # the draw first, one per waypoint: the reference points are looked at only when a
    # change would be taken
    others = [g for g in references.nodes if g != group]
    if change_prob == 0.0 or not others or rng.random() >= change_prob:
        return group
    gaps = np.linalg.norm(references.sample([t])[0][others] - pos, axis=1)
    nearest = int(np.argmin(gaps))
    return others[nearest] if gaps[nearest] <= radius else group
