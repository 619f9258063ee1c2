"""Port AQM policies as controllers in the gym: installed on the controlled ports, identical traces."""

import gymnasium as gym
import numpy as np
import pytest

import ecngym.envs  # noqa: F401  (registers the ids)
from ecngym.baselines.registry import build_controller
from ecngym.baselines.static_aqm import StaticAqmController
from ecngym.envs.rollout import run_episode
from ecngym.error import ConfigError


@pytest.mark.parametrize("name", ["ecn_sharp", "codel", "r_aqm"])
def test_shipped_controller_configs_install_their_policy_on_the_controlled_ports(name):
    from omegaconf import OmegaConf

    from ecngym.configs import __path__ as configs_path

    cfg = OmegaConf.load(f"{configs_path[0]}/controller/{name}.yaml")
    controller = build_controller(cfg)
    env = gym.make("ecngym/DctcpLargeIncast-v0", episode_steps=4)
    try:
        summary, _, _ = run_episode(env, controller, seed=3)
        fabric = env.unwrapped.scenario.fabric
        ports = env.unwrapped.scenario.ports
        assert {d["policy"] for d in fabric.get_aqm(ports)} == {name}
        assert summary["trace_hash"]
    finally:
        env.close()


def test_every_policy_sees_the_identical_trace():
    hashes = set()
    for controller in (StaticAqmController("ecn_sharp"), StaticAqmController("red", {"kmin_bytes": "65KB",
                                                                                        "kmax_bytes": "65KB"})):
        env = gym.make("ecngym/DctcpRttVariation-v0", episode_steps=2)
        try:
            summary, _, _ = run_episode(env, controller, seed=5)
            hashes.add(summary["trace_hash"])
        finally:
            env.close()
    assert len(hashes) == 1


def test_rtt_variation_scenario_spreads_base_rtts_by_its_delay_classes():
    env = gym.make("ecngym/DctcpRttVariation-v0", episode_steps=2)
    try:
        env.reset(seed=1)
        flows = env.unwrapped.scenario.fabric.flows
        assert set(flows["extra_delay_ns"]) <= {1_000, 20_000, 50_000, 80_000, 160_000}
        assert flows["extra_delay_ns"].nunique() > 1
        rec = env.unwrapped.scenario.fabric.flow_records()
        extra = flows["extra_delay_ns"].to_numpy()
        # the base RTT includes the class: same-path flows differ by exactly their classes' difference
        assert np.all(rec["base_rtt_ns"].to_numpy() >= extra)
    finally:
        env.close()


def test_bad_policy_or_parameter_of_a_controller_names_the_field():
    with pytest.raises(ConfigError) as err:
        StaticAqmController("ecn_sharp", {"ins_target_ns": "-5us"})
    assert err.value.field.startswith("controller.params.ins_target_ns")
    with pytest.raises(ConfigError) as err:
        StaticAqmController("fq_codel")
    assert err.value.field == "controller.policy"
    for policy in (["red"], {"policy": "red"}, None):  # a list / dict was a TypeError (unhashable)
        with pytest.raises(ConfigError, match="expected a policy name") as err:
            StaticAqmController(policy)
        assert err.value.field == "controller.policy"
    for params in (0, "", ["ins_target_ns", "80us"]):  # 0 and '' silently meant no parameters
        with pytest.raises(ConfigError, match="expected a mapping") as err:
            StaticAqmController("ecn_sharp", params)
        assert err.value.field == "controller.params"
    with pytest.raises(ConfigError) as err:
        gym.make("ecngym/DctcpRttVariation-v0", delay_classes=[])
    assert "delay_classes" in str(err.value)


def test_run_benchmarks_the_port_policies_by_name_on_one_trace(tmp_path, capsys):
    from ecngym import cli
    from ecngym.results import ResultStore

    names = ["static_dctcp", "ecn_sharp", "codel", "r_aqm", "pred_fcs"]
    store = tmp_path / "store"
    assert cli.main(["run", "suite=null", f"controllers=[{','.join(names)}]", "env=dctcp_rtt_variation", "seeds=[1]",
                     "env.kwargs.episode_steps=3", f"results.dir={store}", f"leaderboard.html={tmp_path / 'b.html'}",
                     f"hydra.run.dir={tmp_path / 'run'}"]) == 0
    out = capsys.readouterr().out
    rows = ResultStore(store).episodes()
    assert sorted(rows["controller"]) == sorted(names)
    assert rows["trace_hash"].nunique() == 1  # every policy on the identical trace
    assert all(name in out for name in names)  # each has a leaderboard row


def test_a_duration_in_base_rtts_resolves_against_the_env():
    env = gym.make("ecngym/DctcpLargeIncast-v0", episode_steps=2)
    try:
        controller = StaticAqmController("pred", {"fcs_period_ns": "1.25rtt", "lambda_qla": 0.1})
        run_episode(env, controller, seed=1)
        sc = env.unwrapped.scenario
        assert sc.fabric.get_aqm(int(sc.ports[0]))["fcs_period_ns"] == round(1.25 * sc.base_rtt_ns)
    finally:
        env.close()
    with pytest.raises(ConfigError, match=r"controller.params.lambda_qla: got '2rtt'; only durations"):
        StaticAqmController("pred", {"lambda_qla": "2rtt"})
    with pytest.raises(ConfigError, match=r"controller.params.fcs_period_ns: got '-1rtt'"):
        StaticAqmController("pred", {"fcs_period_ns": "-1rtt"})
    env = gym.make("ecngym/DctcpLargeIncast-v0", episode_steps=2)
    try:
        env.reset(seed=1)
        with pytest.raises(ConfigError, match=r"controller\.params\.target_ns: got '0.000001rtt' = .* ns"):
            StaticAqmController("codel", {"target_ns": "0.000001rtt"}).reset(env)  # was clamped to 1 ns
    finally:
        env.close()


@pytest.mark.parametrize("policy", ["codel", "ecn_sharp"])
def test_a_policy_controller_on_a_continuous_action_keeps_the_red_setting_exactly(policy):
    # hold_action's float32 encoding decoded to a setting one rounding away, which the env then
    # tried to set on ports running the policy: "ports: port 1 runs 'codel', not RED"
    env = gym.make("ecngym/RoceIncast-v0", episode_steps=3, action={"type": "continuous"})
    before = None

    def on_step(step, reward, info):
        nonlocal before
        sc = env.unwrapped.scenario
        before = before or {k: np.array(v) for k, v in sc.red.items()}
        assert all(np.array_equal(sc.red[k], before[k]) for k in before)
        assert {sc.fabric.get_aqm(int(p))["policy"] for p in sc.ports} == {policy}

    summary, _, _ = run_episode(env, StaticAqmController(policy), seed=0, on_step=on_step)
    assert summary["flows_total"] > 0 and before is not None
    env.close()
