"""The ``[mac]`` table (and ``deliver(mac=...)``): which MAC runs under the shared channel.

``model`` is ``"ideal"`` (the default: the shared channel's perfect scheduler, nothing
else changes), ``"802.11"`` (DCF, :class:`~emulator.mac.standards.Dcf80211`) or
``"802.15.4"`` (unslotted CSMA/CA, :class:`~emulator.mac.standards.CsmaCa802154`). Any
field of the model's dataclass may be set by its name (times in seconds, rates in
bit/s), and so may the channel's thresholds (:class:`~emulator.mac.engine.Channel`)
and ``carrier_sense_radius`` (the unit disk's sensing reach, in position units).
A key of the other standard, an unknown key or a value out of range is refused in one
line naming the field.

>>> mac = mac_from_table({"model": "802.11", "cw_min": 15, "retry_limit": 4})
>>> mac.model, mac.standard.cw_min, mac.standard.retry_limit, mac.standard.cw_max
('802.11', 15, 4, 1023)
>>> mac_from_table({"model": "802.11", "min_be": 2})
Traceback (most recent call last):
...
topologies.schema.FieldError: mac.min_be: a key of model "802.15.4", not of "802.11"
>>> mac_from_table({"model": "802.11", "cw_min": 64, "cw_max": 31})
Traceback (most recent call last):
...
topologies.schema.FieldError: mac.cw_min: expected cw_min <= cw_max, got 64 > 31
>>> mac_from_table({"model": "802.11", "lifetime": -1})
Traceback (most recent call last):
...
topologies.schema.FieldError: mac.lifetime: expected a number >= 0, got -1
>>> mac_from_table(None).model
'ideal'
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from emulator.mac.contikimac import ContikiMac
from emulator.mac.engine import Channel
from emulator.mac.standards import CsmaCa802154, Dcf80211
from topologies.schema import Field, FieldError, check_table

#: Every value of ``mac.model``; the first is the default.
MAC_MODELS = ("ideal", "802.11", "802.15.4")
#: The standard's dataclass of each model but ``ideal``.
STANDARDS = {"802.11": Dcf80211, "802.15.4": CsmaCa802154}


def _schema_of(cls) -> dict:
    """A :class:`Field` per field of a standard's or the channel's dataclass, its
    default the dataclass's (ints: counts >= 0; floats: >= 0, dBm any finite)."""
    schema, owner = {}, cls.__name__
    for f in dataclasses.fields(cls):
        doc = f"`{owner}.{f.name}` (emulator.mac)"
        if f.type in ("int", int):
            schema[f.name] = Field("integer", f.default, low=0, doc=doc)
        elif f.name.endswith("_dbm"):
            schema[f.name] = Field("number", f.default, doc=doc)
        else:
            schema[f.name] = Field("number", f.default, low=0, doc=doc)
    return schema


#: What every model but ``ideal`` takes besides its standard's fields.
COMMON = {
    "model": Field("choice", MAC_MODELS[0], choices=MAC_MODELS,
                   doc="ideal: the shared channel's perfect scheduler; 802.11: DCF; "
                       "802.15.4: unslotted CSMA/CA"),
    "carrier_sense_radius": Field(
        "number", None, low=0, low_open=True, none=True,
        doc="unit disk: how far (position units) a transmission is sensed; none: 2.2 x "
            "the longest link of the epoch"),
    **_schema_of(Channel),
}


#: Values of ``mac.duty_cycle``; the first is the default.
DUTY_CYCLES = ("none", "contikimac")
#: What 802.15.4 takes besides its standard's fields: radio duty cycling.
DUTY = {
    "duty_cycle": Field("choice", DUTY_CYCLES[0], choices=DUTY_CYCLES,
                        doc="802.15.4: none (radios always on) or contikimac (radios "
                            "asleep but for channel checks; a frame repeated until the "
                            "receiver wakes)"),
    "channel_check_rate_hz": Field("number", ContikiMac.channel_check_rate_hz, low=0,
                                   low_open=True,
                                   doc="contikimac: channel checks a second"),
    "phase_lock": Field("bool", False,
                        doc="contikimac: a sender learns each neighbour's wake-up from its "
                            "ACKs and starts its next train GUARD_TIME before it "
                            "(WITH_PHASE_OPTIMIZATION)"),
    "overhearing": Field("bool", False,
                         doc="contikimac: book the radio time of nodes woken by trains not "
                             "meant for them (false: addressees and broadcast receivers "
                             "only)"),
    "fast_sleep": Field("bool", True,
                        doc="contikimac with overhearing: a radio woken by energy it cannot "
                            "decode sleeps after MAX_NONACTIVITY_PERIODS (WITH_FAST_SLEEP)"),
    "csma_max_mac_transmissions": Field(
        "integer", 0, low=0,
        doc="contikimac: Contiki's csma.c requeues a frame that found the channel busy, "
            "after one to 2^k periods, until this many transmissions are counted (one "
            "per 4 busy channels; Contiki's default 3); 0: dropped at once"),
}


def _model_keys(model: str) -> dict:
    """The keys of ``model``'s own (its standard's, and 802.15.4's duty cycling)."""
    return {**_schema_of(STANDARDS[model]), **(DUTY if model == "802.15.4" else {})}


def mac_schema(model: str) -> dict:
    """The keys ``model`` takes (``ideal``: only ``model``)."""
    if model == "ideal":
        return {"model": COMMON["model"]}
    return {**COMMON, **_model_keys(model)}


@dataclass(frozen=True)
class MacConfig:
    """A checked ``[mac]`` table: the model, its standard's constants, the channel's
    thresholds, the sensing radius, and whether the table set the queue's lifetime
    (else ``[network] queue_max_wait`` sets it, :meth:`with_lifetime`)."""

    model: str = "ideal"
    standard: Dcf80211 | CsmaCa802154 | None = None
    channel: Channel = Channel()
    carrier_sense_radius: float | None = None
    lifetime_given: bool = False
    #: ContikiMAC's timing when ``duty_cycle = "contikimac"``; None: radios always on.
    duty: ContikiMac | None = None

    @property
    def ideal(self) -> bool:
        return self.model == "ideal"

    def with_lifetime(self, seconds: float) -> "MacConfig":
        """The queue's lifetime ``seconds``, unless the table set its own."""
        if self.lifetime_given or self.standard is None:
            return self
        return dataclasses.replace(
            self, standard=dataclasses.replace(self.standard, lifetime=float(seconds)))


def all_keys() -> set[str]:
    """Every key a ``[mac]`` table may hold, whatever its model (a sweep's paths)."""
    return set(COMMON) | {key for model in STANDARDS for key in _model_keys(model)}


def spec_table(table) -> dict:
    """A spec's ``[mac]`` table checked, as given (no default filled in, so that a
    default added later leaves run ids alone). Under ``model = "ideal"`` its other keys
    (known ones: a sweep over ``mac.model`` keeps them for its other points) do nothing
    (:mod:`experiments.inert` says so), and the run and its id are those of no table
    (:func:`experiments.spec.run_id`).

    >>> spec_table({"model": "802.11", "cw_min": 15})
    {'model': '802.11', 'cw_min': 15}
    >>> spec_table({"model": "ideal", "cw_min": 15})
    {'model': 'ideal', 'cw_min': 15}
    >>> spec_table({"model": "ideal", "cw_mn": 15})
    Traceback (most recent call last):
    ...
    topologies.schema.FieldError: mac.cw_mn: unknown key; valid: model and the keys of "802.11" and "802.15.4" (docs/SPEC.md)
    """
    if isinstance(table, dict) and table.get("model", "ideal") == "ideal":
        unknown = sorted(set(table) - all_keys(), key=str)
        if unknown:
            raise FieldError(f"mac.{unknown[0]}", 'unknown key; valid: model and the keys '
                                                  'of "802.11" and "802.15.4" (docs/SPEC.md)')
        if table.get("duty_cycle", "none") != "none":
            raise FieldError("mac.duty_cycle", 'duty cycling needs model = "802.15.4", '
                                               'got model "ideal"')
        every = {**COMMON, **_model_keys("802.11"), **_model_keys("802.15.4")}
        return check_table(every, {"model": "ideal", **table}, "mac", fill_defaults=False)
    config = mac_from_table(table)
    return check_table(mac_schema(config.model), table, "mac", fill_defaults=False)


def mac_of_spec(spec: dict) -> MacConfig:
    """The MAC a resolved spec runs: ideal without a ``[mac]`` table or under
    ``model = "ideal"`` (whatever other keys the table holds)."""
    table = spec.get("mac")
    if table is None or table.get("model", "ideal") == "ideal":
        return MacConfig()
    return mac_from_table(table)


def decode_range_m(config: MacConfig, radio) -> float:
    """How far (metres) the log-distance ``radio`` carries a frame this MAC can decode
    alone: where its power falls to ``max(detect_dbm, noise_dbm + sinr_db)``.

    >>> from topologies.radio import Radio
    >>> round(decode_range_m(mac_from_table({"model": "802.11"}), Radio()), 1)   # -82 dBm
    51.5
    """
    channel = config.channel
    need = max(channel.detect_dbm, channel.noise_dbm + channel.sinr_db)
    return radio.reference_distance_m * 10 ** (
        (radio.tx_power_dbm - radio.reference_loss_db - need) / (10 * radio.exponent))


def check_mac_medium(mac: MacConfig, medium: str, where: str = "network.medium") -> None:
    """A MAC other than ideal runs under the shared medium only.

    >>> check_mac_medium(mac_from_table({"model": "802.11"}), "links")
    Traceback (most recent call last):
    ...
    topologies.schema.FieldError: network.medium: mac.model = "802.11" needs medium = "shared", got "links"
    """
    if not mac.ideal and medium != "shared":
        raise FieldError(where, f'mac.model = "{mac.model}" needs medium = "shared", '
                                f'got "{medium}"')


def mac_from_table(table: dict | None, where: str = "mac") -> MacConfig:
    """The :class:`MacConfig` a ``[mac]`` table describes (None or ``{}``: ideal)."""
    if isinstance(table, MacConfig):
        return table
    table = {} if table is None else table
    if not isinstance(table, dict):
        raise FieldError(where, f"expected a table, got {type(table).__name__}")
    model = check_table({"model": COMMON["model"]}, {"model": table.get("model", "ideal")},
                        where)["model"]
    schema = mac_schema(model)
    for key in table:
        if key not in schema:
            owner = [m for m in STANDARDS if key in _model_keys(m)]
            if owner:
                raise FieldError(f"{where}.{key}", f'a key of model "{owner[0]}", not of '
                                                   f'"{model}"')
    clean = check_table(schema, table, where)
    if model == "ideal":
        return MacConfig()
    cls = STANDARDS[model]
    names = {f.name for f in dataclasses.fields(cls)}
    channel_names = {f.name for f in dataclasses.fields(Channel)}
    try:
        standard = cls(**{k: clean[k] for k in names}).check()
        channel = Channel(**{k: clean[k] for k in channel_names}).check()
        duty = _duty_of(clean)
    except ValueError as err:   # the dataclasses say "mac.<field>: ..."
        field, _, message = str(err).partition(": ")
        raise FieldError(where + field[len("mac"):], message) from None
    return MacConfig(model, standard, channel, clean["carrier_sense_radius"],
                     "lifetime" in table, duty)


def _duty_of(clean: dict) -> ContikiMac | None:
    """ContikiMAC's timing of a checked 802.15.4 table, checked (None: no duty cycle).

    >>> _duty_of({"duty_cycle": "contikimac", "channel_check_rate_hz": 16,
    ...           "phase_lock": False}).period
    0.0625
    >>> _duty_of({"duty_cycle": "contikimac", "channel_check_rate_hz": 4000,
    ...           "phase_lock": False})
    Traceback (most recent call last):
    ...
    ValueError: mac.channel_check_rate_hz: expected a period longer than a channel check (0.00124 s), got 4000 Hz
    """
    if clean.get("duty_cycle", "none") == "none":
        return None
    given = {key: clean.get(key, DUTY[key].default) for key in DUTY if key != "duty_cycle"}
    return ContikiMac(channel_check_rate_hz=float(given.pop("channel_check_rate_hz")),
                      **given).check()
