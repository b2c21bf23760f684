"""``docs/VALIDATION.md`` and its figures from the runs' rows (one per scenario and
simulator, as :func:`.ns3_side.figures` and :func:`.testbed_side.figures` give them).

The tables are means over the seeds (± the standard deviation when there are several);
the targets of issue 27 are checked at light load; :data:`CAUSES` names what makes the
two simulators differ, from the measurements described there.
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from benchmarks.doc_sections import carry_over

SIMS = ("testbed", "ns-3")
ARP = ("preset", "helper", "stock")
METRICS = {"delivery_ratio": "delivery ratio", "control_pps": "control packets / s",
           "delay_mean": "mean delay [s]", "first_packet_delay": "first-packet delay [s]"}
DR_TOLERANCE, CONTROL_FACTOR, SPEEDUP = 0.05, 1.5, 20.0

CAUSES = """\
## Why they differ

Each cause below was measured on these scenarios; the testbed's parameters were not
tuned to close any gap. Where the RFCs leave a choice, the testbed runs ns-3's
(`benchmarks/ns3_validation/testbed_side.py`, `AS_NS3`): AODV's G flag
(`gratuitous_reply`) and RREP-ACKs (`rrep_ack`), both off by default in `[routing.aodv]`,
and OLSR's packets of several messages (`max_messages_per_packet = 64`, the default).
What remains is a part of 802.11 the shared medium leaves out, a place where ns-3 departs
from the RFC, or a pitfall of the ns-3 set-up (fixed here, not worked around in the
testbed).

- **Still nodes deliver the same packets.** Without movement both simulators deliver
  within a packet or two of each other for both protocols: with ns-3's −82 dBm preamble
  detection cut given to the testbed's radio (`sensitivity_dbm`), both agree on which
  nodes hear each other, every link within 51.45 m is nearly error-free at 1 Mbit/s in
  both, and an undelivered packet is one whose endpoints are in different partitions.
  The movement is the same too: ns-3's `Ns2MobilityHelper` and the testbed's ns-2 reader
  put every node within 10⁻⁸ m of each other at every time checked
  (`tests/test_validate_ns3.py`).
- **`NeighborCacheHelper` turns AODV's link-layer feedback off in ns-3** (the "helper"
  column of the ARP table). Its entries are *auto-generated*, and ns-3's AODV looks a
  neighbour's MAC address up only in entries that are alive or permanent
  (`aodv::Neighbors::LookupMacAddress`), so a frame the MAC gives up on is never matched
  to a neighbour: routes through a departed neighbour live until two HELLOs are missed,
  and every frame sent to it meanwhile is lost at the MAC's retry limit. On the 5 m/s
  scenarios ns-3's AODV delivered 0.44 so, against 0.92 with the caches preset as
  permanent entries (what this page compares); the testbed's AODV delivers 0.68 on the
  first of them with `link_layer_feedback = false`: the same mechanism, less the MAC
  retries' time. Stock ARP costs AODV too (0.68 at 5 m/s, 0.56 at 20 m/s, and about
  0.3 s more before the first packet on still nodes): every new next hop is resolved by
  a broadcast request while the packet waits; OLSR, whose neighbours are resolved once
  and kept, barely moves.
- **AODV sends more control packets in ns-3 once nodes move** (control target missed at
  5 and 20 m/s, 0.57× and 0.37×). The gratuitous RREPs and RREP-ACKs, which the
  testbed now sends as ns-3 does, were not the cause: they add 0.5-1.2 packets a second
  (0.56× and 0.36× without them). Intermediate nodes answer far more RREQs in ns-3
  (38.9 RREPs and 8.7 RREP-ACKs a second at 20 m/s against 4.4 and 0.4), because ns-3
  does not raise a broken route's destination sequence number
  (`RoutingTable::InvalidateRoutesWithDst` only marks the route invalid), where RFC
  3561 §6.11 raises it, as the testbed does: the next RREQ then asks for a number only
  the destination holds. With ns-3's rule (`python -m
  benchmarks.ns3_validation.aodv_seqno`, a diagnostic that patches the rule for its own
  runs) the testbed sends 6.7 RREPs, 2.0 RREP-ACKs and 2.9 RERRs a second at 5 m/s
  (ns-3: 12.4, 3.0, 4.2) and 15.3, 5.9 and 9.5 at 20 m/s (38.9, 8.7, 12.6), 0.64× and
  0.49× of ns-3's control packets, and delivers 0.84 at 20 m/s (ns-3 0.77); the page
  keeps the RFC's rule. ns-3 also re-arms its HELLO timer from the last broadcast,
  where the testbed checks at a fixed phase as RFC 3561 §6.9 words it, so under frequent
  RREQs the testbed skips more HELLOs; and the RREPs ns-3's MAC fails to deliver are
  answered by more RERRs and discoveries (next bullets).
- **OLSR packs messages as ns-3 does.** Both queue the messages a node generates or
  relays (HELLO, TC, forwarded TCs) for a jitter of up to MAXJITTER drawn when the queue
  was empty, and send what is queued as one packet (RFC 3626 §3.4; ns-3's
  `QueueMessage`, `emulator/routing/olsr/protocol.py`). Control packets are within
  1.2× at every speed (1.74× at still nodes when the testbed sent a packet per
  message); messages are within 0.76-1.04× (brackets in the control-by-type table):
  ns-3 relays more TCs once nodes move. The packets-against-speed trend still differs
  at light load: ns-3's packets grow from 12.4 to 12.6 a second while the testbed's fall
  from 14.6 to 12.6, following its TC messages.
- **Broadcasts collide in ns-3, never in the testbed.** HELLOs, RREQs and TCs go without
  acknowledgement; in ns-3 two neighbours that pick the same backoff slot, or a hidden
  terminal, destroy them, and a lost HELLO or TC changes neighbour and MPR sets; the
  testbed's two-hop conflict rule is a perfect scheduler (nothing collides).
- **MAC retries take time in ns-3, none in the testbed.** A frame to a neighbour that
  left is retried up to the retry limit with a growing backoff before the MAC gives up
  (`mac_retry_limit` in the drops table counts the frames given up, control frames
  included); the testbed's MAC fails it at once, and only that frame. The delivery target
  missed (AODV at 20 m/s: 0.89 against 0.77) comes with 1,345 frames given up by ns-3's
  MAC over the three seeds, many of them RREPs (ns-3 unicasts 39 a second there), against
  228 `link_break` drops in the testbed; with ns-3's sequence-number rule (above) the
  testbed delivers 0.84, its stale intermediate replies costing packets too.
- **Delay and heavy load.** ns-3's DCF spends per hop DIFS, a random backoff, the 192 µs
  PLCP preamble, the MAC header and the ACK besides the payload; the testbed serialises
  the IP packet only, so its delays are lower at light load. Both drop a frame that
  waited 0.5 s for the channel (ns-3's `mac_lifetime`, the testbed's `queue_expired`,
  `deliver(queue_max_wait=0.5)`), but the testbed's leaner channel rarely keeps one
  that long: at heavy load ns-3 drops 10-11 k frames a speed to the lifetime and more to
  collisions, the testbed 0.6-2.7 k (AODV when nodes move) or none, so its delivery stays
  higher (0.73-0.76 against 0.37-0.47). The lifetime did bound the testbed's queues:
  AODV's mean delay at heavy load and 5 m/s went from 1.9 s to 0.84 s (0.82 s with the
  rate limits below; ns-3: 0.39 s), its p95 from 5.7 s to 2.4 s (1.2 s); the other rows
  did not move. What is left of the gap is the channel's cost per frame (no contention,
  backoff or collision here).
- **AODV's rate limits** (RFC 3561's RREQ_RATELIMIT and RERR_RATELIMIT, 10 a second,
  as ns-3 has them) bind only at heavy load with moving nodes, on RERRs: a node that
  loses a busy route sends one per packet it cannot forward. At 20 m/s the testbed's
  RERRs went from 42 to 25 a second in one seed, its control packets from 163 to 146 a
  second (ns-3: 164), delivery 0.75 to 0.76; the light-load rows did not move.
- **First-packet delay AODV against OLSR on still nodes** is a near tie in ns-3 (both
  about 0.06 s: one flow whose first packet is lost waits a whole packet interval), so
  its direction is noise there; once nodes move both simulators have AODV's first
  packet sooner.
- **Positions are sampled.** The testbed re-evaluates links every 0.25 s (5 m at 20 m/s,
  a tenth of the range); ns-3 moves nodes continuously.
- **Wall time.** ns-3's time grows with the frames it simulates (every retry, ACK,
  collision and backoff), the testbed's with the hops, control packets and epochs. The
  testbed gains most where ns-3 simulates many failed frames (AODV at 20 m/s light,
  still nodes at heavy load: 31-35×) and least where both take little time (OLSR at
  5 m/s light, 6×: ns-3 1.7 s, the testbed 0.27 s). Building the 240 link epochs from
  the trace was a third of a light run's 0.3 s until every sample's positions,
  distances and radio links were computed in a few array operations instead of a
  Python pass per sample (`topologies.mobility`: 50-75 → 5-10 ms a scenario, the same
  epochs to the last bit; the emulator's per-epoch views a little cheaper too). Over
  the 36 scenarios the testbed's side then took 0.76× of its time before (median of 5
  runs paired with the code before, on a busy machine: load 3-3.5 on 2 cores); the
  heavy AODV runs are bound by the routing protocol and the shared medium's grant. The
  testbed's rows were last run on November 26, 2026, with the MAC queue's lifetime and
  AODV's rate limits, on a quiet machine (`--rerun testbed`, 15 s in all with the
  import and the report): 11 s of scenarios (30.4-31.3× in two runs); the run before,
  without them and with another process busy on the second core, took 16 s (21.1×).
  ns-3's rows were run on a quiet machine.
"""


def _fmt(values: pd.Series, digits: int = 3) -> str:
    values = values.dropna()
    if values.empty:
        return "–"
    mean = values.mean()
    text = f"{mean:.{digits}g}" if abs(mean) >= 10 ** -digits else f"{mean:.2g}"
    if len(values) > 1 and values.std() > 0:
        text += f" ± {values.std():.2g}"
    return text


def _grouped(df: pd.DataFrame, arp: str = "preset") -> pd.DataFrame:
    return df[df["arp"] == arp]


def _speeds(df) -> list[float]:
    return sorted(df["speed"].unique())


def write_report(rows: list[dict], docs: Path) -> Path:
    """Write ``docs/VALIDATION.md`` and ``docs/figures/validation_*.png``; returns the
    page's path."""
    df = pd.DataFrame(rows)
    # OLSR messages per second (a packet may carry several, in both simulators; rows
    # of the testbed from before it did have one message a packet); AODV sends one
    # message per packet in both
    df["control_msgs_pps"] = [
        sum(m.values()) if r == "olsr" and isinstance(m, dict) else c
        for r, m, c in zip(df["routing"],
                           df.get("olsr_messages_ps", pd.Series([None] * len(df))),
                           df["control_pps"])]
    figures = docs / "figures"
    figures.mkdir(parents=True, exist_ok=True)
    pngs = _plots(_grouped(df), figures)
    lines = [_HEADER.format(**_setup(df)), "## Results", "",
             "Means over the seeds (± standard deviation); testbed / ns-3 in each cell, "
             "ns-3 with ARP caches preset.", "",
             *_main_table(_grouped(df)), "", *_targets(df), "",
             "## Control packets by type", "",
             "Per second over the flows' window, light load, mean over seeds. An OLSR "
             "packet may carry several messages, in both simulators: packets are "
             "counted by their first message's type, and the messages per second are "
             "in brackets.", "", *_by_type(_grouped(df)), "",
             "## Drops by reason", "",
             "Data packets (testbed: `loss_reason`; ns-3: IP drops of data packets and "
             "frames the MAC gave up on, control frames included), summed over seeds.", "",
             *_drops(_grouped(df)), "", "## ARP: preset caches against stock ARP (ns-3)",
             "", *_arp(df), "", "## Figures", ""]
    lines += [f"![{title}](figures/{png.name})" for title, png in pngs]
    lines += ["", CAUSES]
    out = docs / "VALIDATION.md"
    page = "\n".join(lines).rstrip() + "\n"
    # sections other scripts write (benchmarks/validate_mobility.py's) are kept
    out.write_text(carry_over(out.read_text(), page) if out.exists() else page)
    return out


_HEADER = """\
# Validation against ns-3

The testbed's network (`emulator.deliver`: shared medium, log-distance radio, the
emulated AODV and OLSR) and ns-3 {ns3} on the same scenarios, from one description
(`benchmarks/ns3_validation/`). Regenerate this page and its figures with

```sh
.venv/bin/python -m benchmarks.validate_ns3 --report      # runs what is missing
```

(`--json` prints one line per scenario and simulator; `--quick` a small subset; the
rows are kept in `docs/figures/validation_results.jsonl`, `--rerun` runs them again,
`--rerun testbed` the testbed's only.)

**Scenarios**: {nodes} nodes in 150 m × 150 m, still or random waypoint without pauses
at 5 and 20 m/s (generated once per seed, written as an ns-2 trace and read by both:
ns-3's `Ns2MobilityHelper`, the testbed's `topologies.loads_ns2_trace`); light load (4
flows of 4 packets/s) and heavy load (10 flows of 16 packets/s), 512-byte UDP payloads,
constant bit rate from 10 s on (starts 0.37 s apart: flows starting on one instant
collide again and again in ns-3) to 5 s before the end of {duration:g} s; AODV and OLSR
with the RFCs' timers (ns-3's defaults; the testbed with `seconds_per_unit = 1`); seeds
{seeds}. Delivery, delays and first-packet delays are over the data packets; control
packets per second are the protocol's IP packets sent (forwarded ones included) over
the flows' window, the testbed's loss notices left out.

**ns-3**: 802.11b ad hoc, `YansWifiChannel` with `LogDistancePropagationLossModel`
(exponent 3, 46.6777 dB at 1 m), 16.0206 dBm, `ConstantRateWifiManager` at
DsssRate1Mbps for data and control frames, `UdpClient`/`UdpServer`, `FlowMonitor` for
the data, the `Ipv4L3Protocol` Tx trace on ports 654/698 for the control packets (by
type: AODV's type byte, an RREP to the broadcast address being a HELLO; OLSR's message
types), fixed random stream numbers (a run does not depend on what ran before it).

**Testbed**: `[radio] model = "log_distance"` with ns-3's defaults and
`sensitivity_dbm = -82` (ns-3's preamble detection threshold: a link exists up to
51.45 m), positions sampled every 0.25 s, `medium = "shared"` (the two-hop conflict
rule over the radio's links), links of 125,000 bytes/s (1 Mbit/s) and no fixed delay,
messages of the IP packet's size (payload + 28 bytes), the same seed; AODV with the G
flag and RREP-ACKs, as ns-3 sets them; a frame that waited 0.5 s for the channel is
dropped (`queue_max_wait`, ns-3's `WifiMacQueue` `MaxDelay`).
"""


def _setup(df) -> dict:
    try:
        from importlib.metadata import version

        ns3 = version("ns3")
    except Exception:   # the report can be written from stored rows without ns-3
        ns3 = "3.44"
    seeds = sorted(df["seed"].unique())
    return {"ns3": ns3, "nodes": int(df["nodes"].iloc[0]),
            "duration": float(df["duration"].iloc[0]),
            "seeds": ", ".join(str(s) for s in seeds)}


def _pair(df, routing, load, speed, metric, digits=3) -> str:
    cells = []
    for sim in SIMS:
        sel = df[(df.simulator == sim) & (df.routing == routing) & (df.load == load)
                 & (df.speed == speed)]
        cells.append(_fmt(sel[metric], digits))
    return " / ".join(cells)


def _main_table(df) -> list[str]:
    lines = ["| protocol | load | speed [m/s] | delivery ratio | mean delay [s] | "
             "p95 delay [s] | first-packet delay [s] | control packets / s | "
             "wall [s] | speed-up |", "| --- " * 10 + "|"]
    for load in ("light", "heavy"):
        for routing in ("aodv", "olsr"):
            for speed in _speeds(df):
                sel = df[(df.routing == routing) & (df.load == load) & (df.speed == speed)]
                if sel.empty:
                    continue
                walls = {sim: sel[sel.simulator == sim]["wall_s"].sum() for sim in SIMS}
                speedup = walls["ns-3"] / walls["testbed"] if walls["testbed"] else math.nan
                lines.append(
                    f"| {routing.upper()} | {load} | {speed:g} | "
                    f"{_pair(df, routing, load, speed, 'delivery_ratio')} | "
                    f"{_pair(df, routing, load, speed, 'delay_mean', 2)} | "
                    f"{_pair(df, routing, load, speed, 'delay_p95', 2)} | "
                    f"{_pair(df, routing, load, speed, 'first_packet_delay', 2)} | "
                    f"{_pair(df, routing, load, speed, 'control_pps')} | "
                    f"{_pair(df, routing, load, speed, 'wall_s', 2)} | {speedup:.1f}× |")
    return lines


def _value(df, sim, routing, load, speed, metric) -> float:
    sel = df[(df.simulator == sim) & (df.routing == routing) & (df.load == load)
             & (df.speed == speed)]
    return float(sel[metric].mean()) if len(sel) else math.nan


def _targets(df_all) -> list[str]:
    df = _grouped(df_all)
    lines = ["## Targets", "",
             f"At light load, per protocol and speed: delivery ratio within "
             f"{DR_TOLERANCE} of ns-3's, control packets per second within "
             f"{CONTROL_FACTOR}× of ns-3's.", "",
             "| protocol | speed [m/s] | delivery: testbed − ns-3 | met | control: "
             "testbed ÷ ns-3 | met |", "| --- " * 6 + "|"]
    met = {"dr": [], "ctl": []}
    for routing in ("aodv", "olsr"):
        for speed in _speeds(df):
            tb = _value(df, "testbed", routing, "light", speed, "delivery_ratio")
            ns = _value(df, "ns-3", routing, "light", speed, "delivery_ratio")
            ctb = _value(df, "testbed", routing, "light", speed, "control_pps")
            cns = _value(df, "ns-3", routing, "light", speed, "control_pps")
            if math.isnan(tb) or math.isnan(ns):
                continue
            ok_dr = abs(tb - ns) <= DR_TOLERANCE
            ratio = ctb / cns if cns else math.nan
            ok_ctl = 1 / CONTROL_FACTOR <= ratio <= CONTROL_FACTOR
            met["dr"].append(ok_dr)
            met["ctl"].append(ok_ctl)
            lines.append(f"| {routing.upper()} | {speed:g} | {tb - ns:+.3f} | "
                         f"{'yes' if ok_dr else 'no'} | {ratio:.2f} | "
                         f"{'yes' if ok_ctl else 'no'} |")
    stock = _stock_targets(df_all)
    lines += ["", f"Delivery within {DR_TOLERANCE}: {sum(met['dr'])} of {len(met['dr'])}; "
                  f"control within {CONTROL_FACTOR}×: {sum(met['ctl'])} of "
                  f"{len(met['ctl'])}" + (f" (against ns-3 with stock ARP: {stock})"
                                          if stock else "") + ".", "", "**Trends** (light and heavy load; the "
              "direction from still nodes to 20 m/s, and AODV's first-packet delay "
              "against OLSR's at each speed):", "",
              "| trend | load | testbed | ns-3 | same direction |", "| --- " * 5 + "|"]
    speeds = _speeds(df)
    trends = []
    for load in ("light", "heavy"):
        for routing in ("aodv", "olsr"):
            for metric, name in (("control_pps", "overhead (packets) against speed"),
                                 ("control_msgs_pps", "overhead (messages) against speed"),
                                 ("delivery_ratio", "delivery against speed")):
                if metric == "control_msgs_pps" and routing == "aodv":
                    continue   # one message a packet: the row above
                signs = []
                for sim in SIMS:
                    lo = _value(df, sim, routing, load, speeds[0], metric)
                    hi = _value(df, sim, routing, load, speeds[-1], metric)
                    signs.append(_direction(lo, hi))
                if "?" in signs:
                    continue
                trends.append(signs[0] == signs[1])
                lines.append(f"| {routing.upper()} {name} | {load} | {signs[0]} | "
                             f"{signs[1]} | {'yes' if signs[0] == signs[1] else 'no'} |")
        for speed in speeds:
            signs = []
            for sim in SIMS:
                a = _value(df, sim, "aodv", load, speed, "first_packet_delay")
                o = _value(df, sim, "olsr", load, speed, "first_packet_delay")
                signs.append("?" if math.isnan(a) or math.isnan(o) else
                             ("AODV > OLSR" if a > o else "AODV < OLSR"))
            if "?" in signs:
                continue
            trends.append(signs[0] == signs[1])
            lines.append(f"| first-packet delay at {speed:g} m/s | {load} | {signs[0]} | "
                         f"{signs[1]} | {'yes' if signs[0] == signs[1] else 'no'} |")
    pairs = df.pivot_table(index=["routing", "speed", "load", "seed"], columns="simulator",
                           values="wall_s")
    pairs = pairs.dropna() if set(SIMS) <= set(pairs) else pd.DataFrame(columns=SIMS)
    walls = {sim: pairs[sim] for sim in SIMS}   # scenarios both have run
    ratio = pairs["ns-3"] / pairs["testbed"]
    overall = walls['ns-3'].sum() / max(walls['testbed'].sum(), 1e-9)
    lines += ["", f"Same direction: {sum(trends)} of {len(trends)} trends.", "",
              f"**Wall time**: ns-3 {walls['ns-3'].sum():.0f} s, the testbed "
              f"{walls['testbed'].sum():.0f} s over the {len(pairs)} scenarios "
              f"({overall:.1f}× faster; target {SPEEDUP:g}×, "
              f"{'met' if len(ratio) and overall >= SPEEDUP else 'not met'} over the "
              f"matrix). Per scenario {ratio.min():.1f}× to {ratio.max():.1f}×, median "
              f"{ratio.median():.1f}×: {SPEEDUP:g}× or more on "
              f"{int((ratio >= SPEEDUP).sum())} of {len(ratio)} scenarios. ns-3's "
              "import (8-25 s) is not counted; the testbed's time includes building the "
              "link epochs from the trace."]
    return lines


def _stock_targets(df_all) -> str:
    """The light-load targets against ns-3 with stock ARP, in words."""
    tb = df_all[(df_all.simulator == "testbed") & (df_all.load == "light")]
    ns = df_all[(df_all.simulator == "ns-3") & (df_all.load == "light")
                & (df_all.arp == "stock")]
    dr, ctl = [], []
    for routing in ("aodv", "olsr"):
        for speed in _speeds(ns):
            a = tb[(tb.routing == routing) & (tb.speed == speed)]
            b = ns[(ns.routing == routing) & (ns.speed == speed)]
            if a.empty or b.empty:
                continue
            dr.append(abs(a.delivery_ratio.mean() - b.delivery_ratio.mean()) <= DR_TOLERANCE)
            ratio = a.control_pps.mean() / b.control_pps.mean()
            ctl.append(1 / CONTROL_FACTOR <= ratio <= CONTROL_FACTOR)
    if not dr:
        return ""
    return f"delivery {sum(dr)} of {len(dr)}, control {sum(ctl)} of {len(ctl)}"


def _direction(lo: float, hi: float) -> str:
    if math.isnan(lo) or math.isnan(hi):
        return "?"
    return "up" if hi > lo else ("down" if hi < lo else "flat")


def _by_type(df) -> list[str]:
    light = df[df.load == "light"]
    lines = ["| protocol | speed [m/s] | testbed | ns-3 |", "| --- " * 4 + "|"]
    for routing in ("aodv", "olsr"):
        for speed in _speeds(light):
            cells = []
            for sim in SIMS:
                sel = light[(light.simulator == sim) & (light.routing == routing)
                            & (light.speed == speed)]
                if sel.empty:
                    cells.append("–")
                    continue
                types = pd.DataFrame(list(sel["control_by_type"])).fillna(0).mean()
                text = ", ".join(f"{k} {v:.2f}" for k, v in types.items())
                if routing == "olsr" and "olsr_messages_ps" in sel \
                        and sel["olsr_messages_ps"].notna().all():
                    msgs = pd.DataFrame(list(sel["olsr_messages_ps"].dropna())).mean()
                    text += " (" + ", ".join(f"{k} {v:.2f}" for k, v in msgs.items()) + ")"
                if sim == "testbed" and "notices_pps" in sel:
                    text += f"; notices {sel['notices_pps'].mean():.2f}"
                cells.append(text)
            lines.append(f"| {routing.upper()} | {speed:g} | {cells[0]} | {cells[1]} |")
    return lines


def _drops(df) -> list[str]:
    lines = ["| protocol | load | speed [m/s] | testbed | ns-3 |", "| --- " * 5 + "|"]
    for load in ("light", "heavy"):
        for routing in ("aodv", "olsr"):
            for speed in _speeds(df):
                cells = []
                for sim in SIMS:
                    sel = df[(df.simulator == sim) & (df.routing == routing)
                             & (df.load == load) & (df.speed == speed)]
                    if sel.empty:
                        cells.append("–")
                        continue
                    total = pd.DataFrame(list(sel["drops_by_reason"])).fillna(0).sum()
                    cells.append(", ".join(f"{k} {int(v)}" for k, v in total.items()
                                           if v) or "none")
                if cells != ["–", "–"]:
                    lines.append(f"| {routing.upper()} | {load} | {speed:g} | {cells[0]} | "
                                 f"{cells[1]} |")
    return lines


def _arp(df) -> list[str]:
    light = df[df.load == "light"]
    ns = light[light.simulator == "ns-3"]
    lines = ["Light load, mean over seeds: ns-3 with the caches preset as permanent "
             "entries (the comparison above), filled by ns-3's `NeighborCacheHelper`, and "
             "stock ARP; the testbed (no ARP) beside them.", "",
             "| protocol | speed [m/s] | metric | ns-3 preset | ns-3 helper | ns-3 stock | "
             "testbed |", "| --- " * 7 + "|"]
    for routing in ("aodv", "olsr"):
        for speed in _speeds(ns):
            for metric in ("delivery_ratio", "control_pps", "first_packet_delay"):
                cells = [_fmt(ns[(ns.arp == arp) & (ns.routing == routing)
                                 & (ns.speed == speed)][metric]) for arp in ARP]
                tb = light[(light.simulator == "testbed") & (light.routing == routing)
                           & (light.speed == speed)]
                lines.append(f"| {routing.upper()} | {speed:g} | {METRICS[metric]} | "
                             f"{' | '.join(cells)} | {_fmt(tb[metric])} |")
    return lines


def _plots(df, figures: Path) -> list[tuple[str, Path]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = []
    loads = [load for load in ("light", "heavy") if (df.load == load).any()]
    for metric, label in METRICS.items():
        fig, axes = plt.subplots(1, len(loads), figsize=(5 * len(loads), 3.6),
                                 squeeze=False)
        for ax, load in zip(axes[0], loads):
            for routing, color in (("aodv", "tab:blue"), ("olsr", "tab:orange")):
                for sim, style in (("testbed", "-o"), ("ns-3", "--s")):
                    sel = df[(df.simulator == sim) & (df.routing == routing)
                             & (df.load == load)]
                    if sel.empty:
                        continue
                    stats = sel.groupby("speed")[metric].agg(["mean", "std"]).fillna(0)
                    ax.errorbar(stats.index, stats["mean"], yerr=stats["std"], fmt=style,
                                color=color, capsize=3, label=f"{routing.upper()} {sim}")
            ax.set_title(f"{load} load")
            ax.set_xlabel("node speed [m/s]")
            ax.set_ylabel(label)
            ax.grid(alpha=0.3)
        axes[0][0].legend(fontsize=8)
        fig.tight_layout()
        path = figures / f"validation_{metric}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        out.append((f"{label.split(' [')[0]} against speed, testbed and ns-3", path))
    return out
