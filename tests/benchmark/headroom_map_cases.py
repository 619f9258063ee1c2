"""The headroom map: a tiny family end to end through the CLI, and its file's errors."""

import json
from pathlib import Path

import pytest
import yaml

from ecngym.benchmark.headroom_map import deep_merged, load_family, main, point_env
from ecngym.error import ConfigError

SCENARIOS = Path(__file__).resolve().parent / "scenarios"
FAMILY = {
    "name": "tiny_load", "description": "the tiny incast star at two loads.", "base": "tiny_incast",
    "seeds": [101], "window": "200us", "beam": 1,
    "axes": [{"name": "load", "values": [{"label": "30 %", "env": {"episode_steps": 24, "workload": {"load": 0.3}}},
                                        {"label": "70 %", "env": {"episode_steps": 24, "workload": {"load": 0.7}},
                                         "score": "slowdown_avg_all"}]}],
}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_a_tiny_family_maps_end_to_end(tmp_path, capsys):
    path = tmp_path / "family.yaml"
    path.write_text(yaml.safe_dump(FAMILY))
    page = tmp_path / "map.md"
    assert main([f"family={path}", f"scenario_dir={SCENARIOS}", f"markdown={page}",
                 f"out={tmp_path / 'points.json'}"]) == 0
    points = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert [p["labels"] for p in points] == [["30 %"], ["70 %"]]
    assert [p["score"] for p in points] == ["queue_p99_bytes", "slowdown_avg_all"]
    for p in points:  # the oracle is never worse than the tuned constant, nor than the hindsight one
        assert p["headroom"] >= 0 and p["S_oracle_window"] <= p["S_best_constant"] <= p["S_tuned"]
    assert json.loads((tmp_path / "points.json").read_text()) == points
    assert "relative headroom" in page.read_text()


@pytest.mark.parametrize("change, field", [
    ({"seeds": [1, 1]}, "family.seeds"),
    ({"axes": []}, "family.axes"),
    ({"axes": [{"name": "x", "values": [{"label": "a"}, {"label": "a"}]}]}, r"family.axes\[0\].values"),
    ({"axes": [{"name": "x", "values": [{"label": "a", "env": 3}]}]}, r"family.axes\[0\].values\[0\].env"),
    ({"beam": 0}, "family.beam"),
    ({"colour": "red"}, "family.colour"),
    ({"env": [1]}, "family.env"),
])
def test_a_bad_family_file_names_its_field(tmp_path, change, field):
    path = tmp_path / "family.yaml"
    path.write_text(yaml.safe_dump({**FAMILY, **change}))
    with pytest.raises(ConfigError, match=field):
        load_family(str(path))


def test_an_unknown_family_lists_the_shipped_ones():
    with pytest.raises(ConfigError, match="storage_phases"):
        load_family("no_such_family")


def test_a_family_path_that_does_not_exist_is_refused_naming_it(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_family(str(tmp_path / "mine.yaml"))
    assert err.value.field == "family"
    assert err.value.message.startswith(f"got '{tmp_path / 'mine.yaml'}': no family file ")
    assert "give the path of a family file" in err.value.message


def test_a_family_of_the_users_maps_a_scenario_file_of_theirs(tmp_path, capsys):
    scenario = yaml.safe_load((SCENARIOS / "tiny_incast.yaml").read_text())
    scenario["name"] = "my_tiny"
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "my_tiny.yaml").write_text(yaml.safe_dump(scenario))
    family = {**FAMILY, "base": "mine/my_tiny.yaml",  # (relative to the family file)
              "axes": [{"name": "load", "values": [{"label": "50 %", "env": {"episode_steps": 24,
                                                                              "workload": {"load": 0.5}}}]}]}
    path = tmp_path / "family.yaml"
    path.write_text(yaml.safe_dump(family))
    assert load_family(str(path))["base"] == str(tmp_path / "mine" / "my_tiny.yaml")
    with pytest.raises(ConfigError) as err:  # its folder is its scenario folder
        main([f"family={path}", f"scenario_dir={SCENARIOS}"])
    assert err.value.field == "scenario_dir"
    assert main([f"family={path}"]) == 0
    points = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert [p["labels"] for p in points] == [["50 %"]] and points[0]["score"] == "queue_p99_bytes"
    (tmp_path / "mine" / "my_tiny.yaml").unlink()
    with pytest.raises(ConfigError) as err:
        main([f"family={path}"])
    assert err.value.field == "family.base" and "no file at" in err.value.message


def test_a_point_takes_the_base_then_the_familys_env_then_its_axis_values():
    base = {"env": {"episode_steps": 10, "workload": {"load": 0.6, "incast": {"degree": 0}}},
            "protocol": {"score": "slowdown_avg_all"}}
    family = {"env": {"episode_steps": 24, "workload": {"incast": {"degree": 4}}}}
    values = [{"label": "a", "env": {"workload": {"load": 0.3}}}, {"label": "p99", "score": "slowdown_p99_all"}]
    env, score = point_env(family, base, values)
    assert env == {"episode_steps": 24, "workload": {"load": 0.3, "incast": {"degree": 4}}}
    assert score == "slowdown_p99_all"
    assert point_env({}, base, [{"label": "b"}]) == (base["env"], "slowdown_avg_all")


def test_overrides_merge_mapping_by_mapping():
    base = {"workload": {"load": 0.6, "incast": {"degree": 0}}, "episode_steps": 10}
    assert deep_merged(base, {"workload": {"incast": {"degree": 4}}}) == {
        "workload": {"load": 0.6, "incast": {"degree": 4}}, "episode_steps": 10}
    assert base["workload"]["incast"] == {"degree": 0}
