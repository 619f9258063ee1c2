"""mpc_forecast: causal (no future flow is read), deterministic, accounted, refused where forking is unsafe."""

import threading

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf

import ecngym.envs  # noqa: F401
from ecngym.baselines.forecast import forecast_flows
from ecngym.baselines.mpc import MPC_METRICS, MpcForecastController
from ecngym.baselines.registry import build_controller
from ecngym.configs import CONFIG_DIR
from ecngym.envs.branch import BranchError
from ecngym.envs.rollout import run_episode
from ecngym.envs.view import EnvView
from ecngym.error import ConfigError
from ecngym.workloads import Trace

STEPS = 40
CHANGE_NS = 500_000  # the second trace differs from here on
SMALL = {"decision_steps": 10, "horizon_steps": 10, "lookback_steps": 10}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _env(**kwargs):
    return gym.make("ecngym/RoceIncast-v0", episode_steps=STEPS, **kwargs)


def _decisions(log):
    """The controller's log without its own timings (which vary from run to run)."""
    return [{k: v for k, v in rec.items() if k not in ("cpu_s", "wall_s")} for rec in log]


def _trace_pair(tmp_path):
    """The env's trace for seed 7, and a copy whose flows from CHANGE_NS on are other ones."""
    env = _env()
    env.reset(seed=7)
    flows = env.unwrapped.scenario.trace.flows.copy()
    env.close()
    late = flows["start_ns"] >= CHANGE_NS
    assert 0 < late.sum() < len(flows)
    other = flows.copy()
    other.loc[late, "size_bytes"] = other.loc[late, "size_bytes"] * 3 + 1_000
    other.loc[late, ["src", "dst"]] = flows.loc[late, ["dst", "src"]].to_numpy()  # each pair reversed
    extra = pd.DataFrame({"src": [1, 2, 3], "dst": [0, 0, 0], "size_bytes": [200_000] * 3,
                          "start_ns": [CHANGE_NS + 10_000] * 3})
    other = pd.concat([other, extra], ignore_index=True)
    cols = ["src", "dst", "size_bytes", "start_ns"]
    paths = []
    for name, table in (("same", flows), ("other", other)):
        paths.append(Trace.from_flows(table[cols].copy()).save(tmp_path / f"{name}.parquet"))
    return paths


def test_the_controller_sees_only_flows_that_started():
    env = _env()
    env.reset(seed=7)
    for _ in range(15):
        env.step(0)
    view = EnvView(env)
    now = view.time_ns
    table = env.unwrapped.scenario.fabric.flows
    seen = view.flows_started(now - 100_000)
    assert 0 < len(seen) < len(table)
    assert ((seen["start_ns"] < now) & (seen["start_ns"] >= now - 100_000)).all()
    assert len(view.flows_started()) == (table["start_ns"] < now).sum()
    env.close()


def test_a_forecast_resamples_the_seen_flows_into_the_horizon():
    rng = np.random.default_rng(0)
    n = 200
    seen = pd.DataFrame({"src": rng.integers(0, 8, n), "dst": rng.integers(8, 16, n),
                         "size_bytes": rng.integers(1_000, 10**6, n), "start_ns": np.sort(rng.integers(0, 300_000, n)),
                         "priority": 3, "dport": 100})
    seen.loc[10:21, "start_ns"] = seen.loc[10, "start_ns"]  # an incast: 12 flows at one instant
    now = 300_000
    a = forecast_flows(seen, now, 300_000, 200_000, np.random.default_rng(5))
    b = forecast_flows(seen, now, 300_000, 200_000, np.random.default_rng(5))
    pd.testing.assert_frame_equal(a, b)
    assert len(a) > 0 and (a["start_ns"] >= now).all() and (a["start_ns"] < now + 200_000).all()
    # every forecast flow is a seen one's (size and host pair), at a new time; groups stay whole
    pairs = {tuple(r) for r in seen[["src", "dst", "size_bytes"]].to_numpy().tolist()}
    assert {tuple(r) for r in a[["src", "dst", "size_bytes"]].to_numpy().tolist()} <= pairs
    burst = {tuple(r) for r in seen.loc[10:21, ["src", "dst", "size_bytes"]].to_numpy().tolist()}
    for _, group in a.groupby("start_ns"):
        rows = {tuple(r) for r in group[["src", "dst", "size_bytes"]].to_numpy().tolist()}
        assert rows == burst or len(group) == 1


def test_decisions_up_to_a_change_of_the_traces_future_are_identical(tmp_path):
    """Two traces that agree until CHANGE_NS: every decision before it is the same, later ones see the change."""
    logs, summaries = [], []
    for path in _trace_pair(tmp_path):
        env = _env(trace=str(path))
        controller = MpcForecastController(**SMALL)
        summary, _, _ = run_episode(env, controller, seed=7)
        env.close()
        logs.append(_decisions(controller.log))
        summaries.append(summary)
    before = [i for i, rec in enumerate(logs[0]) if rec["time_ns"] < CHANGE_NS]
    assert len(before) >= 3 and sum(logs[0][i]["branches"] > 0 for i in before) >= 2
    for i in before:
        assert logs[1][i] == logs[0][i]
    after = [i for i, rec in enumerate(logs[0]) if rec["time_ns"] > CHANGE_NS]
    assert after and any(logs[1][i] != logs[0][i] for i in after)  # the change is seen once it has started
    assert summaries[0]["flows_total"] != summaries[1]["flows_total"]


def test_an_episode_is_deterministic_for_a_seed_and_reports_its_cost():
    runs = []
    for _ in range(2):
        env = _env()
        controller = MpcForecastController(**SMALL, seed=3)
        summary, records, _ = run_episode(env, controller, seed=7)
        env.close()
        runs.append((summary, records, controller.log))
    (s0, r0, log0), (s1, r1, log1) = runs
    assert _decisions(log0) == _decisions(log1)
    pd.testing.assert_frame_equal(r0, r1)
    n_branches = 13 * controller.forecast_samples  # templates x forecasts
    informed = [rec for rec in log0 if rec["seen_flows"] > 0]
    assert s0["decisions"] == len(log0) == STEPS // SMALL["decision_steps"]
    assert informed and all(rec["branches"] == n_branches for rec in informed)
    assert s0["mpc_branches"] == n_branches * len(informed)
    assert s0["mpc_branch_env_steps"] == sum(rec["branch_env_steps"] for rec in log0) > 0
    assert set(MPC_METRICS) <= s0.keys()
    assert s0["mpc_cpu_s"] == pytest.approx(sum(rec["cpu_s"] for rec in log0)) and s0["mpc_cpu_s"] > 0
    assert s0["slowdown_avg_all"] == s1["slowdown_avg_all"]


def test_branching_is_refused_while_another_thread_runs():
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, name="busy-worker")
    t.start()
    env = _env()
    try:
        with pytest.raises(BranchError, match="threads are running.*busy-worker"):
            run_episode(env, MpcForecastController(**SMALL), seed=7)
    finally:
        stop.set()
        t.join()
        env.close()


@pytest.mark.parametrize(("key", "value", "field"), [
    ("score", "slowdown_avg", "controller.score"),
    ("horizon_steps", 0, "controller.horizon_steps"),
    ("outstanding_weight", -1.0, "controller.outstanding_weight"),
    ("initial", "low", "controller.initial"),
])
def test_bad_parameters_name_their_field(key, value, field):
    cfg = OmegaConf.load(CONFIG_DIR / "controller" / "mpc_forecast.yaml")
    cfg[key] = value
    with pytest.raises(ConfigError, match=rf"^{field}"):
        build_controller(cfg)


def test_an_initial_template_outside_the_action_space_is_refused():
    env = _env()
    env.reset(seed=1)
    with pytest.raises(ConfigError, match=r"^controller\.initial: got 13"):
        MpcForecastController(initial=13).reset(env)
    env.close()


def test_it_plays_in_a_benchmark_runner_worker_process(tmp_path):
    """The runner's spawned workers run no other thread: the controller branches there as it does here."""
    from ecngym.benchmark.runner import Job, run_job, worker_pool

    cfg = {**OmegaConf.to_container(OmegaConf.load(CONFIG_DIR / "controller" / "mpc_forecast.yaml")), **SMALL}
    static = OmegaConf.to_container(OmegaConf.load(CONFIG_DIR / "controller" / "static_default.yaml"))
    jobs = [Job(scenario="incast", env_id="ecngym/RoceIncast-v0", env_kwargs={"episode_steps": STEPS},
                controller=name, controller_cfg=c, seeds=[7], reference=False, store_dir=str(tmp_path / "store"),
                skip_existing=False, out_dir=str(tmp_path / name)) for name, c in (("mpc_forecast", cfg),
                                                                                  ("static_default", static))]
    pool = worker_pool(2, 2)
    try:
        results = list(pool.map(run_job, jobs))
    finally:
        pool.shutdown()
    assert [r.failure for r in results] == [None, None]
    log = pd.read_csv(next((tmp_path / "mpc_forecast").rglob("controller_log*.csv")))
    assert (log["branches"] > 0).any()
