"""Routing protocols as a layer of the network (emulator.routing): AODV and OLSR learn the
network from their own packets, which cross the medium; faults reach a sender only by a
message; links keep their order."""
import networkx as nx
import numpy as np
import pandas as pd
import pytest

from contract.messages import Message
from emulator import deliver
from emulator.network import Network
from emulator.routing.host import RoutedTransport
from emulator.routing.params import resolve
from experiments.runner import run
from experiments.spec import SpecError, resolve as resolve_spec


def line(n: int, delay: float = 0.01, **attrs) -> nx.Graph:
    g = nx.path_graph(n)
    for e in g.edges:
        g.edges[e].update(cost=1.0, delay=delay, bandwidth=1e5, **attrs)
    return g


def messages(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["msg_id", "src", "dst", "sent_at", "size_bytes"])


class Epochs:
    """A dynamics of fixed graphs switching at given times."""

    def __init__(self, times, graphs):
        self.epochs, self.graphs = list(times), [nx.freeze(g) for g in graphs]

    def snapshot(self, t):
        k = max(i for i, start in enumerate(self.epochs) if start <= t)
        return self.graphs[k]


def ring_with_shortcut_breaking(at: float) -> Epochs:
    """0-1-2 is the short way from 0 to 2; 0-3-4-2 the long one. Link 1-2 breaks at
    ``at``."""
    g = nx.Graph()
    nx.add_path(g, [0, 1, 2])
    nx.add_path(g, [0, 3, 4, 2])
    for e in g.edges:
        g.edges[e].update(cost=1.0, delay=0.01, bandwidth=1e5)
    broken = g.copy()
    broken.remove_edge(1, 2)
    return Epochs([0.0, at], [g, broken])


# -- AODV ---------------------------------------------------------------------------------
def test_aodv_first_packet_waits_for_discovery_the_next_do_not():
    g = line(5)
    msgs = messages([(0, 0, 4, 0.0, 50), (1, 0, 4, 2.0, 50), (2, 0, 4, 2.5, 50)])
    oracle = deliver(g, msgs)
    aodv = deliver(g, msgs, routing="aodv")
    assert not aodv.lost.any()
    waits = (aodv.arrived_at - oracle.arrived_at).tolist()
    # the first waits for an expanding ring search (TTL 1, then 3: a wait of
    # 2 x 0.04 x (1 + 2) = 0.24 before the second RREQ), the route then serves the others
    assert waits[0] > 0.24
    assert waits[1:] == pytest.approx([0.0, 0.0])
    sent = aodv.attrs["routing"]["control_sent"]
    assert sent["RREQ"] >= 2 and sent["RREP"] >= 1
    assert aodv.attrs["routing"]["route_discovery_latency_mean"] == pytest.approx(waits[0],
                                                                                   abs=0.05)
    control = aodv.attrs["control"]
    assert list(control.columns) == ["time", "node", "type", "size_bytes"]
    assert set(control[control.type == "RREQ"].size_bytes) == {52}


def test_aodv_unreachable_destination_drops_after_its_retries():
    g = line(3)
    g.add_node(9)
    out = deliver(g, messages([(0, 0, 9, 0.0, 50)]), routing="aodv")
    assert out.loss_reason.tolist() == ["no_route"]
    rreqs = out.attrs["control"].query("type == 'RREQ' and node == 0")
    # TTL 1, 3, 5, 7, then NET_DIAMETER and RREQ_RETRIES (2) more
    assert len(rreqs) == 4 + 1 + 2


def test_aodv_queue_full_drops_the_packet_beyond_its_length():
    g = line(3)
    g.add_node(9)
    msgs = messages([(i, 0, 9, 0.0, 50) for i in range(4)])
    out = deliver(g, msgs, routing="aodv", routing_options={"aodv": {"queue_length": 2}})
    assert out.loss_reason.tolist() == ["no_route", "no_route", "queue_full", "queue_full"]


def test_aodv_repairs_a_broken_route_after_a_rerr_while_the_oracle_knows_at_once():
    dynamics = ring_with_shortcut_breaking(at=5.0)
    msgs = messages([(i, 0, 2, 0.25 * i, 50) for i in range(40)])
    g = dynamics.graphs[0]
    oracle = deliver(g, msgs, dynamics=dynamics)
    aodv = deliver(g, msgs, dynamics=dynamics, routing="aodv",
                   routing_options={"aodv": {"link_layer_feedback": False}})
    assert not oracle.lost.any()
    lost = aodv[aodv.lost]
    # without link-layer feedback the break is found by missed HELLOs: the packets sent
    # meanwhile are lost on the dead link, then a RERR and a new discovery take the
    # long way
    assert set(lost.loss_reason) == {"link_break"}
    assert lost.msg_id.min() >= 20 and len(lost) >= 2
    assert not aodv[aodv.msg_id >= 36].lost.any()
    assert "RERR" in aodv.attrs["routing"]["control_sent"]
    late = aodv[aodv.msg_id == 39].arrived_at.iloc[0] - 0.25 * 39
    assert late == pytest.approx(3 * 0.01 + 3 * 50 / 1e5, abs=1e-9)   # three hops now
    with_feedback = deliver(g, msgs, dynamics=dynamics, routing="aodv")
    assert with_feedback.lost.sum() < len(lost)   # the MAC tells at the first failed send


def test_aodv_gratuitous_reply_gives_the_destination_the_route_to_the_originator():
    g = line(4)
    for gratuitous in (True, False):
        tr = RoutedTransport(Network(Epochs([0.0], [g])), None, seed=1, routing="aodv",
                             routing_params=resolve("aodv", {"aodv": {
                                 "gratuitous_reply": gratuitous}}))
        # node 1 finds a route to 3; at 1.0 node 0's first RREQ (TTL 1) reaches node 1
        # only, which answers from that route
        tr.send(Message(0, "data", 1, 3, 0.0, 1.0, 50, None))
        tr.send(Message(1, "data", 0, 3, 1.0, 1.0, 50, None))
        tr.advance(1.2)
        rreps = [(node, size) for t, node, kind, size in tr.control_log
                 if kind == "RREP" and 1.0 <= t < 1.2]
        to_origin = tr.protocol._state[3].table.valid(0, 1.2)
        if gratuitous:
            # node 1 answers node 0 and tells node 3 by 1 -> 2 -> 3: three RREPs
            assert sorted(rreps) == [(1, 48), (1, 48), (2, 48)]
            assert (to_origin.next_hop, to_origin.hops) == (2, 3)
            assert to_origin.seq == tr.protocol._state[0].seq
        else:
            assert rreps == [(1, 48)] and to_origin is None
        tr.advance()
        assert len(tr.arrivals) == 2


def test_aodv_rrep_ack_is_asked_when_the_answer_is_for_a_neighbour():
    for ack in (True, False):
        tr = RoutedTransport(Network(Epochs([0.0], [line(3)])), None, seed=1,
                             routing="aodv",
                             routing_params=resolve("aodv", {"aodv": {"rrep_ack": ack}}))
        # by 2.0 node 1 knows its neighbour 2 from a HELLO and answers node 0's RREQ
        tr.send(Message(0, "data", 0, 2, 2.0, 1.0, 50, None))
        tr.advance()
        assert len(tr.arrivals) == 1
        acks = [(node, size) for _, node, kind, size in tr.control_log
                if kind == "RREP_ACK"]
        assert acks == ([(0, 30)] if ack else [])


def _mobile_run(seed: int, *, jitter: float, loss: float, routing: str = "aodv",
                objects: bool = True, **deliver_options):
    """``routing``'s deliver on 40 moving nodes, two of which leave and come back, with
    ``jitter`` and ``loss`` on every link: the frame, its attrs, the transport's ledger
    (which ``deliver`` keeps none of) and the losses its sources learnt (``(time,
    msg_id, reason, node, source)``: at once, or by a relay's notice). With
    ``objects``, the messages are sent one at a time as objects (as a run's driver
    sends them), of two kinds and sizes in units other than ``deliver``'s 1; else as
    ``deliver`` sends them, as arrays."""
    import topologies
    from emulator.ledger import Ledger
    from emulator.routing import host
    from emulator.transport import Transport

    ledger = Ledger()
    opened = host.open_transport
    made = []

    def open_transport(network, _, *args, **options):
        transport = opened(network, ledger, *args, **options)
        made.append(transport)
        if objects:
            send = transport.send
            transport.send = lambda m: send(m._replace(
                kind=("data", "result")[m.msg_id % 2], size_units=m.msg_id % 7 + 0.5))
            # one send each (Transport's, for a transport without compiled links)
            transport.send_many = lambda *arrays: Transport.send_many(transport, *arrays)
        return transport

    rng = np.random.default_rng(seed)
    topo = topologies.random_geometric(40, 0.3, seed=seed, max_attempts=1000)
    for u, v in topo.graph.edges:
        topo.graph.edges[u, v].update(cost=1.0, delay=0.01, bandwidth=2e4, jitter=jitter,
                                      loss=loss)
    moves = topologies.random_waypoint(topo.nodes, 12.0, (0.01, 0.04), 1.0, seed=seed + 1,
                                       start=topo.positions)
    dynamics = topologies.mobility_dynamics(
        topo, moves, duration=12.0, resolution=0.5,
        node_events=[(3.0, 5, False), (6.5, 5, True), (4.0, 17, False), (9.0, 17, True)])
    n = 400
    msgs = messages(zip(range(n), rng.integers(0, 40, n), rng.integers(0, 40, n),
                        np.sort(rng.uniform(0, 10, n)), [64] * n))
    try:
        host.open_transport = open_transport
        out = deliver(topo.graph, msgs, dynamics=dynamics, seed=seed, routing=routing,
                      **deliver_options)
    finally:
        host.open_transport = opened
    learnt = [(t, msg.msg_id, reason, node, msg.src)
              for t, msg, reason, node in made[0].losses]
    return out, dict(out.attrs), ledger.frame(), learnt


@pytest.mark.parametrize("seed,jitter,loss,options", [
    (1, 0.004, 0.05, {"routing_options": {"aodv": {"gratuitous_reply": True,
                                                    "rrep_ack": True}}}),
    (2, 0.0, 0.0, {"reorder": True, "queue_max_wait": 0.004, "capacity": 48,
                   "objects": False}),
    (3, 0.01, 0.2, {"routing_options": {"aodv": {"hello": False, "rerr_ratelimit": 1,
                                                  "queue_length": 1}}}),
])
def test_aodv_discoveries_run_compiled_as_the_protocols_python_runs_them(monkeypatch,
                                                                         seed, jitter,
                                                                         loss, options):
    """Route discoveries and data hops in their compiled loop (aodv.discovery: RREQs,
    answers, RREPs, RERRs, data packets from their first hop on) against the host's
    Python, which ran them all before it (and still does on the shared medium): the
    same deliveries, ledger, control log and figures, on moving nodes that die and
    come back, with jitter, losses (the MAC's failures handed back), gratuitous replies
    (two RREPs an answer), RREP-ACKs, waits too long for a link, reordering, arrays
    grown from little, no HELLOs, RERRs passed on at one a second and a request queue
    of one packet (full queues met: the packets a source holds are the loop's rows,
    sent by it when a RREP comes back, taken by Python when a discovery fails; the
    discoveries' timeouts and the HELLO ticks are the loop's timers; a next hop out of
    range breaks the link and drops the packet there, and so does a relay without a
    route, with a RERR). The data packets handed back to Python are met in each run (a
    node down, a packet back at its source; a MAC's failure learnt at the arrival where
    frames are lost), and one that waits too long for its link in the second."""
    from emulator.routing import loop
    from emulator.routing.aodv import discovery
    from emulator.routing.aodv.discovery import RouteDiscoveries
    from emulator.routing.aodv.protocol import Aodv

    if "capacity" in options:   # room made again and again, from a little over n
        options = dict(options)
        monkeypatch.setattr(loop, "CAPACITY", options.pop("capacity"))
        monkeypatch.setattr(discovery, "TOLD", 0)
    codes = []   # what the loop returned, with the type of its current row

    def run(*args):
        codes.append((discovery.run(*args), args[12][args[9][loop.CURRENT_ROW], loop.TYPE]))
        return codes[-1][0]

    monkeypatch.setattr(RouteDiscoveries, "kernel", staticmethod(run))
    out, attrs, ledger, learnt = _mobile_run(seed, jitter=jitter, loss=loss, **options)
    monkeypatch.setattr(Aodv, "compiled_loop", lambda self, host: None)
    reference, reference_attrs, reference_ledger, reference_learnt = _mobile_run(
        seed, jitter=jitter, loss=loss, **options)
    assert len(codes) > 100   # the loop did run
    data = {code for code, kind in codes if kind == loop.DATA}
    assert loop.DATA_IN_PYTHON in data and (loop.MAC_LATER in data) == (loss > 0)
    assert (loop.DATA_EXPIRED in data) == ("queue_max_wait" in options)
    met = {code for code, _ in codes}   # the loop's own timers: HELLO ticks (with links
    # broken by them) and discoveries that fail are met
    assert (discovery.HELLO_IN_PYTHON in met) == (seed != 3)
    assert (discovery.DISCOVERY_FAILED in met) == (seed == 1)
    kinds = {"data", "result", "routing"} if options.get("objects", True) else {
        "data", "routing"}
    assert set(ledger.kind) == kinds
    pd.testing.assert_frame_equal(ledger, reference_ledger)
    pd.testing.assert_frame_equal(out, reference)
    pd.testing.assert_frame_equal(attrs["control"], reference_attrs["control"])
    assert (attrs["hops"], attrs["routing"]) == (reference_attrs["hops"],
                                                 reference_attrs["routing"])
    assert attrs["routing"]["control_sent"]["RREQ"] > 1000
    # what the sources learnt, some by notices the loop routed
    assert learnt == reference_learnt
    assert attrs["routing"]["control_sent"]["NOTICE"] > 0
    assert any(node != src for _, _, _, node, src in learnt)   # told by a relay
    # links found gone by a MAC's failure (the loop's, when the next hop is out of
    # range) and the packets dropped there
    assert attrs["routing"]["drops_by_reason"].get("link_break", 0) > 0


@pytest.mark.parametrize("seed,jitter,loss,options", [
    (1, 0.004, 0.05, {"routing_options": {"olsr": {"link_layer_feedback": True}},
                      "objects": False, "draws": 8}),
    (2, 0.0, 0.0, {"reorder": True, "queue_max_wait": 0.004, "capacity": 48}),
    (3, 0.01, 0.2, {"routing_options": {"olsr": {"hello_interval": 0.5,
                                                  "max_messages_per_packet": 1}},
                    "objects": False}),
])
def test_olsr_data_hops_run_compiled_as_the_hosts_python_runs_them(monkeypatch, seed,
                                                                   jitter, loss, options):
    """OLSR's data packets and notices hop by hop, and its packets queued, flushed,
    broadcast, heard and relayed, in their compiled loop (olsr.forward) against the
    host's Python, which ran them all before it (and still does on the shared medium):
    the same deliveries, ledger, control log, figures (messages by type among them) and
    what the sources learnt, on moving nodes that die and come back, with jitter,
    losses (the MAC's failures learnt at the arrival handed back), reordering, waits
    too long for a link, arrays, queues and uniforms run out from little, link-layer
    feedback (a next hop out of range breaks the link in the loop) and, with one
    message a packet (the loop's data only), HELLOs four times as often. A next hop out
    of range and a node without a route drop the packet in the loop, a relay sending
    its source a notice routed there too; the packets handed back to Python (a node
    down, a TTL spent, back at its source) are met in every run."""
    from emulator.routing import loop
    from emulator.routing.base import Protocol
    from emulator.routing.olsr import forward
    from emulator.routing.olsr.forward import OlsrLoop
    from emulator.routing.olsr.protocol import Olsr

    options = dict(options)
    if "capacity" in options:   # room made again and again, from little
        monkeypatch.setattr(loop, "CAPACITY", options.pop("capacity"))
        monkeypatch.setattr(forward, "QUEUE", 2)
    draws = options.pop("draws", None)
    if draws:   # the protocol's uniforms drawn a few at a time
        monkeypatch.setattr(Protocol, "uniforms_block", draws)
    control = options.get("routing_options", {}).get("olsr", {}).get(
        "max_messages_per_packet", 64) > 1
    codes = []   # what the loop returned

    def run(*args):
        codes.append(forward.run(*args))
        return codes[-1]

    monkeypatch.setattr(OlsrLoop, "kernel", staticmethod(run))
    out, attrs, ledger, learnt = _mobile_run(seed, jitter=jitter, loss=loss,
                                             routing="olsr", **options)
    monkeypatch.setattr(Olsr, "compiled_loop", lambda self, host: None)
    reference, reference_attrs, reference_ledger, reference_learnt = _mobile_run(
        seed, jitter=jitter, loss=loss, routing="olsr", **options)
    assert len(codes) > 20   # the loop did run
    met = set(codes)
    assert loop.DATA_IN_PYTHON in met and (loop.MAC_LATER in met) == (loss > 0)
    assert (loop.DATA_EXPIRED in met) == ("queue_max_wait" in options)
    # the protocol's packets in the loop (room asked for their receptions), or not
    assert (forward.NEED_SEEN in met) == (loop.NEED_FAN_ALIVE in met) == control
    # queues and uniforms run out in the loop
    assert (forward.NEED_QUEUE_ROOM in met) == ("queue_max_wait" in options)
    assert (forward.NEED_DRAWS in met) == (draws is not None)
    pd.testing.assert_frame_equal(ledger, reference_ledger)
    pd.testing.assert_frame_equal(out, reference)
    pd.testing.assert_frame_equal(attrs["control"], reference_attrs["control"])
    assert (attrs["hops"], attrs["routing"]) == (reference_attrs["hops"],
                                                 reference_attrs["routing"])
    assert learnt == reference_learnt
    drops = attrs["routing"]["drops_by_reason"]
    assert drops.get("link_break", 0) > 0 and drops.get("no_route", 0) > 0
    assert attrs["routing"]["control_sent"]["NOTICE"] > 0
    assert any(node != src for _, _, _, node, src in learnt)   # told by a relay


def test_aodv_discoveries_a_rrep_whose_next_hop_is_down_at_the_arrival(monkeypatch):
    """A RREP that arrives in another epoch, its next hop down by then: the loop asks
    Python who is up at the arrival, then hands it the MAC's failure. Run on nodes
    that go down for 0.7 s forty times, against the host's Python; the loop resumed
    that frame twice before this was right (the second time on freed rows: a crash)."""
    import topologies
    from emulator.routing import loop
    from emulator.routing.aodv import discovery
    from emulator.routing.aodv.discovery import RouteDiscoveries
    from emulator.routing.aodv.protocol import Aodv

    rng = np.random.default_rng(3)
    topo = topologies.random_geometric(30, 0.35, seed=3, max_attempts=1000)
    for u, v in topo.graph.edges:
        topo.graph.edges[u, v].update(cost=1.0, delay=0.05, bandwidth=2e3, jitter=0.02)
    moves = topologies.random_waypoint(topo.nodes, 12.0, (0.01, 0.04), 1.0, seed=4,
                                       start=topo.positions)
    events = []
    for _ in range(40):
        start, node = round(float(rng.uniform(0, 10)), 3), int(rng.integers(0, 30))
        events += [(start, node, False), (round(start + 0.7, 3), node, True)]
    dynamics = topologies.mobility_dynamics(topo, moves, duration=12.0, resolution=0.25,
                                            node_events=sorted(events))
    n = 300
    msgs = messages(zip(range(n), rng.integers(0, 30, n), rng.integers(0, 30, n),
                        np.sort(rng.uniform(0, 10, n)), [64] * n))
    codes = []
    monkeypatch.setattr(RouteDiscoveries, "kernel", staticmethod(
        lambda *a: codes.append(discovery.run(*a)) or codes[-1]))
    out = deliver(topo.graph, msgs, dynamics=dynamics, seed=3, routing="aodv")
    monkeypatch.setattr(Aodv, "compiled_loop", lambda self, host: None)
    reference = deliver(topo.graph, msgs, dynamics=dynamics, seed=3, routing="aodv")
    resumed_then_failed = sum(1 for a, b in zip(codes, codes[1:])
                              if (a, b) == (loop.NEED_FRAME_ALIVE, loop.MAC_LATER))
    assert resumed_then_failed > 0
    pd.testing.assert_frame_equal(out, reference)
    pd.testing.assert_frame_equal(out.attrs["control"], reference.attrs["control"])
    assert out.attrs["routing"] == reference.attrs["routing"]


def test_aodv_loop_takes_a_send_earlier_than_those_it_holds_in_time_order(monkeypatch):
    """A message sent after an advance, due before messages the loop took at that
    advance and has not reached yet, goes first, as the host's Python orders it (its
    queue of sends would have put it in the calendar)."""
    from emulator.routing.aodv.protocol import Aodv

    def arrivals():
        tr = routed(line(4, delay=0.1))
        for msg_id, t in ((0, 5.0), (1, 5.5)):
            tr.send(Message(msg_id, "data", 0, 3, t, 1.0, 500, None))
        tr.advance(1.0)
        tr.send(Message(2, "data", 0, 3, 2.0, 1.0, 500, None))
        tr.advance()
        return sorted((t, msg.msg_id) for t, msg in tr.arrivals)

    compiled = arrivals()
    monkeypatch.setattr(Aodv, "compiled_loop", lambda self, host: None)
    assert compiled == arrivals()
    assert [msg_id for _, msg_id in compiled] == [2, 0, 1]
    assert compiled[0][0] < 3.0


def test_aodv_discoveries_refuse_a_node_that_hears_itself():
    """A node with a link to itself (input validation refuses one, but a network built
    in code may hold it) would hear its own RREQs and send them again without end:
    the compiled loop says so instead."""
    g = line(4)
    g.add_edge(2, 2, cost=1.0, delay=0.01, bandwidth=1e5)
    tr = RoutedTransport(Network(Epochs([0.0], [g])), None, seed=1, routing="aodv",
                         routing_params=resolve("aodv", {"aodv": {"hello": False}}))
    tr.send(Message(0, "data", 0, 3, 0.0, 1.0, 50, None))
    with pytest.raises(ValueError, match=r"^node 2 hears its own broadcasts: the network "
                                         r"has a link from a node to itself"):
        tr.advance()


def test_aodv_originates_at_most_rreq_ratelimit_rreqs_a_second():
    # node 0 looks for 13 destinations nobody can reach at once: 7 RREQs each (TTL 1, 3,
    # 5, 7, NET_DIAMETER and 2 retries); at most 10 in the first second, the rest later
    g = nx.Graph()
    nx.add_path(g, [0, 1])
    g.add_nodes_from(range(2, 15))
    for e in g.edges:
        g.edges[e].update(cost=1.0, delay=0.01, bandwidth=1e5)
    msgs = messages([(i, 0, 2 + i, 0.0, 50) for i in range(13)])

    def rreq_times(limit):
        out = deliver(g, msgs, routing="aodv",
                      routing_options={"aodv": {"rreq_ratelimit": limit}})
        assert out.loss_reason.tolist() == ["no_route"] * 13
        control = out.attrs["control"]
        return control[(control.type == "RREQ") & (control.node == 0)].time

    limited, free = rreq_times(10), rreq_times(1000)
    assert len(limited) == len(free) == 13 * 7
    assert (limited < 1.0).sum() == 10 and (free < 1.0).sum() > 10
    assert limited[limited >= 1.0].min() == pytest.approx(1.0)   # held to the next second


def test_aodv_sends_at_most_rerr_ratelimit_rerrs_a_second():
    from emulator.routing.aodv.packets import Rerr

    tr = RoutedTransport(Network(Epochs([0.0], [line(3)])), None, seed=1, routing="aodv",
                         routing_params=resolve("aodv", {"aodv": {"hello": False}}),
                         horizon=3.0)
    for t in [0.5] * 15 + [1.2] * 5:   # 10 of the first second's 15, all 5 of the next
        tr.protocol._send_rerr(t, 1, Rerr(((2, 1),)))
    tr.advance()
    assert tr.control_sent["RERR"] == 15


# -- OLSR ---------------------------------------------------------------------------------
def grid(side: int) -> nx.Graph:
    g = nx.convert_node_labels_to_integers(nx.grid_2d_graph(side, side))
    for e in g.edges:
        g.edges[e].update(cost=1.0, delay=0.01, bandwidth=1e5)
    return g


def test_olsr_drops_before_it_converges_then_routes_by_fewest_hops():
    g = grid(4)
    msgs = messages([(i, 0, 15, 0.5 * i, 50) for i in range(60)])
    out = deliver(g, msgs, routing="olsr")
    early, late = out[out.msg_id < 4], out[out.msg_id >= 40]
    assert early.loss_reason.eq("no_route").all()     # nothing learnt at t < 2
    assert not late.lost.any()
    took = late.arrived_at - 0.5 * late.msg_id
    six_hops = 6 * (0.01 + 50 / 1e5)   # the fewest; a HELLO or TC on a link may delay
    assert took.min() == pytest.approx(six_hops)   # a packet by its serialization
    assert took.max() < six_hops + 6 * 80 / 1e5
    sent = out.attrs["routing"]["control_sent"]
    assert set(sent) == {"HELLO", "TC"}


def test_olsr_floods_tcs_through_mprs_only():
    tr = routed(grid(5), "olsr")
    tr.send(Message(0, "data", 0, 24, 30.0, 1.0, 50, None))
    tr.advance()
    assert len(tr.arrivals) == 1
    originated = int(tr.protocol.msg_seqs.sum())
    relayed = tr.control_messages["TC"] - originated
    # a flood in which every node repeats every TC would relay 24 per TC; the MPRs of a
    # 5 x 5 grid relay fewer
    assert originated > 0 and 0 < relayed < 24 * originated * 0.75


class Recorder:
    """A host that records what a protocol sends and fires its timers in time order."""

    def __init__(self):
        self.sent, self.timers = [], []

    def send_control(self, t, u, dst, control, size):
        self.sent.append((t, u, control.body.types, size))

    def set_timer(self, t, u, tag):
        self.timers.append((t, u, tag))

    def fire(self, protocol, until):
        while self.timers and min(self.timers, key=lambda x: x[0])[0] <= until:
            self.timers.sort(key=lambda x: x[0])
            protocol.on_timer(*self.timers.pop(0))


def test_olsr_messages_queued_within_the_jitter_leave_in_one_packet():
    from emulator.routing.olsr.messages import Hello, Tc
    from emulator.routing.olsr.protocol import Olsr

    hello, tc = Hello(sym=(1, 2), asym=(3,), mprs=(1,)), Tc(0, 1, 1, (1, 2), 255, 0)
    assert (hello.bytes(), tc.bytes()) == (72, 56)

    def run(params, at=(0.0, 0.1, 0.2)):
        host = Recorder()
        olsr = Olsr(host, [0, 1, 2, 3], {"maxjitter": 0.5, **params}, seed=1)
        for t, (kind, message) in zip(at, [("HELLO", hello), ("TC", tc), ("TC", tc)]):
            host.fire(olsr, t)
            olsr._emit(t, 0, kind, message)
        host.fire(olsr, 10.0)
        return host.sent

    # the first message's jitter (a draw below 0.5) had not run out at 0.2: one
    # transmission, its size the messages' less the IP, UDP and packet headers twice
    (t, node, types, size), = run({"max_messages_per_packet": 64})
    assert 0.2 <= t < 0.5 and types == ("HELLO", "TC", "TC")
    assert size == 72 + 56 + 56 - 2 * (28 + 4)
    # at most two a packet: the third leaves in a second packet, at the same instant
    two = run({"max_messages_per_packet": 2})
    assert [(types, size) for _, _, types, size in two] == \
        [(("HELLO", "TC"), 72 + 56 - 32), (("TC",), 56)]
    assert two[0][0] == two[1][0] == t
    # generated further apart than the jitter: a packet each
    apart = run({"max_messages_per_packet": 64}, at=(0.0, 1.0, 2.0))
    assert [types for _, _, types, _ in apart] == [("HELLO",), ("TC",), ("TC",)]
    assert [size for *_, size in apart] == [72, 56, 56]
    assert all(at <= sent < at + 0.5 for (sent, *_), at in zip(apart, (0.0, 1.0, 2.0)))
    # one a packet: each leaves at once
    assert [(t, types) for t, _, types, _ in run({"max_messages_per_packet": 1})] == \
        [(0.0, ("HELLO",)), (0.1, ("TC",)), (0.2, ("TC",))]


def test_olsr_counts_packets_and_the_messages_in_them():
    g = grid(4)
    msgs = messages([(i, 0, 15, 0.5 * i, 50) for i in range(60)])
    packed = deliver(g, msgs, routing="olsr")
    single = deliver(g, msgs, routing="olsr",
                     routing_options={"olsr": {"max_messages_per_packet": 1}})
    for out in (packed, single):
        stats = out.attrs["routing"]
        # a packet is counted once, under its first message's type
        assert sum(stats["control_sent"].values()) == len(out.attrs["control"])
    stats = packed.attrs["routing"]
    sent, carried = stats["control_sent"], stats["control_messages"]
    assert sum(carried.values()) > sum(sent.values())   # some packets carry several
    assert sent["HELLO"] <= carried["HELLO"]
    single_stats = single.attrs["routing"]
    assert single_stats["control_sent"] == single_stats["control_messages"]
    assert not packed[packed.msg_id >= 40].lost.any()


def test_olsr_routes_stay_stale_until_the_link_times_out():
    dynamics = ring_with_shortcut_breaking(at=20.0)
    msgs = messages([(i, 0, 2, 10.0 + 0.25 * i, 50) for i in range(100)])
    out = deliver(dynamics.graphs[0], msgs, dynamics=dynamics, routing="olsr")
    lost = out[out.lost]
    # lost on the dead link, or in a loop while nodes 0 and 1 disagree (a link-state
    # protocol's transient loop: each thinks the other is nearer node 2)
    assert set(lost.loss_reason) <= {"link_break", "ttl"}
    assert "link_break" in set(lost.loss_reason)
    # from the break until NEIGHB_HOLD_TIME (6) later at most, plus a HELLO interval
    assert lost.msg_id.min() >= 40
    assert (10.0 + 0.25 * lost.msg_id.max()) < 20.0 + 6.0 + 2.0 + 2.0
    assert not out[out.msg_id >= 90].lost.any()


# -- Babel --------------------------------------------------------------------------------
def test_babel_routes_once_links_are_up_and_after_a_break_by_the_feasible_detour():
    g = grid(4)
    msgs = messages([(i, 0, 15, 0.5 * i, 50) for i in range(60)])
    out = deliver(g, msgs, routing="babel")
    # a link is up after two hellos (4 s apart) and an IHU: nothing routes before 4 s
    assert out[out.msg_id < 8].loss_reason.eq("no_route").all()
    assert not out[out.msg_id >= 30].lost.any()
    took = (out.arrived_at - 0.5 * out.msg_id)[out.msg_id >= 30]
    assert took.min() == pytest.approx(6 * (0.01 + 50 / 1e5))    # fewest hops, cost 256 each
    assert set(out.attrs["routing"]["control_sent"]) >= {"HELLO", "UPDATE"}

    dynamics = ring_with_shortcut_breaking(at=30.0)
    msgs = messages([(i, 0, 2, 20.0 + 0.25 * i, 50) for i in range(120)])
    out = deliver(dynamics.graphs[0], msgs, dynamics=dynamics, routing="babel")
    lost = out[out.lost]
    assert not out[out.msg_id < 40].lost.any()       # before the break: 0-1-2
    # lost until two of three hellos are missed (up to 3.5 intervals), then the detour
    # 0-3-4-2 (its seqno the same, its metric larger: unfeasible until node 2's seqno
    # rises on a request, or it was feasible at node 0 already)
    assert len(lost) > 0 and 20.0 + 0.25 * lost.msg_id.max() < 30.0 + 3.5 * 4.0 + 4.0
    assert not out[out.msg_id >= 110].lost.any()
    late = out[out.msg_id >= 110]
    assert (late.arrived_at - (20.0 + 0.25 * late.msg_id)).min() == \
        pytest.approx(3 * (0.01 + 50 / 1e5))


# -- faults learnt by messages --------------------------------------------------------------
def routed(graph, routing: str = "aodv") -> RoutedTransport:
    dynamics = graph if isinstance(graph, Epochs) else Epochs([0.0], [graph])
    return RoutedTransport(Network(dynamics), None, seed=1, routing=routing,
                           routing_params=resolve(routing))


def test_a_source_learns_of_a_drop_at_a_relay_only_when_the_notice_arrives():
    g = line(4, delay=0.1)
    broken = g.copy()
    broken.remove_edge(2, 3)     # node 2's next hop goes: its MAC fails at the send
    tr = routed(Epochs([0.0, 4.5], [g, broken]))
    for i, at in enumerate((0.0, 3.0, 5.0)):   # the second keeps the route active
        tr.send(Message(i, "data", 0, 3, at, 1.0, 50, None))
    tr.advance()
    assert len(tr.arrivals) == 2
    (dropped_at, msg, reason, node), = [d for d in tr.drops if d[1].msg_id == 2]
    (learnt_at, learnt, why, by), = [x for x in tr.losses if x[1].msg_id == 2]
    assert (node, reason, by, why) == (2, "link_break", 2, "link_break")
    # the notice crosses two hops back to the source, 2 x (0.1 + 56 bytes / bandwidth),
    # after waiting on link 2 -> 1 behind node 2's RERR (40 bytes), sent first
    assert learnt_at - dropped_at == pytest.approx(2 * (0.1 + 56 / 1e5) + 40 / 1e5)
    assert tr.control_sent["NOTICE"] == 2


def test_a_source_that_drops_its_own_packet_knows_at_once():
    g = line(3)
    g.add_node(9)
    tr = routed(g)
    tr.send(Message(0, "data", 0, 9, 0.0, 1.0, 50, None))
    tr.advance()
    assert [(round(t, 9), r, n) for t, _, r, n in tr.losses] == \
        [(round(tr.drops[0][0], 9), "no_route", 0)]


def test_a_run_reports_its_control_traffic_apart_from_the_algorithms(tmp_path):
    spec = {"run": {"name": "notice", "duration": 6.0, "step": 0.1, "seed": 3},
            "topology": {"generator": "random_geometric", "nodes": 16, "radius": 0.4,
                         "delay": 0.1, "link_cost": "distance"},
            "mobility": {"model": "random_waypoint", "speed": [0.05, 0.1], "pause": 0.5,
                         "resolution": 0.5},
            "streams": {"count": 2, "rate": 4.0, "key_domain": 5},
            "query": {"node": 0, "window": 1.0},
            "network": {"routing": "aodv"}}
    out = run(spec, out=tmp_path)
    s = out.summary
    assert s["routing_control_messages"] == int((out.ledger.kind == "routing").sum()) > 0
    assert s["routing_control_bytes"] == int(out.ledger[out.ledger.kind == "routing"]
                                             .size_bytes.sum())
    assert 0 < s["delivery_ratio"] <= 1 and s["route_discovery_latency_mean"] > 0
    data = out.ledger[out.ledger.kind != "routing"]
    assert s["comm_cost_total"] == pytest.approx(float(data.cost.sum()))
    network = out.metrics[out.metrics.source == "network"]
    sent = network[network.metric == "routing_control_messages"]
    assert sent.value.sum() == s["routing_control_messages"]
    assert set(sent.node) <= set(range(16)) and (sent.time % 0.5 == 0).all()


def test_same_seed_same_control_traffic_and_deliveries():
    g = grid(4)
    rng = np.random.default_rng(5)
    msgs = messages([(i, int(rng.integers(16)), int(rng.integers(16)),
                      float(rng.uniform(0, 20)), 60) for i in range(120)])
    for g_ in (g,):
        for e in g_.edges:
            g_.edges[e].update(jitter=0.005, loss=0.02)
    for routing in ("aodv", "olsr"):
        first = deliver(g, msgs, routing=routing, seed=2)
        again = deliver(g, msgs, routing=routing, seed=2)
        pd.testing.assert_frame_equal(first, again)
        pd.testing.assert_frame_equal(first.attrs["control"], again.attrs["control"])
        other = deliver(g, msgs, routing=routing, seed=3)
        assert not first.attrs["control"].equals(other.attrs["control"])


# -- links keep their order -----------------------------------------------------------------
@pytest.mark.parametrize("medium", ["links", "shared"])
def test_a_link_keeps_its_order_unless_told_to_reorder(medium):
    g = line(2, delay=0.1, jitter=0.2)
    msgs = messages([(i, 0, 1, 0.01 * i, 20) for i in range(200)])
    kept = deliver(g, msgs, medium=medium)
    assert kept.arrived_at.is_monotonic_increasing
    shuffled = deliver(g, msgs, medium=medium, reorder=True)
    overtaken = int((shuffled.arrived_at.diff() < 0).sum())
    assert overtaken > 50    # i.i.d. jitter per hop reorders the link
    still = deliver(line(2, delay=0.1), msgs, medium=medium, reorder=True)
    assert still.equals(deliver(line(2, delay=0.1), msgs, medium=medium))  # no jitter


# -- bad input --------------------------------------------------------------------------------
@pytest.mark.parametrize("raw, field", [
    ({"network": {"routing": "dsr"}}, "network.routing"),
    ({"run": {"backend": "mininet"}, "network": {"routing": "aodv"}}, "network.routing"),
    ({"routing": {"aodv": {"hello_interval": 0}}}, "routing.aodv.hello_interval"),
    ({"routing": {"olsr": {"neighb_hold_time": -1}}}, "routing.olsr.neighb_hold_time"),
    ({"routing": {"aodv": {"active_route_timeout": 0}}}, "routing.aodv.active_route_timeout"),
    ({"routing": {"aodv": {"queue_length": -1}}}, "routing.aodv.queue_length"),
    ({"routing": {"aodv": {"helo_interval": 1}}}, "routing.aodv.helo_interval"),
    ({"routing": {"seconds_per_unit": 0}}, "routing.seconds_per_unit"),
    ({"routing": {"babel": {"update_interval": 0}}}, "routing.babel.update_interval"),
    ({"run": {"backend": "mininet"}, "network": {"routing": "olsr"}}, "network.routing"),
])
def test_bad_routing_input_is_one_line_naming_the_field(raw, field):
    with pytest.raises(SpecError) as err:
        resolve_spec(raw, "s.toml")
    assert err.value.field == field and "\n" not in str(err.value)
    assert str(err.value).startswith(f"s.toml: {field}: ")


def test_deliver_refuses_bad_routing_arguments():
    g, msgs = line(3), messages([(0, 0, 2, 0.0, 50)])
    with pytest.raises(ValueError, match=r"^routing: expected one of oracle, aodv, olsr"):
        deliver(g, msgs, routing="dsdv")
    with pytest.raises(ValueError, match=r"^routing_options.olsr.hello_interval: expected "
                                         r"a number > 0"):
        deliver(g, msgs, routing="olsr", routing_options={"olsr": {"hello_interval": 0}})
    assert "control" not in deliver(g, msgs).attrs    # the oracle sends none


def test_the_oracle_with_reorder_gives_the_results_of_before_the_routing_layer(tmp_path):
    """The quickstart (links medium, jitter) with ``reorder = true`` and the oracle: the
    figures the transport gave before links kept their order (commit 29ce155)."""
    import tomllib
    from pathlib import Path

    spec = tomllib.loads(Path("experiments/specs/quickstart.toml").read_text())
    spec["run"]["runtime"] = "inproc"
    spec["network"] = {"reorder": True}
    out = run(spec, out=tmp_path)
    assert out.summary["latency_mean"] == 0.1674254435325642
    assert out.summary["comm_cost_total"] == 78.68871966988178
    assert float(out.ledger.time.sum()) == 3863.6360030507594
    assert float(out.results.emitted_at.sum()) == 1264.0693671241315


class _LiteralRoutes:
    """RFC 3561 §6.2 and §6.11 read literally, as a dict of a node's routes (the rules
    the compiled table keeps: :mod:`emulator.routing.aodv.rtable`)."""

    def __init__(self):
        # dst -> [next_hop, hops, seq (None), lifetime, valid, precursors]
        self.routes = {}

    def offer(self, dst, next_hop, hops, seq, lifetime):
        route = self.routes.get(dst)
        if route is None:
            self.routes[dst] = [next_hop, hops, seq, lifetime, True, False]
            return True
        if seq is None or seq == route[2]:
            fresher = not route[4] or hops < route[1]
        else:
            fresher = route[2] is None or seq > route[2]
        if fresher:
            route[:2], route[3], route[4] = [next_hop, hops], lifetime, True
            if seq is not None:
                route[2] = seq
        elif route[4] and route[0] == next_hop and lifetime > route[3]:
            route[3] = lifetime
        return fresher

    def valid(self, dst, t):
        route = self.routes.get(dst)
        if route is None or not route[4]:
            return False
        if route[3] <= t:
            route[4] = False
            return False
        return True

    def refresh(self, dst, until):
        route = self.routes.get(dst)
        if route is not None and route[4]:
            route[3] = max(route[3], until)

    def break_link(self, neighbour, delete_at):
        told = []
        for dst, route in sorted(self.routes.items()):
            if route[4] and route[0] == neighbour:
                route[3], route[4] = delete_at, False
                route[2] = (route[2] or 0) + 1
                if route[5]:
                    told.append((dst, route[2]))
        return told

    def unreachable(self, sender, lost, delete_at):
        told = []
        for dst, seq in lost:
            route = self.routes.get(dst)
            if route is not None and route[4] and route[0] == sender:
                route[2], route[3], route[4] = seq, delete_at, False
                if route[5]:
                    told.append((dst, seq))
        return told


def test_aodv_table_follows_the_rfc_rules_read_literally():
    """Through random runs of a table's changes (news offered, a neighbour heard,
    routes used, checked, broken, reported unreachable, given precursors), the compiled
    table answers and holds what the rules read literally do, route by route."""
    from emulator.routing.aodv.rtable import RouteTable

    rng = np.random.default_rng(11)
    changed = 0
    for _ in range(300):
        table, literal = RouteTable(), _LiteralRoutes()
        t = 0.0
        for _ in range(int(rng.integers(1, 60))):
            t += float(rng.exponential(0.5))
            dst, hop = (int(x) for x in rng.integers(0, 12, 2))
            step = int(rng.integers(0, 7))
            if step == 0:
                news = (dst, hop, int(rng.integers(1, 4)),
                        None if rng.random() < 0.3 else int(rng.integers(0, 4)),
                        t + float(rng.uniform(0, 3)))
                assert table.offer(*news) == literal.offer(*news)
            elif step == 1:
                lifetime = t + float(rng.uniform(0, 3))
                table.offer_neighbour(dst, lifetime)
                literal.offer(dst, dst, 1, None, lifetime)
            elif step == 2:
                assert (table.valid(dst, t) is not None) == literal.valid(dst, t)
            elif step == 3:
                assert table.break_link(hop, t + 5.0) == literal.break_link(hop, t + 5.0)
            elif step == 4:
                dsts = rng.choice(12, int(rng.integers(1, 4)), replace=False)
                lost = tuple((int(d), int(rng.integers(0, 6))) for d in dsts)
                assert table.unreachable(hop, lost, t + 5.0) == \
                    literal.unreachable(hop, lost, t + 5.0)
            elif step == 5:
                until = t + float(rng.uniform(0, 3))
                table.refresh(dst, until)
                literal.refresh(dst, until)
            elif dst in literal.routes:
                table.add_precursor(dst)
                literal.routes[dst][5] = True
            held = {d: [r.next_hop, r.hops, r.seq, r.lifetime, r.valid, r.precursors]
                    for d in range(12) if (r := table.entry(d)) is not None}
            assert held == literal.routes
            changed += sum(not r[4] for r in held.values())
    assert changed > 0   # invalid routes were held and compared too


def test_aodv_route_to_a_neighbour_heard_is_offer_written_out():
    """RouteTable.offer_neighbour, the per-reception shortcut, leaves a table as offer
    with one hop and no sequence number does, from every kind of entry."""
    import copy

    from emulator.routing.aodv.rtable import VALID, RouteTable

    rng = np.random.default_rng(7)
    for _ in range(500):
        table = RouteTable()
        if rng.random() < 0.8:
            table.offer(5, int(rng.integers(3, 7)), int(rng.integers(1, 4)),
                        None if rng.random() < 0.3 else int(rng.integers(0, 3)),
                        float(rng.uniform(0, 10)))
            table.routes[table.row, 5, VALID] = rng.random() < 0.7
        other = copy.deepcopy(table)
        lifetime = float(rng.uniform(0, 10))
        table.offer(5, 5, 1, None, lifetime)
        other.offer_neighbour(5, lifetime)
        assert [table.entry(d) for d in range(8)] == [other.entry(d) for d in range(8)]


def test_aodv_neighbours_are_found_gone_in_the_order_first_heard_as_a_dict_keeps_them():
    """A node's neighbours as arrays (hear_neighbour, gone_neighbours) against the
    dict they replaced: heard in insertion order, a neighbour lost and heard again
    goes last, and a HELLO tick finds those not heard within the lifetime in that
    order. Fails if the order is the neighbours' positions or a neighbour heard again
    keeps its old place."""
    from emulator.routing.aodv.receive import gone_neighbours, hear_neighbour

    rng = np.random.default_rng(11)
    n, lifetime = 12, 1.5
    heard_at = np.full((n, n), -np.inf)
    rank, following = np.zeros((n, n), np.int64), np.zeros(n, np.int64)
    gone = np.zeros(n, np.int64)
    literal = [dict() for _ in range(n)]   # neighbour -> last heard, in order heard
    t, ticks, reordered = 0.0, 0, 0
    for _ in range(6000):
        t += float(rng.exponential(0.05))
        u = int(rng.integers(0, n))
        if rng.random() < 0.85:
            v = int(rng.integers(0, n))
            hear_neighbour(heard_at, rank, following, u, v, t)
            literal[u][v] = t
        elif rng.random() < 0.3:   # a link failure: lost at once
            v = int(rng.integers(0, n))
            heard_at[u, v] = -np.inf
            literal[u].pop(v, None)
        else:
            count = gone_neighbours(heard_at, rank, u, t, lifetime, gone)
            expected = [v for v, at in literal[u].items() if t - at > lifetime]
            for v in expected:
                del literal[u][v]
            assert gone[:count].tolist() == expected
            ticks += 1
            reordered += expected != sorted(expected)
        assert {v: heard_at[u, v] for v in range(n) if heard_at[u, v] != -np.inf} \
            == literal[u]
    assert ticks > 500 and reordered > 20   # the order was tested, not only the sets


def test_seen_first_time_is_new_then_held_through_rehashing():
    """seen.first_time answers whether a key is new (absent, or expired) and holds what
    is new, as a dict of expiries would, through the table's remaking (expired keys
    dropped, the table doubled) as room is reserved: keys from a small range (copies,
    expiries) and from a large one (growth), some colliding in the table."""
    from emulator.routing.seen import SMALLEST, Seen, first_time, remember

    rng = np.random.default_rng(3)
    seen, reference = Seen(), {}
    t, sizes = 0.0, set()
    for _ in range(20000):
        t += float(rng.exponential(0.002))
        batch = int(rng.integers(1, 40))
        seen.reserve(t, batch)
        sizes.add(len(seen.keys))
        for _ in range(batch):
            key = int(rng.integers(0, 300)) if rng.random() < 0.7 else \
                int(rng.integers(0, 2**40))
            until = t + float(rng.uniform(0.0, 2.0))
            if rng.random() < 0.05:   # its own, held without asking
                remember(*seen.arrays(), key, until)
                reference[key] = until
                continue
            new = not (key in reference and reference[key] > t)
            assert first_time(*seen.arrays(), key, t, until) == new
            if new:
                reference[key] = until
        assert 2 * len(seen) <= len(seen.keys)   # never over half full
    assert len(sizes) > 1 and min(sizes) == SMALLEST   # it grew along the way
    assert seen.held(t) == {k: v for k, v in reference.items() if v > t}
    # keys that all hash to the table's last slot: probing goes round to the first
    last = [k for k in range(200000) if _slot_of(k, SMALLEST) == SMALLEST - 1][:4]
    seen = Seen()
    seen.reserve(0.0, len(last))
    assert all(first_time(*seen.arrays(), key, 0.0, 1.0) for key in last)
    assert not any(first_time(*seen.arrays(), key, 0.5, 1.0) for key in last)
    assert seen.held(0.5) == dict.fromkeys(last, 1.0)


def _slot_of(key: int, capacity: int) -> int:
    """The slot of ``key`` in an empty table of ``capacity`` (seen's hash, read here
    with Python's ints)."""
    return ((key * 0x9E3779B97F4A7C15) % 2**64 >> 32) & (capacity - 1)


def _olsr_route_inputs(rng, most: int):
    """A RouteInputs of up to ``most`` random node ids with random entries written (and
    rewritten), and ``expected(t, me)``: compute_routes of ``me``'s entries valid at
    ``t``."""
    from emulator.routing.olsr.routes import RouteInputs, compute_routes
    ids = sorted({int(v) for v in rng.choice(5 * most, int(rng.integers(3, most)))})
    inputs = RouteInputs(ids)
    sym, two_hop, topology = {}, {}, {}   # (u, v) -> (what, until), the last written
    for _ in range(int(rng.integers(0, 300))):
        u, v = (int(x) for x in rng.choice(ids, 2))
        until = float(rng.uniform(0.0, 10.0))
        listed = tuple(int(x) for x in rng.choice(ids, int(rng.integers(0, 6))))
        what = int(rng.integers(0, 3))
        if what == 0:
            inputs.link(u, v, until)
            sym[u, v] = (None, until)
        elif what == 1:
            inputs.two_hop(u, v, listed, until)
            two_hop[u, v] = (listed, until)
        else:
            inputs.topology(u, v, listed, until)
            topology[u, v] = (listed, until)

    def expected(t: float, me: int) -> dict:
        def valid(entries):
            return {v: what for (u, v), (what, until) in entries.items()
                    if u == me and until > t}
        return compute_routes(me, set(valid(sym)), valid(two_hop), valid(topology))
    return ids, inputs, expected


@pytest.mark.parametrize("most", [40, 160])
@pytest.mark.parametrize("seed", range(4))
def test_olsr_compiled_tables_are_compute_routes_of_the_entries_still_valid(seed, most):
    """RouteInputs' compiled search gives every destination the next hop compute_routes
    gives from the entries valid at the time asked (expired ones, rewritten ones and
    node ids that are not positions included), on networks of up to ``most`` nodes (160:
    bit sets of several words)."""
    rng = np.random.default_rng(seed)
    for _ in range(40):
        ids, inputs, expected_at = _olsr_route_inputs(rng, most)
        for t in (0.0, 2.5, 5.0, 9.0):
            for me in ids:
                expected = expected_at(t, me)
                table = inputs.table(t, me)
                asked = ids + [max(ids) + 1]
                assert {d: inputs.next_hop(table, d) for d in asked} == \
                    {d: expected.get(d) for d in asked}


@pytest.mark.parametrize("most", [40, 160])
@pytest.mark.parametrize("seed", range(4))
def test_olsr_routes_asked_one_at_a_time_are_the_table_of_the_first_query(seed, most):
    """RouteInputs.route searches a table only as deep as the destinations asked for
    need, and goes on from there for the next ones: asked in any order, and again later,
    each destination gets the next hop of the whole table at the time of the first
    query after the table went stale (not at the time asked)."""
    rng = np.random.default_rng(100 + seed)
    for _ in range(40):
        ids, inputs, expected_at = _olsr_route_inputs(rng, most)
        for t in (0.0, 2.5, 5.0, 9.0):
            inputs.stale[:] = True
            for me in ids:
                expected = expected_at(t, me)
                asked = ids + [max(ids) + 1]
                some = rng.permutation(len(asked))[:1 + len(asked) // 3]
                first = [asked[k] for k in some]
                for later, order in ((t, first), (t + 3.0, asked)):   # then searched on
                    order = [order[k] for k in rng.permutation(len(order))]
                    assert {d: inputs.route(later, me, d) for d in order} == \
                        {d: expected.get(d) for d in order}


@pytest.mark.parametrize("most", [30, 150])
@pytest.mark.parametrize("seed", range(4))
def test_olsr_compiled_mpr_selection_is_select_mprs_of_the_entries_still_valid(seed, most):
    """The compiled MPR selection picks the MPRs select_mprs picks from the symmetric
    neighbours and two-hop entries valid at the time asked (expired ones, lists that
    hold the node itself or its neighbours, and ties, included), on networks of up to
    ``most`` nodes (150: bit sets of several words)."""
    from emulator.routing.olsr.mpr import select_mprs, select_mprs_compiled
    from emulator.routing.olsr.state import Repositories
    rng = np.random.default_rng(seed)
    for _ in range(40 if most <= 30 else 10):
        drawn = rng.choice(10 * most // 3, int(rng.integers(3, most)))
        ids = sorted({int(v) for v in drawn})
        reps = Repositories(ids)
        inputs = reps.inputs
        sym, two_hop = {}, {}   # (u, v) -> (what, until), the last written
        for _ in range(int(rng.integers(0, 2 * most * most // 9))):   # 200 at 30 nodes
            u, v = (int(x) for x in rng.choice(ids, 2))
            until = float(rng.uniform(0.0, 10.0))
            if rng.random() < 0.5:
                inputs.link(u, v, until)
                sym[u, v] = (None, until)
            else:
                drawn = rng.choice(ids, int(rng.integers(0, 8)))
                listed = tuple(sorted({int(x) for x in drawn}))
                inputs.two_hop(u, v, listed, until)
                two_hop[u, v] = (listed, until)
        for t in (0.0, 2.5, 5.0, 9.0):
            for me in ids:
                neighbours = {v for (u, v), (_, until) in sym.items()
                              if u == me and until > t}
                valid = {v: listed for (u, v), (listed, until) in two_hop.items()
                         if u == me and until > t and v in neighbours}
                flags = select_mprs_compiled(reps.pos[me], t, inputs.sym_until,
                                             inputs.two_hop_until, inputs.two_hop_list,
                                             inputs.bit_sets())
                assert reps.ids_of(flags) == select_mprs(me, neighbours, valid)


@pytest.mark.parametrize("size_bytes", [40, 333, 1500])
def test_broadcast_fanout_loses_to_bit_errors_exactly_as_python_computes_it(size_bytes):
    """The compiled fan-out's loss probability with bit errors is Python's float for
    float: a draw equal to it is heard, the float just below it is lost (numba's power
    of an integer exponent differs in the last bits, which moves such a draw)."""
    from emulator.routing.fanout import DONE, Fanout, hear
    ber, loss = 3.7e-5, 0.01
    expected = 1.0 - (1.0 - loss) * (1.0 - ber) ** (8 * size_bytes)
    for draw, lost in ((expected, 0), (np.nextafter(expected, 0.0), 1)):
        attrs = np.array([[0.5], [0.0], [loss], [ber]])   # delay, jitter, loss, ber
        pool = np.array([draw, 0.5, 0.5])
        out = Fanout(2)
        result = hear(1.0, np.inf, 0.0, 0, 0, 1, size_bytes, 0, False, True, False, 0.0,
                      10.0, np.array([1]), attrs, np.full((2, 2, 2), -np.inf), pool,
                      np.ones(2, np.bool_), np.array([7, 8]), out.ints, out.floats)
        assert result[0] == DONE and result[2] == lost and result[4] == 1 - lost


@pytest.mark.parametrize("size_bytes", [40, 333, 1500])
def test_unicast_frame_loses_to_bit_errors_and_waits_for_its_link_as_python_computes_it(
        size_bytes):
    """A routed unicast frame: lost to bit errors by Python's float for float (as the
    fan-out's receivers are), started when its link is free, ended after its bytes at
    the link's bandwidth, and refused when it would wait longer than ``max_wait``."""
    from emulator.routing.fanout import DONE, EXPIRED, unicast
    ber, loss, bandwidth = 3.7e-5, 0.01, 1000.0
    expected = 1.0 - (1.0 - loss) * (1.0 - ber) ** (8 * size_bytes)
    attrs = np.array([[0.5], [0.0], [loss], [ber], [bandwidth]])
    for draw, lost in ((expected, False), (np.nextafter(expected, 0.0), True)):
        links = np.full((2, 2, 2), -np.inf)
        links[0, 1, 1] = 3.0   # the link is busy until 3
        code, start, done, arrive, was_lost, taken = unicast(
            1.0, np.inf, True, False, 0, 1, 0, size_bytes, attrs, links,
            np.array([draw, 0.5]), 0)
        assert (code, was_lost, taken) == (DONE, lost, 1)
        assert (start, done) == (3.0, 3.0 + size_bytes / bandwidth)
        assert arrive == done + 0.5 and links[0, 1].tolist() == [arrive, done]
    refused = unicast(1.0, 1.5, True, False, 0, 1, 0, size_bytes, attrs, links,
                      np.array([0.5, 0.5]), 0)
    assert refused[0] == EXPIRED and links[0, 1, 1] == done   # nothing sent


@pytest.mark.parametrize("routing,loop", [("aodv", "emulator.routing.aodv.discovery"),
                                          ("olsr", "emulator.routing.olsr.forward")])
def test_a_protocols_loop_is_compiled_once_whether_sends_come_as_objects_or_arrays(
        routing, loop):
    # Sends taken as objects arrive as a transposed (F-ordered) table; numba compiled
    # the loop a second time for that layout (about 50 s for AODV's, a fresh clone's
    # first run paying both).
    import importlib

    for objects in (True, False):
        _mobile_run(4, jitter=0.0, loss=0.0, routing=routing, objects=objects)
    assert len(importlib.import_module(loop).run.signatures) == 1
