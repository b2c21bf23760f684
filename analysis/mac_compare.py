"""Ideal against MAC, claim by claim: the headline figures of a sweep whose points differ
by ``mac.model`` (a grid axis) or by a variant that adds the MAC (issue 58).

A sweep folder's runs table is cut by its *setting* (the ``variant`` column where
the spec has variants, else ``mac.model``) and, within a setting, by the spec's other
swept keys. For each cut: the mean and 95 % interval over seeds of the figures the
spec's section of docs/RESULTS.md claims (:data:`FIGURES`), the MAC's own counters, and
the saving of each algorithm against the spec's baseline (:data:`BASELINES`), paired by
seed, as a per cent change of the figure the source claims a saving on.

Run: ``python -m analysis.mac_compare SWEEP_FOLDER [SWEEP_FOLDER ...]``; the spec's name
is read from the runs' ids (``<name>-<hash>``).

>>> frame = pd.DataFrame({"variant": ["a", "a", "b", "b"], "seed": [1, 2, 1, 2],
...                       "algorithm.name": ["x", "x", "x", "x"], "cost": [1.0, 3.0, 2.0, 4.0]})
>>> rows = figures(frame, "variant", ["algorithm.name"], ["cost"])
>>> [(r["variant"], r["cost"]) for r in rows]
[('a', 2.0), ('b', 3.0)]
>>> base = pd.DataFrame({"algorithm.name": ["y", "x", "y", "x"], "seed": [1, 1, 2, 2],
...                      "variant": "a", "cost": [10.0, 5.0, 10.0, 2.0]})
>>> [(r["algorithm.name"], round(r["saving"], 1)) for r in savings(
...     base, "variant", [], "algorithm.name", "y", "cost")]
[('x', -65.0)]
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.stats import mean_ci
from experiments.store import read_table, runs_table_path

#: The MAC's counters, shown beside every spec's figures.
MAC_FIGURES = ["mac_collisions", "mac_retries", "channel_busy_fraction"]

#: Per spec: the figures its RESULTS section claims (summary columns).
FIGURES = {
    "manet_routing": ["delivery_ratio", "routing_packets_per_time", "message_delay_mean",
                      "route_discovery_latency_mean"],
    "smj_adhoc_shared": ["comm_cost_per_time", "recall", "latency_mean"],
    "smj_adhoc_manet": ["comm_cost_per_time", "recall", "latency_mean", "delivery_ratio",
                        "first_node_death", "nodes_dead_at_end", "energy_total_j"],
    "qjoin_soccer_manet": ["latency_mean", "memory_steady_mean_tuples", "recall",
                           "delivery_ratio", "message_delay_mean", "comm_cost_per_time",
                           "first_node_death", "nodes_dead_at_end", "energy_total_j"],
    "triggers_bursty_manet": ["recall", "latency_mean", "delivery_ratio",
                              "first_node_death", "nodes_dead_at_end", "energy_total_j"],
    "prefetch_manet": ["stall_time_total", "recall", "delivery_ratio", "first_node_death",
                       "nodes_dead_at_end", "energy_total_j", "energy_per_result_j"],
}

#: Per spec: (the column naming the compared things, the baseline, the figures the
#: source claims a saving on) for :func:`savings`.
BASELINES = {
    "smj_adhoc_shared": ("algorithm.name", "lottery", ["comm_cost_per_time"]),
    "smj_adhoc_manet": ("algorithm.name", "lottery", ["comm_cost_per_time",
                                                      "first_node_death", "energy_total_j"]),
    "qjoin_soccer_manet": ("algorithm.name", "mp-k-slack", ["latency_mean",
                                                            "memory_steady_mean_tuples"]),
    "prefetch_manet": ("algorithm.name", "enrich-on-demand", ["stall_time_total"]),
}


def setting_column(runs: pd.DataFrame) -> str:
    """``variant`` where the sweep has variants, else ``mac.model``."""
    return "variant" if "variant" in runs.columns else "mac.model"


def swept_keys(runs: pd.DataFrame, setting: str) -> list[str]:
    """The swept columns other than the setting and the seed (dotted names, as
    the runs table names them), and the network section's ``routing`` and load."""
    return [c for c in runs.columns if "." in c and c != setting and c != "mac.model"
            and runs[c].astype(str).nunique() > 1 and not c.startswith("mac.")]


def figures(runs: pd.DataFrame, setting: str, keys: list[str], names: list[str]) -> list[dict]:
    """Mean (and ``<name>_ci``, the 95 % half-width) over seeds of each figure in
    ``names`` per (setting, keys)."""
    rows = []
    for group, g in runs.groupby([setting, *keys], sort=True, dropna=False):
        group = group if isinstance(group, tuple) else (group,)
        row = dict(zip([setting, *keys], group))
        for name in names:
            if name in g.columns:
                values = pd.to_numeric(g[name], errors="coerce").dropna()
                row[name], row[f"{name}_ci"], _ = mean_ci(values)
        rows.append(row)
    return rows


def savings(runs: pd.DataFrame, setting: str, keys: list[str], who: str, base: str,
            figure: str) -> list[dict]:
    """Per (setting, keys, ``who`` other than ``base``): the change of ``figure``
    against ``base``'s run of the same seed, per cent (mean and 95 % half-width)."""
    on = [setting, *[k for k in keys if k != who], "seed"]
    ref = runs.loc[runs[who] == base, [*on, figure]].rename(columns={figure: "_base"})
    paired = runs.loc[runs[who] != base].merge(ref, on=on)
    paired["_change"] = 100 * (paired[figure] / paired["_base"] - 1)
    rows = []
    for group, g in paired.groupby([setting, *[k for k in keys if k != who], who],
                                   sort=True):
        group = group if isinstance(group, tuple) else (group,)
        row = dict(zip([setting, *[k for k in keys if k != who], who], group))
        changes = g["_change"].replace([np.inf, -np.inf], np.nan).dropna()
        if len(changes):   # (a figure some settings have not: deaths without batteries)
            row["saving"], row["saving_ci"], _ = mean_ci(changes)
            rows.append(row)
    return rows


def _runs(folder: Path) -> tuple[str, pd.DataFrame]:
    """The spec's name and the runs (with the network section's facts for routing
    sweeps) of a sweep folder."""
    runs = read_table(runs_table_path(folder))
    name = str(runs["run_id"].iloc[0]).rsplit("-", 1)[0]
    if name == "manet_routing":
        from analysis import network_section as ns

        runs = ns.run_facts(runs, [folder / r for r in runs["run_id"]])
    return name, runs


def _fmt(row: dict, name: str) -> str:
    value = row.get(name, np.nan)
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "–"
    ci = row.get(f"{name}_ci", np.nan)
    text = f"{value:.3g}"
    return text if not np.isfinite(ci) or ci == 0 else f"{text} ± {ci:.2g}"


def table(rows: list[dict], columns: list[str]) -> str:
    """A markdown table of ``rows`` (values as mean ± half-width)."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join(
            _fmt(row, c) if isinstance(row.get(c), float) else str(row.get(c, "–"))
            for c in columns) + " |")
    return "\n".join(lines)


def reactions(folder: Path, runs: pd.DataFrame, setting: str) -> str:
    """The triggers' claim: how much sooner than the clock each trigger opens a window
    after a burst (:func:`analysis.triggers_section.reactions`), per setting."""
    from analysis import triggers_section as ts

    rows = []
    dirs = {r: folder / r for r in runs["run_id"]}
    for value, g in runs.groupby(setting, sort=True):
        for _, row in ts.reactions(g, dirs).iterrows():
            rows.append({setting: value, "algorithm": row["algorithm"],
                         "trigger": row["trigger"], "reaction": row["reaction"],
                         "reaction_ci": row["reaction_ci95"],
                         "vs clock": row["d_reaction"], "vs clock_ci": row["d_reaction_ci95"]})
    return table(rows, [setting, "algorithm", "trigger", "reaction", "vs clock"])


def report(folder: Path) -> str:
    """The tables of one sweep folder."""
    name, runs = _runs(folder)
    setting = setting_column(runs)
    keys = swept_keys(runs, setting)
    if name == "manet_routing":
        keys = ["routing", "node_speed", "offered_load"]
    names = [n for n in FIGURES.get(name, []) + MAC_FIGURES if n in runs.columns]
    out = [f"## {name} ({len(runs)} runs, seeds {sorted(int(s) for s in runs['seed'].unique())})",
           table(figures(runs, setting, keys, names), [setting, *keys, *names])]
    if name.startswith("triggers"):
        out.append("time from a burst to the next window (and its change against the "
                   "clock, paired by seed)")
        out.append(reactions(folder, runs, setting))
    who, base, claimed = BASELINES.get(name, (None, None, []))
    for figure in claimed:
        out.append(f"{figure}: change against {base}, paired by seed [%]")
        out.append(table(savings(runs, setting, keys, who, base, figure),
                         [setting, *[k for k in keys if k != who], who, "saving"]))
    return "\n\n".join(out)


def main(argv=None) -> int:
    for folder in (argv if argv is not None else sys.argv[1:]):
        print(report(Path(folder)))
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
