"""The learners' training protocol, shipped checkpoints (weights only, refused when they do not fit) and player."""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import yaml

import ecngym.envs  # noqa: F401  (registers the ids)
from ecngym.agents.registry import learner_names
from ecngym.benchmark.checkpoints import (
    CARD_FILE,
    CHECKPOINT_DIR,
    WEIGHTS_FILE,
    CheckpointController,
    load_card,
    load_checkpoint,
)
from ecngym.benchmark.suite import load_scenario, load_suite
from ecngym.benchmark.training import train_run
from ecngym.envs.rollout import run_episode
from ecngym.error import ConfigError

HERE = Path(__file__).resolve().parent / "learners"

#: The shipped learners (the agents of configs/agent, then SB3's algorithms).
LEARNERS = tuple(learner_names())


def _fixture(tmp_path: Path, edit) -> Path:
    data = yaml.safe_load((HERE / "tiny_learn.yaml").read_text())
    edit(data)
    (tmp_path / "tiny_learn.yaml").write_text(yaml.safe_dump(data))
    return tmp_path


@pytest.mark.parametrize("core", ["core", "core-v1"])
def test_the_core_scenarios_declare_a_training_protocol_and_a_held_out_family(core):
    suite = load_suite(core)
    assert suite.spec.learners and suite.spec.training_seeds >= 3
    for name, sc in suite.scenarios.items():
        assert sc.training is not None and set(sc.training.agents) == set(LEARNERS), name
        assert len(suite.training_seeds(name)) >= 3
        assert sc.held_out is not None and not set(sc.held_out.test_seeds) & set(sc.protocol.train_seeds)
        assert sc.held_out_env()["workload"] != sc.env["workload"]
    assert load_suite(core.replace("core", "full")).spec.training_seeds >= 5


@pytest.mark.parametrize(("edit", "field"), [
    (lambda d: d["held_out"].update(test_seeds=[2001, 101]), "held_out.test_seeds"),
    (lambda d: d["training"]["agents"].update(a2c={"source": "x"}), "training.agents"),
    (lambda d: d["training"].update(seeds=[1, 1]), "training.seeds"),
    (lambda d: d["training"].update(budget_steps=0), "training.budget_steps"),
    (lambda d: d["training"].update(long_budget_steps=10), "training.long_budget_steps"),
    (lambda d: d["training"].update(budget=5), "training.budget"),
    (lambda d: d["held_out"].update(loads=[0.1]), "held_out.loads"),
])
def test_a_bad_training_or_held_out_field_is_refused_by_name(tmp_path, edit, field):
    folder = _fixture(tmp_path, edit)
    with pytest.raises(ConfigError) as err:
        load_scenario("tiny_learn", folder)
    assert err.value.field == f"scenarios.tiny_learn.{field}"


def test_a_learner_a_scenario_does_not_list_trains_there_with_its_own_defaults(tmp_path):
    folder = _fixture(tmp_path, lambda d: d["training"]["agents"].pop("dqn"))
    training = load_scenario("tiny_learn", folder).training
    assert "dqn" not in training.agents and set(training.learners()) == set(LEARNERS)
    assert training.settings("dqn").hyperparams == {} and "defaults" in training.settings("dqn").source


def test_a_suite_training_more_seeds_than_a_scenario_has_is_refused(tmp_path):
    folder = _fixture(tmp_path, lambda d: None)
    suite = {"name": "t", "version": 1, "test_seeds": 2, "training_seeds": 4, "scenarios": ["tiny_learn"]}
    with pytest.raises(ConfigError) as err:
        load_suite(suite, folder)
    assert err.value.field == "suite.training_seeds" and "3 training seeds" in err.value.message


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Every learner trained once on the fixture (seed 1), its checkpoint folder by name."""
    root = tmp_path_factory.mktemp("ckpt")
    return {a: train_run("tiny_learn", a, 1, root / a, progress=False, scenario_dir=HERE) for a in LEARNERS}


@pytest.mark.parametrize("agent", LEARNERS)
def test_a_trained_checkpoint_is_weights_only_with_a_card_and_plays_the_scenario(trained, agent):
    folder = trained[agent]
    _, card = load_card(folder)
    assert card["command"] == f"ecngym train suite=core scenario=tiny_learn agent={agent} seed=1"
    assert card["budget_steps"] == 80 and card["train_trace_seeds"] == [101, 102]
    assert set(card["trace_hashes"]) <= {"101", "102"} and card["trace_hashes"]  # trained on train seeds only
    assert (folder / WEIGHTS_FILE).read_bytes()[8:9] == b"{"  # a safetensors header, no pickle
    sc = load_scenario("tiny_learn", HERE)
    controller = CheckpointController(folder)
    env = gym.make(sc.id, **{**sc.env, **controller.env_overrides()})
    try:
        summary, _, _ = run_episode(env, controller, seed=1002)
    finally:
        env.close()
    assert np.isfinite(summary["slowdown_avg_all"]) and controller.name == agent


@pytest.mark.parametrize("agent", ["dqn", "laecn"])
def test_the_cards_command_reproduces_the_weights_bit_for_bit(tmp_path, agent):
    runs = []
    for i in range(2):  # each in a fresh process, as a user runs the card's command
        out = tmp_path / f"run{i}"
        done = subprocess.run([sys.executable, "-m", "ecngym", "train", f"suite={HERE / 'tiny_learn_suite.yaml'}",
                               "scenario=tiny_learn", f"agent={agent}", "seed=2", f"out={out}", "progress=false",
                               f"scenario_dir={HERE}"], capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        runs.append(load_card(out)[1])
    assert runs[0]["weights_sha256"] == runs[1]["weights_sha256"]
    assert runs[0]["seed"] == 2 and runs[0]["trace_hashes"] == runs[1]["trace_hashes"]


def test_a_checkpoint_of_another_env_or_observation_is_refused_naming_both(trained, tmp_path):
    folder = tmp_path / "other"
    shutil.copytree(trained["acc"], folder)
    card = json.loads((folder / CARD_FILE).read_text())
    card["env_id"] = "ecngym/RoceIncast-v9"
    (folder / CARD_FILE).write_text(json.dumps(card))
    with pytest.raises(ConfigError) as err:
        load_checkpoint(folder, load_scenario("tiny_learn", HERE))
    assert "ecngym/RoceIncast-v9" in err.value.message and "ecngym/RoceIncast-v0" in err.value.message
    card["env_id"] = "ecngym/RoceIncast-v0"
    card["observation"]["history"] = 7
    (folder / CARD_FILE).write_text(json.dumps(card))
    sc = load_scenario("tiny_learn", HERE)
    controller = CheckpointController(folder)
    env = gym.make(sc.id, **{**sc.env, **controller.env_overrides()})
    try:
        with pytest.raises(ConfigError) as err:
            controller.reset(env)
    finally:
        env.close()
    assert err.value.field == "controller.path" and "observation.history differ" in err.value.message
    assert '"history": 7' in err.value.message and '"history": 3' in err.value.message  # both layouts


class _Payload:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def test_a_file_that_is_not_a_checkpoint_is_refused_and_nothing_is_unpickled(trained, tmp_path):
    folder = tmp_path / "crafted"
    shutil.copytree(trained["ppo"], folder)
    marker = tmp_path / "code-ran"
    (folder / WEIGHTS_FILE).write_bytes(pickle.dumps(_Payload(marker)))
    with pytest.raises(ConfigError) as err:
        CheckpointController(folder)
    assert err.value.field == "controller.path" and "not a safetensors file" in err.value.message
    assert not marker.exists()
    (folder / CARD_FILE).write_bytes(pickle.dumps(_Payload(marker)))
    with pytest.raises(ConfigError, match="not a JSON card"):
        load_checkpoint(folder)
    (folder / CARD_FILE).write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(ConfigError, match="format 'something-else'"):
        load_checkpoint(folder)
    assert not marker.exists()


def test_every_shipped_checkpoint_loads_for_its_scenario():
    cards = sorted(CHECKPOINT_DIR.glob(f"*/*/seed*/{CARD_FILE}"))
    for card_path in cards:
        card, tensors = load_checkpoint(card_path.parent, load_scenario(card_path.parts[-4]))
        assert card["agent"] == card_path.parts[-3] and tensors


def test_the_board_counts_a_learner_with_its_own_observation_on_the_same_traffic_only():
    import pandas as pd

    from ecngym.benchmark.board import _same_scenario
    from ecngym.results.record import scenario_identity

    base = {"interval": "5rtt", "episode_steps": 40, "workload": {"load": 0.6}, "observation": {"history": 3}}
    own = {**base, "observation": {"history": 1}, "reward": {"name": "acc"}, "interval_short": "2rtt"}
    other = {**base, "workload": {"load": 0.3}}

    def row(controller, config, seed, trace):
        return {"controller": controller, "env_id": "ecngym/X-v1", "seed": seed, "trace_hash": trace,
                "scenario_config": json.dumps(config), "scenario_hash": scenario_identity("ecngym/X-v1", config)}

    rows = pd.DataFrame([row("static_default", base, 1, "t1"), row("acc", own, 1, "t1"),
                         row("laecn", own, 1, "tX"), row("pred", other, 1, "t1")])
    kept = _same_scenario(rows, rows[rows["controller"] == "static_default"])
    assert list(rows.loc[kept, "controller"]) == ["static_default", "acc"]  # another trace, another workload: out


def test_a_long_curve_is_flat_from_the_first_cycle_mean_that_stays_near_the_final_one():
    import pandas as pd

    from ecngym.benchmark.learners import flattened_by

    steps = np.arange(100, 6001, 100)
    step = pd.DataFrame({"env_steps": steps, "reward": (steps > 2000).astype(float)})
    assert flattened_by(step, cycle_steps=1000) == 3000  # the first 1,000-step window past the jump
    late = pd.DataFrame({"env_steps": steps, "reward": 1.0 + 0.1 * (steps > 5000)})
    assert flattened_by(late, cycle_steps=1000) == 5800  # a late 10 % gain: flat only once 8 of 10 points have it
    flat = pd.DataFrame({"env_steps": steps, "reward": np.ones(len(steps))})
    assert flattened_by(flat, cycle_steps=1000) == 1000
    assert flattened_by(step.iloc[:15], cycle_steps=1000) is None  # 1,500 steps: under two cycles


def test_the_learner_table_cache_plays_a_job_once_and_another_seed_anew(tmp_path, monkeypatch):
    import ecngym.benchmark.learners as learners

    played = []

    def play(job):  # stands in for the episodes: this test is about which jobs get played
        played.append(job["seeds"])
        return [{"seed": s, "score": float(s)} for s in job["seeds"]]

    monkeypatch.setattr(learners, "_play", play)
    job = {"scenario": "dctcp_pred_regimes", "family": "held_out", "name": "static_default", "agent": None,
           "train_seed": None, "controller_cfg": {"_target_": "x"}, "seeds": [2001], "cache": str(tmp_path)}
    assert learners._play_cached(job) == learners._play_cached(dict(job)) == [{"seed": 2001, "score": 2001.0}]
    assert played == [[2001]]
    learners._play_cached({**job, "seeds": [2002]})
    learners._play_cached({**job, "cache": None})
    assert played == [[2001], [2002], [2001]]
