"""A radio's power by state: ``[energy] model = "radio_states"``.

A real sensor radio costs about as much listening as receiving: a CC2420 draws 18.8 mA
receiving or listening, 17.4 mA sending at 0 dBm and 20 µA asleep, so an always-on
radio's lifetime is set by listening, not by traffic. This model puts each node's radio
in one state at every instant, as Contiki's Energest counts it:

- ``tx`` while it sends a frame (the frame's airtime, below),
- ``rx`` while it receives one (every receiver that is up when the frame arrives),
- ``listen`` the rest of the time it is up (receiver on, nothing heard),
- ``idle`` and ``sleep`` (receiver off, oscillator on or off): a duty-cycled MAC puts the
  radio there: under ``[mac] duty_cycle = "contikimac"`` an up radio sleeps but for its
  channel checks and the exchanges the MAC books (``EnergyBook.duty_cycled``); without
  one an up node never enters them (``idle`` is not used by any MAC yet),
- ``off`` once the node is dead (its battery empty): it draws nothing.

Joules are Σ current × voltage × time over the states. A frame of ``b`` bytes is on
air for ``8 b / bitrate_bps + phy_overhead_s`` seconds (the preamble and PHY header
before the bytes: 802.15.4's SHR and PHR are 6 bytes at 250 kbit/s, 192 µs; 802.11b's
long preamble and PLCP header 192 µs too). The radio's own rate decides the airtime, not
the link's `bandwidth` (which paces the emulated transport): a sensor radio sends at
250 kbit/s whatever the spec's abstract bandwidth.

What it leaves out: the radio's switching times and their energy (CC2420's 192 µs
turnaround), frames overheard by neighbours that are not their receivers (the transport
charges the receiver only; a listening CC2420 draws what a receiving one does, so the
error there is the difference of rx and listen currents, nil for it), and, under
``medium = "links"`` where each link is its own channel, a node sending on two links at
once: both frames are charged in full and ``listen`` is what remains of the up time
(never below 0), so the states then add up to more than the run.

>>> power = RadioPower.of_profile("cc2420")
>>> round(power.airtime(122) * 1e6)            # 122 bytes: 3,904 µs + 192 µs
4096
>>> round(power.watts["listen"] * 1e3, 1)      # 18.8 mA at 3 V
56.4
>>> round(RadioPower.of_profile("wifi").watts["tx"], 3)   # ns-3's 0.380 A at 3 V
1.14
"""
from __future__ import annotations

from dataclasses import dataclass

#: The radio's states, in the order Energest lists them (``off``: dead).
STATES = ("tx", "rx", "listen", "idle", "sleep", "off")

#: Each profile's supply voltage, currents in amperes, bit rate and PHY overhead.
#: cc2420: TI's CC2420 datasheet (SWRS041c): RX 18.8 mA, TX 17.4 mA at 0 dBm, idle
#: 426 µA, power-down 20 µA; 250 kbit/s O-QPSK, SHR + PHR 6 bytes (192 µs).
#: cc2538: TI's CC2538 datasheet (SWRS096): RX 20 mA, TX 24 mA at 0 dBm; radio off
#: with the chip in power mode 1 0.6 mA (idle) and power mode 2 1.3 µA (sleep).
#: wifi: ns-3's WifiRadioEnergyModel defaults (TX 0.380 A, RX 0.313 A, IDLE 0.273 A:
#: ns-3's idle is a listening receiver, SLEEP 0.033 A) and BasicEnergySource's 3 V;
#: 802.11b at 1 Mbit/s with the long preamble and PLCP header (192 µs).
PROFILES = {
    "cc2420": {"voltage_v": 3.0, "tx_a": 17.4e-3, "rx_a": 18.8e-3, "listen_a": 18.8e-3,
               "idle_a": 0.426e-3, "sleep_a": 20e-6, "bitrate_bps": 250e3,
               "phy_overhead_s": 192e-6},
    "cc2538": {"voltage_v": 3.0, "tx_a": 24e-3, "rx_a": 20e-3, "listen_a": 20e-3,
               "idle_a": 0.6e-3, "sleep_a": 1.3e-6, "bitrate_bps": 250e3,
               "phy_overhead_s": 192e-6},
    "wifi": {"voltage_v": 3.0, "tx_a": 0.380, "rx_a": 0.313, "listen_a": 0.273,
             "idle_a": 0.273, "sleep_a": 0.033, "bitrate_bps": 1e6,
             "phy_overhead_s": 192e-6},
}

#: The ``[energy]`` keys a profile fills when the spec leaves them unset (none).
PROFILE_KEYS = tuple(PROFILES["cc2420"])


@dataclass(frozen=True)
class RadioPower:
    """A radio's power per state (watts) and how long a frame is on air."""

    watts: dict
    bitrate_bps: float
    phy_overhead_s: float

    @classmethod
    def of_profile(cls, profile: str, **overrides) -> "RadioPower":
        """``profile``'s values, each overridden where ``overrides`` gives one (None:
        the profile's)."""
        values = {**PROFILES[profile],
                  **{k: v for k, v in overrides.items() if v is not None}}
        volts = values["voltage_v"]
        watts = {state: values[f"{state}_a"] * volts for state in STATES if state != "off"}
        return cls({**watts, "off": 0.0}, values["bitrate_bps"], values["phy_overhead_s"])

    @classmethod
    def of(cls, energy) -> "RadioPower":
        """The power of an :class:`emulator.energy.Energy` under ``radio_states``."""
        return cls.of_profile(energy.profile,
                              **{k: getattr(energy, k) for k in PROFILE_KEYS})

    def airtime(self, size_bytes: int) -> float:
        """Seconds a frame of ``size_bytes`` is on air."""
        return 8 * size_bytes / self.bitrate_bps + self.phy_overhead_s
