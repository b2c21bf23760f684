"""The Mininet backend: the same run on real processes, sockets and kernel links.

Importing this package needs neither root nor Mininet; :func:`execute` does.

>>> from emulator.mininet.naming import RunNames
>>> RunNames("mab12").host(3)
'mab123'
"""
from __future__ import annotations


def execute(plan, programs, tuples_by_stream, **options):
    """Run ``plan`` on an emulated network; see :func:`emulator.mininet.backend.execute`."""
    from emulator.mininet.backend import execute as _execute
    return _execute(plan, programs, tuples_by_stream, **options)
