"""Order-decision time of SMJE and SMJH, and of the center's whole decision.

Prints the median time of one decision (filter + order) for
* SMJE with n = 3..9 sites (exact search over all orders),
* SMJH with n up to 50 sites,
for key domains m up to 10^5, with synopses drawn as the retained counts of Poisson
streams (``rate`` tuples per time unit kept for ``window`` time units, keys uniform) and a
block of one period. Target: SMJH decides for n = 50, m = 10^5 in under 50 ms.

    python benchmarks/bench_smj.py            # full table
    python benchmarks/bench_smj.py --quick    # fewer repetitions
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from spark_nodes.algorithms.smj.orders import OrderProblem, mask_filter, smje, smjh


def instance(n: int, m: int, rng: np.random.Generator, retained: float, block: float):
    """Synopses of ``n`` sites holding about ``retained`` tuples each (uniform keys), one
    block of about ``block`` tuples."""
    s = rng.poisson(retained / m, (n, m)).astype(float)
    x = np.zeros(m)
    np.add.at(x, rng.integers(0, m, rng.poisson(block)), 1.0)
    w = rng.integers(1, 11, (n + 1, n + 1)).astype(float)
    return x, s, w


def decide(chooser, x, s, w):
    """What the center does for one block: mask filter, then the order."""
    f = mask_filter(x, s, 0)
    return chooser(OrderProblem(f, s, w, 0, final=True))


def median_ms(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1000 * float(np.median(times))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    reps = 3 if args.quick else 9
    rng = np.random.default_rng(args.seed)
    print("decision = mask filter + order; synopses hold `retained` tuples per site, the "
          "block `block` tuples")
    print(f"{'chooser':8} {'n':>3} {'m':>7} {'retained':>9} {'block':>6} {'ms':>9}")
    cases = [("SMJE", n, m) for m in (20, 10**3, 10**5) for n in (3, 5, 7, 9)]
    cases += [("SMJH", n, m) for m in (20, 10**3, 10**5) for n in (3, 10, 25, 50)]
    for name, n, m in cases:
        chooser = smje if name == "SMJE" else smjh
        # paper-like load (λ = 5, window 3 -> 15 retained, block 5) and a dense one where
        # every site holds ~10 tuples of every key, so the filter keeps the whole block of
        # 1000 tuples and every stage works on ~1000 keys
        for retained, block in ((15, 5), (10 * m, 1000)):
            x, s, w = instance(n, m, rng, retained, block)
            ms = median_ms(lambda: decide(chooser, x, s, w), reps)
            print(f"{name:8} {n:3d} {m:7d} {retained:9d} {block:6d} {ms:9.3f}")
    x, s, w = instance(50, 10**5, rng, 10**6, 1000)
    kept = int(np.count_nonzero(mask_filter(x, s, 0)))
    ms = median_ms(lambda: decide(smjh, x, s, w), reps)
    print(f"target: SMJH n=50 m=1e5 (dense, filter keeps {kept} keys) {ms:.2f} ms "
          f"({'meets' if ms < 50 else 'misses'} < 50 ms)")


if __name__ == "__main__":
    main()
