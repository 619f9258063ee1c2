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


@pytest.mark.parametrize(("name", "scenarios", "test_seeds"),
                         [("core", 3, 10), ("full", 5, 10), ("core-v1", 3, 3), ("full-v1", 7, 10)])
def test_the_shipped_suites_are_valid(name, scenarios, test_seeds):
    spec = SuiteSpec.parse(yaml.safe_load((SUITE_DIR / f"{name}.yaml").read_text()), "suite")
    assert spec.name == name and len(spec.scenarios) == scenarios and spec.test_seeds == test_seeds
    load_suite(name)  # every scenario it names is a valid file


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


def _learn_scenario(tmp_path: Path, edit) -> Path:
    """The fixture scenario with a ``held_out:`` block (``learners/tiny_learn.yaml``), edited, in ``tmp_path``."""
    data = yaml.safe_load((HERE / "learners" / "tiny_learn.yaml").read_text())
    edit(data)
    (tmp_path / "tiny_learn.yaml").write_text(yaml.safe_dump(data))
    return tmp_path


def _load_learn(folder: Path):
    return load_suite({"name": "t", "version": 1, "test_seeds": 2, "scenarios": ["tiny_learn"]}, folder)


@pytest.mark.parametrize(("workload_or_seeds", "field", "text"), [
    ({"test_seeds": [2001, 2002, 2001]}, "held_out.test_seeds", "seed(s) [2001] given more than once"),
    ({"workload": {"lod": 0.3}}, "held_out.workload.lod", "unknown key; allowed keys: workload, load"),
    ({"workload": {"workload": "websarch"}}, "held_out.workload.name", "unknown workload 'websarch'"),
    ({"workload": {"load": 1.5}}, "held_out.workload.load", "got 1.5, allowed range is (0.0, 1.0)"),
    ({"workload": {"incast": {"degre": 4}}}, "held_out.workload.incast.degre", "unknown key"),
])
def test_a_bad_held_out_block_is_refused_when_the_suite_loads(tmp_path, workload_or_seeds, field, text):
    folder = _learn_scenario(tmp_path, lambda d: d["held_out"].update(workload_or_seeds))
    with pytest.raises(ConfigError) as err:
        _load_learn(folder)
    assert err.value.field == f"scenarios.tiny_learn.{field}" and text in err.value.message, str(err.value)


def test_the_fixture_held_out_block_loads():
    suite = _load_learn(HERE / "learners")
    assert suite.scenarios["tiny_learn"].held_out.workload == {"load": 0.3}


def test_a_phase_that_starts_at_or_past_the_episodes_end_is_refused(tmp_path):
    # tiny_incast: 40 steps of 5 base RTTs (5 x 4.16 us on the 16-host star) = 832 us
    phases = [{"name": "all", "start": "0ms"}, {"name": "late", "start": "2ms"}]
    with pytest.raises(ConfigError) as err:
        load_suite(HERE / "tiny_suite.yaml", _scenario(tmp_path, protocol__phases=phases))
    assert err.value.field == "scenarios.tiny_incast.protocol.phases[1].start"
    assert err.value.message.startswith("phase 'late' starts at 2000000 ns, at or past the episode's end 832000 ns "
                                        "(40 steps x 20800 ns)"), err.value.message


@pytest.mark.parametrize("version", [0, 10**15, 2.5, "2"])
def test_an_absurd_scenario_or_suite_version_is_refused(tmp_path, version):
    with pytest.raises(ConfigError) as err:
        load_scenario("tiny_incast", _scenario(tmp_path, version=version))
    assert err.value.field == "scenarios.tiny_incast.version", str(err.value)
    with pytest.raises(ConfigError) as err:
        SuiteSpec.parse({"name": "t", "version": version, "test_seeds": 1, "scenarios": ["a"]}, "suite")
    assert err.value.field == "suite.version"


def test_a_scenario_file_that_is_not_utf8_is_refused_naming_it(tmp_path):
    text = (HERE / "scenarios" / "tiny_incast.yaml").read_text().replace("a 16-host", "a 16-h\u00f6st")
    (tmp_path / "tiny_incast.yaml").write_bytes(text.encode("latin-1"))
    with pytest.raises(ConfigError) as err:
        load_suite(HERE / "tiny_suite.yaml", tmp_path)
    assert err.value.field == "scenarios.tiny_incast"
    assert "is not UTF-8 text (byte 0xf6 at offset" in err.value.message and "save it as UTF-8" in err.value.message


def test_a_yaml_alias_bomb_in_a_scenario_file_is_refused(tmp_path):
    # nine levels of nine aliases: 9**9 (387 M) strings in a few hundred bytes, under a free mapping (env)
    bomb = ['  l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    bomb += [f"  l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 10)]
    text = (HERE / "scenarios" / "tiny_incast.yaml").read_text()
    (tmp_path / "tiny_incast.yaml").write_text(text.replace("env:\n", "bombs:\n" + "\n".join(bomb) + "\nenv:\n"
                                                            "  extra: *l9\n"))
    with pytest.raises(ConfigError) as err:
        load_suite(HERE / "tiny_suite.yaml", tmp_path)
    assert err.value.field == "scenarios.tiny_incast"
    assert "its aliases expand it to more than 100,000 values (an alias bomb?)" in err.value.message
