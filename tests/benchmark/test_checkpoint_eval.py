"""``ecngym eval controller=checkpoint``: a shipped checkpoint played on a scenario file outside the package."""

from __future__ import annotations

import json

import pytest
import yaml

from ecngym import cli
from ecngym.benchmark.checkpoints import CHECKPOINT_DIR
from ecngym.configs import CONFIG_DIR

SHIPPED = CHECKPOINT_DIR / "roce_storage_incast" / "dqn" / "seed1"


def _scenario(tmp_path, edit=None):
    """The storage scenario's layout on another env id and another trace (lighter load, no incast), in tmp_path."""
    data = yaml.safe_load((CONFIG_DIR / "suite" / "scenarios" / "roce_storage_incast.yaml").read_text())
    data.update(name="my_storage", id="ecngym/RoceIncast-v0")
    data["env"].update(episode_steps=12, workload={"workload": "websearch", "load": 0.3, "incast": {"degree": 0}})
    data["protocol"]["phases"] = [{"name": "all", "start": "0ms"}]
    for key in ("training", "held_out", "controllers"):
        data.pop(key)
    if edit is not None:
        edit(data)
    path = tmp_path / "mine" / "my_storage.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(data))
    return path


def _eval(tmp_path, scenario):
    return cli.main(["eval", f"scenario={scenario}", "controller=checkpoint", f"controller.path={SHIPPED}", "seed=5",
                     f"results.dir={tmp_path / 'store'}", f"hydra.run.dir={tmp_path / 'run'}"])


def test_a_shipped_checkpoint_plays_a_scenario_file_whose_layout_fits(tmp_path):
    assert _eval(tmp_path, _scenario(tmp_path)) == 0
    result = json.loads((tmp_path / "run" / "eval.json").read_text())
    (episode,) = result["episodes"]
    assert episode["controller"] == "dqn" and episode["env"] == "ecngym/RoceIncast-v0"
    assert episode["decisions"] == 12 and episode["flows_total"] > 0
    assert result["env_config"]["workload"]["load"] == 0.3


@pytest.mark.parametrize(("edit", "differs"), [
    (lambda d: d["env"].update(observation={"history": 2}), "observation.history"),
    (lambda d: d["env"]["action"]["templates"].pop(), "action.templates"),
])
def test_a_scenario_of_another_layout_is_refused_naming_both_layouts(tmp_path, capsys, edit, differs):
    assert _eval(tmp_path, _scenario(tmp_path, edit)) == 2
    err = capsys.readouterr().err
    assert "controller.path" in err and differs in err
    assert "the checkpoint's layout" in err and "this env's" in err


def test_a_scenario_path_that_is_no_file_is_refused_naming_it(tmp_path, capsys):
    assert _eval(tmp_path, tmp_path / "nope.yaml") == 2
    assert "error: scenario" in capsys.readouterr().err
