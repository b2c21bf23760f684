"""A :class:`~.scenario.Scenario` in ns-3 (the ``ns3`` package: ns-3 3.44 through cppyy).

802.11b ad hoc (``AdhocWifiMac``), one ``YansWifiChannel`` with
``LogDistancePropagationLossModel`` (the radio's exponent, reference loss and distance),
the radio's transmit power, a fixed PHY rate (``ConstantRateWifiManager``, data and
control frames at the radio's modulation), ns-3's AODV or OLSR with their defaults (the
RFCs'), the nodes moved by ``Ns2MobilityHelper`` from the scenario's trace, each flow a
``UdpClient`` to a ``UdpServer``. ARP: ``preset`` fills every node's cache with
permanent entries before the start (not ``NeighborCacheHelper``: its auto-generated
entries hide neighbours' MAC addresses from AODV, whose link-layer feedback then never
fires: ``helper`` runs it so, to show what it costs), ``stock`` leaves ARP to resolve on
demand.

Data: ``FlowMonitor`` (received packets, delays, the first reception of each flow,
drops by reason). Control: the ``Ipv4L3Protocol`` Tx trace of every node, counted by UDP
port (AODV 654, OLSR 698) and by type (AODV's first byte, an RREP to the broadcast
address being a HELLO; OLSR's message types inside each packet), since FlowMonitor does
not see broadcasts. The two "Failed to materialize symbols" lines at import are harmless.
"""
from __future__ import annotations

import math
import os
import tempfile
import time

from benchmarks.ns3_validation.scenario import PHY_MODES, Scenario, check_ns3

INSTALL_HINT = "ns-3 is not installed: pip install .[ns3]  (the ns3 package, ns-3 3.44)"
DATA_PORT = 9
AODV_TYPES = {1: "RREQ", 2: "RREP", 3: "RERR", 4: "RREP_ACK"}
OLSR_TYPES = {1: "HELLO", 2: "TC", 3: "MID", 4: "HNA"}
#: Ipv4L3Protocol::DropReason (from 1) and WifiMacDropReason (from 0), in the testbed's
#: words where it has them.
IP_DROPS = {1: "ttl", 2: "no_route", 3: "bad_checksum", 4: "interface_down",
            5: "route_error", 6: "fragment_timeout", 7: "duplicate"}
MAC_DROPS = {0: "mac_queue_full", 1: "mac_lifetime", 2: "mac_retry_limit", 3: "mac_old"}

_CPP = r"""
#include "ns3/ipv4-header.h"
#include "ns3/udp-header.h"
#include "ns3/ipv4.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/config.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/wifi-mac.h"
#include "ns3/wifi-mpdu.h"
#include "ns3/arp-cache.h"
#include "ns3/ipv4-interface.h"
#include "ns3/node-container.h"
#include <vector>

namespace validation {
// one row per control transmission: time, UDP port, type code (AODV: its type byte, a
// HELLO as 5; OLSR: the first message's type), OLSR messages by type in the packet
std::vector<double> times;
std::vector<int> ports, kinds, olsr_hello, olsr_tc;
// data packets (UDP to a port below 654) dropped by IP, by Ipv4L3Protocol::DropReason;
// frames the MAC gave up on, by WifiMacDropReason
int ip_drops[16], mac_drops[8];

void IpDrop(const ns3::Ipv4Header& ip, ns3::Ptr<const ns3::Packet> packet,
            ns3::Ipv4L3Protocol::DropReason reason, ns3::Ptr<ns3::Ipv4>, uint32_t) {
    if (ip.GetProtocol() != 17) return;
    ns3::UdpHeader udp;
    packet->PeekHeader(udp);
    int code = static_cast<int>(reason);
    if (udp.GetDestinationPort() < 654 && code < 16) ip_drops[code]++;
}

void MacDrop(ns3::WifiMacDropReason reason, ns3::Ptr<const ns3::WifiMpdu>) {
    if (reason < 8) mac_drops[reason]++;
}

void Tx(ns3::Ptr<const ns3::Packet> packet, ns3::Ptr<ns3::Ipv4> ipv4, uint32_t iface) {
    if (iface == 0) return;                       // the loopback interface
    ns3::Ptr<ns3::Packet> p = packet->Copy();
    ns3::Ipv4Header ip;
    p->RemoveHeader(ip);
    if (ip.GetProtocol() != 17) return;
    ns3::UdpHeader udp;
    p->RemoveHeader(udp);
    uint16_t port = udp.GetDestinationPort();
    if (port != 654 && port != 698) return;
    uint32_t size = p->GetSize();
    std::vector<uint8_t> buf(size);
    p->CopyData(buf.data(), size);
    int kind = size > 0 ? buf[0] : 0, hello = 0, tc = 0;
    if (port == 654 && kind == 2 && (ip.GetDestination().IsBroadcast()
                                     || ip.GetDestination().IsSubnetDirectedBroadcast(
                                            ns3::Ipv4Mask("255.255.255.0"))))
        kind = 5;
    if (port == 698) {
        kind = size > 4 ? buf[4] : 0;
        for (uint32_t at = 4; at + 4 <= size;) {   // messages: type, vtime, size (2 bytes)
            int type = buf[at];
            uint32_t length = (buf[at + 2] << 8) | buf[at + 3];
            if (type == 1) hello++;
            if (type == 2) tc++;
            if (length < 4) break;
            at += length;
        }
    }
    times.push_back(ns3::Simulator::Now().GetSeconds());
    ports.push_back(port);
    kinds.push_back(kind);
    olsr_hello.push_back(hello);
    olsr_tc.push_back(tc);
}

// every node's ARP cache holds every other node, as permanent entries: AODV's neighbour
// table finds a neighbour's MAC address only in an entry that is alive or permanent
// (aodv::Neighbors::LookupMacAddress), and NeighborCacheHelper's entries are neither
// (auto-generated), which silently turns AODV's link-layer feedback off
void PresetArp(ns3::NodeContainer nodes) {
    for (uint32_t i = 0; i < nodes.GetN(); ++i) {
        auto ip = nodes.Get(i)->GetObject<ns3::Ipv4L3Protocol>();
        auto cache = ip->GetInterface(1)->GetArpCache();
        for (uint32_t j = 0; j < nodes.GetN(); ++j) {
            if (i == j) continue;
            auto other = nodes.Get(j)->GetObject<ns3::Ipv4L3Protocol>();
            ns3::ArpCache::Entry* entry = cache->Add(other->GetAddress(1, 0).GetLocal());
            entry->SetMacAddress(other->GetInterface(1)->GetDevice()->GetAddress());
            entry->MarkPermanent();
        }
    }
}

void Connect() {
    times.clear(); ports.clear(); kinds.clear(); olsr_hello.clear(); olsr_tc.clear();
    for (int& n : ip_drops) n = 0;
    for (int& n : mac_drops) n = 0;
    ns3::Config::ConnectWithoutContext("/NodeList/*/$ns3::Ipv4L3Protocol/Tx",
                                       ns3::MakeCallback(&Tx));
    ns3::Config::ConnectWithoutContext("/NodeList/*/$ns3::Ipv4L3Protocol/Drop",
                                       ns3::MakeCallback(&IpDrop));
    ns3::Config::ConnectWithoutContext(
        "/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/Mac/DroppedMpdu",
        ns3::MakeCallback(&MacDrop));
}
}
"""

_ns = None


def load():
    """The ``ns`` namespace (imported once; about 8-25 s), or ``ImportError`` with the
    one-line install hint."""
    global _ns
    if _ns is None:
        try:
            from ns import ns
        except ImportError:
            raise ImportError(INSTALL_HINT) from None
        import cppyy

        cppyy.cppdef(_CPP)
        _ns = ns
    return _ns


def available() -> bool:
    """Whether the ``ns3`` package is installed (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("ns") is not None and \
        importlib.util.find_spec("cppyy") is not None


def run(sc: Scenario, pcap: str | None = None) -> dict:
    """Run ``sc`` in ns-3; the figures :mod:`.report` compares (see :func:`figures`).
    ``pcap``: a path prefix; every node's device then writes what it sends and receives
    (ns-3's ``EnablePcapAll``, 802.11 with radiotap) to ``<pcap>-<node>-0.pcap``."""
    from topologies.radio import radio_from_table

    check_ns3(sc)
    ns = load()
    import cppyy

    radio = radio_from_table(sc.radio, "scenario.radio")
    with tempfile.NamedTemporaryFile("w", suffix=".ns_movements", delete=False) as f:
        f.write(sc.trace)
        trace_path = f.name
    start = time.perf_counter()
    try:
        ns.RngSeedManager.SetSeed(1)
        ns.RngSeedManager.SetRun(sc.seed)
        nodes = ns.NodeContainer()
        nodes.Create(sc.nodes)
        ns.Ns2MobilityHelper(trace_path).Install()
        interfaces = _install_network(ns, cppyy, sc, radio, nodes, pcap)
        _install_flows(ns, sc, nodes, interfaces)
        monitor_helper = ns.FlowMonitorHelper()
        monitor = monitor_helper.InstallAll()
        monitor.SetAttribute("DelayBinWidth", ns.DoubleValue(0.001))
        cppyy.gbl.validation.Connect()
        ns.Simulator.Stop(ns.Seconds(sc.duration))
        ns.Simulator.Run()
        wall = time.perf_counter() - start
        received, first_rx, delay_sum, delays = _flow_counts(cppyy, sc, monitor,
                                                             monitor_helper)
        v = cppyy.gbl.validation
        drops = {name: int(v.ip_drops[k]) for k, name in IP_DROPS.items() if v.ip_drops[k]}
        drops.update({name: int(v.mac_drops[k]) for k, name in MAC_DROPS.items()
                      if v.mac_drops[k]})
        control = list(zip(list(v.times), list(v.ports), list(v.kinds), list(v.olsr_hello),
                           list(v.olsr_tc)))
    finally:
        ns.Simulator.Destroy()
        os.unlink(trace_path)
    return figures(sc, received, first_rx, delay_sum, delays, drops, control, wall)


def _install_network(ns, cppyy, sc: Scenario, radio, nodes, pcap: str | None = None):
    """802.11b ad hoc devices on a log-distance Yans channel, the IP stack with the
    scenario's routing and ARP set-up (and with ``pcap`` the devices' captures); returns
    the nodes' interfaces."""
    wifi = ns.WifiHelper()
    wifi.SetStandard(ns.WIFI_STANDARD_80211b)
    mode = ns.StringValue(PHY_MODES[radio.modulation])
    wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager", "DataMode", mode,
                                 "ControlMode", mode)
    channel = ns.YansWifiChannelHelper()
    channel.SetPropagationDelay("ns3::ConstantSpeedPropagationDelayModel")
    channel.AddPropagationLoss(
        "ns3::LogDistancePropagationLossModel",
        "Exponent", ns.DoubleValue(radio.exponent),
        "ReferenceDistance", ns.DoubleValue(radio.reference_distance_m),
        "ReferenceLoss", ns.DoubleValue(radio.reference_loss_db))
    phy = ns.YansWifiPhyHelper()
    phy.SetChannel(channel.Create())
    phy.Set("TxPowerStart", ns.DoubleValue(radio.tx_power_dbm))
    phy.Set("TxPowerEnd", ns.DoubleValue(radio.tx_power_dbm))
    mac = ns.WifiMacHelper()
    mac.SetType("ns3::AdhocWifiMac")
    devices = wifi.Install(phy, mac, nodes)
    if pcap is not None:
        phy.SetPcapDataLinkType(ns.WifiPhyHelper.DLT_IEEE802_11_RADIO)
        phy.EnablePcapAll(pcap)

    stack = ns.InternetStackHelper()
    routing = ns.AodvHelper() if sc.routing == "aodv" else ns.OlsrHelper()
    stack.SetRoutingHelper(routing)
    stack.Install(nodes)
    address = ns.Ipv4AddressHelper()
    address.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.0"))
    interfaces = address.Assign(devices)
    # fixed stream numbers: a run's draws do not depend on what ran before it in
    # this process (ns-3 otherwise numbers streams in order of creation)
    wifi.AssignStreams(devices, 0)
    stack.AssignStreams(nodes, 1000)
    routing.AssignStreams(nodes, 2000)
    if sc.arp == "preset":
        cppyy.gbl.validation.PresetArp(nodes)
    elif sc.arp == "helper":
        ns.NeighborCacheHelper().PopulateNeighborCache()
    return interfaces


def _install_flows(ns, sc: Scenario, nodes, interfaces) -> None:
    """One UDP client and server per flow, on the flow's own port."""
    for k, flow in enumerate(sc.flows):
        port = DATA_PORT + k
        server = ns.UdpServerHelper(port).Install(nodes.Get(flow.dst))
        server.Start(ns.Seconds(0.0))
        server.Stop(ns.Seconds(sc.duration))
        client = ns.UdpClientHelper(interfaces.GetAddress(flow.dst).ConvertTo(), port)
        client.SetAttribute("MaxPackets", ns.UintegerValue(len(flow.send_times())))
        client.SetAttribute("Interval", ns.TimeValue(ns.Seconds(1.0 / flow.rate_pps)))
        client.SetAttribute("PacketSize", ns.UintegerValue(flow.size_bytes))
        app = client.Install(nodes.Get(flow.src))
        app.Start(ns.Seconds(flow.start))
        app.Stop(ns.Seconds(flow.stop))


def _flow_counts(cppyy, sc: Scenario, monitor, monitor_helper):
    """From FlowMonitor, per flow: packets received and the first one's time; over all
    flows the delay sum and the delay histogram as ``(bin centre, count)``."""
    monitor.CheckForLostPackets()
    classifier = monitor_helper.GetClassifier()
    classifier = cppyy.gbl.ns3.DynamicCast[cppyy.gbl.ns3.Ipv4FlowClassifier](classifier)
    by_port = {DATA_PORT + k: k for k in range(len(sc.flows))}
    received = [0] * len(sc.flows)
    first_rx = [math.nan] * len(sc.flows)
    delay_sum, delays = 0.0, []
    for item in monitor.GetFlowStats():
        flow_id, st = item.first, item.second
        key = classifier.FindFlow(flow_id)
        k = by_port.get(int(key.destinationPort))
        if k is None or key.protocol != 17:
            continue   # an AODV unicast (RREP, RERR) or anything not ours
        received[k] += int(st.rxPackets)
        if st.rxPackets:
            first_rx[k] = st.timeFirstRxPacket.GetSeconds()
        delay_sum += st.delaySum.GetSeconds()
        hist = st.delayHistogram
        for b in range(hist.GetNBins()):
            count = int(hist.GetBinCount(b))
            if count:
                delays.append((hist.GetBinStart(b) + hist.GetBinWidth(b) / 2, count))
    return received, first_rx, delay_sum, delays


def figures(sc, received, first_rx, delay_sum, delays, drops, control, wall) -> dict:
    """The compared figures from ns-3's counters (keys as :func:`.testbed_side.run`'s)."""
    sent = sum(len(f.send_times()) for f in sc.flows)
    got = sum(received)
    window = max(f.stop for f in sc.flows)
    types = {}
    hello_msgs = tc_msgs = 0
    for t, port, kind, hello, tc in control:
        if t >= window:
            continue
        if port == 654:
            name = "HELLO" if kind == 5 else AODV_TYPES.get(kind, "OTHER")
        else:
            name = OLSR_TYPES.get(kind, "OTHER")
            hello_msgs += hello
            tc_msgs += tc
        types[name] = types.get(name, 0) + 1
    p95 = math.nan
    if delays:
        delays.sort()
        total, seen = sum(c for _, c in delays), 0
        for value, count in delays:
            seen += count
            if seen >= 0.95 * total:
                p95 = value
                break
    firsts = [rx - f.start for rx, f in zip(first_rx, sc.flows) if not math.isnan(rx)]
    out = {"simulator": "ns-3", **sc.labels(),
           "delivery_ratio": got / sent if sent else math.nan,
           "delay_mean": delay_sum / got if got else math.nan,
           "delay_p95": p95,
           "first_packet_delay": sum(firsts) / len(firsts) if firsts else math.nan,
           "flows_reached": len(firsts),
           "control_pps": sum(types.values()) / window,
           "control_by_type": {k: v / window for k, v in sorted(types.items())},
           "drops_by_reason": drops,
           "sent": sent, "received": got, "wall_s": wall}
    if sc.routing == "olsr":
        out["olsr_messages_ps"] = {"HELLO": hello_msgs / window, "TC": tc_msgs / window}
    return out
