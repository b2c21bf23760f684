"""Report section of gated operators (source 001, Fig. 7; ``[trigger.<algorithm>] gate``):
the work a gate skipped against the results it lost.

Written when the runs have sweep variants (:data:`analysis.families.AXIS_SECTIONS`) and
some are gated (their summary has a ``gate_closed_time``; NaN: no gate). The baseline is
the variant without a gate. Per variant, means over seeds with 95 % confidence
intervals; per gated variant, paired with the baseline's run of the same seed,
algorithm and value of every other swept axis: the evaluations
saved, the results lost and the energy saved, and one sentence saying whether the
source's claim — skip an operator's work while its upstream is faulty, "to save
processing and energy" — holds on these runs.

Example
-------
>>> runs = pd.DataFrame({"variant": ["off", "off", "drop", "drop"], "seed": [1, 2, 1, 2],
...                      "evaluations": [100, 90, 70, 60], "evaluations_skipped": [0, 0, 30, 30],
...                      "gate_closed_time": [float("nan")] * 2 + [10.0, 12.0],
...                      "results": [50, 40, 45, 30], "energy_total_j": [2.0, 2.0, 2.1, 1.9]})
>>> t = paired_changes(runs, "off")
>>> t.loc["drop", ["work_saved", "results_lost", "energy_saved"]].round(4).tolist()
[0.3167, 0.175, 0.0]
"""
from __future__ import annotations

import html
import math
from pathlib import Path

import pandas as pd

from analysis.axes import report_axes
from analysis.stats import fmt_ci, mean_ci

VARIANT = "variant"
#: (column, label) per variant.
COLUMNS = [("evaluations", "evaluations"), ("evaluations_skipped", "skipped"),
           ("gate_closed_time", "gate shut [time]"), ("results", "results"),
           ("recall", "recall"), ("latency_mean", "latency"),
           ("energy_total_j", "energy [J]")]


def _e(x) -> str:
    return html.escape(str(x))


def baseline_variant(runs: pd.DataFrame) -> str | None:
    """The variant whose runs have no gate (None if every variant is gated or none)."""
    gated = runs.groupby(VARIANT)["gate_closed_time"].apply(lambda s: s.notna().any())
    plain = [v for v, g in gated.items() if not g]
    return plain[0] if plain and gated.any() else None


def _pairs(runs: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Every gated run beside the baseline's run of the same seed, algorithm and value
    of every other swept axis (``base_<column>``)."""
    keys = ["seed", *[k for k in ("algorithm",) if k in runs],
            *[a for a in report_axes(runs) if a != VARIANT]]
    base = runs[runs[VARIANT] == baseline]
    others = runs[runs[VARIANT] != baseline]
    cols = [c for c, _ in COLUMNS if c in runs]
    return others.merge(base[[*keys, *cols]].rename(columns={c: f"base_{c}" for c in cols}),
                        on=keys, how="inner")


def paired_changes(runs: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Per gated variant, means over seed pairs (each a share of the baseline's run):
    ``work_saved`` (evaluations the gate saved), ``results_lost``, ``energy_saved``, and
    their CIs (``*_ci``)."""
    p = _pairs(runs, baseline)
    p = p.assign(work_saved=1.0 - p["evaluations"] / p["base_evaluations"],
                 results_lost=1.0 - p["results"] / p["base_results"])
    p["energy_saved"] = (1.0 - p["energy_total_j"] / p["base_energy_total_j"]) \
        if "energy_total_j" in p else math.nan
    rows = {}
    for variant, part in p.groupby(VARIANT, sort=False):
        row = {}
        for c in ("work_saved", "results_lost", "energy_saved"):
            row[c], row[f"{c}_ci"], _ = mean_ci(part[c])
        rows[variant] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def _means_table(runs: pd.DataFrame) -> str:
    cols = [(c, label) for c, label in COLUMNS if c in runs]
    head = "".join(f"<th>{_e(h)}</th>" for h in ["variant", "runs"] + [l for _, l in cols])
    body = ""
    for variant, part in runs.groupby(VARIANT, sort=False):
        cells = [variant, str(len(part))] + [fmt_ci(*mean_ci(part[c])[:2]) for c, _ in cols]
        body += "<tr>" + "".join(f"<td>{_e(x)}</td>" for x in cells) + "</tr>"
    return f"<table><tr>{head}</tr>{body}</table>"


def _share(mean: float, ci: float) -> str:
    if math.isnan(mean):
        return "–"
    return f"{100 * mean:.1f} %" + ("" if math.isnan(ci) else f" ± {100 * ci:.1f}")


def _above_zero(mean: float, ci: float) -> bool:
    """A mean above zero by more than its CI (one seed, no CI: above zero)."""
    return mean > (0.0 if math.isnan(ci) else ci)


def verdict(variant: str, row) -> str:
    """One sentence: does skipping work pay here (work saved, results lost, energy)?

    >>> verdict("drop", pd.Series({"work_saved": 0.2, "work_saved_ci": 0.05,
    ...     "results_lost": 0.25, "results_lost_ci": 0.1, "energy_saved": 0.0,
    ...     "energy_saved_ci": 0.01}))  # doctest: +NORMALIZE_WHITESPACE
    'drop: the gate saved 20.0 % ± 5.0 of the evaluations and lost 25.0 % ± 10.0 of the
    results; energy saved 0.0 % ± 1.0, not told apart from none. The claim holds for
    processing only, at the price of results.'
    """
    work, lost = row["work_saved"], row["results_lost"]
    energy, energy_ci = row["energy_saved"], row["energy_saved_ci"]
    if math.isnan(energy):
        energy_text = "energy is not modelled"
    elif math.isnan(energy_ci) or abs(energy) <= energy_ci:
        energy_text = f"energy saved {_share(energy, energy_ci)}, not told apart from none"
    else:
        energy_text = f"energy saved {_share(energy, energy_ci)}"
    saves_energy = not math.isnan(energy) and _above_zero(energy, energy_ci)
    if not _above_zero(work, row["work_saved_ci"]):
        claim = "The claim does not hold here: the work saved is not told apart from none."
    elif _above_zero(lost, row["results_lost_ci"]):
        claim = ("The claim holds for processing and energy, at the price of results."
                 if saves_energy else
                 "The claim holds for processing only, at the price of results.")
    else:
        claim = ("The claim holds: work and energy saved, no results lost." if saves_energy
                 else "The claim holds for processing (no results lost), not for energy.")
    return (f"{variant}: the gate saved {_share(work, row['work_saved_ci'])} of the "
            f"evaluations and lost {_share(lost, row['results_lost_ci'])} of the results; "
            f"{energy_text}. {claim}")


def section(runs: pd.DataFrame, run_dirs: list[Path], out_dir: Path) -> str:
    """The gate fragment ("" without gated and ungated variants side by side)."""
    if VARIANT not in runs or "gate_closed_time" not in runs:
        return ""
    baseline = baseline_variant(runs)
    if baseline is None:
        return ""
    changes = paired_changes(runs, baseline)
    sentences = "".join(f"<li>{_e(verdict(v, row))}</li>" for v, row in changes.iterrows())
    return ("<p>A gated operator evaluates only while the upstream operator it watches "
            "runs without faults (docs/ALGORITHMS.md#gate). Per variant, means over seeds "
            "± 95 % CI; shares below are paired by seed with the variant "
            f"<code>{_e(baseline)}</code> (no gate). A tuple dropped while the gate is "
            "shut is skipped work; one held is evaluated later (none saved). The energy "
            "model charges the CPU per tuple a node receives, so a gated operator that "
            "still receives its input saves no modelled energy by skipping it.</p>"
            + _means_table(runs) + f"<ul>{sentences}</ul>")
