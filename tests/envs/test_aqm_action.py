"""The env's action over a port AQM policy's own parameters (env.aqm, action.params / templates / ranges)."""

import re

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import ecngym.envs  # noqa: F401  (registers the ids)
from ecngym.envs import EcnTuningEnv
from ecngym.envs.view import EnvView
from ecngym.error import ConfigError, InvalidAction
from ecngym.sim_backend import Fabric, FabricConfig, Topology, _fabric, aqm

#: a small DCTCP leaf-spine (2 layers: per-layer units differ) with some traffic
SMALL = {
    "topology": {"kind": "leaf_spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 2, "host_rate": "10Gbps",
                 "fabric_rate": "10Gbps", "host_delay": "2us", "fabric_delay": "2us"},
    "fabric": {"preset": "dctcp"},
    "workload": {"workload": "websearch", "load": 0.5,
                 "incast": {"degree": 3, "size": "64KB", "interval": "100us", "arrival": "periodic"}},
    "interval": "50us",
    "episode_steps": 4,
}


def make(**overrides):
    return EcnTuningEnv(config={**SMALL, **overrides})


def test_discrete_templates_of_a_policy_reach_the_fabric_per_unit():
    env = make(aqm={"policy": "ecn_sharp", "pst_interval_ns": "150us"},
               action={"scope": "layer", "params": ["ins_target_ns", "pst_target_ns"],
                       "templates": [["40us", "5us"], {"ins_target_ns": "120us", "pst_target_ns": "20us"}]})
    try:
        mapper = env.unwrapped.scenario.actions
        # the configured setting (defaults 80 us / 10 us here) is always a template, the static action
        assert mapper.templates == [(40_000, 5_000), (120_000, 20_000), (80_000, 10_000)]
        assert env.action_space == gym.spaces.MultiDiscrete([3, 3])
        env.reset(seed=1)
        sc = env.unwrapped.scenario
        assert all(d["policy"] == "ecn_sharp" and d["ins_target_ns"] == 80_000 for d in sc.fabric.get_aqm(sc.ports))
        env.step(np.array([1, 0]))  # units in sorted layer order: leaf, spine
        got = sc.fabric.get_aqm(sc.ports)
        for layer, d in zip(sc.port_layers, got, strict=True):
            want = (120_000, 20_000) if layer == "leaf" else (40_000, 5_000)
            assert (d["ins_target_ns"], d["pst_target_ns"]) == want
            assert d["pst_interval_ns"] == 150_000  # the env.aqm parameter the action does not tune stays
        assert EnvView(env).hold_action().tolist() == [1, 0]
    finally:
        env.close()


def test_continuous_box_maps_linearly_onto_the_given_ranges_and_encode_inverts_it():
    env = make(aqm={"policy": "r_aqm", "kmin_bytes": "20KB", "kmax_bytes": "40KB"},
               action={"type": "continuous", "ranges": {"kmin_bytes": ["10KB", "30KB"],
                                                            "kmax_bytes": ["40KB", "100KB"]}})
    try:
        assert env.action_space == gym.spaces.Box(-1.0, 1.0, (1, 2), np.float32)
        env.reset(seed=2)
        sc = env.unwrapped.scenario
        env.step(np.array([[0.0, 0.5]], dtype=np.float32))
        for d in sc.fabric.get_aqm(sc.ports):
            assert (d["kmin_bytes"], d["kmax_bytes"]) == (20_000, 85_000)
        action = sc.actions.encode(kmin_bytes=25_000, kmax_bytes=55_000)
        env.step(action)
        assert {(d["kmin_bytes"], d["kmax_bytes"]) for d in sc.fabric.get_aqm(sc.ports)} == {(25_000, 55_000)}
        with pytest.raises(InvalidAction, match=r"kmin_bytes 5000 \(unit 'all'\) outside the continuous action "
                                                r"range \[10000, 30000\]"):
            sc.actions.encode(kmin_bytes=5_000, kmax_bytes=55_000)
    finally:
        env.close()


def test_a_continuous_action_the_policy_rejects_raises_and_changes_nothing():
    env = make(aqm="r_aqm", action={"type": "continuous", "ranges": {"kmin_bytes": ["10KB", "90KB"],
                                                                         "kmax_bytes": ["40KB", "100KB"]}})
    try:
        env.reset(seed=3)
        sc = env.unwrapped.scenario
        before = sc.fabric.get_aqm(sc.ports)
        for _ in range(2):  # and again: a refused action is never taken as the one applied last
            with pytest.raises(InvalidAction, match=r"kmax_bytes \(40000\) must be >= kmin_bytes \(90000\)"):
                env.step(np.array([[1.0, -1.0]], dtype=np.float32))
            assert sc.fabric.get_aqm(sc.ports) == before
        with pytest.raises(InvalidAction, match=r"expected a float array of shape \(1, 2\) in \[-1, 1\]"):
            env.step(np.array([[1.5, 0.0]], dtype=np.float32))
        with pytest.raises(InvalidAction, match=re.escape("expected a float array of shape (1, 2)")):
            env.step(np.zeros((1, 3), dtype=np.float32))
    finally:
        env.close()


@pytest.mark.parametrize(("overrides", "field", "message"), [
    ({"aqm": "pred", "action": {"type": "continuous", "ranges": {"lambda_qla": [0.0, 2e6]}}},
     "env.action.ranges.lambda_qla", "got 2000000.0, allowed range is [0.0, 1000000.0]"),
    ({"aqm": "ecn_sharp", "action": {"templates": [["80us", "-1us"]]}},
     "env.action.templates[0].pst_target_ns", "-1"),
    ({"aqm": "r_aqm", "action": {"templates": [["50KB", "40KB"]]}},
     "env.action.templates[0]", "kmax_bytes (40000) must be >= kmin_bytes (50000)"),
    ({"aqm": "codel", "action": {"params": ["target_ns", "gain"]}},
     "env.action.params", "codel has no parameter 'gain'; numeric ones: target_ns, interval_ns"),
    ({"aqm": "ecn_sharp", "action": {"type": "continuous", "params": ["control_law"]}},
     "env.action.params", "ecn_sharp.control_law is a enum, which a continuous action cannot set"),
    ({"aqm": "ecn_sharp", "action": {"templates": [["80us"]]}},
     "env.action.templates[0]", "expected 2 value(s) for ['ins_target_ns', 'pst_target_ns']"),
    ({"aqm": {"policy": "r_aqm", "kmin_bytes": "50KB", "kmax_bytes": "40KB"}},
     "env.aqm", "kmax_bytes (40000) must be >= kmin_bytes (50000)"),
    ({"aqm": "blue"}, "env.aqm.policy", "unknown AQM policy 'blue'"),
    # without env.aqm the ports run RED, whose parameters the action tunes
    ({"action": {"params": ["lambda_qla"]}}, "env.action.params", "red has no parameter 'lambda_qla'"),
    ({"aqm": "ecn_sharp", "observation": {"features": ["queue", "kmin"]}},
     "env.observation.features", "'kmin' needs the red policy on the controlled ports, which run 'ecn_sharp'"),
    ({"aqm": "ecn_sharp", "observation": {"features": ["queue", "pred.flow_count"]}},
     "env.observation.features", "'pred.flow_count' needs the pred policy"),
])
def test_bad_policy_settings_are_config_errors_naming_the_field(overrides, field, message):
    with pytest.raises(ConfigError) as exc:
        make(**overrides)
    assert exc.value.field == field
    assert message in exc.value.message


@pytest.mark.parametrize("overrides", [
    {"aqm": "ecn_sharp", "observation": {"features": ["queue", "ecn_sharp.sojourn_mean_ns",
                                                      "ecn_sharp.marked_instantaneous",
                                                      "ecn_sharp.marked_persistent"]}},
    {"aqm": "r_aqm", "action": {"type": "continuous", "ranges": {"kmin_bytes": ["5KB", "20KB"],
                                                                     "kmax_bytes": ["30KB", "60KB"]}},
     "observation": {"features": ["queue", "r_aqm.viq_packets", "r_aqm.state", "r_aqm.held", "r_aqm.data_marked",
                                  "r_aqm.rwnd_clamped"]}},
    {"aqm": "pred", "observation": {"features": ["queue", "pred.flow_count", "pred.lambda_eff", "pred.marked"]}},
])
def test_gymnasium_env_checker_passes_with_a_policy_action_space(overrides):
    env = make(**overrides)
    try:
        check_env(env, skip_render_check=True)
    finally:
        env.close()


def test_policy_telemetry_features_move_with_the_traffic():
    env = make(aqm="ecn_sharp", episode_steps=6,
               observation={"history": 1, "features": ["queue", "ecn_sharp.sojourn_mean_ns"]})
    try:
        obs, _ = env.reset(seed=4)
        assert not obs.any()  # t = 0: nothing queued, no sojourn yet
        seen = []
        for _ in range(6):
            obs, *_ = env.step(env.unwrapped.static_action())
            table = obs.reshape(len(env.unwrapped.ports), 2)
            assert env.observation_space.contains(obs)
            seen.append(table[:, 1].max())
        # a port that queued shows a sojourn time: the feature reads the policy's telemetry
        assert max(seen) > 0
    finally:
        env.close()


def test_every_policy_telemetry_key_is_an_observation_feature(fabric):
    # r_aqm.data_marked and r_aqm.rwnd_clamped were telemetry that no observation could hold
    from ecngym.envs.config import AQM_FEATURES
    from ecngym.sim_backend import aqm

    port = fabric.ports.switch_ports()[:1]
    reported = set()
    for policy in set(aqm.POLICIES) - {"red"}:
        fabric.set_aqm(port, policy)
        reported |= {k for k in fabric.read_telemetry() if "." in k}
    assert {k.split(".")[0] for k in reported} == set(aqm.POLICIES) - {"red"}
    assert reported <= set(AQM_FEATURES), sorted(reported - set(AQM_FEATURES))


def test_default_templates_are_the_configured_value_halved_and_doubled_where_the_policy_allows():
    env = make(aqm={"policy": "r_aqm", "kmin_bytes": "20KB", "kmax_bytes": "40KB"})
    try:
        templates = env.unwrapped.scenario.actions.templates
        assert templates[0] == (20_000, 40_000)
        assert set(templates) == {(a, b) for a in (10_000, 20_000, 40_000) for b in (20_000, 40_000, 80_000) if a <= b}
    finally:
        env.close()


@pytest.fixture
def fabric():
    """A bare 3-host DCTCP star (three switch ports, all RED), closed after the test."""
    topo = Topology.from_config({"kind": "incast_star", "hosts": 3, "link_rate": "10Gbps", "link_delay": "1us"})
    flows = {"src": [0], "dst": [1], "size_bytes": [1000], "start_ns": [0]}
    fabric = Fabric(topo, flows, FabricConfig.from_dict({"preset": "dctcp"}), seed=1)
    yield fabric
    fabric.close()


def test_a_partial_update_the_merged_setting_breaks_changes_nothing(fabric):
    port = int(fabric.ports.switch_ports(None)[0])
    fabric.set_aqm(port, "r_aqm", kmin_bytes="10KB", kmax_bytes="30KB")
    with pytest.raises(ConfigError, match=r"kmax_bytes \(30000\) must be >= kmin_bytes \(35000\)"):
        fabric.set_aqm(port, "r_aqm", kmin_bytes="35KB")  # the defaults alone (K_max 42080) allow it
    assert (fabric.get_aqm(port)["kmin_bytes"], fabric.get_aqm(port)["kmax_bytes"]) == (10_000, 30_000)


def test_a_partial_update_is_checked_against_the_ports_own_setting_not_the_defaults(fabric):
    port, other = (int(p) for p in fabric.ports.switch_ports(None)[:2])
    fabric.set_aqm(port, "r_aqm", kmin_bytes="10KB", kmax_bytes="200KB")
    # was refused: checked against a default instance (K_max 42080 B) before the port's own
    fabric.set_aqm(port, "r_aqm", kmin_bytes="100KB")
    assert (fabric.get_aqm(port)["kmin_bytes"], fabric.get_aqm(port)["kmax_bytes"]) == (100_000, 200_000)
    # a port that gets a fresh instance is still checked against the defaults: nothing changes
    with pytest.raises(ConfigError, match=r"kmax_bytes \(42080\) must be >= kmin_bytes \(150000\)"):
        fabric.set_aqm([port, other], "r_aqm", kmin_bytes="150KB")
    assert fabric.get_aqm(port)["kmin_bytes"] == 100_000 and fabric.get_aqm(other)["policy"] == "red"


def test_an_update_one_running_port_refuses_restores_the_running_ports_set_before_it(fabric):
    a, b, c = (int(p) for p in fabric.ports.switch_ports(None)[:3])
    fabric.set_aqm([a, c], "r_aqm", kmin_bytes="10KB", kmax_bytes="200KB", window_ns=30_000)
    fabric.set_aqm(b, "r_aqm", kmin_bytes="10KB", kmax_bytes="30KB")
    before = fabric.get_aqm([a, b, c])
    # a and c take K_min 100 KB, b (K_max 30 KB) refuses it: a, set before b, goes back
    with pytest.raises(ConfigError, match=r"kmax_bytes \(30000\) must be >= kmin_bytes \(100000\)"):
        fabric.set_aqm([a, b, c], "r_aqm", kmin_bytes="100KB", window_ns=40_000)
    assert fabric.get_aqm([a, b, c]) == before
    fabric.set_aqm([a, c], "r_aqm", kmin_bytes="100KB", window_ns=40_000)  # valid for both: taken
    assert [(s["kmin_bytes"], s["window_ns"]) for s in fabric.get_aqm([a, c])] == [(100_000, 40_000)] * 2


def test_action_params_default_to_each_policys_knobs():
    for name, params in aqm.ACTION_PARAMS.items():
        assert set(params) <= set(aqm.policy_spec(name)), name


def test_action_params_are_what_each_policy_declares_in_cpp():
    assert aqm.ACTION_PARAMS == {
        "codel": ("target_ns", "interval_ns"),
        "ecn_sharp": ("ins_target_ns", "pst_target_ns"),
        "pred": ("lambda_qla",),
        "r_aqm": ("kmin_bytes", "kmax_bytes"),
        "red": ("kmin_bytes", "kmax_bytes", "pmax"),
    }
    for name, type_name in aqm.policies().items():
        attributes = _fabric.aqm_action_attributes(type_name)
        assert [aqm.policy_spec(name)[p].attribute for p in aqm.ACTION_PARAMS.get(name, ())] == attributes, name
    with pytest.raises(ValueError, match="ns3::ecngym::NoSuchPolicy"):
        _fabric.aqm_action_attributes("ns3::ecngym::NoSuchPolicy")


def test_the_marking_curve_is_what_each_policy_declares_in_cpp():
    # only RED has a (Kmin, Kmax, Pmax) curve: R-AQM and PRED have Kmin / Kmax but no Pmax
    assert {name: aqm.marking_curve(name) for name in aqm.policies()} == {
        "codel": (), "ecn_sharp": (), "pred": (), "r_aqm": (), "red": ("kmin_bytes", "kmax_bytes", "pmax")}
    assert aqm.curve_policies() == ("red",)
    assert aqm.birth_policy() == "red"
    for name, type_name in aqm.policies().items():
        attributes = _fabric.aqm_marking_curve(type_name)
        assert [aqm.policy_spec(name)[p].attribute for p in aqm.marking_curve(name)] == attributes, name
    with pytest.raises(ValueError, match="ns3::ecngym::NoSuchPolicy"):
        _fabric.aqm_marking_curve("ns3::ecngym::NoSuchPolicy")


def test_a_normaliser_scale_naming_a_policy_parameter_reads_the_configured_setting():
    # r_aqm.held is "saturate:viq_capacity_packets": its scale is the env's R-AQM setting, not a number
    env = make(aqm={"policy": "r_aqm", "viq_capacity_packets": 37},
               observation={"features": ["queue", "r_aqm.held", "r_aqm.viq_packets"]})
    try:
        features = env.unwrapped.scenario.features
        assert features._scale("viq_capacity_packets") == 37.0
        assert features._scale("flow_scale") == float(features.cfg.flow_scale)
        assert features._scale("2.5") == 2.5
    finally:
        env.close()


def test_env_aqm_over_the_same_fabric_policy_starts_from_the_fabric_setting():
    # Fabric.set_aqm keeps a running policy's parameters: the ports run fabric.aqm's 20 us target, and
    # the action's configured setting (its static template) is that, not CoDel's default
    env = make(fabric={"preset": "dctcp", "aqm": {"all": {"policy": "codel", "target_ns": "20us"}}}, aqm="codel")
    try:
        sc = env.unwrapped.scenario
        assert sc.actions.base["target_ns"] == 20_000
        assert sc.actions.templates[0] == (20_000, sc.actions.base["interval_ns"])
        env.reset(seed=1)
        assert all(d["target_ns"] == 20_000 for d in sc.fabric.get_aqm(sc.ports))
        assert (sc.values[:, 0] == 20_000).all()
    finally:
        env.close()


def test_a_policy_without_default_action_params_asks_for_them(monkeypatch):
    # a policy compiled in (found from ns-3's TypeId list) that declares no default action parameters
    monkeypatch.delitem(aqm.ACTION_PARAMS, "codel")
    with pytest.raises(ConfigError, match=r"^env.action.params: codel names no parameters an action tunes by "
                                          r"default; name them \(numeric ones: target_ns, interval_ns\)$"):
        make(aqm="codel")
    env = make(aqm="codel", action={"params": ["target_ns"]})
    try:
        assert env.unwrapped.scenario.actions.params == ["target_ns"]
    finally:
        env.close()


def test_tuned_parameter_features_show_the_current_setting():
    env = make(aqm="r_aqm", observation={"history": 1, "features": ["queue", "aqm.kmin_bytes", "aqm.kmax_bytes"]},
               action={"type": "continuous", "ranges": {"kmin_bytes": ["10KB", "30KB"],
                                                            "kmax_bytes": ["40KB", "100KB"]}})
    try:
        obs, _ = env.reset(seed=5)
        table = obs.reshape(len(env.unwrapped.ports), 3)
        # the configured defaults (K_min 21040 B, K_max 42080 B) over the action's ranges
        np.testing.assert_allclose(table[:, 1], (21_040 - 10_000) / 20_000, rtol=1e-6)
        np.testing.assert_allclose(table[:, 2], (42_080 - 40_000) / 60_000, rtol=1e-6)
        obs, *_ = env.step(np.array([[1.0, -1.0]], dtype=np.float32))
        table = obs.reshape(len(env.unwrapped.ports), 3)
        assert (table[:, 1] == 1.0).all() and (table[:, 2] == 0.0).all()
        assert env.observation_space.contains(obs)
    finally:
        env.close()
    with pytest.raises(ConfigError, match=r"'aqm.stale_ns' shows a parameter the action tunes; the action tunes "
                                          r"\['aqm.kmin_bytes', 'aqm.kmax_bytes'\]"):
        make(aqm="r_aqm", observation={"features": ["queue", "aqm.stale_ns"]})
    with pytest.raises(ConfigError, match=r"'aqm.mark_at_dequeue' shows a parameter the action tunes; the action "
                                          r"tunes \['aqm.kmin_bytes', 'aqm.kmax_bytes', 'aqm.pmax'\]"):
        make(observation={"features": ["queue", "aqm.mark_at_dequeue"]})  # RED's: a parameter it does not tune


def test_a_red_threshold_controller_on_a_policy_action_is_refused_naming_env_aqm():
    from ecngym.baselines.static import StaticEcnController

    env = make(aqm="codel")
    try:
        env.reset(seed=0)
        with pytest.raises(InvalidAction, match=r"env\.aqm: the env's action sets the 'codel' policy's "
                                                r"\['target_ns', 'interval_ns'\], but this controller sets RED"):
            StaticEcnController().reset(env)  # was a TypeError from the mapper's encode(**values)
    finally:
        env.close()


@pytest.mark.parametrize(("env_aqm", "controller"), [
    ("r_aqm", {"policy": "codel"}), ("red", {"policy": "ecn_sharp"}), ("codel", {"policy": "pred"})])
def test_a_controller_installing_another_policy_than_env_aqm_is_refused_naming_env_aqm(env_aqm, controller):
    # `ecngym eval controller=codel +env.kwargs.aqm=r_aqm` ran CoDel: env.aqm was silently replaced
    from ecngym.baselines.static_aqm import StaticAqmController

    env = make(aqm=env_aqm)
    try:
        env.reset(seed=0)
        policy = controller["policy"]
        with pytest.raises(InvalidAction, match=rf"^env\.aqm: the env installs '{env_aqm}' on its controlled ports, "
                                                rf"but this controller installs '{policy}' there"):
            StaticAqmController(**controller).reset(env)
        assert {s["policy"] for s in env.unwrapped.scenario.fabric.get_aqm(env.unwrapped.ports)} == {env_aqm}
        StaticAqmController(policy=env_aqm).reset(env)  # the env's own policy, with the controller's parameters
    finally:
        env.close()


def test_each_policy_reports_exactly_the_telemetry_it_declares_in_cpp(fabric):
    # the C++ declarations (DescribeTelemetry) are the one home of a policy's telemetry: the keys
    # ReadTelemetry reports, in order, and the observation features
    from ecngym.envs.config import aqm_features
    from ecngym.sim_backend import aqm

    port = fabric.ports.switch_ports()[:1]
    for policy in aqm.POLICIES:
        fabric.set_aqm(port, policy)
        fabric.read_telemetry()
        reported = [k for k in fabric.read_telemetry() if "." in k]
        assert reported == [t.name for t in aqm.telemetry(policy)], policy
    declared = [t for p in aqm.POLICIES for t in aqm.telemetry(p)]
    assert list(aqm_features()) == [t.name for t in declared] and len(declared) == 21
    assert all(t.unit and t.help and t.normaliser.partition(":")[0] in
               ("share", "saturate", "fraction_of", "queue_time", "flag") for t in declared)
    assert aqm.telemetry("red") == ()
