"""The schemas of what a graph and a message frame handed to the Python API must hold.

:data:`LINK_ATTRIBUTES` and :data:`NODE_ATTRIBUTES` are every attribute the emulator
reads from a networkx graph; :func:`check_graph` checks a graph against them before any
work, :func:`check_columns` a pandas frame against a column schema. Both raise a
``ValueError`` (a :class:`~topologies.schema.FieldError`) naming the argument, the
attribute and the offending edge, node or row.

Examples
--------
>>> import networkx as nx
>>> g = nx.path_graph(3)
>>> for e in g.edges: g.edges[e].update(cost=1.0, delay=0.1, bandwidth=100.0)
>>> g.edges[1, 2]["delay"] = -0.1
>>> check_graph(g)
Traceback (most recent call last):
...
topologies.schema.FieldError: graph: edge (1, 2) delay: expected a number >= 0, got -0.1
"""
from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping

import numpy as np

from topologies.model import LINK_DEFAULTS
from topologies.schema import Field, FieldError, check_value, plain
from topologies.values import LINK_ATTRIBUTE_RULES

_LINK_DOCS = {
    "cost": "link cost per data unit (communication cost = size units x cost, per hop)",
    "delay": "propagation delay per hop, in time units",
    "jitter": "extra delay per hop, uniform in [0, jitter]",
    "bandwidth": "bytes per time unit (serialization = size_bytes / bandwidth); inf: none",
    "loss": "probability that a hop loses the message",
}

#: Every link attribute the emulator reads, with its range and the value a topology
#: gives a link that names none.
LINK_ATTRIBUTES: dict[str, Field] = {
    name: Field("number", LINK_DEFAULTS[name], doc=_LINK_DOCS[name],
                **{k: v for k, v in LINK_ATTRIBUTE_RULES[name].items()})
    for name in LINK_DEFAULTS}
# What the radio and the positions give a link (topologies.radio); a graph may set them.
LINK_ATTRIBUTES.update(
    ber=Field("number", 0.0, low=0, high=1,
              doc="bit error rate: a hop of b bytes is also lost with 1 - (1 - ber)^(8 b) "
                  "(a log_distance radio sets it)"),
    length_m=Field("number", 0.0, low=0,
                   doc="the link's length in metres (0: unknown; none given: the distance "
                       "between the nodes' positions, one metre a unit)"))

#: Every node attribute the emulator reads.
NODE_ATTRIBUTES: dict[str, Field] = {
    "pos": Field("position", None, none=True,
                 doc="position (x, y): distance link costs, radio range, interference"),
    "alive": Field("bool", True, doc="false: the node is down (nothing passes through it)"),
}

#: Link state the emulator reads beside the attributes (``emulator.network`` skips a link
#: whose ``up`` is false).
LINK_STATE: dict[str, Field] = {
    "up": Field("bool", True, doc="false: the link is down (nothing passes over it)"),
}

#: What :func:`check_graph` requires on every edge by default: an edge without a
#: bandwidth or a delay would run on a silent default and look plausible.
REQUIRED_LINK_ATTRIBUTES = ("cost", "delay", "bandwidth")


def check_graph(graph, where: str = "graph",
                required: Iterable[str] = REQUIRED_LINK_ATTRIBUTES) -> None:
    """Check every node and edge attribute the emulator reads; ``required`` link
    attributes must be on every edge. Other attributes are the caller's and are left
    alone.

    >>> import networkx as nx
    >>> check_graph(nx.Graph([(0, 1)]), where="deliver: graph")
    Traceback (most recent call last):
    ...
    topologies.schema.FieldError: deliver: graph: edge (0, 1) cost: missing; expected a number >= 0
    >>> check_graph(nx.Graph([("a", "b")]))
    Traceback (most recent call last):
    ...
    topologies.schema.FieldError: graph: node 'a': expected an integer node id
    """
    import networkx as nx

    if not isinstance(graph, nx.Graph):
        raise TypeError(f"{where}: expected a networkx graph, got {type(graph).__name__}")
    if graph.is_directed() or graph.is_multigraph():
        raise FieldError(where, "expected an undirected networkx.Graph (links carry both "
                                "directions), got a " + type(graph).__name__)
    if graph.number_of_nodes() == 0:
        raise FieldError(where, "expected at least one node")
    for node, data in graph.nodes(data=True):
        if isinstance(node, bool) or not isinstance(node, (int, np.integer)):
            raise FieldError(f"{where}: node {node!r}", "expected an integer node id")
        _check_attributes(f"{where}: node {node}", NODE_ATTRIBUTES, data, ())
    required = tuple(required)
    for u, v, data in graph.edges(data=True):
        if u == v:
            raise FieldError(f"{where}: edge ({u}, {v})", "expected two different end nodes "
                                                           "(a self-loop carries nothing)")
        _check_attributes(f"{where}: edge ({u}, {v})", LINK_ATTRIBUTES, data, required)
        _check_attributes(f"{where}: edge ({u}, {v})", LINK_STATE, data, ())


def _check_attributes(where: str, schema: Mapping[str, Field], data: Mapping,
                      required: tuple) -> None:
    for name, rule in schema.items():
        if name in data:
            check_value(f"{where} {name}", rule, data[name])
        elif name in required:
            raise FieldError(f"{where} {name}", f"missing; expected {rule.expected}")


def check_columns(frame, schema: Mapping[str, Field], where: str) -> None:
    """Check a pandas frame's columns against ``schema`` (kinds ``number``, ``integer``,
    ``seed``): presence, a numeric dtype, no NaN, the range; the first offending row
    is named. Extra columns are the caller's.

    >>> import pandas as pd
    >>> schema = {"sent_at": Field("number", low=0), "size_bytes": Field("integer", low=0)}
    >>> check_columns(pd.DataFrame({"sent_at": [0.0, -1.0], "size_bytes": [5, 5]}),
    ...               schema, "messages")
    Traceback (most recent call last):
    ...
    topologies.schema.FieldError: messages.sent_at: expected a number >= 0, got -1.0 (row 1)
    >>> check_columns(pd.DataFrame({"sent_at": [0.0], "size_bytes": [2.5]}), schema, "messages")
    Traceback (most recent call last):
    ...
    topologies.schema.FieldError: messages.size_bytes: expected an integer >= 0, got 2.5 (row 0)
    """
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{where}: expected a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in schema if c not in frame.columns]
    if missing:
        raise FieldError(where, f"missing columns {missing}; expected {', '.join(schema)}")
    if frame.columns.duplicated().any():
        raise FieldError(where, "expected each column once, got "
                                f"{sorted(set(frame.columns[frame.columns.duplicated()]))} twice")
    for column, rule in schema.items():
        values = frame[column]
        numeric = _numbers(values)
        bad = np.isnan(numeric)
        if rule.kind in ("integer", "seed"):
            with np.errstate(invalid="ignore"):   # NaN and inf: refused on this line
                bad |= ~np.isfinite(numeric) | (np.mod(numeric, 1) != 0)
            if not pd.api.types.is_signed_integer_dtype(values.dtype):
                # the emulator holds ids and sizes as int64: a float such as 1e30 or a
                # Python int past 2**63 would wrap around silently
                bad |= ~(np.abs(numeric) < 2.0 ** 63)
        elif not rule.allow_inf:
            bad |= np.isinf(numeric)
        low = 0 if rule.kind == "seed" else rule.low
        if low is not None:
            bad |= (numeric <= low) if rule.low_open else (numeric < low)
        if rule.high is not None:
            bad |= numeric > rule.high
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise FieldError(f"{where}.{column}", f"expected {rule.expected}, got "
                                                  f"{plain(values.iloc[row])!r} (row {row})")


def _numbers(values) -> np.ndarray:
    """A column as floats, NaN where a cell is missing or not a number: text (``"5"``
    too: a frame read without dtypes), a bool, None.

    >>> import pandas as pd
    >>> _numbers(pd.Series([1, "5", True, None, 2.5], dtype=object)).tolist()
    [1.0, nan, nan, nan, 2.5]
    """
    import pandas as pd

    kind = values.dtype
    if pd.api.types.is_bool_dtype(kind):
        return np.full(len(values), np.nan)   # booleans are not counts nor times
    if pd.api.types.is_numeric_dtype(kind) and not pd.api.types.is_complex_dtype(kind):
        return values.to_numpy(dtype=float, na_value=np.nan)
    cells = values.astype(object)
    number = cells.map(lambda v: isinstance(v, numbers.Real)
                       and not isinstance(v, (bool, np.bool_))).to_numpy(dtype=bool)
    out = np.full(len(values), np.nan)
    out[number] = cells[number].to_numpy(dtype=float)
    return out
