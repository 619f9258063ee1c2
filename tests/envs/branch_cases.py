"""Branches of a running episode: exact replays, refusals where forking is unsafe, errors carried back."""

import threading

import gymnasium as gym
import numpy as np
import pytest

import ecngym.envs  # noqa: F401
from ecngym.envs.branch import BranchError, BranchHub, fork_safety_problem

STEPS = 40


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _env():
    return gym.make("ecngym/RoceIncast-v0", episode_steps=STEPS).unwrapped


def _actions():
    return [int(i % 3) for i in range(STEPS)]


def play(env, actions, hold=False):
    """Branch function: play ``actions``; return the flow records (or hold)."""
    info = {}
    for a in actions:
        _, _, _, truncated, info = env.step(a)
    if hold:
        return {"time_ns": int(info["time_ns"])}, True
    return info["flow_records"], False


def fail(env):
    raise ValueError("a branch that fails")


def test_a_branch_replaying_the_parents_actions_gives_bit_identical_flow_records():
    actions = _actions()
    fresh = _env()
    fresh.reset(seed=7)
    unbranched = play(fresh, actions)[0]
    fresh.close()

    env = _env()
    env.reset(seed=7)
    for a in actions[:15]:
        env.step(a)
    with BranchHub() as hub:
        snap = hub.snapshot(env)
        same, other = snap.branch(play, actions[15:]), snap.branch(play, [2] * (STEPS - 15))
        results = hub.wait([same, other])
        # a branch of a branch: hold after 10 more steps, then finish from there
        held = hub.wait([snap.branch(play, actions[15:25], True)])
        inner = next(iter(held.values()))
        assert inner.info == {"time_ns": 25 * env.scenario.interval_ns}
        nested = hub.wait([inner.branch(play, actions[25:])])
        assert hub.live_snapshots == 2
    assert hub.live_snapshots == 0
    parent = play(env, actions[15:])[0]
    env.close()
    assert len(unbranched) > 0
    for records in (results[same], parent, next(iter(nested.values()))):
        assert records.equals(unbranched)
    assert not results[other].equals(unbranched)  # other actions, another outcome


def test_a_failing_branch_raises_in_the_driver_with_its_message():
    env = _env()
    env.reset(seed=1)
    with BranchHub() as hub:
        snap = hub.snapshot(env)
        with pytest.raises(BranchError, match="ValueError: a branch that fails"):
            hub.wait([snap.branch(fail)])
    env.close()


def test_branching_is_refused_while_another_thread_runs():
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, name="busy-worker")
    t.start()
    try:
        assert "busy-worker" in fork_safety_problem()
        with pytest.raises(BranchError, match="threads are running.*busy-worker"):
            BranchHub().__enter__()
    finally:
        stop.set()
        t.join()
    assert fork_safety_problem() is None


def test_branching_is_refused_under_a_torch_thread_pool():
    torch = pytest.importorskip("torch")
    torch.set_num_threads(2)
    with pytest.raises(BranchError, match=r"torch runs an intra-op pool of 2 threads.*set_num_threads\(1\)"):
        BranchHub().__enter__()


def test_a_closed_hub_refuses_snapshots():
    env = _env()
    env.reset(seed=1)
    hub = BranchHub()
    with pytest.raises(BranchError, match="not open"):
        hub.snapshot(env)
    env.close()


def test_branch_results_are_numpy_exact():
    """Telemetry after a branch point matches the parent's, array for array."""
    env = _env()
    env.reset(seed=3)
    env.step(0)
    with BranchHub() as hub:
        snap = hub.snapshot(env)
        ticket = snap.branch(_telemetry_after, 1)
        theirs = hub.wait([ticket])[ticket]
    ours = _telemetry_after(env, 1)[0]
    env.close()
    assert theirs.keys() == ours.keys()
    for k in ours:
        np.testing.assert_array_equal(theirs[k], ours[k])


def _telemetry_after(env, action):
    _, _, _, _, info = env.step(action)
    return {k: np.asarray(v) for k, v in info["telemetry"].items() if not np.ma.isMaskedArray(v)}, False
