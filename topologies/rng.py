"""Turning a seed argument into a ``numpy.random.Generator``.

Every random function of this package takes ``seed`` as an ``int`` or a ``Generator``;
there is no hidden global state and no ``None`` meaning "use the clock".
"""
from __future__ import annotations

import numbers

import numpy as np


def as_generator(seed: int | np.random.Generator) -> np.random.Generator:
    """Return a Generator for ``seed`` (a Generator is returned as is, and advanced by use).

    Examples
    --------
    >>> int(as_generator(3).integers(100)) == int(as_generator(3).integers(100))
    True
    >>> as_generator(None)
    Traceback (most recent call last):
    ...
    ValueError: seed: expected an int >= 0 or a numpy.random.Generator, got None
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0:
        return np.random.default_rng(int(seed))
    raise ValueError(
        f"seed: expected an int >= 0 or a numpy.random.Generator, got {seed!r}")
