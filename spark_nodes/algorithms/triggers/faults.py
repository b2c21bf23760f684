"""An operator's own exceptions (source 001: "when the code of operator 510 throws an
exception while processing a tuple, the window initiator counts it").

:func:`guarded` runs one step of an operator's code; an exception it raises is caught,
recorded (metric ``exception:operator_error``) and told to the operator's window
initiator as an exception of type ``operator_error`` from its own node, and the node
keeps running: the tuple that raised is skipped, not retried.

>>> from types import SimpleNamespace
>>> from spark_nodes.algorithms.triggers.conditions import Exceptions
>>> from spark_nodes.algorithms.triggers.windows import WindowInitiator
>>> rows = []
>>> ctx = SimpleNamespace(now=2.0, node=4, record=lambda m, v: rows.append((m, v)))
>>> ini = WindowInitiator(Exceptions(above=1, type="operator_error"), keep=False)
>>> guarded(ctx, ini, lambda x: 10 / x, 5)
(2.0, [])
>>> value, fired = guarded(ctx, ini, lambda x: 10 / x, 0)
>>> value, [(w.time, w.kind) for w in fired], rows
(None, [(2.0, 'exception')], [('exception:operator_error', 1)])
>>> ini.obs.exception_count("operator_error", 0.0, 2.0, origin=4)
1
"""
from __future__ import annotations

#: The exception type of an operator's own error.
OPERATOR_ERROR = "operator_error"


def guarded(ctx, initiator, work, *args):
    """``(work(*args), [])``, or ``(None, windows fired)`` when ``work`` raised: the
    error is counted (see the module docstring) and the node keeps running.
    ``initiator`` may be None (the error is only recorded)."""
    try:
        return work(*args), []
    except Exception:   # noqa: BLE001 -- any error of the operator's code is an exception to count
        ctx.record(f"exception:{OPERATOR_ERROR}", 1)
        if initiator is None:
            return None, []
        return None, initiator.exception(OPERATOR_ERROR, ctx.now, ctx.node)
