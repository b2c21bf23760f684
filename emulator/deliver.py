"""The network alone: causal hop-by-hop delivery over links or a shared radio medium.

:func:`deliver` takes a networkx graph and a table of messages and says when each one
arrives (or why it was lost), for researchers who study the network itself. It runs
:class:`emulator.transport.Transport`, an event calendar in which a hop joins its channel at the moment
it reaches it and is served in that order:

- ``medium="links"``: every directed link is its own channel, FIFO in the order hops
  reach it (ties: the order the hops became ready, i.e. message order at equal times);
- ``medium="shared"``: one radio channel. A transmission u→v excludes, for its
  serialization time, every other transmission whose sender or receiver is u, v or a
  neighbour of u or v (the two-hop conflict rule). Waiting transmissions are considered in
  the order they became ready; one starts as soon as it conflicts with no transmission
  in progress and with no waiting transmission that became ready before it (no
  overtaking inside a neighbourhood). Neighbours are the live links of the epoch, or,
  with ``interference_radius``, the nodes whose positions (node attribute ``pos``) lie
  within that radius.

Per hop: serialization ``size_bytes / bandwidth``, then ``delay + U(0, jitter)``, then a
Bernoulli(``loss``) draw; the next hop is looked up in the routing of the epoch in force
when the hop becomes ready (a route change mid-flight re-routes the message). A hop from
or towards a dead node, or with no route, loses the message.

What the shared medium leaves out against 802.11 DCF: carrier sensing with random
backoff and contention windows (here the channel is granted at once, in ready order),
RTS/CTS, collisions and hidden terminals (the conflict rule is a perfect scheduler:
nothing collides), capture, a carrier-sense range larger than the interference range,
rate adaptation and MAC acknowledgements and retries. It is an upper bound on what a
real channel delivers under the same load, with the serialization time as the only cost
of sharing.

Examples
--------
The line 0–1–2, links of delay 0.1 and 100 bytes per time unit, 50-byte messages: A
(0→2 at 0.0) reaches node 1 at 0.6; B (1→2 at 0.1) found link 1→2 idle and is not held
behind A.

>>> import networkx as nx, pandas as pd
>>> g = nx.path_graph(3)
>>> for e in g.edges: g.edges[e].update(cost=1.0, delay=0.1, bandwidth=100.0)
>>> msgs = pd.DataFrame({"msg_id": [0, 1], "src": [0, 1], "dst": [2, 2],
...                      "sent_at": [0.0, 0.1], "size_bytes": [50, 50]})
>>> deliver(g, msgs)[["msg_id", "arrived_at"]].round(6).values.tolist()
[[0.0, 1.2], [1.0, 0.7]]
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from emulator import collector
from emulator.transport import Transport, check_medium

if TYPE_CHECKING:   # networkx and the routing (SciPy) load on the first call: every
    import networkx as nx   # ``import emulator`` runs this file, Mininet agents too

#: Columns :func:`deliver` needs.
MESSAGE_COLUMNS = ("msg_id", "src", "dst", "sent_at", "size_bytes")



class _Static:
    """Dynamics of one graph that never changes."""

    epochs = [0.0]

    def __init__(self, graph):
        self.graph = graph

    def snapshot(self, t):
        return self.graph


def _check_messages(graph, messages: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in MESSAGE_COLUMNS if c not in messages.columns]
    if missing:
        raise ValueError(f"messages: missing columns {missing}; expected "
                         f"{', '.join(MESSAGE_COLUMNS)}")
    for column in ("src", "dst"):
        bad = ~messages[column].isin(list(graph.nodes))
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise ValueError(f"messages.{column}: node {messages[column].iloc[row]} "
                             f"(row {row}) is not in the graph")
    for column in ("size_bytes", "sent_at"):
        values = pd.to_numeric(messages[column], errors="coerce")
        bad = ~(values >= 0)
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise ValueError(f"messages.{column}: expected a number >= 0, got "
                             f"{messages[column].iloc[row]!r} (row {row})")
    if messages["msg_id"].duplicated().any():
        raise ValueError("messages.msg_id: expected unique ids")
    return messages


def deliver(graph: nx.Graph, messages: pd.DataFrame, *, medium: str = "links", seed: int = 0,
            dynamics=None, interference_radius: float | None = None,
            prefetch_trees: bool | None = None) -> pd.DataFrame:
    """When each message arrives over ``graph`` (or ``dynamics``), or why it was lost.

    Parameters
    ----------
    graph : networkx.Graph
        Edges carry ``cost``, ``delay``, ``bandwidth`` (bytes per time unit) and
        optionally ``jitter``, ``loss``; nodes optionally ``pos`` and ``alive``.
    messages : DataFrame
        ``msg_id, src, dst, sent_at, size_bytes``.
    medium : {"links", "shared"}
    seed : int
        Seeds the jitter and loss draws.
    dynamics : topologies.Dynamics, optional
        A time-varying network instead of the static ``graph`` (``graph`` then only
        names the nodes).
    interference_radius : float, optional
        Shared medium: interference by distance between node positions instead of links.
    prefetch_trees : bool, optional
        Compute every least-cost tree of the coming epochs in a second process while
        this one moves the current epoch's hops (:class:`emulator.network.TreePrefetch`).
        The outputs are the same either way. None (default): prefetch when a run will
        ask for nearly every tree of every epoch — at least two epochs and at least two
        messages per node per epoch (a random destination per message then leaves under
        14 % of an epoch's trees unused; the second process computes an epoch's trees in
        about 0.7 of the time one at a time costs, so with fewer messages it is not
        worth waiting for).

    Returns
    -------
    DataFrame
        ``msg_id, arrived_at`` (NaN when lost), ``lost`` (the reason, or ``""``), in the
        order of ``messages``; ``attrs["hops"]`` counts the hops attempted.

    Examples
    --------
    The line 0–1–2–3: 0→1 and 2→3 at once. On separate links both take 0.5 + 0.1; on a
    shared channel node 2 hears node 1, so 2→3 waits for 0→1 to end.

    >>> import networkx as nx, pandas as pd
    >>> g = nx.path_graph(4)
    >>> for e in g.edges: g.edges[e].update(cost=1.0, delay=0.1, bandwidth=100.0)
    >>> msgs = pd.DataFrame({"msg_id": [0, 1], "src": [0, 2], "dst": [1, 3],
    ...                      "sent_at": [0.0, 0.0], "size_bytes": [50, 50]})
    >>> deliver(g, msgs)["arrived_at"].round(6).tolist()
    [0.6, 0.6]
    >>> deliver(g, msgs, medium="shared")["arrived_at"].round(6).tolist()
    [0.6, 1.1]
    """
    import networkx as nx

    from emulator.network import Network

    check_medium(medium, interference_radius)
    _check_messages(graph, messages)
    dynamics = _Static(nx.freeze(graph)) if dynamics is None else dynamics
    if prefetch_trees is None:
        prefetch_trees = _worth_prefetching(len(messages), graph.number_of_nodes(),
                                            len(dynamics.epochs))
    network = Network(dynamics, prefetch=prefetch_trees)
    try:
        return _run(network, dynamics, messages, medium, seed, interference_radius)
    finally:
        network.close()


def _worth_prefetching(messages: int, nodes: int, epochs: int) -> bool:
    """:func:`deliver`'s rule for ``prefetch_trees=None``: at least two epochs and two
    messages per node per epoch.

    >>> _worth_prefetching(10**6, 1000, 100), _worth_prefetching(10**5, 1000, 100)
    (True, False)
    """
    return epochs >= 2 and messages >= 2 * nodes * epochs


def _run(network, dynamics, messages: pd.DataFrame, medium: str, seed: int,
         interference_radius: float | None) -> pd.DataFrame:
    """:func:`deliver` once its arguments are checked and its network is built."""
    from emulator.messages import Message

    def positions(t):
        snap = dynamics.snapshot(network.epochs[network.epoch_index(t)])
        try:
            return {u: tuple(d["pos"]) for u, d in snap.nodes(data=True)}
        except KeyError:
            raise ValueError("interference_radius: every node needs a position "
                             "(node attribute 'pos')") from None

    transport = Transport(network, None, seed, medium, interference_radius,
                          positions)
    order = messages.sort_values(["sent_at", "msg_id"], kind="stable")
    columns = [order[c].astype(kind).tolist() for c, kind in
               (("msg_id", "int64"), ("src", "int64"), ("dst", "int64"), ("sent_at", float),
                ("size_bytes", "int64"))]
    # no reference cycles here: on bench_scale at 10^6 messages the collector's passes
    # over every live message and calendar entry took 4-9 s of an 80 s run on links
    with collector.paused():
        for msg_id, src, dst, sent_at, size_bytes in zip(*columns):
            transport.send(Message(msg_id, "data", src, dst, sent_at, 1.0, size_bytes, None))
        transport.advance()
    arrived = {m.msg_id: t for t, m in transport.arrivals}
    lost = {m.msg_id: reason for _, m, reason, _ in transport.losses}
    ids = messages["msg_id"].astype("int64")
    out = pd.DataFrame({"msg_id": ids.to_numpy(),
                        "arrived_at": [arrived.get(int(i), math.nan) for i in ids],
                        "lost": [lost.get(int(i), "") for i in ids]})
    out.attrs["hops"] = transport.hops
    return out
