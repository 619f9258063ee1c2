"""The C++ step kernel (envs/step_kernel.py) gives what the NumPy path gives, to the bit."""

import gymnasium as gym
import numpy as np
import pytest

import ecngym.envs  # noqa: F401
from ecngym.sim_backend import _fabric
from ecngym.sim_backend._fabric import ColumnOp

SMALL_LEAF_SPINE = {"kind": "leaf_spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 4}
EVERY_KERNEL_FEATURE = ["queue", "max_queue", "utilization", "marked_rate", "paused_fraction", "flows",
                        "kmin", "kmax", "pmax"]


def _play(env_id: str, kernel: bool, steps: int, **overrides) -> tuple[bool, list, list, list, list]:
    """Random actions (seeded) for ``steps`` steps; each observation, frame, reward and summary.

    Each observation comes with the float64 frame it was made of (a float32 observation would
    hide a difference in the last bits of the features).
    """
    env = gym.make(env_id, episode_steps=12, **overrides)
    try:
        sc = env.unwrapped.scenario
        if not kernel:
            sc.step_kernel = None
        used = sc.step_kernel is not None
        obs, _ = env.reset(seed=3)
        env.action_space.seed(3)
        observations, rewards, summaries, flows = [obs], [], [], []
        for _ in range(steps):
            obs, reward, _, truncated, info = env.step(env.action_space.sample())
            observations += [obs, sc.features._frame.copy()]
            rewards.append(reward)
            if truncated:
                summaries.append(info["summary"])
                flows.append(len(info["flow_records"]))
                obs, _ = env.reset()
                observations.append(obs)
        return used, observations, rewards, summaries, flows
    finally:
        env.close()


@pytest.mark.parametrize(("env_id", "overrides"), [
    ("ecngym/RoceLeafSpine-v0", {"topology": SMALL_LEAF_SPINE}),
    ("ecngym/RoceIncast-v0", {"reward": {"name": "pred"}}),
    ("ecngym/RoceIncast-v0", {"reward": {"name": "fct"},
                              "fabric": {"preset": "hpcc", "aqm": {"all": {"mark_at_dequeue": False}}}}),
    ("ecngym/RoceIncast-v0", {"observation": {"queue_mapping": "step", "features": EVERY_KERNEL_FEATURE}}),
    # controlled ports of two rates: each port its own step-map breakpoints
    ("ecngym/RoceLeafSpine-v0", {"topology": {**SMALL_LEAF_SPINE, "fabric_rate": "40Gbps"},
                                 "observation": {"queue_mapping": "step"}}),
    # LAECN's adaptive interval: steps of two lengths (pred's reward scales by the step's share)
    ("ecngym/DctcpLeafSpine-v0", {"topology": SMALL_LEAF_SPINE, "interval": "15rtt", "interval_short": "5rtt",
                                  "reward": {"name": "pred"}}),
])
def test_the_kernel_plays_episodes_as_the_numpy_path_does(env_id, overrides):
    used, obs_k, rew_k, sum_k, flows_k = _play(env_id, True, 30, **overrides)
    unused, obs_n, rew_n, sum_n, flows_n = _play(env_id, False, 30, **overrides)
    assert used and not unused
    assert len(obs_k) == len(obs_n) and all(np.array_equal(a, b) for a, b in zip(obs_k, obs_n, strict=True))
    assert rew_k == rew_n
    assert len(sum_k) == 2 and sum_k[0].keys() == sum_n[0].keys()
    for a, b in zip(sum_k, sum_n, strict=True):
        for key in a:
            assert a[key] == b[key] or (np.isnan(a[key]) and np.isnan(b[key])), key
    # every flow of the trace counted once (not the record table's columns)
    assert [s["flows_total"] for s in sum_k] == flows_k == flows_n


def test_the_observations_change_over_an_episode():
    """The comparison above would pass on constant output: the kernel's frames do move."""
    _, obs, _, _, _ = _play("ecngym/RoceIncast-v0", True, 10)
    assert len({o.tobytes() for o in obs}) > 5


def test_an_env_with_features_the_kernel_does_not_compute_runs_the_numpy_path():
    env = gym.make("ecngym/DctcpRttVariation-v0", aqm="ecn_sharp", episode_steps=3,
                   observation={"features": ["queue", "ecn_sharp.sojourn_mean_ns"]})
    try:
        assert env.unwrapped.scenario.step_kernel is None
        env.reset(seed=0)
        for _ in range(3):
            obs, *_ = env.step(env.action_space.sample())
        assert np.all(np.isfinite(obs))
    finally:
        env.close()


def test_the_kernel_refuses_arrays_of_the_wrong_shape_or_rows_outside_the_block():
    kernel = _fabric.PortFeatureKernel([(ColumnOp.SCALE_MIN, 0, "f", 0, "f", 1.0, 1.0, False)], [], [1.0], True, 2)
    kernel.set_stat_rows([0])
    block = np.zeros((3, 4), dtype=np.uint64)
    ports = np.array([0, 2], dtype=np.int64)
    frame, hist = np.zeros((2, 1)), np.zeros((2, 2, 1), dtype=np.float32)
    reward, stats = np.zeros(2), np.zeros((1, 2), dtype=np.uint64)
    block[0, 2] = np.float64(0.25).view(np.uint64)
    kernel.step(block, ports, 10, 1.0, frame, hist, reward, stats)
    assert frame[:, 0].tolist() == [0.0, 0.25] and hist[1, -1, 0] == 0.25
    with pytest.raises(ValueError, match="hist has the wrong shape"):
        kernel.step(block, ports, 10, 1.0, frame, np.zeros((2, 3, 1), dtype=np.float32), reward, stats)
    with pytest.raises(ValueError, match="not a column of the block"):
        kernel.step(block, np.array([0, 4], dtype=np.int64), 10, 1.0, frame, hist, reward, stats)
    with pytest.raises(ValueError, match="not a row of the block"):
        kernel.set_stat_rows([3])
        kernel.step(block, ports, 10, 1.0, frame, hist, reward, stats)
    with pytest.raises(ValueError, match="kind"):
        _fabric.PortFeatureKernel([(ColumnOp.SCALE_MIN, 0, "x", 0, "f", 1.0, 1.0, False)], [], [1.0], True, 2)
    with pytest.raises(TypeError):  # an op that is no ColumnOp
        _fabric.PortFeatureKernel([(9, 0, "f", 0, "f", 1.0, 1.0, False)], [], [1.0], True, 2)
    with pytest.raises(ValueError, match="breakpoints"):  # two levels need one breakpoint per row
        _fabric.PortFeatureKernel([], [1.0, 2.0, 3.0], [1.0, 0.0, 0.5], True, 2)
