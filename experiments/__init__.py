"""Experiments: specs, validation, planning, runs, sweeps and the results store.

``experiments.run(spec) -> Run`` runs one spec (a TOML path or a dict) and returns its
folder (``experiments.store.Run``: summary, spec, tables read on first use);
``experiments.sweep(spec_path)`` runs a sweep and returns its ``runs.parquet`` frame.
"""
from experiments.runner import run
from experiments.store import Run
from experiments.sweep import sweep

__all__ = ["Run", "run", "sweep"]
