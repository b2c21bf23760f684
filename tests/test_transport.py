"""Hop-by-hop transport: serialization, FIFO links, delay, jitter, loss, re-routing (the
causal queueing itself and the shared medium: tests/test_deliver.py)."""
import networkx as nx
import pytest

from contract.messages import Message
from emulator.ledger import Ledger
from emulator.network import Network
from emulator.transport import Transport


class Dyn:
    def __init__(self, graphs):
        self.graphs = graphs
        self.epochs = sorted(graphs)

    def snapshot(self, t):
        return self.graphs[t]


def chain(**attrs):
    g = nx.Graph()
    nx.add_path(g, [0, 1, 2], **attrs)
    return g


def send(tr, *messages):
    """Send ``messages``, run the calendar out; each one's arrival time (None if lost)."""
    for m in messages:
        tr.send(m)
    tr.advance()
    arrived = {m.msg_id: t for t, m in tr.take_arrivals()}
    return [arrived.get(m.msg_id) for m in messages]


def msg(i, sent_at, size_bytes=100, src=0, dst=2, units=1.0):
    return Message(i, "data", src, dst, sent_at, units, size_bytes, None)


def test_fifo_serialization_queues_back_to_back_messages():
    tr = Transport(Network(Dyn({0.0: chain(cost=1.0, delay=0.5, bandwidth=100.0)})), Ledger(), 1)
    # each hop: 1 s serialization + 0.5 s delay; the second waits 1 s for the first link,
    # then meets no queue on the second hop
    assert send(tr, msg(0, 0.0), msg(1, 0.0)) == pytest.approx([3.0, 4.0])


def test_ledger_rows_and_cost():
    led = Ledger()
    tr = Transport(Network(Dyn({0.0: chain(cost=3.0, delay=0.1)})), led, 1)
    send(tr, msg(7, 1.0, units=2.0))
    df = led.frame()
    assert list(zip(df.hop_u, df.hop_v)) == [(0, 1), (1, 2)]
    assert df.cost.tolist() == [6.0, 6.0] and not df.lost.any()
    assert df.time.tolist() == pytest.approx([1.0, 1.1])


def test_jitter_is_bounded_and_seeded():
    def arrivals(seed):
        tr = Transport(Network(Dyn({0.0: chain(cost=1.0, delay=0.1, jitter=0.2)})), Ledger(), seed)
        return [t - i for i, t in enumerate(send(tr, *(msg(i, float(i)) for i in range(50))))]
    a = arrivals(3)
    assert all(0.2 <= x <= 0.6 for x in a)
    assert a == arrivals(3) and a != arrivals(4)


def test_loss_is_counted_with_its_row():
    led = Ledger()
    tr = Transport(Network(Dyn({0.0: chain(cost=1.0, delay=0.1, loss=1.0)})), led, 1)
    assert send(tr, msg(0, 0.0)) == [None]
    assert tr.lost["link_loss"] == 1
    assert led.frame().lost.tolist() == [True]


def test_route_change_mid_flight_reroutes():
    before = nx.Graph()
    nx.add_path(before, [0, 1, 3], cost=1.0, delay=1.0)
    nx.add_path(before, [0, 2, 3], cost=5.0, delay=1.0)
    after = before.copy()
    after.edges[1, 3]["cost"] = 50.0   # at t=0.5 the 1-3 link becomes expensive
    led = Ledger()
    tr = Transport(Network(Dyn({0.0: before, 0.5: after})), led, 1)
    # the message reaches node 1 at t=1.0, where the route to 3 now goes back via 0 and 2
    assert send(tr, msg(0, 0.0, dst=3)) == pytest.approx([4.0])
    assert list(zip(led.frame().hop_u, led.frame().hop_v)) == [(0, 1), (1, 0), (0, 2), (2, 3)]


def test_dead_next_hop_is_a_counted_loss():
    g0 = chain(cost=1.0, delay=1.0)
    g1 = g0.copy()
    g1.nodes[1]["alive"] = False
    tr = Transport(Network(Dyn({0.0: g0, 0.5: g1})), Ledger(), 1)
    assert send(tr, msg(0, 0.0)) == [None] and tr.lost["dead_node"] == 1
