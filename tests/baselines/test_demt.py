"""DCTCP-DEMT's dynamic threshold (ByteTuning Tab. 2; docs: algorithms/bytetuning.md §1.5): rule, bad input, a run."""

import numpy as np
import pandas as pd
import pytest

from ecngym.baselines.demt import DemtController, demt_k_packets
from ecngym.baselines.registry import build_controller
from ecngym.envs import EcnTuningEnv
from ecngym.envs.rollout import run_episode
from ecngym.error import ConfigError


def test_rule_follows_the_three_regions():
    # C.D = 40 packets: N <= 20 -> 40; 20 < N < 40 -> 80 - 2N; N >= 40 -> 0
    assert list(demt_k_packets([0, 20, 21, 30, 39, 40, 100], [40] * 7)) == [40, 40, 38, 20, 2, 0, 0]


@pytest.mark.parametrize(("field", "kwargs"), [("controller.delay", {"delay": "-5us"}),
                                               ("controller.delay", {"delay": "soon"}),
                                               ("controller.packet_bytes", {"packet_bytes": "0B"}),
                                               ("controller.interval_steps", {"interval_steps": 0})])
def test_bad_parameters_name_the_field(field, kwargs):
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        DemtController(**kwargs)


def test_threshold_falls_as_flows_grow_on_a_real_incast():
    demt = build_controller({"_target_": "ecngym.baselines.demt.DemtController", "delay": "200us"})
    kwargs = {"topology": {"kind": "incast_star", "hosts": 13, "link_rate": "10Gbps", "link_delay": "10us"},
              "fabric": {"preset": "dctcp"}, "episode_steps": 20,
              "workload": {"workload": "none", "incast": {"degree": 0}, "long_lived": {"flows": 12, "receiver": 12}}}
    env = EcnTuningEnv(**kwargs)
    env = EcnTuningEnv(**kwargs, **demt.env_overrides(env))
    run_episode(env, demt, seed=1)
    env.close()
    log = pd.DataFrame(demt.log)
    busy = log[log["flows"] >= 12]
    # C.D = 10 Gbps x 200 us / 1052 B = 237.6 packets > 2 N: K stays C.D; bytes = K x packet
    assert len(busy) and np.allclose(busy["k_bytes"], np.round(busy["bdp_packets"] * 1052))
    short = DemtController(delay="10us")  # C.D = 11.9 packets <= N = 12: K = 0
    env = EcnTuningEnv(**kwargs, **short.env_overrides(env))
    run_episode(env, short, seed=1)
    env.close()
    log = pd.DataFrame(short.log)
    assert (log.loc[log["flows"] >= 12, "k_bytes"] == 0).all() and (log["flows"] >= 12).any()


@pytest.mark.parametrize("action", [{}, {"type": "continuous"}], ids=["discrete", "continuous-all"])
def test_an_env_without_a_per_port_continuous_action_is_refused_at_reset(action):
    # without its env_overrides the per-port K went to EnvView.encode: a NumPy broadcast ValueError at act
    env = EcnTuningEnv(episode_steps=3, action=action)
    try:
        with pytest.raises(ConfigError, match=r"^env\.action: DCTCP-DEMT sets arbitrary per-port thresholds"):
            run_episode(env, DemtController(), seed=0)
    finally:
        env.close()
