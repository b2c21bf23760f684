"""emulator.deliver: causal queueing, the shared medium, and bad input."""
import heapq
import importlib
import json
import math

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from emulator import deliver
from emulator.reference import simpy_reference


def line(n, **attrs):
    g = nx.path_graph(n)
    for e in g.edges:
        g.edges[e].update(cost=1.0, delay=0.1, bandwidth=100.0, **attrs)
    return g


def messages(*rows):
    return pd.DataFrame(rows, columns=["msg_id", "src", "dst", "sent_at", "size_bytes"])


def test_a_hop_waits_only_for_what_reached_its_link_first():
    out = deliver(line(3), messages((0, 0, 2, 0.0, 50), (1, 1, 2, 0.1, 50)))
    assert out["arrived_at"].round(9).tolist() == [1.2, 0.7]
    assert out["lost"].tolist() == [False, False]
    assert out["loss_reason"].tolist() == ["", ""]


def test_neighbours_share_the_radio_channel():
    msgs = messages((0, 0, 1, 0.0, 50), (1, 2, 3, 0.0, 50))
    assert deliver(line(4), msgs)["arrived_at"].round(9).tolist() == [0.6, 0.6]
    assert deliver(line(4), msgs, medium="shared")["arrived_at"].round(9).tolist() == [0.6, 1.1]


def test_far_apart_transmissions_overlap_on_the_shared_medium():
    msgs = messages((0, 0, 1, 0.0, 50), (1, 4, 5, 0.0, 50))
    assert deliver(line(6), msgs, medium="shared")["arrived_at"].round(9).tolist() == [0.6, 0.6]


def test_interference_radius_uses_positions():
    g = line(4)
    for u in g.nodes:
        g.nodes[u]["pos"] = (float(u), 0.0)
    msgs = messages((0, 0, 1, 0.0, 50), (1, 2, 3, 0.0, 50))
    near = deliver(g, msgs, medium="shared", interference_radius=0.5)
    far = deliver(g, msgs, medium="shared", interference_radius=1.5)
    assert near["arrived_at"].round(9).tolist() == [0.6, 0.6]   # only the endpoints collide
    assert far["arrived_at"].round(9).tolist() == [0.6, 1.1]


def test_losses_are_named():
    g = line(3)
    g.add_node(9)
    out = deliver(g, messages((0, 0, 9, 0.0, 10), (1, 0, 2, 0.0, 10)))
    assert out["lost"].tolist() == [True, False]
    assert out["loss_reason"].tolist() == ["no_route", ""]
    assert math.isnan(out["arrived_at"][0])
    lossy = deliver(line(3, loss=1.0), messages((0, 0, 2, 0.0, 10)))
    assert lossy["loss_reason"].tolist() == ["link_loss"]


def test_a_hop_that_would_wait_too_long_for_its_link_is_lost_as_it_comes():
    # four 50-byte frames at once on a 100 B/unit link start at 0, 0.5, 1.0 and 1.5:
    # with a wait of at most 0.7 the last two are refused at 0, the link never busy
    msgs = messages(*[(i, 0, 2, 0.0, 50) for i in range(4)])
    unbounded = deliver(line(3), msgs)
    assert unbounded["arrived_at"].round(9).tolist() == [1.2, 1.7, 2.2, 2.7]
    out = deliver(line(3), msgs, queue_max_wait=0.7)
    assert out["arrived_at"].round(9).tolist()[:2] == [1.2, 1.7]
    assert out["loss_reason"].tolist() == ["", "", "queue_expired", "queue_expired"]
    assert out.attrs["hops"] == 4


def test_the_shared_channel_drops_an_expired_frame_without_airtime():
    # in ready order, node 1's second hop of message 0 (ready at 0.6) waits behind node
    # 0's frames queued at 0; expired at the grant, frames 2 and 3 take no airtime, so
    # message 0 moves on a second earlier than with no limit
    msgs = messages(*[(i, 0, 2, 0.0, 50) for i in range(4)])
    unbounded = deliver(line(3), msgs, medium="shared")
    assert unbounded["arrived_at"].round(9).tolist() == [2.6, 3.1, 3.6, 4.1]
    out = deliver(line(3), msgs, medium="shared", queue_max_wait=0.7)
    assert out["arrived_at"].round(9).tolist()[:2] == [1.6, 2.1]
    assert out["loss_reason"].tolist() == ["", "", "queue_expired", "queue_expired"]


@pytest.mark.parametrize("medium", ["links", "shared"])
def test_a_routing_protocol_drops_expired_frames_at_their_sender(medium):
    msgs = messages(*[(i, 0, 2, 0.0, 50) for i in range(4)])
    out = deliver(line(3), msgs, medium=medium, routing="aodv", queue_max_wait=0.7)
    reasons = out["loss_reason"].tolist()
    assert reasons.count("queue_expired") >= 2 and reasons.count("") >= 1
    drops = out.attrs["routing"]["drops_by_reason"]
    assert drops["queue_expired"] == reasons.count("queue_expired")
    unbounded = deliver(line(3), msgs, medium=medium, routing="aodv")
    assert "queue_expired" not in unbounded["loss_reason"].tolist()


def test_same_seed_same_arrivals_with_jitter():
    g = line(5, jitter=0.05)
    msgs = messages(*[(i, i % 5, (i + 2) % 5, i * 0.01, 20) for i in range(50)])
    a, b = deliver(g, msgs, seed=3), deliver(g, msgs, seed=3)
    assert a.equals(b)
    assert not a.equals(deliver(g, msgs, seed=4))


@pytest.mark.parametrize("kwargs, field", [
    ({"medium": "air"}, "medium"),
    ({"medium": "shared", "interference_radius": 0.0}, "interference_radius"),
    ({"queue_max_wait": 0.0}, "queue_max_wait"),
])
def test_bad_options_name_the_field(kwargs, field):
    with pytest.raises(ValueError, match=rf"^{field}: expected"):
        deliver(line(3), messages((0, 0, 2, 0.0, 10)), **kwargs)


@pytest.mark.parametrize("msgs, field", [
    (messages((0, 0, 7, 0.0, 10)), "messages.dst: node 7"),
    (messages((0, 0, 2, 0.0, -1)), "messages.size_bytes: expected an integer >= 0"),
    (pd.DataFrame({"msg_id": [0]}), "messages: missing columns"),
])
def test_bad_messages_name_the_field(msgs, field):
    with pytest.raises(ValueError, match=f"^{field}"):
        deliver(line(3), msgs)


class TwoEpochs:
    """A graph whose link costs change at ``switch`` (routes change mid-flight)."""

    def __init__(self, g0, g1, switch):
        self.epochs, self.graphs = [0.0, switch], [nx.freeze(g0), nx.freeze(g1)]

    def snapshot(self, t):
        return self.graphs[int(t >= self.epochs[1])]


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 10_000), n=st.integers(3, 8), count=st.integers(1, 30))
def test_equals_a_per_hop_simpy_reference(seed, n, count):
    rng = np.random.default_rng(seed)
    g0 = nx.connected_watts_strogatz_graph(n, 2, 0.5, seed=seed) if n > 3 else nx.path_graph(n)
    for e in g0.edges:
        g0.edges[e].update(cost=float(rng.integers(1, 5)), delay=float(rng.uniform(0.01, 0.2)),
                           bandwidth=float(rng.uniform(50, 500)))
    g1 = g0.copy()
    for e in g1.edges:
        g1.edges[e]["cost"] = float(rng.integers(1, 5))
    dynamics = TwoEpochs(g0, g1, switch=float(rng.uniform(0.2, 1.0)))
    msgs = messages(*[(i, int(rng.integers(n)), int(rng.integers(n)),
                       float(rng.uniform(0, 1.5)), int(rng.integers(10, 200)))
                      for i in range(count)])
    ours = deliver(g0, msgs, dynamics=dynamics)["arrived_at"].tolist()
    assert ours == pytest.approx(simpy_reference(dynamics, msgs), abs=1e-9, nan_ok=True)


def literal_conflict_rule(transport):
    """``transport`` with the shared medium's conflict rule read literally, with sets:
    at an instant every waiting transmission, in ready order, starts unless an endpoint
    of one in progress lies in its zone or one of its endpoints lies in the zone of an
    earlier one still waiting (a broadcast's endpoints: its sender and its receivers; a
    transmission's zone: its endpoints' zones, a node's zone: itself and its neighbours,
    or every node within the interference radius); one that passes after waiting longer
    than ``max_wait`` is lost instead."""
    from emulator.routing.base import BROADCAST
    from emulator.transport import _END

    class Literal(transport):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._channel, self._in_progress = [], {}   # (ready, seq, hop); seq -> ends

        def _wait(self, t, seq, hop):
            self._channel.append((t, seq, hop))

        def _zone_of(self, t, view, u):
            if self.radius is None:
                return {u, *view.neighbors(u)}
            where = self.positions(t)
            x, y = where[u]
            return {w for w, (a, b) in where.items()
                    if math.hypot(a - x, b - y) <= self.radius}

        def _grant(self, t):
            blocked, still = [], []
            for ready, seq, hop in self._channel:
                _, u, v, links, view = hop
                heads = view.hop_lists()[0]
                ends = {u, v} if v != BROADCAST else {u, *(heads[k] for k in links)}
                zone = set().union(*(self._zone_of(t, view, w) for w in ends))
                if any(zone & busy for busy in self._in_progress.values()) \
                        or any(ends & z for z in blocked):
                    still.append((ready, seq, hop))
                    blocked.append(zone)
                    continue
                if t - ready > self.max_wait:
                    self._expire(t, hop)
                    continue
                done = self._transmit(t, hop)
                self._in_progress[seq] = ends
                self._push(done, _END, seq)
            self._channel = still

        def _end(self, seq):
            del self._in_progress[seq]

    return Literal


class NaiveSharedTransport:
    """The oracle's shared medium by the literal conflict rule, in Python (the
    transport's own loop is compiled): every event of an instant, then the rule; each
    hop's frame as the compiled loop's rules read plainly (its link's delay, jitter,
    bandwidth, loss and bit errors, its order on the link, its receiver's liveness)."""

    @staticmethod
    def make():
        from emulator.transport import _END, _READY, Transport

        class Naive(literal_conflict_rule(Transport)):
            compiled_links = False   # the Python calendar of the transport

            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                self._link_last = {}   # the last arrival on each directed link

            def _push(self, t, rank, a, b=None):
                self._seq += 1
                heapq.heappush(self._calendar, (t, rank, self._seq, a, b))

            def _pop(self):
                sends, cal = self._sends, self._calendar
                if sends and (not cal or sends[0] < cal[0]):
                    return sends.popleft()
                return heapq.heappop(cal)

            def _uniform(self):
                # the transport's one stream, drawn ahead in the same blocks
                if self._drawn == len(self._pool):
                    self._refill_pool()
                self._drawn += 1
                return float(self._pool[self._drawn - 1])

            def _transmit(self, start, hop):
                msg, u, v, k, view = hop
                _, costs, delays, jitters, bandwidths, losses, bers, _ = view.hop_lists()
                loss = losses[k]
                if bers[k] > 0:
                    loss = 1.0 - (1.0 - loss) * (1.0 - bers[k]) ** (8 * msg.size_bytes)
                done = start + (msg.size_bytes / bandwidths[k] if bandwidths[k] > 0
                                else 0.0)
                arrive = done + delays[k] + (self._uniform() * jitters[k] if jitters[k] > 0
                                             else 0.0)
                if not self.reorder:   # not before the last frame sent on u -> v
                    arrive = max(arrive, self._link_last.get((u, v), arrive))
                    self._link_last[(u, v)] = arrive
                dropped = loss > 0 and self._uniform() < loss
                reached = dropped or self._alive_at(arrive, v)
                if self.ledger is not None:
                    self.ledger.add(start, msg.msg_id, msg.kind, msg.src, msg.dst, u, v,
                                    msg.size_units, msg.size_bytes, costs[k],
                                    dropped or not reached)
                self.hops += 1
                if dropped:
                    self._lose(arrive, msg, "link_loss", u)
                elif not reached:
                    self._lose(arrive, msg, "dead_node", v)
                elif v == msg.dst:
                    self.arrivals.append((arrive, msg))
                else:
                    self._push(arrive, _READY, msg, v)
                return done

            def advance(self, until=math.inf):
                while self.next_time() < until:
                    t = self.next_time()
                    while self.next_time() == t:   # every event of the instant
                        _, rank, seq, msg, u = self._pop()
                        if rank == _END:
                            self._end(msg)
                        else:
                            self._ready(t, seq, msg, u)
                    if self._channel:
                        self._grant(t)

            def _ready(self, t, seq, msg, u):
                view = self.network.view(t)
                if u == msg.dst:
                    self.arrivals.append((t, msg))
                elif not view.alive(u):
                    self._lose(t, msg, "dead_node", u)
                elif (k := view.route(msg.dst)[view._pos[u]]) < 0:
                    self._lose(t, msg, "no_route", u)
                else:
                    self._wait(t, seq, (msg, u, view.hop_lists()[0][k], k, view))

            def _expire(self, t, hop):
                self._lose(t, hop[0], "queue_expired", hop[1])

        return Naive


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 10_000), n=st.integers(3, 12), count=st.integers(1, 60),
       radius=st.sampled_from([None, 0.3, 0.6]))
def test_shared_medium_equals_the_literal_conflict_rule(seed, n, count, radius, monkeypatch):
    host = importlib.import_module("emulator.routing.host")   # deliver opens its transport
    rng = np.random.default_rng(seed)
    g = nx.connected_watts_strogatz_graph(n, 2, 0.5, seed=seed) if n > 3 else nx.path_graph(n)
    for e in g.edges:
        g.edges[e].update(cost=float(rng.integers(1, 4)), delay=float(rng.uniform(0.01, 0.1)),
                          bandwidth=float(rng.uniform(100, 1000)), jitter=0.01, loss=0.05)
    for u in g.nodes:
        g.nodes[u]["pos"] = (float(rng.random()), float(rng.random()))
    msgs = messages(*[(i, int(rng.integers(n)), int(rng.integers(n)),
                       float(rng.uniform(0, 0.5)), int(rng.integers(10, 200)))
                      for i in range(count)])
    ours = deliver(g, msgs, medium="shared", seed=seed, interference_radius=radius)
    with monkeypatch.context() as patch:
        patch.setattr(host, "Transport", NaiveSharedTransport.make())
        literal = deliver(g, msgs, medium="shared", seed=seed, interference_radius=radius)
    assert ours.equals(literal)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 10_000), n=st.integers(3, 10), count=st.integers(1, 30),
       routing=st.sampled_from(["aodv", "olsr", "babel"]),
       radius=st.sampled_from([None, 0.3, 0.6]), max_wait=st.sampled_from([None, 0.2]))
def test_a_routed_shared_medium_equals_the_literal_conflict_rule(seed, n, count, routing,
                                                                radius, max_wait,
                                                                monkeypatch):
    """A routing protocol's host grants the channel by its compiled scan over bit sets
    kept per epoch and hop (emulator.routing.channel); its broadcasts (a flood's), its
    data and the protocol's packets come out as the literal rule lets them, over a link
    that breaks at the second epoch."""
    host = importlib.import_module("emulator.routing.host")   # deliver opens its transport
    rng = np.random.default_rng(seed)
    g0 = nx.connected_watts_strogatz_graph(n, 2, 0.5, seed=seed) if n > 3 else nx.path_graph(n)
    for e in g0.edges:
        g0.edges[e].update(cost=1.0, delay=float(rng.uniform(0.01, 0.05)),
                           bandwidth=float(rng.uniform(2000, 20000)), jitter=0.005,
                           loss=0.02)
    for u in g0.nodes:
        g0.nodes[u]["pos"] = (float(rng.random()), float(rng.random()))
    g1 = g0.copy()
    g1.remove_edge(*list(g1.edges)[int(rng.integers(g1.number_of_edges()))])
    dynamics = TwoEpochs(g0, g1, switch=float(rng.uniform(1.0, 3.0)))
    src = rng.integers(n, size=count)
    dst = (src + rng.integers(1, n, size=count)) % n   # none to itself: each waits for a route
    msgs = messages(*[(i, int(src[i]), int(dst[i]), float(rng.uniform(0.5, 3.0)),
                       int(rng.integers(10, 200))) for i in range(count)])
    # a unit is 10 s: HELLOs every 0.1-0.2 units, heard before the first message
    options = {"seconds_per_unit": 10.0}

    def run():
        return deliver(g0, msgs, medium="shared", seed=seed, dynamics=dynamics,
                       interference_radius=radius, routing=routing,
                       routing_options=options, queue_max_wait=max_wait)

    ours = run()
    with monkeypatch.context() as patch:
        patch.setattr(host, "RoutedTransport", literal_conflict_rule(host.RoutedTransport))
        literal = run()
    assert ours.equals(literal)
    assert ours.attrs["hops"] == literal.attrs["hops"]
    assert ours.attrs["routing"] == literal.attrs["routing"]
    assert sum(ours.attrs["routing"]["control_sent"].values()) > 0


@pytest.mark.parametrize("medium", ["links", "shared"])
def test_deliver_is_the_same_with_and_without_prefetched_trees(medium):
    """Prefetching every tree in worker processes changes no arrival, loss or hop count,
    on a mobile network with a node down for a while and lossy, jittery links."""
    import topologies

    topo = topologies.topology_from_spec(
        {"generator": "random_geometric", "nodes": 40, "radius": 0.3, "link_cost": "distance",
         "delay": 0.02, "jitter": 0.005, "loss": 0.02, "bandwidth": 5000.0}, seed=3)
    moves = topologies.random_waypoint(topo.nodes, 10.0, (0.05, 0.1), 0.5, seed=4,
                                       start=topo.positions)
    dyn = topologies.mobility_dynamics(topo, moves, duration=10.0, resolution=1.0,
                                       node_events=[(2.0, 3, False), (5.0, 3, True)])
    rng = np.random.default_rng(5)
    n = 2000
    src = rng.integers(40, size=n)
    msgs = pd.DataFrame({"msg_id": np.arange(n), "src": src,
                         "dst": (src + rng.integers(1, 40, size=n)) % 40,
                         "sent_at": rng.uniform(0, 10, n), "size_bytes": 50})
    runs = [deliver(topo.graph, msgs, medium=medium, seed=7, dynamics=dyn, prefetch_trees=p)
            for p in (False, True, None)]
    for out in runs[1:]:
        pd.testing.assert_frame_equal(out, runs[0])
        assert out.attrs["hops"] == runs[0].attrs["hops"]
    assert (~runs[0]["lost"]).sum() > n // 2


def test_a_run_honours_the_specs_queue_max_wait(tmp_path):
    from experiments.runner import run

    spec = {"run": {"name": "q", "duration": 6.0, "step": 0.1, "seed": 3},
            "topology": {"generator": "random_geometric", "nodes": 16, "radius": 0.4,
                         "delay": 0.1, "bandwidth": 300.0, "link_cost": "distance"},
            "streams": {"count": 2, "rate": 8.0, "key_domain": 5},
            "query": {"node": 0, "window": 1.0},
            "network": {"medium": "shared"}}
    unbounded = run(spec, out=tmp_path / "a").summary
    spec["network"]["queue_max_wait"] = 0.3
    bounded = run(spec, out=tmp_path / "b").summary
    assert unbounded["drops_by_reason"] == "{}"
    assert json.loads(bounded["drops_by_reason"])["queue_expired"] > 0
