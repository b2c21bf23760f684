"""The routed shared channel's compiled grant against the conflict rule read literally."""
import networkx as nx
import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emulator import deliver
from emulator.routing import bits, host
from emulator.routing.channel import SharedChannel


def as_set(positions, nodes) -> np.ndarray:
    row = np.zeros(bits.words(nodes), np.uint64)
    bits.fill(row, np.array(sorted(positions), np.int64))
    return row


def literal_grant(waiting, in_progress, t, max_wait):
    """The rule with sets: in ready order a transmission starts unless an endpoint of
    one in progress is in its zone or one of its endpoints is in the zone of an earlier
    one still waiting; one that may start after waiting over ``max_wait`` is lost."""
    taken, still, blocked = [], [], []
    for ready, seq, zone, ends in waiting:
        if any(zone & busy for busy in in_progress.values()) \
                or any(ends & z for z in blocked):
            still.append((ready, seq, zone, ends))
            blocked.append(zone)
        elif t - ready > max_wait:
            taken.append((seq, False))
        else:
            taken.append((seq, True))
            in_progress[seq] = ends
    waiting[:] = still
    return taken


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 100_000), nodes=st.integers(2, 140),
       max_wait=st.sampled_from([np.inf, 0.5, 0.05]))
def test_the_channel_grants_as_the_literal_rule(seed, nodes, max_wait):
    """Transmissions queued, ended and granted at random instants (queues long enough
    to grow the rows and to be compacted, scans resumed after the held ones when none
    ended): the compiled grant takes the same ones, in the same order, as the rule."""
    rng = np.random.default_rng(seed)
    channel = SharedChannel(nodes, capacity=2)
    waiting, in_progress, slots = [], {}, {}
    t, seq = 0.0, 0
    for _ in range(int(rng.integers(1, 80))):
        t += float(rng.exponential(0.1))
        for _ in range(int(rng.integers(0, 6))):
            seq += 1
            sender = int(rng.integers(nodes))
            ends = {sender, *rng.integers(nodes, size=int(rng.integers(1, 4))).tolist()}
            zone = ends | set(rng.integers(nodes, size=int(rng.integers(0, 6))).tolist())
            channel.add(t, seq, None, sender, as_set(zone, nodes), as_set(ends, nodes))
            waiting.append((t, seq, zone, ends))
        for done in [s for s in list(in_progress) if rng.random() < 0.4]:
            del in_progress[done]
            channel.end(slots.pop(done))
        expected = literal_grant(waiting, in_progress, t, max_wait)
        got = channel.grant(t, max_wait)
        assert [(item[1], slot >= 0) for item, slot in got] == expected
        for item, slot in got:
            if slot >= 0:
                assert slot not in slots.values()   # a slot is one transmission's
                slots[item[1]] = slot
        assert len(channel) == len(waiting)


def test_a_saturated_channel_says_so(monkeypatch, caplog):
    """A run whose shared channel queues past ``SATURATED`` transmissions logs it once,
    naming the setting that bounds the queues."""
    monkeypatch.setattr(host, "SATURATED", 12)
    graph = nx.complete_graph(6)   # everyone in everyone's zone: one at a time
    nx.set_edge_attributes(graph, 1.0, "cost")
    nx.set_edge_attributes(graph, 0.01, "delay")
    nx.set_edge_attributes(graph, 1e4, "bandwidth")
    msgs = pd.DataFrame({"msg_id": range(40), "src": [i % 6 for i in range(40)],
                         "dst": [(i + 1) % 6 for i in range(40)], "sent_at": 3.0,
                         "size_bytes": 500})
    with caplog.at_level("WARNING", logger="emulator.routing.host"):
        out = deliver(graph, msgs, medium="shared", routing="olsr")
    saturated = [r.getMessage() for r in caplog.records if "saturated" in r.getMessage()]
    assert len(saturated) == 1
    assert "12 transmissions waiting" in saturated[0] and "queue_max_wait" in saturated[0]
    assert out["arrived_at"].notna().all()   # it drains: all 40 arrive
