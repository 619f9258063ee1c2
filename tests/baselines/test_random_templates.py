"""The ``random`` reference: uniform over the templates per unit, every interval, reproducible from the episode seed."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import ecngym.envs  # noqa: F401
from ecngym.baselines import build_controller
from ecngym.envs.rollout import run_episode
from ecngym.error import ConfigError

CONFIG = {"_target_": "ecngym.baselines.random_templates.RandomTemplateController", "name": "random"}


class Logged:
    """Records a controller's actions."""

    def __init__(self, controller):
        self.controller, self.name, self.interval_steps, self.actions = controller, controller.name, 1, []

    def reset(self, env):
        """Reset the log and the controller."""
        self.actions = []
        self.controller.reset(env)

    def act(self, obs, info):
        """The controller's action, logged."""
        action = self.controller.act(obs, info)
        self.actions.append(np.atleast_1d(action).copy())
        return action


def _actions(env, seed: int, cfg=CONFIG) -> np.ndarray:
    ctrl = Logged(build_controller(cfg))
    run_episode(env, ctrl, seed=seed)
    return np.array(ctrl.actions)


@pytest.fixture(scope="module")
def layer_env():
    env = gym.make("ecngym/RoceLeafSpine-v0", episode_steps=40)  # MultiDiscrete([13, 13]): one per layer
    yield env
    env.close()


def test_reproducible_from_the_episode_seed_and_apart_across_seeds(layer_env):
    a, b = _actions(layer_env, 4), _actions(layer_env, 4)
    assert a.shape == (40, 2) and np.array_equal(a, b)
    assert not np.array_equal(a, _actions(layer_env, 5))
    assert not np.array_equal(a, _actions(layer_env, 4, {**CONFIG, "seed": 1}))
    assert not np.array_equal(a[:, 0], a[:, 1])  # units draw independently


def test_uniform_over_the_templates(layer_env):
    actions = np.concatenate([_actions(layer_env, s).reshape(-1) for s in range(5)])  # 400 draws
    counts = np.bincount(actions, minlength=13)
    assert len(counts) == 13 and counts.min() > 0
    from scipy.stats import chisquare

    assert chisquare(counts).pvalue > 1e-3


def test_refuses_a_continuous_action_space(layer_env):
    layer_env.close()  # (one fabric per process; its next reset builds a new one)
    env = gym.make("ecngym/RoceIncast-v0", action={"type": "continuous"}, episode_steps=2)
    try:
        with pytest.raises(ConfigError, match=r"env\.action\.type: the random reference draws the discrete"):
            run_episode(env, build_controller(CONFIG), seed=0)
    finally:
        env.close()


def test_is_a_reference_never_a_competitor():
    from ecngym.benchmark.references import reference_controllers
    from ecngym.benchmark.scoring import REFERENCES

    assert "random" in REFERENCES
    assert build_controller(reference_controllers("roce_storage_incast")["random"]).name == "random"
