"""Lottery routing: the adaptive-order baseline of distributed eddies (Deddy, SwAP).

Site ``k`` keeps, per other site ``i``, ``sent[i]`` (tuples it sent to ``i``) and
``res[i]`` (results ``i`` produced from them, reported back). The selectivity factor
``sf[i] = sent[i] / res[i]`` is 1 before anything was sent and +inf when tuples were sent
but nothing came back [source rule; counter update recon]. A block goes to the unvisited
site of largest ``sf`` (ties: smallest index), or, with ``draw = "proportional"``, to one
drawn with probability ∝ ``sf`` (uniformly among the +inf ones if there are any).

>>> c = LotteryCounters()
>>> c.choose([0, 2], None, "argmax")          # nothing sent yet: all 1, smallest wins
0
>>> c.sent_to(0, 3); c.reported(0, 3); c.sent_to(2, 3); c.reported(2, 1)
>>> c.sf(0), c.sf(2), c.choose([0, 2], None, "argmax")
(1.0, 3.0, 2)
"""
from __future__ import annotations

import math

import numpy as np


class LotteryCounters:
    """One site's ``sent`` / ``res`` counters and its choice of the next site."""

    def __init__(self):
        self.sent: dict[int, float] = {}
        self.res: dict[int, float] = {}

    def sent_to(self, site: int, n: float) -> None:
        """Count ``n`` tuples sent to ``site``."""
        self.sent[site] = self.sent.get(site, 0.0) + n

    def reported(self, site: int, n: float) -> None:
        """Count ``n`` results ``site`` reported back."""
        self.res[site] = self.res.get(site, 0.0) + n

    def sf(self, site: int) -> float:
        """The selectivity factor ``sent / res`` of ``site``."""
        sent = self.sent.get(site, 0.0)
        if sent == 0:
            return 1.0
        res = self.res.get(site, 0.0)
        return math.inf if res == 0 else sent / res

    def choose(self, remaining, rng: np.random.Generator | None, draw: str) -> int:
        """The next site among ``remaining`` (sorted indices)."""
        remaining = sorted(remaining)
        sf = np.array([self.sf(s) for s in remaining])
        if draw == "argmax":
            return remaining[int(np.argmax(sf))]   # argmax returns the first maximum
        top = np.isinf(sf)
        weights = top.astype(float) if top.any() else sf
        return remaining[int(rng.choice(len(remaining), p=weights / weights.sum()))]
