"""Report section of batteries: lifetime, results per joule, and where the energy went.

Written for the runs with an energy model (``[energy] model = "first_order"``: the
summary has ``energy_total_j``), once per variant of the network
(:data:`analysis.families.SUMMARY_SECTIONS`).

* Per setting (algorithm and every swept axis), means over seeds with 95 % confidence
  intervals: the first node death, when the query lost its sink (:func:`sink_lost`), the
  last result, nodes dead at the end, energy in total and per kind, results per joule,
  and the results emitted before the first death.
* Pairs named in :data:`LIFETIME_PAIRS` (SMJ against Lottery, CTR's ``cover`` storage
  against ``llf``), paired by seed: does the communication saving become a lifetime
  gain of the same size?
* Residual energy drawn on the topology (one seed per setting, nodes at their positions
  at the end of the run, dead and mains-powered nodes marked) and over time (mean and
  minimum over the battery nodes, per setting, mean over seeds).
* Under ``model = "radio_states"``, each node's radio-on time (transmitting, receiving
  or listening, as a share of its run) drawn on the topology the same way: where a
  duty-cycled field spends its energy (the relays near the sink strobe the most).

"The query loses its sink" has two readings, both measured from the run's deaths (in
``meta.json``) and its topology rebuilt from the resolved spec (deterministic under the
seed, :func:`experiments.planning.build_plan`): ``sink_cut_at``, the first time a
stream's node is dead or has no path of live nodes to the query node (every result
needs every stream, so the answer stops growing), and ``sink_isolated_at``, the first
time no stream's node reaches it. NaN: it did not happen inside the run. Times are
checked at every epoch of the topology and at every death.

Example
-------
>>> cut_times([(0.0, {0: {1}, 1: {0, 2}, 2: {1}}), (5.0, {0: set(), 1: {2}, 2: {1}})],
...           sink=0, sources=[1, 2], deaths={})
(5.0, 5.0)
>>> cut_times([(0.0, {0: {1}, 1: {0, 2}, 2: {1}})], sink=0, sources=[1, 2], deaths={1: 3.0})
(3.0, 3.0)
"""
from __future__ import annotations

import functools
import html
import math
import warnings
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from analysis import plots
from analysis.loading import swept_params
from analysis.network_section import _html_table, _tables, paired, paired_table
from analysis.report import _figure_html
from analysis.stats import fmt_ci, mean_band, mean_ci
from experiments.store import Run, is_run_folder

PREFIX = "energy"
#: Energy summary keys (``emulator.energy``); a runs table with the first has batteries.
ENERGY_KEYS = ("energy_total_j", "energy_per_result_j", "first_node_death",
               "nodes_dead_at_end")
#: (column, table header) of the per-setting table.
METRICS = [
    ("first_node_death", "first death"),
    ("sink_cut_at", "sink cut off"),
    ("sink_isolated_at", "sink isolated"),
    ("last_result_at", "last result"),
    ("nodes_dead_at_end", "dead at end"),
    ("sources_dead_at_end", "sources dead"),
    ("energy_total_j", "energy [J]"),
    ("tx_j", "tx [J]"), ("rx_j", "rx [J]"), ("idle_j", "idle [J]"), ("cpu_j", "cpu [J]"),
    ("results_per_joule", "results / J"),
    ("results_before_first_death", "results before first death"),
    ("comm_cost_per_time", "cost / time"),
    ("cost_per_time_all_alive", "cost / time while all live"),
    ("recall", "recall"),
]
#: What the lifetime comparison pairs: (column, baseline value, the values compared with
#: it, the algorithms whose runs take part).
LIFETIME_PAIRS = [
    ("algorithm", "lottery", ("smj-e", "smj-h"), ("smj-e", "smj-h", "lottery")),
    ("params.ctr.store", "llf", ("cover",), ("ctr",)),
]
#: (column, label, relative?) compared in :data:`LIFETIME_PAIRS`.
LIFETIME_METRICS = [("cost_per_time_all_alive", "cost / time while all live", True),
                    ("energy_total_j", "energy", True),
                    ("lifetime", "lifetime (first death)", True),
                    ("sink_lifetime", "sink kept until", True),
                    ("results_per_joule", "results / J", True),
                    ("results_before_first_death", "results before first death", True),
                    ("recall", "recall", False)]
SPEC_DIRS = (Path("."), Path(__file__).resolve().parents[1] / "experiments" / "specs")


def _e(x) -> str:
    return html.escape(str(x))


def numeric(frame: pd.DataFrame, columns) -> pd.DataFrame:
    """``frame`` with ``columns`` (those present) as floats, ``inf`` as missing: a run
    without a result has no energy per result (its summary says ``inf``), and a mean
    over seeds leaves it out."""
    frame = frame.copy()
    for c in columns:
        if c in frame:
            frame[c] = pd.to_numeric(frame[c], errors="coerce").astype(float).replace(
                [np.inf, -np.inf], np.nan)
    return frame


def has_energy(runs: pd.DataFrame) -> pd.Series:
    """Which rows ran with batteries (an ``energy_total_j`` value)."""
    if "energy_total_j" not in runs:
        return pd.Series(False, index=runs.index)
    return pd.to_numeric(runs["energy_total_j"], errors="coerce").notna()


def plan_of(run: Run):
    """The run's plan rebuilt from its resolved spec (topology, dynamics, streams), or
    None when a file it names is not found beside this folder or the shipped specs.
    Built once per run folder (the facts and the figure both need it)."""
    return _plan_at(str(run.path))


@functools.lru_cache(maxsize=64)
def _plan_at(path: str):
    from experiments.planning import build_plan
    from experiments.spec import SpecError

    for base in SPEC_DIRS:
        try:
            with warnings.catch_warnings():   # the run reported its spec's warnings
                warnings.simplefilter("ignore")
                return build_plan(Run(Path(path)).spec, base)
        except (SpecError, OSError):
            continue
    return None


def adjacency(graph, dead: set) -> dict:
    """Live node -> its live neighbours in a snapshot (``alive`` false: a failure)."""
    up = {u for u, alive in graph.nodes(data="alive", default=True) if alive and u not in dead}
    return {u: {v for v in graph.neighbors(u) if v in up} for u in up}


def _reaches(adj: dict, source, sink) -> bool:
    if source not in adj or sink not in adj:
        return False
    seen, todo = {source}, [source]
    while todo:
        u = todo.pop()
        if u == sink:
            return True
        for v in adj[u] - seen:
            seen.add(v)
            todo.append(v)
    return False


def cut_times(epochs, sink, sources, deaths: dict) -> tuple[float, float]:
    """``(first time a source cannot reach the sink, first time none can)``.

    ``epochs``: ``[(start time, adjacency of the epoch's live nodes)]``; ``deaths``:
    node -> time of death. Checked at every epoch start and every death."""
    starts = [t for t, _ in epochs]
    times = sorted(set(starts) | {float(t) for t in deaths.values()})
    cut = isolated = math.nan
    for t in times:
        adj = epochs[max(i for i, s in enumerate(starts) if s <= t)][1]
        dead = {u for u, d in deaths.items() if d <= t}
        adj = {u: vs - dead for u, vs in adj.items() if u not in dead}
        reached = [_reaches(adj, s, sink) for s in sources]
        if math.isnan(cut) and not all(reached):
            cut = t
        if not any(reached):
            isolated = t
            break
    return cut, isolated


def sink_lost(run: Run, plan=None) -> tuple[float, float]:
    """:func:`cut_times` of a run folder; NaN, NaN when its plan cannot be rebuilt."""
    plan = plan_of(run) if plan is None else plan
    if plan is None:
        return math.nan, math.nan
    deaths = {int(u): float(t) for u, t in
              run.meta["backend_info"].get("energy", {}).get("deaths", {}).items()}
    end = float(plan.duration)
    epochs = [(float(t), adjacency(plan.dynamics.snapshot(t), set()))
              for t in plan.dynamics.epochs if t <= end]
    deaths = {u: t for u, t in deaths.items() if t <= end}
    return cut_times(epochs, plan.query.node, sorted(set(plan.stream_nodes.values())), deaths)


def run_energy(run: Run, row) -> dict:
    """One run's energy facts (see the module docstring)."""
    info = run.meta["backend_info"].get("energy", {})
    kinds = info.get("by_kind_j", {})
    first = float(row.get("first_node_death", math.nan))
    total = float(row.get("energy_total_j", math.nan))
    results = run.results if run.has_table("results") else pd.DataFrame(
        {"group": pd.Series([], dtype=str), "emitted_at": pd.Series([], dtype=float)})
    firsts = results.groupby("group")["emitted_at"].min()   # a result counts once
    sources = {int(u) for u in run.meta.get("stream_nodes", {}).values()}
    deaths = {int(u) for u in info.get("deaths", {})}
    cut, isolated = sink_lost(run)
    horizon = run_horizon(run.spec)
    return {"lifetime": horizon if math.isnan(first) else first,
            "sink_lifetime": horizon if math.isnan(cut) else cut,
            "cost_per_time_all_alive": cost_while_all_alive(
                run.ledger, float(run.spec["run"]["duration"]) if math.isnan(first) else first),
            "tx_j": kinds.get("tx", math.nan), "rx_j": kinds.get("rx", math.nan),
            # radio_states calls the up time's idle power what it is: listening
            "idle_j": kinds.get("idle", kinds.get("listen", math.nan)),
            "cpu_j": kinds.get("cpu", math.nan),
            "results_per_joule": len(firsts) / total if total > 0 else math.nan,
            "results_before_first_death": float(
                len(firsts) if math.isnan(first) else (firsts < first).sum()),
            "last_result_at": float(firsts.max()) if len(firsts) else math.nan,
            "sources_dead_at_end": float(len(sources & deaths)),
            "relays_dead_at_end": float(len(deaths - sources)),
            "sink_cut_at": cut, "sink_isolated_at": isolated}


def cost_while_all_alive(ledger: pd.DataFrame, until: float) -> float:
    """Communication cost per time unit before ``until`` (the first death): the
    algorithm's traffic (a routing protocol's packets apart, as in the summary's
    ``comm_cost_per_time``) while every node still lives, so that a saving is not the
    silence of the dead.

    >>> ledger = pd.DataFrame({"time": [1.0, 2.0, 9.0, 1.5], "cost": [2.0, 4.0, 8.0, 5.0],
    ...                        "kind": ["data", "data", "data", "routing"]})
    >>> cost_while_all_alive(ledger, 4.0)
    1.5
    """
    algorithm = ledger[ledger["kind"] != "routing"] if "kind" in ledger else ledger
    return float(algorithm.loc[algorithm["time"] < until, "cost"].sum()) / until


def run_horizon(spec: dict) -> float:
    """The run's duration and its drain (batteries drain until the last message)."""
    duration = float(spec["run"]["duration"])
    drain = spec["run"].get("drain")
    return duration + (duration if drain is None else float(drain))


def energy_facts(runs: pd.DataFrame, run_dirs: list[Path]) -> pd.DataFrame:
    """The rows of ``runs`` that ran with batteries, with :func:`run_energy`'s columns
    (NaN for a row without a folder)."""
    dirs = {Path(d).name: Path(d) for d in run_dirs}
    runs = numeric(runs[has_energy(runs)], ENERGY_KEYS + ("comm_cost_per_time", "recall"))
    rows = []
    for _, r in runs.iterrows():
        path = dirs.get(r["run_id"])
        rows.append(run_energy(Run(path), r) if path is not None and is_run_folder(path)
                    else {})
    facts = pd.DataFrame(rows, index=runs.index)
    return pd.concat([runs.drop(columns=[c for c in facts.columns if c in runs]), facts],
                     axis=1)


def setting_columns(facts: pd.DataFrame) -> list[str]:
    """The algorithm and every swept axis (``variant`` first when it varies)."""
    cols = ["variant"] if "variant" in facts and facts["variant"].nunique() > 1 else []
    return cols + ["algorithm"] + swept_params(facts)


def per_setting(facts: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Mean and 95 % CI half-width (``<metric>_ci95``) of :data:`METRICS` per setting."""
    rows = []
    for key, g in facts.groupby(by, dropna=False, sort=True):
        row = dict(zip(by, key if isinstance(key, tuple) else (key,)))
        row["seeds"] = int(g["seed"].nunique())
        for m, _ in METRICS:
            if m in g:
                row[m], row[f"{m}_ci95"], _ = mean_ci(g[m])
        rows.append(row)
    return pd.DataFrame(rows)


def lifetime_pairs(facts: pd.DataFrame) -> list[tuple[str, object, pd.DataFrame]]:
    """:data:`LIFETIME_PAIRS` present in ``facts``: ``(column, baseline, paired frame)``
    with the paired changes of :data:`LIFETIME_METRICS` (``d_<metric>``, ``base_<metric>``,
    ``<metric>``; :func:`analysis.network_section.paired`)."""
    out = []
    for column, baseline, compared, algorithms in LIFETIME_PAIRS:
        if column not in facts:
            continue
        mine = facts[facts["algorithm"].isin(algorithms)
                     & facts[column].isin([baseline, *compared])]
        if not (mine[column] == baseline).any() or not mine[column].isin(compared).any():
            continue
        by = [c for c in setting_columns(mine) if c not in (column, "algorithm")
              and mine[c].nunique(dropna=False) > 1]
        frame = paired(mine, column, baseline, LIFETIME_METRICS, by=by)
        if not frame.empty:
            out.append((column, baseline, frame))
    return out


def expected_gain(saving: float) -> float:
    """The lifetime gain (%) a cost saving of ``saving`` % gives when the first node to
    die carries that much less: lifetime = battery / load, so ``1 / (1 - s) - 1``.

    >>> expected_gain(50.0), expected_gain(0.0)
    (100.0, 0.0)
    """
    return 100.0 * (1.0 / (1.0 - saving / 100.0) - 1.0) if saving < 100.0 else math.inf


def gain_verdict(saving: float, gain: float, ci: float) -> str:
    """How a measured lifetime gain (%, ± ``ci``) compares with what a cost saving
    predicts (:func:`expected_gain`).

    >>> gain_verdict(50.0, 90.0, 20.0), gain_verdict(50.0, 20.0, 10.0)
    ('as large as the saving predicts', 'smaller than the saving predicts')
    >>> gain_verdict(-5.0, 30.0, 10.0)
    'no saving, yet a lifetime gain'
    """
    if saving <= 0:
        return "no saving, yet a lifetime gain" if gain - (ci if ci == ci else 0) > 0 \
            else "no saving and no lifetime gain"
    expected = expected_gain(saving)
    half = 0.0 if math.isnan(ci) else ci
    if gain + half < expected:
        return "smaller than the saving predicts"
    if gain - half > expected:
        return "larger than the saving predicts"
    return "as large as the saving predicts"


def _gain_sentence(column: str, baseline, r, keys: list[str]) -> str:
    """Whether the cost saving of one compared setting (told apart by ``keys``) became a
    lifetime gain as large."""
    saving, gain = -r["d_cost_per_time_all_alive"], r["d_lifetime"]
    if math.isnan(saving) or math.isnan(gain):
        return ""
    ci = r["d_lifetime_ci95"]
    where = ", ".join(f"{k} = {_cell_text(r[k])}" for k in keys if k != column)
    return (f"{r[column]} against {baseline}{f' ({where})' if where else ''}: "
            f"communication cost "
            f"{fmt_ci(-saving, r['d_cost_per_time_all_alive_ci95'])} % while every node "
            f"lives, which would lengthen the first node's life by "
            f"{expected_gain(saving):+.3g} % if that node carried the saving; measured "
            f"{fmt_ci(gain, ci)} % ({gain_verdict(saving, gain, ci)}); energy of all nodes "
            f"{fmt_ci(r['d_energy_total_j'], r['d_energy_total_j_ci95'])} %.")


def _pairs_html(pairs) -> str:
    parts = []
    for column, baseline, frame in pairs:
        keys = [c for c in frame.columns if not c.startswith(("d_", "base_")) and c != "seeds"
                and c not in {m for m, _, _ in LIFETIME_METRICS}]
        sentences = [s for s in (_gain_sentence(column, baseline, r, keys)
                                 for _, r in frame.iterrows()) if s]
        parts.append(f"<h3>{_e(column)}: against {_e(baseline)}, paired by seed</h3>"
                     + paired_table(frame, LIFETIME_METRICS)
                     + "".join(f"<p>{_e(s)}</p>" for s in sentences))
    return "".join(parts)


def _cell_text(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


# -- figures ---------------------------------------------------------------------------
def residual_at_end(run: Run) -> dict:
    """Node -> residual energy at the end (J) of the battery nodes."""
    return {int(u): float(j) for u, j in
            run.meta["backend_info"].get("energy", {}).get("residual_j", {}).items()}


def residual_share(run: Run) -> dict:
    """Node -> residual energy at the end as a fraction of its battery."""
    residual, first = residual_at_end(run), _initial(run)
    return {u: j / first[u] for u, j in residual.items() if first.get(u)}


#: The radio's states in which it is on (``radio_states``; sleep and off are not).
RADIO_ON_STATES = ("tx", "rx", "listen")


def radio_on_share(run: Run) -> dict:
    """Node -> the share of the run its radio was on (tx, rx or listening), from
    Energest's counters ``radio_<state>_s`` at their last sample: the on-states' seconds
    over every state's (a node's states fill its run, in seconds whatever the time
    unit); {} without ``radio_states``.

    >>> class R: metrics = pd.DataFrame({"time": [0.0] + [10.0] * 4, "node": 0,
    ...     "source": "network", "value": [0.0, 0.1, 0.2, 0.2, 9.5],
    ...     "metric": ["radio_tx_s", "radio_tx_s", "radio_rx_s", "radio_listen_s",
    ...                "radio_sleep_s"]})
    >>> radio_on_share(R())
    {0: 0.05}
    """
    m = run.metrics
    rows = m[(m["source"] == "network") & m["metric"].str.match(r"radio_\w+_s$")]
    if rows.empty:
        return {}
    last = rows[rows["time"] == rows.groupby("node")["time"].transform("max")]
    state = last["metric"].str[len("radio_"):-len("_s")]
    on = last["value"].where(state.isin(RADIO_ON_STATES), 0.0).groupby(last["node"]).sum()
    total = last.groupby("node")["value"].sum()
    return {int(u): round(float(on[u] / total[u]), 12) for u in total.index if total[u] > 0}


#: What :func:`topology_figure` colours nodes by: (values of a run, colour bar label,
#: whether the scale is the battery's fraction, 0 to 1, or up to the largest value,
#: whether dead nodes are coloured too, under their cross).
RESIDUAL = (residual_share, "residual energy [fraction of battery]", True, False)
RADIO_ON = (radio_on_share, "radio on [fraction of the run]", False, True)


def topology_figure(runs: list[tuple[str, Run]], colour=RESIDUAL) -> Figure | None:
    """A value per node on the topology (residual energy by default, :data:`RADIO_ON`
    the radio's on-time): one panel per ``(title, run)``, nodes at their positions at
    the end of the run coloured by it, dead nodes as crosses, mains-powered nodes as
    black squares, stream nodes ringed, the query node a star; the links of the last
    epoch faint. None when no run has a value to draw."""
    values_of, label, unit_scale, dead_coloured = colour
    drawn = []
    for title, run in runs:
        plan = plan_of(run)
        if plan is None:
            continue
        end = float(plan.duration)
        graph = plan.dynamics.snapshot(end)
        pos = dict(graph.nodes(data="pos"))
        if any(p is None for p in pos.values()):
            continue
        drawn.append((title, run, plan, graph, pos))
    if not drawn:
        return None
    values = [values_of(run) for _, run, *_ in drawn]
    if not any(values):   # nothing to colour by (no radio_states counters, say)
        return None
    mains_of = [{int(u) for u in run.meta["backend_info"]["energy"].get("mains_powered", [])}
                for _, run, *_ in drawn]
    top = 1.0 if unit_scale else max(
        (v for value, mains in zip(values, mains_of) for u, v in value.items()
         if u not in mains), default=0.0) or 1.0
    cmap = matplotlib.colormaps["viridis"]
    with matplotlib.rc_context(plots.STYLE):
        fig = Figure(figsize=(3.0 * len(drawn) + 0.8, 3.2), layout="constrained")
        axes = fig.subplots(1, len(drawn), squeeze=False)[0]
        for ax, (title, run, plan, graph, pos), value, mains in zip(axes, drawn, values,
                                                                   mains_of):
            energy = run.meta["backend_info"]["energy"]
            dead = {int(u): float(t) for u, t in energy.get("deaths", {}).items()}
            sources = {int(u) for u in run.meta.get("stream_nodes", {}).values()}
            for u, v in graph.edges:
                if u in dead or v in dead:
                    continue
                (x0, y0), (x1, y1) = pos[u], pos[v]
                ax.plot([x0, x1], [y0, y1], color="#bbbbbb", linewidth=0.5, zorder=1)
            alive = [u for u in graph.nodes if u not in mains
                     and (dead_coloured or u not in dead)]
            points = ax.scatter([pos[u][0] for u in alive], [pos[u][1] for u in alive],
                                c=[value.get(u, math.nan) for u in alive], cmap=cmap,
                                vmin=0.0, vmax=top, s=36, zorder=3,
                                edgecolors=["#d62728" if u in sources else "none"
                                            for u in alive], linewidths=1.2)
            for u in dead:
                if u in pos:
                    ax.scatter(*pos[u], marker="x", color="#d62728", s=40, zorder=4)
            for u in mains:
                if u in pos:
                    ax.scatter(*pos[u], marker="*" if u == plan.query.node else "s",
                               color="black", s=90 if u == plan.query.node else 30, zorder=4)
            ax.set_title(f"{title}\n{len(dead)} dead at t = {float(plan.duration):g}")
            ax.set_aspect("equal")
            ax.set_xticks([])
            ax.set_yticks([])
            ax.grid(False)
        fig.colorbar(points, ax=list(axes), label=label, shrink=0.8)
    return fig


def _initial(run: Run) -> dict:
    """Node -> its battery at the start: the first ``energy_j`` sample."""
    m = run.metrics
    rows = m[(m["source"] == "network") & (m["metric"] == "energy_j")]
    return rows.sort_values("time").groupby("node")["value"].first().astype(float).to_dict()


def residual_series(run: Run, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and minimum over the battery nodes of the residual energy on ``grid`` (a
    node's last sample before a grid point)."""
    m = run.metrics
    rows = m[(m["source"] == "network") & (m["metric"] == "energy_j")]
    wide = rows.pivot_table(index="time", columns="node", values="value").sort_index()
    wide = wide.reindex(wide.index.union(grid)).ffill().reindex(grid)
    return wide.mean(axis=1).to_numpy(float), wide.min(axis=1).to_numpy(float)


def residual_figure(groups: dict[str, list[Run]]) -> Figure:
    """Residual energy over time, mean (solid) and minimum (dashed) over the battery
    nodes, one colour per setting; mean over seeds with a 95 % band."""
    end = max(float(r.metrics["time"].max()) for runs in groups.values() for r in runs)
    grid = np.linspace(0.0, end, 100)
    styles = plots.algorithm_styles(list(groups))
    with matplotlib.rc_context(plots.STYLE):
        fig = Figure(figsize=plots.FIGSIZE, layout="constrained")
        ax = fig.subplots()
        for label, runs in groups.items():
            series = [residual_series(r, grid) for r in runs]
            color = styles[label]["color"]
            for k, dash in ((0, "-"), (1, "--")):
                mean, half = mean_band(np.vstack([s[k] for s in series]))
                ax.plot(grid, mean, dash, color=color,
                        label=f"{label}, {'mean' if k == 0 else 'min'}")
                ax.fill_between(grid, mean - np.nan_to_num(half), mean + np.nan_to_num(half),
                                color=color, alpha=0.15, linewidth=0)
        ax.set_xlabel(plots.TIME_LABEL)
        ax.set_ylabel("residual energy per node [J]")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7)
    return fig


def _label(row, by: list[str]) -> str:
    """A setting as a figure names it (an axis the setting's algorithm lacks left out).

    >>> _label({"algorithm": "ctr", "params.ctr.store": "llf"}, ["algorithm", "params.ctr.store"])
    'ctr, store=llf'
    >>> _label({"algorithm": "smj-h", "params.ctr.store": None}, ["algorithm", "params.ctr.store"])
    'smj-h'
    """
    return ", ".join(str(row[c]) if c == "algorithm" else f"{c.split('.')[-1]}={row[c]}"
                     for c in by if c != "variant" and not pd.isna(row[c]))


#: At most this many settings are drawn in one figure.
DRAWN = 6


def drawn_settings(facts: pd.DataFrame, by: list[str]) -> list[pd.DataFrame]:
    """The runs (with a folder) of the settings the figures draw: every setting when
    there are at most :data:`DRAWN`, else the first setting of each algorithm (so that
    every algorithm is seen), at most :data:`DRAWN` of them."""
    with_dirs = facts[facts["run_dir"].map(lambda p: isinstance(p, str))]
    settings = [g for _, g in with_dirs.groupby(by, dropna=False, sort=True)]
    if len(settings) > DRAWN:
        firsts = {}
        for g in settings:
            firsts.setdefault(g["algorithm"].iloc[0], g)
        settings = list(firsts.values())
    return settings[:DRAWN]


def _figures(facts: pd.DataFrame, by: list[str], out_dir: Path) -> str:
    parts = []
    settings = drawn_settings(facts, by)
    n_all = facts.groupby(by, dropna=False).ngroups
    some = f" ({len(settings)} of {n_all} settings)" if len(settings) < n_all else ""
    first_seed = int(facts["seed"].min())
    chosen = [(_label(g.iloc[0], by), Run(Path(g[g["seed"] == first_seed]["run_dir"].iloc[0])))
              for g in settings if (g["seed"] == first_seed).any()]
    fig = topology_figure(chosen)
    if fig is not None:
        png = plots.save(fig, out_dir / "figures", f"{PREFIX}_topology")
        caption = (f"Residual energy at the end of the run on the topology, seed {first_seed}"
                   + some + ": colour = residual energy as a fraction of the battery; red "
                   "x = dead; black square = mains-powered, star = the query node; red "
                   "ring = a stream's node; grey = links of the last epoch between live nodes")
        parts.append(_figure_html(png, out_dir, caption))
    fig = topology_figure(chosen, RADIO_ON)
    if fig is not None:
        png = plots.save(fig, out_dir / "figures", f"{PREFIX}_radio_on_topology")
        caption = (f"Radio on per node over the run (radio_states: transmitting, receiving "
                   f"or listening), seed {first_seed}{some}: colour = share of the run, "
                   "0 to the largest drawn; marks as above. Dead nodes are crosses: "
                   "their radio time ends at their death")
        parts.append(_figure_html(png, out_dir, caption))
    groups = {_label(g.iloc[0], by): [Run(Path(p)) for p in g["run_dir"]] for g in settings}
    if groups:
        png = plots.save(residual_figure(groups), out_dir / "figures",
                         f"{PREFIX}_residual_over_time")
        parts.append(_figure_html(png, out_dir, "Residual energy of the battery nodes over "
                                  f"time{some}: mean (solid) and minimum (dashed) over "
                                  "nodes; mean over seeds, band: 95 % CI"))
    return '<div class="figs">' + "".join(parts) + "</div>" if parts else ""


def _settings_html(table: pd.DataFrame, by: list[str]) -> str:
    # a kind of energy no run spent (no idle power, no CPU cost) says nothing
    metrics = [(m, h) for m, h in METRICS if m in table and table[m].fillna(0).ne(0).any()]
    header = [c.replace("_", " ") for c in by] + ["seeds"] + [h for _, h in metrics]
    rows = [[_cell_text(r[c]) for c in by] + [str(r["seeds"])]
            + [fmt_ci(r[m], r[f"{m}_ci95"]) for m, _ in metrics] for _, r in table.iterrows()]
    return _html_table(header, rows)


def section(runs: pd.DataFrame, run_dirs: list[Path], out_dir: Path) -> str:
    """The energy section's HTML fragment; "" when no run had batteries."""
    out_dir = Path(out_dir)
    facts = energy_facts(runs, run_dirs)
    if facts.empty:
        return ""
    by = setting_columns(facts)
    table = per_setting(facts, by)
    table.to_csv(_tables(out_dir) / f"{PREFIX}_settings.csv", index=False)
    pairs = lifetime_pairs(facts)
    for column, _, frame in pairs:
        frame.to_csv(_tables(out_dir) / f"{PREFIX}_paired_{column}.csv", index=False)
    intro = (f"<p>{len(facts)} runs on batteries. Times in time units; – : not inside "
             "the run (in the comparisons, lifetime and sink kept until are then the "
             "run's end with its drain: a lower bound). Sink cut off: the first time a "
             "stream's node is dead or has no path of live nodes to the query node (no "
             "complete result can form after it); isolated: no stream's node reaches it. "
             "Results / J: result groups per joule spent by all nodes.</p>")
    return "\n".join(p for p in (intro, _settings_html(table, by), _pairs_html(pairs),
                                 _figures(facts, by, out_dir)) if p)
