"""One scenario for both simulators: nodes and their movement, flows, protocol, seed.

A :class:`Scenario` is a description only (it runs nothing): an ns-2 movement trace
(initial positions, then ``setdest`` lines; a static network has initial positions
only), constant-bit-rate UDP flows, the routing protocol, the radio as a ``[radio]``
table, the 802.11b PHY rate and how ARP is set up in ns-3. :func:`make_scenario` builds
the ones of the validation matrix; :func:`check_ns3` refuses what ns-3 cannot express,
naming the field.

>>> sc = make_scenario(speed=5.0, load="light", routing="aodv", seed=1, duration=20.0)
>>> sc.nodes, len(sc.flows), sc.flows[0].rate_pps, sc.trace.splitlines()[0]
(20, 4, 4.0, '$node_(0) set X_ 145.2824650863114')
>>> len(messages(sc)) == sum(len(f.send_times()) for f in sc.flows)
True
>>> check_ns3(dataclasses.replace(sc, routing="babel"))
Traceback (most recent call last):
...
topologies.schema.FieldError: scenario.routing: ns-3 runs aodv or olsr, got 'babel'
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from topologies.schema import FieldError

#: 802.11b as ns-3 3.44 builds it by default: its transmit power and log-distance loss
#: (the radio's defaults) and the -82 dBm preamble detection threshold, a hard cut
#: (51.45 m at 16.02 dBm).
RADIO_80211B = {"model": "log_distance", "meters_per_unit": 1.0, "sensitivity_dbm": -82.0}
#: The radio's modulations and the ns-3 PHY mode of each (ConstantRateWifiManager).
PHY_MODES = {"dsss_1mbps": "DsssRate1Mbps", "dsss_2mbps": "DsssRate2Mbps"}
#: The protocols both simulators have.
ROUTINGS = ("aodv", "olsr")
#: Offered load: flows, packets per second per flow, UDP payload bytes.
LOADS = {"light": (4, 4.0, 512), "heavy": (10, 16.0, 512)}
#: How ns-3's ARP caches start (:mod:`.ns3_side`): every entry preset as permanent,
#: filled by ns-3's NeighborCacheHelper, or ARP as it comes.
ARP = ("preset", "helper", "stock")
#: IPv4 (20) and UDP (8) headers: the testbed sizes its packets at the IP layer, as its
#: control packets are sized.
IP_UDP_BYTES = 28


@dataclass(frozen=True)
class Flow:
    """Constant-bit-rate UDP from ``src`` to ``dst``: ``size_bytes`` of payload every
    ``1 / rate_pps`` seconds from ``start`` while the time is before ``stop``."""

    src: int
    dst: int
    rate_pps: float
    size_bytes: int
    start: float
    stop: float

    def send_times(self) -> list[float]:
        """When each packet leaves the source (ns-3's ``UdpClient``: one at ``start``,
        then one every interval, none at or after ``stop``)."""
        count = math.ceil((self.stop - self.start) * self.rate_pps - 1e-9)
        return [self.start + k / self.rate_pps for k in range(max(count, 0))]


@dataclass(frozen=True)
class Scenario:
    """What both simulators run (see the module docstring). Times in seconds, positions
    in metres."""

    name: str
    nodes: int
    trace: str
    flows: tuple[Flow, ...]
    duration: float
    routing: str = "aodv"
    seed: int = 1
    speed: float = 0.0
    load: str = "light"
    medium: str = "shared"
    radio: dict = field(default_factory=lambda: dict(RADIO_80211B))
    arp: str = "preset"
    #: how often the testbed samples the positions (ns-3 moves nodes continuously)
    resolution: float = 0.25

    def labels(self) -> dict:
        return {"routing": self.routing, "speed": self.speed, "load": self.load,
                "seed": self.seed, "arp": self.arp}


def check_ns3(sc: Scenario) -> None:
    """Refuse a scenario ns-3 cannot run as the testbed does: a one-line
    :class:`~topologies.schema.FieldError` naming the field."""
    from topologies.radio import radio_from_table

    if sc.routing not in ROUTINGS:
        raise FieldError("scenario.routing", f"ns-3 runs {' or '.join(ROUTINGS)}, got "
                                             f"{sc.routing!r}")
    if sc.medium != "shared":
        raise FieldError("scenario.medium", f"ns-3's 802.11 is one shared channel; "
                                            f"expected 'shared', got {sc.medium!r}")
    if sc.arp not in ARP:
        raise FieldError("scenario.arp", f"expected one of {', '.join(ARP)}, got {sc.arp!r}")
    radio = radio_from_table(sc.radio, "scenario.radio")
    if radio.model != "log_distance":
        raise FieldError("scenario.radio.model", f"ns-3 runs 'log_distance', got "
                                                 f"{radio.model!r}")
    if radio.modulation not in PHY_MODES:
        raise FieldError("scenario.radio.modulation", f"ns-3's 802.11b runs "
                         f"{' or '.join(PHY_MODES)}, got {radio.modulation!r}")
    if radio.shadowing_db > 0:
        raise FieldError("scenario.radio.shadowing_db", "the ns-3 side draws no "
                         f"shadowing; expected 0, got {radio.shadowing_db}")
    if radio.meters_per_unit != 1.0:
        raise FieldError("scenario.radio.meters_per_unit", "positions are metres in both "
                         f"simulators; expected 1, got {radio.meters_per_unit}")


def messages(sc: Scenario) -> pd.DataFrame:
    """The flows as :func:`emulator.deliver`'s messages (IP packet sizes), with the flow's
    index in ``flow``."""
    rows = [(k, f.src, f.dst, t, f.size_bytes + IP_UDP_BYTES)
            for k, f in enumerate(sc.flows) for t in f.send_times()]
    frame = pd.DataFrame(rows, columns=["flow", "src", "dst", "sent_at", "size_bytes"])
    frame.insert(0, "msg_id", np.arange(len(frame), dtype=np.int64))
    return frame


def ns2_trace(trajectories, nodes: int) -> str:
    """An ns-2 movement trace of ``trajectories``: initial positions, then one
    ``setdest`` per leg (a leg's speed is its length over its duration; pauses are the
    gaps between legs)."""
    lines = []
    for node in range(nodes):
        points = trajectories.waypoints(node)
        _, x, y = points[0]
        lines += [f"$node_({node}) set X_ {x!r}", f"$node_({node}) set Y_ {y!r}",
                  f"$node_({node}) set Z_ 0.0"]
    for node in range(nodes):
        points = trajectories.waypoints(node)
        for (t0, x0, y0), (t1, x1, y1) in zip(points, points[1:]):
            length = math.hypot(x1 - x0, y1 - y0)
            if t1 > t0 and length > 0:
                lines.append(f'$ns_ at {t0!r} "$node_({node}) setdest {x1!r} {y1!r} '
                             f'{length / (t1 - t0)!r}"')
    return "\n".join(lines) + "\n"


def make_scenario(*, speed: float, load: str, routing: str, seed: int, nodes: int = 20,
                  area: float = 150.0, duration: float = 60.0, warmup: float = 10.0,
                  arp: str = "preset") -> Scenario:
    """A scenario of the matrix: ``nodes`` in an ``area`` x ``area`` m square, still
    (``speed`` 0) or random waypoint at ``speed`` m/s without pauses, the ``load``'s
    flows (:data:`LOADS`) between random distinct pairs starting after ``warmup`` s,
    a few hundred ms apart (flows starting on the same instant collide again and again
    in ns-3), and stopping 5 s before ``duration`` (time to drain). The movement and
    the pairs come from ``seed`` alone, so both protocols see the same scenario."""
    from topologies.mobility import Trajectories, random_waypoint

    if load not in LOADS:
        raise FieldError("scenario.load", f"expected one of {', '.join(LOADS)}, got {load!r}")
    rng = np.random.default_rng([seed, 27])
    if speed > 0:
        tr = random_waypoint(nodes, duration, speed=(speed, speed), pause=0.0,
                             area=(area, area), seed=rng)
    else:
        tr = Trajectories({n: [(0.0, *(rng.random(2) * area))] for n in range(nodes)})
    count, rate, size = LOADS[load]
    flows = []
    for k in range(count):
        src, dst = (int(v) for v in rng.choice(nodes, 2, replace=False))
        start = warmup + k * 0.37 + float(rng.uniform(0, 0.1))
        flows.append(Flow(src, dst, rate, size, round(start, 6), duration - 5.0))
    name = f"{routing}-v{speed:g}-{load}-s{seed}" + ("" if arp == "preset" else f"-arp{arp}")
    return Scenario(name=name, nodes=nodes, trace=ns2_trace(tr, nodes), flows=tuple(flows),
                    duration=duration, routing=routing, seed=seed, speed=speed, load=load,
                    arp=arp)


def matrix(quick: bool = False, duration: float = 60.0) -> list[Scenario]:
    """The validation matrix: speeds 0, 5, 20 m/s x light and heavy load x AODV and
    OLSR x seeds 1-3; ``quick``: light load, seed 1, static and 20 m/s."""
    speeds, loads, seeds = ((0.0, 20.0), ("light",), (1,)) if quick else \
        ((0.0, 5.0, 20.0), ("light", "heavy"), (1, 2, 3))
    return [make_scenario(speed=v, load=load, routing=r, seed=s, duration=duration)
            for load in loads for v in speeds for s in seeds for r in ROUTINGS]
