"""Which reward a learner trains on: score_dense by default for PPO / DQN from scenario version 2, an option for all."""

from __future__ import annotations

import pytest
import yaml

from ecngym.benchmark.learner_reward import learner_reward
from ecngym.benchmark.suite import SCENARIO_DIR, Scenario
from ecngym.error import ConfigError


def _scenario(version: int, **agent_rewards: str) -> Scenario:
    data = yaml.safe_load((SCENARIO_DIR / "roce_storage_incast.yaml").read_text())
    data["version"] = version
    for agent, reward in agent_rewards.items():
        data["training"]["agents"][agent]["reward"] = reward
    return Scenario.parse(data, "scenarios.roce_storage_incast")


def test_v1_keeps_every_learners_reward():
    sc = _scenario(1)
    assert all(learner_reward(sc, a) is None for a in sc.training.agents)


def test_v2_trains_ppo_and_dqn_on_the_score_and_the_paper_agents_on_their_papers_rewards():
    sc = _scenario(2)
    for agent in ("ppo", "dqn"):
        assert learner_reward(sc, agent) == {"name": "score_dense", "score": "slowdown_avg_all"}
    for agent in ("acc", "laecn", "haecn"):
        assert learner_reward(sc, agent) is None


def test_a_stated_reward_wins():
    sc = _scenario(2, acc="score_dense", ppo="fct")
    assert learner_reward(sc, "acc") == {"name": "score_dense", "score": "slowdown_avg_all"}
    assert learner_reward(sc, "ppo") == {"name": "fct"}


def test_an_unknown_reward_is_refused_naming_the_field():
    with pytest.raises(ConfigError, match=r"training\.agents\.ppo\.reward"):
        _scenario(2, ppo="score")
