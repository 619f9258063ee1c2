"""The suite and scenario files: typed, seeds disjoint, metrics known, unknown keys refused."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ecngym.benchmark.suite import SUITE_DIR, SuiteSpec, load_scenario, load_suite
from ecngym.error import ConfigError

HERE = Path(__file__).resolve().parent


def _scenario(tmp_path: Path, **changes) -> Path:
    data = yaml.safe_load((HERE / "scenarios" / "tiny_incast.yaml").read_text())
    for dotted, value in changes.items():
        node = data
        *parents, leaf = dotted.split("__")
        for p in parents:
            node = node[p]
        node[leaf] = value
    (tmp_path / "tiny_incast.yaml").write_text(yaml.safe_dump(data))
    return tmp_path


def test_the_fixture_suite_loads_with_its_scenarios():
    suite = load_suite(HERE / "tiny_suite.yaml", HERE / "scenarios")
    assert suite.name == "tiny" and list(suite.scenarios) == ["tiny_incast"]
    assert suite.test_seeds("tiny_incast") == [1002, 1003, 1004]
    assert suite.scenarios["tiny_incast"].controllers["bytetuning"] == {"window_steps": 3, "settle_steps": 1}


@pytest.mark.parametrize("name", ["core", "full"])
def test_the_shipped_suites_are_valid(name):
    spec = SuiteSpec.parse(yaml.safe_load((SUITE_DIR / f"{name}.yaml").read_text()), "suite")
    assert spec.name == name and len(spec.scenarios) == (3 if name == "core" else 7)
    assert spec.test_seeds == (3 if name == "core" else 10)


def test_overlapping_train_and_test_seeds_are_refused_naming_them(tmp_path):
    folder = _scenario(tmp_path, protocol__train_seeds=[101, 1003])
    with pytest.raises(ConfigError) as err:
        load_scenario("tiny_incast", folder)
    assert err.value.field == "scenarios.tiny_incast.protocol.test_seeds" and "[1003]" in err.value.message


@pytest.mark.parametrize(("change", "field", "text"), [
    ({"protocol__score": "slowdown_p99"}, "scenarios.tiny_incast.protocol.score", "not an episode-summary metric"),
    ({"protocol__second_axis": "goodput"}, "scenarios.tiny_incast.protocol.second_axis", "not an episode-summary"),
    ({"protocol__test_seeds": [1002, 1002]}, "scenarios.tiny_incast.protocol.test_seeds", "more than once"),
    ({"protocol__test_seeds": []}, "scenarios.tiny_incast.protocol.test_seeds", "empty"),
    ({"bogus": 1}, "scenarios.tiny_incast.bogus", ""),
    ({"protocol__lower_is_better": "yes"}, "scenarios.tiny_incast.protocol.lower_is_better", ""),
    ({"controllers": {"bytetunin": {"window_steps": 3}}}, "scenarios.tiny_incast.controllers", "bytetunin"),
    ({"id": "RoceIncast"}, "scenarios.tiny_incast.id", "registered env id"),
    ({"name": "other"}, "scenarios.tiny_incast.name", "file's stem"),
])
def test_a_bad_scenario_field_is_refused_naming_it(tmp_path, change, field, text):
    folder = _scenario(tmp_path, **change)
    with pytest.raises(ConfigError) as err:
        load_scenario("tiny_incast", folder)
    assert err.value.field == field and text in err.value.message


def test_a_suite_scoring_more_seeds_than_a_scenario_has_is_refused():
    with pytest.raises(ConfigError, match=r"^suite.test_seeds: got 5, but scenario tiny_incast has only 4"):
        load_suite({"name": "t", "version": 1, "test_seeds": 5, "scenarios": ["tiny_incast"]}, HERE / "scenarios")


def test_an_unknown_suite_or_scenario_is_refused_naming_it():
    with pytest.raises(ConfigError, match=r"^suite: got 'nope': no suite file"):
        load_suite("nope")
    with pytest.raises(ConfigError, match=r"^scenarios.nope: no scenario file"):
        load_suite({"name": "t", "version": 1, "test_seeds": 1, "scenarios": ["nope"]}, HERE / "scenarios")
    with pytest.raises(ConfigError, match=r"^suite.scenarios: \['a'\] given more than once"):
        SuiteSpec.parse({"name": "t", "version": 1, "test_seeds": 1, "scenarios": ["a", "a"]}, "suite")
