"""The one registry mechanism (``contract.registry``) and its three instances: backends,
runtimes and algorithms; the report's families and the CLI's choices come from them."""
from __future__ import annotations

import re

import pytest

from analysis.families import KNOWN_FAMILIES, SECTIONS, WITHOUT_SECTION, section_families
from contract.registry import Registry
from emulator.backends import BACKENDS
from experiments import spec
from testbed.cli import parser
from spark_nodes.algorithms.registry import ALGORITHMS
from spark_nodes.runtimes.registry import RUNTIMES

REGISTRIES = {"backend": BACKENDS, "runtime": RUNTIMES, "algorithm": ALGORITHMS}


@pytest.mark.parametrize("kind", sorted(REGISTRIES))
def test_an_unknown_name_lists_the_valid_ones(kind):
    registry = REGISTRIES[kind]
    valid = ", ".join(registry.names())
    with pytest.raises(ValueError, match=f"^unknown {kind} 'nosuch'; valid: {re.escape(valid)}$"):
        registry.get("nosuch")


@pytest.mark.parametrize("kind", sorted(REGISTRIES))
def test_a_duplicate_name_is_an_error(kind):
    registry = REGISTRIES[kind]
    name = registry.names()[0]
    with pytest.raises(ValueError, match=f"^{kind} '{name}' is registered twice$"):
        registry.register(name, registry.get(name))
    assert registry.names().count(name) == 1


def test_plugins_load_lazily_once_and_a_failing_one_fails_every_time():
    colors = Registry("color", plugins=("nosuch_plugin_module",))
    for _ in range(2):
        with pytest.raises(ModuleNotFoundError):
            colors.names()
    loaded = Registry("color", plugins=("colorsys",))
    assert loaded._plugins == ("colorsys",)
    assert loaded.names() == [] and loaded._plugins == ()


def test_every_algorithm_has_a_family_the_report_knows_and_vice_versa():
    families = {ALGORITHMS.get(name).family for name in ALGORITHMS.names()}
    assert families == KNOWN_FAMILIES
    assert "triggers" not in KNOWN_FAMILIES and not WITHOUT_SECTION & set(SECTIONS)


def test_the_report_sections_draw_the_registered_algorithms():
    drawn = section_families()
    assert list(drawn) == list(SECTIONS)
    for name in ALGORITHMS.names():
        algorithm = ALGORITHMS.get(name)
        if algorithm.family in SECTIONS:
            assert name in drawn[algorithm.family]
        assert (name in drawn["triggers"]) == algorithm.triggered
    assert set().union(*drawn.values()) <= set(ALGORITHMS.names())
    assert drawn["enrich"] >= {"smj-e", "smj-h", "ctr"}      # they may fetch lookups


def test_the_cli_choices_are_the_registries_names():
    run = parser()._subparsers._group_actions[0].choices["run"]
    choices = {a.dest: a.choices for a in run._actions if a.choices is not None}
    assert list(choices["backend"]) == BACKENDS.names() == list(spec.BACKENDS)
    assert list(choices["runtime"]) == RUNTIMES.names() == list(spec.RUNTIMES)
