"""A :class:`~.scenario.Scenario` in the testbed's network: :func:`emulator.deliver`.

The trace is read by :func:`topologies.loads_ns2_trace`, the positions sampled every
``resolution`` seconds (:func:`topologies.mobility_dynamics`) under the scenario's
``log_distance`` radio (its sensitivity cut included), on the shared medium, links of
the PHY rate's bandwidth and no fixed delay (propagation over 51 m is 0.2 us), the
emulated AODV or OLSR with the RFCs' timers (``seconds_per_unit = 1``) and the options
ns-3 runs with (:data:`AS_NS3`), frames held at most as long as ns-3's MAC queue holds
them (:data:`MAC_QUEUE_LIFETIME_S`), the flows expanded into messages of their IP packet
size, the scenario's seed.
"""
from __future__ import annotations

import math
import time

import networkx as nx
import numpy as np

from benchmarks.ns3_validation.scenario import Scenario, messages

#: The protocols' options as ns-3 3.44 sets them, where the RFCs leave a choice: its
#: AODV sets the G flag (``GratuitousReply``) and asks for RREP-ACKs when it answers
#: for a neighbour; its OLSR puts up to OLSR_MAX_MSGS (64) queued messages in a packet.
AS_NS3 = {"aodv": {"gratuitous_reply": True, "rrep_ack": True},
          "olsr": {"max_messages_per_packet": 64}}
#: How long ns-3's Wi-Fi MAC queue holds a frame (``WifiMacQueue`` ``MaxDelay``, 500 ms):
#: one that waited longer is dropped when the MAC would send it (``mac_lifetime`` in
#: ns-3's drops), as :func:`emulator.deliver`'s ``queue_max_wait`` does.
MAC_QUEUE_LIFETIME_S = 0.5


def run(sc: Scenario, mac: dict | None = None, pcap: str | None = None) -> dict:
    """Run ``sc`` in the testbed; the figures :mod:`.report` compares (keys as
    :func:`.ns3_side.figures`'s). ``mac``: a ``[mac]`` table under the shared medium
    (None: the perfect scheduler, as the validation page runs it). ``pcap``: write the
    run's transmissions there too (:func:`emulator.write_pcap`; the run with
    ``capture=True``, the same run)."""
    from emulator import deliver, write_pcap
    from topologies import Topology, loads_ns2_trace, mobility_dynamics
    from topologies.radio import MODULATIONS, radio_from_table

    radio = radio_from_table(sc.radio, "scenario.radio")
    msgs = messages(sc)
    start = time.perf_counter()
    trajectories = loads_ns2_trace(sc.trace, f"{sc.name}.ns_movements")
    graph = nx.Graph()
    # every node's position(n, 0.0), sampled at once
    start_xy = dict(zip(trajectories.nodes, trajectories.sample([0.0])[0].tolist()))
    graph.add_nodes_from((n, {"pos": tuple(start_xy[n])}) for n in range(sc.nodes))
    bits_per_s = MODULATIONS[radio.modulation][0]
    topo = Topology(graph, defaults={"bandwidth": bits_per_s / 8, "delay": 0.0})
    dynamics = mobility_dynamics(topo, trajectories, duration=sc.duration,
                                 resolution=sc.resolution, radio=radio)
    out = deliver(topo.graph, msgs, medium=sc.medium, seed=sc.seed, dynamics=dynamics,
                  routing=sc.routing, queue_max_wait=MAC_QUEUE_LIFETIME_S, mac=mac,
                  routing_options={"seconds_per_unit": 1.0,
                                   sc.routing: AS_NS3.get(sc.routing, {})},
                  capture=pcap is not None)
    wall = time.perf_counter() - start
    if pcap is not None:
        write_pcap(out, pcap)
    return figures(sc, msgs, out, wall)


def figures(sc: Scenario, msgs, out, wall: float) -> dict:
    window = max(f.stop for f in sc.flows)
    ok = ~out["lost"].to_numpy()
    delay = (out["arrived_at"].to_numpy() - msgs["sent_at"].to_numpy())[ok]
    firsts = []
    for k, flow in enumerate(sc.flows):
        arrived = out["arrived_at"].to_numpy()[(msgs["flow"].to_numpy() == k) & ok]
        if len(arrived):
            firsts.append(float(arrived.min()) - flow.start)
    control = out.attrs["control"]
    control = control[control["time"] < window]
    types = control["type"].astype(str).value_counts().sort_index()   # sent in the window
    notices = int(types.get("NOTICE", 0))
    types = types.drop("NOTICE", errors="ignore")
    drops = out.loc[out["lost"], "loss_reason"].value_counts()
    extra = {}
    if sc.routing == "olsr":
        # messages over the run (the log has packets only): the run ends when the last
        # data packet is delivered or dropped, a fraction of a second past the window
        carried = out.attrs["routing"]["control_messages"]
        extra["olsr_messages_ps"] = {k: carried.get(k, 0) / window for k in ("HELLO", "TC")}
        extra["control_after_window"] = int((out.attrs["control"]["time"] >= window).sum())
    return {"simulator": "testbed", **sc.labels(),
            "delivery_ratio": float(ok.mean()) if len(ok) else math.nan,
            "delay_mean": float(delay.mean()) if len(delay) else math.nan,
            "delay_p95": float(np.quantile(delay, 0.95)) if len(delay) else math.nan,
            "first_packet_delay": sum(firsts) / len(firsts) if firsts else math.nan,
            "flows_reached": len(firsts),
            "control_pps": float(types.sum()) / window,
            "control_by_type": {str(k): int(v) / window for k, v in types.items()},
            "notices_pps": notices / window,
            "drops_by_reason": {str(k): int(v) for k, v in drops.items()},
            "sent": len(msgs), "received": int(ok.sum()), "wall_s": wall, **extra}
