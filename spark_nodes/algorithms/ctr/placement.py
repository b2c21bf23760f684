"""Where the diffusion node and the hosts go.

- diffusion node: the node minimising the total least path cost to the stream sources
  (ties: lowest id), unless given;
- hosts: ``count`` distinct alive nodes, given as a list or drawn from the run's seed.

Examples
--------
>>> import networkx as nx
>>> from emulator.network import NetView
>>> g = nx.path_graph(5)
>>> nx.set_edge_attributes(g, 1.0, "cost")
>>> net = NetView.from_graph(g)
>>> diffusion_node(net, [0, 4, 3])
3
>>> host_nodes(net, 3, None, seed=1) == host_nodes(net, 3, None, seed=1)
True
>>> host_nodes(net, 2, [4, 4], seed=1)
Traceback (most recent call last):
...
ValueError: host_nodes: expected 2 distinct alive nodes, got [4, 4]
"""
from __future__ import annotations

import numpy as np


def diffusion_node(net, sources) -> int:
    """The alive node with the least total path cost to ``sources``."""
    alive = [u for u in net.nodes if net.alive(u)]
    return min(alive, key=lambda u: (sum(net.cost(u, s) for s in sources), u))


def host_nodes(net, count: int, given, seed: int, field: str = "host_nodes") -> tuple:
    """``count`` distinct alive host nodes: ``given`` (checked) or a seeded draw."""
    alive = sorted(u for u in net.nodes if net.alive(u))
    if given is not None:
        ok = (len(given) == count and len(set(given)) == count
              and all(isinstance(u, int) and u in alive for u in given))
        if not ok:
            raise ValueError(f"{field}: expected {count} distinct alive nodes, got {given!r}")
        return tuple(given)
    if not 1 <= count <= len(alive):
        raise ValueError(f"hosts: expected 1..{len(alive)} (alive nodes), got {count}")
    rng = np.random.default_rng([seed, 0x43545248])    # "CTRH": its own stream of draws
    return tuple(sorted(int(u) for u in rng.choice(alive, size=count, replace=False)))
