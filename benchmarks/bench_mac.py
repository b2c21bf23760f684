"""The MAC engine's saturation throughput beside Bianchi's model, and beside ns-3.

``n`` stations in one collision domain, each always holding a 1,500-byte frame (MSDU)
for the next station round a ring, 802.11b at 11 Mbit/s with 1 Mbit/s control frames,
basic access or RTS/CTS. The testbed is :class:`emulator.mac.engine.MacEngine`; the
model :func:`emulator.mac.bianchi.saturation_throughput`; ns-3 (``--ns3``, the ``ns3``
package, 3.44) runs the same stations as ``AdhocWifiMac`` devices within a metre of
each other, fed by ``PacketSocketClient`` s faster than the channel drains them, and
counts the MSDUs its MACs pass up (``MacRx``). Throughput is MSDU bits a second.

    python -m benchmarks.bench_mac                 # the testbed and the model
    python -m benchmarks.bench_mac --ns3 --rts     # and ns-3, with RTS/CTS
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from emulator.mac.bianchi import saturation_throughput
from emulator.mac.engine import REASONS, MacEngine, unit_disk_rx_dbm
from emulator.mac.standards import Dcf80211

PAYLOAD = 1500
#: The RTS threshold that puts RTS/CTS before every frame of the benchmark.
RTS_ON = 1000


def standard(rts: bool) -> Dcf80211:
    """802.11b with queues deep enough never to run dry (saturation)."""
    threshold = RTS_ON if rts else Dcf80211.rts_threshold_bytes
    return Dcf80211(rts_threshold_bytes=threshold, queue_limit=10 ** 7, lifetime=1e9)


def testbed(n: int, rts: bool, seconds: float, seed: int) -> tuple[float, float]:
    """``(bit/s, CPU seconds)`` of ``n`` saturated stations on the engine."""
    angle = np.linspace(0, 2 * np.pi, max(n, 2), endpoint=False)
    pos = np.c_[np.cos(angle), np.sin(angle)] * 0.1
    engine = MacEngine(unit_disk_rx_dbm(pos, 1.0), standard(rts), seed=seed)
    per_node = int(seconds * 11e6 / (PAYLOAD * 8)) + 10
    for i in range(n):
        for h in range(per_node):
            engine.enqueue(0.0, i, (i + 1) % max(n, 2), PAYLOAD, i * per_node + h)
    start = time.process_time()
    out = engine.advance(seconds)
    cpu = time.process_time() - start
    delivered = int((out.reason == REASONS.index("delivered")).sum())
    return delivered * PAYLOAD * 8 / seconds, cpu


_CPP = """
#include "ns3/packet.h"
namespace bench_mac {
uint64_t rx_bytes = 0;
void MacRx(ns3::Ptr<const ns3::Packet> p) { rx_bytes += p->GetSize(); }
void Connect() {
    ns3::Config::ConnectWithoutContext(
        "/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/Mac/MacRx",
        ns3::MakeCallback(&MacRx));
}
}
"""


def ns3(n: int, rts: bool, seconds: float, seed: int) -> tuple[float, float]:
    """``(bit/s, wall seconds)`` of the same stations in ns-3 (after 0.5 s of warm-up)."""
    from benchmarks.ns3_validation import ns3_side
    ns = ns3_side.load()
    import cppyy
    if not hasattr(cppyy.gbl, "bench_mac"):
        cppyy.cppdef(_CPP)
    sink = cppyy.gbl.bench_mac
    start = time.perf_counter()
    try:
        ns.RngSeedManager.SetSeed(1)
        ns.RngSeedManager.SetRun(seed)
        nodes = ns.NodeContainer()
        nodes.Create(max(n, 2))
        mobility = ns.MobilityHelper()
        places = ns.ListPositionAllocator()
        for k in range(max(n, 2)):
            a = 2 * np.pi * k / max(n, 2)
            places.Add(ns.Vector(0.5 * np.cos(a), 0.5 * np.sin(a), 0.0))
        mobility.SetPositionAllocator(places)
        mobility.Install(nodes)
        wifi = ns.WifiHelper()
        wifi.SetStandard(ns.WIFI_STANDARD_80211b)
        threshold = RTS_ON if rts else Dcf80211.rts_threshold_bytes
        wifi.SetRemoteStationManager(
            "ns3::ConstantRateWifiManager", "DataMode", ns.StringValue("DsssRate11Mbps"),
            "ControlMode", ns.StringValue("DsssRate1Mbps"),
            "RtsCtsThreshold", ns.UintegerValue(threshold))
        channel = ns.YansWifiChannelHelper.Default()
        phy = ns.YansWifiPhyHelper()
        phy.SetChannel(channel.Create())
        mac = ns.WifiMacHelper()
        mac.SetType("ns3::AdhocWifiMac")
        devices = wifi.Install(phy, mac, nodes)
        wifi.AssignStreams(devices, 0)
        ns.PacketSocketHelper().Install(nodes)
        for k in range(n):
            dst = (k + 1) % max(n, 2)
            address = ns.PacketSocketAddress()
            address.SetSingleDevice(devices.Get(k).GetIfIndex())
            address.SetPhysicalAddress(devices.Get(dst).GetAddress())
            address.SetProtocol(1)
            client = ns.CreateObject[ns.PacketSocketClient]()
            client.SetRemote(address)
            client.SetAttribute("PacketSize", ns.UintegerValue(PAYLOAD - 8))  # + LLC/SNAP
            client.SetAttribute("MaxPackets", ns.UintegerValue(0))
            client.SetAttribute("Interval", ns.TimeValue(ns.MicroSeconds(200)))
            nodes.Get(k).AddApplication(client)
            server = ns.CreateObject[ns.PacketSocketServer]()
            local = ns.PacketSocketAddress()
            local.SetSingleDevice(devices.Get(dst).GetIfIndex())
            local.SetProtocol(1)
            server.SetLocal(local)
            nodes.Get(dst).AddApplication(server)
        sink.Connect()
        warmup = 0.5
        ns.Simulator.Stop(ns.Seconds(warmup))
        ns.Simulator.Run()
        sink.rx_bytes = 0
        ns.Simulator.Stop(ns.Seconds(seconds))
        ns.Simulator.Run()
        got = int(sink.rx_bytes)
    finally:
        ns.Simulator.Destroy()
    # MacRx passes up the MSDU: the client's payload and the 8-byte LLC/SNAP header.
    return got * 8 / seconds, time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rts", action="store_true", help="RTS/CTS before every frame")
    parser.add_argument("--ns3", action="store_true", help="also run ns-3 (slow)")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--stations", type=int, nargs="+", default=[1, 2, 5, 10, 20, 50])
    args = parser.parse_args(argv)
    header = f"{'n':>3} {'testbed':>9} {'Bianchi':>9} {'diff':>7} {'cpu s':>6}"
    print(header + (f" {'ns-3':>9} {'diff':>7} {'wall s':>7}" if args.ns3 else ""))
    for n in args.stations:
        model = saturation_throughput(n, standard(args.rts), PAYLOAD, args.rts)
        got, cpu = testbed(n, args.rts, args.seconds, seed=n)
        line = f"{n:>3} {got / 1e6:>9.3f} {model / 1e6:>9.3f} {got / model - 1:>+7.1%} {cpu:>6.2f}"
        if args.ns3:
            ref, wall = ns3(n, args.rts, args.seconds, seed=n)
            line += f" {ref / 1e6:>9.3f} {got / ref - 1:>+7.1%} {wall:>7.1f}"
        print(line, flush=True)
    print("Mbit/s of 1,500-byte MSDUs delivered; diff: the testbed against the column left "
          "of it" + ("; ns-3 times are wall, measured under load" if args.ns3 else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
