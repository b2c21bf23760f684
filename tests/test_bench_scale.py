"""``benchmarks/bench_scale.py`` on a small network: its figures add up, and the bound it
prints for the oracle's trees is what it says (every tree of every epoch, over the
workers)."""
import json
import subprocess
import sys
from pathlib import Path

from benchmarks import bench_scale
from emulator.network import prefetch_workers

ROOT = Path(__file__).resolve().parents[1]


def test_the_tree_bound_counts_every_tree_of_every_epoch():
    topo, dynamics = bench_scale.mobile_network(40, 5.0, seed=3)
    bound = bench_scale.tree_bound(dynamics, epochs=2)
    assert bound["trees"] == 40 * len(dynamics.epochs)
    assert bound["tree_workers"] == prefetch_workers()
    assert bound["tree_us"] > 0
    # rounded to 0.1 s from the unrounded time a tree takes
    cpu = bound["tree_us"] * 1e-6 * bound["trees"]
    assert abs(bound["trees_cpu_s"] - cpu) <= 0.051
    assert abs(bound["trees_bound_s"] - cpu / bound["tree_workers"]) <= 0.051


def test_a_small_run_prints_figures_that_add_up():
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_scale.py"), "--nodes", "40",
         "--messages", "400", "--duration", "5", "--media", "links", "--routing",
         "oracle,olsr"], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    oracle, olsr = lines
    assert "trees: " in out and f"{oracle['trees']:,}" in out
    for figures in (oracle, olsr):
        assert figures["delivered"] + sum(figures["lost"].values()) == 400
        assert figures["delivery_ratio"] == round(figures["delivered"] / 400, 4)
    assert oracle["trees"] % 40 == 0 and oracle["trees_bound_s"] <= oracle["trees_cpu_s"]
    assert "trees" not in olsr and olsr["control_messages"] > 0
    assert olsr["ratio_to_oracle"] > 0
