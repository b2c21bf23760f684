"""The compiled links medium (emulator.links, emulator.hop_kernel) at the edges of its
arrays: a calendar and outputs larger than their first size, slots reused, sends out of
time order, a receiver's liveness asked of a later epoch, and the seeded draws carried
across blocks. The per-hop SimPy model judges arrivals (tests/test_deliver.py holds the
two equal on random networks)."""
import math

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from contract.messages import Message
from emulator.deliver import deliver
from emulator.ledger import Ledger
from emulator.links import BLOCK
from emulator.network import Network
from emulator.reference import simpy_reference
from emulator.transport import Transport


class Epochs:
    def __init__(self, graphs):
        self.graphs = graphs
        self.epochs = sorted(graphs)

    def snapshot(self, t):
        return self.graphs[max(e for e in self.epochs if e <= t)]


def line(n=5, **attrs):
    g = nx.path_graph(n)
    for e in g.edges:
        g.edges[e].update(cost=1.0, **attrs)
    return g


@pytest.mark.parametrize("medium", ["links", "shared"])
def test_thousands_in_flight_grow_the_calendar_and_fill_many_output_blocks(medium):
    # 6,000 messages queued behind one another on a 5-node line: the calendar (first
    # room 1,024) and the shared medium's waiting hops grow past their first size, and
    # the 24,000 hops span several blocks
    g = line(delay=0.01, bandwidth=1000.0)
    msgs = pd.DataFrame({"msg_id": range(6000), "src": 0, "dst": 4,
                         "sent_at": np.linspace(0.0, 1.0, 6000), "size_bytes": 40})
    out = deliver(g, msgs, medium=medium)
    assert out.attrs["hops"] == 4 * 6000 > 2 * BLOCK
    assert not out["lost"].any()
    arrived = out["arrived_at"].to_numpy()
    if medium == "links":
        assert np.allclose(arrived, simpy_reference(Epochs({0.0: g}), msgs), atol=1e-9)
    else:   # one frame at a time near each node: the line moves a frame per 2-3 frame times
        assert np.all(np.diff(arrived) > 0) and arrived[-1] > 6000 * 2 * 0.04
        pd.testing.assert_frame_equal(out, deliver(g, msgs, medium=medium))


def test_slots_are_reused_across_advances_without_mixing_messages():
    tr = Transport(Network(Epochs({0.0: line(delay=0.1)})), Ledger(), seed=1)
    arrived = {}
    for step in range(50):   # each step's messages leave the network before the next
        for i in range(20):
            tr.send(Message(step * 20 + i, "data", i % 4, 4, step + i / 100, 1.0, 10, None))
        tr.advance(step + 1)
        arrived.update({m.msg_id: (t, m.src) for t, m in tr.take_arrivals()})
    assert len(arrived) == 1000
    for msg_id, (t, src) in arrived.items():
        sent = msg_id // 20 + (msg_id % 20) / 100
        assert math.isclose(t, sent + 0.1 * (4 - src) + 1e-9, abs_tol=1e-6)
        assert src == (msg_id % 20) % 4
    assert len(tr._links._msgs) <= 40   # slots freed and taken again


def test_sends_out_of_time_order_are_delivered_as_if_sent_in_order():
    def arrivals(order):
        tr = Transport(Network(Epochs({0.0: line(delay=0.1, bandwidth=100.0)})), Ledger(),
                       seed=3)
        for i in order:
            tr.send(Message(i, "data", 0, 4, i * 0.05, 1.0, 20, None))
        tr.advance()
        return sorted((m.msg_id, t) for t, m in tr.take_arrivals())

    forward = arrivals(range(40))
    assert arrivals(reversed(range(40))) == forward
    assert arrivals([5, 1, 30, 2] + [i for i in range(40) if i not in (5, 1, 30, 2)]) == forward


def test_a_receiver_down_when_a_long_hop_ends_two_epochs_later_loses_the_message():
    # a link of delay 2 from epoch [0, 1) reaches node 1 in epoch [2, inf): the kernel
    # asks whether node 1 is up then (beyond the next epoch it holds)
    up, down = line(2, delay=2.0), line(2, delay=2.0)
    down.nodes[1]["alive"] = False
    tr = Transport(Network(Epochs({0.0: up, 1.0: up, 2.0: down})), Ledger(), seed=1)
    tr.send(Message(0, "data", 0, 1, 0.2, 1.0, 10, None))
    tr.advance()
    assert tr.take_arrivals() == []
    assert [(round(t, 9), reason, node) for t, _, reason, node in tr.losses] == \
        [(2.2, "dead_node", 1)]
    assert tr.ledger.frame()["lost"].tolist() == [True]
    # up again in that epoch: delivered
    tr = Transport(Network(Epochs({0.0: up, 1.0: down, 2.0: up})), Ledger(), seed=1)
    tr.send(Message(0, "data", 0, 1, 0.2, 1.0, 10, None))
    tr.advance()
    assert [round(t, 9) for t, _ in tr.take_arrivals()] == [2.2]


def test_jitter_and_loss_draws_follow_the_seeded_stream_across_blocks():
    # one hop each, far apart (no queue, no order held back): the n-th message's jitter
    # and loss are the stream's draws 2n and 2n + 1, across many blocks of 4,096
    g = line(2, delay=0.5, jitter=0.25, loss=0.3)
    n = 5000
    tr = Transport(Network(Epochs({0.0: g})), None, seed=7)
    for i in range(n):
        tr.send(Message(i, "data", 0, 1, 10.0 * i, 1.0, 10, None))
    tr.advance()
    draws = np.random.Generator(np.random.PCG64(np.random.SeedSequence([7, 1013]))) \
        .random(2 * n)
    jitter, loss = draws[0::2], draws[1::2]
    arrived = {m.msg_id: t for t, m in tr.take_arrivals()}
    lost = {m.msg_id for _, m, _, _ in tr.losses}
    assert lost == set(np.flatnonzero(loss < 0.3).tolist())
    for i, t in arrived.items():
        assert math.isclose(t, 10.0 * i + 0.5 + jitter[i] * 0.25, abs_tol=1e-9)
    assert len(arrived) + len(lost) == n


def test_a_link_keeps_its_queue_and_order_across_epochs():
    # A (100 bytes at 100 bytes per unit) holds link 0 -> 1 from 0.9 to 1.9; B, sent at
    # 1.0 in the next epoch (the same link, numbered once for the run), waits for it
    g = line(2, delay=0.1, bandwidth=100.0)
    h = line(3, delay=0.1, bandwidth=100.0)   # the next epoch has one more node and link
    tr = Transport(Network(Epochs({0.0: g, 1.0: h})), Ledger(), seed=1)
    tr.send(Message(0, "data", 0, 1, 0.9, 1.0, 100, None))
    tr.send(Message(1, "data", 0, 1, 1.0, 1.0, 10, None))
    tr.advance()
    assert sorted((m.msg_id, round(t, 9)) for t, m in tr.take_arrivals()) == \
        [(0, 2.0), (1, 2.1)]
    assert tr.ledger.frame()["time"].round(9).tolist() == [0.9, 1.9]


def _random_transport(medium, seed):
    """A transport over a random 30-node graph with jitter and loss in two epochs (the
    second without node 3), and a ledger."""
    rng = np.random.default_rng(seed)
    graphs = {}
    for start in (0.0, 2.0):
        g = nx.random_geometric_graph(30, 0.35, seed=int(rng.integers(1000)))
        if start:
            g.remove_node(3)
        for e in g.edges:
            g.edges[e].update(cost=float(rng.uniform(0.5, 2)), delay=0.01, jitter=0.005,
                              loss=0.03, bandwidth=5000.0)
        graphs[start] = g
    return Transport(Network(Epochs(graphs)), Ledger(), seed=seed, medium=medium)


@pytest.mark.parametrize("medium", ["links", "shared"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_messages_sent_as_arrays_take_the_hops_one_by_one_sends_take(medium, seed):
    # the same messages sent one by one and as arrays, mixed with messages sent one by
    # one before (their slots freed and reused) and a batch partly earlier than the last
    # send (onto the heap): the same fates, times, hops and ledger
    rng = np.random.default_rng(seed)
    n = 600
    ids = rng.permutation(n) + 100
    src, dst = rng.integers(0, 30, n), rng.integers(0, 30, n)
    sent = np.sort(rng.uniform(0, 4, n))
    size = rng.integers(10, 120, n)
    first = [Message(i, "data", i % 30, (7 * i) % 30, i * 0.02, 1.0, 30, None) for i in range(40)]
    split = n // 3   # the second batch starts before the first one's last send

    def run(as_arrays):
        tr = _random_transport(medium, seed)
        for msg in first:
            tr.send(msg)
        tr.advance(0.5)
        early = [tr.take_arrivals(), list(tr.losses)]
        parts = [np.r_[0:split, 2 * split:n], np.r_[split:2 * split]]
        for part in parts:
            part = part[np.argsort(sent[part], kind="stable")]
            if as_arrays:
                tr.send_many(ids[part], src[part], dst[part], sent[part], size[part])
            else:
                for i in part:
                    tr.send(Message(int(ids[i]), "data", int(src[i]), int(dst[i]),
                                    float(sent[i]), 1.0, int(size[i]), None))
        tr.advance()
        got, at, lost, why = tr.outcomes()
        return early, dict(zip(got.tolist(), at.tolist())), dict(zip(lost.tolist(),
                                                                     why.tolist())), \
            tr.hops, tr.ledger.frame(), tr.stats()

    one_by_one, as_arrays = run(False), run(True)
    assert one_by_one[0] == as_arrays[0]
    assert len(one_by_one[1]) > n / 2 and len(one_by_one[2]) > 10
    assert one_by_one[1:4] == as_arrays[1:4]
    pd.testing.assert_frame_equal(one_by_one[4], as_arrays[4])
    # the mean delay's sum is added up in another order (last digits)
    delay = [stats.pop("message_delay_mean") for stats in (one_by_one[5], as_arrays[5])]
    assert math.isclose(*delay, rel_tol=1e-12)
    assert one_by_one[5] == as_arrays[5]


def test_messages_sent_as_arrays_must_come_in_time_order():
    tr = Transport(Network(Epochs({0.0: line()})), None, seed=1)
    with pytest.raises(ValueError, match="ascending"):
        tr.send_many(np.array([1, 2]), np.array([0, 0]), np.array([4, 4]),
                     np.array([1.0, 0.5]), np.array([10, 10]))


def test_link_numbers_follow_first_appearance_across_growth():
    """The compiled hash table numbers links as a dictionary would, in order of first
    appearance, through its growth and keys that collide in the low bits."""
    from emulator.links import LinkNumbers
    rng = np.random.default_rng(4)
    numbers, expected = LinkNumbers(), {}
    for batch in range(300):
        if batch % 2:   # u * 2^32 + v keys, as the transport makes them
            keys = (rng.integers(0, 300, 400) << 32) + rng.integers(0, 300, 400)
        else:           # multiples of a large power of two: the same low bits
            keys = rng.integers(0, 5000, 50) << 20
        got = numbers.numbers(keys).tolist()
        assert got == [expected.setdefault(key, len(expected)) for key in keys.tolist()]
    assert numbers.count == len(expected) > 20_000


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_calendar_gives_its_entries_in_key_order_pushes_and_pops_interleaved(seed):
    # times drawn from a few values, so many keys tie on time and the number decides
    from emulator import hop_kernel as k
    import heapq

    rng = np.random.default_rng(seed)
    cal, (state, _) = k.new_calendar(512), k.new_state()
    model, popped, expected, seq = [], [], [], 0
    for _ in range(2000):
        if model and (rng.random() < 0.45 or state[k.HEAP_SIZE] == 511):
            expected.append(heapq.heappop(model))
            popped.append((float(cal.time[0]), int(cal.seq[0]), int(cal.msg[0]),
                           int(cal.node[0])))
            k._calendar_pop(cal, state)
        else:
            seq += 1
            t = float(rng.integers(0, 6))
            key = (t, int(rng.integers(0, 10 ** 6)) * 10 ** 4 + seq, seq, -seq)
            heapq.heappush(model, key)
            k.calendar_push(cal, state, *key)
    while model:
        expected.append(heapq.heappop(model))
        popped.append((float(cal.time[0]), int(cal.seq[0]), int(cal.msg[0]),
                       int(cal.node[0])))
        k._calendar_pop(cal, state)
    assert popped == expected and len(popped) > 1000
    assert int(state[k.HEAP_SIZE]) == 0
