"""A diagnostic of the AODV control gap (VALIDATION.md, "Why they differ"): the testbed's
AODV run with ns-3's handling of a broken route's sequence number instead of RFC 3561's.

RFC 3561 §6.11 raises the destination sequence number of every route a broken link
invalidates, so the next RREQ for it asks for a fresher number than any other node
holds, and only the destination (or a node that has heard the new number) may answer.
ns-3 3.44's ``aodv::RoutingTable::InvalidateRoutesWithDst`` only marks the routes
invalid: its RREQs ask for the number every node on the old routes still holds, and
any of them answers (with a gratuitous RREP to the destination, and a RREP-ACK when the
destination is its neighbour). :func:`ns3_seqno_rule` gives the testbed ns-3's rule for
the length of a ``with`` block; nothing outside this module uses it (the testbed keeps
the RFC's rule: the comparison on the page is not tuned).

Run: ``.venv/bin/python -m benchmarks.ns3_validation.aodv_seqno`` (AODV, light load,
5 and 20 m/s, seeds 1-3, both rules; about a minute).

>>> from emulator.routing.aodv.rtable import RouteTable
>>> table = RouteTable()
>>> table.offer(3, next_hop=1, hops=2, seq=5, lifetime=10.0)
True
>>> table.add_precursor(3)
>>> with ns3_seqno_rule():
...     table.break_link(1, 2.0)
[(3, 5)]
>>> table.offer(4, next_hop=1, hops=1, seq=7, lifetime=10.0)
True
>>> table.add_precursor(4)
>>> table.break_link(1, 2.0)       # the RFC's rule again: 7 raised to 8
[(4, 8)]
"""
from __future__ import annotations

import contextlib
import statistics
import sys

from emulator.routing.aodv.rtable import RouteTable

_rfc_break_link = RouteTable.break_link


def _break_link_keeping_seq(self, neighbour: int, delete_at: float) -> list:
    """:meth:`RouteTable.break_link` without raising the sequence numbers (ns-3)."""
    return _rfc_break_link(self, neighbour, delete_at, raise_seq=False)


@contextlib.contextmanager
def ns3_seqno_rule():
    """Within the block, a broken link leaves its routes' sequence numbers as they were."""
    RouteTable.break_link = _break_link_keeping_seq
    try:
        yield
    finally:
        RouteTable.break_link = _rfc_break_link


def compare(speeds=(5.0, 20.0), duration: float = 60.0) -> list[dict]:
    """Mean delivery, control packets per second and control by type of the testbed at
    light load, per speed and rule (``"rfc"``, ``"ns-3"``)."""
    from benchmarks.ns3_validation import testbed_side
    from benchmarks.ns3_validation.scenario import matrix

    out = []
    for speed in speeds:
        scenarios = [sc for sc in matrix(False, duration=duration) if sc.routing == "aodv"
                     and sc.load == "light" and sc.speed == speed]
        for rule in ("rfc", "ns-3"):
            with (ns3_seqno_rule() if rule == "ns-3" else contextlib.nullcontext()):
                rows = [testbed_side.run(sc) for sc in scenarios]
            types: dict[str, float] = {}
            for row in rows:
                for kind, pps in row["control_by_type"].items():
                    types[kind] = types.get(kind, 0.0) + pps / len(rows)
            out.append({"speed": speed, "rule": rule,
                        "delivery_ratio": statistics.mean(r["delivery_ratio"] for r in rows),
                        "control_pps": statistics.mean(r["control_pps"] for r in rows),
                        "control_by_type": dict(sorted(types.items()))})
    return out


def main() -> int:
    for row in compare():
        kinds = ", ".join(f"{k} {v:.2f}" for k, v in row["control_by_type"].items())
        print(f"{row['speed']:g} m/s  {row['rule']:5}  delivery {row['delivery_ratio']:.3f}  "
              f"control {row['control_pps']:.1f}/s  ({kinds})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
