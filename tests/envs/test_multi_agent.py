"""The PettingZoo parallel env and the adapters for SB3 (shared policy) and RLlib."""

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test

from ecngym.envs.adapters import SharedPolicyVecEnv
from ecngym.envs.multi_agent import EcnTuningParallelEnv

SMALL = {"topology": {"kind": "leaf_spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 5},
         "episode_steps": 15}


@pytest.mark.parametrize("granularity", ["switch", "port"])
def test_parallel_api(granularity):
    env = EcnTuningParallelEnv(SMALL, agent_granularity=granularity)
    try:
        parallel_api_test(env, num_cycles=30)
    finally:
        env.close()


def test_agents_act_independently():
    env = EcnTuningParallelEnv(SMALL)
    env.reset(seed=1)
    actions = {a: i % env.action_space(a).n for i, a in enumerate(env.agents)}
    env.step(actions)
    red = env.scenario.red
    settings = {tuple(red[k][rows].tolist()[0] for k in ("kmin_bytes", "kmax_bytes"))  # rows: controlled ports
                for rows in env._agent_ports.values()}
    assert len(settings) > 1  # different agents set different thresholds
    env.close()


def test_sb3_trains_one_shared_policy_over_all_agents():
    from stable_baselines3 import PPO

    venv = SharedPolicyVecEnv(EcnTuningParallelEnv(SMALL))
    assert venv.num_envs == 4
    model = PPO("MlpPolicy", venv, n_steps=16, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=128)
    obs = venv.reset()
    actions, _ = model.predict(obs, deterministic=True)
    assert actions.shape == (4,)
    venv.close()


def test_rllib_wrapper_steps():
    pytest.importorskip("ray.rllib")
    from ecngym.envs.adapters import rllib_env_creator

    env = rllib_env_creator(SMALL)
    obs, _ = env.reset(seed=0)
    assert set(obs) == {"switch_0", "switch_1", "switch_2", "switch_3"}
    obs, rewards, terms, truncs, _ = env.step({a: 0 for a in obs})
    assert set(rewards) == set(obs) and not terms["__all__"]
    env.close()


def test_rllib_trains_the_multi_agent_env_with_a_shared_policy():
    ray = pytest.importorskip("ray")
    from ecngym.agents.rllib import shared_policy_ppo

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        algo = shared_policy_ppo(SMALL, train_batch_size=120, minibatch_size=30, num_epochs=1).build_algo()
        result = algo.train()
        algo.stop()
    finally:
        ray.shutdown()
    runners = result["env_runners"]
    assert runners["num_env_steps_sampled_lifetime"] >= 120
    assert np.isfinite(runners["episode_return_mean"])
