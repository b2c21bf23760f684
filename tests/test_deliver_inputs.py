"""emulator.deliver refuses what it cannot run on (issue 23): every bad graph attribute,
message cell and option raises a one-line ValueError or TypeError naming the argument and
the edge, node or row, before any work; good input runs as before."""
import math
import numbers

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from emulator import deliver
from tests.test_deliver import line, messages


GOOD = messages((0, 0, 2, 0.0, 50), (1, 1, 2, 0.1, 50))


def edited(graph, edit):
    edit(graph)
    return graph


def without(u, v, name):
    return lambda g: g.edges[u, v].pop(name)


def setting(u, v, **attrs):
    return lambda g: g.edges[u, v].update(attrs)


class NoSnapshot:
    epochs = [0.0]


@pytest.mark.parametrize("graph, msgs, options, error, message", [
    # the list
    (edited(line(3), setting(1, 2, delay=-0.1)), GOOD, {}, ValueError,
     "graph: edge (1, 2) delay: expected a number >= 0, got -0.1"),
    (edited(line(3), setting(0, 1, loss=1.5)), GOOD, {}, ValueError,
     "graph: edge (0, 1) loss: expected a number >= 0 and <= 1, got 1.5"),
    (edited(line(3), without(1, 2, "bandwidth")), GOOD, {}, ValueError,
     "graph: edge (1, 2) bandwidth: missing; expected a number > 0 (or inf)"),
    (line(3), GOOD, {"seed": -1}, ValueError,
     "seed: expected a non-negative integer (numpy seeds cannot be negative), got -1"),
    (line(3), messages((0, 0, 2, 0.0, 50), (1, 1, 2, math.nan, 50)), {}, ValueError,
     "messages.sent_at: expected a number >= 0, got nan (row 1)"),
    (line(3), messages((0, 0, 2, 0.0, 50), (5, 1, 2, 0.1, 50), (5, 0, 1, 0.2, 9)), {},
     ValueError, "messages.msg_id: expected unique ids, got 5 in rows 1 and 2"),
    (line(3), messages((0, 9, 2, 0.0, 50)), {}, ValueError,
     "messages.src: node 9 (row 0) is not in the graph"),
    (line(3), messages((0, 0, 2, 0.0, "50")), {}, ValueError,
     "messages.size_bytes: expected an integer >= 0, got '50' (row 0)"),
    (line(3).to_directed(), GOOD, {}, ValueError,
     "graph: expected an undirected networkx.Graph (links carry both directions), got a "
     "DiGraph"),
    (line(3), GOOD.to_dict("list"), {}, TypeError,
     "messages: expected a pandas DataFrame, got dict"),
    # more of the same kind
    ({0: [1]}, GOOD, {}, TypeError, "graph: expected a networkx graph, got dict"),
    (edited(line(3), setting(0, 1, cost=1e30)), GOOD, {}, ValueError,
     "graph: edge (1, 2) cost: expected 0 or a number >= 2.7e+15 (3 nodes x 2**-50 x the "
     "largest cost, 1e+30 on edge (0, 1): a smaller one is lost in path sums), got 1.0"),
    (edited(line(3), setting(0, 1, up="no")), GOOD, {}, ValueError,
     "graph: edge (0, 1) up: expected true or false, got 'no'"),
    (edited(line(3), lambda g: g.nodes[1].update(alive="no")), GOOD, {}, ValueError,
     "graph: node 1 alive: expected true or false, got 'no'"),
    (edited(line(3), lambda g: g.add_node("a")), GOOD, {}, ValueError,
     "graph: node 'a': expected an integer node id"),
    (line(3), GOOD, {"medium": "shared", "interference_radius": 0.5}, ValueError,
     "graph: node 0 pos: missing; interference_radius needs every node's position"),
    (line(3), GOOD, {"seed": True}, ValueError, "seed: expected an integer, got True"),
    (line(3), GOOD, {"interference_radius": "1"}, ValueError,
     "interference_radius: expected a number > 0 (or inf), got '1'"),
    (line(3), GOOD, {"prefetch_trees": "none"}, ValueError,
     "prefetch_trees: expected true or false, got 'none'"),
    (line(3), GOOD, {"medium": None}, ValueError,
     "medium: expected 'links' or 'shared', got None"),
    (line(3), GOOD, {"dynamics": NoSnapshot()}, TypeError,
     "dynamics: expected a topologies.Dynamics (epochs and snapshot(t)), got NoSnapshot"),
    (line(3), GOOD, {"dynamics": type("NoEpochs", (), {"epochs": [], "snapshot": print})()},
     ValueError, "dynamics.epochs: expected a list of epoch start times, got []"),
    (line(3), messages((0, 0, 2, 0.0, 1e30)), {}, ValueError,
     "messages.size_bytes: expected an integer >= 0, got 1e+30 (row 0)"),
    (line(3), messages((True, 0, 2, 0.0, 5)), {}, ValueError,
     "messages.msg_id: expected an integer >= 0, got True (row 0)"),
    (line(3), messages((-1, 0, 2, 0.0, 5)), {}, ValueError,
     "messages.msg_id: expected an integer >= 0, got -1 (row 0)"),
])
def test_bad_input_is_named(graph, msgs, options, error, message):
    with pytest.raises(error) as raised:
        deliver(graph, msgs, **options)
    assert str(raised.value) == message


def test_an_empty_frame_gives_an_empty_result():
    out = deliver(line(3), messages())
    assert out.empty and list(out.columns) == ["msg_id", "arrived_at", "lost", "loss_reason"]
    assert out.dtypes.astype(str).tolist() == ["int64", "float64", "bool", "string"]


def test_numpy_scalars_integral_floats_and_extra_columns_run_as_plain_values():
    plain = deliver(line(3), GOOD, seed=2)
    g = line(3)
    g.nodes[0]["alive"] = np.True_
    g.edges[0, 1].update(cost=np.float64(1.0), up=np.True_)
    msgs = GOOD.astype({"src": float, "size_bytes": float}).assign(note=["a", "b"])
    pd.testing.assert_frame_equal(deliver(g, msgs, seed=np.int64(2), prefetch_trees=np.False_),
                                  plain)


def test_zero_bytes_infinite_bandwidth_and_radius_run():
    g = line(3)
    g.edges[0, 1]["bandwidth"] = math.inf
    for u in g.nodes:
        g.nodes[u]["pos"] = (float(u), 0.0)
    out = deliver(g, messages((0, 0, 2, 0.0, 0)), medium="shared", interference_radius=math.inf)
    assert out["arrived_at"].round(9).tolist() == [0.2]


def test_zero_cost_links_are_routed_without_a_loop():
    # networkx lists a zero-cost neighbour settled after a node among its predecessors;
    # taking the smallest id sent 1 and 2 to each other and deliver never returned
    g = nx.Graph()
    for u, v, cost in [(0, 1, 1.0), (1, 2, 0.0), (2, 3, 1.0), (1, 3, 5.0)]:
        g.add_edge(u, v, cost=cost, delay=0.1, bandwidth=1e9)
    msgs = pd.DataFrame({"msg_id": [0, 1], "src": [0, 3], "dst": [3, 0],
                         "sent_at": [0.0, 0.0], "size_bytes": [10, 10]})
    out = deliver(g, msgs)
    assert out["lost"].tolist() == [False, False]
    assert out.attrs["hops"] == 6 and out["arrived_at"].round(6).tolist() == [0.3, 0.3]


def test_the_callers_graph_is_left_editable():
    g = line(3)
    deliver(g, GOOD)
    g.add_edge(0, 2, cost=1.0, delay=0.1, bandwidth=100.0)   # deliver used to freeze it


def test_with_dynamics_the_graph_only_names_the_nodes():
    from emulator.deliver import _Static

    bare = nx.empty_graph(3)
    assert deliver(bare, GOOD, dynamics=_Static(line(3))).equals(deliver(line(3), GOOD))


# -- the property: random malformed input is named or runs --------------------------------

MISSING = "<missing>"
INT64 = 2.0 ** 63


def number(v):
    return (isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))
            and not math.isnan(v))


def integer(v):
    return number(v) and math.isfinite(v) and v % 1 == 0 and abs(v) < INT64


#: (low, low_open, high, infinity allowed) of each numeric link attribute deliver reads
LINK_RANGES = {"cost": (0, False, math.inf, False), "delay": (0, False, math.inf, False),
               "jitter": (0, False, math.inf, False), "loss": (0, False, 1, False),
               "bandwidth": (0, True, math.inf, True)}


def link_ok(name, v):
    if v is MISSING:
        return name in ("jitter", "loss", "up")
    if name == "up":
        return isinstance(v, (bool, np.bool_))
    low, low_open, high, inf = LINK_RANGES[name]
    if not number(v):
        return False
    if math.isinf(v):
        return inf and v > 0
    return (v > low if low_open else v >= low) and v <= high


def position_ok(v, needed):
    if v is MISSING or v is None:
        return not needed
    return (isinstance(v, (list, tuple)) and len(v) == 2
            and all(number(x) and math.isfinite(x) for x in v))


VALUES = [-1.0, 0.0, 0.5, 1.5, 2, np.float64(0.25), math.nan, math.inf, -math.inf, "x", "1",
          None, True, False, np.False_, [1.0], 1e30, MISSING]
POSITIONS = [(0.1, 0.2), [0.3, 0.4], None, "x", (1.0,), (math.nan, 0.0), (1, 2, 3),
             (True, 0.0), MISSING]
CELLS = [-1, 0, 2, 3.0, 2.5, math.nan, math.inf, "x", "5", None, True, 1e30, np.int64(7),
         99, MISSING]
OPTIONS = {"seed": [-1, 1.5, "1", True, None, np.int64(3), 2 ** 40],
           "medium": ["air", None, 1, "LINKS", "shared", "links"],
           "interference_radius": [0, -1.0, math.nan, "1", True, "none", math.inf, 0.3, None],
           "prefetch_trees": ["yes", 1, 0, "none", "false", None, False, np.False_]}


@st.composite
def base_case(draw):
    """A valid graph (2-6 nodes, positions), frame (1-8 messages) and options."""
    n = draw(st.integers(2, 6))
    g = nx.path_graph(n)
    for u, v in draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                              max_size=3)):
        if u != v:
            g.add_edge(u, v)
    for u, v in g.edges:
        g.edges[u, v].update(cost=draw(st.sampled_from([0.5, 1.0, 2.0])),
                             delay=draw(st.sampled_from([0.0, 0.05, 0.1])),
                             bandwidth=draw(st.sampled_from([100.0, 1000.0, math.inf])))
        if draw(st.booleans()):
            g.edges[u, v].update(jitter=0.01, loss=0.1)
    for u in g.nodes:
        g.nodes[u]["pos"] = (draw(st.floats(0, 1)), draw(st.floats(0, 1)))
    count = draw(st.integers(1, 8))
    rows = {"msg_id": list(range(10, 10 + count)),
            "src": draw(st.lists(st.integers(0, n - 1), min_size=count, max_size=count)),
            "dst": draw(st.lists(st.integers(0, n - 1), min_size=count, max_size=count)),
            "sent_at": draw(st.lists(st.floats(0, 1), min_size=count, max_size=count)),
            "size_bytes": draw(st.lists(st.integers(0, 200), min_size=count, max_size=count))}
    medium = draw(st.sampled_from(["links", "shared"]))
    options = {"medium": medium, "seed": draw(st.integers(0, 99)),
               "interference_radius": draw(st.sampled_from([None, 0.5]))}
    return g, rows, options


#: What a case changes: ``kind:name`` (one parametrized run each, so that every
#: attribute, column and option is tried whatever the draws favour).
TARGETS = ([f"link:{name}" for name in [*LINK_RANGES, "up"]]
           + ["node:pos", "node:alive", "node_id:", "graph:", "column:", "frame:"]
           + [f"cell:{c}" for c in ("msg_id", "src", "dst", "sent_at", "size_bytes")]
           + [f"option:{name}" for name in OPTIONS])


@st.composite
def malformed(draw, target_name):
    """A base case with one thing changed, whether it is still valid, the exception it
    must raise if not and a text its message must hold."""
    g, rows, options = draw(base_case())
    needs_pos = options["medium"] == "shared" and options["interference_radius"] is not None
    target, name = target_name.split(":")
    graph, frame, error = g, None, ValueError
    if target == "link":
        u, v = draw(st.sampled_from(sorted(g.edges)))
        value = draw(st.sampled_from(VALUES))
        g.edges[u, v].pop(name, None)
        if value is not MISSING:
            g.edges[u, v][name] = value
        valid, text = link_ok(name, value), f"edge ({u}, {v}) {name}"
        if name == "cost" and valid:
            # positive costs this far apart are lost in float sums: refused, naming the
            # cheapest edge and the dearest (zero costs are routed)
            costs = [c for *_, c in g.edges(data="cost") if c]
            valid = not costs or min(costs) > max(costs) * len(g) * 2.0 ** -50
            text = f"edge ({u}, {v})"
    elif target == "node":
        u = draw(st.sampled_from(sorted(g.nodes)))
        value = draw(st.sampled_from(POSITIONS if name == "pos" else VALUES))
        g.nodes[u].pop(name, None)
        if value is not MISSING:
            g.nodes[u][name] = value
        valid = (position_ok(value, needs_pos) if name == "pos" else
                 value is MISSING or isinstance(value, (bool, np.bool_)))
        text = f"node {u} {name}"
    elif target == "node_id":
        node = draw(st.sampled_from(["a", 2.5, np.int64(50), (0, 1)]))
        g.add_node(node, pos=(0.5, 0.5))
        valid, text = isinstance(node, np.integer), f"node {node!r}"
    elif target == "graph":
        kind = draw(st.sampled_from(["directed", "multi", "dict", "self_loop"]))
        graph = {"directed": g.to_directed, "multi": lambda: nx.MultiGraph(g),
                 "dict": lambda: nx.to_dict_of_dicts(g), "self_loop": lambda: g}[kind]()
        if kind == "self_loop":
            g.add_edge(0, 0, cost=1.0, delay=0.1, bandwidth=100.0)
        valid, text = False, "edge (0, 0)" if kind == "self_loop" else "graph"
        error = TypeError if kind == "dict" else ValueError
    elif target == "column":
        column = draw(st.sampled_from(list(rows)))
        del rows[column]
        valid, text = False, column
    elif target == "cell":
        row = draw(st.integers(0, len(rows[name]) - 1))
        value = draw(st.sampled_from(CELLS))
        rows[name][row] = math.nan if value is MISSING else value
        others = rows[name][:row] + rows[name][row + 1:]
        valid = {"msg_id": integer(value) and value >= 0 and value not in others,
                 "src": integer(value) and value in g, "dst": integer(value) and value in g,
                 "sent_at": number(value) and math.isfinite(value) and value >= 0,
                 "size_bytes": integer(value) and value >= 0}[name]
        text = f"messages.{name}"
    elif target == "frame":
        kind = draw(st.sampled_from(["dict", "array", "series"]))
        frame = {"dict": rows, "array": pd.DataFrame(rows).to_numpy(),
                 "series": pd.DataFrame(rows)["msg_id"]}[kind]
        valid, text, error = False, "messages", TypeError
    else:
        value = draw(st.sampled_from(OPTIONS[name]))
        options[name] = value
        valid = {"seed": isinstance(value, numbers.Integral) and not isinstance(value, bool)
                 and value >= 0,
                 "medium": value in ("links", "shared"),
                 "interference_radius": value is None or number(value) and value > 0,
                 "prefetch_trees": value is None or isinstance(value, (bool, np.bool_))
                 }[name]   # the base gives every node a position: any radius can run
        text = name
    if frame is None:
        frame = pd.DataFrame(rows)
    return graph, frame, options, valid, error, text


@pytest.mark.parametrize("target", TARGETS)
@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_malformed_input_is_named_or_runs(target, data):
    """Never a traceback from inside the emulator, never a run on an impossible value."""
    graph, frame, options, valid, error, text = data.draw(malformed(target))
    try:
        out = deliver(graph, frame, **options)
    except (ValueError, TypeError) as err:
        assert not valid, f"refused a valid input: {err}"
        assert isinstance(err, error), err
        assert text in str(err) and "\n" not in str(err), err
    else:
        assert valid, f"ran on an impossible input ({text})"
        assert len(out) == len(frame)
        assert out["lost"].tolist() == out["arrived_at"].isna().tolist()
        assert out["lost"].tolist() == (out["loss_reason"] != "").tolist()
