"""Cost of checking the input before any work: ``deliver``'s graph, frame and options,
and a spec's planning.

``deliver`` checks every link and node attribute the emulator reads, every cell of the
message frame and every option (:mod:`topologies.attributes`) before it moves a hop.
Prints the time of those checks on 10^6 messages over a 1,000-node, 10,000-link graph
(``bench_scale.py`` moves the same number of messages in 35-52 s), and of resolving and
planning the quickstart spec. No target: the checks should stay near 1 % of a run.

Run: ``python benchmarks/bench_inputs.py [--messages N]``
"""
from __future__ import annotations

import argparse
import time

import networkx as nx
import numpy as np
import pandas as pd

from emulator.deliver import _check_arguments
from experiments import spec as specs
from experiments.planning import build_plan


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10**6)
    args = parser.parse_args()
    graph = nx.random_regular_graph(20, 1000, seed=1)
    for edge in graph.edges:
        graph.edges[edge].update(cost=1.0, delay=0.01, bandwidth=1e6)
    rng = np.random.default_rng(1)
    n = args.messages
    messages = pd.DataFrame({"msg_id": np.arange(n), "src": rng.integers(0, 1000, n),
                             "dst": rng.integers(0, 1000, n),
                             "sent_at": np.sort(rng.uniform(0, 100, n)),
                             "size_bytes": np.full(n, 64)})
    t0 = time.perf_counter()
    _check_arguments(graph, messages, "links", 0, None, None, None)
    t1 = time.perf_counter()
    path = "experiments/specs/quickstart.toml"
    spec, base_dir = specs.load(path)
    build_plan(specs.for_run(spec, path), base_dir, path)
    t2 = time.perf_counter()
    print(f"deliver's checks: {t1 - t0:.2f} s for {n:,} messages on "
          f"{graph.number_of_nodes():,} nodes and {graph.number_of_edges():,} links")
    print(f"quickstart spec resolved and planned: {(t2 - t1) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
