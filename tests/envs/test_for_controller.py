"""make_for_controller: the env a controller plays, remade only when the controller asks for overrides."""

import gymnasium as gym
import pytest

import ecngym.envs  # noqa: F401  (registers the ids)
from ecngym.baselines.static import StaticEcnController
from ecngym.envs import make_for_controller
from ecngym.envs.view import EnvView


class _Counting:
    """A make function that records the overrides of each env it makes and whether it was closed."""

    def __init__(self) -> None:
        self.made: list[tuple[dict, gym.Env]] = []

    def __call__(self, extra):
        env = gym.make("ecngym/RoceIncast-v0", **extra)
        self.made.append((dict(extra), env))
        return env


def test_a_controller_without_overrides_plays_the_first_env():
    make = _Counting()
    env = make_for_controller(make, object())  # no env_overrides at all
    try:
        assert [extra for extra, _ in make.made] == [{}] and env is make.made[0][1]
    finally:
        env.close()


def test_a_setting_outside_the_templates_remakes_the_env_with_it():
    make = _Counting()
    controller = StaticEcnController(setting=[12_345, 67_890, 0.05])  # no discrete template
    env = make_for_controller(make, controller)
    try:
        assert len(make.made) == 2 and env is make.made[1][1] and make.made[0][0] == {}
        assert list(make.made[1][0]) == ["action"]
        assert (12_345, 67_890, 0.05) in EnvView(env).action_templates
        assert (12_345, 67_890, 0.05) not in EnvView(make.made[0][1]).action_templates
    finally:
        env.close()


def test_the_first_env_is_closed_if_the_controller_fails_to_answer():
    closed = []

    class Failing:
        def env_overrides(self, env):
            raise RuntimeError("boom")

    def make(extra):
        env = gym.make("ecngym/RoceIncast-v0", **extra)
        inner = env.close
        env.close = lambda: (closed.append(True), inner())
        return env

    with pytest.raises(RuntimeError, match="boom"):
        make_for_controller(make, Failing())
    assert closed == [True]
