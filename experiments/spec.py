"""Experiment specs: TOML files resolved against defaults and validated before anything runs.

The tables ``[run]``, ``[query]``, ``[algorithm]``, ``[params.*]`` and ``[sweep]`` are
checked here; ``[topology]``, ``[mobility]`` and ``[streams]`` by the builders that own
them (:func:`experiments.planning.build_plan` calls them all before a run starts). Every
error is a :class:`SpecError` naming the file and the dotted field.

Example
-------
>>> spec = resolve({"run": {"name": "demo", "duration": 5}, "query": {"window": "none"}})
>>> spec["run"]["duration"], spec["run"]["step"], spec["query"]["window"]
(5.0, 0.01, None)
>>> resolve({"run": {"duraton": 5}})
Traceback (most recent call last):
...
experiments.spec.SpecError: <spec>: run.duraton: unknown key; valid: backend, bytes_per_unit, capture, drain, duration, header_bytes, memory_interval, name, run_ahead, runtime, seed, spark_master, step, synopsis_unit, warmup
"""
from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import tomllib
import warnings
from pathlib import Path

from emulator.backends import BACKENDS as _BACKEND_REGISTRY
from emulator.energy import ENERGY_SCHEMA
from emulator.radio_energy import PROFILE_KEYS
from emulator.routing import BACKEND_ROUTINGS, ROUTINGS
from emulator.routing.params import ROUTING_SCHEMA
from emulator.routing.params import TABLES as ROUTING_TABLES
from emulator.routing.params import check as check_routing
from emulator.transport import MEDIA
from experiments.inert import common_inert, inert_settings, without_inert
from spark_nodes.runtimes.registry import RUNTIMES as _RUNTIME_REGISTRY
from topologies.radio import RADIO_SCHEMA
from topologies.schema import Field, FieldError, check_table, check_value

BACKENDS = tuple(_BACKEND_REGISTRY.names())
RUNTIMES = tuple(_RUNTIME_REGISTRY.names())
PREDICATES = ("equality", "distance")

#: The sections this module checks, one schema each (:class:`topologies.schema.Field`:
#: kind, range, default, meaning). ``docs/SPEC.md`` is generated from these tables.
SCHEMA = {
    "run": {
        "name": Field("str", "run", doc="run folder prefix"),
        "seed": Field("seed", 1, doc="every random draw of the run derives from it "
                                     "(numpy SeedSequence)"),
        "duration": Field("number", 10.0, low=0, low_open=True,
                          doc="virtual time units during which sources emit"),
        "step": Field("number", 0.01, low=0, low_open=True,
                      doc="driver step; at most the smallest link delay (else iterated); "
                          "at most `run.duration`"),
        "backend": Field("choice", "simpy", choices=BACKENDS,
                         doc="how the network runs: virtual time or Mininet hosts"),
        "runtime": Field("choice", "inproc", choices=RUNTIMES,
                         doc="where node operators run: in this process or on Spark"),
        "memory_interval": Field("number", 1.0, low=0, low_open=True,
                                 doc="memory sampling period"),
        "bytes_per_unit": Field("integer", 32, low=1, doc="bytes of one data unit on the wire"),
        "header_bytes": Field("integer", 24, low=0, doc="bytes of a message header"),
        "synopsis_unit": Field("number", 0.25, low=0, doc="data units of one synopsis entry"),
        # Routes, neighbour tables and queues start empty at t = 0; what enters while
        # they form is not what the algorithm is measured on (docs/DESIGN.md, warm-up).
        "warmup": Field("number", 0.0, low=0,
                        doc="time units at the start that the run's figures leave out: "
                            "the protocols and mobility run from 0, but recall, the "
                            "exact answer, cost, latency, memory and delivery count only "
                            "what enters or is sent at or after it; < `run.duration`"),
        "capture": Field("bool", False,
                         doc="keep every packet as sent for `testbed pcap` (the run "
                             "folder's capture table); the simpy backend only; a routing "
                             "protocol then runs without its compiled loop (the same "
                             "run, slower)"),
        "drain": Field("number", None, low=0, none=True,
                       doc="time after `run.duration` for messages in flight; none: one "
                           "more `run.duration`"),
        "spark_master": Field("str", None, none=True,
                              doc="Spark master URL for runtime = \"spark\"; none: "
                                  "`local[*]`"),
        # Nodes that receive nothing run ahead, nodes that send nothing are deferred
        # (emulator.lookahead): the same outputs in fewer runtime calls.
        "run_ahead": Field("bool", True, doc="pure sources run ahead, pure sinks are "
                                             "deferred (same outputs, fewer calls)"),
    },
    "query": {
        "node": Field("integer", 0, doc="the node where results are delivered"),
        "predicate": Field("choice", "equality", choices=PREDICATES,
                           doc="join on equal keys, or on positions within `query.theta`"),
        "theta": Field("number", None, low=0, allow_inf=True, none=True,
                       doc="distance threshold of the distance predicate"),
        "window": Field("number", None, low=0, allow_inf=True, none=True,
                        doc="time window of every stream; none: no window"),
        "windows": Field("table", {}, doc="per-stream windows, `{R1 = 2.0}`, over "
                                          "`query.window`"),
    },
    "algorithm": {"name": Field("str", "centralized",
                                doc="the algorithm a user types (`testbed algorithms`)")},
    # How transmissions share the air (emulator.transport): every directed link its own
    # channel, or one radio channel with the two-hop conflict rule.
    "network": {
        "medium": Field("choice", "links", choices=MEDIA,
                        doc="every directed link its own channel, or one shared radio "
                            "channel (two-hop conflict rule)"),
        "interference_radius": Field("number", None, low=0, low_open=True, none=True,
                                     doc="shared medium: neighbours by distance between "
                                         "positions instead of links"),
        "routing": Field("choice", ROUTINGS[0], choices=ROUTINGS,
                         doc="oracle: every node knows the epoch's least-cost routes at "
                             "once (an idealisation); aodv, olsr, babel, rpl: the "
                             "protocols, their control packets on the medium (simpy); on "
                             "mininet babel runs babeld on every host"),
        "reorder": Field("bool", False, doc="let a message overtake an earlier one on the "
                                            "same link (jitter drawn per hop); false: "
                                            "every link keeps its order"),
        "queue_max_wait": Field("number", None, low=0, low_open=True, none=True,
                                doc="a hop that would wait longer than this for its link "
                                    "or the channel is lost (`queue_expired`; ns-3's "
                                    "Wi-Fi queue: 0.5 s); none: queues have no limit "
                                    "(simpy; a routed run whose shared channel "
                                    "saturates then never drains, and logs a warning "
                                    "once 100,000 transmissions wait)"),
    },
    # Batteries and what the nodes spend (emulator.energy): the first-order radio model.
    "energy": ENERGY_SCHEMA,
    # The routing protocols' parameters (emulator.routing.params): the RFC constants.
    "routing": ROUTING_SCHEMA,
    # Radio propagation (topologies.radio): the unit disk, or loss by distance and frame
    # size; checked against the topology by topologies.spec.radio_from_spec.
    "radio": RADIO_SCHEMA,
}
#: A stream's own window in ``[query] windows``.
WINDOW = SCHEMA["query"]["window"]
#: Sections checked by their owners (tables passed through as given).
OWNED_ELSEWHERE = ("topology", "mobility", "streams", "mininet", "trigger")
#: Sections only some specs carry (absent, they add nothing to a run's id): the
#: enrichment pipeline's table (spark_nodes/algorithms/enrich/table.py), and the MAC
#: under the shared medium (emulator/mac/config.py; under `model = "ideal"` the run and
#: the id of no table at all: run_id leaves it out).
OPTIONAL = ("enrich", "mac")
SECTIONS = tuple(SCHEMA) + OWNED_ELSEWHERE + OPTIONAL + ("params", "sweep")


class SpecError(ValueError):
    """A spec that cannot run: ``file: field: what was expected``."""

    def __init__(self, source: str, field: str, message: str):
        super().__init__(f"{source}: {field}: {message}")
        self.source, self.field, self.message = source, field, message

    def __reduce__(self):
        # ValueError pickles only ``args`` (the whole line): a sweep's worker process
        # sends the error to the sweep whole, with its fields.
        return (type(self), (self.source, self.field, self.message))


def load(path) -> tuple[dict, Path]:
    """Read and resolve a TOML spec; returns ``(spec, directory of the file)``."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SpecError(str(path), "(file)", "no such file") from None
    except IsADirectoryError:
        raise SpecError(str(path), "(file)",
                        "expected a TOML spec file, got a directory") from None
    except UnicodeDecodeError as err:
        raise SpecError(str(path), "(file)", f"expected a UTF-8 text file (byte {err.start} is "
                        "not UTF-8)") from None
    except OSError as err:
        raise SpecError(str(path), "(file)",
                        f"expected a readable file ({err.strerror})") from None
    except tomllib.TOMLDecodeError as err:
        raise SpecError(str(path), "(syntax)", str(err)) from None
    spec = resolve(raw, source=str(path))
    warn_inert(spec, str(path))
    return spec, path.parent.resolve()


def resolve(raw: dict, source: str = "<spec>") -> dict:
    """Defaults overlaid with ``raw``; checks this module's sections and the fields that
    must agree with each other (:func:`check_consistency`)."""
    if not isinstance(raw, dict):
        raise SpecError(source, "(spec)", f"expected a table of sections, got "
                                          f"{type(raw).__name__}")
    unknown = sorted(set(raw) - set(SECTIONS), key=str)
    if unknown:
        raise SpecError(source, str(unknown[0]),
                        f"unknown section; valid: {', '.join(SECTIONS)}")
    spec = {}
    try:
        for section, fields in SCHEMA.items():
            spec[section] = check_table(fields, raw.get(section, {}), section)
        for stream, window in spec["query"]["windows"].items():
            spec["query"]["windows"][stream] = check_value(f"query.windows.{stream}",
                                                           WINDOW, window)
    except FieldError as err:
        raise SpecError(source, err.field, err.message) from None
    for section in OWNED_ELSEWHERE:
        spec[section] = copy.deepcopy(raw.get(section, {}))
        if not isinstance(spec[section], dict):
            raise SpecError(source, section, "expected a table")
    if "enrich" in raw:
        from spark_nodes.algorithms.enrich.table import check_enrich

        try:
            spec["enrich"] = check_enrich(raw["enrich"])
        except FieldError as err:
            raise SpecError(source, err.field, err.message) from None
    if "mac" in raw:
        from emulator.mac.config import spec_table

        try:
            spec["mac"] = spec_table(raw["mac"])
        except FieldError as err:
            raise SpecError(source, err.field, err.message) from None
    spec["params"] = copy.deepcopy(raw.get("params", {}))
    if not isinstance(spec["params"], dict):
        raise SpecError(source, "params", "expected a table of algorithm tables")
    for name, table in spec["params"].items():
        if not isinstance(table, dict):
            raise SpecError(source, f"params.{name}", "expected a table of parameters")
    spec["sweep"] = _check_sweep(source, raw.get("sweep", {}))
    check_consistency(spec, source)
    return spec


class SpecWarning(UserWarning):
    """A spec that runs, but whose fields say something the run will not do as written
    (a window longer than the run, a failure after its end, a file's setting overridden).

    The message is the one line ``file: field: what happens``; the command line prints
    it as ``warning: ...``.
    """


def warn(source: str, field: str, message: str) -> str:
    """Warn about ``field`` of the spec ``source`` with a :class:`SpecWarning`; returns
    the line (for the run's summary)."""
    line = f"{source}: {field}: {message}"
    warnings.warn(line, SpecWarning, stacklevel=2)
    return line


def check_consistency(spec: dict, source: str = "<spec>") -> None:
    """Refuse fields that contradict each other so that no run is meaningful.

    >>> resolve({"run": {"duration": 1.0, "step": 2.0}}, "s.toml")
    Traceback (most recent call last):
    ...
    experiments.spec.SpecError: s.toml: run.step: expected a step <= run.duration (1), got 2.0: the run would be one step longer than itself
    """
    run = spec["run"]
    if run["step"] > run["duration"]:
        raise SpecError(source, "run.step", f"expected a step <= run.duration "
                        f"({run['duration']:g}), got {run['step']!r}: the run would be one "
                        "step longer than itself")
    if run["warmup"] >= run["duration"]:
        raise SpecError(source, "run.warmup", f"expected a warm-up < run.duration "
                        f"({run['duration']:g}), got {run['warmup']!r}: nothing would be "
                        "measured")
    if run["capture"] and run["backend"] != "simpy":
        raise SpecError(source, "run.capture", f"true runs on the simpy backend only, got "
                        f"run.backend = {run['backend']!r} (capture its hosts' "
                        "interfaces with tcpdump instead)")
    if run["capture"]:
        from emulator.pcap.capture import capturable

        why = capturable(spec["network"]["routing"])
        if why is not None:
            raise SpecError(source, "run.capture", f"true: {why}")
    routing, runs = spec["network"]["routing"], BACKEND_ROUTINGS.get(run["backend"], ())
    if routing not in runs:
        raise SpecError(source, "network.routing", f"{routing!r} does not run on the "
                        f"{run['backend']} backend (run.backend); it runs "
                        f"{' or '.join(repr(r) for r in runs)}")
    try:
        check_routing(spec["routing"])
    except FieldError as err:
        raise SpecError(source, err.field, err.message) from None
    if spec["radio"]["model"] == "log_distance" and run["backend"] != "simpy":
        raise SpecError(source, "radio.model", f"\"log_distance\" runs on the simpy backend "
                        f"only (run.backend = {run['backend']!r}: its links lose packets "
                        "whatever their size)")
    if spec["network"]["queue_max_wait"] is not None and run["backend"] != "simpy":
        raise SpecError(source, "network.queue_max_wait", f"runs on the simpy backend only "
                        f"(run.backend = {run['backend']!r}: Mininet's queues are the "
                        "kernel's)")
    mac = spec.get("mac")
    if mac is not None and mac["model"] != "ideal":
        if run["backend"] != "simpy":
            raise SpecError(source, "mac.model", f"\"{mac['model']}\" runs on the simpy "
                            f"backend only (run.backend = {run['backend']!r}: Mininet's "
                            "links have no shared channel)")
        if spec["network"]["medium"] != "shared":
            raise SpecError(source, "mac.model", f"\"{mac['model']}\" needs network.medium "
                            f"= \"shared\", got \"{spec['network']['medium']}\"")
    if spec["energy"]["model"] != "none" and run["backend"] != "simpy":
        raise SpecError(source, "energy.model", f"{spec['energy']['model']!r} runs on the "
                        f"simpy backend only (run.backend = {run['backend']!r}): batteries "
                        "are charged hop by hop in virtual time")


def spec_warnings(spec: dict) -> list[tuple[str, str]]:
    """``(field, message)`` for each field whose value the run will not honour as
    written, though the run is still meaningful (its plan records them; see
    :func:`experiments.planning.build_plan`).

    >>> spec_warnings(resolve({"run": {"duration": 5.0}, "query": {"window": 8.0}}))
    [('query.window', '8 is longer than the run (run.duration = 5): every tuple stays in the window to the end')]
    """
    run, query = spec["run"], spec["query"]
    duration = run["duration"]
    found = []
    mac, radio = spec.get("mac"), spec["radio"]
    if mac is not None and mac["model"] == "ideal":
        mac = None   # the perfect scheduler: no standard, no airtime
    if mac is not None and radio["model"] == "log_distance":
        wifi = radio["modulation"].startswith("dsss")
        if wifi != (mac["model"] == "802.11"):
            found.append(("mac.model", f"\"{mac['model']}\" under radio.modulation = "
                          f"\"{radio['modulation']}\" (the other standard's PHY): the "
                          "MAC's airtimes are its own standard's"))
    if mac is not None and radio["model"] == "log_distance":
        from emulator.mac.config import decode_range_m, mac_from_table
        from topologies.radio import radio_from_table

        model = radio_from_table(radio)
        links_m, decoded_m = model.range_m(), decode_range_m(mac_from_table(mac), model)
        if links_m > 1.01 * decoded_m:
            found.append(("mac.detect_dbm", f"the radio links nodes up to {links_m:.0f} m, "
                          f"the MAC decodes a frame up to {decoded_m:.0f} m (detect_dbm, "
                          "noise_dbm + sinr_db): routes take links whose frames never "
                          "arrive; radio.sensitivity_dbm = -82 gives ns-3's rule to both"))
    if mac is not None and mac["model"] == "802.15.4":
        from emulator.mac.standards import CsmaCa802154

        from emulator.mac.sixlowpan import Fragmentation

        largest = CsmaCa802154().max_psdu_bytes - CsmaCa802154().header_bytes
        packet = run["bytes_per_unit"] + run["header_bytes"]
        if not mac.get("fragmentation", True) and packet > largest:
            found.append(("run.bytes_per_unit", f"a data packet of {packet} bytes "
                          f"(with run.header_bytes) is longer than an 802.15.4 frame "
                          f"carries ({largest}) and mac.fragmentation = false: every "
                          "one is lost as frame_too_long"))
        elif packet > Fragmentation.mtu_bytes:
            found.append(("run.bytes_per_unit", f"a data packet of {packet} bytes "
                          f"(with run.header_bytes) is longer than 6LoWPAN fragments "
                          f"({Fragmentation.mtu_bytes}, IPv6's MTU): every one is lost "
                          "as frame_too_long"))
    if run["memory_interval"] > duration:
        found.append(("run.memory_interval", f"{run['memory_interval']:g} is longer than "
                      f"the run (run.duration = {duration:g}): memory is sampled once, at "
                      "the start"))
    windows = {"query.window": query["window"]}
    windows.update({f"query.windows.{s}": w for s, w in query["windows"].items()})
    for field, window in windows.items():
        if window is not None and not math.isinf(window) and window > duration:
            found.append((field, f"{window:g} is longer than the run (run.duration = "
                                 f"{duration:g}): every tuple stays in the window to the end"))
    return found


def _check_sweep(source: str, sweep) -> dict:
    if not isinstance(sweep, dict):
        raise SpecError(source, "sweep", "expected a table")
    bad = sorted(set(sweep) - {"seeds", "grid", "variants"})
    if bad:
        raise SpecError(source, f"sweep.{bad[0]}", "unknown key; valid: grid, seeds, "
                                                   "variants")
    seeds = sweep.get("seeds", [])
    if not isinstance(seeds, list) or not all(isinstance(s, int) and not isinstance(s, bool)
                                              for s in seeds):
        raise SpecError(source, "sweep.seeds", f"expected a list of integers, got {seeds!r}")
    grid = sweep.get("grid", {})
    if not isinstance(grid, dict):
        raise SpecError(source, "sweep.grid", "expected a table of dotted paths to lists")
    for path, values in grid.items():
        if not isinstance(values, list) or not values:
            raise SpecError(source, f"sweep.grid.{path}", f"expected a non-empty list, "
                                                          f"got {values!r}")
        _check_sweep_path(source, f"sweep.grid.{path}", path)
    variants = sweep.get("variants", {})
    if not isinstance(variants, dict):
        raise SpecError(source, "sweep.variants", "expected a table of named variants, "
                                                  "each a table of dotted paths to values")
    for name, overrides in variants.items():
        if not isinstance(overrides, dict):
            raise SpecError(source, f"sweep.variants.{name}", "expected a table of dotted "
                                                              "paths to values")
        for path in overrides:
            if path in grid:
                raise SpecError(source, f"sweep.variants.{name}.{path}", "also swept in "
                                "sweep.grid: a variant sets what the grid does not")
            _check_sweep_path(source, f"sweep.variants.{name}.{path}", path)
    checked = {"seeds": list(seeds), "grid": dict(grid)}
    if variants:
        checked["variants"] = dict(variants)
    return checked


def _check_sweep_path(source: str, field: str, path: str) -> None:
    """A dotted path a sweep sets must name a field of a spec section."""
    section = path.split(".")[0]
    if section not in SECTIONS or section == "sweep" or "." not in path:
        raise SpecError(source, field, "expected a dotted path into a spec section, like "
                                       "streams.count")
    problem = unknown_path(path)
    if problem:
        raise SpecError(source, field, problem)


def section_keys(section: str) -> set[str] | None:
    """The keys a section's table may hold (None: any, for the trigger tables, whose
    variant tables are named by the user).

    >>> sorted(section_keys("network"))
    ['interference_radius', 'medium', 'queue_max_wait', 'reorder', 'routing']
    """
    if section in SCHEMA:
        return set(SCHEMA[section])
    if section in ("topology", "mobility"):
        from topologies.spec import section_keys as topology_keys

        return topology_keys(section)
    if section == "streams":
        from spark_nodes.workload.sources import STREAMS_KEYS

        return set(STREAMS_KEYS)
    if section == "mininet":
        from emulator.mininet.options import MININET_SCHEMA

        return set(MININET_SCHEMA)
    if section == "enrich":
        from spark_nodes.algorithms.enrich.table import ENRICH_SCHEMA

        return set(ENRICH_SCHEMA)
    if section == "mac":
        from emulator.mac.config import all_keys

        return all_keys()
    return None


def unknown_path(path: str) -> str | None:
    """Why the dotted ``path`` names no field a spec can have (None: it names one).

    A sweep over a mistyped path would run every point with the spec's own value and
    report an axis that changed nothing.

    >>> unknown_path("run.duraton")
    'run has no key duraton; valid: backend, bytes_per_unit, capture, drain, duration, header_bytes, memory_interval, name, run_ahead, runtime, seed, spark_master, step, synopsis_unit, warmup'
    >>> unknown_path("params.centralized.bach")
    'algorithm centralized has no parameter bach; valid: batch, retention'
    >>> unknown_path("query.windows.R1") is None
    True
    >>> unknown_path("routing.aodv.helo_interval")[:46]
    'routing.aodv has no key helo_interval; valid: '
    """
    section, *rest = path.split(".")
    if section in ("params", "trigger"):
        from spark_nodes.algorithms.registry import ALGORITHMS

        if rest[0] not in ALGORITHMS.names():
            return f"no such algorithm {rest[0]!r}; valid: {', '.join(ALGORITHMS.names())}"
        params = ALGORITHMS.get(rest[0]).params
        if section == "params" and len(rest) > 1 and rest[1] not in params:
            return (f"algorithm {rest[0]} has no parameter {rest[1]}; valid: "
                    f"{', '.join(sorted(params)) or '(none)'}")
        return None
    keys = section_keys(section)
    if section == "routing" and len(rest) > 1 and rest[0] in ROUTING_TABLES:
        keys, section, rest = ROUTING_TABLES[rest[0]], f"routing.{rest[0]}", rest[1:]
    if section == "enrich" and len(rest) > 1 and rest[0] == "table":
        from spark_nodes.algorithms.enrich.table import TABLE_SCHEMA

        keys, section, rest = set(TABLE_SCHEMA), "enrich.table", rest[1:]
    if keys is None or rest[0] in keys:
        return None
    return f"{section} has no key {rest[0]}; valid: {', '.join(sorted(keys))}"


def get_path(spec: dict, path: str, default=None):
    """``spec[a][b][c]`` for ``path = "a.b.c"``, ``default`` where a part is missing.

    >>> get_path({"network": {"routing": "aodv"}}, "network.routing"), get_path({}, "run.seed", 1)
    ('aodv', 1)
    """
    node = spec
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def set_path(spec: dict, path: str, value) -> None:
    """Set ``spec[a][b][c] = value`` for ``path = "a.b.c"`` (creating tables).

    >>> s = {"streams": {"count": 3}}; set_path(s, "streams.count", 5); s["streams"]["count"]
    5
    """
    *parents, leaf = path.split(".")
    node = spec
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value


def for_run(spec: dict, source: str = "<spec>") -> dict:
    """The spec as one run sees it: only the chosen algorithm's ``params`` and ``trigger``
    tables are kept, so those of other algorithms (there for sweeps) do not change the
    run's id, and every other key the run does not read is back at its default
    (:func:`experiments.inert.without_inert`), for the same reason.
    A table naming no known algorithm is an error.

    >>> s = resolve({"algorithm": {"name": "centralized"},
    ...              "params": {"centralized": {"batch": 2}, "naive": {}}})
    >>> for_run(s)["params"]
    {'centralized': {'batch': 2}}
    """
    from spark_nodes.algorithms.registry import ALGORITHMS

    known = ALGORITHMS.names()
    for section in ("params", "trigger"):
        for name in spec.get(section, {}):
            if name not in known:
                raise SpecError(source, f"{section}.{name}",
                                f"no such algorithm; valid: {', '.join(known)}")
    chosen = spec["algorithm"]["name"]
    out = without_inert(spec)
    for section in ("params", "trigger"):
        table = spec.get(section, {})
        out[section] = {chosen: table[chosen]} if chosen in table else {}
    return out


def expand(spec: dict, source: str = "<spec>") -> list[tuple[dict, dict]]:
    """The runs of a sweep: ``(run spec, {dotted path: value, "seed": seed})`` for every
    named variant (``[sweep.variants]``: a table of settings each) times every point of
    the grid times every seed (the spec's own seed when the sweep names none). The point
    names its variant under ``"variant"``.

    Points that give the same run (they differ only in keys the run does not read, such
    as another algorithm's parameters: :func:`for_run`) appear once; in the point, such
    keys are ``None``.

    >>> runs = expand(resolve({"sweep": {"seeds": [1, 2], "grid": {"streams.count": [3, 4]}}}))
    >>> [(p["streams.count"], p["seed"]) for _, p in runs]
    [(3, 1), (3, 2), (4, 1), (4, 2)]
    >>> runs = expand(resolve({"sweep": {"variants": {"ideal": {},
    ...                                               "manet": {"network.routing": "aodv"}}}}))
    >>> [(p["variant"], s["network"]["routing"]) for s, p in runs]
    [('ideal', 'oracle'), ('manet', 'aodv')]
    """
    runs, seen = [], set()
    for point, point_spec in _points(spec, source):
        inert = {f"{f.table}.{key}" for f in inert_settings(point_spec) for key in f.keys}
        resolved = for_run(point_spec, source)
        if run_id(resolved) in seen:
            continue
        seen.add(run_id(resolved))
        runs.append((resolved, {p: None if _under(p, inert) else v
                                for p, v in point.items()}))
    return runs


def _under(path: str, fields: set[str]) -> bool:
    """Whether the dotted ``path`` is one of ``fields`` or inside one of them."""
    return any(path == f or path.startswith(f"{f}.") for f in fields)


def _points(spec: dict, source: str, every_seed: bool = True):
    """``(point, resolved spec)`` for every point of the sweep in order (see
    :func:`expand`), before :func:`for_run`; only the first seed's unless
    ``every_seed``."""
    grid = spec["sweep"]["grid"]
    seeds = spec["sweep"]["seeds"] or [spec["run"]["seed"]]
    seeds = seeds if every_seed else seeds[:1]
    variants = spec["sweep"].get("variants") or {None: {}}
    paths = list(grid)
    for variant, values in itertools.product(variants,
                                             itertools.product(*(grid[p] for p in paths))):
        for seed in seeds:
            raw = copy.deepcopy(spec)
            raw["sweep"] = {}
            for path, value in [*variants[variant].items(), *zip(paths, values)]:
                set_path(raw, path, value)
            raw["run"]["seed"] = seed
            point = dict(zip(paths, values))
            if variant is not None:
                point["variant"] = variant
            point["seed"] = seed
            yield point, resolve(raw, source)


def warn_inert(spec: dict, source: str = "<spec>") -> list[str]:
    """Warn once per table about the keys of a resolved spec that no run of it reads
    (:func:`experiments.inert.inert_settings`; for a sweep, the keys no point reads);
    returns the lines.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     warn_inert(resolve({"energy": {"battery_j": 2.0}}), "s.toml")
    ['s.toml: energy: battery_j does nothing under energy.model = "none" (no node spends energy; "first_order" gives batteries); the run and its id are those without it']
    """
    try:
        # a seed changes no model: one seed's points say it all
        findings = [inert_settings(s) for _, s in _points(spec, source, every_seed=False)]
    except SpecError:   # a point that cannot run: expand names it where it is run
        findings = [inert_settings(spec)]
    return [warn(source, f.table, f.message()) for f in common_inert(findings)]


def canonical_json(spec: dict) -> str:
    """The spec as canonical JSON (sorted keys; infinity spelled "inf")."""
    return json.dumps(_jsonable(spec), sort_keys=True, separators=(",", ":"))


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


#: Keys hashed into a run's id only when they differ from this value: added after runs
#: were stored, they leave the ids of specs that do not use them as they were.
HASHED_WHEN_NOT = {("run", "warmup"): 0.0, ("run", "capture"): False,
                   ("energy", "profile"): "cc2420", ("routing", "rpl"): {},
                   **{("energy", key): None for key in PROFILE_KEYS}}


def run_id(spec: dict) -> str:
    """``<name>-<12 hex digits of the spec's hash>``: equal specs, equal folders.

    >>> spec = resolve({"run": {"name": "a"}})
    >>> run_id(spec) == run_id({**spec, "run": {**spec["run"], "warmup": 2.0}})
    False
    >>> run_id(spec) == run_id({**spec, "run": {k: v for k, v in spec["run"].items()
    ...                                         if k != "warmup"}})
    True
    """
    hashed = dict(spec)
    if hashed.get("mac", {}).get("model", "ideal") == "ideal":   # as no [mac] table
        hashed.pop("mac", None)
    for (section, key), unset in HASHED_WHEN_NOT.items():
        table = hashed.get(section)
        if isinstance(table, dict) and table.get(key, unset) == unset:
            hashed[section] = {k: v for k, v in table.items() if k != key}
    digest = hashlib.sha256(canonical_json(hashed).encode()).hexdigest()[:12]
    return f"{spec['run']['name']}-{digest}"
