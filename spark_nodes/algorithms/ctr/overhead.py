"""Diffusion overhead, measured and predicted (Theorems B and D of docs/ALGORITHMS.md#overhead).

Overhead = extra tuples per time unit pushed into the system beyond the input stream:
replicas of base tuples, plus (CTR) intermediate results sent between hops. Measured
from the metrics the programs record (:mod:`.programs`); rates ``r_i`` are the tuples
of stream ``i`` closed at the diffusion node divided by the run's duration.

- Theorem B (ATR): ``O = Σ_{i≠A} r_i·(W_i + W_A) / T`` per time unit. With ``T`` and the
  master changing, it is summed per master segment: ``Σ_seg Σ_{i≠A_seg} r_i (W_i +
  W_A_seg) / duration`` (transition segments of a master switch are not in the theorem;
  they show up as measured excess).
- Theorem D (CTR): base replication ``O = Σ_i (M_i − 1)·r_i`` and intermediates
  ``O* = Σ_i Σ_{k=2..n−1} M_ik · r_i · Π_{j=1..k−1} σ_{i_{j−1} i_j} · r_ij · W_ij``
  (``i_0 = i``), with ``M_i`` = copies of a base tuple, ``M_ik`` = copies of an
  intermediate result sent to hop ``k`` and ``σ`` = matches per in-range comparison, all
  measured; the probe sequence is the one the measured selectivities give. Because
  ``M_i`` and ``M_ik`` come from the same run, agreement there is partly circular.
- Theorem D *from the spec* (:func:`ctr_overhead_from_spec`, [recon]): the same formula
  with every quantity known before the run — the spec's rates, windows, segment length
  and host count, ``σ = Σ_k P(key = k)²`` for an equality join on the spec's key
  distribution, and ``M`` from a placement model: a stream's segments in a window of
  ``W`` are ``q = ⌈W / T⌉ + 1``; under ``store = "llf"`` they lie on ``min(q, m)``
  distinct hosts (least-loaded-first rotates over the ``m`` hosts), so hop ``k`` has
  ``M_ik = min(q_ik, m)`` hosts and a base segment reaches hop 1 plus its store host,
  outside hop 1 with probability ``1 − min(q, m) / m``; under ``store = "cover"`` every
  segment is stored on its hop-1 hosts, which only ever hold earlier segments, so storage
  stays on one host and ``M_i = M_ik = 1``. What the model leaves out: covers that use
  fewer hosts than hold segments, load reports steering LLF, the first segments of a
  run, and routing-table expiry.

Examples
--------
>>> import pandas as pd
>>> m = pd.DataFrame({"metric": ["closed:A", "closed:B", "copies:A", "copies:B",
...                              "segment:A:base", "segment:A:base"],
...                   "value": [10.0, 10.0, 10.0, 16.0, 5.0, 5.0]})
>>> atr_overhead(m, ["A", "B"], {"A": 2.0, "B": 2.0}, duration=10.0)
{'overhead_measured': 0.6, 'overhead_predicted': 0.8}
"""
from __future__ import annotations

import math

import pandas as pd

from spark_nodes.algorithms.ctr.probe import probe_sequence


def _sums(metrics: pd.DataFrame) -> dict[str, float]:
    if metrics.empty:
        return {}
    return metrics.groupby("metric")["value"].sum().to_dict()


def _rates(sums: dict, streams, duration: float) -> dict[str, float]:
    return {s: sums.get(f"closed:{s}", 0.0) / duration for s in streams}


def _base_extra(sums: dict, streams) -> float:
    return sum(sums.get(f"copies:{s}", 0.0) - sums.get(f"closed:{s}", 0.0) for s in streams)


def atr_overhead(metrics: pd.DataFrame, streams, windows, duration: float) -> dict:
    """Measured and Theorem-B overhead of an ATR run (extra tuples per time unit).

    ``metrics``: the algorithm's metric rows (``metric``, ``value``), with one
    ``segment:<master>:<kind>`` row per master segment (value = its length).
    """
    sums = _sums(metrics)
    r = _rates(sums, streams, duration)
    predicted = 0.0
    segs = metrics[metrics["metric"].str.startswith("segment:")]["metric"]
    for name in segs:
        _, master, kind = name.split(":")
        if kind == "transition":
            continue
        predicted += sum(r[i] * (windows[i] + windows[master]) for i in streams if i != master)
    return {"overhead_measured": _base_extra(sums, streams) / duration,
            "overhead_predicted": predicted / duration}


def selectivities(sums: dict) -> dict[tuple, float]:
    """``{(a, b): matches / comparisons}`` from ``cmp:a:b`` / ``match:a:b`` sums."""
    out = {}
    for name, c in sums.items():
        if name.startswith("cmp:") and c > 0:
            _, a, b = name.split(":")
            out[(a, b)] = sums.get(f"match:{a}:{b}", 0.0) / c
    return out


def ctr_overhead(metrics: pd.DataFrame, streams, windows, duration: float) -> dict:
    """Measured and Theorem-D overhead of a CTR run, in total and by part."""
    sums = _sums(metrics)
    r = _rates(sums, streams, duration)
    sel = selectivities(sums)

    def sigma(a, b):
        pair = [p for p in ((a, b), (b, a)) if p in sel]
        return sum(sel[p] for p in pair) / len(pair) if pair else 1.0

    closed = {s: sums.get(f"closed:{s}", 0.0) for s in streams}
    m_base = {s: sums.get(f"copies:{s}", 0.0) / closed[s] if closed[s] else 0.0
              for s in streams}
    base_pred = sum((m_base[s] - 1) * r[s] for s in streams if closed[s])
    inter_pred = 0.0
    n = len(streams)
    for i in streams:
        seq = [i] + probe_sequence(i, streams, sigma)
        for k in range(2, n):
            made = sums.get(f"inter_made:{i}:{k}", 0.0)
            m_ik = sums.get(f"inter_sent:{i}:{k}", 0.0) / made if made else 0.0
            if m_ik == 0.0:
                continue
            term = m_ik * r[i]
            for j in range(1, k):
                term *= sigma(seq[j - 1], seq[j]) * r[seq[j]] * windows[seq[j]]
            inter_pred += term
    inter_meas = sum(v for name, v in sums.items() if name.startswith("inter_sent:"))
    base_meas = _base_extra(sums, streams)
    out = {
        "overhead_measured": (base_meas + inter_meas) / duration,
        "overhead_predicted": base_pred + inter_pred,
        "overhead_base_measured": base_meas / duration,
        "overhead_base_predicted": base_pred,
        "overhead_intermediate_measured": inter_meas / duration,
        "overhead_intermediate_predicted": inter_pred,
        "ctr_M_mean": (sum(sums.get(f"copies:{s}", 0.0) for s in streams)
                       / max(sum(closed.values()), 1.0)),
    }
    return {k: (float(v) if math.isfinite(v) else math.inf) for k, v in out.items()}


def ctr_overhead_from_spec(rates: dict, windows: dict, segment: float, hosts: int,
                           store: str, sigma: float) -> dict:
    """Theorem D predicted before the run, from the spec alone (see the module docstring).

    ``rates``/``windows``: per stream (spec order); ``sigma``: the selectivity of every
    pair. Returns the predicted overhead in total and by part, and the mean ``M_i``.

    >>> r = ctr_overhead_from_spec({"A": 5.0, "B": 5.0, "C": 5.0},
    ...                            {"A": 4.0, "B": 4.0, "C": 4.0}, 1.0, 8, "llf", 0.05)
    >>> r["ctr_M_predicted"], r["overhead_base_predicted_from_spec"]
    (5.375, 65.625)
    >>> r["overhead_intermediate_predicted_from_spec"]    # 3 × 5 hosts · 5/s · 0.05·5·4
    75.0
    >>> ctr_overhead_from_spec({"A": 5.0, "B": 5.0}, {"A": 4.0, "B": 4.0}, 1.0, 8,
    ...                        "cover", 0.05)["overhead_predicted_from_spec"]
    0.0
    """
    streams = list(rates)
    n = len(streams)

    def spread(w: float) -> float:
        if store == "cover":
            return 1.0
        q = math.ceil(w / segment) + 1 if math.isfinite(w) else hosts
        return float(min(q, hosts))

    base = inter = m_sum = 0.0
    for i in streams:
        seq = probe_sequence(i, streams, lambda a, b: sigma)
        hop1 = spread(windows[seq[0]])
        m_i = hop1 if store == "cover" else hop1 + (1.0 - hop1 / hosts)
        m_sum += m_i
        base += (m_i - 1.0) * rates[i]
        for k in range(2, n):
            term = spread(windows[seq[k - 1]]) * rates[i]
            for j in range(1, k):
                term *= sigma * rates[seq[j - 1]] * windows[seq[j - 1]]
            inter += term
    return {"overhead_predicted_from_spec": base + inter,
            "overhead_base_predicted_from_spec": base,
            "overhead_intermediate_predicted_from_spec": inter,
            "ctr_M_predicted": m_sum / n}
