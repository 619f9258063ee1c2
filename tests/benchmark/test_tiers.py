"""Budget tiers, validation seeds and the resume of a tier's training run (tiny step counts)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from safetensors.numpy import load_file

from ecngym.agents.registry import learner_names
from ecngym.benchmark.checkpoints import WEIGHTS_FILE, load_card
from ecngym.benchmark.suite import load_scenario
from ecngym.benchmark.tiers import load_tiers, resolve_tier, validation_seeds
from ecngym.error import ConfigError

HERE = Path(__file__).resolve().parent / "learners"

#: The shipped learners (the agents of configs/agent, then SB3's algorithms).
LEARNERS = tuple(learner_names())


def _fixture(tmp_path: Path, edit=None) -> Path:
    data = yaml.safe_load((HERE / "tiny_learn.yaml").read_text())
    data["protocol"]["validation_seeds"] = [301, 302]
    data["training"]["tiers"] = {"100k": {"eval_every_steps": 80, "learners": {
        "dqn": {"n_envs": 1, "hyperparams": {"learning_starts": 20, "target_update_interval": 40,
                                              "exploration_fraction": 0.5}},
        "ppo": {"n_envs": 1, "hyperparams": {"n_epochs": 2}},
        "acc": {"hyperparams": {"hyperparams": {"learning_starts": 64, "policy_kwargs": {"net_arch": [32, 32]}},
                                "exploration_decisions_per_agent": 100}},
        "laecn": {"hyperparams": {"learning_starts": 64, "exploration_decisions_per_agent": 100,
                                  "policy_net": [32, 32]}}}}}
    if edit is not None:
        edit(data)
    (tmp_path / "tiny_learn.yaml").write_text(yaml.safe_dump(data))
    return tmp_path


def test_both_tiers_are_published_for_every_learner():
    doc = load_tiers()
    assert doc.tiers["100k"].budget_steps == 100_000 and doc.tiers["100k"].stop is None
    assert doc.tiers["converged"].budget_steps == 500_000 and doc.tiers["converged"].stop is not None
    for tier in doc.tiers.values():
        assert set(tier.learners) == set(LEARNERS)


@pytest.mark.parametrize("scenario", ["roce_storage_incast", "dctcp_pred_regimes", "roce_multilayer_incast"])
def test_ppo_rollouts_cover_whole_episodes_and_minibatches_divide_them(scenario):
    sc = load_scenario(scenario)
    plan = resolve_tier(sc, "ppo", "100k")
    steps = sc.env["episode_steps"]
    assert plan.hyperparams["n_steps"] == steps
    rollout = steps * plan.n_envs
    assert rollout % plan.hyperparams["batch_size"] == 0 and rollout // plan.hyperparams["batch_size"] >= 8
    assert set(plan.validation_seeds).isdisjoint(sc.protocol.train_seeds + sc.protocol.test_seeds)


def test_an_unknown_tier_is_refused_naming_it():
    with pytest.raises(ConfigError) as err:
        resolve_tier(load_scenario("roce_storage_incast"), "dqn", "1M")
    assert err.value.field == "tier"


@pytest.mark.parametrize(("seeds", "says"), [([101, 301], "train_seeds"), ([1002], "test_seeds"),
                                             ([301, 301], "more than once")])
def test_validation_seeds_that_overlap_are_refused_naming_the_field(tmp_path, seeds, says):
    folder = _fixture(tmp_path, lambda d: d["protocol"].update(validation_seeds=seeds))
    with pytest.raises(ConfigError) as err:
        load_scenario("tiny_learn", folder)
    assert err.value.field.endswith("protocol.validation_seeds") and says in err.value.message


def test_validation_seeds_that_overlap_held_out_seeds_are_refused(tmp_path):
    folder = _fixture(tmp_path, lambda d: d["protocol"].update(validation_seeds=[2001]))
    with pytest.raises(ConfigError) as err:
        load_scenario("tiny_learn", folder)
    assert err.value.field.endswith("protocol.validation_seeds")


def test_a_scenario_without_validation_seeds_is_refused_by_a_tier(tmp_path):
    folder = _fixture(tmp_path, lambda d: d["protocol"].pop("validation_seeds"))
    with pytest.raises(ConfigError) as err:
        validation_seeds(load_scenario("tiny_learn", folder))
    assert err.value.field.endswith("protocol.validation_seeds")


@pytest.mark.parametrize("agent", ["dqn", "ppo", "acc", "laecn"])
def test_a_run_killed_half_way_and_resumed_ends_with_the_unbroken_runs_weights(tmp_path, agent, capsys):
    from ecngym.agents.resumable import TrainingHalted
    from ecngym.benchmark.training import train_run

    folder = _fixture(tmp_path)
    k = 320  # 8 episodes of 40 steps; validation and a state save every 80
    whole = train_run("tiny_learn", agent, 1, tmp_path / "whole", budget_steps=k, progress=False,
                      scenario_dir=folder, tier="100k")
    with pytest.raises(TrainingHalted):
        train_run("tiny_learn", agent, 1, tmp_path / "broken", budget_steps=k, progress=False, scenario_dir=folder,
                  tier="100k", halt_at=k // 2)
    assert (tmp_path / "broken" / "train" / "state" / "state.json").is_file()
    capsys.readouterr()
    resumed = train_run("tiny_learn", agent, 1, tmp_path / "broken", budget_steps=k, progress=False,
                        scenario_dir=folder, tier="100k")
    assert "from its saved state at" in capsys.readouterr().err
    a, b = load_file(str(whole / WEIGHTS_FILE)), load_file(str(resumed / WEIGHTS_FILE))
    assert sorted(a) == sorted(b)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)  # bit-identical
    _, card_a = load_card(whole)
    _, card_b = load_card(resumed)
    assert card_a["tier"]["resumed_from"] is None
    assert card_a["trace_hashes"] == card_b["trace_hashes"]
    steps = [p[0] for p in card_a["validation"]["points"]]
    if agent in ("dqn", "ppo"):  # (their episodes are 40 steps: every clean point is on the grid)
        assert steps == [80, 160, 240] and card_b["tier"]["resumed_from"] == 160
    else:  # LAECN's adaptive interval makes episodes of other lengths: the first episode end past each multiple
        assert len(steps) >= 2 and all(s >= 80 * (i + 1) for i, s in enumerate(steps))
        assert card_b["tier"]["resumed_from"] in steps and card_b["tier"]["resumed_from"] >= k // 2
    assert card_a["validation"]["points"] == card_b["validation"]["points"]
    assert "tier=100k" in card_a["command"]
    assert card_a["training_cost"]["cpu_s"] > 0


def test_train_learners_under_a_tier_resumes_a_killed_run_and_skips_finished_ones(tmp_path, capsys):
    from functools import partial

    from ecngym.agents.resumable import TrainingHalted
    from ecngym.benchmark.learner_cli import train_all_main
    from ecngym.benchmark.training import train_run
    from ecngym.benchmark.training_runs import TrainingRun, finished_record, partial_folder, run_training

    folder = _fixture(tmp_path, lambda d: d["training"]["tiers"]["100k"].update(budget_steps=160))
    suite = tmp_path / "suite.yaml"
    suite.write_text((HERE / "tiny_learn_suite.yaml").read_text())
    dest = tmp_path / "checkpoints"
    run = TrainingRun("tiny_learn", "dqn", 1, None, str(dest.resolve()), str(folder), "100k")
    with pytest.raises(TrainingHalted):  # a kill half way: the state stays in the run's partial folder
        run_training(run, partial(train_run, halt_at=80))
    assert finished_record(run) is None and (partial_folder(run) / "train" / "state" / "state.json").is_file()
    args = [f"suite={suite}", f"scenario_dir={folder}", "tier=100k", "agent=dqn", "jobs=1", f"dest={dest}"]
    assert train_all_main(args) == 0
    record = finished_record(run)
    assert record["tier"] == "100k" and not partial_folder(run).exists()
    _, card = load_card(run.folder / record["checkpoint"])
    assert card["tier"]["resumed_from"] == 80 and card["budget_steps"] == 160
    assert not (run.folder / "train" / "state").exists()  # (a finished run needs no state: the replay is large)
    assert "1 run(s) trained now" in capsys.readouterr().out
    assert train_all_main(args) == 0
    out = capsys.readouterr().out
    assert "0 run(s) trained now" in out and "1 found finished" in out


def test_validation_plays_a_static_reference_whose_setting_is_no_template():
    """The validation curve's references: a static setting outside the templates joins them (env_overrides)."""
    from ecngym.benchmark.validation import _play

    scenario_dir = Path(__file__).resolve().parent / "scenarios"
    static = {"_target_": "ecngym.baselines.StaticEcnController", "setting": ["7KB", "77KB", 0.3], "name": "x"}
    scores = _play({"scenario": "tiny_incast_hot", "scenario_dir": str(scenario_dir), "controller": static,
                    "seeds": [301]})
    assert len(scores) == 1 and np.isfinite(scores[0]) and scores[0] > 0
