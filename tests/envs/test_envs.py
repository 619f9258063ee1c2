"""The Gymnasium envs: API conformance, determinism, actions that matter, clear errors."""

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import ecngym.envs  # noqa: F401  (registers the ids)
from ecngym.envs import SCENARIOS, EcnTuningEnv
from ecngym.error import ConfigError, InvalidAction

SHORT = {"episode_steps": 12}


@pytest.mark.parametrize("action_type", ["discrete", "continuous"])
@pytest.mark.parametrize("env_id", sorted(SCENARIOS))
def test_gymnasium_and_sb3_checkers_pass_without_warnings(env_id, action_type):
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = gym.make(env_id, action={"type": action_type}, **SHORT)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_env(env.unwrapped, skip_render_check=True)
            sb3_check_env(env.unwrapped, warn=True)
        assert [str(w.message) for w in caught] == []
    finally:
        env.close()


def test_make_overrides_merge_into_the_scenario_preset():
    # a nested override keeps the rest of the preset: the DCTCP env keeps its step-marking templates
    env = gym.make("ecngym/DctcpLeafSpine-v0", action={"scope": "port"}, workload={"load": 0.2}, **SHORT)
    cfg = env.unwrapped.config
    assert cfg.action.scope == "port" and len(cfg.action.templates) == 7
    assert cfg.workload["load"] == 0.2 and cfg.workload["incast"]["degree"] == 6
    assert cfg.fabric["preset"] == "dctcp" and cfg.topology["kind"] == "leaf_spine"
    assert env.action_space.shape == (len(env.unwrapped.ports),)
    env.close()
    # and the registry's preset is untouched
    assert gym.make("ecngym/DctcpLeafSpine-v0").unwrapped.config.action.scope == "layer"


def test_a_fabric_override_choosing_another_base_replaces_the_scenarios_preset():
    # `ecngym eval fabric=hpcc_file fabric.hpcc_config=path` on a scenario built on the hpcc preset
    from ecngym.sim_backend.data import hpcc_reference_path

    path = str(hpcc_reference_path("config_A_1sw_100g_dcqcn.txt"))
    env = gym.make("ecngym/RoceIncast-v0", fabric={"hpcc_config": path, "ack_interval_packets": 2}, **SHORT)
    assert env.unwrapped.config.fabric == {"hpcc_config": path, "ack_interval_packets": 2}
    env.close()
    # naming both bases in one mapping is still refused
    with pytest.raises(ConfigError, match="env.fabric.hpcc_config: give either a preset"):
        gym.make("ecngym/RoceIncast-v0", fabric={"hpcc_config": path, "preset": "dctcp"}, **SHORT).reset(seed=1)


def _rollout(env, actions, seed):
    obs, _ = env.reset(seed=seed)
    observations, rewards = [obs], []
    for a in actions:
        obs, r, term, trunc, info = env.step(a)
        observations.append(obs)
        rewards.append(r)
    return np.array(observations), np.array(rewards), info


def test_same_seed_and_actions_give_identical_observations_and_rewards():
    env = gym.make("ecngym/RoceLeafSpine-v0", **SHORT)
    actions = [env.action_space.sample() for _ in range(12)]
    o1, r1, i1 = _rollout(env, actions, seed=7)
    o2, r2, i2 = _rollout(env, actions, seed=7)
    o3, _, _ = _rollout(env, actions, seed=8)
    env.close()
    np.testing.assert_array_equal(o1, o2)
    np.testing.assert_array_equal(r1, r2)
    assert i1["summary"]["trace_hash"] == i2["summary"]["trace_hash"]
    assert not np.array_equal(o1, o3)


def test_different_ecn_actions_produce_different_queues():
    # the default incast mix: the lowest thresholds must keep queues clearly shorter than the highest
    env = EcnTuningEnv(workload={"workload": "websearch", "load": 0.3,
                                 "incast": {"degree": 8, "size": "64KB", "interval": "100us"}},
                       episode_steps=60)
    templates = env.scenario.actions.templates
    low = min(range(len(templates)), key=lambda i: templates[i][1])  # (Kmin, Kmax, Pmax): the lowest Kmax
    high = max(range(len(templates)), key=lambda i: templates[i][0])  # the highest Kmin
    queues = {}
    for name, a in (("low", low), ("high", high)):
        _, _, info = _rollout(env, [a] * 60, seed=3)
        queues[name] = info["summary"]["queue_mean_bytes"]
    env.close()
    assert queues["low"] < 0.6 * queues["high"], queues


def test_static_dcqcn_keeps_incast_queue_bounded_and_flows_complete(tmp_path):
    from ecngym.baselines import StaticEcnController
    from ecngym.envs.rollout import run_episode
    from ecngym.workloads import generate_trace

    # 2 ms of arrivals (30-600 KB background + 12-way incasts), then a drain until the episode ends
    trace = generate_trace("pred_workload2", load=0.3, hosts=16, duration="2ms", seed=4,
                           incast={"degree": 12, "size": "64KB", "interval": "100us"})
    env = EcnTuningEnv(trace=str(trace.save(tmp_path / "incast.parquet")),
                       action={"static_default": [12_500, 500_000, 0.01]}, episode_steps=150)
    controller = StaticEcnController("dcqcn")  # 5 KB / 200 KB / 1 % at 40 GbE, at 100 Gbps
    summary, records, _ = run_episode(env, controller, seed=5)
    env.close()
    assert summary["queue_p99_bytes"] < 1_000_000  # bounded: a few hundred KB of a 32 MiB buffer
    assert records["finished"].all()
    assert summary["flows_finished"] == summary["flows_total"] == len(trace)


@pytest.mark.parametrize("bad", [99, -1, 2.5, "x", [1, 2]])
def test_bad_discrete_action_raises(bad):
    env = gym.make("ecngym/RoceIncast-v0", **SHORT).unwrapped
    env.reset(seed=0)
    with pytest.raises(InvalidAction, match="expected"):
        env.step(bad)
    env.close()


@pytest.mark.parametrize("env_kw", [{}, {"aqm": "ecn_sharp"}], ids=["red", "aqm"])
@pytest.mark.parametrize("bad", [2**63, 1e300, [2**63], np.array([2**64 - 1], dtype=np.uint64)])
def test_huge_discrete_index_is_refused_without_a_cast_warning(env_kw, bad):
    import warnings

    env = gym.make("ecngym/RoceIncast-v0", episode_steps=3, **env_kw).unwrapped
    env.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # was "RuntimeWarning: invalid value encountered in cast" first
        with pytest.raises(InvalidAction, match=r"template index\(es\) in \[0, "):
            env.step(bad)
    env.close()


def test_continuous_actions_map_to_documented_bounds():
    env = EcnTuningEnv(action={"type": "continuous", "scope": "port"}, **SHORT)
    env.reset(seed=0)
    n = len(env.ports)
    env.step(np.full((n, 3), -1.0, dtype=np.float32))
    red = env.scenario.fabric.get_red()
    assert (red["kmin_bytes"][env.ports] == 1000).all() and (red["kmax_bytes"][env.ports] == 1000).all()
    assert np.allclose(red["pmax"][env.ports], 0.01)
    env.step(np.full((n, 3), 1.0, dtype=np.float32))
    red = env.scenario.fabric.get_red()
    assert (red["kmax_bytes"][env.ports] == 3_000_000).all()
    with pytest.raises(InvalidAction, match=r"\[-1, 1\]"):
        env.step(np.full((n, 3), 1.5, dtype=np.float32))
    env.close()


@pytest.mark.parametrize(
    "overrides,field",
    [({"interval": "-5us"}, "env.interval"), ({"interval": "xrtt"}, "env.interval"),
     ({"episode_steps": 0}, "env.episode_steps"), ({"reward": {"name": "joy"}}, "env.reward.name"),
     ({"action": {"scope": "switch"}}, "env.action.scope"), ({"action": {"layers": ["core"]}}, "env.action.layers"),
     ({"observation": {"features": ["queue", "mood"]}}, "env.observation.features"),
     ({"no_such": 1}, "env.no_such"),
     ({"fabric": {"preset": "hpcc", "aqm": {"all": {"pmax": 3}}}}, "fabric.aqm.all.pmax"),
     ({"workload": {"load": 1.2}}, "env.workload.load"), ({"action": {"ports": [0]}}, "env.action.ports"),
     ({"action": {"ports": []}}, "env.action.ports"), ({"action": {"type": "box"}}, "env.action.type"),
     ({"action": {"templates": [[5000, 1000, 0.1]]}}, r"env.action.templates\[0\]"),
     ({"action": {"type": "continuous", "ranges": {"pmax": [0.5, 0.1]}}}, "env.action.ranges.pmax: low 0.5 > high 0.1"),
     ({"observation": {"queue_scale": "0B"}}, "env.observation.queue_scale"),
     ({"observation": {"history": 0}}, "env.observation.history"),
     ({"observation": {"queue_mapping": "log"}}, "env.observation.queue_mapping"),
     ({"reward": {"omega": 1.5}}, "env.reward.omega"),
     ({"reward": {"q_left": "1MB", "q_max": "500KB"}}, "env.reward.q_max"),
     ({"episode_steps": "many"}, "env.episode_steps"), ({"episode_steps": 2.5}, "env.episode_steps"),
     ({"observation": {"history": "3"}}, "env.observation.history"), ({"reward": {"beta": "x"}}, "env.reward.beta"),
     ({"trace_window": "middle"}, "env.trace_window"),
     # a window of no fixed trace was ignored: every generated episode starts at 0
     ({"trace_window": "random"}, "env.trace_window: got 'random' without env.trace"),
     ({"trace_window": "2ms"}, "env.trace_window: got 2000000 ns without env.trace")],
)
def test_bad_env_config_names_the_field(overrides, field):
    with pytest.raises(ConfigError, match=field):
        EcnTuningEnv(**overrides)


def test_episode_end_info_and_truncation():
    env = gym.make("ecngym/RoceIncast-v0", **SHORT)
    env.reset(seed=1)
    for i in range(12):
        _, _, term, trunc, info = env.step(env.unwrapped.static_action())
        assert not term
        assert trunc == (i == 11)
    s = info["summary"]
    for key in ("slowdown_avg_<100KB", "slowdown_p50_100KB-1MB", "slowdown_p99_>1MB", "queue_mean_bytes",
                "queue_p99_bytes", "utilization", "pfc_paused_fraction", "marked_fraction", "trace_hash"):
        assert key in s
    assert len(info["flow_records"]) == s["flows_total"]
    assert set(info["telemetry"]) >= {"mean_queue_bytes", "utilization", "ecn_marked_packets"}
    with pytest.raises(RuntimeError, match="reset"):
        env.unwrapped.step(0)
    env.close()
    env.close()  # safe twice


def test_async_vector_env_steps_two_fabrics():
    venv = gym.vector.AsyncVectorEnv([lambda: gym.make("ecngym/RoceIncast-v0", **SHORT)] * 2)
    try:
        obs, _ = venv.reset(seed=[1, 2])
        assert obs.shape == (2, *venv.single_observation_space.shape)
        for _ in range(5):
            obs, rewards, _, _, info = venv.step(np.array([0, 1]))
        assert np.all(np.isfinite(rewards))
        assert not np.array_equal(obs[0], obs[1])  # two seeds, two traces, two fabrics
        assert info["telemetry"]["mean_queue_bytes"].shape[0] == 2
    finally:
        venv.close()


def test_sb3_subproc_vec_env_runs_one_fabric_per_process():
    from functools import partial

    from stable_baselines3.common.vec_env import SubprocVecEnv

    from ecngym.envs import make

    venv = SubprocVecEnv([partial(make, "ecngym/RoceIncast-v0", episode_steps=6)] * 2)
    try:
        venv.seed(3)
        obs = venv.reset()
        assert obs.shape[0] == 2
        for _ in range(7):  # crosses an episode end: auto-reset in the workers
            obs, rewards, dones, infos = venv.step(np.array([0, 1]))
        assert np.all(np.isfinite(rewards))
    finally:
        venv.close()


def _table(env, obs):
    f = env.scenario.features
    return obs.reshape(len(env.ports), f.history, f.n_features)


def test_observation_features_come_from_the_interval_telemetry():
    env = EcnTuningEnv(**SHORT)
    obs, _ = env.reset(seed=2)
    assert obs.shape == env.observation_space.shape == (len(env.ports) * 3 * 8,)
    previous = obs.copy()
    for _ in range(6):
        obs, _, _, _, info = env.step(env.static_action())
        table, prev = _table(env, obs), _table(env, previous)
        np.testing.assert_array_equal(table[:, :-1], prev[:, 1:])  # the history shifts by one interval
        tel = {k: v[info["ports"]] for k, v in info["telemetry"].items() if isinstance(v, np.ndarray)}
        names = env.config.observation.features
        latest = table[:, -1]
        np.testing.assert_allclose(latest[:, names.index("queue")], np.minimum(tel["mean_queue_bytes"] / 1e6, 1),
                                   rtol=1e-6)
        np.testing.assert_allclose(latest[:, names.index("utilization")], np.minimum(tel["utilization"], 2),
                                   rtol=1e-6)
        np.testing.assert_allclose(latest[:, names.index("kmin")], 400_000 / 1_600_000)
        np.testing.assert_allclose(latest[:, names.index("pmax")], 0.2, rtol=1e-6)
        np.testing.assert_allclose(latest[:, names.index("paused_fraction")],
                                   np.minimum(tel["paused_ns"] / env.scenario.interval_ns, 1), rtol=1e-6, atol=1e-7)
        assert np.shares_memory(obs, previous) is False
        previous = obs
    assert env.observation_space.contains(obs)
    env.close()


def test_unflattened_observation_is_a_port_table():
    env = EcnTuningEnv(observation={"flatten": False, "features": ["queue", "flows"], "history": 2}, **SHORT)
    obs, _ = env.reset(seed=0)
    assert obs.shape == env.observation_space.shape == (len(env.ports), 4)
    env.close()


@pytest.mark.parametrize("name", ["acc", "pred"])
def test_step_rewards_follow_their_formulas(name):
    env = EcnTuningEnv(reward={"name": name}, **SHORT)
    env.reset(seed=3)
    sc = env.scenario
    bdp = sc.topology.rate_bps.min() * sc.base_rtt_ns / 8e9
    for _ in range(8):
        _, reward, _, _, info = env.step(env.static_action())
        tel = {k: v[info["ports"]].astype(float) for k, v in info["telemetry"].items() if isinstance(v, np.ndarray)}
        q = tel["mean_queue_bytes"]
        if name == "acc":  # ω·U + (1−ω)·Q_step, ω = 0.5, steps at 0.25/0.5/1/2/4 BDP
            levels = np.array([1.0, 0.8, 0.6, 0.4, 0.2, 0.0])
            q_step = levels[(q[:, None] > bdp * np.array([0.25, 0.5, 1, 2, 4])).sum(axis=1)]
            expected = 0.5 * np.minimum(tel["utilization"], 1) + 0.5 * q_step
        else:  # β·R/C + (1−β)·Φ(q̄), β = 0.4, Φ linear from 15 KB to 500 KB
            goodput = np.minimum(tel["tx_data_bytes"] * 8e9 / (100e9 * sc.interval_ns), 1)
            expected = 0.4 * goodput + 0.6 * np.clip((500_000 - q) / (500_000 - 15_000), 0, 1)
        assert reward == pytest.approx(expected.mean(), rel=1e-9)
        assert 0.0 <= reward <= 1.0
    env.close()


def test_fct_reward_is_paid_at_the_episode_end():
    from ecngym.envs.reward import slowdown_so_far

    env = EcnTuningEnv(reward={"name": "fct"}, **SHORT)
    env.reset(seed=3)
    rewards = []
    for _ in range(12):
        _, reward, _, truncated, info = env.step(env.static_action())
        rewards.append(reward)
    assert truncated and rewards[:-1] == [0.0] * 11
    records = info["flow_records"]
    expected = slowdown_so_far(records, int(info["time_ns"]))
    assert rewards[-1] == pytest.approx(-expected.mean()) and rewards[-1] <= -1.0
    assert len(expected) == len(records)  # unfinished flows count too
    env.close()


def test_single_port_scope_sets_only_that_port():
    probe = EcnTuningEnv(**SHORT)
    port = int(probe.ports[3])
    probe.close()
    env = EcnTuningEnv(action={"ports": [port]}, **SHORT)
    assert list(env.ports) == [port] and env.action_space == gym.spaces.Discrete(13)
    env.reset(seed=0)
    env.step(0)  # template 0: 20 KB / 40 KB / 5 %
    red = env.scenario.fabric.get_red()
    assert red["kmin_bytes"][port] == 20_000 and red["kmax_bytes"][port] == 40_000
    others = [p for p in range(len(red["kmin_bytes"])) if p != port and env.scenario.fabric.ports.is_switch[p]]
    assert (red["kmin_bytes"][others] == 400_000).all()  # untouched: the preset's static setting
    env.close()


def test_invalid_action_applies_nothing():
    env = EcnTuningEnv(action={"scope": "port"}, **SHORT)
    env.reset(seed=0)
    good = np.zeros(len(env.ports), dtype=np.int64)
    env.step(good)
    bad = good.copy()
    bad[-1] = 13
    before = {k: v.copy() for k, v in env.scenario.fabric.get_red().items()}
    with pytest.raises(InvalidAction, match=r"\[0, 13\)"):
        env.step(bad)
    after = env.scenario.fabric.get_red()
    for k in before:
        np.testing.assert_array_equal(before[k], after[k])
    with pytest.raises(InvalidAction):
        env.step(good[:-1])  # wrong shape
    env.step(good)  # a valid action still works after the refusals
    env.close()


def test_gymnasium_module_prefix_makes_without_importing_ecngym_envs():
    import subprocess
    import sys

    code = ("import gymnasium as gym; env = gym.make('ecngym.envs:ecngym/RoceIncast-v0', episode_steps=2); "
            "env.reset(seed=0); env.step(0); env.close(); print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/", timeout=120)
    assert out.stdout.strip().endswith("ok"), out.stderr


def test_fixed_trace_windows(tmp_path):
    from ecngym.workloads import generate_trace

    trace = generate_trace("websearch", load=0.3, hosts=16, duration="4ms", seed=1)
    path = str(trace.save(tmp_path / "long.parquet"))
    span = 50 * 20_800  # 50 steps of 5 base RTTs on the 16-host star
    env = EcnTuningEnv(trace=path, trace_window="random", episode_steps=50)
    offsets, hashes = [], []
    for seed in range(3):
        _, info = env.reset(seed=seed)
        flows = env.scenario.trace.flows
        assert info["source_trace_hash"] == trace.hash
        assert flows["start_ns"].between(0, span - 1).all()
        original = trace.flows[(trace.flows["start_ns"] >= info["trace_offset_ns"])
                               & (trace.flows["start_ns"] < info["trace_offset_ns"] + span)]
        assert len(flows) == len(original) > 0
        offsets.append(info["trace_offset_ns"])
        hashes.append(info["trace_hash"])
    assert len(set(offsets)) == 3 and len(set(hashes)) == 3
    env.close()
    env = EcnTuningEnv(trace=path, trace_window="2ms", episode_steps=50)
    _, info = env.reset(seed=0)
    assert info["trace_offset_ns"] == 2_000_000
    env.close()
    with pytest.raises(ConfigError, match="env.trace_window"):
        EcnTuningEnv(trace=path, trace_window="middle")
    with pytest.raises(ConfigError, match="env.trace"):
        EcnTuningEnv(trace=str(tmp_path / "missing.parquet"))
    with pytest.raises(ConfigError, match="env.trace"):  # 16-host trace on a 4-host star
        EcnTuningEnv(trace=path, topology={"kind": "incast_star", "hosts": 4})


_EPISODE_DIGEST = """
import hashlib, gymnasium as gym, numpy as np
import ecngym.envs
env = gym.make("ecngym/RoceLeafSpine-v0", episode_steps=12)
obs, _ = env.reset(seed=3)
digest = hashlib.sha256(obs.tobytes())
for k in range(12):
    action = np.full(env.action_space.shape, k % env.action_space.nvec[0])
    obs, reward, _, _, info = env.step(action)
    digest.update(obs.tobytes()); digest.update(np.float64(reward).tobytes())
digest.update(info["flow_records"].to_numpy(dtype=float).tobytes())
print(digest.hexdigest())
"""


def test_an_episode_is_identical_in_fresh_processes_whatever_their_hash_seed():
    # reruns and vector-env workers are new processes: nothing may depend on str hashing or addresses
    import os
    import subprocess
    import sys

    digests = set()
    for hash_seed in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", _EPISODE_DIGEST], capture_output=True, text=True, cwd="/",
                             timeout=300, env={**os.environ, "PYTHONHASHSEED": hash_seed})
        assert out.returncode == 0, out.stderr
        digests.add(out.stdout.strip())
    assert len(digests) == 1 and len(digests.pop()) == 64


def test_switches_of_an_unknown_layer_is_an_error_not_an_empty_list():
    from ecngym.envs.view import EnvView
    from ecngym.error import ConfigError

    env = gym.make("ecngym/RoceLeafSpine-v0", episode_steps=2)
    env.reset(seed=0)
    view = EnvView(env)
    assert len(view.switches_of_layer("leaf")) > 0
    for bad in ("nope", "tor", None, ["leaf"]):  # each gave [] before
        with pytest.raises(ConfigError, match=r"layer: got .*; the topology's switch layers are \['leaf', 'spine'\]"):
            view.switches_of_layer(bad)
    env.close()


def test_a_discrete_space_takes_one_index_not_an_array_of_one():
    # Gymnasium's Discrete(13).contains([3]) is False; the env took [3] (and [[3]]) as template 3
    env = gym.make("ecngym/RoceIncast-v0", episode_steps=5).unwrapped
    assert env.action_space == gym.spaces.Discrete(13)
    env.reset(seed=0)
    for bad in (np.array([3]), [3], np.array([[3]])):
        assert not env.action_space.contains(np.asarray(bad))
        with pytest.raises(InvalidAction, match=r"an element of Discrete\(13\): shape \(\)"):
            env.step(bad)
    for good in (3, np.int64(3), np.array(3), 3.0):
        env.step(good)
    env.close()


def test_a_per_port_action_error_names_the_first_bad_entry_not_the_whole_action():
    # the message printed the whole action (and MultiDiscrete's whole nvec) for one bad entry
    env = EcnTuningEnv(action={"scope": "port"}, **SHORT)
    env.reset(seed=0)
    n = len(env.ports)
    bad = np.zeros(n, dtype=np.int64)
    bad[[3, 9]] = 99
    cases = [(bad, rf"\(an element of MultiDiscrete: shape \({n},\)\), got action\[3\] = 99 \(and 1 more\)$"),
             (np.where(np.arange(n) == 5, 2.5, 0.0), r"integer template index\(es\) in \[0, 13\) \(an element of "
              rf"MultiDiscrete: shape \({n},\)\), got action\[5\] = 2.5$"),
             (np.zeros(n - 1, dtype=np.int64), rf"got shape \({n - 1},\)$")]
    for action, match in cases:
        with pytest.raises(InvalidAction, match=match) as info:
            env.step(action)
        assert "13 13" not in str(info.value) and len(str(info.value)) < 160
    env.close()
    env = EcnTuningEnv(action={"scope": "port", "type": "continuous"}, **SHORT)
    env.reset(seed=0)
    box = np.zeros((n, 3))
    box[7, 2], box[9, 0] = 1.5, np.nan
    with pytest.raises(InvalidAction, match=r"in \[-1, 1\], got action\[7, 2\] = 1.5 \(and 1 more\)$"):
        env.step(box)
    from ecngym.envs.view import EnvView

    kmin = np.full(n, 20_000)
    kmin[[4, 6]] = 50_000
    # Kmax is Kmin + an offset in [0, 2 MB]: the offset of port 4 (and of port 6) is below it
    with pytest.raises(InvalidAction, match=rf"^kmax_bytes - kmin_bytes -10000 \(unit 'port{env.ports[4]}'\) "
                                            r"\(and 1 more\) outside the continuous action range \[0, 2e\+06\]$"):
        EnvView(env).encode(kmin, 40_000, 0.05)
    env.close()


def test_a_boolean_in_an_action_list_is_refused_not_taken_as_index_1():
    # np.asarray([True, 1]) is [1, 1]: a bool in a list (or tuple) was silently template 1 / 1.0
    env = gym.make("ecngym/RoceLeafSpine-v0", episode_steps=5).unwrapped  # MultiDiscrete([13, 13]): leaf, spine
    env.reset(seed=0)
    red = {k: v.copy() for k, v in env.scenario.red.items()}
    space = r"\(an element of MultiDiscrete: shape \(2,\)\)"
    for bad, got in (([True, 1], r"action\[0\] = True"), ((1, np.False_), r"action\[1\] = False"),
                     ([np.array(True), True], r"action\[0\] = True \(and 1 more\)")):
        with pytest.raises(InvalidAction, match=rf"{space}, got {got}$"):
            env.step(bad)
    for k, v in env.scenario.red.items():  # nothing applied
        np.testing.assert_array_equal(v, red[k])
    env.step([1, 1])  # a list of ints is still an action
    env.close()
    env = EcnTuningEnv(action={"type": "continuous"}, **SHORT)  # Box(-1, 1, (1, 3))
    env.reset(seed=0)
    with pytest.raises(InvalidAction, match=r"shape \(1, 3\) in \[-1, 1\], got action\[0, 2\] = True$"):
        env.step([[0.5, 0.0, True]])
    env.step([[0.5, 0.0, 1]])
    env.close()
    env = gym.make("ecngym/RoceIncast-v0", episode_steps=5, aqm="ecn_sharp", action={"type": "continuous"}).unwrapped
    env.reset(seed=0)  # the AQM-parameter action: Box(-1, 1, (1, 2))
    with pytest.raises(InvalidAction, match=r"shape \(1, 2\) in \[-1, 1\], got action\[0, 0\] = True$"):
        env.step([[True, 0.0]])
    env.close()


def test_a_boolean_equal_to_the_held_action_is_refused_too():
    # the held action (EnvView.hold_action) is compared before the checks: NumPy has True == 1
    from ecngym.envs.view import EnvView

    env = gym.make("ecngym/RoceIncast-v0", episode_steps=5).unwrapped  # Discrete(13)
    env.reset(seed=0)
    env.step(1)
    assert EnvView(env).hold_action() == 1
    for bad in (True, np.True_, np.array(True)):
        with pytest.raises(InvalidAction, match=r"an element of Discrete\(13\): shape \(\)\), got True$"):
            env.step(bad)
    env.step(1)
    env.close()


def test_a_large_scenario_says_its_sizes_before_it_is_built(caplog):
    # a fat tree of k = 32 built for 73 s (k = 64: hours), a 10^6-step episode ran for hours, with no word
    import logging

    with caplog.at_level(logging.WARNING, logger="ecngym.envs.scenario"):
        EcnTuningEnv(topology={"kind": "incast_star", "hosts": 1100}, episode_steps=2).close()
        EcnTuningEnv(episode_steps=100_001, interval="20us").close()
        EcnTuningEnv(episode_steps=2).close()  # a small one: no word
    assert [r.getMessage() for r in caplog.records] == [
        "a large scenario (hosts: 1100, switches: 1, links: 1100; an episode: 2 steps of 5rtt): building it and "
        "playing its episodes is slow",
        "a large scenario (hosts: 16, switches: 1, links: 16; an episode: 100001 steps of 20000 ns): building it and "
        "playing its episodes is slow"]


@pytest.mark.parametrize("kind", [int, np.int64, np.int32, np.uint8])
def test_a_policys_integer_index_is_taken_and_its_edges_checked(kind):
    from gymnasium import spaces

    from ecngym.envs.action import template_indices

    space = spaces.Discrete(13)
    for i in (0, 12):
        got = template_indices(kind(i), 13, space)
        assert got.dtype == np.int64 and got.tolist() == [i]
    with pytest.raises(InvalidAction, match=r"in \[0, 13\) .*got 13$"):
        template_indices(kind(13), 13, space)
    for flag in (True, np.bool_(False)):  # booleans are not indices (np.bool_ is no np.integer)
        with pytest.raises(InvalidAction, match=r"got (True|False)$"):
            template_indices(flag, 13, space)
    with pytest.raises(InvalidAction, match=r"shape \(\)\), got shape \(1,\)$"):
        template_indices([kind(3)], 13, space)  # [3] is not an element of Discrete(13)
