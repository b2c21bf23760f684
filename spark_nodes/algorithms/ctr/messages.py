"""Payloads of the messages ATR, CTR and the single host exchange (all picklable).

===============  =========  ==========================================================
payload          kind       from -> to
===============  =========  ==========================================================
StreamTuple      data       source -> diffusion (one tuple per message)
EndOfStream      control    source -> diffusion (at finish: how many tuples it sent)
Flush            data       diffusion -> the single host (closed tuples, in order)
AtrPart          data       diffusion -> ATR host (one part of a batch)
CtrBase          data       diffusion -> CTR hosts (a segment, with its whole route)
CtrPartial       interm.    CTR host -> CTR host (partial groups, hop to hop)
Release          control    diffusion -> CTR host (drop a copy after ``probes`` probes)
LoadReport       report     host -> diffusion (measured load, probe statistics)
Results          result     host -> fusion (complete groups)
===============  =========  ==========================================================
"""
from __future__ import annotations

from typing import NamedTuple


class EndOfStream(NamedTuple):
    sent: int              # tuples this source node sent to the diffusion node in all


class Flush(NamedTuple):
    seq: int
    wm: float              # every tuple with ts < wm has been sent by now
    tuples: tuple


class AtrPart(NamedTuple):
    batch: int
    seq: int
    last: bool
    tuples: tuple


class CtrBase(NamedTuple):
    route: object          # spark_nodes.algorithms.ctr.ctr.Route
    store: bool
    tuples: tuple


class CtrPartial(NamedTuple):
    route: object
    hop: int               # index into route.hops of the hop that probes these
    partials: tuple


class Release(NamedTuple):
    seg: tuple
    probes: int


class LoadReport(NamedTuple):
    probes_rate: float
    tuples: int
    units_rate: float
    stats: tuple           # ((a, b, comparisons, matches), ...) since the last report


class Results(NamedTuple):
    groups: tuple


def units_of(groups) -> float:
    """Data units of a collection of groups / partial groups (sum of member sizes).

    >>> from spark_nodes.workload.tuples import StreamTuple as T
    >>> units_of([(T("A", 0, 0.0, 1, None, None, 0), T("B", 0, 0.0, 1, None, None, 0))])
    2.0
    """
    return float(sum(m.size for g in groups for m in g))
