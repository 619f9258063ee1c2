"""The PettingZoo parallel env and the adapters for SB3 (shared policy) and RLlib."""

import warnings

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
        # the test passes options={"options": 1} to check that reset takes the argument: not refused
        # (the single-agent env refuses options), but not silently ignored either
        with pytest.warns(UserWarning, match=r"^options: got \{'options': 1\}, allowed: None or \{\}: .*; not read$"):
            parallel_api_test(env, num_cycles=30)
    finally:
        env.close()


def test_spaces_are_given_for_the_env_s_agents_only():
    env = EcnTuningParallelEnv(SMALL, agent_granularity="switch")
    try:
        agent = env.possible_agents[0]
        assert env.observation_space(agent) is env.observation_space(env.possible_agents[-1])
        for bad in ("nope", 5, None):  # each got the space (helper-19's fuzz)
            with pytest.raises(KeyError, match=rf"no agent {bad!r}; agents: {agent}, "):
                env.observation_space(bad)
            with pytest.raises(KeyError, match=rf"no agent {bad!r}"):
                env.action_space(bad)
    finally:
        env.close()


def test_an_rllib_env_config_that_is_no_mapping_is_named():
    from ecngym.envs.adapters import parallel_env_of
    from ecngym.error import ConfigError

    with pytest.raises(ConfigError, match=r"^env_config: expected a mapping of env fields .*, got \[1\]$"):
        parallel_env_of([1])  # was dict()'s "cannot convert dictionary update sequence element #0"


def test_reset_refuses_options_that_are_no_mapping():
    from ecngym.error import ConfigError

    env = EcnTuningParallelEnv(SMALL)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            env.reset(seed=1, options={})  # None and {} pass without a word
            env.reset(seed=1, options=None)
        with pytest.raises(ConfigError, match=r"^options: got 5, allowed: None or \{\}"):
            env.reset(seed=1, options=5)
    finally:
        env.close()


def test_same_seed_and_actions_give_identical_agent_observations():
    # (pettingzoo.test.parallel_seed_test needs two live envs: one fabric per process forbids that)
    env = EcnTuningParallelEnv(SMALL)
    runs = []
    for _ in range(2):
        obs, _ = env.reset(seed=5)
        trajectory = [obs]
        for t in range(6):
            obs, rewards, _, _, _ = env.step({a: (t + i) % 13 for i, a in enumerate(env.agents)})
            trajectory.append({**obs, **{f"r_{a}": np.array([r]) for a, r in rewards.items()}})
        runs.append(trajectory)
    env.close()
    for first, second in zip(*runs, strict=True):
        assert first.keys() == second.keys()
        for key in first:
            np.testing.assert_array_equal(first[key], second[key])


def test_scenario_name_and_missing_or_bad_actions():
    from ecngym.error import ConfigError, InvalidAction

    env = EcnTuningParallelEnv("RoceLeafSpine-v0", episode_steps=3)
    assert len(env.possible_agents) == 8 and env.action_space("switch_0").n == 13
    obs, _ = env.reset(seed=0)
    assert all(env.observation_space(a).contains(o) for a, o in obs.items())
    with pytest.raises(InvalidAction, match="missing"):
        env.step({"switch_0": 0})
    with pytest.raises(InvalidAction, match="switch_1"):
        env.step({a: (99 if a == "switch_1" else 0) for a in env.agents})
    env.close()
    with pytest.raises(ConfigError, match="env.scenario"):
        EcnTuningParallelEnv("NoSuchScenario-v0")
    with pytest.raises(ConfigError, match="env.agent_granularity"):
        EcnTuningParallelEnv(SMALL, agent_granularity="rack")


@pytest.mark.parametrize("action_type", ["discrete", "continuous"])
def test_bad_action_dicts_and_values_are_invalid_actions(action_type):
    from ecngym.error import InvalidAction

    env = EcnTuningParallelEnv("RoceLeafSpine-v0", episode_steps=3, action={"type": action_type})
    env.reset(seed=0)
    good = {a: env.action_space(a).sample() for a in env.agents}
    cases = [
        (None, "expected a mapping"),
        (list(good.values()), "expected a mapping"),  # was a ValueError (array truth value) for Box actions
        ({**good, "switch_99": good["switch_0"]}, r"unknown agents \['switch_99'\]"),  # was silently ignored
        ({**good, "switch_0": True}, "switch_0"),  # a bool was template 1 (Discrete.contains takes it)
        ({**good, "switch_0": object()}, "switch_0"),  # was a TypeError from float() for Box actions
        ({**good, "switch_0": {}}, "switch_0"),
        ({**good, "switch_0": "1"}, "switch_0"),
        # a bool in a list was 1.0 (np.asarray([True, 0, 0]) is [1, 0, 0]); a per-agent index is a scalar
        ({**good, "switch_0": [True, 0.0, 0.0] if action_type == "continuous" else np.True_},
         r"^switch_0: expected .*, got (action\[0\] = )?True$"),
    ]
    red = {k: v.copy() for k, v in env.scenario.red.items()}
    for actions, match in cases:
        with pytest.raises(InvalidAction, match=match):
            env.step(actions)
    for k, v in env.scenario.red.items():  # nothing applied
        np.testing.assert_array_equal(v, red[k])
    env.step(good)  # still usable
    env.close()
    with pytest.raises(RuntimeError, match="call reset"):  # mid-episode close: was an AttributeError
        env.step(good)


def test_reset_seed_is_checked_like_the_single_agent_env():
    from ecngym.error import ConfigError

    env = EcnTuningParallelEnv("RoceLeafSpine-v0", episode_steps=3)
    # were NumPy ValueError / TypeError (-1, 1.5, 'x', 3.0 as np.float64), or accepted (True as seed 1, 2**64)
    for seed in (-1, 1.5, "x", True, 2**64):
        with pytest.raises(ConfigError, match="^seed: "):
            env.reset(seed=seed)
    first, _ = env.reset(seed=np.float64(3.0))
    again, _ = env.reset(seed=3)
    for a in first:
        np.testing.assert_array_equal(first[a], again[a])
    env.close()


def test_shared_policy_vec_env_needs_one_action_per_agent():
    from ecngym.error import InvalidAction

    vec = SharedPolicyVecEnv(EcnTuningParallelEnv("RoceLeafSpine-v0", episode_steps=3))
    vec.reset()
    n = vec.num_envs
    # fewer rows were an IndexError, more were silently dropped, None / a scalar a TypeError
    for actions in (np.zeros(n - 1, dtype=np.int64), np.zeros(n + 1, dtype=np.int64), None, 0):
        with pytest.raises(InvalidAction, match=f"expected {n} actions, one per agent"):
            vec.step(actions)
    vec.step(np.zeros(n, dtype=np.int64))
    vec.close()


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

    from ecngym.agents.sb3 import without_log_dir

    venv = SharedPolicyVecEnv(EcnTuningParallelEnv(SMALL))
    assert venv.num_envs == 4
    model = without_log_dir(PPO("MlpPolicy", venv, n_steps=16, batch_size=32, n_epochs=1, seed=0, device="cpu"))
    model.learn(total_timesteps=128)
    obs = venv.reset()
    actions, _ = model.predict(obs, deterministic=True)
    assert actions.shape == (4,)
    venv.close()


_STEP_RLLIB_WRAPPER = """
import json, sys
from ecngym.envs.adapters import rllib_env_creator
small = json.loads(sys.argv[1])
agents = {"switch_0", "switch_1", "switch_2", "switch_3"}
env = rllib_env_creator(small)
obs, _ = env.reset(seed=0)
assert set(obs) == agents, obs.keys()
for _ in range(small["episode_steps"]):
    obs, rewards, terms, truncs, _ = env.step({a: 0 for a in obs})
    assert set(rewards) == agents and not terms["__all__"]
assert truncs["__all__"]
env.close()
# a registered scenario as the starting point, with overrides
env = rllib_env_creator({"scenario": "RoceLeafSpine-v0", "episode_steps": 2, "agent_granularity": "port"})
obs, _ = env.reset(seed=0)
env.close()
# ACC's env_config (ecngym train agent=acc framework=rllib): its resolved config, as it was (given as
# overrides of the default scenario, a workload without incasts gained the default's 8-way incasts)
from ecngym.agents.rllib import acc_env_config
from ecngym.envs import EnvConfig
from ecngym.envs.registration import scenario_config
resolved = EnvConfig.from_dict({**scenario_config("DctcpRttVariation-v0"), "episode_steps": 2})
env = rllib_env_creator(acc_env_config(resolved, "switch"))
assert env.par_env.config == resolved.updated({"action": {"scope": "port"}}), env.par_env.config.workload
env.close()
print(json.dumps({"leaf_spine_agents": len(obs)}))
"""


def _in_child(script: str) -> dict:
    """Run ``script`` with SMALL as its argument in a child process; its last stdout line as JSON.

    Importing RLlib in the pytest process ties loggers to pytest's capture streams, and a later
    test whose Hydra job fails then kills pytest ("lost sys.stderr"): RLlib runs in a child.
    """
    import importlib.util
    import json
    import subprocess
    import sys

    if importlib.util.find_spec("ray") is None:  # (not importorskip: that imports it here)
        pytest.skip("ray is not installed")
    done = subprocess.run([sys.executable, "-c", script, json.dumps(SMALL)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_rllib_wrapper_steps():
    assert _in_child(_STEP_RLLIB_WRAPPER) == {"leaf_spine_agents": 48}


_TRAIN_SHARED_PPO = """
import json, sys
import ray
from ecngym.agents.rllib import shared_policy_ppo
ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
try:
    config = shared_policy_ppo(json.loads(sys.argv[1]), train_batch_size=120, minibatch_size=30, num_epochs=1)
    algo = config.build_algo()
    result = algo.train()
    algo.stop()
finally:
    ray.shutdown()
runners = result["env_runners"]
print(json.dumps({"steps": runners["num_env_steps_sampled_lifetime"], "return": runners["episode_return_mean"]}))
"""


def test_rllib_trains_the_multi_agent_env_with_a_shared_policy():
    runners = _in_child(_TRAIN_SHARED_PPO)
    assert runners["steps"] >= 120
    assert np.isfinite(runners["return"])


@pytest.mark.parametrize("action_type", ["discrete", "continuous"])
def test_one_port_agent_steps_its_discrete_or_box_action(action_type):
    # one controlled port: the single-agent space is Discrete(13) (not MultiDiscrete([13])), which
    # refuses the shape-(1,) array the parallel env used to hand it
    from ecngym.error import InvalidAction

    env = EcnTuningParallelEnv("RoceIncast-v0", agent_granularity="port", episode_steps=3,
                               action={"ports": [7], "type": action_type})
    try:
        assert env.possible_agents == ["port_7"]
        env.reset(seed=0)
        env.step({"port_7": env.action_space("port_7").sample()})
        if action_type == "discrete":
            env.step({"port_7": 4})
            assert env.scenario.red["kmin_bytes"][0] == env.scenario.actions.templates[4][0]  # (Kmin, ...)
            with pytest.raises(InvalidAction, match=r"port_7: .*Discrete\(13\)"):  # an agent's own action: scalar
                env.step({"port_7": np.array([4])})
    finally:
        env.close()
