"""Settings a spec gives that its run does not use: keys of a table whose ``model`` (or
the network's ``routing``, or the algorithm) leaves them unread.

Such a key changes nothing in the run, so it must not change the run's id either:
:func:`without_inert` puts each one back to its default before the spec is hashed
(:func:`experiments.spec.for_run`), and :func:`experiments.spec.load` warns once per
spec file, naming the keys and the field that disables them. A key counts when its
value differs from its default (a routing protocol's or an algorithm's table: when it
holds any key), since a default changes nothing either way.

Examples
--------
>>> from experiments.spec import resolve
>>> spec = resolve({"energy": {"battery_j": 2.0}, "routing": {"aodv": {"hello_interval": 1}}})
>>> for found in inert_settings(spec):
...     print(found.table, found.keys, found.because)
energy ('battery_j',) energy.model = "none"
routing.aodv ('hello_interval',) network.routing = "oracle"
>>> clean = without_inert(spec)
>>> clean["energy"]["battery_j"], clean["routing"]["aodv"]
(0.5, {})
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

from emulator.energy import ENERGY_SCHEMA, FIRST_ORDER_KEYS, RADIO_STATES_KEYS
from emulator.routing.params import ROUTING_SCHEMA
from emulator.routing.params import TABLES as ROUTING_TABLES
from topologies.radio import RADIO_SCHEMA

#: What each protocol's table is called in a message.
_PROTOCOL_NAMES = {"aodv": "AODV", "olsr": "OLSR", "babel": "Babel", "rpl": "RPL"}


@dataclass(frozen=True)
class Inert:
    """Keys of one table that the run leaves unread.

    ``table``: the dotted table (``energy``, ``routing.aodv``, ``params.lottery``);
    ``keys``: its keys that do nothing; ``because``: the setting that disables them, as
    a spec spells it; ``effect``: what that setting means for the keys.
    """

    table: str
    keys: tuple[str, ...]
    because: str
    effect: str

    def message(self) -> str:
        """The warning's text (after ``file: table: ``).

        >>> Inert("energy", ("battery_j",), 'energy.model = "none"',
        ...       "no node spends energy").message()
        'battery_j does nothing under energy.model = "none" (no node spends energy); the run and its id are those without it'
        """
        one = len(self.keys) == 1
        return (f"{', '.join(self.keys)} {'does' if one else 'do'} nothing under "
                f"{self.because} ({self.effect}); the run and its id are those without "
                f"{'it' if one else 'them'}")


def _changed(table: dict, schema: dict, keep: tuple[str, ...]) -> tuple[str, ...]:
    """The keys of a checked ``table`` (defaults filled) not in ``keep`` whose value is
    not the schema's default."""
    return tuple(key for key in sorted(table) if key not in keep and key in schema
                 and table[key] != schema[key].default)


def _only(keys: tuple[str, ...]) -> dict:
    """``[energy]``'s schema for ``keys`` alone (the keys of one model)."""
    return {key: ENERGY_SCHEMA[key] for key in keys}


def _said(value) -> str:
    return f'"{value}"'


def inert_settings(spec: dict) -> list[Inert]:
    """The keys of a resolved spec (:func:`experiments.spec.resolve`) that its run does
    not read, one :class:`Inert` per table, in the spec's section order.

    ``[run] spark_master`` off the Spark runtime; ``[energy]`` under ``model = "none"``, and
    one model's keys under the other (``first_order``, ``radio_states``); ``[radio]`` under ``unit_disk`` (which reads
    ``meters_per_unit`` only, for links' lengths, which only the energy model reads);
    ``[network] interference_radius`` on
    the ``links`` medium; ``[routing] seconds_per_unit`` under the ``oracle`` and each
    ``[routing.<protocol>]`` table of a protocol that does not run (both, for Babel on
    Mininet, where babeld keeps its own timers); ``[query] theta``
    under the ``equality`` predicate; ``[mac]`` keys under ``model = "ideal"``, and
    ``[network] interference_radius`` and ``reorder`` under another model;
    ``[mobility]`` keys of the model that another of
    its keys leaves unread; ``[params.<name>]`` and ``[trigger.<name>]`` of an
    algorithm that is not ``algorithm.name``.

    >>> from experiments.spec import resolve
    >>> [f.table for f in inert_settings(resolve({"radio": {"shadowing_db": 4.0},
    ...                                          "query": {"theta": 0.1}}))]
    ['radio', 'query']
    """
    found = []
    run = spec["run"]
    if run["runtime"] != "spark" and run["spark_master"] is not None:
        found.append(Inert("run", ("spark_master",), f"run.runtime = {_said(run['runtime'])}",
                           "node programs run in this process, not on Spark"))
    energy = spec["energy"]
    if energy["model"] == "none":
        found.append(Inert("energy", _changed(energy, ENERGY_SCHEMA, ("model",)),
                           'energy.model = "none"', "no node spends energy; "
                           '"first_order" gives batteries'))
    elif energy["model"] == "first_order":
        found.append(Inert("energy", _changed(energy, _only(RADIO_STATES_KEYS), ()),
                           'energy.model = "first_order"', "the radio's states and "
                           'currents are "radio_states"\'s'))
    else:
        found.append(Inert("energy", _changed(energy, _only(FIRST_ORDER_KEYS), ()),
                           'energy.model = "radio_states"', "the radio's current in each "
                           "state prices sending, receiving and listening"))
    radio = spec["radio"]
    if radio["model"] == "unit_disk":
        # the links' lengths in metres are the energy model's only
        lengths = ("meters_per_unit",) if energy["model"] != "none" else ()
        found.append(Inert("radio", _changed(radio, RADIO_SCHEMA, ("model", *lengths)),
                           'radio.model = "unit_disk"', "links come from the topology; "
                           '"log_distance" reads the propagation keys' + (
                               "" if lengths else "; meters_per_unit sets links' lengths "
                                                  "for an energy model only")))
    network = spec["network"]
    if network["medium"] == "links" and network["interference_radius"] is not None:
        found.append(Inert("network", ("interference_radius",), 'network.medium = "links"',
                           "every link is its own channel; the radius applies to "
                           '"shared"'))
    routing, tables = network["routing"], spec["routing"]
    if routing == "oracle":
        found.append(Inert("routing", _changed(tables, ROUTING_SCHEMA, tuple(ROUTING_TABLES)),
                           'network.routing = "oracle"', "no protocol runs, so no timer "
                           "is scaled"))
    mac = spec.get("mac")
    if mac is not None and mac["model"] == "ideal" and len(mac) > 1:
        found.append(Inert("mac", tuple(sorted(k for k in mac if k != "model")),
                           'mac.model = "ideal"', "the shared channel's perfect scheduler; "
                           '"802.11" and "802.15.4" read them'))
    elif mac is not None:   # keys of the perfect scheduler's medium
        from experiments.spec import SCHEMA   # (spec imports this module)

        unread = _changed(network, SCHEMA["network"], ("medium", "routing",
                                                       "queue_max_wait"))
        if unread:
            found.append(Inert("network", unread, f'mac.model = "{mac["model"]}"',
                               "the MAC's carrier sense and SINR decide who interferes "
                               "(mac.carrier_sense_radius), and its queue keeps each "
                               "sender's frames in order"))
    backend = run["backend"]
    if routing == "babel" and backend != "simpy":   # babeld with its own timers
        for table, keys in (("routing", _changed(tables, ROUTING_SCHEMA,
                                                 tuple(ROUTING_TABLES))),
                            ("routing.babel", tuple(sorted(tables["babel"])))):
            found.append(Inert(table, keys, f"run.backend = {_said(backend)}",
                               "babeld runs on every host with its own timers"))
    for protocol in ROUTING_TABLES:
        if protocol != routing:
            found.append(Inert(f"routing.{protocol}", tuple(sorted(tables[protocol])),
                               f"network.routing = {_said(routing)}",
                               f"only {_PROTOCOL_NAMES[protocol]} reads this table"))
    query = spec["query"]
    if query["predicate"] == "equality" and query["theta"] is not None:
        found.append(Inert("query", ("theta",), 'query.predicate = "equality"',
                           'keys are compared; the threshold is "distance"\'s'))
    found.extend(_unread_mobility(spec.get("mobility", {})))
    chosen = spec["algorithm"]["name"]
    for section in ("params", "trigger"):
        for name, table in spec.get(section, {}).items():
            if name != chosen and isinstance(table, dict):
                found.append(Inert(f"{section}.{name}", tuple(sorted(table)),
                                   f"algorithm.name = {_said(chosen)}",
                                   f"only {name} reads this table"))
    return [f for f in found if f.keys]


def _unread_mobility(mobility: dict) -> list[Inert]:
    """The ``[mobility]`` keys its model takes but another of its keys leaves unread
    (:data:`topologies.spec.UNREAD_UNDER`: random_walk's ``time`` under mode
    "distance", ``distance`` under mode "time"). The table is the spec's own (its
    owner fills no defaults), so a key counts when it is there at all.

    >>> [f.message()[:40] for f in _unread_mobility({"model": "random_walk", "time": 2})]
    ['time does nothing under mobility.mode = ']
    >>> _unread_mobility({"model": "random_walk", "mode": "time", "time": 2})
    []
    """
    from topologies.spec import MOBILITY_SCHEMA, UNREAD_UNDER

    found = []
    for (model, key, value), unread in UNREAD_UNDER.items():
        if (mobility.get("model") == model and unread in mobility
                and mobility.get(key, MOBILITY_SCHEMA[key].default) == value):
            found.append(Inert("mobility", (unread,), f"mobility.{key} = {_said(value)}",
                               f"{model} reads it under another mobility.{key}"))
    return found


def without_inert(spec: dict, found: list[Inert] | None = None) -> dict:
    """A copy of the resolved ``spec`` with every key of ``found`` (default: its
    :func:`inert_settings`) back at its default: the spec the run's id is computed from.
    An algorithm's tables are left to :func:`experiments.spec.for_run`."""
    from experiments.spec import SCHEMA   # the sections' defaults (spec imports this)

    out = copy.deepcopy(spec)
    for inert in inert_settings(spec) if found is None else found:
        section, _, protocol = inert.table.partition(".")
        if section == "routing" and protocol:
            out["routing"][protocol] = {}
        elif section in ("mobility", "mac"):   # the spec's own table: an unread key
            for key in inert.keys:              # is dropped
                out[section].pop(key, None)
        elif section in SCHEMA:
            for key in inert.keys:
                out[section][key] = copy.deepcopy(SCHEMA[section][key].default)
    return out


def common_inert(findings: list[list[Inert]]) -> list[Inert]:
    """The keys inert in every one of ``findings`` (one list per run of a sweep): a key
    some point of the sweep uses is not reported. Each table keeps the first run's
    reason.

    >>> a = [Inert("energy", ("battery_j", "idle_w"), "m", "e")]
    >>> b = [Inert("energy", ("battery_j",), "m", "e")]
    >>> common_inert([a, b]), common_inert([a, []])
    ([Inert(table='energy', keys=('battery_j',), because='m', effect='e')], [])
    """
    if not findings:
        return []
    out = []
    for first in findings[0]:
        keys = set(first.keys)
        for other in findings[1:]:
            keys &= {k for f in other if f.table == first.table for k in f.keys}
        if keys:
            out.append(Inert(first.table, tuple(sorted(keys)), first.because, first.effect))
    return out
