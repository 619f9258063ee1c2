"""The ``score_dense`` reward: its undiscounted episode return is minus the episode's score, on every scenario."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import yaml

import ecngym.envs  # noqa: F401  (registers the ids)
from ecngym.envs import EnvConfig
from ecngym.envs.registration import SCENARIOS, SUITE_SCENARIO_DIR
from ecngym.envs.returns import RETURN_METRIC, RewardReturns
from ecngym.error import ConfigError

SUITE_FILES = sorted(SUITE_SCENARIO_DIR.glob("*.yaml"))
#: Steps of the shortened episodes (every scenario has flows finishing within them)
SHORT_STEPS = 30
#: Simulated time a shortened suite episode covers at least: v2's 8 MB elephants at 100 Gbps finish
#: after ~0.9 ms (slow start, then 0.64 ms at line rate), later than 30 of their 20 us steps
SHORT_SIM_NS = 2_000_000


def _short_steps(path) -> int:
    """SHORT_STEPS, or more where the scenario's interval is a time and SHORT_SIM_NS needs more."""
    from ecngym.units import parse_time_ns

    interval = str(yaml.safe_load(path.read_text())["env"].get("interval", ""))
    if not interval.endswith(("ns", "us", "ms")):  # (an interval in RTTs: the v1 RoCE scenarios')
        return SHORT_STEPS
    return max(SHORT_STEPS, -(-SHORT_SIM_NS // parse_time_ns(interval, "interval")))


def _protocol_score(path) -> tuple[str, str]:
    data = yaml.safe_load(path.read_text())
    return data["id"], data["protocol"]["score"]


def _play(env_id: str, score: str, steps: int | None, seed: int) -> tuple[list[float], dict, float]:
    """A random-action episode under score_dense: (rewards, summary, the RewardReturns return)."""
    kwargs = {"reward": {"name": "score_dense", "score": score}}
    if steps is not None:  # (a shortened episode ends before the scenario's later traffic phases)
        kwargs.update(episode_steps=steps, workload={"phases": []})
    env = gym.make(env_id, **kwargs)
    try:
        env.action_space.seed(seed)
        env.reset(seed=seed)
        returns = RewardReturns(env)
        rewards, truncated, info = [], False, {}
        while not truncated:
            _, reward, terminated, truncated, info = env.step(env.action_space.sample())
            assert not terminated
            returns.step(info)
            rewards.append(reward)
        stored = returns.finish(info["flow_records"], int(info["time_ns"]))[RETURN_METRIC.format("score_dense")]
        return rewards, info["summary"], stored
    finally:
        env.close()


def _check(rewards: list[float], summary: dict, stored: float, score: str) -> None:
    assert np.isfinite(summary[score]) and summary["flows_finished"] > 0
    # the undiscounted return is minus the score (the constant is 0), to float rounding
    np.testing.assert_allclose(sum(rewards), -summary[score], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(stored, -summary[score], rtol=1e-12)


@pytest.mark.parametrize("path", SUITE_FILES, ids=[p.stem for p in SUITE_FILES])
def test_return_is_minus_the_score_on_every_suite_scenario(path):
    env_id, score = _protocol_score(path)
    steps = _short_steps(path)
    rewards, summary, stored = _play(env_id, score, steps, seed=7)
    assert len(rewards) == steps
    _check(rewards, summary, stored, score)


def test_it_pays_before_the_last_step():
    """Unlike fct (0 until the last step): flows pay as they complete, running flows once past their ideal FCT.

    (A step where no flow of the range finishes and every running one is still within its ideal FCT,
    whose slowdown so far is 1, pays 0: the first 30 steps of fat_tree_mixed pay once.)
    """
    rewards, _, _ = _play("ecngym/RoceIncast-v0", "slowdown_avg_all", SHORT_STEPS, seed=1)
    assert sum(r != 0.0 for r in rewards[:-1]) > SHORT_STEPS // 2


@pytest.mark.parametrize("env_id", sorted(SCENARIOS))
def test_return_is_minus_the_score_on_every_toy_env(env_id):
    rewards, summary, stored = _play(env_id, "slowdown_avg_all", SHORT_STEPS, seed=3)
    _check(rewards, summary, stored, "slowdown_avg_all")


def test_return_of_a_size_bucket_score():
    """A bucket's score counts only that bucket's flows (here flows under 100 KB)."""
    rewards, summary, _ = _play("ecngym/RoceIncast-v0", "slowdown_avg_<100KB", SHORT_STEPS, seed=5)
    assert summary["slowdown_avg_<100KB"] != summary["slowdown_avg_all"]
    np.testing.assert_allclose(sum(rewards), -summary["slowdown_avg_<100KB"], rtol=1e-9)


@pytest.mark.slow
def test_return_is_minus_the_score_on_a_full_v1_episode():
    path = SUITE_SCENARIO_DIR / "roce_storage_incast.yaml"
    env_id, score = _protocol_score(path)
    rewards, summary, stored = _play(env_id, score, None, seed=101)
    assert len(rewards) == 576
    _check(rewards, summary, stored, score)


def test_multi_agent_env_shares_the_flow_term():
    from ecngym.envs.multi_agent import EcnTuningParallelEnv

    env = EcnTuningParallelEnv("RoceLeafSpine-v0", reward={"name": "score_dense"}, episode_steps=12)
    try:
        env.reset(seed=2)
        total, infos = 0.0, {}
        while env.agents:
            _, rewards, _, _, infos = env.step({a: 0 for a in env.agents})
            assert len(set(rewards.values())) == 1  # no per-port part: every agent gets the flow term
            total += next(iter(rewards.values()))
        summary = next(iter(infos.values()))["summary"]
        np.testing.assert_allclose(total, -summary["slowdown_avg_all"], rtol=1e-9)
    finally:
        env.close()


@pytest.mark.parametrize(("reward", "pattern"), [
    ({"name": "score_dense", "score": "slowdown_p99_all"}, r"env\.reward\.score: .*percentile"),
    ({"name": "score_dense", "score": "utilization"}, r"env\.reward\.score: got 'utilization'"),
    ({"name": "score_dense", "score": "slowdown_avg_tiny"}, r"env\.reward\.score: got 'slowdown_avg_tiny'"),
    ({"name": "fct", "score": "slowdown_avg_all"}, r"env\.reward\.score: .*only score_dense reads it"),
])
def test_a_score_it_cannot_follow_is_refused_naming_the_field(reward, pattern):
    with pytest.raises(ConfigError, match=pattern):
        EnvConfig.from_dict({"reward": reward})


def test_an_unset_score_leaves_the_config_dump_as_it_was():
    """Configs without a score dump (and hash into the results' scenario identity) as before the field."""
    assert "score" not in EnvConfig.from_dict({"reward": {"name": "fct"}}).as_dict()["reward"]
    dumped = EnvConfig.from_dict({"reward": {"name": "score_dense", "score": "slowdown_avg_>1MB"}}).as_dict()
    assert dumped["reward"]["score"] == "slowdown_avg_>1MB"
    assert EnvConfig.from_dict(dumped).reward.score == "slowdown_avg_>1MB"
