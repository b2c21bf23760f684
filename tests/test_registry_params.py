"""Algorithm parameters carry their range: a value outside it is one line naming the field."""
import math

import pytest

from experiments import spec as specs
from experiments.planning import build_plan
from experiments.spec import SpecError
from spark_nodes.algorithms import registry

EVERY_PARAM = [(name, key) for name in registry.ALGORITHMS.names()
               for key in sorted(registry.ALGORITHMS.get(name).params)]


@pytest.mark.parametrize("name, key", EVERY_PARAM)
def test_every_default_passes_its_own_range(name, key):
    algorithm = registry.ALGORITHMS.get(name)
    default = algorithm.params[key].default
    assert registry.validate_params(algorithm, {key: default})[key] == default


@pytest.mark.parametrize("name, params, message", [
    ("centralized", {"batch": 0}, "params.centralized.batch: expected an integer >= 1, got 0"),
    ("centralized", {"batch": -1},
     "params.centralized.batch: expected an integer >= 1, got -1"),
    ("centralized", {"retention": -0.5},
     "params.centralized.retention: expected a number >= 0 (or inf) or none, got -0.5"),
    ("smj-h", {"period": 0}, "params.smj-h.period: expected a number > 0, got 0.0"),
    ("smj-h", {"period": "inf"}, "params.smj-h.period: expected a number > 0, got inf"),
    ("smj-e", {"filter": "sum"}, "params.smj-e.filter: expected one of mask, product, "
                                 "got 'sum'"),
    ("smj-h", {"lookahead": 0}, "params.smj-h.lookahead: expected an integer >= 1, got 0"),
    ("lottery", {"lottery_draw": "max"},
     "params.lottery.lottery_draw: expected one of argmax, proportional, got 'max'"),
    ("qjoin", {"q_user": 1.5}, "params.qjoin.q_user: expected a number >= 0 and <= 1, "
                               "got 1.5"),
    ("qjoin", {"g": math.nan}, "params.qjoin.g: expected a number > 0, got nan"),
    ("no-buffer", {"purge": "never"},
     "params.no-buffer.purge: expected one of window, literal, got 'never'"),
    ("k-slack", {"K": -0.1}, "params.k-slack.K: expected a number >= 0, got -0.1"),
    ("ctr", {"hosts": 0}, "params.ctr.hosts: expected an integer >= 1, got 0"),
    ("ctr", {"store": "random"}, "params.ctr.store: expected one of cover, llf, "
                                 "got 'random'"),
    ("atr", {"flush": 0.0}, "params.atr.flush: expected a number > 0 or none, got 0.0"),
    ("atr", {"adapt_every": 0}, "params.atr.adapt_every: expected an integer >= 1, got 0"),
    ("ctr", {"route_ttl": -2.0},
     "params.ctr.route_ttl: expected a number >= 0 (or inf), got -2.0"),
    ("enrich-on-demand", {"batch_period": -1},
     "params.enrich-on-demand.batch_period: expected a number >= 0, got -1.0"),
    ("enrich-predicted", {"threshold": 1.1},
     "params.enrich-predicted.threshold: expected a number >= 0 and <= 1, got 1.1"),
    ("enrich-eager", {"training_seed": -1},
     "params.enrich-eager.training_seed: expected an integer >= 0, got -1"),
])
def test_a_value_out_of_range_is_one_line_naming_the_field(name, params, message):
    with pytest.raises(ValueError) as err:
        registry.validate_params(registry.ALGORITHMS.get(name), params)
    assert str(err.value) == message


@pytest.mark.parametrize("name, params", [
    ("centralized", {"retention": "inf"}), ("centralized", {"retention": None}),
    ("smj-h", {"grace": math.inf, "margin": 0}), ("qjoin", {"q_user": 0, "L": 0.1}),
    ("enrich-on-demand", {"cache_ttl": "inf"}), ("smj-e", {"plan_ttl": 0.0}),
    ("atr", {"flush": None, "report_interval": None}),
])
def test_the_ends_of_a_range_that_ran_before_still_pass(name, params):
    registry.validate_params(registry.ALGORITHMS.get(name), params)


def test_type_errors_keep_their_words():
    with pytest.raises(ValueError, match=r"^params\.smj-h\.period: expected float, "
                                         r"got 'x'$"):
        registry.validate_params(registry.ALGORITHMS.get("smj-h"), {"period": "x"})
    with pytest.raises(ValueError, match=r"^params\.centralized\.batch: expected int, "
                                         r"got 1\.5$"):
        registry.validate_params(registry.ALGORITHMS.get("centralized"), {"batch": 1.5})


def test_a_batch_of_zero_is_refused_before_the_run():
    spec = {"topology": {"generator": "line", "nodes": 5},
            "algorithm": {"name": "centralized"}, "params": {"centralized": {"batch": 0}}}
    with pytest.raises(SpecError) as err:
        build_plan(specs.resolve(spec, "spec.toml"), source="spec.toml")
    assert "params.centralized.batch: expected an integer >= 1, got 0" in str(err.value)
    assert "\n" not in str(err.value)


def test_a_range_bounds_a_number_and_choices_a_string():
    with pytest.raises(ValueError, match="low/high bound a number"):
        registry.Param((str,), "x", low=0)
    with pytest.raises(ValueError, match="choices are strings"):
        registry.Param((int,), 1, choices=(1, 2))
    assert registry.Param((float,), 0.5, low=0, high=1).type_text == "number >= 0 and <= 1"
    assert registry.Param((int, type(None)), None).type_text == "integer or `none`"
