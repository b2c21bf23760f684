"""Experiments: specs, validation, runs, sweeps, the results store and the command line.

``experiments.run(spec) -> RunResult`` runs one spec (a TOML path or a dict);
``experiments.sweep(spec_path)`` runs a sweep and returns its ``runs.parquet`` frame.
"""
from experiments.runner import RunResult, run
from experiments.sweep import sweep

__all__ = ["RunResult", "run", "sweep"]
