"""Static controllers compute the literature's settings and encode them as actions."""

import pytest

from ecngym.baselines import STATIC_SETTINGS, StaticEcnController, dctcp_k_bytes
from ecngym.envs import EcnTuningEnv
from ecngym.error import ConfigError, InvalidAction


def test_settings_scale_with_rate():
    assert STATIC_SETTINGS["dcqcn"].at_rate(40e9) == (5000, 200_000, 0.01)
    assert STATIC_SETTINGS["hpcc"].at_rate(100e9) == (400_000, 1_600_000, 0.2)
    assert dctcp_k_bytes(10e9, 100_000) == round(10e9 * 100e-6 / 8 / 7)


def test_env_default_is_a_template_and_applied():
    env = EcnTuningEnv(episode_steps=3)
    c = StaticEcnController("env_default")
    env.reset(seed=0)
    c.reset(env)
    env.step(c.act(None, {}))
    red = env.scenario.fabric.get_red()
    assert (red["kmin_bytes"][env.ports] == 400_000).all() and (red["pmax"][env.ports] == 0.2).all()
    env.close()


def test_setting_outside_templates_is_refused_with_guidance():
    env = EcnTuningEnv(episode_steps=3)
    with pytest.raises(InvalidAction, match="static_default"):
        StaticEcnController("dcqcn").reset(env)
    env.close()


def test_continuous_encoding_is_exact():
    env = EcnTuningEnv(episode_steps=3, action={"type": "continuous"})
    c = StaticEcnController("dcqcn")
    env.reset(seed=0)
    c.reset(env)
    env.step(c.act(None, {}))
    red = env.scenario.fabric.get_red()
    assert abs(int(red["kmin_bytes"][env.ports[0]]) - 12_500) <= 1
    assert abs(int(red["kmax_bytes"][env.ports[0]]) - 500_000) <= 1
    env.close()


def test_unknown_setting():
    with pytest.raises(ConfigError, match="controller.setting"):
        StaticEcnController("magic")


@pytest.mark.parametrize("setting", [["10KB", "50KB", "0.5"], ["10KB", "50KB", True], ["10KB", "50KB", None]])
def test_a_custom_settings_pmax_must_be_a_number(setting):
    # float(entry[2]) turned '0.5' into 0.5 and true into 1.0
    with pytest.raises(ConfigError, match=r"controller\.setting\.pmax: "):
        StaticEcnController(setting)
    assert StaticEcnController(["10KB", "50KB", 0.5]).name == "static_custom"
