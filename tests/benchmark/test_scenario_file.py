"""A scenario file of the user's as a suite of its own (``scenario_file=PATH``): its checks, its references' home."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from ecngym import cli
from ecngym.benchmark.checkpoints import CHECKPOINT_DIR
from ecngym.benchmark.cli import BoardArgs
from ecngym.benchmark.headroom import HeadroomArgs
from ecngym.benchmark.learners import LearnerArgs
from ecngym.benchmark.references import REFERENCE_DIR, ReferencesArgs, read_references
from ecngym.benchmark.runner import BenchmarkOptions
from ecngym.benchmark.scenario_file import scenario_file_suite
from ecngym.benchmark.suite import SCENARIO_DIR
from ecngym.error import ConfigError

HERE = Path(__file__).resolve().parent

#: A scenario of the user's in miniature: the v0 incast star (an empty preset), 24 steps, two templates.
TINY = {
    "name": "my_tiny", "id": "ecngym/RoceIncast-v0", "version": 1,
    "env": {"episode_steps": 24, "workload": {"load": 0.6},
            "action": {"templates": [["20KB", "40KB", 0.05], ["80KB", "320KB", 0.2]]}},
    "protocol": {"train_seeds": [101], "test_seeds": [1002, 1003], "score": "slowdown_avg_all",
                 "lower_is_better": True, "second_axis": "slowdown_avg_all",
                 "phases": [{"name": "all", "start": "0ms"}]},
}


def _write(folder: Path, data: dict, name: str | None = None) -> Path:
    path = folder / f"{name or data['name']}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _storage_copy(folder: Path, name: str = "my_storage_incast") -> dict:
    data = yaml.safe_load((SCENARIO_DIR / "roce_storage_incast.yaml").read_text())
    data["name"] = name
    data["env"]["workload"]["phases"][0]["incast"]["degree"] = 15  # the user's traffic
    return data


def test_a_copy_of_a_shipped_scenario_is_a_suite_of_its_own(tmp_path):
    path = _write(tmp_path, _storage_copy(tmp_path))
    suite = scenario_file_suite(str(path))
    sc = suite.scenarios["my_storage_incast"]
    assert suite.name == "my_storage_incast" and list(suite.scenarios) == ["my_storage_incast"]
    assert suite.spec.version == sc.version and suite.test_seeds("my_storage_incast") == sc.protocol.test_seeds
    assert suite.training_seeds("my_storage_incast") == sc.training.seeds
    assert suite.scenario_dir == tmp_path
    assert suite.reference_dir == tmp_path / "references"  # beside the file, not in the package
    assert suite.checkpoints_of["my_storage_incast"].name == "roce_storage_incast"  # same id: its checkpoints play it
    assert suite.spec.learners
    assert scenario_file_suite(str(path), reference_dir=tmp_path / "refs").reference_dir == tmp_path / "refs"


def test_a_scenario_on_a_v0_id_has_no_shipped_learners(tmp_path):
    suite = scenario_file_suite(_write(tmp_path, TINY))
    assert suite.checkpoints_of == {"my_tiny": None} and not suite.spec.learners
    assert suite.spec.training_seeds == 1  # (no training: block)


@pytest.mark.parametrize(("make", "field", "message"), [
    (lambda d: d / "nowhere.yaml", "scenario_file", "no file at '.*nowhere.yaml'; expected a scenario file named"),
    (lambda d: d, "scenario_file", "which is a directory; expected a scenario file"),
    (lambda d: _text(d / "my_tiny.yml", yaml.safe_dump(TINY)), "scenario_file",
     r"my_tiny.yml'; expected a scenario file named <name>.yaml"),
    (lambda d: _text(d / "my_tiny.yaml", "name: [unclosed\n"), "scenario_file", "is not valid YAML"),
    (lambda d: _text(d / "my_tiny.yaml", "- a list\n"), "scenario_file", "holds list, not a mapping"),
    (lambda d: SCENARIO_DIR / "roce_load_step.yaml", "scenario_file",
     r"a file of the package's configs: run a shipped scenario by its name \(scenario=roce_load_step"),
    (lambda d: _write(d, TINY, "other"), "scenario_file.name", "a scenario's name is its file's stem"),
    (lambda d: _write(d, {**_storage_copy(d), "name": "roce_storage_incast"}), "scenario_file.name",
     "the name of a shipped scenario"),
    (lambda d: _write(d, {**TINY, "id": "mylab/MyTiny-v1"}), "scenario_file.id", "not an ecngym env id"),
    (lambda d: _write(d, {**TINY, "protocol": {**TINY["protocol"], "test_seeds": [101]}}),
     "scenario_file.protocol.test_seeds", "also train_seeds"),
    (lambda d: _write(d, {**TINY, "env": {**TINY["env"], "episode_stepz": 3}}), "scenario_file.env.episode_stepz",
     "unknown"),
])
def test_a_bad_scenario_file_is_refused_naming_the_field(tmp_path, make, field, message):
    with pytest.raises(ConfigError, match=message) as err:
        scenario_file_suite(str(make(tmp_path)))
    assert err.value.field == field


def _text(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_a_copy_that_leaves_out_a_setting_of_its_ids_preset_is_refused_naming_it(tmp_path):
    data = _storage_copy(tmp_path)
    del data["env"]["workload"]["phases"]  # the shipped scenario's phases would still apply, unseen
    with pytest.raises(ConfigError) as err:
        scenario_file_suite(_write(tmp_path, data))
    assert err.value.field == "scenario_file.env.workload.phases"
    assert "the shipped scenario roce_storage_incast's env sets it" in err.value.message
    data["env"]["workload"]["phases"] = []  # said in the file: no phases
    data["protocol"]["phases"] = [{"name": "all", "start": "0ms"}]
    assert scenario_file_suite(_write(tmp_path, data)).scenarios["my_storage_incast"].env["workload"]["phases"] == []


@pytest.mark.parametrize(("model", "other", "prefix"), [
    (BoardArgs, {"suite": "core"}, ""), (BoardArgs, {"scenario_dir": "x"}, ""),
    (HeadroomArgs, {"suite": "core"}, ""), (HeadroomArgs, {"scenario": "roce_load_step"}, ""),
    (ReferencesArgs, {"suite": "core"}, ""), (ReferencesArgs, {"scenario": "roce_load_step"}, ""),
    (LearnerArgs, {"suite": "core"}, ""), (LearnerArgs, {"scenario": "roce_storage_incast"}, ""),
    (BenchmarkOptions, {"scenario_dir": "."}, "benchmark."), (BenchmarkOptions, {"scenario": "x"}, "benchmark."),
])
def test_scenario_file_with_another_choice_of_scenarios_is_refused(model, other, prefix):
    with pytest.raises(ConfigError) as err:
        model.parse({"scenario_file": "my.yaml", **other}, prefix.rstrip("."))
    key, value = next(iter(other.items()))
    assert err.value.field == f"{prefix}scenario_file"
    assert err.value.message.startswith(f"got 'my.yaml' together with {key}={value!r}; give one of them")
    assert model.parse({"scenario_file": "my.yaml"}).scenario_file == "my.yaml"


def test_the_commands_refuse_a_missing_file_and_a_conflict_naming_scenario_file(capsys, tmp_path):
    for command in ("references", "headroom", "board", "learners"):
        assert cli.main(["benchmark", command, f"scenario_file={tmp_path / 'nowhere.yaml'}"]) == 2
        assert f"scenario_file: no file at '{tmp_path / 'nowhere.yaml'}'" in capsys.readouterr().err
    assert cli.main(["benchmark", "board", "scenario_file=my.yaml", "suite=full"]) == 2
    assert "scenario_file: got 'my.yaml' together with suite='full'" in capsys.readouterr().err


@pytest.mark.parametrize(("extra", "shown"), [(["suite=full"], "suite=full"), (["suite=null"], "suite=null"),
                                              (["train=true"], "train=true")])
def test_ecngym_run_refuses_a_scenario_file_with_a_suite_or_training(tmp_path, capsys, extra, shown):
    path = _write(tmp_path, TINY)
    assert cli.main(["run", f"benchmark.scenario_file={path}", *extra, f"results.dir={tmp_path / 'store'}",
                     f"hydra.run.dir={tmp_path / 'run'}"]) == 2
    err = capsys.readouterr().err
    assert f"benchmark.scenario_file: got '{path}' " in err and shown in err
    assert not (tmp_path / "store").exists()


def test_references_go_beside_the_file_and_headroom_reads_them(tmp_path, capsys):
    path = _write(tmp_path, TINY)
    with pytest.raises(ConfigError) as err:  # before: the message names the command that writes them
        read_references("my_tiny", tmp_path / "references", tmp_path)
    assert f"`ecngym benchmark references scenario_file={path}`" in err.value.message
    assert cli.main(["benchmark", "references", f"scenario_file={path}", "processes=1"]) == 0
    written = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["file"]
    assert Path(written) == tmp_path / "references" / "my_tiny.yaml"
    assert not (REFERENCE_DIR / "my_tiny.yaml").exists()
    doc = read_references("my_tiny", tmp_path / "references", tmp_path)
    assert doc["command"] == f"ecngym benchmark references scenario_file={path}"
    assert cli.main(["benchmark", "headroom", f"scenario_file={path}"]) == 0
    rows = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert [r["scenario"] for r in rows] == ["my_tiny"] and rows[0]["test_seeds"] == 2
    assert cli.main(["benchmark", "references", f"scenario_file={path}", "processes=1",
                     f"out={tmp_path / 'elsewhere'}"]) == 0
    assert (tmp_path / "elsewhere" / "my_tiny.yaml").is_file()


def _references_beside(folder: Path, name: str) -> None:
    """The shipped scenario's references, as if computed for the copy ``name`` (no search runs in this test)."""
    doc = yaml.safe_load((REFERENCE_DIR / "roce_storage_incast.yaml").read_text())
    doc["scenario"] = name
    (folder / "references").mkdir(exist_ok=True)
    (folder / "references" / f"{name}.yaml").write_text(yaml.safe_dump(doc))


def test_a_copy_plays_the_shipped_scenarios_checkpoints_and_its_own_references(tmp_path):
    from ecngym.benchmark.learners import plan
    from ecngym.benchmark.runner import plan_jobs

    suite = scenario_file_suite(_write(tmp_path, _storage_copy(tmp_path)))
    _references_beside(tmp_path, "my_storage_incast")
    jobs = plan_jobs(suite, {}, tmp_path / "store", tmp_path / "out", True, BenchmarkOptions.parse({}),
                     learners=True)
    by = {j.controller: j for j in jobs}
    assert {"static_default", "static_tuned", "oracle_phase", "random", "acc", "dqn"} <= set(by)
    assert by["acc"].controller_cfg["path"].startswith(str(CHECKPOINT_DIR / "roce_storage_incast" / "acc"))
    assert by["acc"].scenario == "my_storage_incast" and by["acc"].env_kwargs == suite.scenarios[
        "my_storage_incast"].env
    learner_jobs = plan(suite, None, held_out=True)
    assert {j["scenario_dir"] for j in learner_jobs} == {str(tmp_path)}
    assert any(j["agent"] == "ppo" and j["family"] == "held_out" for j in learner_jobs)
