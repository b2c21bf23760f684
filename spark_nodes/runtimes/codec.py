"""How events and step outputs cross between the driver and Spark's Python workers.

A 10^5-tuple step sends 10^5 events to the workers and gets 10^5 messages back, so the
codec's cost per item is what a large step costs beyond the node programs themselves.
Lists of items are sent **by columns**: the fields of a list of named tuples of one type
(events, :class:`~contract.program.Outgoing`, :class:`~contract.messages.Message`,
:class:`~spark_nodes.workload.tuples.StreamTuple`, tuples of them) become one list per field,
taken apart by ``zip(*items)`` and put together by ``map`` over ``zip(*columns)``: both
loops run in C, with no Python code per item. A list of mixed types is split by type
(each part taken apart so, plus which part each item came from); a list of anything else
travels as it is (plain pickle). On 10^5 tuples this packs the events in 30 ms instead
of 73 and unpacks the messages in 70-93 ms instead of 148-182 (docs/NOTES.md, "Spark";
``benchmarks/bench_spark_runtime.py --codec 100000`` prints the figures).

Pickling uses plain :mod:`pickle` (cloudpickle only for what pickle cannot name: a class
that travelled by value, a lambda): cloudpickle's per-object hook doubled the pickling of
a 10^5-message output. The cyclic garbage collector is paused while (un)pickling and
building: a million new small objects trigger a collection every few hundred allocations,
which costs more than the work itself.

Example
-------
>>> from contract.messages import Message
>>> from contract.program import Event, TUPLE, TIMER, DELIVER
>>> t = StreamTuple("R1", 0, 0.5, 3, None, None, 2)
>>> evs = [Event(0.5, 1, TUPLE, t), Event(0.7, 2, TIMER, "tick"),
...        Event(0.8, 3, DELIVER, Message(4, "data", 2, 0, 0.1, 1.0, 56, (t,)))]
>>> decode_events(encode_events(evs)) == evs
True
>>> out = StepOutput(messages=[Outgoing(0, "data", 2, 0, 0.5, 1.0, (t,))], memory=(1, 32))
>>> decode_output(encode_output(out)) == out
True
"""
from __future__ import annotations

import pickle
from itertools import chain, islice, repeat

from pyspark import cloudpickle

from contract.messages import Message
from contract.program import Event, Outgoing, StepOutput
from emulator import collector
from spark_nodes.workload.tuples import StreamTuple

PICKLE_PROTOCOL = pickle.HIGHEST_PROTOCOL

# Column tags: how a list of values was taken apart.
_AS_IS, _NAMED, _TUPLES, _MIXED = 0, 1, 2, 3
#: Named tuples whose lists travel as one column per field, their ``payload`` field (if
#: any) as a column of its own kind. Their classes are importable everywhere.
_NAMED_TYPES = (StreamTuple, Message, Outgoing, Event)
_NAMED_INDEX = {cls: i for i, cls in enumerate(_NAMED_TYPES)}
_PAYLOAD = [cls._fields.index("payload") if "payload" in cls._fields else None
            for cls in _NAMED_TYPES]
# Atoms never need taking apart.
_ATOMS = {int, float, str, bool, type(None), bytes}


def dumps(obj) -> bytes:
    """Plain pickle, else cloudpickle (an object pickle cannot name).

    >>> pickle.loads(dumps([1.5, "a"])), pickle.loads(dumps(lambda: 7))()
    ([1.5, 'a'], 7)
    """
    with collector.paused():
        try:
            return pickle.dumps(obj, PICKLE_PROTOCOL)
        except (pickle.PicklingError, AttributeError, TypeError):
            return cloudpickle.dumps(obj, PICKLE_PROTOCOL)


def dumps_by_value(obj) -> bytes:
    """cloudpickle always: for what may hold a class the executors cannot import (a
    program defined in a script or a test travels by value once registered with
    ``cloudpickle.register_pickle_by_value``; importable classes still go by reference),
    where plain pickle would name the class and the worker fail to import it."""
    with collector.paused():
        return cloudpickle.dumps(obj, PICKLE_PROTOCOL)


def loads(blob):
    """Unpickle ``blob`` with the garbage collector paused."""
    with collector.paused():
        return pickle.loads(blob)


def to_columns(values: list):
    """``values`` taken apart for pickling (see the module docstring).

    >>> t = StreamTuple("R1", 0, 0.5, 3, None, None, 2)
    >>> to_columns([t, t._replace(seq=1)])[0:2]
    (1, 0)
    >>> from_columns(to_columns([(t,), (t, t), ()])) == [(t,), (t, t), ()]
    True
    >>> mixed = [1, t, "a", (2,), (t, "b"), t]
    >>> from_columns(to_columns(mixed)) == mixed
    True
    """
    types = list(map(type, values))
    kinds = set(types)
    if len(kinds) > 1:
        if _ATOMS.issuperset(kinds):
            return _AS_IS, values
        # one column per type, and which type each item was
        kinds = list(kinds)
        which = list(map({cls: k for k, cls in enumerate(kinds)}.__getitem__, types))
        return _MIXED, which, [to_columns([v for v, c in zip(values, types) if c is cls])
                               for cls in kinds]
    if not kinds:
        return _AS_IS, values
    cls = kinds.pop()
    if cls in _NAMED_INDEX:
        index = _NAMED_INDEX[cls]
        columns = list(zip(*values))
        if _PAYLOAD[index] is not None:
            columns[_PAYLOAD[index]] = to_columns(list(columns[_PAYLOAD[index]]))
        return _NAMED, index, columns
    if cls is tuple:
        lengths = list(map(len, values))
        flat = list(chain.from_iterable(values))
        if not flat or _ATOMS.issuperset(map(type, flat)):
            return _AS_IS, values
        # one-tuples (data messages of batch 1): no lengths to keep
        return _TUPLES, None if set(lengths) == {1} else lengths, to_columns(flat)
    return _AS_IS, values


def from_columns(packed) -> list:
    """The list :func:`to_columns` took apart."""
    tag = packed[0]
    if tag == _AS_IS:
        return packed[1]
    if tag == _NAMED:
        _, index, columns = packed
        if _PAYLOAD[index] is not None:
            columns = list(columns)
            columns[_PAYLOAD[index]] = from_columns(columns[_PAYLOAD[index]])
        return list(map(tuple.__new__, repeat(_NAMED_TYPES[index]), zip(*columns)))
    if tag == _MIXED:
        _, which, groups = packed
        items = [iter(from_columns(group)) for group in groups]
        return [next(items[k]) for k in which]
    _, lengths, flat = packed
    flat = from_columns(flat)
    if lengths is None:
        return list(zip(flat))
    items = iter(flat)
    return [tuple(islice(items, n)) for n in lengths]


def encode_events(events: list) -> bytes:
    """Pickle a list of :class:`~contract.program.Event` by columns."""
    with collector.paused():
        return dumps(to_columns(events))


def decode_events(blob) -> list:
    """The events :func:`encode_events` pickled."""
    with collector.paused():
        return from_columns(pickle.loads(blob))


def encode_output(out: StepOutput) -> bytes:
    """Pickle a :class:`~contract.program.StepOutput`, its messages by columns."""
    with collector.paused():
        return dumps((to_columns(out.messages), out.results, out.metrics, out.timers,
                      out.traces, out.memory, out.rng_state, out.next_local_id))


def decode_output(blob) -> StepOutput:
    """The step output :func:`encode_output` pickled."""
    with collector.paused():
        messages, *rest = pickle.loads(blob)
        return StepOutput(from_columns(messages), *rest)
