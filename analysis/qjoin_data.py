"""QJoin report, reading: one row per run with the QJoin parameters, disorder scenario,
baselines judged at every ``Q_user``, and what is read from run folders (through the
run store).

>>> scenario({})
'network'
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.algorithm_params import param_of, run_param
from experiments.store import Run
from spark_nodes.algorithms.qjoin import evaluation as ev


PREFIX = "qjoin"


ALGORITHMS = ("qjoin", "mp-k-slack", "k-slack", "no-buffer", "spark-join")


QUSER = "params.qjoin.q_user"


SENSITIVITY = ("params.qjoin.P", "params.qjoin.L", "params.qjoin.b", "params.qjoin.g")


#: QJoin's parameters read as text (swept columns, else the run's spec).
TEXT_PARAMS = ("params.qjoin.spend",)


def run_info(runs: pd.DataFrame, run_dirs: list[Path]) -> pd.DataFrame:
    """``runs`` plus ``dir``, ``q_user`` (the run's own), ``memory`` (Spark: state rows),
    ``memory_steady`` (after the first period P where the summary has it, else ``memory``),
    ``latency_join_mean`` (a summary written before the key had that name has it as
    ``join_latency_mean``; else computed from the folder) and the QJoin parameters
    (swept columns, else the run's spec)."""
    dirs = {Path(d).name: Path(d) for d in run_dirs}
    info = runs.copy()
    info["dir"] = [dirs.get(r) for r in info["run_id"]]
    folders = [Run(d) if d is not None else None for d in info["dir"]]
    specs = [run.spec if run is not None else {} for run in folders]
    own_q, params = [], {p: [] for p in SENSITIVITY + ("params.k-slack.K",) + TEXT_PARAMS}
    for (_, row), run in zip(info.iterrows(), folders):
        alg = row["algorithm"]
        swept = row.get(f"params.{alg}.q_user")
        own_q.append(swept if swept is not None and not is_nan(swept)
                     else _param(run, alg, "q_user"))
        for p in params:
            v = row.get(p) if p in info.columns else None
            _, name, key = p.split(".")
            # a parameter of the run's own algorithm as it ran (defaults included)
            own = _param(run, name, key) if name == alg else None
            params[p].append(v if v is not None and not is_nan(v) else own)
    info["q_user_own"] = pd.to_numeric(pd.Series(own_q), errors="coerce").to_numpy()
    info["scenario"] = [scenario(spec) for spec in specs]
    # A grid over params.qjoin.q_user judges every algorithm at that Q_user; runs from
    # elsewhere are judged at their own (QJoin) or at every QJoin Q_user (baselines).
    swept = pd.to_numeric(info[QUSER], errors="coerce") if QUSER in info.columns \
        else pd.Series(np.nan, index=info.index)
    own = np.where(info["algorithm"] == "qjoin", info["q_user_own"], np.nan)
    info["q_user"] = np.where(swept.notna(), swept, own)
    for p, values in params.items():
        info[p] = values if p in TEXT_PARAMS else \
            pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy()
    mem = pd.to_numeric(info.get("memory_mean_tuples"), errors="coerce")
    if "spark_state_rows_mean" in info.columns:
        spark_rows = pd.to_numeric(info["spark_state_rows_mean"], errors="coerce")
        mem = np.where(info["algorithm"] == "spark-join", spark_rows, mem)
    info["memory"] = mem
    # after the first period P, in which QJoin warms up at its largest buffers
    steady = pd.to_numeric(info["memory_steady_mean_tuples"], errors="coerce") \
        if "memory_steady_mean_tuples" in info.columns else pd.Series(np.nan, index=info.index)
    info["memory_steady"] = np.where(steady.notna(), steady, mem)
    if "latency_join_mean" not in info.columns:
        info["latency_join_mean"] = math.nan
    if "join_latency_mean" in info.columns:          # the key's former name
        info["latency_join_mean"] = info["latency_join_mean"].fillna(info["join_latency_mean"])
    missing = info["latency_join_mean"].isna()
    info.loc[missing, "latency_join_mean"] = [_join_latency(d) if d is not None else math.nan
                                              for d in info.loc[missing, "dir"]]
    return judge_baselines(info)


def scenario(spec: dict) -> str:
    """What disorders the streams: the network alone, or also a source delay model; "no
    network" when every stream is produced at the join node (the source's own setup).

    >>> scenario({"streams": {"disorder": "pareto", "disorder_mean": 0.5}})
    'network + pareto delays (mean 0.5)'
    >>> scenario({"streams": {"nodes": [0, 0], "disorder": "exponential",
    ...                       "disorder_mean": 0.1}, "query": {"node": 0}})
    'no network, exponential delays (mean 0.1)'
    >>> scenario({})
    'network'
    """
    streams = spec.get("streams", {})
    model = streams.get("disorder", "none")
    nodes = streams.get("nodes") or []
    local = bool(nodes) and all(n == spec.get("query", {}).get("node") for n in nodes)
    where = "no network" if local else "network"
    if model in (None, "none"):
        return where
    sep = ", " if local else " + "
    return f"{where}{sep}{model} delays (mean {streams.get('disorder_mean', 0):g})"


def judge_baselines(info: pd.DataFrame) -> pd.DataFrame:
    """Judge every baseline at every QJoin ``Q_user``.

    A run without a ``Q_user`` (a baseline swept on its own) is repeated once per QJoin
    ``Q_user``; baselines get ``recall_target_met_fraction`` at their row's ``Q_user``
    from their recall per period (when the summary has it); repeats of one
    run at one ``Q_user`` (a grid over ``L``) are dropped.

    >>> runs = pd.DataFrame({"run_id": ["a", "b", "c"],
    ...                      "algorithm": ["qjoin", "qjoin", "no-buffer"],
    ...                      "q_user": [0.9, 0.99, np.nan], "q_user_own": [0.9, 0.99, 0.9],
    ...                      "recall_per_period": [None, None, "[0.95, 0.98]"]})
    >>> out = judge_baselines(runs)
    >>> out[out.algorithm == "no-buffer"][["q_user", "recall_target_met_fraction"]].values.tolist()
    [[0.9, 1.0], [0.99, 0.0]]
    """
    levels = sorted(set(info.loc[info["algorithm"] == "qjoin", "q_user"].dropna()))
    todo = info["q_user"].isna()
    if not levels or not todo.any():
        out = info.copy()
        out.loc[todo, "q_user"] = out.loc[todo, "q_user_own"]
    else:
        copies = []
        for q in levels:
            part = info[todo].copy()
            part["q_user"] = q
            copies.append(part)
        out = pd.concat([info[~todo], *copies], ignore_index=True)
    # Baselines are judged at the Q_user of their row, from their recall per period.
    if "recall_per_period" in out.columns:
        other = (out["algorithm"] != "qjoin") & out["recall_per_period"].notna()
    else:
        other = pd.Series(False, index=out.index)
    if other.any():
        out.loc[other, "recall_target_met_fraction"] = [
            _met(v, q) for v, q in zip(out.loc[other, "recall_per_period"],
                                       out.loc[other, "q_user"])]
    # A grid repeats a baseline's run for every value of QJoin's parameters: once per
    # Q_user is enough (seeds, not repeats, make the confidence intervals).
    return out.drop_duplicates(["run_id", "q_user"]).reset_index(drop=True)


def _met(per_period, q: float) -> float:
    values = json.loads(per_period) if isinstance(per_period, str) else per_period
    if values is None:
        return math.nan
    r = np.array([v for v in values if v is not None], dtype=float)
    return float((r >= q - 1e-12).mean()) if r.size else math.nan


def at_usual_settings(info: pd.DataFrame) -> pd.DataFrame:
    """Drop QJoin runs whose ``P``, ``b`` or ``g`` is not the most common value (runs of a
    sensitivity sweep), so they do not mix into the comparisons.

    >>> t = pd.DataFrame({"algorithm": ["qjoin"] * 3 + ["no-buffer"],
    ...                   "params.qjoin.P": [60.0, 60.0, 20.0, np.nan],
    ...                   "params.qjoin.b": [0.01] * 4, "params.qjoin.g": [0.01] * 4})
    >>> at_usual_settings(t).index.tolist()
    [0, 1, 3]
    """
    q = info["algorithm"] == "qjoin"
    keep = pd.Series(True, index=info.index)
    for p in ("params.qjoin.P", "params.qjoin.b", "params.qjoin.g"):
        if p in info.columns and q.any():
            mode = info.loc[q, p].mode()
            if len(mode):
                keep &= ~q | np.isclose(info[p].astype(float), float(mode.iloc[0]))
    return info[keep]


def _param(run: Run | None, algorithm: str, key: str):
    """``key`` of ``algorithm`` as the run used it (:func:`analysis.algorithm_params.param_of`:
    spec.json's ``resolved``, its ``[params]`` table, else the registry's default); the
    registry's default without a folder."""
    if run is None:
        return run_param({}, {}, algorithm, key)
    return param_of(run, algorithm, key)


def is_nan(v) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _join_latency(run_dir: Path) -> float:
    results = Run(run_dir).table("results", ["group", "emitted_at"])
    metrics = Run(run_dir).metrics
    jl = ev.join_latency(results, ev.arrival_times(metrics))
    jl = jl[np.isfinite(jl)]
    return float(jl.mean()) if jl.size else math.nan


def variant_label(row) -> str:
    alg = row["algorithm"]
    if alg == "qjoin" and not is_nan(row.get("params.qjoin.L", math.nan)):
        spend = row.get("params.qjoin.spend")
        extra = f" {spend}" if isinstance(spend, str) and spend != "spread" else ""
        return f"qjoin L={row['params.qjoin.L']:g}{extra}"
    if alg == "k-slack" and not is_nan(row.get("params.k-slack.K", math.nan)):
        return f"k-slack K={row['params.k-slack.K']:g}"
    return alg


def interval_table(info: pd.DataFrame) -> pd.DataFrame:
    """Estimated vs realised recall per L interval of every QJoin run (with a folder)."""
    frames = []
    for _, r in info[(info["algorithm"] == "qjoin") & info["dir"].notna()].iterrows():
        d = r["dir"]
        run = Run(d)
        metrics = run.metrics
        results = run.table("results", ["group"])
        expected = set(run.expected["group"])
        t = ev.interval_quality(metrics, expected, set(results["group"]),
                                ev.arrival_times(metrics), param_of(run, "qjoin", "L"),
                                run.duration)
        t = t.dropna(subset=["q_estimate", "recall"])
        t["run_id"], t["L"], t["q_user"] = r["run_id"], r["params.qjoin.L"], r["q_user"]
        frames.append(t)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
