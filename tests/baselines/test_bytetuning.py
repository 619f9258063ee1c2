"""ByteTuning (§5.3–5.4; docs: algorithms/bytetuning.md §3) on small real RoCEv2 scenarios."""

import re

import numpy as np
import pandas as pd
import pytest

from ecngym.baselines.bytetuning import ByteTuningController
from ecngym.envs import EcnTuningEnv
from ecngym.envs.rollout import run_episode
from ecngym.error import ConfigError


def n_to_1(n: int, steps: int, **extra):
    """An n-to-1 incast of long-lived RoCEv2 flows on one 100 Gbps switch."""
    return dict(topology={"kind": "incast_star", "hosts": n + 1}, episode_steps=steps,
                workload={"workload": "none", "incast": {"degree": 0}, "long_lived": {"flows": n, "receiver": n}},
                **extra)


def run(controller, scenario, seed=1):
    env = EcnTuningEnv(**scenario, **controller.env_overrides(None))
    try:
        summary, _, _ = run_episode(env, controller, seed=seed)
    finally:
        env.close()
    return summary


@pytest.mark.parametrize(("field", "kwargs"), [
    ("controller.variant", {"variant": "bo"}), ("controller.beta", {"beta": 1.5}),
    ("controller.cooling", {"cooling": 1.0}), ("controller.window_steps", {"window_steps": 0}),
    ("controller.final_temperature", {"final_temperature": 1000}), ("controller.step", {"step": 2.0}),
    ("controller.tune", {"tune": ["kmin_bytes", "ecn"]}), ("controller.bounds.pmax", {"bounds": {"pmax": [0, 1]}}),
    ("controller.bounds.alpha", {"bounds": {"alpha": [1, "x"]}}),
    ("controller.bounds.ttl", {"bounds": {"ttl": [1, 2]}}),
    ("controller.start", {"start": "magic"}), ("controller.start_pfc.alpha", {"start_pfc": {"alpha": -1}}),
    ("controller.objective_switches", {"objective_switches": "spine"}), ("controller.seed", {"seed": -1}),
    ("controller.objective", {"objective": "eq16"}), ("controller.fairness_gamma", {"fairness_gamma": 0}),
    ("controller.fairness_epsilon", {"fairness_epsilon": -1}), ("controller.path_only", {"path_only": "yes"}),
    # a start vector's values were float()ed at reset ("10KB": could not convert string to float)
    ("controller.start.tor.kmin_bytes", {"start": {"tor": {"kmin_bytes": "10KX"}}}),
    ("controller.start.tor.pmax", {"start": {"tor": {"pmax": "0.5"}}}),
    ("controller.start.tor.alpha", {"start": {"tor": {"alpha": True}}}),
    ("controller.start[2]", {"start": ["10KB", "50KB", 2]}),
    # pfc_layers: "leaf" was split into letters, 5 was "'int' object is not iterable"
    ("controller.pfc_layers", {"pfc_layers": "leaf"}), ("controller.pfc_layers", {"pfc_layers": 5}),
    ("controller.pfc_layers", {"pfc_layers": ["tor", 5]}),
    # 1 and 0 passed the flags' `value in (True, False)` test (1 == True)
    ("controller.per_switch", {"per_switch": 1}), ("controller.path_only", {"path_only": 0}),
    # tune=5 and bounds=5 were "'int' object is not iterable"; bounds=0 / '' silently meant the default bounds
    ("controller.tune", {"tune": 5}), ("controller.tune", {"tune": [5]}), ("controller.bounds", {"bounds": 5}),
    ("controller.bounds", {"bounds": 0}), ("controller.bounds", {"bounds": ""}),
])
def test_bad_parameters_name_the_field(field, kwargs):
    with pytest.raises(ConfigError, match=re.escape(field)):
        ByteTuningController(**kwargs)


def test_start_outside_the_bounds_is_refused_at_reset():
    bt = ByteTuningController(bounds={"kmin_bytes": ["50KB", "1MB"]})  # DCQCN's Kmin is 12.5 KB at 100 Gbps
    env = EcnTuningEnv(**n_to_1(2, 3), **bt.env_overrides(None))
    env.reset(seed=0)
    with pytest.raises(ConfigError, match="controller.bounds.kmin_bytes") as err:
        bt.reset(env)
    assert "widen the bounds, or set controller.start" in str(err.value)
    env.close()


def test_a_pfc_start_outside_the_bounds_names_the_ways_out_and_leaving_the_knob_untuned_works():
    bt = ByteTuningController(bounds={"headroom_bytes": ["100KB", "512KB"]})  # the preset's headroom is 37.5 KB
    env = EcnTuningEnv(**n_to_1(2, 3), **bt.env_overrides(None))
    env.reset(seed=0)
    with pytest.raises(ConfigError, match="controller.bounds.headroom_bytes") as err:
        bt.reset(env)
    assert "set controller.start_pfc or leave headroom_bytes out of controller.tune" in str(err.value)
    bt = ByteTuningController(bounds={"headroom_bytes": ["100KB", "512KB"]}, tune=["kmin_bytes", "alpha"])
    bt.reset(env)  # headroom not searched: its start value needs no bound
    env.close()
    assert {k for _, k in bt.coords} == {"kmin_bytes", "alpha"}


def test_start_vector_sizes_parse_units_and_pfc_layers_must_exist_in_the_env():
    bt = ByteTuningController(variant="hold", start={"tor": {"kmin_bytes": "10KB", "kmax_bytes": "40KB"}},
                              pfc_layers=["tor"])
    env = EcnTuningEnv(**n_to_1(2, 3), **bt.env_overrides(None))
    try:
        env.reset(seed=0)
        bt.reset(env)
        assert bt.x0["tor"]["kmin_bytes"] == 10_000 and bt.x0["tor"]["kmax_bytes"] == 40_000
        assert bt.unit_has_pfc == [True]
        for bad, field in (({"pfc_layers": ["lef"]}, r"controller\.pfc_layers: unknown \['lef'\]; this env's "
                                                     r"controlled ports are on layers \['tor'\]"),
                           ({"start": {"tor": {}, "lef": {}}}, r"controller\.start\.lef: unknown unit")):
            with pytest.raises(ConfigError, match=field):  # an unknown layer / unit was silently ignored
                ByteTuningController(**bad).reset(env)
    finally:
        env.close()


def test_annealing_tunes_ecn_and_pfc_online_and_logs_every_measurement():
    bt = ByteTuningController(window_steps=2, settle_steps=1, iterations=2, cooling=0.5, temperature_scale=1e-3,
                              final_temperature=1.0, seed=3)
    summary = run(bt, n_to_1(2, 90))
    log = pd.DataFrame(bt.log)
    assert len(log) == 30  # 90 steps / (1 settle + 2 window) measurements
    assert list(log["phase"][:3]) == ["start", "incumbent", "candidate"]
    cand = log[log["phase"] == "candidate"]
    assert set(cand["verdict"]) <= {"better", "worse_accepted", "rejected"} and len(cand) >= 10
    temps = log["temperature"].dropna()  # the hold phase after the schedule has none
    assert (np.diff(temps) <= 0).all() and temps.iloc[-1] < 2 and log["phase"].iloc[-1] == "hold"
    # the search moved both ECN and PFC knobs of the one layer, inside the bounds
    for knob in ("tor.kmin_bytes", "tor.kmax_bytes", "tor.pmax", "tor.headroom_bytes", "tor.alpha"):
        assert log[knob].nunique() > 1, knob
    assert (log["tor.kmax_bytes"] >= log["tor.kmin_bytes"]).all()
    assert (log["f"] > 0).all() and (log["f"] <= 1.0 + 1e-9).all()  # one switch: each Eq. 14 term <= 1
    assert summary["flows_total"] == 2


def test_greedy_probes_every_coordinate_both_ways_per_round():
    bt = ByteTuningController(variant="greedy", window_steps=1, settle_steps=0, tune=["kmin_bytes", "pmax"],
                              max_rounds=2)
    run(bt, n_to_1(2, 14))
    log = pd.DataFrame(bt.log)
    first = log[log["round"] == 0]
    assert list(first["phase"]) == ["incumbent"] + ["probe"] * 4  # 2 coordinates x (+s, -s)
    assert set(log["phase"][10:]) == {"hold"}  # two rounds done: hold x_best
    assert first["verdict"].iloc[-1] in ("moved", "stayed")


def test_spine_runs_without_pfc_tuning_on_the_leaf_spine():
    bt = ByteTuningController(window_steps=1, settle_steps=0)
    import gymnasium as gym

    import ecngym.envs  # noqa: F401

    env = gym.make("ecngym/RoceLeafSpine-v0", episode_steps=3, **bt.env_overrides(None))
    env.reset(seed=0)
    bt.reset(env)
    env.close()
    knobs = {f"{u}.{k}" for u, k in bt.coords}
    assert "leaf.alpha" in knobs and "leaf.headroom_bytes" in knobs and "spine.kmin_bytes" in knobs
    assert "spine.alpha" not in knobs and "spine.headroom_bytes" not in knobs


def test_eq15_scores_a_fairer_split_higher():
    bt = ByteTuningController(objective="eq15")
    bt.t_max, bt.q_min, bt.flow_t_max = np.array([100e9]), np.array([10.0]), np.array([60.0, 60.0, 0.0])
    fair = bt._score(np.array([100e9]), np.array([10.0]), np.array([50.0, 50.0, 0.0]))
    unfair = bt._score(np.array([100e9]), np.array([10.0]), np.array([60.0, 40.0, 0.0]))
    # numerator 2 x (0.5 x 50/60 + 0.5) over eps 1 vs (0.5 + 0.5 x 40/60 + 1) over 1 x 200 + 1
    assert fair == pytest.approx(2 * (0.5 * 50 / 60 + 0.5)) and unfair == pytest.approx((0.5 + 0.5 * 40 / 60 + 1) / 201)


def test_eq15_tunes_on_the_senders_rates():
    bt = ByteTuningController(objective="eq15", window_steps=2, settle_steps=1, iterations=1, cooling=0.5,
                              final_temperature=50.0, temperature_scale=1e-3, seed=1)
    run(bt, n_to_1(2, 30))
    log = pd.DataFrame(bt.log)
    assert len(log) == 10 and np.isfinite(log["f"]).all()
    assert (log["flow_gbps_std"] >= 0).all() and (log["throughput_gbps"] > 50).any()


def test_path_only_leaves_switches_without_traffic_out_of_the_search(tmp_path):
    import gymnasium as gym

    import ecngym.envs  # noqa: F401
    from ecngym.workloads import Trace

    trace = tmp_path / "one_flow.parquet"  # host 1 -> host 0: both under leaf 0, no spine on the path
    Trace.from_flows(pd.DataFrame({"src": [1], "dst": [0], "size_bytes": [10**9], "start_ns": [0]})).save(trace)
    bt = ByteTuningController(window_steps=2, settle_steps=0, per_switch=True, path_only=True, iterations=1,
                              cooling=0.5, final_temperature=50.0, temperature_scale=1e-3)
    env = gym.make("ecngym/RoceLeafSpine-v0", episode_steps=12, trace=str(trace), **bt.env_overrides(None))
    run_episode(env, bt, seed=0)
    env.close()
    units = {u for u, _ in bt.coords}
    assert len(bt.path_switches) == 1 and units == {f"switch{bt.path_switches[0]}"}
    assert len(units) < len(bt.units)
