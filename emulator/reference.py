"""The links medium written the straightforward way: a SimPy process per message.

:func:`simpy_reference` is the model :func:`emulator.deliver` (``medium="links"``) must
equal, as a researcher would write it in SimPy: every message is a process that walks its
route hop by hop, every directed link a ``simpy.Resource`` of capacity one, so a hop
queues FIFO at the moment it reaches its link; serialization ``size_bytes / bandwidth``
holds the link, then ``delay`` passes; the next hop is looked up in the routing of the
epoch in force when the hop becomes ready. It leaves out jitter, loss and dead nodes
(a message with no route arrives at NaN), so compare it on loss- and jitter-free links.

``tests/test_deliver.py`` checks that the two give the same arrival times on random
networks whose routes change mid-flight; ``benchmarks/bench_emulator.py --reference``
times both on the benchmark's network.

Example
-------
The line 0–1–2 of :mod:`emulator.deliver`'s example: A (0→2 at 0.0) reaches node 1 at
0.6; B (1→2 at 0.1) found link 1→2 idle.

>>> import networkx as nx, pandas as pd
>>> from emulator.deliver import _Static
>>> g = nx.path_graph(3)
>>> for e in g.edges: g.edges[e].update(cost=1.0, delay=0.1, bandwidth=100.0)
>>> msgs = pd.DataFrame({"msg_id": [0, 1], "src": [0, 1], "dst": [2, 2],
...                      "sent_at": [0.0, 0.1], "size_bytes": [50, 50]})
>>> [round(t, 6) for t in simpy_reference(_Static(g), msgs)]
[1.2, 0.7]
"""
from __future__ import annotations

import math

import pandas as pd
import simpy

from emulator.network import Network


def simpy_reference(dynamics, messages: pd.DataFrame) -> list[float]:
    """Arrival time of every message of ``messages`` (``msg_id, src, dst, sent_at,
    size_bytes``), in the table's row order; NaN where no route led on. ``dynamics`` has
    ``epochs`` and ``snapshot(t)`` (a :class:`topologies.Dynamics` or any such object)."""
    env, network, links, out = simpy.Environment(), Network(dynamics), {}, {}

    def walk(m):
        yield env.timeout(m.sent_at)
        u = m.src
        while u != m.dst:
            view = network.view(env.now)
            v = view.next_hop(u, m.dst)
            if v is None:
                out[m.msg_id] = math.nan
                return
            link = view.link(u, v)
            resource = links.setdefault((u, v), simpy.Resource(env, 1))
            with resource.request() as request:
                yield request
                yield env.timeout(m.size_bytes / link.bandwidth)
            yield env.timeout(link.delay)
            u = v
        out[m.msg_id] = env.now

    for m in messages.sort_values(["sent_at", "msg_id"]).itertuples(index=False):
        env.process(walk(m))
    env.run()
    return [out[i] for i in messages["msg_id"]]
