"""The MAC engine's saturation throughput beside Bianchi's model, and beside ns-3.

``n`` stations in one collision domain, each always holding a frame for the next
station round a ring. 802.11b (the default): 1,500-byte MSDUs at 11 Mbit/s with 1
Mbit/s control frames, basic access or RTS/CTS. 802.15.4 (``--standard 802.15.4``):
100-byte MSDUs (111-byte PSDUs with short addresses) at 250 kbit/s, unslotted CSMA/CA,
acknowledged. The testbed is :class:`emulator.mac.engine.MacEngine`; the model (802.11
only) :func:`emulator.mac.bianchi.saturation_throughput`; ns-3 (``--ns3``, the ``ns3``
package, 3.44) runs the same stations within a metre of each other, fed by
``PacketSocketClient`` s faster than the channel drains them: ``AdhocWifiMac`` devices
counting the MSDUs their MACs pass up (``MacRx``), or ``LrWpanNetDevice`` s of one PAN
(``LrWpanHelper::CreateAssociatedPan``) counting the data frames theirs pass up.
Throughput is MSDU bits a second, after 0.5 s of warm-up on both.

    python -m benchmarks.bench_mac                 # the testbed and the model
    python -m benchmarks.bench_mac --ns3 --rts     # and ns-3, with RTS/CTS
    python -m benchmarks.bench_mac --ns3 --standard 802.15.4 --stations 1 2 5 10 20
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from emulator.mac.bianchi import saturation_throughput
from emulator.mac.engine import REASONS, MacEngine, unit_disk_rx_dbm
from emulator.mac.standards import CsmaCa802154, Dcf80211

PAYLOAD = 1500
#: 802.15.4's MSDU: 100 bytes, with the 11-byte MAC header and FCS a 111-byte PSDU.
PAYLOAD_802154 = 100
#: The RTS threshold that puts RTS/CTS before every frame of the benchmark.
RTS_ON = 1000
#: Seconds run before counting, on both sides (queues filled, backoffs drawn).
WARMUP = 0.5


def standard(rts: bool) -> Dcf80211:
    """802.11b with queues deep enough never to run dry (saturation)."""
    threshold = RTS_ON if rts else Dcf80211.rts_threshold_bytes
    return Dcf80211(rts_threshold_bytes=threshold, queue_limit=10 ** 7, lifetime=1e9)


def saturated(name: str, rts: bool):
    """The engine's standard for ``name`` (``802.11`` or ``802.15.4``), saturated."""
    if name == "802.15.4":
        return CsmaCa802154(queue_limit=10 ** 7, lifetime=1e9)
    return standard(rts)


def payload_of(name: str) -> int:
    return PAYLOAD_802154 if name == "802.15.4" else PAYLOAD


def testbed(n: int, std, seconds: float, seed: int) -> tuple[float, float]:
    """``(bit/s, CPU seconds)`` of ``n`` saturated stations on the engine, counted over
    ``seconds`` after :data:`WARMUP`."""
    payload = PAYLOAD_802154 if isinstance(std, CsmaCa802154) else PAYLOAD
    rate = std.bit_rate if isinstance(std, CsmaCa802154) else std.data_rate
    angle = np.linspace(0, 2 * np.pi, max(n, 2), endpoint=False)
    pos = np.c_[np.cos(angle), np.sin(angle)] * 0.1
    engine = MacEngine(unit_disk_rx_dbm(pos, 1.0), std, seed=seed)
    per_node = int((WARMUP + seconds) * rate / (payload * 8)) + 10
    for i in range(n):
        for h in range(per_node):
            engine.enqueue(0.0, i, (i + 1) % max(n, 2), payload, i * per_node + h)
    start = time.process_time()
    engine.advance(WARMUP)
    out = engine.advance(WARMUP + seconds)
    cpu = time.process_time() - start
    delivered = int((out.reason == REASONS.index("delivered")).sum())
    return delivered * payload * 8 / seconds, cpu


_CPP = """
#include "ns3/packet.h"
namespace bench_mac {
uint64_t rx_bytes = 0;
uint64_t rx_frames = 0;
void MacRx(ns3::Ptr<const ns3::Packet> p) { rx_bytes += p->GetSize(); }
// lr-wpan's MacRx passes up every frame received, ACKs (5 bytes) too
void LrMacRx(ns3::Ptr<const ns3::Packet> p) { if (p->GetSize() > 5) { rx_frames++; } }
void Connect() {
    ns3::Config::ConnectWithoutContext(
        "/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/Mac/MacRx",
        ns3::MakeCallback(&MacRx));
}
void ConnectLr() {
    ns3::Config::ConnectWithoutContext(
        "/NodeList/*/DeviceList/*/$ns3::lrwpan::LrWpanNetDevice/Mac/MacRx",
        ns3::MakeCallback(&LrMacRx));
}
}
"""


def _wifi_devices(ns, nodes, rts: bool):
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
    return devices


def _lrwpan_devices(ns, nodes):
    """The devices, and their helper: it must outlive the run (its destructor disposes
    of the channel, and then nothing is received)."""
    helper = ns.LrWpanHelper()
    devices = helper.Install(nodes)
    helper.CreateAssociatedPan(devices, 10)     # short addresses, one PAN
    return devices, helper


def ns3_sink(name: str, cpp: str):
    """ns-3's namespace, and the C++ namespace ``name`` of counters that ``cpp`` defines
    (once a process)."""
    from benchmarks.ns3_validation import ns3_side
    ns = ns3_side.load()
    import cppyy
    if not hasattr(cppyy.gbl, name):
        cppyy.cppdef(cpp)
    return ns, getattr(cppyy.gbl, name)


def placed_nodes(ns, points, seed: int):
    """ns-3's generator at run ``seed``, and a still node at each ``(x, y)`` of ``points``."""
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(seed)
    nodes = ns.NodeContainer()
    nodes.Create(len(points))
    mobility = ns.MobilityHelper()
    places = ns.ListPositionAllocator()
    for x, y in points:
        places.Add(ns.Vector(float(x), float(y), 0.0))
    mobility.SetPositionAllocator(places)
    mobility.Install(nodes)
    return nodes


def ns3(n: int, name: str, rts: bool, seconds: float, seed: int) -> tuple[float, float]:
    """``(bit/s, wall seconds)`` of the same stations in ns-3 (after :data:`WARMUP`)."""
    ns, sink = ns3_sink("bench_mac", _CPP)
    lr = name == "802.15.4"
    start = time.perf_counter()
    try:
        angle = 2 * np.pi * np.arange(max(n, 2)) / max(n, 2)
        nodes = placed_nodes(ns, np.c_[np.cos(angle), np.sin(angle)] * 0.5, seed)
        devices, _keep = _lrwpan_devices(ns, nodes) if lr else (
            _wifi_devices(ns, nodes, rts), None)
        ns.PacketSocketHelper().Install(nodes)
        for k in range(n):
            dst = (k + 1) % max(n, 2)
            address = ns.PacketSocketAddress()
            address.SetSingleDevice(devices.Get(k).GetIfIndex())
            address.SetPhysicalAddress(devices.Get(dst).GetAddress())
            address.SetProtocol(1)
            client = ns.CreateObject[ns.PacketSocketClient]()
            client.SetRemote(address)
            # Wi-Fi adds an 8-byte LLC/SNAP header to the client's payload; lr-wpan none
            size = PAYLOAD_802154 if lr else PAYLOAD - 8
            client.SetAttribute("PacketSize", ns.UintegerValue(size))
            client.SetAttribute("MaxPackets", ns.UintegerValue(0))
            every = ns.MicroSeconds(2000 if lr else 200)     # faster than the channel
            client.SetAttribute("Interval", ns.TimeValue(every))
            nodes.Get(k).AddApplication(client)
            server = ns.CreateObject[ns.PacketSocketServer]()
            local = ns.PacketSocketAddress()
            local.SetSingleDevice(devices.Get(dst).GetIfIndex())
            local.SetProtocol(1)
            server.SetLocal(local)
            nodes.Get(dst).AddApplication(server)
        sink.ConnectLr() if lr else sink.Connect()
        ns.Simulator.Stop(ns.Seconds(WARMUP))
        ns.Simulator.Run()
        sink.rx_bytes, sink.rx_frames = 0, 0
        ns.Simulator.Stop(ns.Seconds(seconds))
        ns.Simulator.Run()
        # Wi-Fi's MacRx passes up the MSDU (the client's payload and LLC/SNAP); lr-wpan's
        # counts data frames of PAYLOAD_802154 bytes of MSDU
        got = int(sink.rx_frames) * PAYLOAD_802154 if lr else int(sink.rx_bytes)
    finally:
        ns.Simulator.Destroy()
    return got * 8 / seconds, time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--standard", choices=("802.11", "802.15.4"), default="802.11")
    parser.add_argument("--rts", action="store_true", help="RTS/CTS before every frame "
                        "(802.11)")
    parser.add_argument("--ns3", action="store_true", help="also run ns-3 (slow)")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--stations", type=int, nargs="+", default=[1, 2, 5, 10, 20, 50])
    parser.add_argument("--seeds", type=int, default=1, help="runs per n on each side "
                        "(seeds n, n + 100, ...); figures are their means")
    args = parser.parse_args(argv)
    if args.rts and args.standard == "802.15.4":
        parser.error("--rts: 802.15.4 has no RTS/CTS")
    unit, scale = ("Mbit/s", 1e6) if args.standard == "802.11" else ("kbit/s", 1e3)
    wifi = args.standard == "802.11"
    header = f"{'n':>3} {'testbed':>9}" + (f" {'Bianchi':>9} {'diff':>7}" if wifi else "")
    print(header + f" {'cpu s':>6}" + (f" {'ns-3':>9} {'diff':>7} {'wall s':>7}"
                                          if args.ns3 else ""))
    std = saturated(args.standard, args.rts)
    for n in args.stations:
        seeds = [n + 100 * k for k in range(args.seeds)]
        ours = [testbed(n, std, args.seconds, seed=s) for s in seeds]
        got, cpu = float(np.mean([g for g, _ in ours])), sum(c for _, c in ours)
        line = f"{n:>3} {got / scale:>9.3f}"
        if wifi:
            model = saturation_throughput(n, std, PAYLOAD, args.rts)
            line += f" {model / scale:>9.3f} {got / model - 1:>+7.1%}"
        line += f" {cpu:>6.2f}"
        if args.ns3:
            theirs = [ns3(n, args.standard, args.rts, args.seconds, seed=s) for s in seeds]
            ref, wall = float(np.mean([r for r, _ in theirs])), sum(w for _, w in theirs)
            line += f" {ref / scale:>9.3f} {got / ref - 1:>+7.1%} {wall:>7.1f}"
        print(line, flush=True)
    print(f"{unit} of {payload_of(args.standard):,}-byte MSDUs delivered; diff: the testbed "
          "against the column left of it" + ("; ns-3 times are wall, measured under load"
                                             if args.ns3 else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
