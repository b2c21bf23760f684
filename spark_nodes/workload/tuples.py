"""Stream tuples, result-group identifiers and DataFrame conversion.

A :class:`StreamTuple` is one event of one stream. Result groups are identified by
their members' ``(stream, seq)`` pairs, rendered by :func:`group_id`.

Examples
--------
>>> a = StreamTuple("R1", 0, 0.5, 3, None, None, origin=4)
>>> b = StreamTuple("R2", 7, 0.9, 3, None, None, origin=9)
>>> group_id((b, a))
'R1:0|R2:7'
>>> frame_to_tuples(tuples_to_frame([a, b])) == [a, b]
True
"""

from __future__ import annotations

from typing import Iterable, NamedTuple

import pandas as pd

COLUMNS = ("stream", "seq", "ts", "key", "x", "y", "origin", "size", "entered_at")


class StreamTuple(NamedTuple):
    """One tuple of a stream.

    Attributes
    ----------
    stream : str
        Stream name (``"R1"``, ``"S"``, ...).
    seq : int
        Sequence number within the stream, 0.. in event-time order.
    ts : float
        Event time.
    key : int or None
        Join key (equality predicate).
    x, y : float or None
        Position (distance predicate).
    origin : int
        Source node that produced the tuple.
    size : float
        Size in data units (1.0 = one tuple).
    entered_at : float
        When the tuple entered the system at its source (``ts`` + disorder delay).
    """

    stream: str
    seq: int
    ts: float
    key: int | None
    x: float | None
    y: float | None
    origin: int
    size: float = 1.0
    entered_at: float = 0.0


def member_id(tup: StreamTuple) -> str:
    """Return ``"stream:seq"`` of one tuple.

    Examples
    --------
    >>> member_id(StreamTuple("S", 12, 1.0, None, 0.0, 0.0, 1))
    'S:12'
    """
    return f"{tup.stream}:{tup.seq}"


def group_id(members: Iterable[StreamTuple]) -> str:
    """Return the group identifier: sorted ``"stream:seq"`` joined by ``"|"``.

    Examples
    --------
    >>> t = [StreamTuple("R2", 1, 0.0, 1, None, None, 0),
    ...      StreamTuple("R10", 5, 0.0, 1, None, None, 0)]
    >>> group_id(t)
    'R10:5|R2:1'
    """
    return "|".join(sorted(member_id(m) for m in members))


def tuples_to_frame(tuples: Iterable[StreamTuple]) -> pd.DataFrame:
    """Return a DataFrame with one row per tuple and the :class:`StreamTuple` columns.

    ``key``, ``x`` and ``y`` keep ``None`` as missing values (``key`` is a nullable
    integer column so that keys stay exact integers).

    Examples
    --------
    >>> df = tuples_to_frame([StreamTuple("R1", 0, 0.5, 3, None, None, 2)])
    >>> list(df.columns)[:4], str(df["key"].dtype)
    (['stream', 'seq', 'ts', 'key'], 'Int64')
    """
    rows = list(tuples)
    df = pd.DataFrame.from_records(rows, columns=list(COLUMNS))
    return df.astype({
        "stream": "object", "seq": "int64", "ts": "float64", "key": "Int64",
        "x": "float64", "y": "float64", "origin": "int64", "size": "float64",
        "entered_at": "float64",
    })


def frame_to_tuples(df: pd.DataFrame) -> list[StreamTuple]:
    """Return the tuples of a frame written by :func:`tuples_to_frame`.

    Missing ``key``/``x``/``y`` become ``None``; numbers become Python scalars.

    Raises
    ------
    ValueError
        If a required column is missing.

    Examples
    --------
    >>> t = StreamTuple("S", 1, 2.0, None, 1.5, -2.0, 7, 1.0, 2.25)
    >>> frame_to_tuples(tuples_to_frame([t]))[0] == t
    True
    """
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"tuple frame: missing column(s) {missing}; expected {list(COLUMNS)}")
    out = []
    for stream, seq, ts, key, x, y, origin, size, entered in zip(
            *(df[c].tolist() for c in COLUMNS)):
        out.append(StreamTuple(
            str(stream), int(seq), float(ts),
            None if _missing(key) else int(key),
            None if _missing(x) else float(x),
            None if _missing(y) else float(y),
            int(origin), float(size), float(entered)))
    return out


def _missing(v) -> bool:
    # pandas renders missing values as None, NaN or pd.NA depending on dtype
    return v is None or v is pd.NA or (isinstance(v, float) and v != v)
