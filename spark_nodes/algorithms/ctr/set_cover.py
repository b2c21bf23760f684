"""Greedy weighted set cover and the one-prober-per-segment assignment of CTR.

[source] The hosts of a CTR hop must hold, between them, every segment of the probed
window; the smallest-weight such set is a weighted set cover, solved greedily by
repeatedly taking the host minimising ``w_j / |A_j|`` (``A_j`` = still uncovered
segments it holds). Ties go to the host covering more, then to the lowest id (hosts
idle at the start all weigh 0).

Examples
--------
>>> holders = {"a": {1, 2}, "b": {2, 3}, "c": {3}}
>>> greedy_cover({"a", "b", "c"}, holders, {1: 0.5, 2: 0.1, 3: 0.0})
[3, 2]
>>> assign_probers(["a", "b", "c"], holders, [3, 2], {1: 0.5, 2: 0.1, 3: 0.0})
{'a': 2, 'b': 3, 'c': 3}
"""
from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping


def greedy_cover(universe: Iterable[Hashable], holders: Mapping[Hashable, Iterable[int]],
                 weight: Mapping[int, float]) -> list[int]:
    """Hosts covering every element of ``universe``, chosen greedily by ``w / |A|``.

    Parameters
    ----------
    universe : iterable
        Elements to cover (segment ids).
    holders : mapping
        Element -> hosts holding it.
    weight : mapping
        Host -> weight (its load).

    Raises
    ------
    ValueError
        If an element has no holder.
    """
    covers: dict[int, set] = {}
    uncovered = set(universe)
    for z in uncovered:
        hs = holders.get(z)
        if not hs:
            raise ValueError(f"set cover: element {z!r} is held by no host")
        for h in hs:
            covers.setdefault(h, set()).add(z)
    chosen = []
    while uncovered:
        best, best_key = None, None
        for h, a in covers.items():
            n = len(a)
            if n:
                key = (weight[h] / n, -n, h)
                if best_key is None or key < best_key:
                    best, best_key = h, key
        chosen.append(best)
        took = covers.pop(best)
        uncovered -= took
        for a in covers.values():
            a -= took
    return chosen


def assign_probers(elements: Iterable[Hashable], holders: Mapping[Hashable, Iterable[int]],
                   chosen: Iterable[int], weight: Mapping[int, float]) -> dict:
    """Give each element exactly one prober: the least-loaded chosen host holding it.

    This is the duplicate-avoidance rule of CTR [source]: where a segment lies on several
    hosts of a hop, only the least loaded of them probes it (the route carries the
    positive form of the patent's ``(v_j / η)`` exclusion marks).

    Raises
    ------
    ValueError
        If an element is held by none of the chosen hosts.
    """
    chosen = set(chosen)
    out = {}
    for z in elements:
        cands = [h for h in holders[z] if h in chosen]
        if not cands:
            raise ValueError(f"assign: element {z!r} is held by none of {sorted(chosen)}")
        out[z] = min(cands, key=lambda h: (weight[h], h))
    return out
