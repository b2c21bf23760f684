"""Spec validation: defaults, field-named errors, sweeps, run ids."""
import math

import pytest

from experiments import spec as specs
from experiments.spec import SpecError


def test_defaults_fill_every_known_field():
    s = specs.resolve({})
    assert s["run"]["runtime"] == "inproc" and s["run"]["backend"] == "simpy"
    assert s["query"]["window"] is None and s["algorithm"]["name"] == "centralized"


@pytest.mark.parametrize("raw, field, expected", [
    ({"run": {"duration": -1}}, "run.duration", "a number > 0"),
    ({"run": {"seed": 1.5}}, "run.seed", "an integer"),
    ({"run": {"runtime": "gpu"}}, "run.runtime", "one of inproc, spark"),
    ({"query": {"predicate": "like"}}, "query.predicate", "one of equality, distance"),
    ({"query": {"windows": {"R1": "wide"}}}, "query.windows.R1", "a number"),
    ({"stream": {}}, "stream", "unknown section"),
    ({"run": {"name": "x", "colour": 1}}, "run.colour", "unknown key"),
    ({"sweep": {"grid": {"streams.count": 3}}}, "sweep.grid.streams.count", "a non-empty list"),
    ({"sweep": {"grid": {"count": [3]}}}, "sweep.grid.count", "a dotted path"),
    ({"sweep": {"seeds": [1, "2"]}}, "sweep.seeds", "a list of integers"),
])
def test_bad_fields_are_named(raw, field, expected):
    with pytest.raises(SpecError) as err:
        specs.resolve(raw, source="bad.toml")
    assert err.value.field == field
    assert str(err.value).startswith(f"bad.toml: {field}: ") and expected in str(err.value)


def test_toml_syntax_error_names_the_file_and_line(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("[run]\nname = \"x\"\nduration = = 3\n")
    with pytest.raises(SpecError) as err:
        specs.load(path)
    assert "broken.toml" in str(err.value) and "line 3" in str(err.value)


def test_infinite_and_none_windows():
    s = specs.resolve({"query": {"window": math.inf, "windows": {"R2": "none"}}})
    assert s["query"]["window"] == math.inf and s["query"]["windows"]["R2"] is None
    assert '"window":"inf"' in specs.canonical_json(s)


def test_sweep_expansion_and_stable_run_ids():
    s = specs.resolve({"run": {"name": "sw"}, "sweep": {
        "seeds": [1, 2], "grid": {"algorithm.name": ["a", "b"], "query.window": [3.0, "none"]}}})
    runs = specs.expand(s)
    assert len(runs) == 8
    ids = [specs.run_id(r) for r, _ in runs]
    assert len(set(ids)) == 8 and all(i.startswith("sw-") for i in ids)
    assert ids == [specs.run_id(r) for r, _ in specs.expand(s)]
    none_run = next(r for r, p in runs if p["query.window"] == "none")
    assert none_run["query"]["window"] is None and none_run["sweep"] == {"seeds": [], "grid": {}}


def test_other_algorithms_parameters_neither_change_the_id_nor_multiply_runs():
    s = specs.resolve({"sweep": {"seeds": [1], "grid": {
        "algorithm.name": ["centralized", "naive"], "params.centralized.batch": [1, 2, 4]}}})
    runs = specs.expand(s)
    # 3 centralized runs, and 1 naive run (batch is not its parameter)
    assert sorted(r["algorithm"]["name"] for r, _ in runs) == ["centralized"] * 3 + ["naive"]
    naive = next(p for r, p in runs if r["algorithm"]["name"] == "naive")
    assert naive["params.centralized.batch"] is None
    assert all(set(r["params"]) <= {r["algorithm"]["name"]} for r, _ in runs)


def test_params_table_of_an_unknown_algorithm_is_an_error():
    with pytest.raises(SpecError, match="params.smj-x: no such algorithm"):
        specs.for_run(specs.resolve({"params": {"smj-x": {}}}), "s.toml")


def test_a_negative_seed_is_named_run_seed():
    with pytest.raises(specs.SpecError, match=r"run\.seed: expected a non-negative integer"):
        specs.resolve({"run": {"seed": -5}})


def test_a_negative_seed_on_the_command_line_is_named(capsys):
    from testbed.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["run", "experiments/specs/quickstart.toml", "--seed", "-5"])
    assert stop.value.code != 0
    assert "argument --seed: expected a non-negative integer" in capsys.readouterr().err


def test_sweep_variants_run_the_whole_grid_each_and_name_themselves():
    spec = specs.resolve({"sweep": {
        "seeds": [1, 2], "grid": {"streams.count": [3, 4]},
        "variants": {"ideal": {}, "manet": {"network.routing": "aodv",
                                            "network.medium": "shared"}}}})
    runs = specs.expand(spec)
    assert len(runs) == 8
    for run_spec, point in runs:
        manet = point["variant"] == "manet"
        assert run_spec["network"]["routing"] == ("aodv" if manet else "oracle")
        assert run_spec["network"]["medium"] == ("shared" if manet else "links")
        assert run_spec["streams"]["count"] == point["streams.count"]
    assert len({specs.run_id(s) for s, _ in runs}) == 8
    assert [p["variant"] for _, p in runs[:4]] == ["ideal"] * 4


@pytest.mark.parametrize("variants, field", [
    ({"manet": {"network.routin": "aodv"}}, "sweep.variants.manet.network.routin"),
    ({"manet": ["network.routing"]}, "sweep.variants.manet"),
    ({"manet": {"streams.count": 3}}, "sweep.variants.manet.streams.count"),
])
def test_bad_sweep_variants_are_one_line_naming_the_field(variants, field):
    with pytest.raises(SpecError) as err:
        specs.resolve({"sweep": {"grid": {"streams.count": [3, 4]}, "variants": variants}},
                      "s.toml")
    assert str(err.value).startswith(f"s.toml: {field}: ")


@pytest.mark.parametrize("network, backend", [
    ({"queue_max_wait": 0}, "simpy"),
    ({"queue_max_wait": 0.5}, "mininet"),
])
def test_a_queue_limit_the_backend_cannot_honour_is_named(network, backend):
    with pytest.raises(SpecError) as err:
        specs.resolve({"run": {"backend": backend}, "network": network}, "s.toml")
    assert str(err.value).startswith("s.toml: network.queue_max_wait: ")
    assert "\n" not in str(err.value)
