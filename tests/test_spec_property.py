"""Random malformed spec tables: each one either plans or fails naming its field.

A good spec has one field replaced by a value drawn from the kinds of mistakes people
make (a negative, NaN, infinity, a string, a bool, a list, a table, none). Planning it
(:func:`experiments.spec.resolve`, :func:`experiments.spec.for_run`,
:func:`experiments.planning.build_plan`: everything that runs before a run starts) must
either succeed or raise a one-line :class:`~experiments.spec.SpecError` that names the
replaced field; never another exception from inside, and never a plan built on a value
its schema refuses.
"""
import copy
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from experiments import spec as specs
from experiments.planning import build_plan

GOOD = {"run": {"name": "prop", "duration": 4.0, "step": 0.05, "seed": 3},
        "topology": {"generator": "grid", "rows": 2, "cols": 3, "delay": 0.05},
        "streams": {"count": 2, "rate": 2.0, "key_domain": 4},
        "query": {"node": 0, "window": 1.0},
        "algorithm": {"name": "centralized"},
        "params": {"centralized": {"batch": 2}}}

#: (dotted field, schema rule or None where the owner checks by hand)
FIELDS = ([(f"{section}.{key}", rule) for section in ("run", "query", "network")
           for key, rule in specs.SCHEMA[section].items()]
          + [(f"topology.{key}", None) for key in ("rows", "cols", "delay", "jitter",
                                                   "bandwidth", "loss", "link_cost", "radius")]
          + [(f"streams.{key}", None) for key in ("count", "rate", "key_domain", "keys",
                                                  "disorder", "disorder_mean", "zipf_s")]
          + [("params.centralized.batch", None), ("mobility.model", None)])

BAD_VALUES = st.sampled_from([-1, -1e9, 0, 0.0, math.nan, math.inf, -math.inf, "abc", "",
                              True, False, [], [1, 2], {}, {"x": 1}, None, "none", 10 ** 9,
                              1.5])


def _planned(raw):
    resolved = specs.for_run(specs.resolve(raw, "prop.toml"), "prop.toml")
    return build_plan(resolved, source="prop.toml")


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(field=st.sampled_from(FIELDS), value=BAD_VALUES)
def test_a_bad_field_is_named_or_the_spec_plans(field, value):
    path, rule = field
    raw = copy.deepcopy(GOOD)
    specs.set_path(raw, path, value)
    try:
        plan = _planned(raw)
    except specs.SpecError as err:
        text = str(err)
        assert text.startswith("prop.toml: ") and "\n" not in text
        assert path in text or err.field in path or path.startswith(err.field), text
        return
    # it planned: the value must be one its schema accepts
    if rule is not None:
        rule.check(value)   # raises BadValue if a refused value slipped through
    assert plan.duration > 0 and plan.step <= plan.duration


@pytest.mark.parametrize("path, value, words", [
    ("run.step", 5.0, "run.step: expected a step <= run.duration"),
    ("topology.loss", 1.5, "topology.loss: expected a number >= 0 and <= 1"),
    ("streams.rate", math.nan, "streams.rate: expected a finite number > 0"),
])
def test_examples_of_the_messages(path, value, words):
    raw = copy.deepcopy(GOOD)
    specs.set_path(raw, path, value)
    with pytest.raises(specs.SpecError, match=words.replace(".", r"\.")):
        _planned(raw)
