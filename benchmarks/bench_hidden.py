"""Hidden terminals, the MAC engine beside ns-3: A -> B <- C, A and C out of each other's reach.

Three 802.11b stations on a line, ``--spacing`` metres apart (30 by default): A and C
each send B saturated 1,500-byte MSDUs at 11 Mbit/s (control frames at 1 Mbit/s), with
basic access and with RTS/CTS before every frame. The powers are ns-3's defaults
(``LogDistancePropagationLossModel``: exponent 3, 46.6777 dB at 1 m; 16.0206 dBm), on
both sides from one formula (:class:`topologies.radio.Radio`): B hears each sender at
-75.0 dBm, 19 dB above the noise; A and C hear each other at -84.7 dBm, below ns-3's
preamble detection and carrier sense (-82 dBm), so neither decodes nor senses the other.
The engine senses from -82 dBm here too (``cs_threshold_dbm``, ns-3's
``CcaSensitivity``): its default (-96 dBm, ns-2's ratio) would let A sense C at this
distance, and no spacing makes them hidden under it while both decode at B.

Per (access, seed), after :data:`benchmarks.bench_mac.WARMUP`: **delivery** -- frames
received at B over frames received plus frames given up at the retry limit (a frame
whose ACKs were all lost counts in both, on both sides), and **throughput** -- MSDU bits
received at B a second. ns-3 (the ``ns3`` package, 3.44) counts B's ``MacRx`` and the
senders' ``DroppedMpdu`` with ``WIFI_MAC_DROP_REACHED_RETRY_LIMIT``; the testbed is
:class:`emulator.mac.engine.MacEngine` with the standard's defaults.

    python -m benchmarks.bench_hidden --seeds 5           # the engine and ns-3
    python -m benchmarks.bench_hidden --no-ns3 --seconds 2
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks.bench_mac import (PAYLOAD, WARMUP, _wifi_devices, ns3_sink, placed_nodes,
                                  standard)
from emulator.mac.engine import REASONS, Channel, MacEngine
from topologies.radio import Radio

#: ns-3's carrier sense: a node senses what it detects (``CcaSensitivity``), no farther.
NS3_CCA = Channel(cs_threshold_dbm=-82.0)


def positions(spacing: float) -> np.ndarray:
    """A, B, C on the x axis, ``spacing`` metres apart."""
    return np.array([[-spacing, 0.0], [0.0, 0.0], [spacing, 0.0]])


def rx_dbm(spacing: float) -> np.ndarray:
    """The power at each station of each one's transmissions (ns-3's default loss).

    >>> rx_dbm(30.0).round(1)
    array([[-inf, -75., -84.],
           [-75., -inf, -75.],
           [-84., -75., -inf]])
    """
    pos = positions(spacing)
    dist = np.linalg.norm(pos[:, None, :] - pos[None, :, :], axis=-1)
    rx = np.asarray(Radio().rx_dbm(dist), float)
    np.fill_diagonal(rx, -np.inf)
    return rx


def figures(received: int, given_up: int, retries: int, seconds: float) -> tuple:
    """``(delivery, bit/s, retries per frame done)`` from frames received at B, frames
    given up and attempts retried (data or RTS)."""
    done = received + given_up
    if not done:
        return float("nan"), 0.0, float("nan")
    return received / done, received * PAYLOAD * 8 / seconds, retries / done


def testbed(rts: bool, spacing: float, seconds: float, seed: int) -> tuple:
    """``(delivery, bit/s, retries per frame, CPU seconds)`` of the engine, counted
    after the warm-up."""
    std = standard(rts)
    engine = MacEngine(rx_dbm(spacing), std, NS3_CCA, seed=seed)
    per_node = int((WARMUP + seconds) * std.data_rate / (PAYLOAD * 8)) + 10
    for k in range(per_node):
        for sender in (0, 2):
            engine.enqueue(0.0, sender, 1, PAYLOAD, sender * per_node + k)
    start = time.process_time()
    engine.advance(WARMUP)
    before = int(engine.counters()["retries"].sum())
    out = engine.advance(WARMUP + seconds)
    cpu = time.process_time() - start
    retries = int(engine.counters()["retries"].sum()) - before
    received = int((out.reason == REASONS.index("delivered")).sum())
    given_up = int((out.reason == REASONS.index("retry_limit")).sum())
    return (*figures(received, given_up, retries, seconds), cpu)


_CPP = """
namespace bench_hidden {
uint64_t rx_frames = 0;
uint64_t given_up = 0;
uint64_t failed = 0;
void MacRx(ns3::Ptr<const ns3::Packet> p) { rx_frames++; }
void Failed(ns3::Mac48Address to) { failed++; }
void Dropped(ns3::WifiMacDropReason reason, ns3::Ptr<const ns3::WifiMpdu> mpdu) {
    if (reason == ns3::WIFI_MAC_DROP_REACHED_RETRY_LIMIT) { given_up++; }
}
void Connect() {
    ns3::Config::ConnectWithoutContext(
        "/NodeList/1/DeviceList/*/$ns3::WifiNetDevice/Mac/MacRx", ns3::MakeCallback(&MacRx));
    ns3::Config::ConnectWithoutContext(
        "/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/Mac/DroppedMpdu",
        ns3::MakeCallback(&Dropped));
    for (auto kind : {"MacTxDataFailed", "MacTxRtsFailed"}) {
        ns3::Config::ConnectWithoutContext(
            std::string("/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/RemoteStationManager/")
            + kind, ns3::MakeCallback(&Failed));
    }
}
}
"""


def ns3(rts: bool, spacing: float, seconds: float, seed: int) -> tuple:
    """``(delivery, bit/s, retries per frame, wall seconds)`` of the same stations in
    ns-3 (its ``MacTx{Data,Rts}Failed`` count every failed attempt, the last too)."""
    ns, sink = ns3_sink("bench_hidden", _CPP)
    start = time.perf_counter()
    try:
        nodes = placed_nodes(ns, positions(spacing), seed)
        devices = _wifi_devices(ns, nodes, rts)
        ns.PacketSocketHelper().Install(nodes)
        for sender in (0, 2):
            address = ns.PacketSocketAddress()
            address.SetSingleDevice(devices.Get(sender).GetIfIndex())
            address.SetPhysicalAddress(devices.Get(1).GetAddress())
            address.SetProtocol(1)
            client = ns.CreateObject[ns.PacketSocketClient]()
            client.SetRemote(address)
            client.SetAttribute("PacketSize", ns.UintegerValue(PAYLOAD - 8))   # + LLC/SNAP
            client.SetAttribute("MaxPackets", ns.UintegerValue(0))
            client.SetAttribute("Interval", ns.TimeValue(ns.MicroSeconds(200)))
            nodes.Get(sender).AddApplication(client)
        server = ns.CreateObject[ns.PacketSocketServer]()
        local = ns.PacketSocketAddress()
        local.SetSingleDevice(devices.Get(1).GetIfIndex())
        local.SetProtocol(1)
        server.SetLocal(local)
        nodes.Get(1).AddApplication(server)
        sink.Connect()
        ns.Simulator.Stop(ns.Seconds(WARMUP))
        ns.Simulator.Run()
        sink.rx_frames, sink.given_up, sink.failed = 0, 0, 0
        ns.Simulator.Stop(ns.Seconds(seconds))
        ns.Simulator.Run()
        received, given_up = int(sink.rx_frames), int(sink.given_up)
        retries = int(sink.failed) - given_up
    finally:
        ns.Simulator.Destroy()
    return (*figures(received, given_up, retries, seconds), time.perf_counter() - start)


def _cell(runs) -> tuple:
    """Means over seeds of delivery, bit/s and retries per frame; the summed time."""
    return (*(float(np.mean([r[k] for r in runs])) for k in range(3)),
            sum(r[3] for r in runs))


def _per_seed(runs) -> str:
    return ", ".join(f"{r[0]:.3f}/{r[1] / 1e6:.2f}/{r[2]:.2f}" for r in runs)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--seeds", type=int, default=5, help="runs per cell (seeds 1..N)")
    parser.add_argument("--spacing", type=float, default=30.0, help="metres A-B and B-C")
    parser.add_argument("--no-ns3", dest="ns3", action="store_false")
    args = parser.parse_args(argv)
    rx = rx_dbm(args.spacing)
    print(f"A-B {rx[0, 1]:.1f} dBm, A-C {rx[0, 2]:.1f} dBm; {args.seconds:g} s after "
          f"{WARMUP} s, means over seeds 1-{args.seeds}: delivery at B, Mbit/s, retries "
          "per frame")
    print(f"{'access':<8} {'testbed':>20} {'ns-3':>20} {'diff':>7} {'cpu s':>6} {'wall s':>7}")
    for rts in (False, True):
        seeds = range(1, args.seeds + 1)
        ours = [testbed(rts, args.spacing, args.seconds, s) for s in seeds]
        d, bps, retries, cpu = _cell(ours)
        line = f"{'RTS/CTS' if rts else 'basic':<8} {d:>6.3f} {bps / 1e6:>6.3f} {retries:>6.2f}"
        theirs = [ns3(rts, args.spacing, args.seconds, s) for s in seeds] if args.ns3 else []
        if theirs:
            rd, rbps, rretries, wall = _cell(theirs)
            line += f" {rd:>6.3f} {rbps / 1e6:>6.3f} {rretries:>6.2f} {d - rd:>+7.3f}"
        else:
            line += f" {'':>20} {'':>7}"
        print(line + f" {cpu:>6.2f}" + (f" {wall:>7.1f}" if theirs else ""))
        print(f"  testbed per seed: {_per_seed(ours)}")
        if theirs:
            print(f"  ns-3 per seed:    {_per_seed(theirs)}", flush=True)
    print("diff: delivery, the testbed less ns-3; ns-3 times are wall, measured under load")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
