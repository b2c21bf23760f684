"""The state containers: a journal replayed into a store keyed by slot always rebuilds
the container (what the Spark runtime relies on to write only what changed)."""
import pickle

from hypothesis import given, settings
from hypothesis import strategies as st

from contract.state import StateList, StateMap

list_ops = st.lists(st.one_of(
    st.tuples(st.just("append"), st.integers(0, 99)),
    st.tuples(st.just("insert"), st.integers(-3, 10), st.integers(0, 99)),
    st.tuples(st.just("del"), st.integers(-3, 10)),
    st.tuples(st.just("del_slice"), st.integers(0, 5), st.integers(0, 8)),
    st.tuples(st.just("set"), st.integers(-3, 10), st.integers(0, 99)),
    st.tuples(st.just("pop"), st.integers(-3, 10)),
    st.tuples(st.just("clear"),),
    st.tuples(st.just("retain"), st.integers(0, 99)),
    st.tuples(st.just("commit"),)), max_size=40)


def apply(target, op):
    name, *args = op
    if name == "append":
        target.append(args[0])
    elif name == "insert":
        target.insert(args[0], args[1])
    elif name == "del" and target:
        del target[args[0] % len(target)]
    elif name == "del_slice":
        del target[args[0]:args[1]]
    elif name == "set" and target:
        target[args[0] % len(target)] = args[1]
    elif name == "pop" and target:
        target.pop(args[0] % len(target))
    elif name == "clear":
        target.clear()
    elif name == "retain":
        if isinstance(target, list):
            target[:] = [x for x in target if x < args[0]]
        else:
            target.retain(lambda x: x < args[0])


def flush(container, store: dict) -> None:
    added, removed = container.changes()
    for slot in removed:
        store.pop(slot)          # a removed slot must be in the store
    store.update(added)
    container.commit()


@settings(max_examples=300)
@given(st.lists(st.integers(0, 99), max_size=5), list_ops)
def test_list_journal_rebuilds_the_list(initial, ops):
    reference = list(initial)
    tracked = StateList(initial)
    tracked.track()
    store: dict = {}
    for op in ops:
        if op[0] == "commit":
            flush(tracked, store)
            continue
        apply(reference, op)
        apply(tracked, op)
        assert list(tracked) == reference
    flush(tracked, store)
    assert sorted(store) == sorted(tracked.slots)
    assert [store[s] for s in tracked.slots] == reference
    # what the runtime rebuilds from the store continues the same way
    again = StateList([store[s] for s in tracked.slots])
    again.track(tracked.slots)
    again.append(-1)
    added, removed = again.changes()
    assert removed == set() and list(added.values()) == [-1]
    assert set(added).isdisjoint(store)


map_ops = st.lists(st.one_of(
    st.tuples(st.just("set"), st.sampled_from("abcdef"), st.integers(0, 9)),
    st.tuples(st.just("del"), st.sampled_from("abcdef")),
    st.tuples(st.just("commit"),)), max_size=40)


@settings(max_examples=300)
@given(map_ops)
def test_map_journal_rebuilds_the_map_in_insertion_order(ops):
    reference: dict = {}
    tracked = StateMap()
    tracked.track()
    store: dict = {}
    for op in ops:
        if op[0] == "commit":
            added, removed = tracked.changes()
            for slot in removed:
                store.pop(slot, None)
            store.update(added)
            tracked.commit()
        elif op[0] == "set":
            reference[op[1]] = op[2]
            tracked[op[1]] = op[2]
        elif op[1] in reference:
            del reference[op[1]]
            del tracked[op[1]]
    added, removed = tracked.changes()
    for slot in removed:
        store.pop(slot, None)
    store.update(added)
    assert dict(tracked) == reference and list(tracked) == list(reference)
    assert [store[s] for s in tracked.slots] == list(reference.items())
    assert sorted(store) == sorted(tracked.slots)


def test_containers_pickle_as_plain_values_and_untracked():
    buf = StateList([1, 2], rows="object")
    buf.track()
    copy = pickle.loads(pickle.dumps(buf))
    assert copy == [1, 2] and copy.slots is None and copy.changes() == ({}, set())
    entries = StateMap({"a": 1})
    assert dict(pickle.loads(pickle.dumps(entries))) == {"a": 1}


def test_a_list_refuses_what_it_cannot_journal():
    import pytest

    with pytest.raises(ValueError, match="rows must be 'object' or 'tuple'"):
        StateList(rows="typed")
    with pytest.raises(TypeError, match="assign items one at a time"):
        StateList([1])[0:1] = [2]
