"""Filters, the cost of an execution order, and the order choosers SMJE and SMJH.

Sites are numbered ``0..n-1`` (stream index order); the query node is index ``n`` of the
cost matrix ``W`` (shape ``(n+1, n+1)``). For the origin site ``i``, a vector ``X`` (the
block's incremental synopsis ``ΔS_i`` or its filter ``F_i``) and an order
``π = (p1..p_{n-1})`` of the other sites [recon, reproduces every number of the source]::

    V0 = X ;  Vk = V(k-1) ⊙ S_pk
    Cost(i, π) = Σ_k W[p(k-1)][pk] · ΣV(k-1)   [+ W[p(n-1)][q] · ΣV(n-1)  if final]

``ΣVk`` is exactly ``|ΔR_i ⋈ R_p1 ⋈ … ⋈ R_pk|`` for a single-attribute equi-join, so
with exact synopses the estimate is the true data cost of the order.

Example (the source's worked example, sites 1, 2, 3 = indices 0, 1, 2; no query hop):

>>> import numpy as np
>>> W = np.array([[0, 18, 25, 0], [18, 0, 20, 0], [25, 20, 0, 0], [0, 0, 0, 0]], float)
>>> S = np.array([[1, 0, 2, 1, 1, 0, 1, 0, 0, 1], [0] * 10,
...               [1, 1, 1, 1, 0, 0, 1, 0, 1, 0]], float)
>>> dS2 = np.zeros(10); dS2[[2, 3, 7]] = 1          # IDs 3, 4, 8
>>> F2 = mask_filter(dS2, S, origin=1)
>>> F2.nonzero()[0] + 1
array([3, 4])
>>> p = OrderProblem(F2, S, W, origin=1, final=False)
>>> smje(p), smjh(p), hop_greedy(p)
((90.0, (2, 0)), (90.0, (2, 0)), (111.0, (0, 2)))
"""
from __future__ import annotations

import numpy as np


def mask_filter(x: np.ndarray, synopses: np.ndarray, origin: int) -> np.ndarray:
    """``F[a] = x[a]`` where every other site has a tuple with key ``a``, else 0.

    This is the reading that reproduces the source's example [source text, value
    semantics recon]; see :func:`product_filter` for the literal product.

    >>> mask_filter(np.array([1., 2, 3]), np.array([[5., 0, 1], [9, 9, 9], [1, 1, 0]]), 1)
    array([1., 0., 0.])
    """
    idx, others = _others_on_support(x, synopses, origin)
    out = np.zeros(len(x))
    ok = idx[np.all(others > 0, axis=0)]
    out[ok] = x[ok]
    return out


def product_filter(x: np.ndarray, synopses: np.ndarray, origin: int) -> np.ndarray:
    """The literal ``ΔS_i ⊙ Π_{j≠i} S_j`` (option ``filter = "product"``).

    Keeps the same tuples as :func:`mask_filter` but its values count combinations,
    which inflates the cost estimate of every order.

    >>> product_filter(np.array([1., 2, 3]), np.array([[5., 0, 1], [9, 9, 9], [1, 1, 0]]), 1)
    array([5., 0., 0.])
    """
    idx, others = _others_on_support(x, synopses, origin)
    out = np.zeros(len(x))
    out[idx] = x[idx] * np.prod(others, axis=0)
    return out


def _others_on_support(x, synopses, origin):
    """The keys where ``x`` is non-zero and the other sites' counts there (touching only
    those columns keeps a decision cheap when the key domain is large)."""
    idx = np.flatnonzero(x)
    return idx, np.delete(synopses[:, idx], origin, axis=0)


def _term(w, size):
    """``w · size`` with ``0 · inf = 0`` (an unreachable hop that carries nothing)."""
    with np.errstate(invalid="ignore"):
        return np.where(np.asarray(size) == 0, 0.0, np.asarray(w) * size)


class OrderProblem:
    """One order decision: the vector, the synopses, the costs, the origin.

    Parameters
    ----------
    x : ndarray, shape (m,)
        ``ΔS_i`` or ``F_i``.
    synopses : ndarray, shape (n, m)
        ``S_0..S_{n-1}`` (the origin's row is not used).
    w : ndarray, shape (n+1, n+1)
        Path costs between the sites, the query node last.
    origin : int
        Index of the site that owns the block.
    final : bool
        Whether the hop of the final result to the query node counts.
    """

    def __init__(self, x, synopses, w, origin: int, final: bool = True):
        x = np.asarray(x, dtype=float)
        synopses = np.asarray(synopses, dtype=float)
        n = synopses.shape[0]
        if w.shape != (n + 1, n + 1):
            raise ValueError(f"cost matrix must be {(n + 1, n + 1)}, got {w.shape}")
        support = np.flatnonzero(x)   # keys the block lacks can never contribute
        self.x = x[support]
        self.s = synopses[:, support]
        self.w = np.asarray(w, dtype=float)
        self.origin = origin
        self.final = final
        self.n = n
        self.others = [k for k in range(n) if k != origin]

    def sizes(self, order) -> list[float]:
        """``[ΣV0, ΣV1, ...]`` along ``order``."""
        v = self.x
        out = [float(v.sum())]
        for p in order:
            v = v * self.s[p]
            out.append(float(v.sum()))
        return out

    def cost(self, order) -> float:
        """``Cost(origin, order)`` (see the module docstring).

        >>> p = OrderProblem(np.ones(3), np.ones((2, 3)), np.full((3, 3), 2.0), 0)
        >>> p.cost((1,)), OrderProblem(np.ones(3), np.ones((2, 3)),
        ...                            np.full((3, 3), 2.0), 0, final=False).cost((1,))
        (12.0, 6.0)
        """
        order = tuple(order)
        if sorted(order) != self.others:
            raise ValueError(f"order {order} must visit exactly {self.others}")
        sizes = self.sizes(order)
        path = (self.origin,) + order
        total = sum(float(_term(self.w[a, b], s)) for a, b, s in zip(path, path[1:], sizes))
        if self.final:
            total += float(_term(self.w[path[-1], self.n], sizes[-1]))
        return total


def smje(problem: OrderProblem) -> tuple[float, tuple[int, ...]]:
    """The cheapest order (ties: lexicographically smallest) — exact.

    Searches all ``(n-1)!`` orders by dynamic programming over visited sets: the size
    carried on a hop depends only on the *set* of sites visited so far, so the optimum
    over all orders is found in ``O(2^n · n²)`` instead of ``O(n!)``, with the same answer
    as enumeration (a test checks this against brute force).

    >>> p = OrderProblem(np.ones(2), np.array([[1., 1], [0, 0], [1, 0]]),
    ...                  np.array([[0, 1, 9, 0], [1, 0, 1, 0], [9, 1, 0, 0], [0] * 4], float),
    ...                  origin=1, final=False)
    >>> smje(p)
    (11.0, (2, 0))
    """
    o = problem.others
    r = len(o)
    if r == 0:
        return 0.0, ()
    full = (1 << r) - 1
    sizes = np.zeros(1 << r)

    def visit(mask, v, start):
        total = float(v.sum())
        sizes[mask] = total
        if total == 0:
            return   # every superset carries nothing either (sizes stay 0)
        for b in range(start, r):
            visit(mask | (1 << b), v * problem.s[o[b]], b + 1)

    visit(0, problem.x, 0)
    w = problem.w
    idx = np.array(o)
    g = np.full((1 << r, r), np.inf)
    g[full] = _term(w[idx, problem.n], sizes[full]) if problem.final else 0.0
    for mask in range(full - 1, 0, -1):   # supersets are numerically larger: done first
        inside = [b for b in range(r) if mask >> b & 1]
        outside = [b for b in range(r) if not mask >> b & 1]
        hop = _term(w[np.ix_(idx[inside], idx[outside])], sizes[mask])
        rest = np.array([g[mask | (1 << b), b] for b in outside])
        g[mask, inside] = (hop + rest).min(axis=1)
    # walk forward choosing the smallest site index that stays optimal
    order, cur, mask = [], problem.origin, 0
    best = None
    while mask != full:
        outside = [b for b in range(r) if not mask >> b & 1]
        vals = [float(_term(w[cur, o[b]], sizes[mask])) + g[mask | (1 << b), b]
                for b in outside]
        target = min(vals)
        if best is None:
            best = target
        tol = 1e-9 * max(1.0, abs(target))
        b = outside[next(k for k, v in enumerate(vals) if v <= target + tol)]
        order.append(o[b])
        cur, mask = o[b], mask | (1 << b)
    return problem.cost(order), tuple(order)


def smjh(problem: OrderProblem, lookahead: int = 1) -> tuple[float, tuple[int, ...]]:
    """The ``O(n²)`` one-step look-ahead heuristic [body recon].

    At each stage the next site ``p`` minimises ``W[cur][p]·ΣV + Σ(V⊙S_p)·nxt(p)`` where
    ``nxt(p)`` is the cheapest hop out of ``p`` to a site still unvisited (the query hop,
    or 0, when ``p`` would be last). Ties: smaller hop, then smaller index. ``V`` is kept
    on its non-zero keys only, so a stage costs ``O(n · nnz(V))``.

    ``lookahead = d > 1`` (option, not in the source) replaces the ``nxt`` estimate by the
    best continuation over the next ``d - 1`` sites, then ``nxt``: ``O(n^(d+1))``;
    ``d >= n - 1`` is exact.

    >>> p = OrderProblem(np.ones(2), np.array([[1., 1], [0, 0], [1, 0]]),
    ...                  np.array([[0, 1, 9, 0], [1, 0, 1, 0], [9, 1, 0, 0], [0] * 4], float),
    ...                  origin=1, final=False)
    >>> smjh(p), smjh(p, lookahead=2)
    ((11.0, (2, 0)), (11.0, (2, 0)))
    """
    if lookahead < 1:
        raise ValueError(f"lookahead must be >= 1, got {lookahead}")
    v, s = problem.x, problem.s
    cur, rem, order = problem.origin, list(problem.others), []
    while rem:
        ids = np.array(rem)
        score, hop = _scores(problem, cur, v, s, ids, lookahead)
        k = np.lexsort((ids, hop, score))[0]
        p = rem.pop(int(k))
        order.append(p)
        cur = p
        v = v * s[p]
        keep = np.flatnonzero(v)
        v, s = v[keep], s[:, keep]
    return problem.cost(order), tuple(order)


def _scores(problem, cur, v, s, ids, depth):
    """Look-ahead score and hop cost of moving from ``cur`` to each site in ``ids``."""
    w = problem.w
    hop = _term(w[cur, ids], float(v.sum()))
    if depth == 1:
        if len(ids) > 1:
            wr = w[np.ix_(ids, ids)].copy()
            np.fill_diagonal(wr, np.inf)
            nxt = wr.min(axis=1)
        elif problem.final:
            nxt = w[ids, problem.n]
        else:
            nxt = np.zeros(1)
        return hop + _term(nxt, s[ids] @ v), hop
    future = np.empty(len(ids))
    for k, p in enumerate(ids):
        v2 = v * s[p]
        rest = np.delete(ids, k)
        if len(rest) == 0:
            future[k] = float(_term(w[p, problem.n], float(v2.sum()))) if problem.final \
                else 0.0
        else:
            future[k] = _scores(problem, p, v2, s, rest, depth - 1)[0].min()
    return hop + future, hop


def hop_greedy(problem: OrderProblem) -> tuple[float, tuple[int, ...]]:
    """Plain greedy on the next hop's cost alone — the rule SMJH must *not* be.

    Kept as the documented counter-example: on the source's example it picks
    ``[1, 3]`` at cost 111 instead of ``[3, 1]`` at 90 (see the module example).
    """
    v = problem.x
    cur, rem, order = problem.origin, list(problem.others), []
    while rem:
        hops = [float(_term(problem.w[cur, p], float(v.sum()))) for p in rem]
        p = rem.pop(int(np.argmin(hops)))
        order.append(p)
        cur, v = p, v * problem.s[p]
    return problem.cost(order), tuple(order)
