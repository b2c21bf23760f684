"""Helpers for the ATR/CTR tests: a hand-built plan, random streams, one driver run."""
from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from .ctr_harness import make_plan, make_streams, run_plan
from topologies import grid, random_geometric


@pytest.fixture
def small_grid():
    return grid(3, 3, defaults={"delay": 0.01, "jitter": 0.005})


@pytest.fixture
def geometric():
    return random_geometric(16, 0.45, seed=3, defaults={"delay": 0.01, "jitter": 0.01})


@pytest.fixture
def helpers():
    return SimpleNamespace(make_streams=make_streams, make_plan=make_plan, run_plan=run_plan,
                           inf=math.inf)
