"""Disorder of a sensor system's own: sensor clocks that lag and a collector that batches.

The soccer stand-in (:mod:`spark_nodes.workload.soccer`) samples every sensor on time and
in order; a real tracking system does not. This model (``[streams] disorder =
"collector"``, soccer and csv generators only) gives the data the disorder of such a
system, before any network:

- **sensor clocks**: each sensor's clock lags true time by its own fixed offset, drawn
  uniform on ``[0, clock_lag]``; a reading is stamped ``ts = true time - offset``. Two
  sensors of one stream then disagree persistently: the readings of the most lagging
  one always look up to ``clock_lag`` late next to the others';
- **radio to the collector**: each reading reaches the collector after an exponential
  delay of mean ``disorder_mean``;
- **batching at the collector**: the collector forwards what it has received every
  ``batch`` seconds (from a random phase), sensor by sensor (by sensor id, each
  sensor's readings by time), a tuple every ``spacing`` seconds. So a batch enters
  the system together, and inside it the first sensor's latest reading comes before
  the next sensor's earliest: delays up to ``batch`` within one stream.

``entered_at`` is when the tuple leaves the collector; ``key`` is the sensor id (as the
soccer generator sets it). Randomness comes from one ``numpy.random.Generator``.

Examples
--------
>>> import numpy as np
>>> from spark_nodes.workload.tuples import StreamTuple
>>> ts = [0.0, 0.1, 0.2, 0.3, 0.0, 0.1, 0.2, 0.3]
>>> tuples = [StreamTuple("S", i, t, 13 if i < 4 else 47, 0.0, 0.0, 0, 1.0, t)
...           for i, t in enumerate(ts)]
>>> out = collector_disorder(tuples, np.random.default_rng(1), radio_mean=0.0,
...                          clock_lag=0.0, batch=0.25, spacing=0.001)
>>> len({round(t.entered_at - t.ts, 6) for t in out}) > 1     # delays differ
True
>>> [t.seq for t in sorted(out, key=lambda t: t.entered_at)]   # 47@0.1 after 13@0.2
[0, 4, 1, 2, 5, 6, 3, 7]
"""
from __future__ import annotations

import math

import numpy as np

#: Shape options of the model and their defaults (``[streams] disorder_options``).
OPTIONS = {"clock_lag": 0.05, "batch": 0.5, "spacing": 1e-4}


def check_options(radio_mean: float, **options) -> dict:
    """The options with defaults filled in; unknown or out-of-range ones raise.

    >>> check_options(0.02, batch=1.0)["clock_lag"]
    0.05
    >>> check_options(0.02, batchsize=1.0)
    Traceback (most recent call last):
    ...
    ValueError: disorder 'collector': unknown option 'batchsize'; valid: batch, clock_lag, spacing
    """
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ValueError(f"disorder 'collector': unknown option {unknown[0]!r}; valid: "
                         f"{', '.join(sorted(OPTIONS))}")
    out = {**OPTIONS, **options}
    for name, value in (("disorder_mean", radio_mean), *out.items()):
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or value < 0:
            raise ValueError(f"disorder 'collector': {name} must be a number >= 0, "
                             f"got {value!r}")
    if out["batch"] <= 0:
        raise ValueError(f"disorder 'collector': batch must be > 0, got {out['batch']!r}")
    return {k: float(v) for k, v in out.items()}


def collector_disorder(tuples, rng: np.random.Generator, radio_mean: float = 0.02,
                       clock_lag: float = 0.05, batch: float = 0.5,
                       spacing: float = 1e-4) -> list:
    """The tuples of one stream restamped by lagging sensor clocks and timed by the
    collector's batches (module text); same order and ``seq`` as given.

    Parameters
    ----------
    tuples : list of StreamTuple
        One stream, ``ts`` the true sampling times, ``key`` the sensor id.
    rng : numpy.random.Generator
        Draws the clock offsets (one per sensor id, in id order), radio delays and the
        batch phase.
    radio_mean, clock_lag, batch, spacing : float
        Mean radio delay, largest clock lag, batch period and the time between two
        tuples of a batch (seconds).
    """
    if not tuples:
        return []
    true = np.array([t.ts for t in tuples], dtype=float)
    sid = np.array([t.key for t in tuples], dtype=np.int64)
    sensors = np.unique(sid)
    lag = dict(zip(sensors.tolist(), rng.uniform(0.0, clock_lag, sensors.size)))
    stamped = true - np.array([lag[s] for s in sid.tolist()])
    received = true + (rng.exponential(radio_mean, true.size) if radio_mean > 0
                       else np.zeros(true.size))
    phase = rng.uniform(0.0, batch)
    sent = phase + np.ceil((received - phase) / batch) * batch
    # inside a batch: sensor by sensor, each sensor's readings by time
    order = np.lexsort((stamped, sid, sent))
    entered = np.empty(true.size)
    start = 0
    for k in range(1, order.size + 1):
        if k == order.size or sent[order[k]] != sent[order[start]]:
            entered[order[start:k]] = sent[order[start]] + spacing * np.arange(1, k - start + 1)
            start = k
    return [t._replace(ts=float(s), entered_at=float(max(e, s)))
            for t, s, e in zip(tuples, stamped, entered)]
