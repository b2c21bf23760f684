"""A lone 802.11b link at falling SNR: the share of broadcasts received, by the MAC
engine under ``reception = "error_rate"``, by the DSSS curve's ``(1 - BER)^bits``, and by
ns-3 3.44 (the ``ns3`` package).

Two stations ``d`` metres apart under ns-3's default loss (exponent 3, 46.6777 dB at
1 m, 16.0206 dBm; :class:`topologies.radio.Radio`), noise -93.97 dBm (22 MHz, 7 dB noise
figure, ns-3's); station 0 broadcasts a 100-byte MSDU (128-byte PSDU) every 10 ms at
``--rate`` (its PLCP header at DBPSK 1 Mbit/s), station 1 counts what its MAC passes
up. Preambles are detected down to -10 dB on both sides (ns-3's
``ThresholdPreambleDetectionModel`` threshold and ``MinimumRssi`` -110 dBm; the engine's
``sinr_db`` and ``detect_dbm``), so that the error curve alone decides.

    python -m benchmarks.bench_error_rate                   # 1 Mbit/s, the engine and ns-3
    python -m benchmarks.bench_error_rate --rate 11 --no-ns3
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

from benchmarks.bench_mac import ns3_sink, placed_nodes
from emulator.mac.engine import REASONS, Channel, MacEngine
from emulator.mac.error_rate import DSSS_CODES, cck_curve, log_ok_per_bit
from emulator.mac.standards import Dcf80211
from topologies.radio import Radio

NOISE_DBM = -93.97
MSDU = 100
PERIOD = 0.01
#: The SNRs (dB) looked at per rate (Mbit/s): where a frame crosses about 5 to 95 %.
SNRS = {1: (-6.5, -6.0, -5.5, -5.0, -4.5), 2: (-2.0, -1.5, -1.0, -0.5, 0.0),
        5.5: (1.0, 1.5, 2.0, 2.5, 3.0), 11: (4.0, 4.5, 5.0, 5.5, 6.0)}
#: ns-3's mode names by rate.
MODES = {1: "DsssRate1Mbps", 2: "DsssRate2Mbps", 5.5: "DsssRate5_5Mbps",
         11: "DsssRate11Mbps"}


def distance_m(snr_db: float) -> float:
    """Where ns-3's default loss gives ``snr_db`` over the noise.

    >>> round(float(Radio().snr_db(distance_m(-5.0))), 6)
    -5.0
    """
    radio = Radio(noise_floor_dbm=NOISE_DBM)
    loss = radio.tx_power_dbm - NOISE_DBM - snr_db - radio.reference_loss_db
    return radio.reference_distance_m * 10 ** (loss / (10 * radio.exponent))


def curve(rate: float, snr_db: float) -> float:
    """The DSSS curve's success rate of the frame: 48 header bits at DBPSK, the PSDU's
    bits at ``rate`` Mbit/s."""
    sinr, table = 10 ** (snr_db / 10), cck_curve()
    bits = (MSDU + Dcf80211().header_bytes) * 8
    return math.exp(48 * log_ok_per_bit(DSSS_CODES[1e6], sinr, table)
                    + bits * log_ok_per_bit(DSSS_CODES[rate * 1e6], sinr, table))


def testbed(rate: float, snr_db: float, frames: int, seed: int) -> float:
    """The share of ``frames`` broadcasts the engine's station 1 receives."""
    rx = np.full((2, 2), -np.inf)
    rx[0, 1] = rx[1, 0] = NOISE_DBM + snr_db
    channel = Channel(noise_dbm=NOISE_DBM, detect_dbm=-110.0, sinr_db=-10.0,
                      reception="error_rate")
    engine = MacEngine(rx, Dcf80211(basic_rate=rate * 1e6), channel, seed=seed)
    for h in range(frames):
        engine.enqueue((h + 1) * PERIOD, 0, -1, MSDU, handle=h)
    out = engine.advance((frames + 2) * PERIOD)
    return float(np.mean(out.reason == REASONS.index("delivered")))


_CPP = """
namespace bench_error_rate {
uint64_t rx_frames = 0;
void MacRx(ns3::Ptr<const ns3::Packet> p) { rx_frames++; }
void Connect() {
    ns3::Config::ConnectWithoutContext(
        "/NodeList/1/DeviceList/*/$ns3::WifiNetDevice/Mac/MacRx", ns3::MakeCallback(&MacRx));
}
}
"""


def ns3(rate: float, snr_db: float, frames: int, seed: int) -> float:
    """The share of ``frames`` broadcasts ns-3's station 1 passes up."""
    ns, sink = ns3_sink("bench_error_rate", _CPP)
    ns.Config.SetDefault("ns3::ThresholdPreambleDetectionModel::Threshold",
                         ns.DoubleValue(-10.0))
    ns.Config.SetDefault("ns3::ThresholdPreambleDetectionModel::MinimumRssi",
                         ns.DoubleValue(-110.0))
    ns.Config.SetDefault("ns3::WifiPhy::RxSensitivity", ns.DoubleValue(-110.0))
    try:
        nodes = placed_nodes(ns, [(0.0, 0.0), (distance_m(snr_db), 0.0)], seed)
        wifi = ns.WifiHelper()
        wifi.SetStandard(ns.WIFI_STANDARD_80211b)
        mode = ns.StringValue(MODES[rate])
        wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager", "DataMode", mode,
                                     "ControlMode", mode, "NonUnicastMode", mode)
        phy = ns.YansWifiPhyHelper()
        phy.SetChannel(ns.YansWifiChannelHelper.Default().Create())
        mac = ns.WifiMacHelper()
        mac.SetType("ns3::AdhocWifiMac")
        devices = wifi.Install(phy, mac, nodes)
        wifi.AssignStreams(devices, 0)
        ns.PacketSocketHelper().Install(nodes)
        address = ns.PacketSocketAddress()
        address.SetSingleDevice(devices.Get(0).GetIfIndex())
        address.SetPhysicalAddress(devices.Get(0).GetBroadcast())
        address.SetProtocol(1)
        client = ns.CreateObject[ns.PacketSocketClient]()
        client.SetRemote(address)
        client.SetAttribute("PacketSize", ns.UintegerValue(MSDU - 8))   # + LLC/SNAP
        client.SetAttribute("MaxPackets", ns.UintegerValue(frames))
        client.SetAttribute("Interval", ns.TimeValue(ns.Seconds(PERIOD)))
        nodes.Get(0).AddApplication(client)
        sink.Connect()
        sink.rx_frames = 0
        ns.Simulator.Stop(ns.Seconds((frames + 2) * PERIOD))
        ns.Simulator.Run()
        return int(sink.rx_frames) / frames
    finally:
        ns.Simulator.Destroy()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, choices=sorted(SNRS), default=1)
    parser.add_argument("--frames", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-ns3", dest="ns3", action="store_false")
    args = parser.parse_args(argv)
    rate = int(args.rate) if args.rate == int(args.rate) else args.rate
    print(f"{args.frames} broadcasts of {MSDU} B at {rate} Mbit/s, seed {args.seed}: share "
          "received (binomial standard error at 0.5: "
          f"{0.5 / math.sqrt(args.frames):.3f})")
    print(f"{'SNR dB':>7} {'metres':>7} {'curve':>7} {'testbed':>8}" +
          (f" {'ns-3':>7} {'wall s':>7}" if args.ns3 else ""))
    for snr in SNRS[rate]:
        line = (f"{snr:>7.1f} {distance_m(snr):>7.1f} {curve(rate, snr):>7.3f} "
                f"{testbed(rate, snr, args.frames, args.seed):>8.3f}")
        if args.ns3:
            start = time.perf_counter()
            theirs = ns3(rate, snr, args.frames, args.seed)
            line += f" {theirs:>7.3f} {time.perf_counter() - start:>7.1f}"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
