"""The command line on malformed specs (issue 57): a valid small spec with one value,
type or key changed, a file that is not TOML, or no file at all. ``testbed check`` (the
checks ``run`` and ``sweep`` make before they start) either accepts it (exit 0) or
prints one line ``error: <spec file>: field: what`` and exits 2; never a traceback.
The same holds for ``testbed run`` on an algorithm parameter that the algorithm's own
preparation checks first.
"""
import copy
import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from experiments import spec as specs
from testbed.cli import main

GOOD = {"run": {"name": "fuzz", "duration": 4.0, "step": 0.05, "seed": 3},
        "topology": {"generator": "random_geometric", "nodes": 6, "radius": 0.7,
                     "delay": 0.05},
        "mobility": {"model": "random_waypoint", "speed": [0.01, 0.02], "pause": 1.0},
        "network": {"routing": "aodv", "medium": "shared"},
        "energy": {"model": "first_order", "battery_j": 1.0},
        "streams": {"count": 2, "rate": 2.0, "key_domain": 4},
        "query": {"node": 0, "window": 1.0},
        "algorithm": {"name": "lottery"},
        "params": {"lottery": {"period": 1.0}},
        "sweep": {"seeds": [1, 2]}}


def _leaves(table: dict, prefix: str = "") -> list[str]:
    out = []
    for key, value in table.items():
        path = f"{prefix}{key}"
        out.extend(_leaves(value, f"{path}.") if isinstance(value, dict) and value
                   else [path])
    return out


#: Every value of the good spec, and the keys of its tables that it leaves out.
PATHS = sorted(set(_leaves(GOOD)) | {f"{s}.{k}" for s in ("run", "network", "energy", "radio",
                                                          "query")
                                     for k in specs.SCHEMA[s]})
#: Numbers stay small: a long run with moving nodes is slow to plan, not wrong.
VALUES = st.one_of(
    st.integers(-1000, 1000), st.floats(-1000, 1000), st.sampled_from([math.nan, math.inf,
                                                                      -math.inf, 10 ** 20]),
    st.booleans(), st.text(max_size=8), st.sampled_from(["none", "inf", "aodv", "hop"]),
    st.lists(st.integers(-5, 5), max_size=3), st.dictionaries(st.text(max_size=3),
                                                               st.integers(0, 3), max_size=2))


def toml_value(value) -> str:
    """``value`` as a TOML value (inline tables for tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") \
            if math.isinf(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}"
                           for k, v in value.items()) + "}"


def toml_text(spec: dict) -> str:
    """A spec of sections of ``key = value`` lines (deeper tables as sections too)."""
    lines = []

    def section(name: str, table: dict):
        lines.append(f"[{name}]")
        nested = []
        for key, value in table.items():
            if isinstance(value, dict) and value and all(isinstance(v, dict)
                                                         for v in value.values()):
                nested.append((f"{name}.{json.dumps(str(key))}", value))
            else:
                lines.append(f"{json.dumps(str(key))} = {toml_value(value)}")
        for sub, value in nested:
            section(sub, value)

    for name, table in spec.items():
        section(json.dumps(str(name)) if not isinstance(table, dict) else name,
                table if isinstance(table, dict) else {"value": table})
    return "\n".join(lines) + "\n"


def _mutated(draw_path, draw_value, kind: str) -> str:
    """The good spec's text with one change of the ``kind`` drawn."""
    spec = copy.deepcopy(GOOD)
    if kind == "value":
        specs.set_path(spec, draw_path, draw_value)
    elif kind == "unknown key":
        specs.set_path(spec, f"{draw_path.rsplit('.', 1)[0]}.colour", draw_value)
    elif kind == "missing key":
        *parents, leaf = draw_path.split(".")
        table = specs.get_path(spec, ".".join(parents), {})
        table.pop(leaf, None)
    elif kind == "unknown section":
        spec["colours"] = {"red": draw_value}
    return toml_text(spec)


def _check(path, capsys) -> tuple[int, list[str]]:
    code = main(["check", str(path)])
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return code, [line for line in err.splitlines() if not line.startswith("warning:")]


def _assert_one_line_or_valid(code, lines, path):
    if code == 0:
        assert lines == []
        return
    assert code == 2, (code, lines)
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: {path}: "), lines


def test_the_good_spec_checks(tmp_path, capsys):
    path = tmp_path / "fuzz.toml"
    path.write_text(toml_text(GOOD))
    assert _check(path, capsys) == (0, [])
    assert capsys.readouterr().out == ""          # read by _check already
    assert "2 runs, every plan built" in (main(["check", str(path)]) == 0 and
                                          capsys.readouterr().out)


@pytest.mark.slow   # some 15 s: 120 specs planned through the command line
@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(PATHS), value=VALUES,
       kind=st.sampled_from(["value", "value", "value", "unknown key", "missing key",
                             "unknown section"]))
def test_a_malformed_spec_is_one_line_or_valid(tmp_path, capsys, path, value, kind):
    spec_path = tmp_path / "fuzz.toml"
    spec_path.write_text(_mutated(path, value, kind), encoding="utf-8")
    code, lines = _check(spec_path, capsys)
    _assert_one_line_or_valid(code, lines, spec_path)


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(st.text(max_size=40), st.binary(max_size=40)))
def test_a_file_that_is_not_a_spec_is_one_line(tmp_path, capsys, text):
    spec_path = tmp_path / "junk.toml"
    if isinstance(text, bytes):
        spec_path.write_bytes(text)
    else:
        spec_path.write_text(text, encoding="utf-8")
    code, lines = _check(spec_path, capsys)
    _assert_one_line_or_valid(code, lines, spec_path)


def test_a_missing_spec_is_one_line(tmp_path, capsys):
    code, lines = _check(tmp_path / "none.toml", capsys)
    assert code == 2 and lines == [f"error: {tmp_path / 'none.toml'}: (file): no such file"]


def test_a_parameter_the_preparation_checks_is_one_line_from_run(tmp_path, capsys):
    """enrich-predicted trains on a traced run before its own: a bad cache_ttl used to
    come out of that preparation as 25 lines of traceback above the message."""
    spec = {**copy.deepcopy(GOOD), "algorithm": {"name": "enrich-predicted"},
            "params": {"enrich-predicted": {"cache_ttl": -2}}}
    del spec["sweep"]
    path = tmp_path / "enrich.toml"
    path.write_text(toml_text(spec))
    code = main(["run", str(path), "--out", str(tmp_path / "runs")])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err == (f"error: {path}: params.enrich-predicted.cache_ttl: expected a number "
                   "> 0 (or inf), got -2.0")
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_a_stream_file_read_when_the_run_starts_is_one_line(tmp_path, capsys):
    """A csv stream's file is read after the plan is checked, as the run starts."""
    (tmp_path / "bad.csv").write_text("garbage\n")
    spec = {"run": {"name": "csv", "duration": 2.0, "step": 0.05},
            "topology": {"generator": "line", "nodes": 3, "delay": 0.05},
            "streams": {"generator": "csv", "file": "bad.csv", "count": 2},
            "query": {"node": 0, "window": 1.0}}
    path = tmp_path / "csv.toml"
    path.write_text(toml_text(spec))
    code = main(["run", str(path), "--out", str(tmp_path / "runs")])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err == (f"error: {path}: streams: {tmp_path / 'bad.csv'}:1: expected 13 "
                   "comma-separated integer fields (sid, ts, x, y, z, v, a, vx, vy, vz, ax, "
                   "ay, az), got 1")


def test_a_sweep_table_that_is_not_parquet_is_one_line(tmp_path, capsys):
    (tmp_path / "runs.parquet").write_text("garbage")
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {tmp_path / 'runs.parquet'}: file: expected a parquet "
                          "table (") and "\n" not in err


@pytest.mark.parametrize("tables, field", [
    ({"topology": {"generator": "file", "file": "nope.json"}}, "topology.file"),
    ({"mobility": {"model": "random_waypoint", "speed": [0.01, 0.02],
                   "failures": "nope.csv"}}, "mobility.failures"),
    ({"mobility": {"model": "ns2", "file": "nope.ns_movements"}}, "mobility.file"),
    ({"mobility": {"model": "schedule", "file": "nope.csv"}}, "mobility.file"),
])
def test_a_file_the_spec_names_that_is_missing_is_one_line(tmp_path, capsys, tables, field):
    spec = {**copy.deepcopy(GOOD), "mobility": {}, **tables}
    path = tmp_path / "files.toml"
    path.write_text(toml_text(spec))
    code, lines = _check(path, capsys)
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"error: {path}: {field}"), lines
    assert "nope." in lines[0]
