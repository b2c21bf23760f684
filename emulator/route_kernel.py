"""Least-cost trees towards a destination, compiled: Dijkstra over an epoch's links as a
CSR adjacency (numba), and the next-hop rule of :class:`emulator.network.NetView`.

The directed links ``u -> p`` of weight ``w`` come sorted by ``(u, p)``, ``starts[i]``
the first link leaving node position ``i`` (:meth:`NetView._prepare`). Links are
symmetric, so a search outwards from the destination gives every node's cost to it.
Costs are the same floating-point numbers SciPy's Dijkstra gives (each is the least of
the same sums ``cost(p) + w``), so the trees equal the ones built before, tie for tie
(tests hold them equal to networkx's).

>>> import numpy as np
>>> starts = np.array([0, 1, 3, 4])      # the line 0 - 1 - 2: links 0>1, 1>0, 1>2, 2>1
>>> p, w = np.array([1, 0, 2, 1]), np.array([1.0, 1.0, 2.0, 2.0])
>>> cost, table = np.full(3, np.inf), np.full(3, -1, np.int64)
>>> tree(2, starts, p, w, cost, table)
>>> cost.tolist(), table.tolist()           # node 0 takes link 0 (to 1), node 1 link 2
([3.0, 2.0, 0.0], [0, 2, -1])
>>> all_tables(starts, p, w)[2].tolist()    # every destination's table at once
[0, 2, -1]
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def tree(d, starts, p, w, cost, table):
    """Every node position's least path cost to position ``d`` into ``cost`` (all inf
    on entry; inf stays where it is unreachable), and into ``table`` (all -1 on entry)
    each node's next hop: its first link, in ``(u, p)`` order (so to its smallest
    neighbour), that lies on a least-cost path and leads strictly closer."""
    parent, where, heap_cost, heap_node, lowered = workspace(len(cost))
    _search(d, starts, p, w, cost, table, parent, where, heap_cost, heap_node, lowered)


@njit(cache=True)
def all_tables(starts, p, w):
    """Every destination's next-hop table, an ``n x n`` int32 array (row ``d``: the
    table towards position ``d``)."""
    n = len(starts) - 1
    tables = np.full((n, n), -1, np.int32)
    cost = np.empty(n)
    row = np.empty(n, np.int64)
    parent, where, heap_cost, heap_node, lowered = workspace(n)
    for d in range(n):
        cost[:] = np.inf
        row[:] = -1
        _search(d, starts, p, w, cost, row, parent, where, heap_cost, heap_node, lowered)
        tables[d, :] = row
    return tables


@njit(cache=True)
def workspace(n):
    """What :func:`_search` works in, for ``n`` nodes: each node's next hop so far
    (``parent``), heap places, the heap's keys and nodes, and room for one node's links
    (``lowered``: ``n``; a view whose node has more, by self-loops, is not routed
    compiled, :meth:`emulator.network.NetView._prepare`). Allocated
    by the caller, so that a kernel compiled without reference counting
    (:mod:`emulator.hop_kernel`) can search too."""
    return (np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n),
            np.empty(n, np.int64), np.empty(max(n, 1), np.int64))


@njit(cache=True, inline="always")
def _search(d, starts, p, w, cost, table, parent, where, heap_cost, heap_node, lowered):
    """Dijkstra from ``d`` into ``cost`` (all inf on entry); with a ``table`` (all -1,
    as long as ``cost``), each node's next hop as it is settled. ``parent`` ...
    ``lowered``: a :func:`workspace` as long as ``cost`` (its contents are set here).

    The next-hop rule is kept as the search relaxes: a node ``u`` settled at cost ``c``
    that brings a neighbour ``v`` to ``c + w`` (lower, or equal to its cost so far) with
    ``c < c + w`` is a candidate next hop of ``v``, and ``parent[v]`` keeps the least
    candidate (a lower cost starts the candidates again). When ``v`` is settled, every
    node strictly closer has been, so its candidates are exactly the neighbours ``x``
    with ``cost(x) + w == cost(v)`` and ``cost(x) < cost(v)``: the same sums, float for
    float, that reading its links then would test. ``table[v]`` is its link to the
    least of them (its first in ``(u, p)`` order). This replaced reading every settled
    node's links for the rule: 180 -> 90 us a tree on 1,000 nodes and 20,654 links.

    A settled node's links are relaxed in two passes: the first lists, without a
    branch, those whose sum is at most the neighbour's cost (9 % of links on that
    network), the second handles them; the one branch of ``through <= cost[v]`` per link
    was mispredicted about as often as it was taken.

    The heap holds each node at most once and lowers its key in place (``where``: its
    place in the heap, -1 when out): at most ``n`` entries against one per relaxed link
    with lazy deletion, 1.3x faster on 1,000 nodes of degree 20 (4-ary, 1.14x more).
    The order nodes are settled in may differ among equal costs, but not the tables: a
    node's next hop is chosen among nodes strictly closer, all settled before it
    whatever the order."""
    n = len(cost)
    hops = len(table) > 0
    none = n      # no candidate (yet)
    where[:n] = -1
    size = 1
    heap_cost[0], heap_node[0], where[d] = 0.0, d, 0
    cost[d] = 0.0
    while size:
        c, u = heap_cost[0], heap_node[0]
        where[u] = -1
        size -= 1
        if size:
            _sift_down(heap_cost, heap_node, where, size)
        first, last = starts[u], starts[u + 1]
        if hops and u != d and parent[u] != none:
            k = first
            while p[k] != parent[u]:
                k += 1
            table[u] = k   # the first link, in (u, p) order, on a path strictly closer
        m = 0
        for k in range(first, last):
            lowered[m] = k
            m += c + w[k] <= cost[p[k]]
        for j in range(m):
            k = lowered[j]
            v = p[k]
            through = c + w[k]
            if through < cost[v]:
                cost[v] = through
                parent[v] = u if c < through else none
                at = where[v]
                if at < 0:   # first reached: a new entry at the end
                    at = size
                    size += 1
                _sift_up(heap_cost, heap_node, where, at, through, v)
            elif c < through and u < parent[v]:
                parent[v] = u


@njit(cache=True, inline="always")
def _sift_up(heap_cost, heap_node, where, i, c, node):
    """Put ``node`` with key ``c`` at place ``i`` (the end, or its own place with a
    lower key) and sift it up. The heap is 4-ary (children of ``i``: ``4i + 1`` to
    ``4i + 4``): half the levels of a binary one, 224 -> 196 us a tree on 1,000 nodes."""
    while i > 0:
        parent = (i - 1) >> 2
        if heap_cost[parent] <= c:
            break
        moved = heap_node[parent]
        heap_cost[i], heap_node[i], where[moved] = heap_cost[parent], moved, i
        i = parent
    heap_cost[i], heap_node[i], where[node] = c, node, i


@njit(cache=True, inline="always")
def _sift_down(heap_cost, heap_node, where, n):
    """Move the entry at ``n`` (the last) into the root's place and sift it down."""
    c, node = heap_cost[n], heap_node[n]
    i = 0
    while True:
        first = 4 * i + 1
        if first >= n:
            break
        child, least = first, heap_cost[first]
        for j in range(first + 1, min(first + 4, n)):
            if heap_cost[j] < least:
                child, least = j, heap_cost[j]
        if c <= least:
            break
        moved = heap_node[child]
        heap_cost[i], heap_node[i], where[moved] = least, moved, i
        i = child
    heap_cost[i], heap_node[i], where[node] = c, node, i
