"""Static controllers compute the literature's settings and encode them as actions."""

import pandas as pd
import pytest

from ecngym.baselines import STATIC_SETTINGS, StaticEcnController, StaticPerLayerEcnController, dctcp_k_bytes
from ecngym.baselines.static import templates_overrides
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


#: A tiny two-layer fabric (the leaves' and the spine's egress ports are two action units under scope=layer).
TWO_LAYERS = {"episode_steps": 3, "topology": {"kind": "leaf_spine", "leaves": 2, "spines": 1, "hosts_per_leaf": 2},
              "workload": {"load": 0.5, "incast": {"degree": 0}}}


def test_a_per_layer_setting_reaches_each_layers_ports_also_off_the_templates():
    from ecngym.benchmark.oracle import make_env
    from ecngym.envs.for_controller import make_for_controller

    c = StaticPerLayerEcnController({"leaf": ["20KB", "40KB", 0.05], "spine": [3000, 7000, 0.3]})
    env = make_for_controller(lambda extra: make_env({**TWO_LAYERS, **extra}), c)
    try:
        assert env.unwrapped.config.action.scope == "layer"
        env.reset(seed=0)
        c.reset(env)
        env.step(c.act(None, {}))
        red, layers = env.unwrapped.scenario.fabric.get_red(), env.unwrapped.scenario.port_layers
        ports = env.unwrapped.scenario.ports
        for layer, want in (("leaf", (20_000, 40_000, 0.05)), ("spine", (3000, 7000, 0.3))):
            at = ports[layers == layer]
            assert (red["kmin_bytes"][at] == want[0]).all() and (red["kmax_bytes"][at] == want[1]).all()
            assert (red["pmax"][at] == want[2]).all()
    finally:
        env.close()


def test_a_uniform_per_layer_setting_is_the_static_setting():
    from ecngym.benchmark.oracle import run_controller, run_static

    s = [17_600, 35_200, 0.2]
    per_layer = run_controller({**TWO_LAYERS, "episode_steps": 20},
                               StaticPerLayerEcnController({"leaf": s, "spine": s}), 7)[1]
    pd.testing.assert_frame_equal(per_layer, run_static({**TWO_LAYERS, "episode_steps": 20}, s, 7)[1])  # every flow


def test_a_per_layer_setting_is_refused_naming_the_field():
    from ecngym.benchmark.oracle import make_env

    with pytest.raises(ConfigError, match=r"^controller\.settings: expected a mapping"):
        StaticPerLayerEcnController([["10KB", "20KB", 0.1]])
    with pytest.raises(ConfigError, match=r"^controller\.settings\.leaf: kmax 1000 B < kmin 2000 B"):
        StaticPerLayerEcnController({"leaf": [2000, 1000, 0.1]})
    c = StaticPerLayerEcnController({"leaf": [2000, 4000, 0.1]})
    env = make_env({**TWO_LAYERS, **c.env_overrides(make_env(TWO_LAYERS))})
    try:
        with pytest.raises(ConfigError, match=r"^controller\.settings: got layers \['leaf'\]; .* \['leaf', 'spine'\]"):
            c.reset(env)
    finally:
        env.close()


def test_templates_overrides_adds_only_what_is_missing_and_keeps_the_static_action():
    env = EcnTuningEnv(episode_steps=3)
    try:
        templates = [tuple(t) for t in env.unwrapped.scenario.actions.templates]
        assert templates_overrides(env, [templates[0]]) == {}
        extra = templates_overrides(env, [templates[1], (1234, 5678, 0.5)], scope="layer")["action"]
        assert extra["templates"] == [list(t) for t in templates] + [[1234, 5678, 0.5]] and extra["scope"] == "layer"
        bigger = EcnTuningEnv(episode_steps=3, action=extra)
        assert bigger.unwrapped.scenario.actions.static_index == env.unwrapped.scenario.actions.static_index
        bigger.close()
    finally:
        env.close()
