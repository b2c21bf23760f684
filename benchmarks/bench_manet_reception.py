"""A ``_manet`` spec's MAC variant under both reception rules: the threshold rule with
thresholds moved to the radio's edge (the spec's ``manet_mac``), and the DSSS error
curves with the radio's own noise floor (``manet_mac_er``), beside ``manet``.

``manet_mac`` decodes a lone frame out to the radio's 195 m by lowering the MAC's noise
to ``detect_dbm - sinr_db`` (-103.4 dBm), so a frame the radio would lose half the time
there always crosses when alone. ``manet_mac_er`` keeps the radio's noise floor (-93.97
dBm), detects preambles down to the radio's edge (``sinr_db`` -5.5, ``detect_dbm``
-99.4) and judges each frame by the curves (``reception = "error_rate"``): the radio's
frame errors come back, now as MAC retries. The spec is the committed one, its ``ideal``
variant left out, seeds as given; the sweep runs one job at a time into ``--out``.

    python -m benchmarks.bench_manet_reception --seeds 1 2 3 4 5
"""
from __future__ import annotations

import argparse
import collections
import json
import re
import tempfile
from pathlib import Path

import pandas as pd

SPEC = Path(__file__).resolve().parents[1] / "experiments" / "specs" / "smj_adhoc_manet.toml"

#: ``manet_mac`` with the error curves and the radio's own thresholds.
ERROR_RATE_KEYS = {
    "mac.reception": '"error_rate"',
    "mac.noise_dbm": "-93.97",          # the radio's noise floor
    "mac.detect_dbm": "-99.4",          # the radio's links end at -99.36 dBm (195 m)
    "mac.sinr_db": "-5.5",              # preambles detected down to -5.39 dB, the edge
}

COLUMNS = ["delivery_ratio", "recall", "latency_mean", "comm_cost_per_time",
           "energy_total_j", "mac_retries", "mac_collisions", "channel_busy_fraction"]


def derived_spec(text: str, seeds: list[int]) -> str:
    """The spec's text with ``seeds``, without its ``ideal`` variant, and with a
    ``manet_mac_er`` variant: ``manet_mac``'s keys, :data:`ERROR_RATE_KEYS` over them.

    >>> text = derived_spec(SPEC.read_text(), [1])
    >>> "seeds = [1]" in text, "[sweep.variants.ideal]" in text
    (True, False)
    >>> '"mac.reception" = "error_rate"' in text.split("manet_mac_er]")[1]
    True
    """
    text = re.sub(r"(?m)^seeds = \[.*\]$", f"seeds = {list(seeds)}", text)
    text = text.replace("[sweep.variants.ideal]\n", "")
    block = text.split("[sweep.variants.manet_mac]")[1].split("\n[")[0]
    keys = dict(re.findall(r'(?m)^("[^"]+") = ([^#\n]*?)\s*(?:#.*)?$', block))
    keys.update({f'"{k}"': v for k, v in ERROR_RATE_KEYS.items()})
    lines = "\n".join(f"{k} = {v}" for k, v in keys.items())
    return text.rstrip() + f"\n\n[sweep.variants.manet_mac_er]\n{lines}\n"


def drops(runs: pd.DataFrame, column: str) -> dict:
    """Drops by reason a run, summed over ``column``'s dicts and divided by the runs."""
    total = collections.Counter()
    for value in runs[column].dropna():   # the runs table holds them as JSON text
        given = json.loads(value) if isinstance(value, str) else dict(value)
        total.update({k: v for k, v in given.items() if v})
    return {k: round(v / len(runs), 1) for k, v in sorted(total.items())}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1])
    parser.add_argument("--out", default="runs/bench_manet_reception")
    args = parser.parse_args(argv)
    from experiments.sweep import sweep

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / SPEC.name
        path.write_text(derived_spec(SPEC.read_text(), args.seeds))
        runs = sweep(path, args.out, jobs=1, progress=False)
    print(f"{SPEC.name}, seeds {args.seeds}: means over the grid's points, per variant")
    print(runs.groupby("variant")[COLUMNS].mean().round(3).to_string())
    for variant, group in runs.groupby("variant"):
        print(f"{variant}: data lost a run {drops(group, 'drops_by_reason')}")
        if variant != "manet":
            print(f"  MAC drops a run {drops(group, 'mac_drops_by_reason')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
