"""docs/SPEC.md is generated from the schemas that validate the input, and kept current."""
from pathlib import Path

from experiments import reference, spec as specs

SPEC_MD = Path(__file__).resolve().parents[1] / "docs" / "SPEC.md"


def test_the_field_reference_is_the_one_the_schemas_give():
    assert SPEC_MD.read_text(encoding="utf-8") == reference.render(), \
        "docs/SPEC.md is stale: run python -m experiments.reference docs/SPEC.md"


def test_every_spec_field_appears_with_its_range_and_default():
    text = reference.render()
    for section, fields in specs.SCHEMA.items():
        for key, rule in fields.items():
            row = f"| `{section}.{key}` | {rule.type_text} | {rule.default_text} |"
            assert row in text
    assert "| `run.step` | number > 0 | 0.01 |" in text
    assert "| `topology.loss` | number >= 0 and <= 1 |" in text


def test_the_schemas_list_every_key_a_generator_model_or_condition_takes():
    # which keys each kind takes is kept beside the checks; the schemas document them all
    from spark_nodes.algorithms.triggers import spec as triggers
    from topologies import spec as topology

    assert topology._TOPOLOGY_COMMON.union(*topology._TOPOLOGY_KEYS.values()) \
        == set(topology.TOPOLOGY_SCHEMA)
    assert {"model"}.union(*topology._MOBILITY_KEYS.values()) == set(topology.MOBILITY_SCHEMA)
    assert set().union(*triggers._KEYS.values()) | {"kind", "at"} \
        == set(triggers.CONDITION_SCHEMA)
