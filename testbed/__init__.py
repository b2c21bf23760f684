"""The command line, ``testbed``: the top floor of the layers.

It parses arguments and hands over to the layers below: specs, runs and sweeps
(:mod:`experiments`), reports (:mod:`analysis`), topology files (:mod:`topologies`).
Nothing below imports it. ``python -m testbed`` is the same as the ``testbed`` script.
"""
