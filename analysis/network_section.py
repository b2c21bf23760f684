"""Report section of the network layer: routing protocols beside the oracle, and link order.

Written when a sweep varies ``network.routing`` or ``network.reorder``
(:data:`analysis.families.AXIS_SECTIONS`), over every algorithm's runs; a sweep that
also varies the medium gets it once per medium.

* Per setting (algorithm, routing, link order, node speed, offered load and any other
  swept axis), means over seeds with 95 % confidence intervals: delivery ratio, routing
  packets per second (the protocol's own: HELLO, RREQ, RREP, RERR, TC; the routed drop
  notices, ICMP's part, apart), routing bytes per second, the network delay of the
  delivered data messages, the first packet's wait for a route, no-route drops before
  the protocol could have converged, drops by reason, and the algorithm's recall.
* Figures (``network.routing`` swept): those four against node speed, one panel per
  offered load, one line per routing (against the offered load when the speed is not
  swept, bars per algorithm when neither is).
* Each trend beside what is known of ns-3's AODV and OLSR (:func:`trends`).
* Every headline number (cost, recall, latency, memory, delivery, delay) against the
  baseline of each swept network key — routing: the oracle; links: in order — paired
  by seed (:func:`paired`).

A node's speed is its mobility model's mean speed as the spec sets it (:func:`node_speed`:
the mean of the ``mobility.speed`` range, Gauss-Markov's ``mean_velocity``; 0 without
mobility), in the spec's distance units per time unit; the offered load is
``streams.rate``, in tuples (messages, for the centralized join) per time unit per
source. Rates per second divide by the time the protocols ran: the duration plus the
drain, less a warm-up (``[run] warmup``: the summary and the counts leave it out).

Example
-------
>>> node_speed({"mobility": {"model": "random_waypoint", "speed": [0.01, 0.03]}})
0.02
>>> node_speed({"mobility": {"model": "gauss_markov", "mean_velocity": 0.05}})
0.05
>>> node_speed({}), offered_load({"streams": {"rate": [2.0, 4.0]}})
(0.0, 3.0)
>>> change(10.0, 12.5), change(0.5, 0.75, relative=False)
(25.0, 0.25)
"""
from __future__ import annotations

import html
import json
import math
from pathlib import Path
from typing import NamedTuple

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from analysis import plots
from analysis.loading import swept_params
from analysis.stats import fmt_ci, mean_ci
from experiments.spec import get_path
from experiments.store import Run, is_run_folder

PREFIX = "network"
ROUTING, REORDER = "network.routing", "network.reorder"
#: The network keys this section compares, each with the value the others are judged
#: against (paired by seed).
BASELINES = {ROUTING: "oracle", REORDER: False}
#: Spec paths the section turns into its own columns (``node_speed``, ``offered_load``).
AXES = {"mobility.speed": "node_speed", "mobility.model": "node_speed",
        "mobility.mean_velocity": "node_speed", "streams.rate": "offered_load"}
#: Per moving model, the ``[mobility]`` key its mean speed is read from: the middle of
#: the range each leg's speed is drawn from (rpgm: its reference points' legs), or
#: Gauss-Markov's mean. Pauses are not counted in (as for random waypoint before).
SPEED_KEYS = {"random_waypoint": "speed", "random_walk": "speed",
              "random_direction": "speed", "rpgm": "speed",
              "gauss_markov": "mean_velocity"}
#: The routing protocol's own packets; a ``NOTICE`` (a routed drop report) is counted apart.
NOTICE = "NOTICE"
#: No-route drops this early (in seconds, scaled by ``routing.seconds_per_unit``) are
#: counted as start-up drops: OLSR's RFC timers converge within a few HELLO intervals.
STARTUP_SECONDS = 10.0
#: A change of routing packets per second smaller than this (relative) counts as steady.
STEADY = 0.10
#: Below this delivery ratio of the oracle (at the slowest speed) a load saturates the
#: network: what the protocols do there is the medium's doing, and trends are not judged.
SATURATED = 0.9
DROP_REASONS = ("no_route", "link_break", "queue_full", "queue_expired", "ttl", "dead_node",
                "link_loss")

#: (column, table header, figure label) of the per-setting means.
METRICS = [
    ("delivery_ratio", "delivery ratio", "delivery ratio [fraction]"),
    ("routing_packets_per_time", "routing packets / time",
     "routing packets per time unit [packets]"),
    ("drop_notices_per_time", "drop notices / time", "drop notices per time unit"),
    ("routing_bytes_per_time", "routing bytes / time", "routing bytes per time unit [B]"),
    ("message_delay_mean", "message delay", "end-to-end delay of data messages\n[time units]"),
    ("route_discovery_latency_mean", "first packet's wait",
     "first packet's wait for a route\n[time units]"),
    ("startup_no_route", "start-up no-route drops", "no-route drops at start-up"),
    ("recall", "recall", "recall [fraction]"),
]
#: The four a networking paper draws.
FIGURES = ["delivery_ratio", "routing_packets_per_time", "message_delay_mean",
           "route_discovery_latency_mean"]
#: Headline numbers compared with the baseline: (column, label, relative change?).
HEADLINE = [("comm_cost_per_time", "cost / time", True), ("recall", "recall", False),
            ("latency_mean", "latency", True), ("memory_mean_tuples", "memory", True),
            ("delivery_ratio", "delivery ratio", False),
            ("message_delay_mean", "message delay", True)]
ROUTING_STYLES = {"oracle": {"color": "#000000", "marker": "s", "linestyle": "--"},
                  "aodv": {"color": "#d62728", "marker": "o", "linestyle": "-"},
                  "olsr": {"color": "#1f77b4", "marker": "^", "linestyle": "-"}}


def _e(x) -> str:
    return html.escape(str(x))


def node_speed(spec: dict) -> float:
    """The mean speed a moving model's keys give (:data:`SPEED_KEYS`), 0 without
    mobility, NaN for a trace or a schedule (their speed is not a spec value).

    >>> node_speed({"mobility": {"model": "rpgm", "speed": [0.02, 0.04],
    ...                          "max_distance": 0.1}})
    0.03
    >>> node_speed({"mobility": {"model": "ns2", "file": "walk.ns_movements"}})
    nan
    """
    mobility = spec.get("mobility", {})
    model = mobility.get("model", "random_waypoint" if "speed" in mobility else "none")
    if model == "none":
        return 0.0
    if model in SPEED_KEYS and SPEED_KEYS[model] in mobility:
        return float(np.mean(_as_list(mobility[SPEED_KEYS[model]])))
    return math.nan


def offered_load(spec: dict) -> float:
    """``streams.rate`` per source (the mean of a list of rates)."""
    return float(np.mean(_as_list(spec.get("streams", {}).get("rate", math.nan))))


def _as_list(value) -> list:
    """A spec value as a list: JSON text (how runs tables keep lists) or a sequence."""
    if isinstance(value, str):
        value = json.loads(value)
    return list(np.ravel(np.asarray(value, dtype=float)))


def change(base: float, value: float, relative: bool = True) -> float:
    """``value`` against ``base``: in % when ``relative``, else the difference."""
    if not relative:
        return value - base
    return 100.0 * (value - base) / base if base else math.nan


def _spec_of(row, dirs: dict) -> dict:
    path = dirs.get(row["run_id"])
    return Run(path).spec if path is not None and is_run_folder(path) else {}


def run_facts(runs: pd.DataFrame, run_dirs: list[Path]) -> pd.DataFrame:
    """``runs`` plus the section's per-run columns: ``routing``, ``reorder``,
    ``node_speed``, ``offered_load``, ``horizon`` (duration + drain - warmup), the routing
    packets and drop notices (from ``meta.json``) and their rates, control packets of
    each type per time unit (``<TYPE>_per_time``), ``drops_<reason>`` (from
    ``drops_by_reason``) and ``startup_no_route`` (``metrics.parquet``). Swept columns
    win over ``spec.json``; a row without a folder keeps what its columns say."""
    dirs = {Path(d).name: Path(d) for d in run_dirs}
    rows = []
    for _, r in runs.iterrows():
        spec = _spec_of(r, dirs)
        merged = json.loads(json.dumps(spec))   # a copy, with the swept values set
        for path in [c for c in runs.columns if isinstance(c, str) and "." in c]:
            value = r[path]
            if value is not None and not (isinstance(value, float) and math.isnan(value)):
                _set(merged, path, value)
        duration = float(get_path(merged, "run.duration", math.nan))
        drain = get_path(merged, "run.drain")
        # the summary's figures leave out a warm-up: rates over what is left of the run
        warmup = float(get_path(merged, "run.warmup", 0.0) or 0.0)
        # without spec.json nor a swept mobility column the speed is unknown
        known = bool(spec) or "mobility" in merged
        facts = {"routing": get_path(merged, ROUTING, "oracle"),
                 "reorder": bool(get_path(merged, REORDER, False)),
                 "node_speed": node_speed(merged) if known else math.nan,
                 "offered_load": offered_load(merged),
                 "horizon": duration + (duration if drain is None else float(drain))
                 - warmup}
        facts.update(_control(dirs.get(r["run_id"]), r, facts["horizon"]))
        facts.update(_drops(r.get("drops_by_reason")))
        facts["startup_no_route"] = _startup_no_route(
            dirs.get(r["run_id"]), STARTUP_SECONDS / float(
                get_path(merged, "routing.seconds_per_unit", 1.0)))
        rows.append(facts)
    facts = pd.DataFrame(rows, index=runs.index)
    return pd.concat([runs.drop(columns=[c for c in facts.columns if c in runs.columns]),
                      facts], axis=1)


def _set(spec: dict, path: str, value) -> None:
    parts = path.split(".")
    node = spec
    for part in parts[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            return
    node[parts[-1]] = value


def _control(path: Path | None, row, horizon: float) -> dict:
    """Routing packets by type per time unit, from ``meta.json`` (those sent after a
    warm-up, ``backend_info.measured``, where the run had one); without a folder, every
    routing ledger row counts as a routing packet (the summary does not split them)."""
    sent = {}
    if path is not None and is_run_folder(path):
        info = Run(path).meta.get("backend_info", {})
        sent = info.get("measured", info.get("network", {})).get("control_sent", {})
    out = {f"{kind}_per_time": n / horizon for kind, n in sent.items()}
    if sent:
        packets = float(sum(n for kind, n in sent.items() if kind != NOTICE))
        notices = float(sent.get(NOTICE, 0))
    else:   # the oracle, or no folder: the summary's count, notices not told apart
        total = row.get("routing_control_messages")
        packets = math.nan if total is None else float(total)
        notices = 0.0 if packets == 0 else math.nan
    out.update({"routing_packets": packets, "drop_notices": notices,
                "routing_packets_per_time": packets / horizon,
                "drop_notices_per_time": notices / horizon,
                "routing_bytes_per_time": float(row.get("routing_control_bytes", math.nan)
                                                or 0.0) / horizon})
    return out


def _drops(text) -> dict:
    """``drops_<reason>`` columns of a ``drops_by_reason`` cell (JSON text)."""
    if not isinstance(text, str):
        return {}
    return {f"drops_{reason}": float(n) for reason, n in json.loads(text).items()}


def _startup_no_route(path: Path | None, until: float) -> float:
    """No-route drops of data messages before ``until`` (``source = "network"`` rows)."""
    if path is None or not is_run_folder(path) or not Run(path).has_table("metrics"):
        return math.nan
    m = Run(path).table("metrics", ["time", "source", "metric", "value"])
    rows = m[(m["source"] == "network") & (m["metric"] == "drops_no_route")
             & (m["time"] < until)]
    return float(rows["value"].sum())


def setting_columns(facts: pd.DataFrame) -> list[str]:
    """What tells settings apart: the algorithm, routing, link order, speed, load and
    any other swept axis, each only when it takes more than one value (routing always)."""
    own = {ROUTING, REORDER, *AXES}
    others = [p for p in swept_params(facts) if p not in own]
    cols = ["algorithm", "routing", "reorder", "node_speed", "offered_load", *others]
    return [c for c in cols if c == "routing" or facts[c].nunique(dropna=False) > 1]


def control_columns(facts: pd.DataFrame) -> list[str]:
    """The ``<TYPE>_per_time`` columns: control packets of one type per time unit."""
    return sorted(c for c in facts.columns
                  if isinstance(c, str) and c.endswith("_per_time")
                  and c.removesuffix("_per_time").isupper())


def per_setting(facts: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    """Mean, 95 % CI half-width (``<metric>_ci95``) and seeds of :data:`METRICS` and the
    drops by reason, per setting."""
    by = setting_columns(facts) if by is None else by
    metrics = [m for m, _, _ in METRICS] + [f"drops_{r}" for r in DROP_REASONS] + \
        control_columns(facts)
    rows = []
    for key, g in facts.groupby(by, dropna=False, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key))
        row["seeds"] = int(g["seed"].nunique())
        for m in metrics:
            if m in g:
                # a drop reason a run did not report is none of that kind
                values = g[m].fillna(0.0) if m.startswith("drops_") else g[m]
                row[m], row[f"{m}_ci95"], _ = mean_ci(values)
        rows.append(row)
    return pd.DataFrame(rows)


class Trend(NamedTuple):
    """One trend: what ns-3's AODV and OLSR are known for, what was measured, and
    whether the two agree (None: the sweep cannot tell)."""

    trend: str
    ns3: str
    measured: str
    agrees: bool | None


def _at(table: pd.DataFrame, routing: str, **where) -> pd.DataFrame:
    rows = table[table["routing"] == routing]
    for column, value in where.items():
        rows = rows[rows[column] == value]
    return rows


def _speed_change(table: pd.DataFrame, routing: str, metric: str,
                  relative: bool = True) -> list[tuple]:
    """Per offered load (and algorithm): ``(load, slowest value, fastest value, change)``
    of ``metric`` for ``routing`` between the slowest and the fastest speed."""
    out = []
    rows = _at(table, routing)
    groups = [c for c in ("algorithm", "offered_load") if c in rows]
    for key, g in (rows.groupby(groups, sort=True) if groups else [((), rows)]):
        g = g.sort_values("node_speed")
        if len(g) < 2 or g["node_speed"].nunique() < 2:
            continue
        lo, hi = float(g[metric].iloc[0]), float(g[metric].iloc[-1])
        load = g["offered_load"].iloc[0] if "offered_load" in g else None
        out.append((load, lo, hi, change(lo, hi, relative)))
    return out


def saturated_loads(table: pd.DataFrame) -> set:
    """Offered loads at which the network is saturated: the oracle delivers less than
    :data:`SATURATED` of the data messages at the slowest speed (none without an oracle
    or an offered-load column). Trends are judged below saturation only."""
    if "offered_load" not in table or "oracle" not in set(table["routing"]):
        return set()
    oracle = _at(table, "oracle")
    if "node_speed" in oracle:
        oracle = oracle[oracle["node_speed"] == oracle["node_speed"].min()]
    low = oracle.groupby("offered_load")["delivery_ratio"].mean()
    return {load for load, ratio in low.items() if ratio < SATURATED}


def _loads(changes: list[tuple], unit: str = "%", digits: int = 3,
           saturated: set = frozenset()) -> str:
    parts = []
    for load, lo, hi, d in changes:
        at = "" if load is None else f"load {load:g}{'*' if load in saturated else ''}: "
        sign = "+" if d >= 0 else ""
        parts.append(f"{at}{lo:.{digits}g} → {hi:.{digits}g} ({sign}{d:.{digits}g}{unit})")
    return "; ".join(parts)


def _judged(changes: list[tuple], saturated: set) -> list[tuple]:
    return [c for c in changes if c[0] not in saturated]


def trends(table: pd.DataFrame) -> list[Trend]:
    """Each trend of :func:`per_setting`'s table beside ns-3's AODV and OLSR.

    ``table`` needs ``routing`` and ``node_speed``; a trend that needs a protocol or a
    speed range the table lacks is left out. Changes with speed are given per offered
    load and judged at the loads below saturation (:func:`saturated_loads`, marked *)."""
    out = []
    has = set(table["routing"])
    speeds = table["node_speed"].nunique() > 1 if "node_speed" in table else False
    full = saturated_loads(table)

    def verdict(changes, holds):
        judged = _judged(changes, full)
        return all(holds(c) for c in judged) if judged else None

    if speeds and "aodv" in has:
        ch = _speed_change(table, "aodv", "routing_packets_per_time")
        out.append(Trend(
            "AODV's routing packets per second, slowest → fastest speed",
            "grow with mobility: every broken link costs RERRs and a new RREQ flood",
            _loads(ch, saturated=full), verdict(ch, lambda c: c[3] > 0)))
    if speeds and "olsr" in has:
        ch = _speed_change(table, "olsr", "routing_packets_per_time")
        parts = [_loads(ch, saturated=full)]
        for kind in ("HELLO", "TC"):
            col = f"{kind}_per_time"
            if col in table and table[col].notna().any():
                parts.append(f"{kind}: " + _loads(_speed_change(table, "olsr", col),
                                                  saturated=full))
        out.append(Trend(
            "OLSR's routing packets per second, slowest → fastest speed",
            f"steady: HELLOs and TCs on their timers, whatever the motion (within "
            f"±{STEADY:.0%} here)", " — ".join(parts),
            verdict(ch, lambda c: abs(c[3]) <= 100 * STEADY)))
    if "aodv" in has:
        waits = _at(table, "aodv")["route_discovery_latency_mean"]
        out.append(Trend(
            "AODV's first packet of a flow",
            "waits at its source for a route discovery (RREQ out, RREP back)",
            f"waits {waits.min():.3g}–{waits.max():.3g} time units on average "
            f"(the oracle 0)", bool((waits > 0).all())))
    if "olsr" in has:
        rows = _at(table, "olsr")
        waits = rows["route_discovery_latency_mean"]
        slowest = rows[rows["node_speed"] == rows["node_speed"].min()] \
            if "node_speed" in rows else rows
        out.append(Trend(
            "OLSR's first packet of a flow",
            "does not wait (routes are computed ahead), but packets sent before OLSR "
            "has converged find no route and are dropped",
            f"waits {waits.max():.3g}; no-route drops in the first "
            f"{STARTUP_SECONDS:g} s at the slowest speed: "
            + ", ".join(f"{v:.3g}" for v in slowest["startup_no_route"]),
            bool((waits == 0).all())))
    if speeds and {"aodv", "olsr"} <= has:
        aodv = _speed_change(table, "aodv", "delivery_ratio", relative=False)
        olsr = _speed_change(table, "olsr", "delivery_ratio", relative=False)
        pairs = [(a, o) for a, o in zip(aodv, olsr) if a[0] not in full]
        out.append(Trend(
            "Delivery ratio, slowest → fastest speed",
            "falls for both; more for OLSR, which (without link-layer feedback, ns-3's "
            "default) keeps a broken link until NEIGHB_HOLD_TIME, where AODV's MAC "
            "feedback breaks it at once",
            f"AODV {_loads(aodv, unit='', saturated=full)}; "
            f"OLSR {_loads(olsr, unit='', saturated=full)}",
            all(o[3] < a[3] for a, o in pairs) if pairs else None))
        light = min(table["offered_load"]) if "offered_load" in table else None
        a = _at(table, "aodv", **({"offered_load": light} if light is not None else {}))
        o = _at(table, "olsr", **({"offered_load": light} if light is not None else {}))
        order = [c for c in ("algorithm", "node_speed") if c in table]
        if len(a) and len(a) == len(o):
            a, o = a.sort_values(order), o.sort_values(order)
            lower = (o["message_delay_mean"].to_numpy() < a["message_delay_mean"].to_numpy())
            out.append(Trend(
                "End-to-end delay at the lightest load",
                "lower for OLSR: a proactive route is there when the packet is, AODV's "
                "packets wait for discoveries and repairs",
                "AODV " + ", ".join(f"{v:.3g}" for v in a["message_delay_mean"])
                + "; OLSR " + ", ".join(f"{v:.3g}" for v in o["message_delay_mean"])
                + " (slowest → fastest)", bool(lower.all())))
    return out


def paired(facts: pd.DataFrame, key: str, baseline,
           metrics=HEADLINE, by: list[str] | None = None) -> pd.DataFrame:
    """Each headline number of every run against the run of the same seed and setting
    at ``key = baseline``: mean and CI of the change (% where relative, else the
    difference: ``d_<metric>``), and the means of the pairs' two sides
    (``base_<metric>``, ``<metric>``). A setting is told apart by ``by``; default: the
    :func:`setting_columns` but routing and link order, and the one of those two that
    ``key`` (``routing`` or ``reorder``) is not, when it varies."""
    if by is None:
        by = [c for c in setting_columns(facts) if c not in ("routing", "reorder")]
        other = "reorder" if key == "routing" else "routing"
        by += [other] if facts[other].nunique() > 1 else []
    present = [(m, label, rel) for m, label, rel in metrics if m in facts]
    columns = [m for m, _, _ in present]
    base = (facts[facts[key] == baseline].groupby(by + ["seed"], dropna=False)[columns]
            .mean().reset_index())
    pairs = facts[facts[key] != baseline][by + ["seed", key] + columns].merge(
        base, on=by + ["seed"], how="inner", suffixes=("", "_base"))
    rows = []
    for values, g in pairs.groupby(by + [key], dropna=False, sort=True):
        values = values if isinstance(values, tuple) else (values,)
        row = dict(zip(by + [key], values))
        row["seeds"] = int(g["seed"].nunique())
        for m, _, relative in present:
            both = g[[f"{m}_base", m]].dropna()
            diffs = [change(b, v, relative) for b, v in both.itertuples(index=False)]
            row[f"d_{m}"], row[f"d_{m}_ci95"], _ = mean_ci(diffs)
            row[f"base_{m}"] = float(both[f"{m}_base"].mean()) if len(both) else math.nan
            row[m] = float(both[m].mean()) if len(both) else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


# -- figures ---------------------------------------------------------------------------
def _speed_text(v: float) -> str:
    return "0" if v < 1e-6 else f"{v:.3g}"


def _order(routings) -> list[str]:
    known = list(ROUTING_STYLES)
    return sorted(set(routings), key=lambda r: (known.index(r) if r in known else len(known), r))


def _x_text(x: str, v) -> str:
    if x == "node_speed":
        return _speed_text(v)
    return f"{v:g}" if isinstance(v, (int, float, np.number)) else str(v)


def _x_label(x: str) -> str:
    return {"node_speed": "mean node speed [distance units / time unit]",
            "offered_load": "offered load [tuples / time unit per source]"}.get(
        x, plots.param_label(x))


def figure(table: pd.DataFrame, metric: str, label: str, x: str,
           panel: str | None) -> Figure:
    """``metric`` against ``x`` (its values as categories, in order), one panel per
    value of ``panel``, one line per routing (and algorithm), error bars 95 % CI over
    seeds. Rows that differ in nothing drawn are averaged."""
    panels = sorted(table[panel].unique()) if panel else [None]
    xs = sorted(table[x].unique(), key=plots.value_order)
    several = "algorithm" in table and table["algorithm"].nunique() > 1
    algorithms = sorted(table["algorithm"].unique()) if several else [None]
    lines = [(r, a) for a in algorithms for r in _order(table["routing"])]
    width = 0.5 / max(len(lines), 1)
    with matplotlib.rc_context(plots.STYLE):
        fig = Figure(figsize=(max(plots.FIGSIZE[0], 3.6 * len(panels)), plots.FIGSIZE[1]),
                     layout="constrained")
        axes = fig.subplots(1, len(panels), squeeze=False)[0]
        for ax, p in zip(axes, panels):
            rows = table if p is None else table[table[panel] == p]
            for k, (routing, algorithm) in enumerate(lines):
                g = rows[rows["routing"] == routing]
                if algorithm is not None:
                    g = g[g["algorithm"] == algorithm]
                if g.empty:
                    continue
                g = g.groupby(x, sort=False)[[metric, f"{metric}_ci95"]].mean()
                g = g.loc[sorted(g.index, key=plots.value_order)]
                style = dict(ROUTING_STYLES.get(routing, {"marker": "o", "linestyle": "-"}))
                if several:
                    style["linestyle"] = ["-", "--", ":", "-."][algorithms.index(algorithm) % 4]
                pos = np.array([xs.index(v) for v in g.index], dtype=float) \
                    + (k - (len(lines) - 1) / 2) * width
                ax.errorbar(pos, g[metric].to_numpy(dtype=float),
                            yerr=np.nan_to_num(g[f"{metric}_ci95"].to_numpy(dtype=float)),
                            capsize=3, label=f"{algorithm}, {routing}" if several else routing,
                            **style)
            ax.set_xticks(range(len(xs)), [_x_text(x, v) for v in xs])
            ax.set_xlabel(_x_label(x))
            ax.set_ylabel(label)
            if p is not None:
                ax.set_title(f"offered load {p:g} per source" if panel == "offered_load"
                             else f"{panel} = {p}")
        axes[0].legend()
    return fig


def bar_figure(table: pd.DataFrame, metric: str, label: str) -> Figure:
    """``metric`` per algorithm, one bar per routing, error bars 95 % CI."""
    algorithms = sorted(table["algorithm"].unique())
    routings = sorted(table["routing"].unique(), key=lambda r: (r != "oracle", r))
    width = 0.8 / len(routings)
    with matplotlib.rc_context(plots.STYLE):
        fig = Figure(figsize=plots.FIGSIZE, layout="constrained")
        ax = fig.subplots()
        for k, routing in enumerate(routings):
            g = table[table["routing"] == routing].groupby("algorithm")[
                [metric, f"{metric}_ci95"]].mean().reindex(algorithms)
            ax.bar(np.arange(len(algorithms)) + (k - (len(routings) - 1) / 2) * width,
                   g[metric].to_numpy(dtype=float), width,
                   yerr=np.nan_to_num(g[f"{metric}_ci95"].to_numpy(dtype=float)), capsize=3,
                   color=ROUTING_STYLES.get(routing, {}).get("color"), label=routing)
        ax.set_xticks(range(len(algorithms)), algorithms)
        ax.set_ylabel(label)
        ax.legend()
    return fig


def _axes(table: pd.DataFrame) -> tuple[str | None, str | None]:
    """The figures' x axis and panels: node speed (panels: offered load) when the speed
    varies, else the offered load, else the first other swept axis; ``(None, None)``:
    bars per algorithm."""
    varies = [c for c in table.columns if c in ("node_speed", "offered_load")
              or (isinstance(c, str) and "." in c)]
    if "node_speed" in varies:
        return "node_speed", "offered_load" if "offered_load" in varies else None
    return (varies[0], None) if varies else (None, None)


def _figures(table: pd.DataFrame, out_dir: Path) -> str:
    x, panel = _axes(table)
    labels = {m: label for m, _, label in METRICS}
    parts = []
    for metric in FIGURES:
        if metric not in table or table[metric].isna().all():
            continue
        if x is not None:
            fig = figure(table, metric, labels[metric], x, panel)
            what = _x_label(x).split(" [")[0]
        else:
            fig = bar_figure(table if "algorithm" in table else table.assign(algorithm="all"),
                             metric, labels[metric])
            what = "algorithm"
        png = plots.save(fig, out_dir / "figures", f"{PREFIX}_{metric}")
        rel = png.relative_to(out_dir).as_posix()
        pdf = png.with_suffix(".pdf").relative_to(out_dir).as_posix()
        caption = (f"{labels[metric].splitlines()[0]} against {what}"
                   + (", one panel per offered load" if panel else "")
                   + "; mean over seeds, bars: 95 % CI")
        parts.append(f'<figure><img src="{_e(rel)}" alt="{_e(caption)}"><figcaption>'
                     f'{_e(caption)} (<a href="{_e(pdf)}">PDF</a>)</figcaption></figure>')
    return '<div class="figs">' + "".join(parts) + "</div>" if parts else ""


# -- tables ----------------------------------------------------------------------------
def _cell(row, m: str) -> str:
    return fmt_ci(row.get(m), row.get(f"{m}_ci95"))


def _html_table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _setting_text(row, columns: list[str]) -> list[str]:
    out = []
    for c in columns:
        v = row[c]
        out.append(_speed_text(v) if c == "node_speed" else
                   (f"{v:g}" if isinstance(v, float) else str(v)))
    return out


def _settings_html(table: pd.DataFrame, by: list[str]) -> str:
    # a column that is 0 everywhere (no protocol ran, nothing dropped) says nothing
    metrics = [(m, h) for m, h, _ in METRICS if m in table and table[m].fillna(0).ne(0).any()]
    drops = [r for r in DROP_REASONS if f"drops_{r}" in table and table[f"drops_{r}"].any()]
    header = [c.replace("_", " ") for c in by] + ["seeds"] + [h for _, h in metrics] + \
        [f"drops: {r}" for r in drops]
    rows = [_setting_text(r, by) + [str(r["seeds"])] + [_cell(r, m) for m, _ in metrics]
            + [_cell(r, f"drops_{d}") for d in drops] for _, r in table.iterrows()]
    return _html_table(header, rows)


def paired_change_cell(row, metric: str) -> str:
    """A :func:`paired` table cell: the change ± CI, and the two means in brackets."""
    return (f"{fmt_ci(row[f'd_{metric}'], row[f'd_{metric}_ci95'])} "
            f"({fmt_ci(row[f'base_{metric}'], math.nan)} → {fmt_ci(row[metric], math.nan)})")


def paired_table(frame: pd.DataFrame, metrics, cell=paired_change_cell,
                 shown=None) -> str:
    """The HTML table of a :func:`paired` frame: its setting columns, the seeds, and one
    column per metric of ``metrics`` (``(column, label, relative?)``) that ``shown``
    accepts (default: that has a change), each cell written by ``cell(row, metric)``."""
    metric_columns = {m for m, _, _ in metrics}
    by = [c for c in frame.columns if not c.startswith(("d_", "base_", "own_"))
          and c != "seeds" and c not in metric_columns]
    shown = shown or (lambda m: f"d_{m}" in frame and frame[f"d_{m}"].notna().any())
    header = [c.replace("_", " ") for c in by] + ["seeds"]
    rows = [_setting_text(r, by) + [str(r["seeds"])] for _, r in frame.iterrows()]
    for m, label, relative in metrics:
        if not shown(m):
            continue
        header.append(f"{label}: Δ{' %' if relative else ''} (baseline → this)")
        for cells, (_, r) in zip(rows, frame.iterrows()):
            cells.append(cell(r, m))
    return _html_table(header, rows)


def _paired_html(frame: pd.DataFrame, key: str, baseline) -> str:
    if frame.empty:
        return ""
    name = "routing" if key == "routing" else "link order (reorder)"
    return (f"<h3>Against {_e(name)} = {_e(baseline)}, paired by seed</h3>"
            + paired_table(frame, HEADLINE)
            + '<p class="note">Δ: mean ± 95 % CI over seeds of the change against the run '
              'of the same seed and setting at the baseline (relative in %, recall and '
              'delivery ratio as differences); in brackets the two means.</p>')


def _trends_html(items: list[Trend]) -> str:
    if not items:
        return ""
    verdict = {True: "as in ns-3", False: "differs", None: "–"}
    rows = [[t.trend, t.ns3, t.measured, verdict[t.agrees]] for t in items]
    return ("<h3>Beside ns-3's AODV and OLSR</h3>"
            + _html_table(["trend", "known of ns-3's AODV / OLSR", "measured", "verdict"],
                          rows)
            + '<p class="note">Where a trend differs, one place to look is what this model '
              "leaves out against ns-3: the shared medium is a perfect scheduler "
              "(no collisions, no carrier sense, so floods never collide), its queues have "
              "no limit unless <code>network.queue_max_wait</code> sets one (without it "
              "overload shows as delay, not as interface-queue drops), MAC retries take "
              "no time, and a protocol's packets queue with the data (no priority). "
              "* a saturated load: the oracle "
              f"delivers less than {SATURATED:.0%} there; not judged.</p>")


def section(runs: pd.DataFrame, run_dirs: list[Path], out_dir: Path) -> str:
    """The network section's HTML fragment (figures written into ``out_dir/figures``)."""
    out_dir = Path(out_dir)
    facts = run_facts(runs, run_dirs)
    swept = [k for k, col in ((ROUTING, "routing"), (REORDER, "reorder"))
             if facts[col].nunique() > 1]
    if not swept:
        return ""
    by = setting_columns(facts)
    table = per_setting(facts, by)
    table.to_csv(_tables(out_dir) / f"{PREFIX}_settings.csv", index=False)
    parts = [f"<p>{len(facts)} runs. Routing packets: the protocol's own (HELLO, RREQ, "
             "RREP, RERR, TC), per time unit of the run and its drain; drop notices (a "
             "relay's routed report of a dropped packet) apart. Delivery ratio and delay: "
             "data messages that crossed the network (sent → arrived). First packet's "
             "wait: at its source, for a route, mean over flows. Start-up no-route drops: "
             f"before {STARTUP_SECONDS:g} s.</p>",
             _settings_html(table, by)]
    if ROUTING in swept:
        parts.append(_figures(table, out_dir))
        parts.append(_trends_html(trends(table)))
    for key in swept:
        column = "routing" if key == ROUTING else "reorder"
        frame = paired(facts, column, BASELINES[key])
        frame.to_csv(_tables(out_dir) / f"{PREFIX}_paired_{column}.csv", index=False)
        parts.append(_paired_html(frame, column, BASELINES[key]))
    return "\n".join(p for p in parts if p)


def _tables(out_dir: Path) -> Path:
    path = out_dir / "tables"
    path.mkdir(parents=True, exist_ok=True)
    return path
