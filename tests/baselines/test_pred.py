"""PRED's QLA (§IV-B; docs: algorithms/pred.md §3.3) on the fabric's FCS policy: parameters, the A/B rule, real runs."""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ecngym.baselines.pred import PredController
from ecngym.envs import EcnTuningEnv
from ecngym.envs.rollout import run_episode
from ecngym.envs.view import EnvView
from ecngym.error import ConfigError


@pytest.mark.parametrize(("field", "kwargs"), [
    ("controller.mode", {"mode": "fcs"}), ("controller.beta", {"beta": -0.1}),
    ("controller.delta_lambda", {"delta_lambda": 0.05}),  # not below lambda_min
    ("controller.lambda_init", {"lambda_init": 3.0}), ("controller.phi", {"phi": "cubic"}),
    ("controller.lambda_unit", {"lambda_unit": "byte"}), ("controller.lambda_unit", {"lambda_unit": "MB"}),
    ("controller.lambda_max", {"lambda_max": 2000.0}),  # 1.9e6 per MB: past the FCS policy's range
    ("controller.mink", {"mink": "600KB"}), ("controller.q_left", {"q_left": "1MB"}),
    ("controller.mink", {"mink": "500KB", "maxk": "10KB"}),  # was blamed on the default q_left (15 KB)
    ("controller.t_qla", {"t_qla": "fivertt"}), ("controller.t_fcs", {"t_fcs": "-1us"}),
    ("controller.scaling", {"scaling": "N3"}), ("controller.fcs_params.lambda_qla", {"fcs_params": {"lambda_qla": 1}}),
    ("controller.adjust", {"adjust": "no"}), ("controller.utility", {"utility": "t3"}),
    ("controller.rtt", {"rtt": "-80us"}),
    ("controller.t_qla", {"t_qla": "1e30rtt"}),  # was accepted (t_fcs=1e30rtt was refused)
    ("controller.t2_max_queue", {"t2_max_queue": 0}), ("controller.packet_bytes", {"packet_bytes": "0B"}),
    # 1 and 0 passed the flags' `value in (True, False)` test (1 == True)
    ("controller.mink_mode", {"mink_mode": 1}), ("controller.adjust", {"adjust": 1}),
    ("controller.adjust", {"adjust": 0}),
    # past the FCS policy's kmax range: the error named the policy's field (aqm.pred.kmax_bytes)
    ("controller.maxk", {"maxk": 10**15}),
])
def test_bad_parameters_name_the_field(field, kwargs):
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        PredController(**kwargs)


def _decide(pred, u, lam, mink, in_mink):
    pred.lam, pred.mink, pred.in_mink_mode = np.array(lam), np.array(mink, float), np.array(in_mink)
    pred.utility = np.array(u, dtype=float).T  # (ports, 4) -> (4, ports)
    return pred._decide()


def test_lambda_moves_only_when_both_pairs_agree_and_falls_into_mink_mode():
    pred = PredController()
    # port 0: +dl better in both pairs; 1: -dl better in both; 2: pairs disagree; 3: at lambda_min, -dl better
    verdict = _decide(pred, [[2, 1, 1, 2], [1, 2, 2, 1], [2, 1, 2, 1], [1, 2, 2, 1]],
                      [0.1, 0.1, 0.1, 0.05], [10e3] * 4, [False] * 4)
    assert list(verdict) == ["up", "down", "keep", "down"]
    assert np.allclose(pred.lam, [0.125, 0.075, 0.1, 0.05])
    assert list(pred.in_mink_mode) == [False, False, False, True]  # below lambda_min: minK mode, lambda pinned


def test_mink_mode_raises_mink_on_lower_is_better_and_leaves_at_the_initial_mink():
    pred = PredController()
    _decide(pred, [[1, 2, 2, 1], [2, 1, 1, 2], [2, 1, 1, 2]], [0.05] * 3, [10e3, 20e3, 10e3], [True] * 3)
    assert list(pred.mink) == [15e3, 15e3, 10e3]          # down: +dminK; up: -dminK; up at the start: leave
    assert list(pred.in_mink_mode) == [True, True, False]
    assert np.allclose(pred.lam, [0.05, 0.05, 0.075])     # leaving resumes lambda += dl


def test_adjust_false_records_verdicts_but_never_moves():
    pred = PredController(adjust=False)
    verdict = _decide(pred, [[2, 1, 1, 2], [1, 2, 2, 1]], [0.1, 0.05], [10e3] * 2, [False] * 2)
    assert list(verdict) == ["up", "down"]
    assert np.allclose(pred.lam, [0.1, 0.05]) and not pred.in_mink_mode.any()


def _incast(n=4, steps=12, **extra):
    """An n-to-1 DCTCP long-flow incast at 10 Gbps (20 us links); one env step = T_QLA = 5 RTT."""
    return EcnTuningEnv(topology={"kind": "incast_star", "hosts": n + 1, "link_rate": "10Gbps", "link_delay": "20us"},
                        fabric={"preset": "dctcp"}, episode_steps=steps,
                        workload={"workload": "none", "incast": {"degree": 0},
                                  "long_lived": {"flows": n, "receiver": n}}, **extra)


def test_pred_runs_the_four_slot_trials_on_the_fabrics_fcs_policy():
    env = _incast()
    pred = PredController(lambda_unit="mb")
    seen = []
    obs, info = env.reset(seed=1)
    pred.reset(env)
    port = int(env.ports[0])
    assert env.scenario.fabric.get_aqm(port)["policy"] == "pred"
    for _ in range(12):
        action = pred.act(obs, info)
        seen.append(env.scenario.fabric.get_aqm(port)["lambda_qla"])
        obs, _, _, _, info = env.step(action)
        pred.observe(obs, info)
    env.close()
    assert np.allclose(seen[:4], [0.125, 0.075, 0.075, 0.125])  # lambda_QLA 0.1 +- 0.025 in the order +, -, -, +
    log = pd.DataFrame(pred.log)
    decisions = log[log["slot"] == 4]
    assert len(decisions) and set(decisions["verdict"]) <= {"up", "down", "keep"}
    busy = log[log["goodput_fraction"] > 0.5]
    assert len(busy) and (busy["flow_count"] >= 1).all()  # FCS's flow count N is reported


def test_only_fcs_never_moves_lambda():
    env = _incast()
    fcs = PredController(mode="only_fcs")
    run_episode(env, fcs, seed=1)
    assert fcs.interval_steps > 12 and fcs.log == []


@pytest.mark.parametrize("unit", ["packet", "mb"])
def test_lambda_unit_scales_the_slope_the_fabric_gets(unit):
    env = _incast(steps=4)
    pred = PredController(lambda_unit=unit, packet_bytes="1048B")
    obs, info = env.reset(seed=1)
    pred.reset(env)
    pred.act(obs, info)  # slot 1: lambda + dlambda
    got = env.scenario.fabric.get_aqm(int(env.ports[0]))["lambda_qla"]
    env.close()
    per_mb = 1e6 / 1048 if unit == "packet" else 1.0
    assert got == pytest.approx(0.125 * per_mb)


def test_only_qla_with_lambda_per_packet_reaches_probability_one_before_maxk():
    qla = PredController(mode="only_qla", lambda_unit="packet", packet_bytes="1048B")
    env = _incast(steps=4, **qla.env_overrides(None))
    obs, info = env.reset(seed=1)
    qla.reset(env)
    env.step(qla.act(obs, info))
    port = int(env.ports[0])
    red = env.scenario.fabric.get_red()
    env.close()
    # p = 0.125 per packet above minK reaches 1 after 8 packets (8384 B): Kmax there, Pmax 1
    assert abs(int(red["kmax_bytes"][port]) - (10_000 + 8 * 1048)) <= 1
    assert red["pmax"][port] == pytest.approx(1.0)


def test_only_qla_tunes_plain_red_through_the_action():
    qla = PredController(mode="only_qla", lambda_unit="mb")
    env = _incast(steps=4, **qla.env_overrides(None))
    obs, info = env.reset(seed=1)
    qla.reset(env)
    env.step(qla.act(obs, info))
    port = int(env.ports[0])
    red = env.scenario.fabric.get_red()
    policy = env.scenario.fabric.get_aqm(port)["policy"]
    env.close()
    assert policy == "red"
    assert abs(red["pmax"][port] - 0.125 * (500_000 - 10_000) / 1e6) < 1e-5  # (lambda + dl) x (maxK - minK)
    assert abs(int(red["kmin_bytes"][port]) - 10_000) <= 1 and abs(int(red["kmax_bytes"][port]) - 500_000) <= 1


def test_t_qla_must_be_whole_env_steps():
    env = _incast(steps=2)
    env.reset(seed=0)
    with pytest.raises(ConfigError, match="controller.t_qla"):
        PredController(t_qla="7.5rtt").reset(env)
    only_fcs = PredController(mode="only_fcs", t_qla="7.5rtt")  # no QLA slots: nothing to fit (was refused)
    only_fcs.reset(env)
    assert only_fcs.interval_steps == 3  # never within the 2-step episode
    with pytest.raises(ConfigError, match=r"controller\.t_fcs: got '0.00001rtt' = .* ns with a base RTT"):
        PredController(t_fcs="0.00001rtt").reset(env)  # was clamped to 1 ns
    env.close()


def test_t2_reward_counts_packets_sent_against_packets_queued():
    from ecngym.baselines.registry import build_controller

    pred = build_controller({"_target_": "ecngym.baselines.pred.PredController", "utility": "t2"})
    env = _incast()
    run_episode(env, pred, seed=1)
    env.close()
    log = pd.DataFrame(pred.log)
    busy = log[log["goodput_fraction"] > 0.5]
    # reward = 6000 - queue (packets of 1048 B) + data packets sent in the slot
    expected = 6000 - busy["queue_bytes"] / 1048 + busy["packets_sent"]
    assert len(busy) and np.allclose(busy["utility"], expected) and (busy["packets_sent"] > 100).all()


def test_rtt_sets_what_the_periods_count():
    env = _incast(steps=2)
    env.reset(seed=0)
    pred = PredController(rtt="80us", t_qla="5rtt", t_fcs="1.25rtt")
    with pytest.raises(ConfigError, match="controller.t_qla"):  # 400 us is not a whole number of 5-base-RTT steps
        pred.reset(env)
    env.close()
    env = _incast(steps=2, interval="400us")
    env.reset(seed=0)
    pred.reset(env)
    env.close()
    assert pred.rtt_ns == 80_000 and pred.t_fcs_ns == 100_000 and pred.interval_steps == 1


def test_a_t_qla_that_does_not_fit_the_step_names_one_that_does():
    env = _incast(steps=2)
    env.reset(seed=0)
    with pytest.raises(ConfigError, match="controller.t_qla") as err:
        PredController(rtt="80us", t_qla="5rtt").reset(env)
    fit = re.search(r"controller\.t_qla=(\d+)ns", str(err.value))
    assert fit and "env.kwargs.interval=400000ns" in str(err.value)
    pred = PredController(rtt="80us", t_qla=f"{fit.group(1)}ns")  # the suggestion is accepted as given
    pred.reset(env)
    env.close()
    assert pred.interval_steps * EnvView(env).interval_ns == int(fit.group(1))


def test_only_qla_on_an_env_without_a_per_port_continuous_action_is_refused_at_reset():
    # without its env_overrides the per-port RED curves went to EnvView.encode: a NumPy broadcast ValueError
    env = EcnTuningEnv(episode_steps=3)
    try:
        with pytest.raises(ConfigError, match=r"^env\.action: PRED only_qla sets arbitrary per-port thresholds"):
            run_episode(env, PredController(mode="only_qla", t_qla="20.8us"), seed=0)
    finally:
        env.close()


def test_every_v1_scenario_runs_pred_with_lambda_per_mb_as_published():
    """The v1 results were measured with λ per MB: each scenario pins it (the default is now per packet)."""
    from omegaconf import OmegaConf

    from ecngym.baselines.registry import build_controller
    from ecngym.benchmark.runner import BenchmarkOptions, plan_jobs
    from ecngym.benchmark.suite import load_suite
    from ecngym.configs import CONFIG_DIR

    names = ("pred", "pred_t2", "pred_only_qla", "pred_only_fcs")
    controllers = {n: OmegaConf.load(CONFIG_DIR / "controller" / f"{n}.yaml") for n in names}
    assert all(PredController(**{k: v for k, v in controllers[n].items() if k != "_target_"}).lambda_unit == "packet"
               for n in names)
    jobs = plan_jobs(load_suite("full-v1"), controllers, Path("store"), Path("out"), True, BenchmarkOptions.parse({}),
                     references=lambda name: {})
    scenarios = {j.scenario for j in jobs}
    assert scenarios == set(load_suite("full-v1").scenarios) and len(jobs) == 4 * len(scenarios)
    for job in jobs:
        pred = build_controller(job.controller_cfg)
        assert (pred.lambda_unit, pred.per_mb, pred.lambda_init) == ("mb", 1.0, 0.1), (job.scenario, job.controller)
