"""LAECN / HAECN: decision module gating the policy DDQN, adaptive Δt (fast checks, tiny scenario)."""

import json

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env

import ecngym.envs  # noqa: F401
from ecngym.agents.config import agent_config
from ecngym.agents.inference import InferenceCounter
from ecngym.agents.laecn import LaecnAgent, LaecnController, train_laecn
from ecngym.error import ConfigError

FAST = {"learning_starts": 48, "buffer_size": 5000}


def test_laecn_trains_with_finite_losses_and_q_values(tiny_env, tmp_path):
    agent = agent_config("laecn", FAST)
    train_laecn(tiny_env, agent, tmp_path, timesteps=40, seed=1, progress_bar=False)
    meta = json.loads((tmp_path / "agent.json").read_text())
    for key in ("policy_last_loss", "policy_last_q_mean", "decision_last_loss", "decision_last_q_mean"):
        assert np.isfinite(meta[key]), key
    assert meta["n_agents"] == 6 and meta["timesteps"] == 40
    counts = meta["training_inference"]
    assert counts["decisions"] == 40 * 6  # the decision module runs for every agent every interval
    assert 0 < counts["policy_forward_passes"] < counts["decisions"]  # ε = ~1: about half trigger
    curve = (tmp_path / "curve.csv").read_text().splitlines()
    assert curve[0].startswith("episode,env_steps") and len(curve) >= 3


def _agent(obs_dim=15, n_actions=5, **over):
    return LaecnAgent(obs_dim, n_actions, static_action=2, cfg=agent_config("laecn", {**FAST, **over}), seed=0)


def test_decision_module_can_skip_the_policy():
    agent = _agent(initial_trigger=False)  # a^save starts as the static template
    states = np.random.default_rng(0).random((4, 15), dtype=np.float32)
    agent.begin(states)
    with torch.no_grad():  # a decision net that always prefers "keep"
        agent.decision.net[-1].bias[:] = torch.tensor([10.0, -10.0])
        agent.decision.net[-1].weight.zero_()
    counter = InferenceCounter()
    for _ in range(5):
        actions, trigger, _ = agent.step(states, eps=0.0, counter=counter)
        assert not trigger.any()
        np.testing.assert_array_equal(actions, 2)  # a^save: the static template, no policy inference
    assert counter.extra.get("policy_forward_passes", 0) == 0
    assert counter.decisions == 20 and counter.forward_passes == 20  # decision module only
    with torch.no_grad():  # now it always triggers: the policy runs for every agent
        agent.decision.net[-1].bias[:] = torch.tensor([-10.0, 10.0])
    actions, trigger, _ = agent.step(states, eps=0.0, counter=counter)
    assert trigger.all() and counter.extra["policy_forward_passes"] == 4
    np.testing.assert_array_equal(actions, agent.policy.q_values(states).argmax(1))
    np.testing.assert_array_equal(agent.saved_state, states)  # S^save <- S_t on a trigger


def test_first_interval_triggers_the_policy_then_the_decision_module_gates_it():
    agent = _agent()  # initial_trigger (the default): no S^save / a^save before the first trigger
    states = np.random.default_rng(1).random((3, 15), dtype=np.float32)
    with torch.no_grad():  # a decision net that always prefers "keep"
        agent.decision.net[-1].bias[:] = torch.tensor([10.0, -10.0])
        agent.decision.net[-1].weight.zero_()
    for _episode in range(2):  # every episode starts with the policy's choice
        agent.begin(states)
        counter = InferenceCounter()
        actions, trigger, _ = agent.step(states, eps=0.0, counter=counter)
        assert trigger.all() and counter.extra["policy_forward_passes"] == 3
        assert counter.forward_passes == 3  # the policy only: the decision module had nothing to compare
        first = agent.policy.q_values(states).argmax(1)
        np.testing.assert_array_equal(actions, first)
        later, trigger, _ = agent.step(states * 0.5, eps=0.0, counter=counter)
        assert not trigger.any() and counter.forward_passes == 6  # now the decision module runs, keeps a^save
        np.testing.assert_array_equal(later, first)


def test_trigger_penalty_enters_only_the_decision_reward():
    agent = _agent(trigger_penalty=0.05)
    states = np.zeros((2, 15), dtype=np.float32)
    agent.begin(states)
    x = np.zeros((2, 30), dtype=np.float32)
    agent.learn(states, x, np.array([1, 3]), np.array([0, 1]), np.array([0.5, 0.5], dtype=np.float32), states)
    np.testing.assert_allclose(agent.decision.replay.rewards[:2], [0.5, 0.45])
    assert agent.policy.replay.size == 1 and agent.policy.replay.rewards[0] == pytest.approx(0.5)  # triggered only


def _intervals(env_kwargs):
    """(interval_ns, long_flow flag after the step) of every step of one static-action episode."""
    env = gym.make("ecngym/RoceIncast-v0", **env_kwargs)
    sc = env.unwrapped.scenario
    try:
        env.reset(seed=3)
        steps = []
        while True:
            _, _, _, trunc, info = env.step(env.unwrapped.static_action())
            steps.append((info["interval_ns"], info.get("long_flow")))
            if trunc:
                return steps, sc.interval_ns, sc.interval_short_ns, sc.episode_ns
    finally:
        env.close()


SHORT_ONLY = {"workload": {"workload": "none", "incast": {"degree": 4, "size": "64KB", "interval": "50us"}}}


@pytest.mark.parametrize("workload", ["websearch", "short_only"])
def test_interval_follows_the_long_flow_flag(tiny_env, workload):
    kwargs = {**tiny_env, "interval": "15rtt", "interval_short": "5rtt"}
    if workload == "short_only":
        kwargs.update(SHORT_ONLY)
    steps, long_ns, short_ns, episode_ns = _intervals(kwargs)
    assert long_ns == 3 * short_ns
    assert sum(span for span, _ in steps) == episode_ns  # the episode spans interval x episode_steps
    flag = False  # every flow starts short (LAECN §III-A; docs: algorithms/laecn.md §3.1)
    for span, after in steps[:-1]:  # (the last step is cut at the episode's end)
        assert span == (long_ns if flag else short_ns)
        flag = after
    flags = {after for _, after in steps}
    if workload == "short_only":  # 64 KB flows never reach 100 KB: Δt stays 5 RTT
        assert flags == {False} and len(steps) == 3 * tiny_env["episode_steps"]
    else:  # WebSearch has MB flows: the long-flow state (Δt 15 RTT) occurs
        assert True in flags and any(span == long_ns for span, _ in steps)


def test_fixed_interval_has_no_flag(tiny_env):
    steps, long_ns, short_ns, _ = _intervals({**tiny_env, "interval": "15rtt"})
    assert short_ns is None and {span for span, _ in steps} == {long_ns} and {f for _, f in steps} == {None}


def test_adaptive_interval_env_passes_the_gymnasium_checker(tiny_env):
    env = gym.make("ecngym/RoceIncast-v0", **{**tiny_env, "interval": "15rtt", "interval_short": "5rtt"})
    try:
        check_env(env.unwrapped, skip_render_check=True)
    finally:
        env.close()


def test_interval_short_longer_than_interval_is_refused(tiny_env):
    with pytest.raises(ConfigError, match="env.interval_short"):
        gym.make("ecngym/RoceIncast-v0", **{**tiny_env, "interval": "5rtt", "interval_short": "15rtt"})


def test_save_load_gives_identical_greedy_actions_in_eval(tiny_env, tmp_path):
    agent = agent_config("haecn", FAST)
    assert agent["env"]["interval_short"] is None and agent["trigger_penalty"] == 0.05  # HAECN = LAECN, Δt fixed
    train_laecn(tiny_env, agent, tmp_path, timesteps=20, seed=4, progress_bar=False)
    ctrl = LaecnController(tmp_path)
    assert ctrl.name == "haecn"
    env = gym.make("ecngym/RoceIncast-v0", **{**tiny_env, **ctrl.env_overrides()})
    try:
        obs, info = env.reset(seed=999)
        ctrl.reset(env)
        first = ctrl.act(obs, info)
        # the same weights in a fresh agent give the same two-level decisions
        twin = LaecnController(tmp_path)
        twin.reset(env)
        np.testing.assert_array_equal(twin.act(obs, info), first)
        obs, _, _, _, info = env.step(first)
        np.testing.assert_array_equal(ctrl.act(obs, info), twin.act(obs, info))
        assert ctrl.inference.decisions == 12  # 6 agents x 2 intervals
    finally:
        env.close()


def test_a_resumed_laecn_learns_at_the_runs_learning_rate(tmp_path):
    # the optimizer's saved state carried the checkpoint's lr and overrode the run's config
    _agent(learning_rate=0.005).save(tmp_path / "ckpt.pt", with_replay=True)
    resumed = _agent(learning_rate=0.001)
    resumed.load(tmp_path / "ckpt.pt")
    for module in (resumed.policy, resumed.decision):
        assert [g["lr"] for g in module.optimizer.param_groups] == [0.001]


def test_a_warm_up_the_run_never_gets_past_is_refused(tiny_env, tmp_path):
    # 4 env steps x 6 port agents fill neither module's replay up to a warm-up of 1000
    with pytest.raises(ConfigError, match=r"^agent\.learning_starts: got 1000, allowed range is \[0, 24\] for this "
                                          r"run, which collects 24 transitions \(4 env steps x 6 agents\)"):
        train_laecn(tiny_env, agent_config("laecn"), tmp_path, timesteps=4, seed=0, progress_bar=False)
    assert not (tmp_path / "laecn.pt").exists()
