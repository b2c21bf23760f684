"""Batteries that run out: the first-order radio model, idle power, the CPU's work, and
node deaths (``model = "radio_states"`` prices the radio by its state instead:
:mod:`emulator.radio_energy`).

``[energy] model = "first_order"`` gives every node a battery (``battery_j``, or its own
in ``batteries``; nodes in ``mains_powered``, by default the query node and with
``sources_mains`` the streams' source nodes never run out) and charges it, in joules, for

- **sending** a frame of ``k`` bits over a link ``d`` metres long:
  ``k (e_elec + e_amp d^2)`` (Heinzelman et al. 2000; a broadcast pays for its farthest
  receiver), with ``d`` the link's ``length_m`` (positions x ``radio.meters_per_unit``);
- **receiving** it: ``k e_rx`` at every receiver that is up when it arrives (a frame
  corrupted on the way still costs its receiver);
- **listening**: ``idle_w`` watts for as long as the node is up;
- **the operators' work**: ``cpu_j_per_tuple`` for every tuple or message a node's
  operator handles.

A node whose residual energy reaches zero dies. Batteries are looked at at the start of
every step of the driver (``run.step``; :func:`emulator.deliver` looks every
``check_interval``), so a node dies at the first such instant at which its battery is
empty, at most one step after it emptied: what the transport had decided before that
instant stays decided (a frame it was sending arrives). From then on the node is down in
the network's views (:meth:`emulator.network.Network.kill`): it neither sends, receives
nor forwards; the oracle routes around it at once, a routing protocol finds out by
missed hellos and failed sends.

What it leaves out: the radio's state machine (sleep, wake-up, switching costs; a node
listens all the time it is up), the battery's own physics (rate-capacity and recovery
effects: a battery is a tank of joules), retransmissions the transport does not make,
and the energy of overhearing a frame meant for another node (the shared medium
schedules neighbours apart; they would hear it).

Example
-------
>>> book = EnergyBook(Energy(battery_j=1e-3, idle_w=0.0), [0, 1, 2], mains=[0])
>>> book.hop(1, 2, 100, 50.0, True)            # 800 bits over 50 m
>>> round(book.spent(1) * 1e6, 1), round(book.spent(2) * 1e6, 1)   # micro-joules
(240.0, 40.0)
>>> for _ in range(4):
...     book.hop(1, 2, 100, 50.0, True)
>>> book.check(2.0), book.deaths
([1], {1: 2.0})
>>> book.hop(0, 1, 100, 50.0, True)            # the mains-powered node never dies
>>> book.check(3.0), sorted(book.deaths)
([], [1])
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields

from emulator.radio_energy import PROFILE_KEYS, PROFILES, STATES, RadioPower
from topologies.schema import Field

MODELS = ("none", "first_order", "radio_states")

#: ``[energy]``: what a spec may set (docs/SPEC.md lists it).
ENERGY_SCHEMA = {
    "model": Field("choice", "none", choices=MODELS,
                   doc="none: no node spends energy; first_order: batteries, the first-"
                       "order radio model, idle power; radio_states: batteries, the radio's "
                       "current in each state (tx, rx, listen, idle, sleep) x time; a node "
                       "dies when its battery empties"),
    "battery_j": Field("number", 0.5, low=0, low_open=True, allow_inf=True,
                       doc="every node's battery, joules"),
    "batteries": Field("table", {}, doc="per-node batteries over `energy.battery_j`, "
                                        "`{\"3\" = 0.1}`"),
    "mains_powered": Field("list", [], doc="nodes that never run out (node ids)"),
    "query_node_mains": Field("bool", True, doc="the query node (`query.node`) never "
                                                "runs out"),
    "sources_mains": Field("bool", False, doc="the streams' source nodes never run out "
                                              "(only relays and operators' hosts die)"),
    "e_elec_j_per_bit": Field("number", 50e-9, low=0,
                              doc="transmitter electronics, joules per bit"),
    "e_amp_j_per_bit_m2": Field("number", 100e-12, low=0,
                                doc="transmit amplifier, joules per bit per square metre"),
    "e_rx_j_per_bit": Field("number", 50e-9, low=0, doc="receiving, joules per bit"),
    "idle_w": Field("number", 0.0, low=0, doc="listening power while up, watts"),
    "cpu_j_per_tuple": Field("number", 0.0, low=0,
                             doc="an operator's work per tuple or message it handles, "
                                 "joules"),
    "seconds_per_unit": Field("number", 1.0, low=0, low_open=True,
                              doc="seconds in one time unit (idle power x time)"),
    # radio_states' keys (emulator.radio_energy): a profile, each value overridable
    "profile": Field("choice", "cc2420", choices=tuple(PROFILES),
                     doc="radio_states: the radio's currents, voltage and rate (cc2420, "
                         "cc2538: their datasheets; wifi: ns-3's WifiRadioEnergyModel)"),
    "voltage_v": Field("number", None, low=0, low_open=True, none=True,
                       doc="radio_states: supply voltage, volts (none: the profile's)"),
    **{f"{state}_a": Field("number", None, low=0, none=True,
                           doc=f"radio_states: current {meaning}, amperes (none: the "
                               "profile's)")
       for state, meaning in (("tx", "sending"), ("rx", "receiving"),
                              ("listen", "listening (receiver on, nothing heard)"),
                              ("idle", "with the receiver off, oscillator on"),
                              ("sleep", "asleep"))},
    "bitrate_bps": Field("number", None, low=0, low_open=True, none=True,
                         doc="radio_states: the radio's bit rate, for a frame's airtime "
                             "(none: the profile's)"),
    "phy_overhead_s": Field("number", None, low=0, none=True,
                            doc="radio_states: preamble and PHY header before a frame's "
                                "bytes, seconds (none: the profile's)"),
}

#: The keys of one model only (the others are read by both).
FIRST_ORDER_KEYS = ("e_elec_j_per_bit", "e_amp_j_per_bit_m2", "e_rx_j_per_bit", "idle_w")
RADIO_STATES_KEYS = ("profile", *PROFILE_KEYS)


@dataclass(frozen=True)
class Energy:
    """An ``[energy]`` table's parameters (defaults as :data:`ENERGY_SCHEMA`)."""

    model: str = "first_order"
    battery_j: float = 0.5
    batteries: dict | None = None
    mains_powered: tuple = ()
    query_node_mains: bool = True
    sources_mains: bool = False
    e_elec_j_per_bit: float = 50e-9
    e_amp_j_per_bit_m2: float = 100e-12
    e_rx_j_per_bit: float = 50e-9
    idle_w: float = 0.0
    cpu_j_per_tuple: float = 0.0
    seconds_per_unit: float = 1.0
    profile: str = "cc2420"
    voltage_v: float | None = None
    tx_a: float | None = None
    rx_a: float | None = None
    listen_a: float | None = None
    idle_a: float | None = None
    sleep_a: float | None = None
    bitrate_bps: float | None = None
    phy_overhead_s: float | None = None

    @classmethod
    def from_table(cls, table: dict | None) -> "Energy | None":
        """The parameters of a checked ``[energy]`` table (defaults filled), or None when
        its model is ``"none"``.

        >>> Energy.from_table({"model": "first_order", "batteries": {"3": 2}}).batteries
        {3: 2.0}
        >>> Energy.from_table({}) is None
        True
        """
        table = dict(table or {})
        if table.get("model", "none") == "none":
            return None
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in table.items() if k in names}
        values["batteries"] = {int(n): float(j) for n, j in
                               (table.get("batteries") or {}).items()}
        values["mains_powered"] = tuple(int(n) for n in table.get("mains_powered", ()))
        return cls(**values)


def check_energy(table: dict, nodes, where: str = "energy") -> None:
    """One-line errors for an ``[energy]`` table that names nodes the topology lacks or
    gives a battery that is not a number > 0.

    >>> check_energy({"batteries": {"9": 1.0}}, [0, 1])
    Traceback (most recent call last):
    ...
    ValueError: energy.batteries: node 9 is not in the topology (nodes 0..1)
    >>> check_energy({"batteries": {"1": 0}}, [0, 1])
    Traceback (most recent call last):
    ...
    ValueError: energy.batteries.1: expected a number > 0 joules, got 0
    """
    known = set(nodes)
    span = f"nodes {min(known)}..{max(known)}" if known else "no nodes"
    for name, joules in (table.get("batteries") or {}).items():
        try:
            node = int(name)
        except (TypeError, ValueError):
            raise ValueError(f"{where}.batteries: expected node ids as keys, got {name!r}")
        if node not in known:
            raise ValueError(f"{where}.batteries: node {node} is not in the topology ({span})")
        if isinstance(joules, bool) or not isinstance(joules, (int, float)) \
                or not joules > 0:
            raise ValueError(f"{where}.batteries.{name}: expected a number > 0 joules, "
                             f"got {joules!r}")
    for node in table.get("mains_powered") or []:
        if isinstance(node, bool) or not isinstance(node, int) or node not in known:
            raise ValueError(f"{where}.mains_powered: expected node ids of the topology "
                             f"({span}), got {node!r}")


class EnergyBook:
    """Every node's battery: what it spent on sending, receiving, listening and work,
    and when it died (see the module docstring).

    ``nodes``: every node of the network; ``mains``: those that never run out (their
    energy is counted all the same).
    """

    def __init__(self, energy: Energy, nodes, mains=()):
        self.energy = energy
        self.nodes = sorted(nodes)
        self.mains = frozenset(mains) | frozenset(energy.mains_powered)
        given = energy.batteries or {}
        self.battery = {n: math.inf if n in self.mains else float(given.get(n, energy.battery_j))
                        for n in self.nodes}
        self.tx = dict.fromkeys(self.nodes, 0.0)
        self.rx = dict.fromkeys(self.nodes, 0.0)
        self.cpu = dict.fromkeys(self.nodes, 0.0)
        #: ``{node: time}`` of the deaths so far.
        self.deaths: dict[int, float] = {}
        self._e_elec = energy.e_elec_j_per_bit
        self._e_amp = energy.e_amp_j_per_bit_m2
        self._e_rx = energy.e_rx_j_per_bit
        self._idle = energy.idle_w * energy.seconds_per_unit   # joules per time unit
        #: radio_states: the radio's power per state; seconds each node's radio spent
        #: sending and receiving (listening is the rest of its up time)
        self.radio = RadioPower.of(energy) if energy.model == "radio_states" else None
        self.tx_s = dict.fromkeys(self.nodes, 0.0)
        self.rx_s = dict.fromkeys(self.nodes, 0.0)
        if self.radio is not None:
            # Listening is charged for all the up time (as idle_w is), so a frame costs
            # its state's power beyond listening: the sums are those of every state.
            watts = self.radio.watts
            self._idle = watts["listen"] * energy.seconds_per_unit
            self._tx_beyond = watts["tx"] - watts["listen"]
            self._rx_beyond = watts["rx"] - watts["listen"]
        #: radio duty cycling (:meth:`duty_cycled`): the share of the time the channel
        #: checks keep a radio on, and each node's listening in exchanges (seconds)
        self.checks = None
        self.listen_s = dict.fromkeys(self.nodes, 0.0)
        self._samples: list[tuple] = []
        self._next_sample = 0.0
        self._checked_at = 0.0   # the last look at the batteries

    # -- charges ------------------------------------------------------------------------
    def hop(self, u: int, v: int, size_bytes: int, length_m: float, heard: bool) -> None:
        """``u`` sends ``size_bytes`` over a link ``length_m`` long; ``v`` receives it
        when ``heard`` (it is up when it arrives)."""
        if self.radio is not None:
            self._on_air(u, (v,) if heard else (), size_bytes)
            return
        bits = 8 * size_bytes
        self.tx[u] += bits * (self._e_elec + self._e_amp * length_m * length_m)
        if heard:
            self.rx[v] += bits * self._e_rx

    def broadcast(self, u: int, heard, size_bytes: int, length_m: float) -> None:
        """``u`` sends one frame that reaches ``length_m`` (its farthest receiver);
        each node of ``heard`` receives it."""
        if self.radio is not None:
            self._on_air(u, heard, size_bytes)
            return
        bits = 8 * size_bytes
        self.tx[u] += bits * (self._e_elec + self._e_amp * length_m * length_m)
        rx = bits * self._e_rx
        for v in heard:
            self.rx[v] += rx

    def _on_air(self, u: int, heard, size_bytes: int) -> None:
        """radio_states: ``u`` sends a frame, each node of ``heard`` receives it."""
        air = self.radio.airtime(size_bytes)
        self.tx_s[u] += air
        self.tx[u] += air * self._tx_beyond
        for v in heard:
            self.rx_s[v] += air
            self.rx[v] += air * self._rx_beyond

    def duty_cycled(self, checks: float) -> None:
        """radio_states under a duty-cycled MAC: an up radio sleeps but for its channel
        checks (on ``checks`` of the time) and the exchanges the MAC reports
        (:meth:`mac_radio`), instead of listening all the time.

        >>> book = EnergyBook(Energy(model="radio_states", battery_j=10.0), [0, 1])
        >>> book.duty_cycled(0.005)
        >>> book.mac_radio([0, 1], [0.01, 0.0], [0.0, 0.002], [0.003, 0.001])
        >>> {k: round(v, 6) for k, v in book.state_seconds(1, 2.0).items()}
        {'tx': 0.0, 'rx': 0.002, 'listen': 0.011, 'idle': 0.0, 'sleep': 1.987, 'off': 0.0}
        >>> round(book.spent(1, 2.0), 6)        # 3 V x (18.8 mA x 13 ms + 20 µA x 1.987 s)
        0.000852
        """
        watts = self.radio.watts
        self.checks = float(checks)
        # the rest of an up radio's time it sleeps: charged at the sleep power, plus the
        # checks' listening; an exchange costs its state's power beyond sleeping
        self._idle = (watts["sleep"] + checks * (watts["listen"] - watts["sleep"])) \
            * self.energy.seconds_per_unit
        self._tx_beyond = watts["tx"] - watts["sleep"]
        self._rx_beyond = watts["rx"] - watts["sleep"]

    def mac_radio(self, nodes, tx_s, rx_s, listen_s) -> None:
        """A duty-cycled MAC's totals so far: seconds each of ``nodes`` spent sending,
        receiving and listening in exchanges (its channel checks apart)."""
        listen_beyond = self.radio.watts["listen"] - self.radio.watts["sleep"]
        for n, tx, rx, listen in zip(nodes, tx_s, rx_s, listen_s):
            tx, rx, listen = float(tx), float(rx), float(listen)
            self.tx_s[n], self.rx_s[n], self.listen_s[n] = tx, rx, listen
            self.tx[n] = tx * self._tx_beyond
            self.rx[n] = rx * self._rx_beyond + listen * listen_beyond

    def work(self, node: int, items: int) -> None:
        """``node``'s operator handled ``items`` tuples or messages."""
        self.cpu[node] += items * self.energy.cpu_j_per_tuple

    # -- what is left ---------------------------------------------------------------------
    def idle(self, node: int, t: float) -> float:
        """Joules ``node`` spent listening up to ``t`` (up to its death, if it died)."""
        return self._idle * min(t, self.deaths.get(node, t))

    def spent(self, node: int, t: float = 0.0) -> float:
        """Joules ``node`` spent up to ``t`` (charges so far, listening up to ``t``)."""
        return self.tx[node] + self.rx[node] + self.cpu[node] + self.idle(node, t)

    def residual(self, node: int, t: float) -> float:
        """Joules left in ``node``'s battery at ``t`` (inf for a mains-powered node)."""
        return max(0.0, self.battery[node] - self.spent(node, t))

    def next_empty(self) -> float:
        """When the first battery of a node still up empties, if nothing more is sent or
        received (listening drains it; one already empty: the last look, :meth:`check`),
        inf if none will. The backend steps there, so a death needs no other event."""
        soonest = math.inf
        for n in self.nodes:
            if n in self.deaths or n in self.mains:
                continue
            left = self.battery[n] - self.tx[n] - self.rx[n] - self.cpu[n]
            if left <= self._idle * self._checked_at:
                return self._checked_at
            if self._idle > 0:
                soonest = min(soonest, left / self._idle)
        return soonest

    def check(self, t: float) -> list[int]:
        """The nodes whose battery is empty at ``t`` and that were up: now dead at ``t``."""
        died = [n for n in self.nodes if n not in self.deaths and n not in self.mains
                and self.spent(n, t) >= self.battery[n]]
        for n in died:
            self.deaths[n] = t
        self._checked_at = max(self._checked_at, t)
        return died

    def state_seconds(self, node: int, t: float) -> dict:
        """radio_states: seconds ``node``'s radio spent in each state up to ``t``
        (:data:`emulator.radio_energy.STATES`; a dead node's radio is ``off``).

        >>> book = EnergyBook(Energy(model="radio_states", battery_j=10.0), [0, 1])
        >>> book.hop(0, 1, 122, 0.0, True)     # 4,096 µs on air
        >>> {k: round(v, 6) for k, v in book.state_seconds(1, 2.0).items()}
        {'tx': 0.0, 'rx': 0.004096, 'listen': 1.995904, 'idle': 0.0, 'sleep': 0.0, 'off': 0.0}
        """
        per_unit = self.energy.seconds_per_unit
        up = per_unit * min(t, self.deaths.get(node, t))
        tx, rx = self.tx_s[node], self.rx_s[node]
        if self.checks is not None:   # duty cycled: asleep but for checks and exchanges
            listen = self.checks * up + self.listen_s[node]
            return {"tx": tx, "rx": rx, "listen": listen, "idle": 0.0,
                    "sleep": max(0.0, up - tx - rx - listen), "off": per_unit * t - up}
        return {"tx": tx, "rx": rx, "listen": max(0.0, up - tx - rx), "idle": 0.0,
                "sleep": 0.0, "off": per_unit * t - up}

    def sample_until(self, t: float, interval: float) -> None:
        """Note every node's residual energy at each multiple of ``interval`` up to
        ``t`` (charges known by then; called as time passes), and under
        ``radio_states`` the seconds every node's radio has spent in each state so far
        (``radio_<state>_s``, Energest's counters)."""
        while self._next_sample <= t:
            at = self._next_sample
            self._samples.extend((at, n, "network", "energy_j", self.residual(n, at))
                                 for n in self.nodes if n not in self.mains)
            if self.radio is not None:
                self._samples.extend((at, n, "network", f"radio_{state}_s", seconds)
                                     for n in self.nodes
                                     for state, seconds in self.state_seconds(n, at).items())
            self._next_sample = at + interval

    def series(self) -> list[tuple]:
        """Metric rows ``(time, node, "network", "energy_j", joules left)``."""
        return list(self._samples)

    def summary(self, end: float) -> dict:
        """What a run records: joules spent (all nodes, mains-powered included, up to
        ``end``) by kind and in total, the deaths and every node's residual energy."""
        by_kind = {"tx": sum(self.tx.values()), "rx": sum(self.rx.values()),
                   "cpu": sum(self.cpu.values()),
                   "idle": sum(self.idle(n, end) for n in self.nodes)}
        radio = {} if self.radio is None else self._radio_summary(end, by_kind)
        return {"model": self.energy.model, "total_j": sum(by_kind.values()),
                "by_kind_j": radio.pop("by_kind_j", by_kind), **radio,
                "deaths": {str(n): t for n, t in sorted(self.deaths.items())},
                "first_node_death": min(self.deaths.values(), default=math.nan),
                "nodes_dead_at_end": len(self.deaths),
                "residual_j": {str(n): self.residual(n, end) for n in self.nodes
                               if n not in self.mains},
                "mains_powered": sorted(self.mains)}

    def _radio_summary(self, end: float, charged: dict) -> dict:
        """radio_states: joules by what the radio did (sending, receiving, listening: the
        rest of ``charged``, the book's own sums), seconds per state over every node,
        and each node's radio-on fraction of the run (tx, rx and listen time over
        ``end``; 1 for an always-on radio that lived through the run)."""
        watts = self.radio.watts
        tx_j = watts["tx"] * sum(self.tx_s.values())
        rx_j = watts["rx"] * sum(self.rx_s.values())
        total = sum(charged.values())
        states = [self.state_seconds(n, end) for n in self.nodes]
        run_s = self.energy.seconds_per_unit * end
        on = [(s["tx"] + s["rx"] + s["listen"]) / run_s if run_s > 0 else math.nan
              for s in states]
        by_kind = {"tx": tx_j, "rx": rx_j, "cpu": charged["cpu"],
                   "listen": total - tx_j - rx_j - charged["cpu"]}
        if self.checks is not None:   # duty cycled: the rest split into listening, sleep
            by_kind["listen"] = watts["listen"] * sum(s["listen"] for s in states)
            by_kind["sleep"] = total - tx_j - rx_j - charged["cpu"] - by_kind["listen"]
        return {"by_kind_j": by_kind,
                "state_s": {state: sum(s[state] for s in states) for state in STATES},
                "radio_on_fraction_mean": sum(on) / len(on) if on else math.nan,
                "radio_on_fraction_max": max(on, default=math.nan),
                "profile": self.energy.profile}
