"""The lean SB3 policies act exactly as SB3's own (``ecngym.agents.sb3_policies``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces
from stable_baselines3.common.policies import ActorCriticPolicy
from stable_baselines3.dqn.policies import DQNPolicy

from ecngym.agents.sb3_policies import LeanActorCriticPolicy, LeanDQNPolicy

OBS = spaces.Box(-1.0, 1.0, (24,), np.float32)


def _pair(action_space: spaces.Space, **kwargs) -> tuple[ActorCriticPolicy, LeanActorCriticPolicy]:
    stock = ActorCriticPolicy(OBS, action_space, lambda _: 3e-4, **kwargs)
    lean = LeanActorCriticPolicy(OBS, action_space, lambda _: 3e-4, **kwargs)
    lean.load_state_dict(stock.state_dict())
    return stock, lean


#: PPO's default MlpPolicy, and architectures the layer-by-layer path must also get right
ARCHITECTURES = {"default": {}, "relu": {"activation_fn": torch.nn.ReLU},
                 "uneven": {"net_arch": {"pi": [32], "vf": [16, 16]}}, "no-hidden": {"net_arch": []},
                 "separate-extractors": {"share_features_extractor": False},
                 "leaky-relu": {"activation_fn": torch.nn.LeakyReLU}}  # (a layer it calls as a module)


@pytest.mark.parametrize("action_space", [spaces.Discrete(13), spaces.MultiDiscrete([5, 5, 3])],
                         ids=["discrete", "multi-discrete"])
@pytest.mark.parametrize("deterministic", [False, True], ids=["sampled", "greedy"])
@pytest.mark.parametrize("architecture", list(ARCHITECTURES))
def test_lean_actor_critic_forward_is_sb3s_to_the_bit(action_space: spaces.Space, deterministic: bool,
                                                      architecture: str) -> None:
    stock, lean = _pair(action_space, **ARCHITECTURES[architecture])
    obs = torch.as_tensor(np.random.default_rng(0).uniform(-8, 8, (300, 24)).astype(np.float32))
    with torch.no_grad():
        for rows in (obs[i:i + 1] for i in range(200)), [obs[200:]]:  # batch 1 (a rollout step) and 100
            for i, batch in enumerate(rows):
                torch.manual_seed(i)
                want = stock(batch, deterministic)
                torch.manual_seed(i)
                got = lean(batch, deterministic)
                for w, g in zip(want, got, strict=True):
                    assert w.shape == g.shape and w.dtype == g.dtype
                    assert torch.equal(w, g)


def test_lean_actor_critic_forward_calls_no_module_of_the_default_mlp() -> None:
    """The rollout's forward runs the default extractor's layers and heads as functions."""
    _, lean = _pair(spaces.Discrete(13))
    called = []
    for name, module in lean.named_modules():
        if name.startswith(("mlp_extractor", "action_net", "value_net")):
            module.register_forward_pre_hook(lambda m, args, name=name: called.append(name))
    with torch.no_grad():
        lean(torch.zeros(1, 24))
    assert called == []


def test_lean_actor_critic_samples_every_action() -> None:
    """Sampling really draws (not the argmax): flat logits give every action."""
    _, lean = _pair(spaces.Discrete(4))
    torch.nn.init.zeros_(lean.action_net.weight)
    torch.nn.init.zeros_(lean.action_net.bias)
    torch.manual_seed(0)
    with torch.no_grad():
        actions, _, log_prob = lean(torch.zeros(400, 24))
    assert set(actions.tolist()) == {0, 1, 2, 3}
    assert torch.allclose(log_prob, torch.full((400,), float(np.log(0.25))))


def test_lean_dqn_policy_switches_mode_only_when_it_changes() -> None:
    stock = DQNPolicy(OBS, spaces.Discrete(5), lambda _: 1e-4)
    lean = LeanDQNPolicy(OBS, spaces.Discrete(5), lambda _: 1e-4)
    switches = []
    original = type(lean.q_net).set_training_mode
    lean.q_net.set_training_mode = lambda mode: (switches.append(mode), original(lean.q_net, mode))
    for mode in (False, False, True, True, True, False):
        stock.set_training_mode(mode)
        lean.set_training_mode(mode)
        assert lean.training == stock.training == mode
        assert all(m.training == mode for m in lean.q_net.modules())
        assert all(m.training is False for m in lean.q_net_target.modules())
    assert switches == [False, True, False]


@pytest.mark.parametrize(("algorithm", "policy", "hyperparams"), [
    ("ppo", LeanActorCriticPolicy, {"n_steps": 8, "batch_size": 8, "n_epochs": 1}),
    ("dqn", LeanDQNPolicy, {"learning_starts": 4, "train_freq": 2}),
])
def test_ecngym_train_saves_a_lean_policy_that_loads_and_acts(tiny_env, tmp_path, algorithm, policy, hyperparams):
    import gymnasium as gym

    import ecngym.envs  # noqa: F401
    from ecngym.agents.sb3 import SB3Controller, train

    path = train(lambda: gym.make("ecngym/RoceIncast-v0", **tiny_env), algorithm, 16, 0, tmp_path / "run",
                 hyperparams=hyperparams, progress_bar=False)
    controller = SB3Controller(path, algorithm)
    assert type(controller.model.policy) is policy
    env = gym.make("ecngym/RoceIncast-v0", **tiny_env)
    obs, info = env.reset(seed=3)
    controller.reset(env)
    assert env.action_space.contains(controller.act(obs, info))
    env.close()
