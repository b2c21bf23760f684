"""Settings that do nothing (issue 57): each is warned about once, naming the keys and
the field that disables them, and none changes the run's id; a log-distance radio on
the unit square without its scale is refused; spec.json's resolved table holds the
defaults a run used."""
import glob
import warnings

import pytest

from experiments import spec as specs
from experiments.planning import build_plan, resolved_values

BASE = """
[run]
name = "inert"
duration = 4.0
step = 0.05

[topology]
generator = "random_geometric"
nodes = 8
radius = 0.6

[streams]
count = 2
rate = 2.0
key_domain = 4

[query]
node = 0
window = 1.0
{query}"""


def load(tmp_path, extra: str):
    path = tmp_path / "spec.toml"
    # a case's [query.*] table brings a threshold into the spec's own [query]
    path.write_text(BASE.format(query="theta = 0.2\n" if "[query." in extra else "") + extra)
    return specs.load(path)[0], str(path)


def said(tmp_path, extra: str) -> list[str]:
    """The SpecWarning lines that loading the spec gives."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load(tmp_path, extra)
    return [str(w.message) for w in caught if issubclass(w.category, specs.SpecWarning)]


@pytest.mark.parametrize("extra, field, keys, because", [
    ("[energy]\nbattery_j = 2.0\nidle_w = 0.01\n", "energy", "battery_j, idle_w do",
     'energy.model = "none"'),
    ("[radio]\nshadowing_db = 4.0\n", "radio", "shadowing_db does",
     'radio.model = "unit_disk"'),
    ("[radio]\nmeters_per_unit = 100.0\n", "radio", "meters_per_unit does",
     'radio.model = "unit_disk"'),
    ('[network]\nrouting = "olsr"\n[routing.aodv]\nhello_interval = 0.5\n', "routing.aodv",
     "hello_interval does", 'network.routing = "olsr"'),
    ('[algorithm]\nname = "qjoin"\n[trigger.atr]\nuse = "clock"\n', "trigger.atr",
     "use does", 'algorithm.name = "qjoin"'),
    ('[params.lottery]\nperiod = 2.0\n', "params.lottery", "period does",
     'algorithm.name = "centralized"'),
    ("[routing]\nseconds_per_unit = 0.1\n", "routing", "seconds_per_unit does",
     'network.routing = "oracle"'),
    # (an empty table of another algorithm holds nothing to warn about)
    ('[query.windows]\nR1 = 1.0\n[params.naive]\n', "query", "theta does",
     'query.predicate = "equality"'),
    ("[network]\ninterference_radius = 0.2\n", "network", "interference_radius does",
     'network.medium = "links"'),
    ('[energy]\nmodel = "radio_states"\nidle_w = 0.1\ne_rx_j_per_bit = 1e-7\n', "energy",
     "e_rx_j_per_bit, idle_w do", 'energy.model = "radio_states"'),
    ('[energy]\nmodel = "first_order"\nprofile = "wifi"\ntx_a = 0.2\n', "energy",
     "profile, tx_a do", 'energy.model = "first_order"'),
])
def test_each_inert_setting_is_warned_once_naming_keys_and_field(tmp_path, extra, field,
                                                                  keys, because):
    lines = said(tmp_path, extra)
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"{tmp_path / 'spec.toml'}: {field}: {keys} nothing under "
                               f"{because}")
    assert lines[0].endswith("the run and its id are those without it" if " does" in keys
                             else "the run and its id are those without them")


def test_pytest_warns_sees_the_warning_as_a_spec_warning(tmp_path):
    with pytest.warns(specs.SpecWarning, match=r'energy: battery_j does nothing under '
                                               r'energy\.model = "none"'):
        load(tmp_path, "[energy]\nbattery_j = 2.0\n")


def test_keys_in_use_and_keys_at_their_default_say_nothing(tmp_path):
    assert said(tmp_path, '[energy]\nmodel = "first_order"\nbattery_j = 2.0\n') == []
    assert said(tmp_path, "[energy]\nbattery_j = 0.5\n") == []       # the default
    # links' lengths in metres for the energy model
    assert said(tmp_path, '[energy]\nmodel = "first_order"\n[radio]\n'
                          'meters_per_unit = 100.0\n') == []
    assert said(tmp_path, '[network]\nrouting = "aodv"\n[routing.aodv]\n'
                          'hello_interval = 0.5\n') == []


def test_a_sweep_that_uses_a_key_somewhere_is_not_warned_about(tmp_path):
    # lottery runs in the grid, energy's model is swept: nothing is inert in every point
    extra = ('[params.lottery]\nperiod = 2.0\n[energy]\nbattery_j = 2.0\n'
             '[sweep.grid]\n"algorithm.name" = ["centralized", "lottery"]\n'
             '"energy.model" = ["none", "first_order"]\n')
    assert said(tmp_path, extra) == []
    # a variant that switches the protocol on uses its table
    extra = ('[routing.aodv]\nhello_interval = 0.5\n[sweep.variants.ideal]\n'
             '[sweep.variants.manet]\n"network.routing" = "aodv"\n')
    assert said(tmp_path, extra) == []


def test_a_sweep_warns_once_about_what_no_point_uses(tmp_path):
    extra = ('[energy]\nbattery_j = 2.0\n[sweep]\nseeds = [1, 2, 3]\n')
    lines = said(tmp_path, extra)
    assert len(lines) == 1 and ": energy: battery_j does nothing" in lines[0]


def test_shipped_specs_warn_about_no_inert_setting():
    """Sweep specs carry tables for every algorithm and network they sweep: none of
    those is inert (the specs' leftovers from narrower sweeps were removed)."""
    for path in sorted(glob.glob("experiments/specs/*.toml")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            specs.load(path)
        assert not [str(w.message) for w in caught if "nothing under" in str(w.message)]


@pytest.mark.parametrize("extra", [
    "[energy]\nbattery_j = 2.0\nsources_mains = true\n",
    "[radio]\nshadowing_db = 4.0\nexponent = 2.5\n",
    '[routing.olsr]\ntc_interval = 1.0\n',
    '[algorithm]\nname = "qjoin"\n[trigger.atr]\nuse = "clock"\n[params.atr]\nhosts = 3\n',
])
def test_an_inert_table_leaves_the_run_id_as_without_it(tmp_path, extra):
    base = "[algorithm]\nname = \"qjoin\"\n" if "qjoin" in extra else ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with_it, source = load(tmp_path, extra)
        without, _ = load(tmp_path, base)
    assert with_it != without            # the resolved specs differ ...
    assert specs.run_id(specs.for_run(with_it, source)) == \
        specs.run_id(specs.for_run(without, source))     # ... the runs do not


def test_points_that_differ_in_inert_keys_only_run_once(tmp_path):
    extra = '[sweep.grid]\n"energy.battery_j" = [1.0, 2.0, 3.0]\n'
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec, source = load(tmp_path, extra)
    runs = specs.expand(spec, source)
    assert len(runs) == 1 and runs[0][1]["energy.battery_j"] is None
    assert runs[0][0]["energy"]["battery_j"] == 0.5


LOG_DISTANCE = '[radio]\nmodel = "log_distance"\n'


def test_log_distance_on_the_unit_square_without_a_scale_is_refused(tmp_path):
    spec, source = load(tmp_path, LOG_DISTANCE)
    with pytest.raises(specs.SpecError) as err:
        build_plan(specs.for_run(spec, source), tmp_path, source)
    assert err.value.field == "radio.meters_per_unit"
    message = str(err.value)
    assert len(message.splitlines()) == 1
    assert 'radio.model = "log_distance" a range of 195 units' in message
    assert "e.g. 325: a range of 0.6 units, topology.radius" in message   # 195 m / 0.6


def test_log_distance_with_a_scale_runs_and_a_matching_radius_is_not_warned(tmp_path):
    # 195.04 m / 325 m per unit = 0.600 units: the radius 0.6 is the radio's range
    spec, source = load(tmp_path, LOG_DISTANCE + "meters_per_unit = 325.0\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plan = build_plan(specs.for_run(spec, source), tmp_path, source)
    assert plan.warnings == () and not caught
    spec, source = load(tmp_path, LOG_DISTANCE + "meters_per_unit = 500.0\n")
    with pytest.warns(specs.SpecWarning, match=r"topology\.radius: 0\.6 does not decide "
                                               r"links .* up to 0\.39 units apart"):
        build_plan(specs.for_run(spec, source), tmp_path, source)


def test_resolved_holds_the_algorithms_routings_and_mobilitys_defaults(tmp_path):
    spec, source = load(tmp_path, '[algorithm]\nname = "qjoin"\n[network]\nrouting = "aodv"\n'
                                  "[routing]\nseconds_per_unit = 0.5\n"
                                  '[mobility]\nmodel = "random_waypoint"\n'
                                  "speed = [0.01, 0.02]\n")
    resolved = resolved_values(build_plan(specs.for_run(spec, source), tmp_path, source))
    qjoin = resolved["params"]["qjoin"]       # no [params.qjoin] table: every default
    assert qjoin["P"] == 60.0 and qjoin["q_user"] == 0.9 and len(qjoin) == 13
    aodv = resolved["routing"]["aodv"]        # RFC seconds over 0.5 s per unit
    assert aodv["hello_interval"] == 2.0 and aodv["active_route_timeout"] == 6.0
    assert aodv["net_diameter"] == 35
    assert resolved["mobility"] == {"model": "random_waypoint", "speed": [0.01, 0.02],
                                    "pause": 0.0, "resolution": 1.0, "failures": None,
                                    "steady_state": False}


def test_babels_table_does_nothing_on_mininet_where_babeld_keeps_its_timers():
    raw = {"run": {"backend": "mininet"}, "network": {"routing": "babel"},
           "routing": {"babel": {"hello_interval": 1.0}}}
    with pytest.warns(specs.SpecWarning, match=r'^m\.toml: routing\.babel: hello_interval '
                                               r'does nothing under run\.backend = '
                                               r'"mininet" \(babeld'):
        specs.warn_inert(specs.resolve(raw, "m.toml"), "m.toml")
    raw["run"]["backend"] = "simpy"                  # the emulated Babel reads it
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert specs.warn_inert(specs.resolve(raw, "m.toml"), "m.toml") == []


def test_a_spark_master_off_the_spark_runtime_does_nothing():
    raw = {"run": {"spark_master": "local[2]"}}
    with pytest.warns(specs.SpecWarning, match=r'^s\.toml: run: spark_master does nothing '
                                               r'under run\.runtime = "inproc"'):
        spec = specs.resolve(raw, "s.toml")
        specs.warn_inert(spec, "s.toml")
    assert specs.for_run(spec)["run"]["spark_master"] is None
    raw["run"]["runtime"] = "spark"
    assert specs.for_run(specs.resolve(raw))["run"]["spark_master"] == "local[2]"


def test_spec_json_holds_the_chosen_algorithms_parameters_without_a_params_table(tmp_path):
    import json

    import experiments

    spec = {"run": {"name": "qj", "duration": 3.0, "step": 0.05},
            "topology": {"generator": "line", "nodes": 4, "delay": 0.05},
            "streams": {"count": 2, "rate": 4.0, "key_domain": 3},
            "query": {"node": 0, "window": 1.0}, "algorithm": {"name": "qjoin"}}
    run = experiments.run(spec, out=tmp_path)
    written = json.loads((run.path / "spec.json").read_text())
    assert written["params"] == {}                       # the spec as given ...
    qjoin = written["resolved"]["params"]["qjoin"]       # ... and what the run used
    assert qjoin["P"] == 60.0 and qjoin["L"] == 1.0 and qjoin["q_user"] == 0.9
    assert written["resolved"]["mobility"] == {"model": "none"}
    assert "routing" not in written["resolved"]          # the oracle has no parameters
