"""802.15.4 senders and one coordinator at rising load: the MAC engine beside ns-3's lr-wpan.

``n`` nodes within a metre of a coordinator (node 0) each send it a 100-byte MSDU
(111-byte PSDU) every ``1 / rate`` seconds from a random start, acknowledged, unslotted
CSMA/CA with ns-3's defaults (macMinBE 3, macMaxBE 5, macMaxCSMABackoffs 4,
macMaxFrameRetries 3). Counted over ``--seconds`` after 0.5 s, on both sides:

- delivery: data frames the coordinator received (once each) over frames offered;
- access failures: frames dropped because CCA found the channel busy too often, over
  frames offered (ns-3: ``MacTxDrop`` less the frames dropped at the retry limit);
- retries: retransmissions of every frame the MAC finished with (acknowledged, or given
  up after some), over frames offered (ns-3: ``MacSentPkt``'s transmissions less one,
  which it reports for each frame it takes off its queue, whatever the outcome).

    python -m benchmarks.validate_lrwpan [--stations 2 5 10 20] [--rates 5 20 50]
                                         [--seconds 20] [--seeds 2] [--ns3]

Issue 58 asks for delivery within 0.05 and access failures and retries within 1.5x.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks.bench_mac import ns3_sink, placed_nodes
from emulator.mac.engine import REASONS, MacEngine, unit_disk_rx_dbm
from emulator.mac.standards import CsmaCa802154

PAYLOAD = 100
WARMUP = 0.5


def _starts(n: int, rate: float, seed: int) -> np.ndarray:
    """Each sender's first send, uniform over one period (the same draw on both sides)."""
    return np.random.default_rng(1000 + seed).uniform(0.0, 1.0 / rate, n)


def testbed(n: int, rate: float, seconds: float, seed: int) -> dict:
    """The engine's figures for ``n`` senders at ``rate`` frames/s each."""
    angle = np.linspace(0, 2 * np.pi, n, endpoint=False)
    pos = np.vstack([[0.0, 0.0], np.c_[np.cos(angle), np.sin(angle)] * 0.1])
    engine = MacEngine(unit_disk_rx_dbm(pos, 1.0), CsmaCa802154(), seed=seed)
    end = WARMUP + seconds
    handle, counted = 0, set()
    for i, first in enumerate(_starts(n, rate, seed)):
        for t in np.arange(first, end, 1.0 / rate):
            engine.enqueue(float(t), i + 1, 0, PAYLOAD, handle)
            if t >= WARMUP:
                counted.add(handle)
            handle += 1
    start = time.process_time()
    out = engine.advance(end + 1.0)    # let the last frames finish
    cpu = time.process_time() - start
    mine = np.isin(out.handle, list(counted))
    reason, attempts = out.reason[mine], out.attempts[mine]
    delivered = reason == REASONS.index("delivered")
    offered = len(counted)
    return {"delivery": int(delivered.sum()) / offered,
            "access_failures": int((reason == REASONS.index("channel_access_failure"))
                                   .sum()) / offered,
            "retries": float(np.clip(attempts - 1, 0, None).sum()) / offered, "cpu_s": cpu}


_CPP = """
#include "ns3/packet.h"
namespace validate_lrwpan {
uint64_t offered = 0, received = 0, dropped = 0, retries = 0, sent_ok = 0;
bool counting = false;
void AppTx(ns3::Ptr<const ns3::Packet> p, const ns3::Address& a) { if (counting) offered++; }
void MacRx(ns3::Ptr<const ns3::Packet> p) { if (counting && p->GetSize() > 5) received++; }
void Drop(ns3::Ptr<const ns3::Packet> p) { if (counting) dropped++; }
void Sent(ns3::Ptr<const ns3::Packet> p, uint8_t r, uint8_t nb) {
    // r is the frame's transmissions (ns-3 passes m_retransmission + 1)
    if (counting) { retries += r - 1; sent_ok++; }
}
void Connect() {
    ns3::Config::ConnectWithoutContext(
        "/NodeList/*/ApplicationList/*/$ns3::PacketSocketClient/Tx", ns3::MakeCallback(&AppTx));
    ns3::Config::ConnectWithoutContext(
        "/NodeList/0/DeviceList/*/$ns3::lrwpan::LrWpanNetDevice/Mac/MacRx",
        ns3::MakeCallback(&MacRx));
    ns3::Config::ConnectWithoutContext(
        "/NodeList/*/DeviceList/*/$ns3::lrwpan::LrWpanNetDevice/Mac/MacTxDrop",
        ns3::MakeCallback(&Drop));
    ns3::Config::ConnectWithoutContext(
        "/NodeList/*/DeviceList/*/$ns3::lrwpan::LrWpanNetDevice/Mac/MacSentPkt",
        ns3::MakeCallback(&Sent));
}
}
"""


def ns3(n: int, rate: float, seconds: float, seed: int) -> dict:
    """ns-3's figures for the same senders (``LrWpanNetDevice``s of one PAN, fed by
    ``PacketSocketClient``s). Its ``MacTxDrop`` counts access failures and frames
    dropped at the retry limit together: both are counted as failures here (the retry
    limit is rare at these loads)."""
    ns, sink = ns3_sink("validate_lrwpan", _CPP)
    start = time.perf_counter()
    try:
        angle = 2 * np.pi * np.arange(n) / n
        nodes = placed_nodes(ns, [(0.0, 0.0), *(np.c_[np.cos(angle), np.sin(angle)] * 0.5)],
                             seed)
        helper = ns.LrWpanHelper()          # kept alive: its destructor frees the channel
        devices = helper.Install(nodes)
        helper.CreateAssociatedPan(devices, 10)
        ns.PacketSocketHelper().Install(nodes)
        for k, first in enumerate(_starts(n, rate, seed)):
            address = ns.PacketSocketAddress()
            address.SetSingleDevice(devices.Get(k + 1).GetIfIndex())
            address.SetPhysicalAddress(devices.Get(0).GetAddress())
            address.SetProtocol(1)
            client = ns.CreateObject[ns.PacketSocketClient]()
            client.SetRemote(address)
            client.SetAttribute("PacketSize", ns.UintegerValue(PAYLOAD))
            client.SetAttribute("MaxPackets", ns.UintegerValue(0))
            client.SetAttribute("Interval", ns.TimeValue(ns.Seconds(1.0 / rate)))
            nodes.Get(k + 1).AddApplication(client)
            client.SetStartTime(ns.Seconds(float(first)))
        sink.Connect()
        sink.counting = False
        ns.Simulator.Stop(ns.Seconds(WARMUP))
        ns.Simulator.Run()
        sink.counting = True
        sink.offered = sink.received = sink.dropped = sink.retries = sink.sent_ok = 0
        ns.Simulator.Stop(ns.Seconds(seconds))
        ns.Simulator.Run()
        offered = max(int(sink.offered), 1)
        figures = {"delivery": int(sink.received) / offered,
                   "access_failures": int(sink.dropped) / offered,
                   "retries": int(sink.retries) / offered}
    finally:
        ns.Simulator.Destroy()
    figures["wall_s"] = time.perf_counter() - start
    return figures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stations", type=int, nargs="+", default=[2, 5, 10, 20])
    parser.add_argument("--rates", type=float, nargs="+", default=[5.0, 20.0, 50.0],
                        help="frames a second per sender")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--ns3", action="store_true", help="also run ns-3")
    args = parser.parse_args(argv)
    keys = ("delivery", "access_failures", "retries")
    print(f"{'n':>3} {'rate':>5}  " + "  ".join(f"{k:>16}" for k in keys)
          + ("   (testbed / ns-3)" if args.ns3 else ""))
    for n in args.stations:
        for rate in args.rates:
            seeds = range(1, args.seeds + 1)
            ours = {k: np.mean([testbed(n, rate, args.seconds, s)[k] for s in seeds])
                    for k in keys}
            if args.ns3:
                runs = [ns3(n, rate, args.seconds, s) for s in seeds]
                theirs = {k: np.mean([r[k] for r in runs]) for k in keys}
                cells = [f"{ours[k]:>7.3f} / {theirs[k]:<6.3f}" for k in keys]
            else:
                cells = [f"{ours[k]:>16.3f}" for k in keys]
            print(f"{n:>3} {rate:>5g}  " + "  ".join(cells), flush=True)
    print("per frame offered; ns-3's access failures include frames dropped at the "
          "retry limit")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
