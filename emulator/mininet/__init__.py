"""The Mininet backend: the same run on real processes, sockets and kernel links.

Importing this package needs neither root nor Mininet; :func:`run` does.

>>> from emulator.mininet.naming import RunNames
>>> RunNames("mab12").host(3)
'mab123'
"""
from __future__ import annotations


def run(plan, programs, tuples_by_stream, runtime, **options):
    """Run ``plan`` on an emulated network; see :func:`emulator.mininet.backend.run`."""
    from emulator.mininet.backend import run as _run
    return _run(plan, programs, tuples_by_stream, runtime, **options)
