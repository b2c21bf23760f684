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
of sharing. ``mac={"model": "802.11"}`` (or ``"802.15.4"``) puts a MAC under it instead
(:mod:`emulator.mac.adapter`): carrier sense, backoff, collisions, hidden terminals,
ACKs and retries.

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

Node 9 has no links: the message to it is lost, and says why.

>>> g.add_node(9)
>>> out = deliver(g, pd.DataFrame({"msg_id": [0], "src": [0], "dst": [9],
...                                "sent_at": [0.0], "size_bytes": [50]}))
>>> out[["lost", "loss_reason"]].values.tolist()
[[True, 'no_route']]

Every argument is checked before any work, against :data:`MESSAGE_COLUMNS`,
:data:`DELIVER_OPTIONS` and the graph schemas of :mod:`topologies.attributes`
(:class:`topologies.schema.Field` tables, which the field reference lists too):

>>> from emulator.deliver import MESSAGE_COLUMNS
>>> list(MESSAGE_COLUMNS)
['msg_id', 'src', 'dst', 'sent_at', 'size_bytes']

A link that cannot exist is refused before any work:

>>> g.edges[1, 2]["delay"] = -0.1
>>> deliver(g, msgs)
Traceback (most recent call last):
...
topologies.schema.FieldError: graph: edge (1, 2) delay: expected a number >= 0, got -0.1
"""
from __future__ import annotations

import bisect
import dataclasses
import functools
import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from emulator import collector
from emulator.transport import MEDIA, check_medium

if TYPE_CHECKING:   # networkx and the routing (SciPy) load on the first call: every
    import networkx as nx   # ``import emulator`` runs this file, Mininet agents too


def __getattr__(name: str):
    # PEP 562: MESSAGE_COLUMNS and DELIVER_OPTIONS are Field tables, and importing
    # topologies.schema runs the topologies package, which loads networkx; built on
    # first use, so that ``import emulator`` stays light
    tables = {"MESSAGE_COLUMNS": _message_columns, "DELIVER_OPTIONS": _deliver_options}
    if name in tables:
        return tables[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def _message_columns() -> dict:
    """``MESSAGE_COLUMNS``: the columns :func:`deliver` reads from ``messages``, in order
    (other columns are the caller's)."""
    from topologies.schema import Field

    return {
        "msg_id": Field("integer", low=0,
                        doc="the message's id, unique in the frame (negative ids are a "
                            "routing protocol's control messages')"),
        "src": Field("integer", doc="the node that sends it (a node of the graph)"),
        "dst": Field("integer", doc="the node it is for (a node of the graph)"),
        "sent_at": Field("number", low=0, doc="when it is sent, in time units"),
        "size_bytes": Field("integer", low=0,
                            doc="bytes on the wire (serialization = size_bytes / bandwidth)"),
    }


@functools.cache
def _deliver_options() -> dict:
    """``DELIVER_OPTIONS``: :func:`deliver`'s keyword options with their defaults
    (``dynamics``, an object, is checked apart)."""
    from emulator.routing import ROUTINGS
    from topologies.schema import Field

    return {
        "medium": Field("choice", "links", choices=MEDIA,
                        doc="links: a channel per directed link; shared: one radio channel"),
        "seed": Field("seed", 0, doc="seeds the jitter and loss draws"),
        "interference_radius": Field(
            "number", None, low=0, low_open=True, allow_inf=True, none=True,
            doc="shared medium: nodes within this distance (node pos) interfere; none: "
                "the nodes of a link"),
        "prefetch_trees": Field(
            "bool", None, none=True,
            doc="compute the coming epochs' least-cost trees in worker processes; none: "
                "when a run asks for most of them (deliver's rule)"),
        "reorder": Field("bool", False, doc="let a message overtake an earlier one on "
                                            "the same link; false: links keep their order"),
        "queue_max_wait": Field(
            "number", None, low=0, low_open=True, none=True,
            doc="a hop that would wait longer than this for its link or the channel is "
                "lost (`queue_expired`; ns-3's Wi-Fi queue: 0.5 s); none: no limit"),
        "routing": Field("choice", "oracle", choices=ROUTINGS,
                         doc="oracle: the epoch's least-cost routes, known at once; aodv, "
                             "olsr, babel, rpl: the protocols, their control packets on "
                             "the medium"),
        "routing_options": Field("table", None, none=True,
                                 doc="shaped like the spec's `[routing]` table: "
                                     "`seconds_per_unit`, `aodv = {...}`, `olsr = {...}`, "
                                     "`babel = {...}`, `rpl = {...}` (RPL's root: the "
                                     "lowest node id unless `root` is given)"),
        "radio": Field("table", None, none=True,
                       doc="shaped like the spec's `[radio]` table (`{model = "
                           "\"log_distance\"}`: the defaults); none: the graph's links "
                           "as given"),
        "energy": Field("table", None, none=True,
                        doc="shaped like the spec's `[energy]` table (`{model = "
                            "\"first_order\"}`: the defaults); none: no node spends "
                            "energy"),
        "energy_step": Field("number", 0.01, low=0, low_open=True,
                             doc="with `energy`: how often the batteries are looked at "
                                 "(a run's `run.step`); a node dies at most this late"),
        "mac": Field("table", None, none=True,
                     doc="shaped like the spec's `[mac]` table (`{model = \"802.11\"}`); "
                         "none: the shared channel's perfect scheduler"),
        "warmup": Field("number", 0.0, low=0,
                        doc="the network starts this long before t = 0: a protocol's "
                            "timers, control packets and batteries run from -warmup, "
                            "the topology as at t = 0, so routes exist when the first "
                            "message is sent (ns-3's applications started after the "
                            "routing converged); times returned stay on the messages' "
                            "clock"),
        "capture": Field("bool", False,
                         doc="keep the ledger and every packet as sent "
                             "(`attrs[\"ledger\"]`, `attrs[\"capture\"]`) for "
                             "`emulator.write_pcap`; a routing protocol then runs without "
                             "its compiled loop (the same run, slower)"),
    }


class _Static:
    """Dynamics of one graph that never changes."""

    epochs = [0.0]

    def __init__(self, graph):
        self.graph = graph

    def snapshot(self, t):
        return self.graph


def _check_arguments(graph, messages, medium, seed, dynamics, interference_radius,
                     prefetch_trees, reorder=False, routing="oracle",
                     routing_options=None, radio=None, energy=None,
                     energy_step=0.01, queue_max_wait=None, warmup=0.0, mac=None,
                     capture=False) -> None:
    """Every argument of :func:`deliver`, before any work: a one-line ``ValueError`` for a
    value the emulator cannot run on, ``TypeError`` for an argument of the wrong kind,
    naming the argument and the attribute, edge, node or row."""
    from topologies.attributes import check_columns, check_graph
    from topologies.schema import FieldError, check_value, plain

    check_medium(medium, None)
    options = _deliver_options()
    for name, value in (("seed", seed), ("interference_radius", interference_radius),
                        ("prefetch_trees", prefetch_trees), ("reorder", reorder),
                        ("routing", routing), ("routing_options", routing_options),
                        ("radio", radio), ("energy", energy),
                        ("energy_step", energy_step), ("queue_max_wait", queue_max_wait),
                        ("warmup", warmup), ("mac", mac), ("capture", capture)):
        if not (value is None and options[name].none):
            # the text "none" stands for None in spec files, not in a Python call
            check_value(name, dataclasses.replace(options[name], none=False), value)
    if routing_options is not None:
        from emulator.routing.params import check

        clean = check(routing_options, "routing_options")
        root = clean["rpl"].get("root")
        if routing == "rpl" and root is not None and root not in graph:
            raise FieldError("routing_options.rpl.root",
                             f"expected a node of the graph, got {root!r}")
    if capture:
        from emulator.pcap.capture import capturable

        why = capturable(routing)
        if why is not None:
            raise ValueError(f"capture: {why}")
    if radio is not None:
        from topologies.radio import radio_from_table

        radio_from_table(radio, "radio")
    if mac is not None:
        from emulator.mac.config import check_mac_medium, mac_from_table

        check_mac_medium(mac_from_table(mac, "mac"), medium, "medium")
    if energy is not None:
        from emulator.energy import ENERGY_SCHEMA, check_energy
        from topologies.schema import check_table

        check_energy(check_table(ENERGY_SCHEMA, energy, "energy"), graph.nodes)
    if dynamics is None:
        check_graph(graph, where="graph")
        _check_costs(graph)
        if medium == "shared" and interference_radius is not None:
            for node, pos in graph.nodes(data="pos"):
                if pos is None:
                    raise FieldError(f"graph: node {node} pos", "missing; interference_radius "
                                     "needs every node's position")
    else:
        check_graph(graph, where="graph", required=())   # it only names the nodes
        if not (hasattr(dynamics, "epochs") and callable(getattr(dynamics, "snapshot", None))):
            raise TypeError("dynamics: expected a topologies.Dynamics (epochs and "
                            f"snapshot(t)), got {type(dynamics).__name__}")
        epochs = dynamics.epochs
        if not hasattr(epochs, "__len__") or len(epochs) == 0:
            raise FieldError("dynamics.epochs", f"expected a list of epoch start times, "
                                                f"got {epochs!r}")
    check_columns(messages, _message_columns(), "messages")
    ids = messages["msg_id"]
    repeated = ids.duplicated().to_numpy()
    if repeated.any():
        row = int(np.flatnonzero(repeated)[0])
        got = ids.iloc[row]
        first = int(np.flatnonzero((ids == got).to_numpy())[0])
        raise FieldError("messages.msg_id", f"expected unique ids, got {plain(got)!r} in "
                                            f"rows {first} and {row}")
    for column in ("src", "dst"):
        bad = ~messages[column].isin(list(graph.nodes))
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise FieldError(f"messages.{column}", f"node {messages[column].iloc[row]} "
                                                   f"(row {row}) is not in the graph")


def _check_costs(graph) -> None:
    """Refuse link costs that least-cost routing in floating point cannot tell apart.

    :mod:`emulator.network` sends ``u`` to a neighbour ``p`` strictly nearer the
    destination with ``cost(p) + w(u, p) == cost(u)``. A positive cost below 2**-53 of a
    path's cost (at most nodes x the largest cost) is lost in that sum, and the node
    behind it would find no next hop: its messages lost as ``no_route`` on a connected
    graph. Refused from 2**-50 on, a margin of 8. (Zero costs are routed: see
    ``emulator.network._acyclic_choice``.)

    >>> import networkx as nx
    >>> g = nx.Graph([(0, 1, {"cost": 1e-20}), (1, 2, {"cost": 1e30})])
    >>> _check_costs(g)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    topologies.schema.FieldError: graph: edge (0, 1) cost: expected 0 or a number >= 2.7e+15 ...
    """
    from topologies.schema import FieldError

    costs = [(float(cost), u, v) for u, v, cost in graph.edges(data="cost") if cost]
    if not costs:
        return
    (low, u, v), (high, x, y) = min(costs), max(costs)
    n = graph.number_of_nodes()
    if low <= high * n * 2.0 ** -50:
        raise FieldError(f"graph: edge ({u}, {v}) cost",
                         f"expected 0 or a number >= {high * n * 2.0 ** -50:.2g} ({n} nodes x "
                         f"2**-50 x the largest cost, {high:g} on edge ({x}, {y}): a smaller "
                         f"one is lost in path sums), got {low!r}")


def deliver(graph: nx.Graph, messages: pd.DataFrame, *, medium: str = "links", seed: int = 0,
            dynamics=None, interference_radius: float | None = None,
            prefetch_trees: bool | None = None, reorder: bool = False,
            routing: str = "oracle", routing_options: dict | None = None,
            radio: dict | None = None, energy: dict | None = None,
            energy_step: float = 0.01, queue_max_wait: float | None = None,
            warmup: float = 0.0, mac: dict | None = None,
            capture: bool = False) -> pd.DataFrame:
    """When each message arrives over ``graph`` (or ``dynamics``), or why it was lost.

    Parameters
    ----------
    graph : networkx.Graph
        Undirected, integer node ids. Edges carry ``cost`` (>= 0), ``delay``,
        ``bandwidth`` (bytes per time unit) and optionally ``jitter``, ``loss``, ``up``;
        nodes optionally ``pos`` and ``alive`` (:mod:`topologies.attributes`).
    messages : DataFrame
        ``msg_id, src, dst, sent_at, size_bytes`` (:data:`MESSAGE_COLUMNS`); ``src`` and
        ``dst`` are nodes of ``graph``, ``msg_id`` unique. Other columns are ignored.
    medium : {"links", "shared"}
    seed : int
        Seeds the jitter and loss draws.
    dynamics : topologies.Dynamics, optional
        A time-varying network instead of the static ``graph`` (``graph`` then only
        names the nodes).
    interference_radius : float, optional
        Shared medium: interference by distance between node positions instead of links.
    prefetch_trees : bool, optional
        Compute every least-cost tree of the coming epochs in worker processes (one
        per core) while this one moves the current epoch's hops
        (:class:`emulator.network.TreePrefetch`). The outputs are the same either way.
        None (default): prefetch when a run will ask for most trees of most epochs —
        at least two epochs, 100 nodes and ``2 / W`` messages per node per epoch with
        ``W`` workers (why: :func:`_worth_prefetching`). Never with a routing
        protocol or batteries.
    reorder : bool
        False (default): a message never overtakes an earlier one on the same link.
        True: jitter is drawn per hop and may reorder a link's messages.
    queue_max_wait : float, optional
        A hop that would wait longer than this for its channel is lost
        (``"queue_expired"``): on a link as it joins the queue, on the shared medium when
        the channel would start it, taking no airtime (ns-3's Wi-Fi queue holds a frame
        0.5 s). None (default): queues have no limit.
    routing : {"oracle", "aodv", "olsr", "babel", "rpl"}
        Who chooses next hops: the epoch's least-cost trees, known at once, or a routing
        protocol whose control packets cross the same medium
        (:mod:`emulator.routing`); the protocol's timers run while a message is in
        flight or waiting for a route.
    routing_options : dict, optional
        The protocol's parameters, shaped like the spec's ``[routing]`` table
        (``{"seconds_per_unit": 1.0, "aodv": {"hello_interval": 0.5}}``).
    warmup : float
        Start the network this many time units before t = 0, as an ns-3 script starts
        its applications once the routing has converged: the protocol's timers and
        control packets (and the batteries) run from ``-warmup`` over the topology of
        t = 0 (a ``dynamics`` starts changing at t = 0 as given), so a proactive
        protocol (OLSR, Babel) has its routes when the first message is sent at t = 0.
        Arrival times stay on the messages' clock; ``attrs["control"]`` keeps the
        warm-up's packets at negative times and ``attrs["routing"]`` counts them.
        0 (default): the network starts with the first message's clock at 0.
    capture : bool
        Keep what a packet capture needs (:func:`emulator.write_pcap`): the ledger, one
        row per transmission, as ``attrs["ledger"]``, and as ``attrs["capture"]`` each
        control packet as sent and each message's key (a ``key`` column of
        ``messages``, if it has one) (:mod:`emulator.pcap.capture`). A routing protocol
        then runs without its compiled loop: the same run, event for event, slower.
    radio : dict, optional
        The radio, shaped like the spec's ``[radio]`` table (``{"model":
        "log_distance"}`` takes every default; :mod:`topologies.radio`). Under
        ``log_distance`` the radio links the nodes of ``graph`` by their positions
        (every node needs a ``pos``): a link of the graph keeps its attributes, a new
        one takes :data:`topologies.LINK_DEFAULTS` (cost 1); every link gets its bit
        error rate, so a hop of ``b`` bytes is lost with ``1 - (1 - loss)(1 -
        ber)^(8 b)``. With ``dynamics``, the radio applies to a static or mobility
        dynamics of :mod:`topologies` (their ``with_radio``; a schedule takes the unit
        disk only); shadowing is drawn from ``seed``. ``unit_disk`` keeps the links as
        given, ``meters_per_unit`` scaling their ``length_m`` (another dynamics sets its
        own).
    mac : dict, optional
        The MAC under the shared medium, shaped like the spec's ``[mac]`` table
        (``{"model": "802.11"}``, ``"802.15.4"``, or ``"ideal"``: the perfect scheduler,
        as None; :mod:`emulator.mac.config`). Another model than ideal needs
        ``medium="shared"``: frames then contend, collide and are retried
        (:mod:`emulator.mac.adapter`), losses say ``retry_limit``,
        ``channel_access_failure``, ``queue_full`` or ``queue_expired``, a frame given up
        at the retry limit is a broken link to the routing protocol, and
        ``attrs["mac"]`` holds the MAC's figures. Its times are in seconds:
        ``routing_options["seconds_per_unit"]`` (default 1) converts.

    Returns
    -------
    DataFrame
        ``msg_id``, ``arrived_at`` (NaN when lost), ``lost`` (bool, as in the ledger) and
        ``loss_reason`` (``"dead_node"``, ``"no_route"`` or ``"link_loss"``; ``""`` when
        delivered), in the order of ``messages``; ``attrs["hops"]`` counts the hops
        attempted. With a protocol, a data message may also be lost as ``queue_full``,
        ``ttl`` or ``link_break``, and ``attrs["control"]`` holds its control traffic,
        one row per transmission (``time, node, type, size_bytes``; ``type`` a
        categorical of the types in the order first sent, a notice's hops as type
        ``NOTICE``), ``attrs["routing"]`` its figures (packets and bytes by type,
        drops by reason, the first packet's wait for a route per flow).

    Raises
    ------
    TypeError
        ``graph`` is not a networkx graph, ``messages`` not a DataFrame, ``dynamics`` has
        no ``epochs`` or ``snapshot``.
    ValueError
        A value the emulator cannot run on (:data:`MESSAGE_COLUMNS`,
        :data:`DELIVER_OPTIONS`, :data:`topologies.attributes.LINK_ATTRIBUTES`,
        :data:`~topologies.attributes.NODE_ATTRIBUTES`), named with its argument and
        edge, node or row; checked before any work.

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
    _check_arguments(graph, messages, medium, seed, dynamics, interference_radius,
                     prefetch_trees, reorder, routing, routing_options, radio, energy,
                     energy_step, queue_max_wait, warmup, mac, capture)
    if radio is not None:
        graph, dynamics = _with_radio(graph, dynamics, radio, seed)
    sent = messages
    if warmup > 0:   # the network's clock runs warmup ahead of the messages': then back
        messages, dynamics = _started_early(graph, messages, dynamics, warmup)
    network, dynamics = _network(graph, messages, dynamics,
                                 _trees_ahead(prefetch_trees, routing, energy))
    try:
        out = _run(network, dynamics, messages, medium, seed, interference_radius,
                   reorder, routing, routing_options, energy, energy_step, queue_max_wait,
                   mac, radio, capture)
    finally:
        network.close()
    return out if warmup == 0 else _on_messages_clock(out, sent, warmup)


def _started_early(graph, messages: pd.DataFrame, dynamics, warmup: float):
    """``(messages, dynamics)`` of a network started ``warmup`` before the messages'
    t = 0: their sending times moved ``warmup`` later, the network's first epoch
    stretched over the warm-up."""
    static = _Static(graph.copy(as_view=True)) if dynamics is None else dynamics
    return (messages.assign(sent_at=messages["sent_at"] + warmup),
            _StartedEarly(static, warmup))


class _StartedEarly:
    """``dynamics`` with ``by`` time units before it: its first epoch's network from 0
    to ``by``, then its epochs ``by`` later (looked up by index, so no start time is
    rounded into the epoch before).

    >>> early = _StartedEarly(_Static("g"), 5.0)
    >>> early.epochs, early.snapshot(0.0), early.snapshot(7.0)
    ([0.0], 'g', 'g')
    """

    def __init__(self, dynamics, by: float):
        self.dynamics = dynamics
        #: the radio a mobility dynamics carries (a MAC reads its powers), or None
        self.radio = getattr(dynamics, "radio", None)
        self._starts = list(dynamics.epochs)
        self.epochs = [0.0] + [t + by for t in self._starts[1:]]

    def snapshot(self, t: float):
        index = max(bisect.bisect_right(self.epochs, t) - 1, 0)
        return self.dynamics.snapshot(self._starts[index])


def _on_messages_clock(out: pd.DataFrame, messages: pd.DataFrame,
                       warmup: float) -> pd.DataFrame:
    """:func:`deliver`'s frame of a network started ``warmup`` early, its times moved
    back onto the messages' clock (the arrival of a message sent at its own ``sent_at``
    plus the time it took)."""
    took = out["arrived_at"].to_numpy() - (messages["sent_at"].to_numpy() + warmup)
    moved = out.assign(arrived_at=messages["sent_at"].to_numpy() + took)
    moved.attrs = dict(out.attrs)
    for table in ("control", "ledger"):
        if table in out.attrs:
            moved.attrs[table] = out.attrs[table].assign(
                time=out.attrs[table]["time"] - warmup)
    if "energy" in out.attrs:   # deaths on the messages' clock (in the warm-up: < 0)
        energy = out.attrs["energy"]
        moved.attrs["energy"] = {**energy,
                                 "first_node_death": energy["first_node_death"] - warmup,
                                 "deaths": {n: t - warmup for n, t in energy["deaths"].items()}}
    return moved


def _with_radio(graph, dynamics, table: dict, seed: int):
    """``(graph, dynamics)`` under the radio ``table`` (checked): see :func:`deliver`.
    Shadowing is drawn from the seed :func:`experiments.planning.derived_seed` gives
    ``(seed, "radio")``, so a run and its spec agree."""
    import networkx as nx

    from topologies.model import LINK_DEFAULTS
    from topologies.radio import check_positions, radio_from_table
    from topologies.schema import FieldError

    radio = radio_from_table(table, "radio")
    shadow_seed = int(np.random.SeedSequence([seed] + [ord(c) for c in "radio"])
                      .generate_state(1)[0])
    if dynamics is not None:
        if hasattr(dynamics, "with_radio"):
            try:
                return graph, dynamics.with_radio(radio, shadow_seed)
            except ValueError as err:   # a schedule under log_distance
                field, _, message = str(err).partition(": ")
                raise FieldError(field, message) from None
        if radio.model == "log_distance":
            raise FieldError("radio.model", f'"log_distance" applies to a graph or to '
                             f"topologies' static and mobility dynamics, not to a "
                             f"{type(dynamics).__name__}")
        return graph, dynamics
    where = dict(graph.nodes(data="pos"))
    try:
        check_positions(radio, list(graph.nodes), where)
    except ValueError as err:
        raise FieldError("radio.model", str(err).partition(": ")[2]) from None
    out = nx.Graph()
    out.add_nodes_from(graph.nodes(data=True))
    nodes = list(graph.nodes)
    if radio.model == "unit_disk":
        for u, v, attrs in graph.edges(data=True):
            length = {} if where[u] is None or where[v] is None else \
                {"length_m": math.dist(where[u], where[v]) * radio.meters_per_unit}
            out.add_edge(u, v, **attrs, **length)
        return out, None
    positions = np.array([where[u] for u in nodes], dtype=float)
    alive = [bool(graph.nodes[u].get("alive", True)) for u in nodes]
    pairs, dist, bers = radio.links(positions, alive, np.random.default_rng(shadow_seed))
    for (i, j), d, ber in zip(pairs.tolist(), dist.tolist(), bers.tolist()):
        u, v = nodes[i], nodes[j]
        attrs = dict(graph.edges[u, v]) if graph.has_edge(u, v) else dict(LINK_DEFAULTS)
        out.add_edge(u, v, **attrs, ber=ber, length_m=d * radio.meters_per_unit)
    return out, None


def _trees_ahead(prefetch_trees: bool | None, routing: str, energy) -> bool | None:
    """``prefetch_trees`` as :func:`_network` takes it: never with a routing protocol,
    which chooses its own next hops and reads no tree (the rule of None once started
    the workers for AODV and OLSR too, and their trees kept the other core busy for
    nothing), nor with batteries (nodes that may die split the epochs as they go).

    >>> _trees_ahead(None, "oracle", None), _trees_ahead(True, "oracle", None)
    (None, True)
    >>> _trees_ahead(None, "olsr", None), _trees_ahead(True, "aodv", None)
    (False, False)
    >>> _trees_ahead(None, "oracle", {"initial_joules": 1.0})
    False
    """
    return prefetch_trees if routing == "oracle" and energy is None else False


def _network(graph, messages: pd.DataFrame, dynamics, prefetch_trees: bool | None):
    """The routed network :func:`deliver` runs on, and its dynamics (``graph`` alone when
    ``dynamics`` is None)."""
    from emulator.network import Network

    # a read-only view: freezing the caller's own graph would stop them editing it
    dynamics = _Static(graph.copy(as_view=True)) if dynamics is None else dynamics
    if prefetch_trees is None:
        prefetch_trees = _worth_prefetching(len(messages), graph.number_of_nodes(),
                                            len(dynamics.epochs))
    return Network(dynamics, prefetch=prefetch_trees), dynamics


def _worth_prefetching(messages: int, nodes: int, epochs: int,
                       workers: int | None = None) -> bool:
    """:func:`deliver`'s rule for ``prefetch_trees=None``: at least two epochs, 100 nodes,
    and ``2 / workers`` messages per node per epoch (``workers``: the prefetch's worker
    processes, by default one per core, :func:`emulator.network.prefetch_workers`).

    The workers compute every tree of an epoch, wanted or not; built as hops need them,
    an epoch with ``r`` messages per node wants ``1 - exp(-r)`` of its trees (random
    destinations). Measured on ``bench_scale``'s 1,000 mobile nodes with two workers on
    two cores: 10^5 messages (r = 1) 20.6 s built as needed, 15.9 s prefetched; r = 0.5
    13.5 s against 15.6 s. With one worker the crossing was near r = 2. Below 100 nodes
    a tree costs microseconds and the workers' start and the tables' transfer outweigh
    them (at r = 1: 50 nodes 0.11 s against 0.15 s; 100 nodes alike; 200 nodes 1.04 s
    against 0.80 s).

    >>> _worth_prefetching(10**5, 1000, 100, workers=2), _worth_prefetching(10**5, 1000, 100, workers=1)
    (True, False)
    >>> _worth_prefetching(10**4, 50, 100, workers=2)   # too few nodes
    False
    """
    from emulator.network import prefetch_workers

    workers = workers or prefetch_workers()
    return epochs >= 2 and nodes >= 100 and messages * workers >= 2 * nodes * epochs


def _run(network, dynamics, messages: pd.DataFrame, medium: str, seed: int,
         interference_radius: float | None, reorder: bool, routing: str,
         routing_options: dict | None, energy: dict | None = None,
         energy_step: float = 0.01, queue_max_wait: float | None = None, mac=None,
         radio=None, capture: bool = False) -> pd.DataFrame:
    """:func:`deliver` once its arguments are checked and its network is built."""
    from emulator.routing.host import open_transport

    def positions(t):
        snap = dynamics.snapshot(network.epochs[network.epoch_index(t)])
        pos = dict(snap.nodes(data="pos"))
        if any(p is None for p in pos.values()):   # a static graph was checked before
            raise ValueError("interference_radius: every node needs a position "
                             "(node attribute 'pos')")
        return {u: tuple(p) for u, p in pos.items()}

    params = None
    if routing != "oracle":
        from emulator.routing.params import resolve

        params = resolve(routing, routing_options, "routing_options")
    mac_config = None
    if mac is not None:
        from emulator.mac.config import mac_from_table
        from topologies.radio import radio_from_table

        mac_config = mac_from_table(mac, "mac")
        radio = None if radio is None else radio_from_table(radio, "radio")
    seconds_per_unit = (routing_options or {}).get("seconds_per_unit", 1.0)
    ledger = recorder = None
    if capture:
        from emulator.ledger import Ledger
        from emulator.pcap.capture import Capture

        ledger = Ledger()
        recorder = Capture(None if routing == "oracle" else routing, params,
                           seconds_per_unit)
        if "key" in messages.columns:
            recorder.data_keys(messages["msg_id"], messages["key"])
    transport = open_transport(network, ledger, seed, medium, interference_radius, positions,
                               reorder=reorder, max_wait=queue_max_wait, routing=routing,
                               routing_params=params, mac=mac_config, radio=radio,
                               seconds_per_unit=seconds_per_unit, capture=recorder)
    book = None
    if energy is not None:
        from emulator.energy import Energy, EnergyBook

        book = transport.energy = EnergyBook(
            Energy.from_table({"model": "first_order", **energy}), network.build_view(0).nodes)
    order = messages.sort_values(["sent_at", "msg_id"], kind="stable")
    # no reference cycles here: on bench_scale at 10^6 messages the collector's passes
    # over every live message and calendar entry took 4-9 s of an 80 s run on links
    with collector.paused():
        transport.send_many(*(order[c].to_numpy(kind) for c, kind in
                              (("msg_id", np.int64), ("src", np.int64), ("dst", np.int64),
                               ("sent_at", float), ("size_bytes", np.int64))))
        if book is None:
            transport.advance()
        else:
            end = _advance_with_batteries(transport, network, book, energy_step)
    arrived_ids, arrived_at, lost_ids, lost_reasons = transport.outcomes()
    ids = messages["msg_id"].to_numpy(np.int64)
    where = pd.Index(ids)
    arrival = np.full(len(ids), math.nan)
    arrival[where.get_indexer(arrived_ids)] = arrived_at
    reasons = np.full(len(ids), "", object)
    reasons[where.get_indexer(lost_ids)] = lost_reasons
    out = pd.DataFrame({"msg_id": ids, "arrived_at": arrival, "lost": reasons != "",
                        "loss_reason": pd.array(reasons, dtype="string")})
    out.attrs["hops"] = transport.hops
    if getattr(transport, "mac", None) is not None:
        out.attrs["mac"] = transport.mac.counters()
    if routing != "oracle":
        out.attrs["control"] = transport.control_log.frame()
        out.attrs["routing"] = transport.stats()
    if book is not None:
        out.attrs["energy"] = book.summary(end)
    if capture:
        out.attrs["ledger"] = ledger.frame()
        out.attrs["capture"] = recorder.frame()
    return out


def _advance_with_batteries(transport, network, book, step: float) -> float:
    """Advance ``transport`` to its end one ``step`` at a time, looking at the batteries
    at the start of each step (as a run's backend does at each driver step; steps with
    nothing to do are skipped). Returns the end of the last step."""
    k = 0   # steps on a grid of integers, so that times do not drift
    while not math.isinf(nxt := transport.next_time()):
        k = max(k, math.floor(min(nxt, book.next_empty()) / step))
        died = book.check(k * step)
        if died:
            network.kill(died, k * step)
            transport.forget_views()
        k += 1
        transport.advance(k * step)
    return k * step
