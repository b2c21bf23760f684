"""RPL under the 802.15.4 MAC: the ETX learnt from the MAC's acknowledgements
(emulator/routing/rpl/link_stats.py), and a tree that settles on a field whose links lose
frames (docs/NOTES.md, "RPL under the MAC: ETX from acknowledgements")."""
from __future__ import annotations

import math
from collections import Counter

import networkx as nx
import numpy as np
import pytest

from contract.messages import Message
from emulator.mac.config import mac_from_table
from emulator.mac.error_rate import oqpsk_ber
from emulator.network import Network
from emulator.routing.host import RoutedTransport
from emulator.routing.params import resolve
from emulator.routing.rpl.link_stats import ETX_NOACK_PENALTY
from tests.test_routing import Epochs
from topologies.radio import Radio

#: The CC2420's thresholds (as sensor_lifetime.toml's MAC variants and test_rpl.py).
CC2420_MAC = {"model": "802.15.4", "detect_dbm": -95.0, "cs_threshold_dbm": -95.0,
              "noise_dbm": -100.0}


def cc2420(meters_per_unit: float, sensitivity_dbm: float = -95.0) -> Radio:
    return Radio(model="log_distance", tx_power_dbm=0.0, noise_floor_dbm=-100.0,
                 sensitivity_dbm=sensitivity_dbm, modulation="oqpsk_250kbps",
                 meters_per_unit=meters_per_unit)


def transport(g: nx.Graph, radio: Radio, mac: dict, horizon: float, seed: int = 1,
              **rpl) -> RoutedTransport:
    return RoutedTransport(Network(Epochs([0.0], [g])), None, seed=seed, medium="shared",
                           routing="rpl", routing_params=resolve("rpl", {"rpl": rpl}),
                           horizon=horizon, mac=mac_from_table(mac), radio=radio)


def pair(meters: float) -> nx.Graph:
    g = nx.Graph()
    g.add_node(0, pos=(0.0, 0.0))
    g.add_node(1, pos=(meters, 0.0))
    g.add_edge(0, 1, cost=1.0, delay=0.01, bandwidth=1e5)
    return g


def learnt_etx(meters: float, horizon: float = 300.0) -> tuple[float, float, RoutedTransport]:
    """Node 1 sends its parent (the root, node 0) a DAO every 0.5 s over a link of
    ``meters`` under the MAC, its noise 0 dB under the signal at about 59.5 m (the lock
    threshold ``sinr_db`` 0: frames are decoded, with bit errors): the mean of the ETX it
    learnt over the second half of the run, and the link's delivery of one attempt
    computed from the radio (a DAO's MPDU and its ACK, each bit right with 1 - BER)."""
    radio = cc2420(1.0, sensitivity_dbm=-105.0)
    tr = transport(pair(meters), radio, {**CC2420_MAC, "detect_dbm": -105.0,
                                         "cs_threshold_dbm": -105.0, "sinr_db": 0.0},
                   horizon, dao_interval=0.5)
    samples = []
    for t in np.arange(1.0, horizon, 1.0):
        tr.advance(t)
        if t >= horizon / 2:
            samples.append(tr.protocol.stats[1].etx(0))
    sinr = 10 ** ((float(radio.rx_dbm(meters)) + 100.0) / 10)
    dao_bytes = tr.control_bytes["DAO"] / tr.control_sent["DAO"]
    mpdu_and_ack = dao_bytes + tr.mac.config.standard.header_bytes + 5
    p = (1.0 - oqpsk_ber(sinr)) ** (8 * mpdu_and_ack)
    return float(np.mean(samples)), p, tr


def test_the_etx_learnt_from_acknowledgements_converges_to_one_over_the_delivery():
    lossy, p, tr = learnt_etx(59.5)
    assert 0.85 < p < 0.95                       # a link that loses one frame in ten
    # the EWMA's mean, with a no-ACK counted as 16 transmissions, over four attempts
    expected = sum(k * p * (1 - p) ** (k - 1) for k in range(1, 5)) + \
        ETX_NOACK_PENALTY * (1 - p) ** 4
    assert abs(expected - 1 / p) < 0.01
    assert abs(lossy - 1 / p) < 0.05, (lossy, 1 / p)
    assert tr.protocol.tree() == {0: None, 1: 0}
    perfect, p_near, _ = learnt_etx(30.0, horizon=100.0)
    assert p_near > 0.999 and abs(perfect - 1.0) < 0.01


def field_under_the_mac(seed: int) -> tuple[nx.Graph, Radio]:
    """sensor_lifetime.toml's field: 50 nodes on 200 m x 200 m, linked within the
    CC2420's range (0.204 units, 40.8 m), the first connected from ``seed``."""
    while True:
        g = nx.random_geometric_graph(50, 0.204, seed=seed)
        if nx.is_connected(g):
            break
        seed += 1000
    for e in g.edges:
        g.edges[e].update(cost=1.0, delay=0.005, bandwidth=31250.0)
    return g, cc2420(200.0)


def settle(seed: int, horizon: float, objective: str, every: float = 4.0, **rpl):
    """RPL over the field under the MAC to ``horizon``, each node sending the root a
    40-byte packet every ``every`` seconds from t = 10 (the unicasts whose
    acknowledgements teach the ETX, and whose failures used to drop neighbours)."""
    g, radio = field_under_the_mac(seed)
    tr = transport(g, radio, CC2420_MAC, horizon, objective=objective, dao_delay=0.1,
                   **rpl)
    rows = sorted((t + 0.05 * u, u) for t in np.arange(10.0, horizon - 5.0, every)
                  for u in range(1, 50))
    for i, (t, u) in enumerate(rows):
        tr.send(Message(i, "data", u, 0, t, 1.0, 40, None))
    tr.advance(horizon)
    return tr


@pytest.mark.full_suite
def test_rpl_settles_under_the_802154_mac_on_a_field_that_loses_frames():
    horizon = 120.0
    for objective in ("of0", "mrhof"):
        tr = settle(seed=1, horizon=horizon, objective=objective)
        rpl = tr.protocol
        changes = Counter(int(t // 30) for t, u, v in rpl.parent_log)
        frames = Counter(int(t // 30) for t, *_ in tr.control_log)
        # the tree stops changing: in the second half of the run, parents taken are a
        # few (of 50 nodes) against hundreds in the first (before link statistics
        # were learnt: 830 and 1,092 in the second half, more than in the first)
        late = changes[2] + changes[3]
        assert late <= 10 and late <= 0.05 * (changes[0] + changes[1]), (objective, changes)
        # Trickle: the routing frames a minute fall over the run
        assert frames[0] > 3 * frames[2] and frames[0] > 3 * frames[3], (objective, frames)
        # every node ends joined: a node cut off by links that lost frames to the
        # first seconds' collisions probes its way back (4 of 49 stayed out under OF0
        # before, 2 under MRHOF)
        joined = [u for u, v in rpl.tree().items() if v is not None]
        assert len(joined) == 49, (objective, len(joined))
        # no loops, and at least what the exact ETX of the link model delivered (main
        # before the learnt ETX: 1,251 under OF0, 1,189 under MRHOF; here 1,313 and
        # 1,306; 985 and 1,019 while start-up loops counted to infinity: docs/NOTES.md
        # "RPL under a MAC: loops")
        drops = Counter(d[2] for d in tr.drops)
        assert drops["ttl"] == 0, (objective, drops)
        assert len(tr.arrivals) >= {"of0": 1251, "mrhof": 1189}[objective], \
            (objective, len(tr.arrivals), drops)
        # the links lose frames (the MAC retried and gave up), and the learnt ETX says
        # so: the parents' links are dearer than a perfect one on average
        mac = tr.mac.counters()
        assert mac["mac_retries"] > 0 and mac["mac_drops_by_reason"]["retry_limit"] > 0
        parent_etx = [rpl.stats[u].etx(v) for u, v in rpl.tree().items() if v is not None]
        assert 1.0 < np.mean(parent_etx) < 4.0
        # a parent's link is never one the objective refuses
        assert all(rpl.objective.usable(e) for e in parent_etx)


def test_periodic_probing_keeps_every_node_joined_and_mrhof_delivering():
    # the same field and traffic: with a probe every 10 s (x U(0.5, 1.5)) the links
    # counted dead in the start-up are measured again (docs/NOTES.md: 1,226 of 1,323
    # delivered, against 1,019 without probing and 1,189 before the learnt ETX)
    tr = settle(seed=1, horizon=120.0, objective="mrhof", probing_interval=10.0)
    rpl = tr.protocol
    sent = len(np.arange(10.0, 115.0, 4.0)) * 49
    drops = Counter(d[2] for d in tr.drops)
    assert len(tr.arrivals) >= 0.9 * sent, (len(tr.arrivals), drops)
    assert drops["ttl"] == 0
    assert all(v is not None for u, v in rpl.tree().items() if u != rpl.root)
    changes = Counter(int(t // 30) for t, u, v in rpl.parent_log)
    assert changes[2] + changes[3] <= 10, changes


def test_a_lost_frame_raises_the_etx_and_the_neighbour_stays_until_its_link_is_dead():
    tr = settle(seed=1, horizon=20.0, objective="mrhof")
    rpl = tr.protocol
    u = next(u for u, v in rpl.tree().items() if v is not None and u != rpl.root)
    parent = rpl.tree()[u]
    before = rpl.stats[u].etx(parent)
    rpl.on_link_outcome(20.0, u, parent, 4, False)
    rpl.on_link_failure(20.0, u, parent)
    after = rpl.stats[u].etx(parent)
    assert after > before
    if rpl.objective.usable(after):   # one failure: still a neighbour
        assert parent in rpl._state[u].neighbours
    for k in range(10):   # failures in a row: the link is dead, the neighbour gone
        rpl.on_link_outcome(20.0 + k, u, parent, 4, False)
        rpl.on_link_failure(20.0 + k, u, parent)
    assert not rpl.objective.usable(rpl.stats[u].etx(parent))
    assert parent not in rpl._state[u].neighbours and rpl.tree()[u] != parent
    assert math.isfinite(rpl.stats[u].etx(parent))


def test_of0_keeps_a_lossy_parent_as_contiki_ngs_fixed_step_does():
    """Contiki-NG's OF0 with its fixed step (``RPL_OF0_FIXED_SR``) refuses no link for
    its ETX (the step is 3 whatever the link; the ETX breaks ties only): failures in a
    row lift the parent's ETX to the penalty's 16 and the node keeps its parent and
    rank. (With the ETX-based step's bound, ETX 4 or more, as this testbed had it, the
    parent was dropped at the first failures: over ContikiMAC whole neighbourhoods
    detached, docs/NOTES.md "RPL over ContikiMAC".)"""
    tr = settle(seed=1, horizon=20.0, objective="of0")
    rpl = tr.protocol
    u = next(u for u, v in rpl.tree().items() if v is not None and u != rpl.root)
    parent, rank = rpl.tree()[u], rpl.ranks()[u]
    for k in range(10):
        rpl.on_link_outcome(20.0 + k, u, parent, 4, False)
        rpl.on_link_failure(20.0 + k, u, parent)
    assert rpl.stats[u].etx(parent) > 10
    assert parent in rpl._state[u].neighbours
    assert rpl.tree()[u] == parent and rpl.ranks()[u] == rank
