"""The codec that carries events and step outputs to Spark's Python workers and back: a
list taken apart by columns comes back equal, item by item of the same types."""
from hypothesis import given, settings
from hypothesis import strategies as st

from contract.messages import Message
from contract.program import DELIVER, TIMER, TUPLE, Event, Outgoing, StepOutput
from spark_nodes.runtimes.codec import (decode_events, decode_output, encode_events,
                                        encode_output, from_columns, to_columns)
from spark_nodes.workload.tuples import StreamTuple

atoms = st.one_of(st.integers(-5, 5), st.floats(allow_nan=False), st.text(max_size=3),
                  st.none(), st.booleans())
stream_tuples = st.builds(StreamTuple, st.sampled_from(["R1", "R2", "S"]),
                          st.integers(0, 99), st.floats(0, 10), st.one_of(st.none(),
                          st.integers(0, 9)), st.none(), st.none(), st.integers(0, 9),
                          st.just(1.0), st.floats(0, 10))
# What a payload can be: a tuple, a batch of tuples (a data message), a control message's
# atoms, dict or list, and tuples mixing them.
payloads = st.recursive(
    st.one_of(atoms, stream_tuples),
    lambda inner: st.one_of(st.tuples(inner), st.tuples(inner, inner),
                            st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=2), inner, max_size=2),
                            st.lists(stream_tuples, max_size=3).map(tuple)),
    max_leaves=6)
messages = st.builds(Message, st.integers(0, 99), st.sampled_from(["data", "ctl"]),
                     st.integers(0, 9), st.integers(0, 9), st.floats(0, 10),
                     st.floats(0, 5), st.integers(0, 500), payloads)
events = st.lists(st.one_of(
    st.builds(Event, st.floats(0, 10), st.integers(0, 99), st.just(TUPLE), stream_tuples),
    st.builds(Event, st.floats(0, 10), st.integers(0, 99), st.just(TIMER), payloads),
    st.builds(Event, st.floats(0, 10), st.integers(0, 99), st.just(DELIVER), messages)),
    max_size=30)


def same(a, b) -> bool:
    """Equal, and of the same type at every level (a list stays a list, a named tuple
    the same named tuple)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


@settings(max_examples=300, deadline=None)
@given(events)
def test_events_come_back_as_they_went(evs):
    assert same(decode_events(encode_events(evs)), evs)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.builds(Outgoing, st.integers(0, 99), st.sampled_from(["data", "ctl"]),
                          st.integers(0, 9), st.integers(0, 9), st.floats(0, 10),
                          st.floats(0, 5), payloads, st.booleans()), max_size=30),
       st.lists(st.tuples(st.floats(0, 10), st.integers(0, 9)), max_size=3))
def test_step_outputs_come_back_as_they_went(outgoing, results):
    out = StepOutput(messages=outgoing, results=results, memory=(len(outgoing), 8))
    back = decode_output(encode_output(out))
    assert same(back.messages, out.messages) and back == out


def test_a_uniform_list_travels_by_columns_and_a_mixed_one_by_type():
    t = StreamTuple("R1", 0, 0.5, 3, None, None, 2)
    batch = [Outgoing(i, "data", 1, 0, 0.5, 1.0, (t._replace(seq=i),), False)
             for i in range(3)]
    tag, _, columns = to_columns(batch)
    # one column per field; the payload column holds the tuples' own columns
    assert tag == 1 and len(columns) == len(Outgoing._fields)
    assert columns[0] == (0, 1, 2) and columns[6][0] == 2       # one-tuples of tuples
    assert from_columns(to_columns(batch)) == batch
    mixed = [t, "tick", (t, 3)]
    tag, which, groups = to_columns(mixed)
    assert tag == 3 and sorted(which) == [0, 1, 2] and len(groups) == 3
    assert from_columns(to_columns(mixed)) == mixed
